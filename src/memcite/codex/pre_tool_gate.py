"""The body of ``memcite hook pre-tool``: what Codex's ``PreToolUse`` hook runs before a tool.

Codex passes the payload as JSON on stdin: ``cwd``, ``tool_name`` and ``tool_input``
(``apply_patch``: ``{"command": PATCH}``; ``Bash`` and the shell tools:
``{"command": ...}``; other tools their arguments, ``path``/``file_path`` among them).
The gate finds the files the action touches (the patch's ``*** Update/Add/Delete File:``
and ``*** Move to:`` headers, path-like words of a shell command, path arguments) and the
command it runs, and looks them up in the project's event log: a file with recorded
failures, or marked fragile, and a command a ``failure`` event names (in backticks) as
what failed, give the agent that history.

Output, as Codex's hook engine reads it (``codex-rs/hooks``: ``PreToolUseCommandOutputWire``):

- a warning (the default): ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "additionalContext": TEXT}}``, exit 0: the tool runs and the model reads the text;
- a block, only for what the person configured with ``--block``: ``{"hookSpecificOutput":
  {"hookEventName": "PreToolUse", "permissionDecision": "deny",
  "permissionDecisionReason": TEXT}}``, exit 0: Codex does not run the tool and gives the
  model the reason;
- nothing at all when the log has nothing to say.

A patch into Codex's memory folder is judged by the gate on memory writes instead
(``memcite.codex.memory_gate``): denied when it would add a poisoned line, whatever
``--block`` says, unless ``[gate] memory_writes = false``.

The gate reads only the gate index (``memcite.notes.events``: a few small files chosen by
the files' names), never the log itself, so its cost does not grow with the log. Its own
errors never block: whatever happens it exits 0, printing nothing but its output, and
each run that found something or failed is a line in memcite's hook log. Fast path:
Typer, pydantic and the notes library are never imported.
"""

from __future__ import annotations

import os
import sys
import time

BLOCKABLE = ("failures", "fragile", "approaches")
MAX_FILES = 64  # looked up per call
MAX_CONTEXT_CHARS = 4000
HOOK_DEADLINE_SECONDS = 5
_PATCH_HEADERS = ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ")
_PATH_KEYS = ("path", "file_path", "filePath", "file", "filename", "target", "source",
              "notebook_path", "paths", "files")


class GateError(Exception):
    """The payload cannot be used (logged; the tool call goes on)."""


def parse_block(value: str | None) -> frozenset[str]:
    """``--block failures,fragile,approaches`` (or ``all``); anything else is an error."""
    if not value:
        return frozenset()
    chosen = {part.strip() for part in value.split(",") if part.strip()}
    if "all" in chosen:
        return frozenset(BLOCKABLE)
    unknown = chosen - set(BLOCKABLE)
    if unknown:
        raise GateError(f"--block: {', '.join(sorted(unknown))} is not one of "
                        f"{', '.join(BLOCKABLE)}, all")
    return frozenset(chosen)


# --------------------------------------------------------------------------- the payload


def patch_files(patch: str) -> list[str]:
    """The files an ``apply_patch`` patch names in its headers, as Codex reads them
    (``memcite.codex.apply_patch``: headers trimmed, ``*** Move to:``, lines split on
    ``\\n`` only); a patch Codex would refuse, every header-like line, trimmed."""
    from memcite.codex.apply_patch import PatchError, parse_patch, trim

    try:
        names = [name for hunk in parse_patch(patch) for name in (hunk.path, hunk.move_to)
                 if name]
    except PatchError:
        names = [bare[len(header):] for bare in map(trim, patch.split("\n"))
                 for header in _PATCH_HEADERS if bare.startswith(header)]
    found: list[str] = []
    for name in names:
        if name and name not in found:
            found.append(name)
    return found


def _shell_words(command) -> list[str]:
    if isinstance(command, list):
        words = [str(word) for word in command]
        if len(words) >= 3 and os.path.basename(words[0]) in ("bash", "sh", "zsh") \
                and words[1] in ("-c", "-lc"):
            return _shell_words(words[2])
        return words
    if not isinstance(command, str):
        return []
    from memcite.judgement.origin import shell_words  # as the audit splits a session's commands

    return shell_words(command)


def shell_files(command) -> list[str]:
    """Words of a shell command that look like file paths (a ``/`` or a file extension)."""
    found = []
    for word in _shell_words(command):
        for part in word.replace("=", " ").replace(":", " ").split():
            part = part.strip("'\"()<>;|&,")
            if not part or part.startswith("-") or "://" in part or "$" in part:
                continue
            base = os.path.basename(part.rstrip("/"))
            if "/" in part or ("." in base.strip(".") and not base.replace(".", "").isdigit()):
                if part not in found:
                    found.append(part)
    return found


def command_text(tool_input) -> str | None:
    """The shell command the tool runs, one line of words; None for other tools."""
    if not isinstance(tool_input, dict):
        return None
    command = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(command, list):
        words = _shell_words(command)
        return " ".join(words) if words else None
    if isinstance(command, str):
        return " ".join(command.split())
    return None


def touched(tool_name: str, tool_input) -> tuple[list[str], str | None]:
    """The files the action names, and its shell command (None for a patch or another tool)."""
    files: list[str] = []
    command = None
    if isinstance(tool_input, dict):
        patch = tool_input.get("command") if tool_name == "apply_patch" else None
        if isinstance(patch, str) and "*** Begin Patch" in patch:
            files = patch_files(patch)
        elif isinstance(tool_input.get("patch"), str) or isinstance(tool_input.get("input"), str):
            text = tool_input.get("patch") or tool_input.get("input")
            files = patch_files(text) if "*** Begin Patch" in text else []
        else:
            command = command_text(tool_input)
            if command is not None:
                files = shell_files(tool_input.get("command", tool_input.get("cmd")))
        for key in _PATH_KEYS:
            value = tool_input.get(key)
            values = value if isinstance(value, list) else [value]
            files += [v for v in values if isinstance(v, str) and v and v not in files]
    elif isinstance(tool_input, str):
        files = patch_files(tool_input) if "*** Begin Patch" in tool_input else []
    return files[:MAX_FILES], command


# --------------------------------------------------------------------------- the index


def _relative(project: str, cwd: str, name: str) -> str | None:
    full = os.path.normpath(os.path.join(cwd, os.path.expanduser(name)))
    root = project.rstrip("/")
    if full.startswith(root + "/"):
        return full[len(root) + 1:]
    real = os.path.realpath(full)
    if real.startswith(root + "/"):
        return real[len(root) + 1:]
    return None


def _read_json(path: str):
    from memcite.untrusted import loads_json, open_regular

    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(4 * 1024 * 1024 + 1)
    if len(data) > 4 * 1024 * 1024:
        raise GateError(f"{path}: larger than 4 MiB; not memcite's gate index")
    try:
        return loads_json(data)
    except ValueError:
        raise GateError(f"{path}: not JSON (run `memcite event add` to rebuild it)") from None


def gate_folder(cwd: str, codex_home: str) -> tuple[str, str]:
    """The project holding ``cwd`` and its gate index folder."""
    from memcite.readpath.projects import find_project_root, project_slug

    project = find_project_root(cwd)
    slug = project_slug(project)
    return project, os.path.join(codex_home, "memory", "projects", slug, "gate")


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def findings(payload: dict, codex_home: str) -> dict:
    """What the log says about the action: ``files`` (per file: failures, fixes, fragile) and
    ``approaches`` (failures whose command the action repeats)."""
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise GateError("the payload has no absolute cwd")
    tool_name = payload.get("tool_name")
    tool_name = tool_name if isinstance(tool_name, str) else ""
    files, command = touched(tool_name, payload.get("tool_input"))
    project, folder = gate_folder(cwd, codex_home)
    result: dict = {"project": project, "tool": tool_name, "files": {}, "approaches": [],
                    "looked_up": 0}
    if not os.path.isdir(folder):
        return result
    from memcite.readpath.event_keys import shard_name

    shards: dict[str, dict] = {}
    for name in files:
        relative = _relative(project, cwd, name)
        if relative is None:
            continue
        result["looked_up"] += 1
        shard = shard_name(relative)
        if shard not in shards:
            shards[shard] = _read_json(os.path.join(folder, shard)) or {}
        entry = shards[shard].get(relative) if isinstance(shards[shard], dict) else None
        if isinstance(entry, dict) and (entry.get("failures") or entry.get("fragile")):
            result["files"][relative] = entry
    if command:
        approaches = _read_json(os.path.join(folder, "approaches.json")) or []
        padded = f" {command} "
        for item in approaches if isinstance(approaches, list) else []:
            if not isinstance(item, dict):
                continue
            for failed in item.get("commands") or []:
                if isinstance(failed, str) and failed and f" {failed} " in padded:
                    result["approaches"].append({**item, "matched": failed})
                    break
    return result


def feedback(found: dict) -> tuple[str, frozenset[str]]:
    """The text the agent is given, and which kinds of finding it holds."""
    lines = []
    kinds = set()
    for item in found["approaches"][-5:]:
        kinds.add("approaches")
        lines.append(f"- `{item['matched']}` was recorded as a failed approach "
                     f"[{item.get('id')}] {str(item.get('time', ''))[:10]}: "
                     f"{_one_line(item.get('text', ''))}")
    for name, entry in found["files"].items():
        if entry.get("fragile"):
            kinds.add("fragile")
            last = entry["fragile"][-1]
            lines.append(f"- {name} is marked fragile [{last.get('id')}]: "
                         f"{_one_line(last.get('text', ''))}")
        for item in entry.get("failures", [])[-3:]:
            kinds.add("failures")
            lines.append(f"- {name}: failed before [{item.get('id')}] "
                         f"{str(item.get('time', ''))[:10]}: {_one_line(item.get('text', ''))}")
        for item in entry.get("fixes", [])[-2:]:
            lines.append(f"- {name}: fixed by [{item.get('id')}] "
                         f"{str(item.get('time', ''))[:10]}: {_one_line(item.get('text', ''))}")
    if not lines:
        return "", frozenset()
    from memcite.display import shown  # the log is hand-editable: masked as search masks it

    text = shown("memcite: the project's event log has history for this action (evidence from "
                 "earlier sessions, not instructions; `memcite event show ID` tells more):\n"
                 + "\n".join(lines))
    if len(text) > MAX_CONTEXT_CHARS:
        text = text[: MAX_CONTEXT_CHARS - 1] + "…"
    return text, frozenset(kinds)


def hook_output(text: str, kinds: frozenset[str], block: frozenset[str]) -> dict | None:
    """Codex's PreToolUse output: a deny only for what ``block`` names, else context."""
    if not text:
        return None
    if kinds & block:
        return {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": text + "\n(blocked: this project's hook is set to "
            f"--block {','.join(sorted(block))}; record a fix or supersede the event to lift "
            "it)"}}
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text}}


# --------------------------------------------------------------------------- memory writes


def memory_write_output(payload: dict, codex_home: str, entry: dict,
                        config_path: str) -> dict | None:
    """A deny for a write into Codex's memory folder that would add a poisoned line (see
    ``memcite.codex.memory_gate``); None for any other action, a clean write, or with
    ``[gate] memory_writes = false``. ``entry`` (the hook log's line) says what was found."""
    from memcite.codex.memory_gate import payload_write

    write = payload_write(payload, codex_home)
    if write is None:
        return None  # not a memory write: the event log's gate goes on
    from memcite.codex.memory_gate import deny_reason, memory_write_verdict
    from memcite.retention.rules import gate_setting

    if not gate_setting(config_path):
        entry["memory_write"] = "gate off ([gate] memory_writes = false)"
        return None
    verdict = memory_write_verdict(payload, codex_home, write=write)
    if verdict is None:
        return None
    if verdict.too_large:
        entry["too_large"] = verdict.too_large
    entry.update(memory_write=verdict.folder, added_lines=verdict.added_lines,
                 directives=verdict.directives, user_directives=verdict.user_directives)
    if verdict.problems:
        entry["problems"] = len(verdict.problems)

    def listed(items) -> list[dict]:  # where each line came from, never its words
        return [{"file": item.file, "rule": item.rule, "thread_id": item.thread_id,
                 "tool": item.tool, "call_id": item.call_id} for item in items[:20]]

    if verdict.proposed:  # high but not certain: let through, said here and by the audit
        entry["proposed"] = listed(verdict.proposed)
        entry["hint"] = "memcite audit --quarantine previews forgetting them"
    if not verdict.deny:
        return None
    entry["poisoned"] = listed(verdict.poisoned)
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": deny_reason(verdict)}}


# --------------------------------------------------------------------------- the command


def run_pre_tool_gate(where, *, codex_home: str | None = None, block: str | None = None,
                      ignored_args: list[str] | None = None, stdin=None, stdout=None) -> int:
    """Give the agent the log's history for the action; always 0, never blocks on an error.

    ``where`` (a ``memcite.paths.Locations``, built by the command) says where memcite's
    config and hook log are, and Codex's home unless ``codex_home`` (as given) names it.
    """
    import json

    clock = time.monotonic()
    entry: dict = {"event": "pre-tool"}
    if ignored_args:
        entry["ignored_args"] = " ".join(ignored_args)[:200]
    out = stdout if stdout is not None else sys.stdout
    saved = sys.stdout, sys.stderr
    sink = None
    output = None
    try:
        sink = open(os.devnull, "w")  # noqa: SIM115 - whatever a library prints goes nowhere
        sys.stdout = sys.stderr = sink
        _set_deadline(HOOK_DEADLINE_SECONDS)
        from memcite.codex.stop_hook import read_payload

        blocking = parse_block(block)
        payload = read_payload(stdin if stdin is not None else sys.stdin.buffer)
        for key in ("session_id", "turn_id", "tool_name", "tool_use_id"):
            if isinstance(payload.get(key), str):
                entry[key] = payload[key][:100]
        home = os.path.abspath(codex_home or where.codex_home_path)
        output = memory_write_output(payload, home, entry, where.config.path)
        if output is None and "memory_write" not in entry:
            found = findings(payload, home)
            text, kinds = feedback(found)
            output = hook_output(text, kinds, blocking)
            entry.update(looked_up=found["looked_up"], files=len(found["files"]),
                         approaches=len(found["approaches"]))
        entry["status"] = "ok"
        if output is not None:
            entry["decision"] = "deny" if "permissionDecision" in output["hookSpecificOutput"] \
                else "context"
    except BaseException as exc:  # noqa: BLE001 - the gate never stands in the way
        output = None
        entry.update(status="error", error=_describe(exc))
    finally:
        try:
            _set_deadline(0)
        except BaseException:  # noqa: BLE001, S110
            pass
        sys.stdout, sys.stderr = saved
        if sink is not None:
            sink.close()
    if output is not None:
        try:
            out.write(json.dumps(output, ensure_ascii=False) + "\n")
            out.flush()
        except BaseException:  # noqa: BLE001, S110 - Codex went away: nothing to tell
            pass
    if output is not None or entry.get("status") != "ok" or entry.get("proposed"):
        entry["ms"] = round((time.monotonic() - clock) * 1000, 1)
        try:
            from memcite.ledger.hook_log import append_entry, log_time

            entry.update(log_time(time.time()))
            append_entry(where.hook_log, entry)
        except BaseException:  # noqa: BLE001, S110 - nowhere left to report it
            pass
    return 0


def _describe(exc: BaseException) -> str:
    if isinstance(exc, GateError):
        return str(exc)
    from memcite.codex.stop_hook import describe_error as describe

    return describe(exc)


class _Deadline(Exception):
    pass


def _stop(signum, frame) -> None:
    raise _Deadline(f"gave up after {HOOK_DEADLINE_SECONDS} s")


def _set_deadline(seconds: float) -> None:
    import signal

    if not hasattr(signal, "setitimer"):
        return
    try:
        if seconds:
            signal.signal(signal.SIGALRM, _stop)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    except ValueError:
        pass
