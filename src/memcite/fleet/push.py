"""``memcite push``: what one ledger has that the fleet server lacks, sent in batches.

Each batch is one transaction on the server: the replies' metadata, their cited ids and cited
entries (each entry with its check outcome as this machine sees it now), and the ledger's
cursor (``fleet_ledgers.last_reply_id``) moved past them. A push killed mid-way leaves whole
batches only; run again, it goes on from the cursor. Rows are keyed by (machine, reply time,
reply key), so even a lost cursor cannot count a reply twice: a batch that meets rows the
server already has is sent again through a staging table with ``ON CONFLICT DO NOTHING``.

The reply text is never sent (the ledger never holds it); notes, paths and ids were masked by
the ledger when it recorded them. The inventory of memories (memcite's counts, Codex's counters
as of the last sync) goes after the log: only the rows that changed since the last push.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable

from memcite.fleet.schema import ensure_months, migrate, month_of
from memcite.retention.checks import MEMORY_INDEX, MemoryFolder, check_entry, markdown_sections
from memcite.retention.checks import moved_to as find_moved_to
from memcite.value_classes import Slots

BATCH_REPLIES = 20_000

REPLY_COLUMNS = ("reply_key", "key_kind", "text_sha256", "replied_at", "recorded_at",
                 "thread_id", "cwd", "profile", "policy", "origin", "memory_root", "blocks",
                 "unterminated", "diagnostics")
ID_COLUMNS = ("machine_id", "reply_key", "replied_at", "position", "rollout_id", "thread_id",
              "terminated", "counted", "known", "cwd")
ENTRY_COLUMNS = ("machine_id", "reply_key", "replied_at", "position", "path", "line_start",
                 "line_end", "note", "line", "terminated", "lines_sha256", "outcome", "moved_to",
                 "file_key", "cwd")
MEMORY_COLUMNS = ("thread_id", "source_updated_at", "generated_at", "rollout_slug",
                  "rollout_summary_file", "cwd", "git_branch", "selected_for_phase2",
                  "has_raw_memory", "has_rollout_summary", "usage_count", "last_usage",
                  "codex_usage_count", "codex_last_usage", "source", "codex_home", "synced_at",
                  "missing_since", "archived_at")


class PushReport(Slots):
    """What one push sent (or, with ``dry_run``, would send)."""

    __slots__ = ("server", "machine", "ledger", "dry_run", "replies", "citations", "entries",
                 "memories", "batches", "from_reply", "to_reply", "reconciled", "seconds",
                 "up_to_date")
    _fields = __slots__

    def __init__(self, server: str, machine: str, ledger: str, dry_run: bool) -> None:
        self.server = server
        self.machine = machine
        self.ledger = ledger
        self.dry_run = dry_run
        self.replies = self.citations = self.entries = self.memories = self.batches = 0
        self.from_reply = self.to_reply = 0  # the ledger's reply ids: after from, up to to
        self.reconciled = False  # the cursor did not match this ledger: sent with ON CONFLICT
        self.seconds = 0.0
        self.up_to_date = False

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}


def _text(value):
    """A ledger string as PostgreSQL text accepts it (no NUL; escapes kept visible)."""
    if isinstance(value, str) and "\x00" in value:
        return value.replace("\x00", "\\x00")
    return value


def _clean_rows(rows: list[tuple]) -> list[tuple]:
    """Rows whose strings PostgreSQL takes: NULs escaped, text that is not UTF-8 escaped."""
    def clean(value):
        if isinstance(value, str):
            value = _text(value)
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                value = value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    return [tuple(clean(value) for value in row) for row in rows]


class _EntryChecker:
    """Each distinct cited entry checked once per push, as ``stats`` checks it."""

    def __init__(self, folder: MemoryFolder) -> None:
        self.folder = folder
        self._outcomes: dict[tuple, tuple[str, str | None]] = {}
        self._file_keys: dict[str, str] = {}

    def outcome(self, path: str, line_start: int, line_end: int, digest: str | None):
        key = (path, line_start, line_end, digest)
        found = self._outcomes.get(key)
        if found is None:
            outcome = check_entry(self.folder, path, line_start, line_end, digest)
            moved = (find_moved_to(self.folder, path, line_start, line_end, digest)
                     if outcome == "moved" else None)
            found = self._outcomes[key] = (outcome, json.dumps(list(moved)) if moved else None)
        return found

    def file_key(self, path: str) -> str:
        key = self._file_keys.get(path)
        if key is None:
            real = self.folder.resolve(path)[1] if self.folder.root is not None else None
            key = os.path.relpath(real, self.folder.root) if real is not None else path
            self._file_keys[path] = key
        return key


def _machine_id(cur, machine: str, now: int) -> int:
    return cur.execute(
        "INSERT INTO fleet_machines (name, first_push_at, last_push_at) VALUES (%s, %s, %s)"
        " ON CONFLICT (name) DO UPDATE SET last_push_at = EXCLUDED.last_push_at RETURNING id",
        (machine, now, now)).fetchone()[0]


def _cursor(cur, machine_id: int, ledger: str) -> tuple[int, str | None, dict | None]:
    row = cur.execute("SELECT last_reply_id, last_reply_key, inventory_mark FROM fleet_ledgers"
                      " WHERE machine_id = %s AND ledger = %s", (machine_id, ledger)).fetchone()
    if row is None:
        return 0, None, None
    return row[0], row[1], json.loads(row[2]) if row[2] else None


def _local_mark(local: sqlite3.Connection, last_reply: int) -> dict:
    """What tells which inventory rows may have changed since the last push."""
    def biggest(table: str) -> int:
        return local.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]
    return {"reply": last_reply, "sync": biggest("syncs"), "archive": biggest("archive_log"),
            "memories": local.execute("SELECT count(*) FROM memories").fetchone()[0]}


def push_ledger(local: sqlite3.Connection, server, *, server_name: str, machine: str,
                ledger: str, folder: MemoryFolder, now: int, since: int | None = None,
                dry_run: bool = False, full: bool = False, batch_replies: int = BATCH_REPLIES,
                progress: Callable[[PushReport, int], None] | None = None) -> PushReport:
    """Push what ``local`` (memcite's SQLite ledger) has that ``server`` lacks.

    ``since``: only replies made at or after it (older ones stay local, and the cursor still
    moves past them). ``full``: send every reply again (rows the server has are skipped).
    """
    started = time.monotonic()
    report = PushReport(server_name, machine, ledger, dry_run)
    last_local = local.execute("SELECT coalesce(max(id), 0) FROM replies").fetchone()[0]
    cur = server.cursor()
    if dry_run:
        exists = cur.execute("SELECT to_regclass('fleet_ledgers')").fetchone()[0] is not None
        found = exists and cur.execute(
            "SELECT id FROM fleet_machines WHERE name = %s", (machine,)).fetchone()
        cursor_id, cursor_key, mark = (_cursor(cur, found[0], ledger) if found
                                       else (0, None, None))
        server.rollback()
    else:
        migrate(server)
        with server.transaction():
            machine_id = _machine_id(cur, machine, now)
            cursor_id, cursor_key, mark = _cursor(cur, machine_id, ledger)
    if full or not _cursor_matches(local, cursor_id, cursor_key):
        report.reconciled = cursor_id != 0 or full
        cursor_id, mark = 0, None
    report.from_reply = cursor_id
    report.to_reply = last_local
    if dry_run:
        report.replies, report.citations, report.entries = _counts_after(local, cursor_id, since)
        report.memories = len(_changed_threads(local, mark, cursor_id)) \
            if mark else local.execute("SELECT count(*) FROM memories").fetchone()[0]
        report.up_to_date = not (report.replies or report.memories) and cursor_id == last_local
        report.seconds = round(time.monotonic() - started, 3)
        return report
    checker = _EntryChecker(folder)
    months: set = set()
    position = cursor_id
    while position < last_local:
        batch = _read_batch(local, position, batch_replies, since)
        upper = batch["upper"]
        if batch["replies"]:
            ensure_months(server, batch["months"], months)
        _send_batch(server, machine_id, batch, checker, report, ledger, reconcile=report.reconciled)
        position = upper
        report.batches += 1
        if progress is not None:
            progress(report, last_local)
    report.memories = _push_inventory(local, server, machine_id, ledger, mark, cursor_id,
                                      last_local, folder, now)
    with server.transaction():
        cur.execute("INSERT INTO fleet_pushes (machine_id, ledger, started_at, finished_at,"
                    " replies, citations, entries, memories) VALUES (%s, %s, %s, %s, %s, %s,"
                    " %s, %s)", (machine_id, ledger, now, int(time.time()), report.replies,
                                 report.citations, report.entries, report.memories))
    report.up_to_date = not (report.replies or report.memories)
    report.seconds = round(time.monotonic() - started, 3)
    return report


def _cursor_matches(local: sqlite3.Connection, cursor_id: int, cursor_key: str | None) -> bool:
    """Whether the server's cursor is this ledger's: its reply at that id has that key."""
    if cursor_id == 0:
        return True
    row = local.execute("SELECT reply_key FROM replies WHERE id = ?", (cursor_id,)).fetchone()
    return row is not None and row[0] == cursor_key


def _counts_after(local: sqlite3.Connection, after: int, since: int | None) -> tuple[int, int, int]:
    since_sql = "" if since is None else f" AND replied_at >= {int(since)}"
    scope = f"reply_id IN (SELECT id FROM replies WHERE id > {int(after)}{since_sql})"
    replies = local.execute(f"SELECT count(*) FROM replies WHERE id > ?{since_sql}",
                            (after,)).fetchone()[0]
    ids = local.execute(f"SELECT count(*) FROM cited_ids WHERE {scope}").fetchone()[0]
    entries = local.execute(f"SELECT count(*) FROM cited_entries WHERE {scope}").fetchone()[0]
    return replies, ids, entries


def _read_batch(local: sqlite3.Connection, after: int, size: int, since: int | None) -> dict:
    """The next ``size`` replies after id ``after``, their cited ids and entries (one read
    transaction, so a reply recorded meanwhile is wholly in or wholly out)."""
    local.execute("BEGIN")
    try:
        rows = local.execute(
            f"SELECT id, {', '.join(REPLY_COLUMNS)} FROM replies WHERE id > ? ORDER BY id LIMIT ?",
            (after, size)).fetchall()
        upper = rows[-1][0] if rows else after
        if since is not None:
            rows = [row for row in rows if row[4] >= since]
        keys = {row[0]: (row[1], row[4], row[7]) for row in rows}  # id -> key, time, cwd
        ids = local.execute(
            "SELECT reply_id, position, rollout_id, thread_id, terminated, counted, known"
            " FROM cited_ids WHERE reply_id > ? AND reply_id <= ?", (after, upper)).fetchall()
        entries = local.execute(
            "SELECT reply_id, position, path, line_start, line_end, note, line, terminated,"
            " lines_sha256 FROM cited_entries WHERE reply_id > ? AND reply_id <= ?",
            (after, upper)).fetchall()
    finally:
        local.execute("COMMIT")
    return {"upper": upper, "upper_key": _key_at(local, upper), "replies": rows, "keys": keys,
            "ids": ids, "entries": entries,
            "months": {m for m in (month_of(row[4]) for row in rows) if m is not None}}


def _key_at(local: sqlite3.Connection, reply_id: int) -> str | None:
    row = local.execute("SELECT reply_key FROM replies WHERE id = ?", (reply_id,)).fetchone()
    return row[0] if row else None


def _batch_rows(machine_id: int, batch: dict, checker: _EntryChecker):
    keys = batch["keys"]
    replies = [(machine_id, *row[1:]) for row in batch["replies"]]
    ids = []
    for reply_id, position, rollout_id, thread_id, terminated, counted, known in batch["ids"]:
        reply = keys.get(reply_id)
        if reply is not None:
            ids.append((machine_id, reply[0], reply[1], position, rollout_id, thread_id,
                        terminated, counted, known, reply[2]))
    entries = []
    for reply_id, position, path, start, end, note, line, terminated, digest in batch["entries"]:
        reply = keys.get(reply_id)
        if reply is not None:
            outcome, moved = checker.outcome(path, start, end, digest)
            entries.append((machine_id, reply[0], reply[1], position, path, start, end, note,
                            line, terminated, digest, outcome, moved, checker.file_key(path),
                            reply[2]))
    return replies, ids, entries


_TABLES = (("fleet_replies", ("machine_id", *REPLY_COLUMNS)), ("fleet_cited_ids", ID_COLUMNS),
           ("fleet_cited_entries", ENTRY_COLUMNS))


def _send_batch(server, machine_id: int, batch: dict, checker: _EntryChecker,
                report: PushReport, ledger: str, *, reconcile: bool) -> None:
    """One transaction: the batch's rows, and the cursor moved past them."""
    import psycopg

    tables = _batch_rows(machine_id, batch, checker)
    for attempt in ("copy", "clean") if not reconcile else ("reconcile",):
        try:
            _write_batch(server, machine_id, batch, tables, ledger, reconcile=reconcile)
            break
        except psycopg.errors.UniqueViolation:
            server.rollback()
            reconcile = report.reconciled = True  # rows the server has: skip them
            _write_batch(server, machine_id, batch, tables, ledger, reconcile=True)
            break
        except (psycopg.DataError, UnicodeEncodeError, psycopg.errors.CharacterNotInRepertoire):
            server.rollback()
            if attempt == "clean":
                raise
            tables = tuple(_clean_rows(rows) for rows in tables)
    report.replies += len(tables[0])
    report.citations += len(tables[1])
    report.entries += len(tables[2])


def _write_batch(server, machine_id: int, batch: dict, tables, ledger: str, *,
                 reconcile: bool) -> None:
    with server.transaction():
        cur = server.cursor()
        for (table, columns), rows in zip(_TABLES, tables, strict=True):
            if not rows:
                continue
            if reconcile:
                _copy_through_stage(cur, table, columns, rows)
            else:
                _copy(cur, table, columns, rows)
        cur.execute(
            "INSERT INTO fleet_ledgers (machine_id, ledger, last_reply_id, last_reply_key)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (machine_id, ledger) DO UPDATE SET"
            " last_reply_id = EXCLUDED.last_reply_id, last_reply_key = EXCLUDED.last_reply_key",
            (machine_id, ledger, batch["upper"], batch["upper_key"]))


def _copy(cur, table: str, columns, rows) -> None:
    with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def _copy_through_stage(cur, table: str, columns, rows) -> None:
    stage = f"stage_{table}"
    cur.execute(f"CREATE TEMP TABLE IF NOT EXISTS {stage} (LIKE {table}) ON COMMIT DELETE ROWS")
    _copy(cur, stage, columns, rows)
    names = ", ".join(columns)
    cur.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {stage}"
                " ON CONFLICT DO NOTHING")


# --------------------------------------------------------------------------- the inventory


def _changed_threads(local: sqlite3.Connection, mark: dict, after_reply: int) -> set[str] | None:
    """The memories whose row may differ from what was pushed, or None for all of them (a sync,
    or rows added, since)."""
    now = _local_mark(local, after_reply)
    if now["sync"] != mark.get("sync") or now["memories"] != mark.get("memories"):
        return None
    threads = {row[0] for row in local.execute(
        "SELECT DISTINCT thread_id FROM cited_ids WHERE reply_id > ? AND counted = 1"
        " AND thread_id IS NOT NULL", (mark.get("reply", 0),))}
    threads.update(row[0] for row in local.execute(
        "SELECT DISTINCT thread_id FROM archive_log WHERE id > ?", (mark.get("archive", 0),)))
    return threads


def _push_inventory(local: sqlite3.Connection, server, machine_id: int, ledger: str,
                    mark: dict | None, cursor_id: int, last_reply: int, folder: MemoryFolder,
                    now: int) -> int:
    """Send the memories that changed (all of them the first time), the last syncs and
    MEMORY.md's headings; return how many memory rows the server changed."""
    threads = _changed_threads(local, mark, cursor_id) if mark else None
    select = f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories"
    if threads is None:
        rows = local.execute(select).fetchall()
    else:
        rows = []
        listed = sorted(threads)
        for start in range(0, len(listed), 500):
            chunk = listed[start : start + 500]
            rows += local.execute(f"{select} WHERE thread_id IN ({', '.join('?' * len(chunk))})",
                                  chunk).fetchall()
    syncs = local.execute(
        "SELECT codex_home, store, finished_at, stage1_rows FROM syncs s WHERE id = (SELECT"
        " max(id) FROM syncs t WHERE t.codex_home = s.codex_home AND t.finished_at IS NOT NULL)"
    ).fetchall()
    sections = _index_sections(folder)
    new_mark = json.dumps(_local_mark(local, last_reply))
    names = ", ".join(("machine_id", *MEMORY_COLUMNS))
    changed = ", ".join(f"{c} = EXCLUDED.{c}" for c in MEMORY_COLUMNS[1:])
    old = ", ".join(f"fleet_memories.{c}" for c in MEMORY_COLUMNS[1:])
    new = ", ".join(f"EXCLUDED.{c}" for c in MEMORY_COLUMNS[1:])
    with server.transaction():
        cur = server.cursor()
        written = 0
        if rows:
            cur.execute("CREATE TEMP TABLE IF NOT EXISTS stage_fleet_memories"
                        " (LIKE fleet_memories) ON COMMIT DELETE ROWS")
            _copy(cur, "stage_fleet_memories", ("machine_id", *MEMORY_COLUMNS),
                  _clean_rows([(machine_id, *row) for row in rows]))
            cur.execute(f"INSERT INTO fleet_memories ({names}) SELECT {names}"
                        " FROM stage_fleet_memories ON CONFLICT (machine_id, thread_id)"
                        f" DO UPDATE SET {changed} WHERE ({old}) IS DISTINCT FROM ({new})")
            written = cur.rowcount
        for codex_home, store, finished_at, stage1_rows in syncs:
            cur.execute("INSERT INTO fleet_syncs VALUES (%s, %s, %s, %s, %s) ON CONFLICT"
                        " (machine_id, codex_home) DO UPDATE SET store = EXCLUDED.store,"
                        " finished_at = EXCLUDED.finished_at, stage1_rows = EXCLUDED.stage1_rows",
                        (machine_id, _text(codex_home), store, finished_at, stage1_rows))
        if sections is not None:
            cur.execute("DELETE FROM fleet_sections WHERE machine_id = %s", (machine_id,))
            if sections:
                _copy(cur, "fleet_sections", ("machine_id", "position", "title", "path", "level",
                                              "line", "end_line", "pushed_at"),
                      _clean_rows([(machine_id, index, s.title, s.path, s.level, s.line,
                                    s.end_line, now) for index, s in enumerate(sections)]))
        cur.execute("UPDATE fleet_ledgers SET inventory_mark = %s, pushed_at = %s"
                    " WHERE machine_id = %s AND ledger = %s", (new_mark, now, machine_id, ledger))
        if cur.rowcount == 0:
            cur.execute("INSERT INTO fleet_ledgers (machine_id, ledger, inventory_mark, pushed_at)"
                        " VALUES (%s, %s, %s, %s)", (machine_id, ledger, new_mark, now))
    return written


def _index_sections(folder: MemoryFolder):
    """MEMORY.md's headings now, or None when there is no memory folder to read."""
    if folder.root is None:
        return None
    real = folder.resolve(MEMORY_INDEX)[1]
    lines = folder.lines(real) if real is not None else None
    if lines is None and MEMORY_INDEX in folder.skipped:
        return folder.streamed_sections(real) or []
    return markdown_sections(lines) if lines is not None else []
