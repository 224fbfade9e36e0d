"""``memcite setup codex``: the edits that wire memcite into Codex, planned, shown, applied, undone.

Two files of a Codex config folder (the Codex home, or a repository's ``.codex/``):

- ``hooks.json``: a ``Stop`` hook running ``memcite hook stop`` (and a
  ``PostToolUse`` hook running ``memcite lint --hook`` when that command exists),
  each in a matcher group of its own, merged with what is there. The file is
  JSON: it is rewritten with the indent it had (a file on one line stays on one line),
  and ``--remove`` gives back the bytes setup found (from its backup).
- with ``--gate``, a ``PreToolUse`` hook running ``memcite hook pre-tool``, the same way;
- with ``--governance``, ``AGENTS.md`` in Codex's memory folder and in the project
  get memcite's governance directives as a block of their own
  (``memcite.codex.governance``), taken out as that block;
- ``config.toml``: an ``[mcp_servers.memcite]`` table (when ``memcite mcp``
  exists). TOML carries comments and layout a person cares about, so the table
  is added as a block of its own at the end of the file and taken out as that
  block: every byte outside it stays as it was. tomlkit reads the result and
  checks that it holds exactly the old settings plus this table.

A plan is computed first (``plan_setup``) and shown as a unified diff; nothing
is written before ``apply_plan``, which copies each file it changes to a
timestamped backup beside it, then writes atomically (a temporary file beside
the target, flushed, synced, renamed) and reads the result back. Planning twice
changes nothing the second time; ``remove=True`` plans taking out exactly what
setup adds, and leaves alone an entry that was changed since.

Codex runs a new or changed hook only once the user trusted it (``/hooks``),
recording a hash under ``[hooks.state."<hooks.json path>:<event>:<group>:<handler>"]``;
``trust_state`` reads that record and computes the hash as Codex does, so that
``memcite doctor`` can tell whether the hook will run.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field

from memcite.errors import MemciteError
from memcite.untrusted import loads_json, loads_toml

STOP_ARGS = ("hook", "stop")
LINT_ARGS = ("lint", "--hook")
GATE_ARGS = ("hook", "pre-tool")
STOP_COMMAND = "memcite hook stop"  # with a bare `memcite`; setup writes the absolute path
LINT_COMMAND = "memcite lint --hook"
HOOK_TIMEOUT_SECONDS = 30
MCP_NAME = "memcite"
MCP_ENTRY = {"command": "memcite", "args": ["mcp"]}  # the entry with a bare `memcite`, no home
HOOKS_FILE = "hooks.json"
CONFIG_FILE = "config.toml"
BACKUP_SUFFIX = ".memcite-backup"  # one backup per file: the file before memcite's last change
# Codex's snake_case labels, used in trust keys and hashes.
EVENT_LABELS = {"Stop": "stop", "SubagentStop": "subagent_stop", "PostToolUse": "post_tool_use",
                "PreToolUse": "pre_tool_use"}
# What each hook setup adds runs: a subagent's turn fires SubagentStop, not Stop.
HOOK_ARGS = {"Stop": STOP_ARGS, "SubagentStop": STOP_ARGS, "PostToolUse": LINT_ARGS,
             "PreToolUse": GATE_ARGS}
MAX_CONFIG_BYTES = 4 * 1024 * 1024
# memcite's own folders, passed on to the MCP server when set (Codex starts MCP servers
# with a cleaned environment, so without them the server would use the defaults).
MEMCITE_FOLDER_VARIABLES = ("MEMCITE_HOME", "MEMCITE_DB", "MEMCITE_CONFIG", "MEMCITE_CACHE_DIR")


class SetupRefused(MemciteError):
    """A file memcite cannot edit safely (not JSON, an unexpected shape): nothing written (exit 3)."""

    exit_code = 3


def memcite_handlers(lint: bool, memcite: tuple[str, ...] | list[str] = ("memcite",),
                     gate: bool = False) -> dict[str, dict]:
    """The hook handlers setup adds, by event; ``memcite`` is how the commands start memcite
    (``gate``: the ``PreToolUse`` hook running ``memcite hook pre-tool`` too).

    Codex runs a hook as ``/bin/bash -c COMMAND`` with its own folder first on PATH, not
    from a login shell, so setup gives the absolute path of the memcite it runs as.
    """
    import shlex

    handlers = {}
    for event, args in HOOK_ARGS.items():
        if (args == LINT_ARGS and not lint) or (args == GATE_ARGS and not gate):
            continue
        handlers[event] = {"type": "command", "command": shlex.join([*memcite, *args]),
                           "timeout": HOOK_TIMEOUT_SECONDS}
    return handlers


def memcite_args(command) -> tuple[str, ...] | None:
    """The arguments after memcite in a command that runs memcite (``memcite ...``,
    ``/path/to/memcite ...``, ``python -m memcite ...``), else None."""
    import shlex

    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if words and os.path.basename(words[0]) == "memcite":
        return tuple(words[1:])
    if len(words) >= 3 and words[1:3] == ["-m", "memcite"] and \
            os.path.basename(words[0]).startswith("python"):
        return tuple(words[3:])
    return None


def mcp_entry(memcite: tuple[str, ...] | list[str] = ("memcite",), codex_home: str | None = None,
              env: dict[str, str] | None = None) -> dict:
    """The ``[mcp_servers.memcite]`` entry: the server is told the Codex home it serves
    (Codex starts it without ``CODEX_HOME``) and memcite's own folders when they are set."""
    entry: dict = {"command": memcite[0], "args": [*memcite[1:], "mcp"]}
    if codex_home is not None:
        entry["args"] += ["--codex-home", codex_home]
    if env:
        entry["env"] = dict(env)
    return entry


def _toml_string(text: str) -> str:
    import json as json_module

    return json_module.dumps(text).replace("\x7f", "\\u007f")  # JSON strings are TOML basic strings


def mcp_block(entry: dict) -> str:
    """The TOML block setup writes for ``entry`` (and recognises when it takes it out)."""
    lines = [f"[mcp_servers.{MCP_NAME}]", f"command = {_toml_string(entry['command'])}",
             "args = [" + ", ".join(_toml_string(a) for a in entry["args"]) + "]"]
    if entry.get("env"):
        lines.append("env = { " + ", ".join(f"{name} = {_toml_string(value)}"
                                            for name, value in entry["env"].items()) + " }")
    return "\n".join(lines) + "\n"


def is_memcite_entry(entry) -> bool:
    """Whether an ``[mcp_servers.memcite]`` entry is of the shape setup writes."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str) or \
            not isinstance(entry.get("args"), list) or set(entry) - {"command", "args", "env"}:
        return False
    if not all(isinstance(a, str) for a in entry["args"]):
        return False
    import shlex

    args = memcite_args(shlex.join([entry["command"], *entry["args"]]))
    env = entry.get("env", {})
    return args is not None and (args == ("mcp",) or (len(args) == 3 and args[:2] == (
        "mcp", "--codex-home"))) and isinstance(env, dict) and set(env) <= set(
        MEMCITE_FOLDER_VARIABLES) and all(isinstance(v, str) for v in env.values())


MCP_BLOCK = mcp_block(MCP_ENTRY)


def project_root(cwd: str | os.PathLike) -> str:
    """The root of the git work tree holding ``cwd`` (a ``.git`` folder or file), else ``cwd``."""
    start = current = os.path.abspath(os.fspath(cwd))
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return start
        current = parent


# --------------------------------------------------------------------------- the plan


@dataclass
class FileChange:
    """One file before and after (``None``: no file)."""

    path: str
    before: str | None
    after: str | None
    # False when ``before`` is only what setup wrote (nothing of yours to keep): no backup,
    # which in the memory folder would be one more file for Codex's consolidation to read
    backup: bool = True
    # the backup a removal gave the file back from: it goes once the file is back
    restored_from: str | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """The change as a unified diff (empty when nothing changes)."""
        import difflib

        if not self.changed:
            return ""
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=self.path if self.before is not None else "/dev/null",
            tofile=self.path if self.after is not None else "/dev/null",
        )
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                       for line in lines)


@dataclass
class SetupPlan:
    """What ``setup codex`` would change in one Codex config folder, and what it leaves alone."""

    folder: str
    remove: bool
    changes: list[FileChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return any(change.changed for change in self.changes)

    def diff(self) -> str:
        return "".join(change.diff() for change in self.changes)


def _read_text(path: str) -> str | None:
    """A config file's text (None when absent): a regular file read without following a
    link or blocking on a FIFO; anything else is refused (exit 3), untouched."""
    from memcite.durable_files import LinkRefused, open_folder, read_file_at

    try:
        folder = open_folder(os.path.dirname(path) or ".")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SetupRefused(f"{os.path.dirname(path)}: cannot read: {exc.strerror or exc}") from None
    try:
        data = read_file_at(folder, os.path.basename(path), path, MAX_CONFIG_BYTES)
    except LinkRefused as refused:
        raise SetupRefused(refused.message.replace("nothing was written", "left untouched"),
                           hint="memcite edits only a regular file, never through a link: give "
                           "the link's target as the folder (--codex-home), or make the change "
                           "by hand (the diff without --apply shows it)") from None
    except OSError as exc:
        raise SetupRefused(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(folder)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SetupRefused(f"{path}: not UTF-8 (byte {exc.start}); left untouched") from None


def plan_setup(folder: str | os.PathLike, *, lint: bool = False, mcp: bool = False,
               remove: bool = False, memcite: tuple[str, ...] | list[str] = ("memcite",),
               codex_home: str | None = None, env: dict[str, str] | None = None,
               gate: bool = False, governance: bool = False,
               memory_folder: str | os.PathLike | None = None,
               project_folder: str | os.PathLike | None = None,
               trust: bool = False, trust_config: str | os.PathLike | None = None) -> SetupPlan:
    """The edits of ``hooks.json`` and ``config.toml`` in ``folder`` (nothing is written).

    ``lint`` and ``mcp`` say whether this memcite has ``lint --hook`` and ``mcp``;
    ``gate`` adds the ``PreToolUse`` hook running ``memcite hook pre-tool``;
    removing takes out every entry setup adds, whichever commands exist. ``memcite``
    is how the hooks and the MCP server start memcite (its absolute path, from the
    CLI); ``codex_home`` and ``env`` (memcite's own folders) go into the MCP entry.

    ``governance`` adds the memory-governance directives to ``AGENTS.md`` in
    ``memory_folder`` (the folder Codex's consolidation agent works in) and the
    pre-retrieval directives to ``AGENTS.md`` in ``project_folder`` (the project's
    root; None: not added); removing takes both out of the folders given
    (``memcite.codex.governance``).

    ``trust`` records Codex's trust in memcite's own hooks (and no other) in
    ``trust_config`` (the user's ``config.toml``, default ``folder``'s), the entries Codex's
    ``/hooks`` screen writes; removing always takes out the trust entries of the hooks it
    takes out.
    """
    folder = os.fspath(folder)
    plan = SetupPlan(folder, remove)
    hooks_path = os.path.join(folder, HOOKS_FILE)
    config_path = os.path.join(folder, CONFIG_FILE)
    trust_path = os.fspath(trust_config) if trust_config is not None else config_path
    hooks_before = _read_text(hooks_path)
    config_before = _read_text(config_path)
    trust_before = config_before if trust_path == config_path else _read_text(trust_path)
    trust_after = trust_before
    if remove:
        removed: list[tuple[str, int, int]] = []
        hooks_after = _remove_hooks(hooks_path, hooks_before,
                                    memcite_handlers(True, memcite, gate=True), plan, removed)
        config_after = _remove_mcp(config_path, config_before, plan)
        if trust_path == config_path:
            config_after = _remove_trust(config_path, config_after, hooks_path, removed, plan)
        else:
            trust_after = _remove_trust(trust_path, trust_before, hooks_path, removed, plan)
    else:
        hooks_after = _add_hooks(hooks_path, hooks_before, memcite_handlers(lint, memcite, gate),
                                 plan)
        config_after = config_before
        if mcp:
            config_after = _add_mcp(config_path, config_before, mcp_entry(memcite, codex_home, env),
                                    plan)
        else:
            plan.notes.append("MCP server: not added (this memcite has no `memcite mcp` command)")
        if not lint:
            plan.notes.append("PostToolUse hook: not added (this memcite has no "
                              "`memcite lint --hook`)")
        plan.notes.extend(_feature_warnings(config_after))
        if trust and hooks_after is not None:
            if trust_path == config_path:
                config_after = _add_trust(config_path, config_after, hooks_path, hooks_after, plan)
            else:
                trust_after = _add_trust(trust_path, trust_before, hooks_path, hooks_after, plan)
    plan.changes = [FileChange(hooks_path, hooks_before, hooks_after),
                    FileChange(config_path, config_before, config_after)]
    if trust_path != config_path:
        plan.changes.append(FileChange(trust_path, trust_before, trust_after))
    if governance or remove:
        plan.changes += _governance_changes(memory_folder, project_folder, remove, plan)
    if remove:
        for change in plan.changes:
            if change.changed:
                _give_back(change)
    return plan


def _give_back(change: FileChange) -> None:
    """A removal gives back the file as setup found it, byte for byte: the newest backup
    beside it (``apply_plan`` copies each file before changing it) whose content is what the
    removal leaves (the same JSON document for ``hooks.json``, the same text otherwise) is
    what the file becomes (a compact one-line ``hooks.json`` stays one line; an ``AGENTS.md``
    that was empty stays, empty). Without one, a file that held only what setup adds goes,
    and without a backup: nothing of the user's was in it."""
    path, after = change.path, change.after
    folder, name = os.path.split(path)
    try:
        names = os.listdir(folder or ".")
    except OSError:
        names = []
    single = name + BACKUP_SUFFIX
    prefix = f"{single}-"  # the timestamped backups of earlier versions
    older = sorted((n for n in names if n.startswith(prefix)), reverse=True)
    for backup in ([single] if single in names else []) + older:
        try:
            text = _read_text(os.path.join(folder, backup))
        except SetupRefused:
            continue  # a link or a special file under a backup's name: not ours to read
        if text is not None and _same_content(name, text, after):
            change.after = text
            change.restored_from = os.path.join(folder, backup)
            return
    if after is None:
        change.backup = False


def _same_content(name: str, found: str, after: str | None) -> bool:
    if name == CONFIG_FILE and found != (after or ""):
        # taking out a trust entry may leave a blank line where Codex had none: the same
        # settings and the same lines, blank ones aside, are the file setup found
        def lines(text):
            return [line for line in text.splitlines() if line.strip()]
        try:
            return lines(found) == lines(after or "") and \
                loads_toml(found) == loads_toml(after or "")
        except ValueError:
            return False
    if name != HOOKS_FILE:
        return found == (after or "")
    try:
        return _settled(loads_json(found)) == _settled({} if after is None else loads_json(after))
    except ValueError:  # not JSON, or nested too deeply
        return False


def _settled(document):
    """A hooks document as a removal leaves it: ``hooks`` present, no event without groups."""
    if not isinstance(document, dict) or not isinstance(document.get("hooks", {}), dict):
        return document
    hooks = {event: groups for event, groups in document.get("hooks", {}).items() if groups != []}
    return {**document, "hooks": hooks}


def _governance_changes(memory_folder, project_folder, remove: bool,
                        plan: SetupPlan) -> list[FileChange]:
    """The ``AGENTS.md`` edits of ``--governance`` (or, removing, taking its blocks out)."""
    from memcite.codex.governance import (
        AGENTS_FILE,
        MEMORY_GOVERNANCE,
        PRE_RETRIEVAL,
        add_block,
        block,
        remove_block,
    )

    changes = []
    for where, kind in ((memory_folder, MEMORY_GOVERNANCE), (project_folder, PRE_RETRIEVAL)):
        if where is None:
            continue
        path = os.path.join(os.fspath(where), AGENTS_FILE)
        before = _read_text(path)
        if remove and before is None:
            continue
        edit = (remove_block if remove else add_block)(before, kind, path)
        if edit.note:
            plan.notes.append(edit.note)
        changes.append(FileChange(path, before, edit.after,
                                  backup=before is None or before != block(kind)))
    return changes


# --------------------------------------------------------------------------- hooks.json


def _no_duplicate_keys(path: str):
    """A ``json.loads`` hook refusing an object that names a key twice: Python would keep the
    last and setup would silently drop the user's first (a Stop hook, say)."""
    def pairs(items):
        seen = set()
        for key, _ in items:
            if key in seen:
                raise SetupRefused(f'{path}: the key "{key}" appears twice in one object; '
                                   "Codex and memcite may each read another; left untouched",
                                   hint="keep one of the two, then run setup again")
            seen.add(key)
        return dict(items)
    return pairs


def _load_hooks(path: str, text: str) -> dict:
    try:
        document = loads_json(text, object_pairs_hook=_no_duplicate_keys(path))
    except ValueError as exc:
        if str(exc) == "nested too deeply":
            raise SetupRefused(f"{path}: nested too deeply to read safely; left untouched") \
                from None
        raise SetupRefused(f"{path}: not valid JSON ({exc}); left untouched",
                           hint="fix the file or move it aside, then run setup again") from None
    if not isinstance(document, dict):
        raise SetupRefused(f"{path}: not a JSON object; left untouched")
    hooks = document.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SetupRefused(f'{path}: "hooks" is not an object; left untouched')
    for event, groups in hooks.items():
        if not isinstance(groups, list) or not all(
                isinstance(g, dict) and isinstance(g.get("hooks", []), list) for g in groups):
            raise SetupRefused(f'{path}: "hooks.{event}" is not a list of matcher groups; '
                               "left untouched")
    return document


_ONE_LINE = ("one line", "one line spaced")  # a file written on one line stays on one line


def _indent(text: str) -> int | str:
    if "\n" not in text.strip():
        return _ONE_LINE[1] if '": ' in text or '", ' in text else _ONE_LINE[0]
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def _dump_hooks(document: dict, indent: int | str, final_newline: bool = True) -> str:
    """The file's text; a file that ended without a newline still does."""
    if indent in _ONE_LINE:
        separators = (", ", ": ") if indent == _ONE_LINE[1] else (",", ":")
        text = json.dumps(document, separators=separators, ensure_ascii=False)
    else:
        text = json.dumps(document, indent=indent, ensure_ascii=False)
    return text + ("\n" if final_newline else "")


def _is_ours(handler, wanted: dict) -> bool:
    """Whether ``handler`` runs the memcite command ``wanted`` runs, whichever memcite it starts."""
    return isinstance(handler, dict) and handler.get("type") == "command" and \
        memcite_args(handler.get("command")) is not None and \
        memcite_args(handler.get("command")) == memcite_args(wanted["command"])


def _words(command: str) -> list[str] | None:
    import shlex

    try:
        return shlex.split(command)
    except ValueError:
        return None


def find_handlers(document: dict, event: str, wanted: dict) -> list[tuple[int, int, dict]]:
    """``(group index, handler index, handler)`` of each handler of ``event`` running ``wanted``'s command."""
    found = []
    hooks = document.get("hooks", {})
    groups = hooks.get(event, []) if isinstance(hooks, dict) else []
    for group_index, group in enumerate(groups if isinstance(groups, list) else []):
        handlers = group.get("hooks", []) if isinstance(group, dict) else []
        for handler_index, handler in enumerate(handlers if isinstance(handlers, list) else []):
            if _is_ours(handler, wanted):
                found.append((group_index, handler_index, handler))
    return found


def _add_hooks(path: str, text: str | None, handlers: dict[str, dict], plan: SetupPlan) -> str | None:
    document = _load_hooks(path, text) if text is not None else {"hooks": {}}
    changed = False
    for event, handler in handlers.items():
        found = find_handlers(document, event, handler)
        if any(_words(current["command"]) == _words(handler["command"]) for _, _, current in found):
            continue
        if found:  # memcite's hook, started another way (a bare `memcite`, another install)
            _, _, current = found[0]
            plan.notes.append(f"{path}: the {event} hook ran `{current['command']}`; it now runs "
                              f"`{handler['command']}` (Codex runs hooks with /bin/bash -c, which "
                              "may not find another memcite); Codex will ask you to trust it again")
            current["command"] = handler["command"]
        else:
            document["hooks"].setdefault(event, []).append({"hooks": [dict(handler)]})
        changed = True
    if not changed:
        return text
    return _dump_hooks(document, _indent(text) if text else 2, not text or text.endswith("\n"))


def _remove_hooks(path: str, text: str | None, handlers: dict[str, dict],
                  plan: SetupPlan, taken: list[tuple[str, int, int]] | None = None) -> str | None:
    """``text`` without memcite's handlers; ``taken`` gets the ``(event, group, handler)``
    place each one had, the places Codex keys its trust by."""
    if text is None:
        return None
    document = _load_hooks(path, text)
    removed = False
    for event, handler in handlers.items():
        found = find_handlers(document, event, handler)
        for group_index, handler_index, current in reversed(found):
            if current != {**handler, "command": current.get("command")}:
                plan.notes.append(f"{path}: the {event} hook running `{current.get('command')}` "
                                  "was changed since setup added it; left as is")
                continue
            groups = document["hooks"][event]
            group = groups[group_index]
            del group["hooks"][handler_index]
            removed = True
            if taken is not None:
                taken.append((event, group_index, handler_index))
            shifted = handler_index < len(group["hooks"])
            if not group["hooks"] and set(group) <= {"hooks"}:
                del groups[group_index]
                shifted = group_index < len(groups)
            if shifted:  # Codex keys trust by place: the hooks after this one move up
                plan.notes.append(f"{path}: the {event} hooks after memcite's move up one place; "
                                  "Codex will ask you to trust them again in /hooks")
        if event in document["hooks"] and not document["hooks"][event]:
            del document["hooks"][event]
    if not removed:
        return text
    if document == {"hooks": {}}:
        return None  # nothing left: the file setup created goes
    return _dump_hooks(document, _indent(text), text.endswith("\n"))


# --------------------------------------------------------------------------- config.toml


def _parse_toml(path: str, text: str):
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        return tomlkit.parse(text)
    except RecursionError:
        raise SetupRefused(f"{path}: nested too deeply to read safely; left untouched") from None
    except TOMLKitError as exc:
        raise SetupRefused(f"{path}: not valid TOML ({exc}); left untouched",
                           hint="fix the file, then run setup again") from None


def _plain(value):
    """A tomlkit value as plain Python (dicts, lists, scalars)."""
    return json.loads(json.dumps(value, default=str)) if value is not None else None


def _mcp_entry(document):
    servers = document.get("mcp_servers")
    if servers is None or not hasattr(servers, "get"):
        return servers, None
    return servers, servers.get(MCP_NAME)


def _add_mcp(path: str, before: str | None, wanted: dict, plan: SetupPlan) -> str | None:
    text = before or ""
    document = _parse_toml(path, text)
    servers, entry = _mcp_entry(document)
    block = mcp_block(wanted)
    if entry is not None:
        current = _plain(entry)
        if current == wanted:
            return before
        position = _block_position(text, mcp_block(current)) if is_memcite_entry(current) else None
        if position is None:
            plan.notes.append(f"{path}: an [mcp_servers.memcite] entry already exists and "
                              "differs from memcite's; left as is (`memcite doctor` checks it)")
            return before
        start, end = position  # setup's own block, from an earlier setup: brought up to date
        after = text[:start] + block + text[end:]
        plan.notes.append(f"{path}: [mcp_servers.memcite] now runs `{wanted['command']}` with "
                          f"args {wanted['args']}")
    else:
        if servers is not None and (not hasattr(servers, "get") or _is_inline(servers)):
            raise SetupRefused(
                f"{path}: mcp_servers is written as an inline table, which memcite cannot extend "
                "without rewriting your line; nothing written",
                hint=f"add this table by hand:\n{block}")
        # a blank line before the block; a file without a final newline gets just the newline,
        # so that --remove can give back exactly the bytes that were there
        separator = "" if not text else "\n"
        after = text + separator + block
    expected = _plain(document.unwrap()) if text else {}
    expected.setdefault("mcp_servers", {})[MCP_NAME] = wanted
    if _plain(_parse_toml(path, after).unwrap()) != expected:
        raise SetupRefused(f"{path}: adding [mcp_servers.memcite] would change other "
                           "settings; nothing written", hint=f"add this table by hand:\n{block}")
    return after


def _is_inline(value) -> bool:
    from tomlkit.items import InlineTable

    return isinstance(value, InlineTable)


def _remove_mcp(path: str, text: str | None, plan: SetupPlan) -> str | None:
    if text is None:
        return None
    document = _parse_toml(path, text)
    _, entry = _mcp_entry(document)
    if entry is None:
        return text
    current = _plain(entry)
    position = _block_position(text, mcp_block(current)) if is_memcite_entry(current) else None
    if position is None:
        plan.notes.append(f"{path}: [mcp_servers.memcite] was changed since setup added it; "
                          "left as is")
        return text
    start, end = position
    if end == len(text) and start >= 1 and text[start - 1] == "\n":
        start -= 1  # the newline setup put before its block at the end of the file
    elif start >= 1 and text[start - 1] == "\n" and (start == 1 or text[start - 2] == "\n"):
        start -= 1  # the blank line setup put before the block
    after = text[:start] + text[end:]
    expected = _plain(document.unwrap())
    del expected["mcp_servers"][MCP_NAME]
    if not expected["mcp_servers"]:
        del expected["mcp_servers"]
    if _plain(_parse_toml(path, after).unwrap()) != expected:
        plan.notes.append(f"{path}: [mcp_servers.memcite] cannot be taken out on its own; "
                          "left as is")
        return text
    return after or None  # a file that held only the block (setup created it) goes


# --------------------------------------------------------------------------- trust entries


def trust_keys(hooks_path: str, event: str, group_index: int, handler_index: int) -> list[str]:
    """The ``[hooks.state]`` keys Codex may file one hook's trust under: the ``hooks.json``
    path as given, and with its links resolved when that differs (Codex resolves a
    ``CODEX_HOME`` it is given)."""
    label = EVENT_LABELS.get(event, event)
    return [f"{path}:{label}:{group_index}:{handler_index}"
            for path in dict.fromkeys([os.path.abspath(hooks_path), os.path.realpath(hooks_path)])]


def trust_block(key: str, trusted_hash: str) -> str:
    """The TOML table ``--trust`` appends for one hook (what Codex's ``/hooks`` screen records)."""
    return f"[hooks.state.{_toml_string(key)}]\ntrusted_hash = {_toml_string(trusted_hash)}\n"


def _states(document) -> dict:
    hooks = document.get("hooks") if hasattr(document, "get") else None
    states = hooks.get("state") if hasattr(hooks, "get") else None
    return states if hasattr(states, "get") else {}


def _add_trust(path: str, text: str | None, hooks_path: str, hooks_text: str,
               plan: SetupPlan) -> str | None:
    """``text`` (the user's ``config.toml``) trusting each of memcite's hooks in ``hooks_text``
    as Codex's ``/hooks`` screen does: ``trusted_hash`` under the hook's ``[hooks.state]`` key,
    a table of its own at the end, or the value set in the table already there."""
    text = text or ""
    document = _parse_toml(path, text)
    hooks = installed_hooks(hooks_path, _load_hooks(hooks_path, hooks_text), _plain(document) or {})
    after = text
    expected = _plain(document.unwrap()) if text else {}
    for hook in hooks:
        if hook.trust.status == "trusted":
            continue
        if hook.trust.status == "disabled":
            plan.notes.append(f"the {hook.event} hook is turned off in /hooks; trusted, and left off")
        for key in trust_keys(hook.path, hook.event, hook.group, hook.handler):
            expected.setdefault("hooks", {}).setdefault("state", {}).setdefault(key, {})[
                "trusted_hash"] = hook.trust.current_hash
            existing = _states(_parse_toml(path, after)).get(key)
            if existing is not None and hasattr(existing, "get"):
                edited = _parse_toml(path, after)
                _states(edited)[key]["trusted_hash"] = hook.trust.current_hash
                after = edited.as_string()
            else:
                after += ("" if not after else "\n" if after.endswith("\n") else "\n\n") + \
                    trust_block(key, hook.trust.current_hash)
    if after == text:
        return text or None
    if _plain(_parse_toml(path, after).unwrap()) != expected:
        raise SetupRefused(f"{path}: its [hooks] table is written in a way memcite cannot add "
                           "to without rewriting your lines; nothing written",
                           hint="run setup without --trust, then trust the hooks in Codex's /hooks")
    return after


def _remove_trust(path: str, text: str | None, hooks_path: str,
                  taken: list[tuple[str, int, int]], plan: SetupPlan) -> str | None:
    """``text`` without the ``[hooks.state]`` entries of the hooks taken out (at their places)."""
    if not text or not taken:
        return text
    document = _parse_toml(path, text)
    keys = [key for event, group, handler in taken
            for key in trust_keys(hooks_path, event, group, handler) if key in _states(document)]
    if not keys:
        return text
    expected = _plain(document.unwrap())
    after = text
    for key in keys:
        del expected["hooks"]["state"][key]
        entry = _plain(_states(document)[key])
        position = _block_position(after, trust_block(key, entry.get("trusted_hash", ""))) \
            if set(entry) == {"trusted_hash"} and isinstance(entry["trusted_hash"], str) else None
        if position is not None:  # the table --trust appended, with the blank line before it
            start, end = position
            if start >= 1 and after[start - 1] == "\n" and (start == 1 or after[start - 2] == "\n"
                                                             or end == len(after)):
                start -= 1
            after = after[:start] + after[end:]
        else:  # written by Codex: taken out of the document, every other line kept
            edited = _parse_toml(path, after)
            del _states(edited)[key]
            after = edited.as_string()
    if not expected["hooks"]["state"]:
        del expected["hooks"]["state"]
        if not expected["hooks"]:
            del expected["hooks"]
    if _plain(_parse_toml(path, after).unwrap()) != expected:
        plan.notes.append(f"{path}: the trust entries of memcite's hooks cannot be taken out "
                          "on their own; left as is")
        return text
    return after or None


def _block_position(text: str, block: str) -> tuple[int, int] | None:
    """Where setup's ``block`` is in ``text`` (at the start of a line), or None."""
    start = 0
    while True:
        found = text.find(block, start)
        if found < 0:
            return None
        if found == 0 or text[found - 1] == "\n":
            return found, found + len(block)
        start = found + 1


def _feature_warnings(config_text: str | None) -> list[str]:
    if not config_text:
        return []
    try:
        config = loads_toml(config_text)
    except ValueError:
        return []
    features = config.get("features")
    if isinstance(features, dict) and features.get("hooks") is False:
        return ["Codex's hooks are turned off in config.toml ([features] hooks = false): the "
                "hook will not run until that line goes"]
    return []


# --------------------------------------------------------------------------- applying


def _mode_of(path: str) -> int:
    try:
        return os.lstat(path).st_mode & 0o777
    except FileNotFoundError:  # config.toml may come to hold tokens: private from the start
        return 0o600 if path.endswith(CONFIG_FILE) else 0o644


def backup_name(path: str, now: float) -> str:
    """A temporary name for ``path``'s backup, renamed to ``path + BACKUP_SUFFIX``: the time,
    then an unpredictable part, so that no link can be planted under the name beforehand."""
    from memcite.durable_files import unique_name

    stamp = time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(now))
    return unique_name(f"{path}.memcite-backup-{stamp}-")


def apply_plan(plan: SetupPlan, *, now: float | None = None) -> list[str]:
    """Make the planned changes (each file backed up first, to the one backup beside it);
    return the backups written. A file a removal gave back from its backup needs none, and
    that backup goes.

    Each file is written in its folder (the plan's, the memory folder, the project's) opened
    without following links: a new backup
    with O_EXCL, then the file replaced atomically (read back); a link where a file should
    be is refused (exit 3), nothing touched. A file that changed since it was planned is
    left alone (run setup again).
    """
    from memcite.durable_files import (
        LinkRefused,
        create_file_at,
        open_folder,
        read_file_at,
        replace_file_at,
    )

    now = time.time() if now is None else now
    backups: list[str] = []
    changes = [change for change in plan.changes if change.changed]
    if not changes:
        return backups
    folders: dict[str, int] = {}
    try:
        for change in changes:  # each file's own folder: the plan's, the memory folder, the project
            folder = os.path.dirname(change.path) or "."
            if folder in folders:
                continue
            os.makedirs(folder, mode=0o700 if folder != plan.folder else 0o777, exist_ok=True)
            try:
                folders[folder] = open_folder(folder)
            except LinkRefused as refused:
                raise SetupRefused(refused.message, hint=refused.hint) from None
        for change in changes:  # nothing is written before every file checks out
            descriptor = folders[os.path.dirname(change.path) or "."]
            name = os.path.basename(change.path)
            try:
                current = read_file_at(descriptor, name, change.path, MAX_CONFIG_BYTES)
            except LinkRefused as refused:
                raise SetupRefused(refused.message, hint=refused.hint) from None
            if current != (None if change.before is None else change.before.encode("utf-8")):
                raise SetupRefused(f"{change.path} changed since setup read it; nothing written",
                                   hint="run setup again")
        for change in changes:
            descriptor = folders[os.path.dirname(change.path) or "."]
            name = os.path.basename(change.path)
            mode = _mode_of(change.path)
            if change.before is not None and change.backup and change.restored_from is None:
                backup = change.path + BACKUP_SUFFIX  # replaces the one before: one per file
                temporary = os.path.basename(backup_name(change.path, now))
                create_file_at(descriptor, temporary, change.before.encode("utf-8"), mode)
                os.replace(temporary, os.path.basename(backup), src_dir_fd=descriptor,
                           dst_dir_fd=descriptor)  # a rename never follows a link at the name
                backups.append(backup)
            if change.after is None:
                os.unlink(name, dir_fd=descriptor)  # a link at the name was refused above
            else:
                try:
                    replace_file_at(descriptor, name, change.after.encode("utf-8"), change.path,
                                    mode)
                except LinkRefused as refused:
                    raise SetupRefused(refused.message, hint=refused.hint) from None
            if change.restored_from is not None and \
                    os.path.dirname(change.restored_from) == os.path.dirname(change.path):
                try:  # the file is back as it was: its backup has nothing more to keep
                    os.unlink(os.path.basename(change.restored_from), dir_fd=descriptor)
                except FileNotFoundError:
                    pass
    finally:
        for descriptor in folders.values():
            os.close(descriptor)
    return backups


# --------------------------------------------------------------------------- trust


def codex_hook_hash(event: str, handler: dict, matcher: str | None = None) -> str:
    """The hash Codex records when a user trusts one command hook (``trusted_hash``).

    Codex hashes a normalized identity: the event's snake_case label and the matcher
    group reduced to this one handler, with ``timeout`` always set (600 by default)
    and ``async`` always present, unset fields left out, as compact JSON with sorted keys.
    """
    label = EVENT_LABELS.get(event, event)
    normalized = {"type": "command", "command": handler.get("command", ""),
                  "timeout": max(1, int(handler.get("timeout") or 600)),
                  "async": bool(handler.get("async", False))}
    if handler.get("statusMessage") is not None:
        normalized["statusMessage"] = handler["statusMessage"]
    identity: dict = {"event_name": label, "hooks": [normalized]}
    if matcher is not None and event not in ("Stop", "UserPromptSubmit"):
        identity["matcher"] = matcher
    data = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(data.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class HookTrust:
    """Whether Codex will run one hook of a ``hooks.json``."""

    key: str  # the [hooks.state."..."] key
    status: str  # trusted | modified | untrusted | disabled
    current_hash: str


def trust_state(hooks_path: str, event: str, group_index: int, handler_index: int,
                handler: dict, user_config: dict, matcher: str | None = None) -> HookTrust:
    """The trust record of one hook in the user's ``config.toml`` (already parsed)."""
    label = EVENT_LABELS.get(event, event)
    current = codex_hook_hash(event, handler, matcher)
    hooks = user_config.get("hooks") if isinstance(user_config, dict) else None
    states = hooks.get("state") if isinstance(hooks, dict) else None
    states = states if isinstance(states, dict) else {}
    keys = [f"{path}:{label}:{group_index}:{handler_index}"
            for path in dict.fromkeys([os.path.abspath(hooks_path), os.path.realpath(hooks_path)])]
    for key in keys:
        state = states.get(key)
        if not isinstance(state, dict):
            continue
        if state.get("enabled") is False:
            return HookTrust(key, "disabled", current)
        trusted = state.get("trusted_hash")
        if trusted is None:
            return HookTrust(key, "untrusted", current)
        return HookTrust(key, "trusted" if trusted == current else "modified", current)
    return HookTrust(keys[0], "untrusted", current)


@dataclass(frozen=True)
class InstalledHook:
    """One of memcite's hooks as a ``hooks.json`` holds it, with Codex's trust in it."""

    event: str
    path: str  # the hooks.json
    group: int
    handler: int
    command: str
    trust: HookTrust


def installed_hooks(hooks_path: str, document: dict, user_config: dict) -> list[InstalledHook]:
    """memcite's hooks in one parsed ``hooks.json``, each with its trust state."""
    found = []
    for event, args in HOOK_ARGS.items():
        wanted = {"command": "memcite " + " ".join(args)}
        for group, index, handler in find_handlers(document, event, wanted):
            groups = document["hooks"][event]
            matcher = groups[group].get("matcher") if isinstance(groups[group], dict) else None
            found.append(InstalledHook(event, hooks_path, group, index, handler["command"],
                                       trust_state(hooks_path, event, group, index, handler,
                                                   user_config, matcher)))
    return found


def read_installed_hooks(folder: str, codex_home: str) -> list[InstalledHook]:
    """memcite's hooks in ``folder``'s ``hooks.json``, trusted or not by ``codex_home``'s config."""
    text = _read_text(os.path.join(folder, HOOKS_FILE))
    if text is None:
        return []
    document = _load_hooks(os.path.join(folder, HOOKS_FILE), text)
    config_text = _read_text(os.path.join(codex_home, CONFIG_FILE)) or ""
    try:
        user_config = loads_toml(config_text)
    except ValueError:
        user_config = {}
    return installed_hooks(os.path.join(folder, HOOKS_FILE), document, user_config)
