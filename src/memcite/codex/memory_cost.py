"""What Codex's memory costs: the tokens its memory message added to threads, and the
background memory jobs Codex ran (``memcite thread --cost``).

``memory_cost`` reads every session file of a Codex home, streaming, one line at a time
and by its start (``memcite.ledger.session_scan``): the memory messages (developer messages
beginning ``## Memory``) and the ``token_count`` events (one per model response). Per thread
it sums the tokens of each memory message (Codex's 4-bytes rule, the estimate Codex itself
uses) and, for each model request made while one was in the context, those tokens again:
the request resent them (prompt caching makes most of them cheap: an upper bound on what
the memory message was billed as input). The sums are given per UTC day and per working
folder (a session's ``cwd``).

Bounded memory: only sums are kept (per thread while it is read, per day and per folder);
a line longer than its limit is skipped unread; a file is read at most ``max_file_bytes``
(then counted ``partial``: the first memory message comes at its start); a file that
cannot be opened or decompressed is counted and named, never fatal.

The jobs are the rows of the ``jobs`` table of Codex's memories databases
(``memories_1.sqlite``, ``memories_v2_1.sqlite``), counted by kind and status, read-only:
one row per job, its latest state (``memory_stage1`` has one per thread extracted,
``memory_consolidate_global`` one row reused by every consolidation).
"""

from __future__ import annotations

import os

from memcite.ledger import session_scan as scan
from memcite.readpath.truncation import approx_token_count
from memcite.times import utc_day as _day

MAX_NAMED = 20  # files named in ``files.problems`` (the rest counted)


class _Sums:
    __slots__ = ("threads", "threads_with_memory", "injections", "tokens", "requests",
                 "resent_tokens")

    def __init__(self) -> None:
        self.threads = 0
        self.threads_with_memory = 0
        self.injections = 0
        self.tokens = 0
        self.requests = 0
        self.resent_tokens = 0

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}


class _Thread:
    """One thread's sums while its file is read: per day, and its totals."""

    def __init__(self) -> None:
        self.days: dict[str, _Sums] = {}
        self.total = _Sums()
        self.in_context = 0  # tokens of the memory message in the context now

    def day(self, name: str | None) -> _Sums:
        name = name or "unknown"
        sums = self.days.get(name)
        if sums is None:
            sums = self.days[name] = _Sums()
        return sums


def _read_file(path: str, since: int | None, max_bytes: int) -> tuple[dict | None, _Thread,
                                                                       scan.ScanCounts]:
    thread = _Thread()
    counts = scan.ScanCounts()
    meta = None
    kinds = frozenset({"meta", "developer", "token_count"})
    with scan.open_session(path) as handle:
        for _number, kind, payload, stamp in scan.scan_lines(handle, counts, kinds=kinds,
                                                              max_bytes=max_bytes):
            if kind == "meta":
                if meta is None:
                    meta = payload
                continue
            at = scan.seconds_of(stamp)
            counted = since is None or (at is not None and at >= since)
            if kind == "developer":
                message = scan.memory_message(payload)
                if message is None:
                    continue
                tokens = approx_token_count(message.text)
                thread.in_context = tokens  # a new one (after a compaction) replaces the last
                if counted:
                    for sums in (thread.total, thread.day(_day(at))):
                        sums.injections += 1
                        sums.tokens += tokens
                continue
            if counted:  # token_count: one model response, its request sent the context
                for sums in (thread.total, thread.day(_day(at))):
                    sums.requests += 1
                    sums.resent_tokens += thread.in_context
    return meta, thread, counts


def _add(into: _Sums, sums: _Sums, with_memory: bool) -> None:
    into.threads += 1
    into.threads_with_memory += with_memory
    into.injections += sums.injections
    into.tokens += sums.tokens
    into.requests += sums.requests
    into.resent_tokens += sums.resent_tokens


def memory_jobs(db_path: str, since: int | None = None) -> dict:
    """The rows of the ``jobs`` table of one Codex memories database, by kind and status
    (``since``: only rows whose job last started or finished at or after it), read-only."""
    import sqlite3

    from memcite.ledger.codex_home import CodexHomeError, open_codex_db

    found = {"db": db_path, "found": os.path.isfile(db_path), "rows": 0, "by_kind": [],
             "error": None}
    if not found["found"]:
        return found
    try:
        conn = open_codex_db(db_path)
    except CodexHomeError as error:
        found["error"] = error.message
        return found
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(jobs)")}
        if not {"kind", "status"} <= columns:
            found["error"] = f"{db_path}: no jobs table with kind and status"
            return found
        where, values = "", ()
        if since is not None:
            stamps = [name for name in ("finished_at", "started_at") if name in columns]
            if stamps:
                where = f" WHERE coalesce({', '.join(stamps)}, 0) >= ?"
                values = (since,)
        rows = conn.execute(f"SELECT kind, status, count(*) FROM jobs{where} "
                            "GROUP BY kind, status ORDER BY kind, status", values).fetchall()
    except sqlite3.Error as exc:
        found["error"] = f"{db_path}: cannot read jobs ({exc})"
        return found
    finally:
        conn.close()
    found["by_kind"] = [{"kind": scan.text_of(kind) or "", "status": scan.text_of(status) or "",
                         "rows": count} for kind, status, count in rows]
    found["rows"] = sum(count for _kind, _status, count in rows)
    return found


def memory_cost(codex_home: str | os.PathLike, *, since: int | None = None, now: int,
                sqlite_home: str | os.PathLike | None = None,
                max_file_bytes: int = scan.DEFAULT_MAX_FILE_BYTES) -> dict:
    """The tokens Codex's memory message added to the threads of ``codex_home``, per UTC day
    and per working folder, and Codex's background memory jobs.

    ``since`` (Unix seconds): only memory messages and requests at or after it (a session
    file last written before it is not opened); ``now``: the time of the report;
    ``sqlite_home``: where Codex keeps its databases (default: the home). Returns::

        {"codex_home", "as_of": now, "since", "tokenizer": "approx",
         "totals": {threads, threads_with_memory, injections, tokens, requests, resent_tokens},
         "by_day": [{"day": "YYYY-MM-DD", ...the same sums}],     # oldest first
         "by_project": [{"cwd": str | None, ...the same sums}],  # most tokens first
         "jobs": [{"store": "v1"|"v2", "db", "found", "rows",
                   "by_kind": [{"kind", "status", "rows"}], "error"}],
         "files": {"read", "skipped_old", "partial", "unreadable", "long_lines",
                   "bad_lines", "problems": [str]}}

    ``threads`` counts the threads with a line in the window; ``threads_with_memory`` those
    that got a memory message in it; ``tokens`` sums the memory messages (``injections``);
    ``requests`` counts model responses; ``resent_tokens`` sums, per request, the memory
    message then in the thread's context.
    """
    from memcite.ledger.codex_home import MEMORY_STORES

    home = os.path.realpath(os.fspath(codex_home))
    totals = _Sums()
    by_day: dict[str, _Sums] = {}
    by_project: dict[str | None, _Sums] = {}
    files = {"read": 0, "skipped_old": 0, "partial": 0, "unreadable": 0, "long_lines": 0,
             "bad_lines": 0, "problems": []}
    seen: set[str] = set()
    for path, info, _archived in sorted(scan.iter_session_files(home), key=lambda item: item[0]):
        if since is not None and info.st_mtime < since:
            files["skipped_old"] += 1
            continue
        try:
            meta, thread, counts = _read_file(path, since, max_file_bytes)
        except (scan.SessionFileError, OSError) as exc:
            _problem(files, f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}")
            continue
        except Exception as exc:
            if not type(exc).__module__.startswith("zstandard"):
                raise
            _problem(files, f"{path}: not a readable zstd file ({exc})")
            continue
        files["read"] += 1
        files["partial"] += counts.partial
        files["long_lines"] += counts.long_lines
        files["bad_lines"] += counts.bad_lines
        tid = scan.rollout_thread_id(os.path.basename(path))
        if meta is not None:
            tid = scan.normalize_thread_id(scan.text_of(meta.get("id")) or "") or tid
        if tid in seen:
            continue  # a reverted thread's other file: counted once
        seen.add(tid)
        total = thread.total
        if since is not None and not total.requests and not total.injections:
            continue  # nothing of this thread in the window
        cwd = scan.text_of((meta or {}).get("cwd"))
        _add(totals, total, total.injections > 0)
        project = by_project.get(cwd)
        if project is None:
            project = by_project[cwd] = _Sums()
        _add(project, total, total.injections > 0)
        for name, sums in thread.days.items():
            day = by_day.get(name)
            if day is None:
                day = by_day[name] = _Sums()
            _add(day, sums, sums.injections > 0)
    sqlite_home = os.fspath(sqlite_home) if sqlite_home is not None else home
    jobs = []
    for store, (_folder, db_name) in MEMORY_STORES.items():
        jobs.append({"store": store, **memory_jobs(os.path.join(sqlite_home, db_name), since)})
    return {
        "codex_home": home,
        "as_of": now,
        "since": since,
        "tokenizer": "approx",
        "totals": totals.to_dict(),
        "by_day": [{"day": name, **sums.to_dict()} for name, sums in sorted(by_day.items())],
        "by_project": [{"cwd": cwd, **sums.to_dict()} for cwd, sums in sorted(
            by_project.items(), key=lambda kv: (-kv[1].tokens, -kv[1].requests, kv[0] or ""))],
        "jobs": jobs,
        "files": files,
    }


def _problem(files: dict, text: str) -> None:
    files["unreadable"] += 1
    if len(files["problems"]) < MAX_NAMED:
        files["problems"].append(scan.storable(text))
