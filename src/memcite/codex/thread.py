"""``memcite thread``: what Codex's memory did in one thread, read from its session file.

For one thread (found by id in ``sessions/`` and ``archived_sessions/``, or the newest one
of a project): whether Codex injected its memory message (the developer message beginning
``## Memory``), its size by Codex's 4-bytes rule, whether the summary in it was cut and by
how much, whether it is the summary Codex would inject today; whether the thread could get
memory at all (``[features] memories``, ``[memories] use_memories``, the store read);
whether Codex will make a memory from it (``memory_mode`` in Codex's state database
``state_5.sqlite``, and its source: Codex extracts memories from interactive threads only);
which replies cited memory, which memories and entries, each entry checked against the
memory folder; and, when memory was not used, the likely reason and the setting that
changes it.

Everything is read-only: the session file streamed (``memcite.ledger.session_scan``),
Codex's databases opened ``mode=ro`` (``memcite.ledger.codex_home.open_codex_db``), memcite's
own database only when it exists (for the hashes it took when it recorded the replies).
What Codex 0.171 does here was seen with the real binary (``tests/e2e/test_e2e_thread.py``)
and read in its source (docs/commands-codex.md, ``memcite thread``).
"""

from __future__ import annotations

import hashlib
import os

from memcite.citations.thread_ids import normalize_thread_id
from memcite.display import count
from memcite.errors import InputError, MemciteError
from memcite.ledger import session_scan as scan
from memcite.readpath.truncation import approx_token_count

MEMORY_MODES = ("enabled", "disabled", "polluted")
MAX_CONFIG_BYTES = 4 * 1024 * 1024
MAX_REPLIES_KEPT = 100_000  # replies whose citations are kept for the checks (more: counted)


class NoSuchThread(InputError):
    """No session file of the thread asked for (exit 2)."""


# --------------------------------------------------------------------------- config.toml


def codex_settings(codex_home: str) -> tuple[dict, dict, list[str]]:
    """``([features], [memories], problems)`` of ``$CODEX_HOME/config.toml`` as it is now
    (empty tables when there is no file; a file that cannot be read is a problem, not an
    error: the report goes on without it)."""
    path = os.path.join(codex_home, "config.toml")
    from memcite.ledger.memory_files import read_capped
    from memcite.untrusted import open_regular

    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return {}, {}, []
    except OSError as exc:
        return {}, {}, [f"{path}: cannot read: {exc.strerror or exc}"]
    try:
        read = read_capped(fd, MAX_CONFIG_BYTES)
    except OSError as exc:
        return {}, {}, [f"{path}: cannot read: {exc.strerror or exc}"]
    finally:
        os.close(fd)
    if read.too_large:
        return {}, {}, [f"{path}: larger than {MAX_CONFIG_BYTES} bytes; not read"]
    from memcite.untrusted import loads_toml

    try:
        data = loads_toml(read.data.decode("utf-8"))
    except ValueError as exc:  # not UTF-8, not TOML, nested too deeply
        return {}, {}, [f"{path}: not valid TOML ({exc}); Codex cannot read it either"]
    features = data.get("features") if isinstance(data.get("features"), dict) else {}
    memories = data.get("memories") if isinstance(data.get("memories"), dict) else {}
    return features, memories, []


def memory_settings(features: dict, memories: dict) -> dict:
    """The settings that decide whether Codex injects and makes memories, as Codex reads them:
    ``[features] memories`` (off unless true), ``[memories] use_memories`` and
    ``generate_memories`` (on unless false), ``disable_on_external_context`` (off unless
    true; ``no_memories_if_mcp_or_web_search`` is its older name)."""
    external = memories.get("disable_on_external_context",
                            memories.get("no_memories_if_mcp_or_web_search"))
    return {
        "feature": features.get("memories") is True,
        "use_memories": memories.get("use_memories") is not False,
        "generate_memories": memories.get("generate_memories") is not False,
        "disable_on_external_context": external is True,
    }


# --------------------------------------------------------------------------- finding the thread


def _in_project(cwd: str | None, root: str) -> bool:
    if not cwd:
        return False
    from memcite.readpath.projects import canonical_path

    path = canonical_path(cwd)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def read_meta(path: str) -> dict | None:
    """The payload of a session file's first ``session_meta``, or None (unreadable, none)."""
    try:
        handle = scan.open_session(path)
    except scan.SessionFileError:
        return None
    counts = scan.ScanCounts()
    try:
        with handle:
            for _number, _kind, payload, _at in scan.scan_lines(handle, counts,
                                                                 kinds=frozenset({"meta"})):
                return payload
            return None
    except Exception as exc:  # a damaged .zst, a read error: no meta
        if isinstance(exc, OSError) or type(exc).__module__.startswith("zstandard"):
            return None
        raise


def last_session(codex_home: str, project_root: str | None) -> tuple[str, bool] | None:
    """``(path, archived)`` of the most recently written session file whose thread's cwd is
    in ``project_root`` (None: anywhere) (a subagent's thread is passed over: it is its
    parent's work)."""
    files = sorted(scan.iter_session_files(codex_home),
                   key=lambda item: (item[1].st_mtime_ns, item[0]), reverse=True)
    for path, _info, archived in files:
        meta = read_meta(path)
        if meta is None or scan.source_kind(meta.get("source")) == "subagent":
            continue
        if project_root is None or _in_project(scan.text_of(meta.get("cwd")), project_root):
            return path, archived
    return None


# --------------------------------------------------------------------------- reading the thread


class Reply:
    """One assistant reply of the thread and its citation (None: it cites nothing)."""

    __slots__ = ("line", "at", "item_id", "cited", "entries", "thread_ids")

    def __init__(self, line: int, at: int | None, item_id: str | None, cited: bool,
                 entries: list[tuple[str, int, int]], thread_ids: list[str]) -> None:
        self.line = line
        self.at = at
        self.item_id = item_id
        self.cited = cited
        self.entries = entries
        self.thread_ids = thread_ids


class ThreadScan:
    """What one session file says of its thread's memory."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.meta: dict | None = None
        self.messages: list[scan.MemoryMessage] = []
        self.replies: list[Reply] = []
        self.reply_count = 0
        self.counts = scan.ScanCounts()


def _reply_of_text(text: str, line: int, at: int | None, item_id: str | None) -> Reply:
    if "oai-mem-citation" not in text:
        return Reply(line, at, item_id, False, [], [])
    from memcite.citations.reading import parse_reply

    reading = parse_reply(text, profile="codex")
    if reading.citation is None:
        return Reply(line, at, item_id, False, [], [])
    entries = [(entry.path, entry.line_start, entry.line_end) for entry in reading.citation.entries]
    return Reply(line, at, item_id, True, entries, list(reading.thread_ids))


def _reply_of_item(item: dict, line: int, at: int | None) -> Reply | None:
    """A reply from an ``item_completed`` AgentMessage's ``memory_citation`` (Codex's reading)."""
    citation = item.get("memory_citation")
    if not isinstance(citation, dict):
        return None
    entries = []
    for entry in citation.get("entries") or []:
        if isinstance(entry, dict) and isinstance(entry.get("path"), str) \
                and type(entry.get("lineStart")) is int and type(entry.get("lineEnd")) is int:
            entries.append((scan.storable(entry["path"]), entry["lineStart"], entry["lineEnd"]))
    ids = [normalize_thread_id(value) for value in citation.get("rolloutIds") or []
           if isinstance(value, str)]
    return Reply(line, at, scan.text_of(item.get("id")), True, entries,
                 [value for value in ids if value])


def read_thread(path: str, *, max_bytes: int = scan.DEFAULT_MAX_FILE_BYTES) -> ThreadScan:
    """Read one session file: its meta, memory messages and replies (streaming)."""
    found = ThreadScan(path)
    kinds = frozenset({"meta", "developer", "assistant", "agent_item"})
    seen_items: set[str] = set()
    pending_items: dict[str, Reply] = {}  # paginated replies whose response_item is not seen yet
    try:
        handle = scan.open_session(path)
    except scan.SessionFileError as exc:
        raise InputError(str(exc)) from None
    try:
        with handle:
            for number, kind, payload, stamp in scan.scan_lines(handle, found.counts, kinds=kinds,
                                                                 max_bytes=max_bytes):
                if kind == "meta":
                    if found.meta is None:
                        found.meta = payload  # later ones are a parent's, copied into a fork
                    continue
                at = scan.seconds_of(stamp)
                if kind == "developer":
                    message = scan.memory_message(payload, number, at)
                    if message is not None:
                        found.messages.append(message)
                    continue
                if kind == "agent_item":
                    item = payload.get("item")
                    if isinstance(item, dict) and item.get("type") == "AgentMessage":
                        reply = _reply_of_item(item, number, at)
                        if reply is not None and reply.item_id not in seen_items:
                            pending_items[reply.item_id or f"line {number}"] = reply
                    continue
                if payload.get("type") != "message" or payload.get("role") != "assistant":
                    continue
                content = payload.get("content")
                if not isinstance(content, list):
                    continue
                text = "".join(part["text"] for part in content
                               if isinstance(part, dict) and part.get("type") == "output_text"
                               and isinstance(part.get("text"), str))
                item_id = scan.text_of(payload.get("id"))
                if item_id:
                    seen_items.add(item_id)
                    pending_items.pop(item_id, None)
                found.reply_count += 1
                reply = _reply_of_text(text, number, at, item_id)
                if reply.cited and len(found.replies) < MAX_REPLIES_KEPT:
                    found.replies.append(reply)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except Exception as exc:
        if type(exc).__module__.startswith("zstandard"):
            raise InputError(f"{path}: not a readable zstd file ({exc})") from None
        raise
    for reply in pending_items.values():  # a reply Codex had not yet written as a response_item
        found.reply_count += 1
        found.replies.append(reply)
    found.replies.sort(key=lambda reply: reply.line)
    return found


# --------------------------------------------------------------------------- Codex's databases


def _columns(conn, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def state_thread_row(path: str, thread_id: str) -> tuple[dict | None, str | None]:
    """``(row, problem)``: the thread's ``memory_mode``, ``source``, ``archived`` and ``cwd``
    in Codex's ``threads`` table (None when it has no row), read-only."""
    import sqlite3

    from memcite.ledger.codex_home import CodexHomeError, open_codex_db

    try:
        conn = open_codex_db(path)
    except CodexHomeError as error:
        return None, error.message
    try:
        columns = _columns(conn, "threads")
        if "id" not in columns:
            return None, f"{path}: no threads table"
        wanted = [name for name in ("memory_mode", "source", "archived", "cwd") if name in columns]
        row = conn.execute(f"SELECT {', '.join(wanted) or 'id'} FROM threads WHERE id = ?",
                           (thread_id,)).fetchone()
    except sqlite3.Error as exc:
        return None, f"{path}: cannot read threads ({exc})"
    finally:
        conn.close()
    if row is None:
        return None, None
    return dict(zip(wanted, row, strict=False)), None


def memories_db_facts(path: str, thread_id: str, cited: list[str]) -> tuple[dict, str | None]:
    """From Codex's memories database (read-only): whether a memory (a ``stage1_outputs``
    row) was made from ``thread_id``, its stage-1 job's status, and which of ``cited`` have a
    row. Empty with a problem when it cannot be read; empty when it is not there."""
    import sqlite3

    from memcite.ledger.codex_home import CodexHomeError, open_codex_db

    if not os.path.isfile(path):
        return {}, None
    try:
        conn = open_codex_db(path)
    except CodexHomeError as error:
        return {}, error.message
    facts: dict = {}
    try:
        if "thread_id" in _columns(conn, "stage1_outputs"):
            wanted = sorted(set(cited) | {thread_id})
            rows: set[str] = set()
            for start in range(0, len(wanted), 500):
                chunk = wanted[start:start + 500]
                rows |= {row[0] for row in conn.execute(
                    "SELECT thread_id FROM stage1_outputs WHERE thread_id IN "
                    f"({', '.join('?' * len(chunk))})", chunk)}
            facts["memory_exists"] = thread_id in rows
            facts["in_codex"] = rows
        if {"kind", "job_key", "status"} <= _columns(conn, "jobs"):
            row = conn.execute("SELECT status FROM jobs WHERE kind = 'memory_stage1' AND "
                               "job_key = ?", (thread_id,)).fetchone()
            facts["stage1_job"] = scan.text_of(row[0]) if row else None
    except sqlite3.Error as exc:
        return {}, f"{path}: cannot read ({exc})"
    finally:
        conn.close()
    return facts, None


def recorded_hashes(db_path: str | None, keys: list[str]) -> dict[str, dict]:
    """``reply key -> {(path, start, end): sha256}`` from memcite's database, for the replies
    it recorded (read-only; nothing when there is no database or it cannot be read)."""
    if not db_path or not keys or not os.path.isfile(db_path):
        return {}
    import sqlite3

    from memcite.ledger.store import open_store

    try:
        conn = open_store(db_path, readonly=True)
    except (MemciteError, sqlite3.Error, OSError):
        return {}
    found: dict[str, dict] = {}
    try:
        for key in keys:
            row = conn.execute("SELECT id FROM replies WHERE reply_key = ?", (key,)).fetchone()
            if row is None:
                continue
            found[key] = {(path, start, end): digest for path, start, end, digest in conn.execute(
                "SELECT path, line_start, line_end, lines_sha256 FROM cited_entries "
                "WHERE reply_id = ? ORDER BY position", (row[0],))}
    except sqlite3.Error:
        return found
    finally:
        conn.close()
    return found


# --------------------------------------------------------------------------- the report


def _sha256(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def current_summary(memory_root: str, store: str) -> tuple[dict, list[str]]:
    """What Codex would inject now (``memcite instructions --profile codex``): the summary's
    hash, its tokens, whether it is cut; and the problems reading it."""
    from memcite.readpath.instructions import build_instructions

    try:
        built = build_instructions(memory_root, profile="codex", store=store)
    except MemciteError as error:
        return {"summary_sha256": None, "summary_tokens": 0, "truncated": False,
                "store": store, "memory_folder": memory_root}, [error.message]
    return {"summary_sha256": _sha256(built.summary), "summary_tokens": built.used,
            "truncated": bool(built.truncated), "store": store,
            "memory_folder": memory_root}, list(built.warnings)


def _generation(mode: str | None, mode_from: str | None, kind: str, settings: dict,
                facts: dict) -> dict:
    interactive = kind in scan.INTERACTIVE_SOURCES
    will: bool | None
    if mode is None:
        will = None
        why = ("memory_mode unknown: Codex's state database has no row for this thread and its "
               "session_meta names none")
    elif mode == "disabled":
        will = False
        why = ("memory_mode disabled: the thread started while [memories] generate_memories = "
               "false (or memory was turned off for it with /memories), so Codex makes no memory "
               "from it")
    elif mode == "polluted":
        will = False
        why = ("memory_mode polluted: the thread used external context (a web search or a tool "
               "search) while [memories] disable_on_external_context = true, so Codex makes no "
               "memory from it and leaves one made before out of consolidation")
    elif mode != "enabled":
        will = None
        why = f"memory_mode {mode}: a value this memcite does not know"
    elif not interactive:
        will = False
        why = (f"memory_mode enabled, but Codex makes memories only from interactive threads "
               f"(cli, vscode), never from {kind} threads")
    elif not settings["feature"] or not settings["generate_memories"]:
        will = False
        why = ("memory_mode enabled, but memory generation is off now ([features] memories "
               "must be true and [memories] generate_memories not false)")
    else:
        will = not facts.get("memory_exists", False)
        why = ("memory_mode enabled: a memory was made from it already" if not will else
               "memory_mode enabled: Codex makes a memory from it at a later start, once it "
               "has been idle for [memories] min_rollout_idle_hours (6 by default) and while "
               "it is no older than max_rollout_age_days (10)")
    return {"memory_mode": mode, "memory_mode_from": mode_from, "source": kind,
            "interactive": interactive, "will_generate": will, "explanation": why,
            "memory_exists": facts.get("memory_exists"), "stage1_job": facts.get("stage1_job")}


def _reason(injected: bool, cited: int, settings: dict, current: dict,
            memory_root: str) -> tuple[str | None, str | None]:
    """The likely reason memory was not used, and the setting that changes it."""
    if injected and cited:
        return None, None
    if cited:  # cited, with no memory message in the thread: no setting is to blame
        return ("no memory message was in the thread's context, yet a reply cited memory: the "
                "model read the memory folder on its own (a file it was shown or found), so "
                "memory was used without Codex injecting it", None)
    if injected:
        return ("the memory message was in the thread's context, but no reply cited a memory: "
                "the model found nothing in it for these requests (no setting changes that; "
                "what the summary says does)", None)
    if not settings["feature"]:
        return ("Codex's memory feature is off in config.toml, so no memory message is "
                "injected", "[features] memories = true")
    if not settings["use_memories"]:
        return ("[memories] use_memories = false in config.toml: Codex injects no memory "
                "message", "[memories] use_memories = true (or remove the line)")
    if current.get("summary_sha256") is None:
        return (f"there is no memory summary to inject ({memory_root}/memory_summary.md is "
                "missing or empty): Codex writes it when it consolidates memories made from "
                "past interactive threads", "[memories] generate_memories = true")
    return ("Codex would inject memory now, so when this thread started memory was off or "
            "there was no summary yet: a -c override or a profile may have turned it off "
            "(`-c memories.use_memories=false`, `-c features.memories=false`, or `codex "
            "--disable memories`)", "[memories] use_memories = true and [features] memories = "
            "true (in config.toml, the profile or -c), without --disable memories")


def thread_report(codex_home: str | os.PathLike, thread_id: str | None = None, *,
                  last_in: str | None = None, db_path: str | None = None,
                  env_sqlite_home: str | None = None, cwd: str | None = None,
                  now: int, anywhere: bool = False) -> dict:
    """The ``memcite thread --json`` report of one thread: ``thread_id``, or with ``last_in``
    (a project's root) the newest thread run in that project, or with ``anywhere`` the
    newest thread of the whole home. ``NoSuchThread`` (exit 2) when there is no session
    file for it (naming ``--anywhere`` when the home has a thread elsewhere)."""
    from memcite.ledger.codex_home import locate_codex_home, memory_folder, state_database, state_db_path

    where = locate_codex_home(codex_home, env_sqlite_home=env_sqlite_home, cwd=cwd)
    home = where.codex_home
    if thread_id is not None:
        wanted = normalize_thread_id(thread_id.strip())
        if wanted is None:
            raise InputError(f"{thread_id!r} is not a thread id (a UUID)",
                             hint="the id is the end of the session file's name, or "
                                  "`memcite thread --last` takes the newest of this project")
        located = scan.find_session_file(home, wanted)
        if located is None:
            raise NoSuchThread(f"no session file of thread {wanted} in {home}/sessions or "
                               f"{home}/archived_sessions",
                               hint="an ephemeral thread (codex exec --ephemeral) leaves none")
    else:
        located = last_session(home, None if anywhere else (last_in or os.getcwd()))
        if located is None and not anywhere and last_session(home, None) is not None:
            raise NoSuchThread(f"no session file in {home} of a thread run in {last_in}",
                               hint="`memcite thread --last --anywhere` takes the home's newest "
                                    "thread, wherever it ran; or run it in the project's "
                                    "folder, or give the thread id")
        if located is None:
            raise NoSuchThread(f"no session file of any thread in {home}/sessions or "
                               f"{home}/archived_sessions" if anywhere else
                               f"no session file in {home} of a thread run in {last_in}",
                               hint="Codex writes one per thread it runs (an ephemeral one, "
                                    "codex exec --ephemeral, leaves none)")
    path, archived = located
    thread = read_thread(path)
    meta = thread.meta or {}
    warnings: list[str] = []
    if thread.meta is None:
        warnings.append(f"{path}: no session_meta line; the thread's id is taken from the name")
    tid = normalize_thread_id(scan.text_of(meta.get("id")) or "") or \
        scan.rollout_thread_id(os.path.basename(path))
    kind = scan.source_kind(meta.get("source"))
    features, memories, problems = codex_settings(home)
    warnings += problems
    settings = memory_settings(features, memories)
    message = thread.messages[0] if thread.messages else None
    read_store = message.store if message else where.store
    root = memory_folder(home, read_store)
    current, problems = current_summary(where.memory_folder, where.store)
    warnings += problems
    injected_hash = _sha256(message.summary) if message else None

    # Codex's databases: memory_mode, and what its memories database holds of this thread.
    mode, mode_from = None, None
    state = state_database(where.sqlite_home)
    state_row = None
    if state is not None:
        state_row, problem = state_thread_row(state, tid)
        if problem:
            warnings.append(problem)
        if state_row and state_row.get("memory_mode") is not None:
            mode, mode_from = scan.text_of(state_row["memory_mode"]), os.path.basename(state)
    if mode is None and isinstance(meta.get("memory_mode"), str):
        mode, mode_from = scan.text_of(meta["memory_mode"]), "session_meta"
    # Codex picks the threads to extract by the source its state database holds.
    generation_kind = scan.source_kind(state_row["source"]) \
        if state_row and state_row.get("source") else kind
    cited_ids = sorted({value for reply in thread.replies for value in reply.thread_ids})
    facts, problem = memories_db_facts(state_db_path(home, where.sqlite_home, where.store), tid,
                                       cited_ids)
    if problem:
        warnings.append(problem)

    citations = _citations(thread, tid, path, root, db_path, facts)
    reason, setting = _reason(message is not None, citations["cited_replies"], settings,
                              current, where.memory_folder)
    summary_tokens = approx_token_count(message.summary) if message and message.summary else 0
    cut = scan.truncated_tokens(message.summary) if message else None
    counts = thread.counts
    if counts.partial:
        warnings.append(f"{path}: only its first {counts.bytes_read} bytes were read")
    if counts.long_lines:
        warnings.append(f"{path}: skipped {count(counts.long_lines, 'line')} too long to read")
    if counts.bad_lines:
        warnings.append(f"{path}: skipped {count(counts.bad_lines, 'line')} not JSON")
    return {
        "thread_id": tid,
        "session_file": path,
        "archived": archived,
        "created_at": scan.seconds_of(meta.get("timestamp")),
        "cwd": scan.text_of(meta.get("cwd")),
        "source": kind,
        "parent_thread_id": scan.parent_thread_id(meta.get("source")),
        "cli_version": scan.text_of(meta.get("cli_version")),
        "memory": {
            "injected": message is not None,
            "messages": len(thread.messages),
            "store": message.store if message else None,
            "tokens": approx_token_count(message.text) if message else 0,
            "summary_tokens": summary_tokens,
            "truncated": cut is not None,
            "truncated_tokens": cut,
            "spans": message.spans if message else 0,
            "summary_sha256": injected_hash,
            "current": current,
            "matches_current": (injected_hash == current["summary_sha256"]
                                and read_store == where.store) if message else None,
        },
        "eligibility": {
            "could_get_memory": settings["feature"] and settings["use_memories"],
            "feature": settings["feature"],
            "use_memories": settings["use_memories"],
            "store": where.store,
            "store_from": where.store_from,
            "subagent": kind == "subagent",
            "ephemeral": False,
        },
        "generation": _generation(mode, mode_from, generation_kind, settings, facts),
        "citations": citations,
        "reason": reason,
        "setting": setting,
        "checked_at": now,
        "warnings": warnings,
    }


def _citations(thread: ThreadScan, tid: str | None, path: str, root: str,
               db_path: str | None, facts: dict) -> dict:
    """The cited memories and entries of the thread's replies, each entry checked against
    the memory folder as it is now: against the hash memcite took when it recorded the reply,
    else the folder's git history at the reply's time, else none (``unverified``)."""
    from memcite.ledger.ingest import reply_id
    from memcite.ledger.memory_history import MemoryHistory
    from memcite.retention.checks import CHECK_OUTCOMES, MemoryFolder, check_entry

    keys = [reply_id(tid, path, reply.line) for reply in thread.replies]
    hashes = recorded_hashes(db_path, keys)
    by_thread: dict[str, int] = {}
    by_entry: dict[tuple[str, int, int], dict] = {}
    folder = MemoryFolder(root if os.path.isdir(root) else None)
    history = MemoryHistory(root if os.path.isdir(root) else None)
    try:
        for reply, key in zip(thread.replies, keys, strict=True):
            for value in dict.fromkeys(reply.thread_ids):
                by_thread[value] = by_thread.get(value, 0) + 1
            recorded = hashes.get(key) or {}
            for entry in reply.entries:
                cited_path, start, end = entry
                digest, basis = recorded.get(entry), "recorded"
                if digest is None:  # not recorded, or recorded without a hash (ingested late)
                    digest = history.lines_sha256_at(cited_path, start, end, reply.at) \
                        if reply.at is not None else None
                    basis = "history" if digest else "none"
                outcome = check_entry(folder, cited_path, start, end, digest)
                row = by_entry.get(entry)
                if row is None:
                    by_entry[entry] = {"path": cited_path, "line_start": start, "line_end": end,
                                       "citations": 1, "outcome": outcome, "basis": basis}
                    continue
                row["citations"] += 1
                if CHECK_OUTCOMES.index(outcome) < CHECK_OUTCOMES.index(row["outcome"]):
                    row["outcome"], row["basis"] = outcome, basis
    finally:
        folder.close()
    in_codex = facts.get("in_codex")
    return {
        "replies": thread.reply_count,
        "cited_replies": len(thread.replies),
        "memory_folder": root,
        "threads": [{"thread_id": value, "replies": count,
                     "in_codex": None if in_codex is None else value in in_codex}
                    for value, count in sorted(by_thread.items(), key=lambda kv: (-kv[1], kv[0]))],
        "entries": sorted(by_entry.values(),
                          key=lambda row: (CHECK_OUTCOMES.index(row["outcome"]), row["path"],
                                           row["line_start"], row["line_end"])),
    }
