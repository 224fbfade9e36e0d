"""Filling memcite's inventory from a Codex home (``memcite sync``).

Three streaming passes, each committed in batches so that recorders are never
kept waiting long: ``stage1_outputs`` (authoritative for times and Codex's
counts), then ``raw_memories.md`` sections and ``rollout_summaries/*.md``
headers (they add cwd, paths and branch, and bring in threads the database
lacks). Rows are updated in place; memcite's own counts are never touched,
except that a memory cited before it was first synced gets its logged counts.
Rows of this home that no pass saw are marked ``missing_since``, never deleted.

``stage1_outputs`` is copied in SQL: Codex's database is attached read-only and
each batch is one ``INSERT ... SELECT`` over a range of thread ids, in key order;
a row that did not change is not rewritten (only its ``synced_at`` and
``last_sync_id`` move). A large first load (more rows than the inventory holds)
drops the secondary indexes of ``memories`` and builds them after, each in its own
transaction; any sync puts back an index an interrupted load left missing. The
rare thread id not already in its counted form (uppercase, braced, ...) is
normalised in Python.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice

from memcite.citations.thread_ids import normalize_thread_id
from memcite.ledger import codex_home as home
from memcite.ledger import counters
from memcite.ledger.recording import backfill_usage
from memcite.ledger.store import migrate, transaction
from memcite.untrusted import storable

BATCH_ROWS = 20_000

Progress = Callable[[str, int, int | None], None]  # (phase, done, total or None)


@dataclass(frozen=True)
class SyncReport:
    """What a sync read and changed."""

    codex_home: str
    sync_id: int
    stage1_rows: int  # rows read from stage1_outputs
    folder_threads: int  # raw_memories.md sections and summary headers read
    inserted: int
    updated: int
    marked_missing: int
    invalid_ids: int  # rows or sections whose thread id is not a UUID (skipped)
    stage1_found: bool
    folder_found: bool
    raw_sections: int = 0  # of folder_threads: raw_memories.md sections
    summary_headers: int = 0  # of folder_threads: rollout_summaries/*.md headers
    skipped: tuple[str, ...] = ()  # memory files not read (a symlink leading out, ...), and why
    state_db: str = ""  # where Codex's table was looked for
    sqlite_home_from: str = "CODEX_HOME"  # why there (see codex_home.locate_codex_home)
    forget_requests_seen_gone: int = 0  # requests to forget whose memory Codex no longer has
    counts: dict | None = None  # this home's memories, cited by Codex's counters and memcite's log

    @property
    def usage_data(self) -> bool:
        """False: Codex's table was not found, so no memory's usage is known."""
        return self.stage1_found

    def warnings(self) -> list[str]:
        """What a user must be told loudly about this sync."""
        if self.stage1_found:
            return []
        return [f"no usage data: {self.state_db} not found (SQLite home from "
                f"{self.sqlite_home_from}); memories were read from the memory folder only, "
                "so how often each was used is unknown. stats, prune and select will not "
                "judge them. If Codex keeps its databases elsewhere, set sqlite_home in "
                "config.toml or CODEX_SQLITE_HOME as Codex does, and sync again."]

    def to_dict(self) -> dict:
        return {
            "codex_home": self.codex_home,
            "sync_id": self.sync_id,
            "stage1_rows": self.stage1_rows,
            "folder_threads": self.folder_threads,
            "inserted": self.inserted,
            "updated": self.updated,
            "marked_missing": self.marked_missing,
            "invalid_ids": self.invalid_ids,
            "stage1_found": self.stage1_found,
            "folder_found": self.folder_found,
            "raw_sections": self.raw_sections,
            "summary_headers": self.summary_headers,
            "skipped": list(self.skipped),
            "state_db": self.state_db,
            "sqlite_home_from": self.sqlite_home_from,
            "usage_data": self.usage_data,
            "forget_requests_seen_gone": self.forget_requests_seen_gone,
            "counts": self.counts,
            "warnings": self.warnings(),
        }


_STAGE1_INTO = """
INSERT INTO memories (
    thread_id, source_updated_at, generated_at, rollout_slug, codex_usage_count,
    codex_last_usage, selected_for_phase2, selected_for_phase2_source_updated_at,
    has_raw_memory, has_rollout_summary, source, codex_home, first_synced_at, synced_at,
    last_sync_id)
"""
_STAGE1_ON_CONFLICT = """
ON CONFLICT (thread_id) DO UPDATE SET
    source_updated_at = excluded.source_updated_at,
    generated_at = excluded.generated_at,
    rollout_slug = coalesce(excluded.rollout_slug, rollout_slug),
    codex_usage_count = excluded.codex_usage_count,
    codex_last_usage = excluded.codex_last_usage,
    selected_for_phase2 = excluded.selected_for_phase2,
    selected_for_phase2_source_updated_at = excluded.selected_for_phase2_source_updated_at,
    has_raw_memory = excluded.has_raw_memory,
    has_rollout_summary = excluded.has_rollout_summary,
    source = 'stage1_outputs',
    codex_home = excluded.codex_home,
    synced_at = excluded.synced_at,
    last_sync_id = excluded.last_sync_id,
    missing_since = NULL
"""
_UPSERT_STAGE1 = (
    _STAGE1_INTO
    + "VALUES (?, ?, ?, ?, ?, ?, coalesce(?, 0), ?, ?, ?, 'stage1_outputs', ?, ?, ?, ?)"
    + _STAGE1_ON_CONFLICT
)

# From the memory folder: fills what stage1_outputs lacks; the times and flags of a row
# that stage1_outputs gave in this same sync are left alone.
_UPSERT_FOLDER = """
INSERT INTO memories (
    thread_id, source_updated_at, rollout_slug, rollout_summary_file, rollout_path, cwd,
    git_branch, has_raw_memory, has_rollout_summary, source, codex_home, first_synced_at,
    synced_at, last_sync_id)
VALUES (:thread_id, :updated_at, :rollout_slug, :rollout_summary_file, :rollout_path, :cwd,
        :git_branch, :has_raw_memory, :has_rollout_summary, :source, :home, :now, :now, :sync)
ON CONFLICT (thread_id) DO UPDATE SET
    rollout_summary_file = coalesce(excluded.rollout_summary_file, rollout_summary_file),
    rollout_path = coalesce(excluded.rollout_path, rollout_path),
    cwd = coalesce(excluded.cwd, cwd),
    git_branch = coalesce(excluded.git_branch, git_branch),
    rollout_slug = coalesce(rollout_slug, excluded.rollout_slug),
    source_updated_at = CASE
        WHEN last_sync_id IS NOT excluded.last_sync_id
            THEN coalesce(excluded.source_updated_at, source_updated_at)
        WHEN source = 'stage1_outputs' THEN source_updated_at
        ELSE coalesce(source_updated_at, excluded.source_updated_at) END,
    has_raw_memory = CASE
        WHEN last_sync_id IS NOT excluded.last_sync_id THEN excluded.has_raw_memory
        WHEN source = 'stage1_outputs' THEN has_raw_memory
        ELSE max(has_raw_memory, excluded.has_raw_memory) END,
    has_rollout_summary = CASE
        WHEN last_sync_id IS NOT excluded.last_sync_id THEN excluded.has_rollout_summary
        WHEN source = 'stage1_outputs' THEN has_rollout_summary
        ELSE max(has_rollout_summary, excluded.has_rollout_summary) END,
    source = CASE WHEN last_sync_id IS excluded.last_sync_id THEN source
        ELSE excluded.source END,
    codex_home = excluded.codex_home,
    synced_at = excluded.synced_at,
    last_sync_id = excluded.last_sync_id,
    missing_since = NULL
"""


def _batches(rows: Iterable, size: int) -> Iterator[list]:
    iterator = iter(rows)
    while batch := list(islice(iterator, size)):
        yield batch


def _normalised_stage1(rows: Iterable[tuple], invalid: list[int]) -> Iterator[tuple]:
    """Rows with their thread id as Codex counts it (lowercase hyphenated); others are skipped."""
    for row in rows:
        thread_id = row[0]
        normalized = normalize_thread_id(thread_id) if isinstance(thread_id, str) else None
        if normalized is None:
            invalid[0] += 1
            continue
        if normalized != thread_id:
            row = (normalized, *row[1:])
        yield row


@dataclass(frozen=True)
class SyncSources:
    """What a Codex home offers to sync; ``check_codex_home`` finds it without writing anything."""

    codex_home: str  # the real path
    state_db: str
    sqlite_home_from: str
    raw_memories: str
    rollout_summaries: str
    stage1_found: bool
    raw_found: bool
    summaries_found: bool

    @property
    def folder_found(self) -> bool:
        return self.raw_found or self.summaries_found


def check_codex_home(codex_home: str | os.PathLike | home.CodexLocations) -> SyncSources:
    """The sources of ``codex_home``, or a ``CodexHomeError`` when there is nothing to sync.

    Given a folder, Codex's table is looked for in it; given ``CodexLocations``, in
    its SQLite home. Called by ``memcite sync`` before it opens memcite's database,
    so that a wrong home creates nothing.
    """
    where = codex_home if isinstance(codex_home, home.CodexLocations) \
        else home.CodexLocations(os.path.realpath(os.fspath(codex_home)),
                                 os.path.realpath(os.fspath(codex_home)), "CODEX_HOME")
    real = where.codex_home
    if not os.path.isdir(real):
        raise home.CodexHomeError(f"{real}: no such folder",
                                  hint="pass the Codex home with --codex-home or CODEX_HOME")
    folder = home.memory_folder(real)
    state_db = where.state_db
    raw = os.path.join(folder, home.RAW_MEMORIES)
    summaries = os.path.join(folder, home.ROLLOUT_SUMMARIES)
    sources = SyncSources(real, state_db, where.sqlite_home_from, raw, summaries,
                          stage1_found=os.path.isfile(state_db),
                          raw_found=os.path.isfile(raw), summaries_found=os.path.isdir(summaries))
    if not sources.stage1_found and not sources.folder_found:
        raise home.CodexHomeError(
            f"{real}: no {home.STATE_DB} and no memory folder, nothing to sync "
            "(the inventory is left as it was)",
            hint="pass the Codex home (the folder holding memories_1.sqlite) with --codex-home",
        )
    return sources


def sync_codex_home(
    conn: sqlite3.Connection,
    codex_home: str | os.PathLike | home.CodexLocations,
    *,
    now: int | None = None,
    batch_rows: int = BATCH_ROWS,
    progress: Progress | None = None,
) -> SyncReport:
    """Fill the inventory from ``codex_home`` (read-only); see the module docstring."""
    sources = check_codex_home(codex_home)
    codex_home = storable(sources.codex_home)  # as stored: a non-UTF-8 byte as its escape
    db_path = sources.state_db
    stage1_found = sources.stage1_found
    now = int(time.time()) if now is None else now
    total = home.count_stage1_outputs(db_path, command="sync") if stage1_found else 0
    with transaction(conn):
        before = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        sync_id = conn.execute(
            "INSERT INTO syncs (codex_home, started_at) VALUES (?, ?)", (codex_home, now)
        ).lastrowid
        if total > before:  # a large first load: counted in one scan at the end, not per row
            counters.suspend_memory_totals(conn)
    params = {"home": codex_home, "now": now, "sync": sync_id}

    invalid = [0]
    stage1_rows = 0
    _restore_indexes(conn)  # an interrupted large first load may have left some out
    if stage1_found:
        copy = _Stage1Copy(conn, db_path, (codex_home, now, now, sync_id), batch_rows, progress,
                           total)
        if copy.attach():
            stage1_rows = copy.run(invalid, bulk=total > before)
        else:  # this connection cannot attach a read-only database: row by row
            rows = _normalised_stage1(home.iter_stage1_outputs(db_path, command="sync"), invalid)
            for batch in _batches(rows, batch_rows):
                with transaction(conn):
                    conn.executemany(
                        _UPSERT_STAGE1, [(*row, codex_home, now, now, sync_id) for row in batch]
                    )
                stage1_rows += len(batch)
                if progress:
                    progress("stage1_outputs", stage1_rows, total)

    folder_counts = {"raw_memories": 0, "rollout_summary": 0}
    passes: list[tuple[str, Iterable[home.FolderMemory]]] = []
    skipped: list[str] = []
    if sources.raw_found:
        passes.append(("raw_memories", home.iter_raw_memories(sources.raw_memories, skipped)))
    if sources.summaries_found:
        passes.append(("rollout_summary",
                       home.iter_rollout_summaries(sources.rollout_summaries, skipped)))
    for kind, found in passes:
        for batch in _batches(found, batch_rows):
            with transaction(conn):
                conn.executemany(_UPSERT_FOLDER, [_folder_params(item, params) for item in batch])
            folder_counts[kind] += len(batch)
            if progress:
                progress("memory folder", sum(folder_counts.values()), None)
    folder_threads = sum(folder_counts.values())

    with transaction(conn):
        after = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        marked = conn.execute(
            "UPDATE memories SET missing_since = ? WHERE codex_home = ? AND missing_since IS NULL"
            " AND (last_sync_id IS NULL OR last_sync_id != ?)",
            (now, codex_home, sync_id),
        ).rowcount
        if after > before:
            backfill_usage(conn)
        seen_gone = _close_forget_requests(conn, codex_home, now)
        counters.resume_memory_totals(conn)
        memories, cited_codex, codex_citations, cited_memcite = conn.execute(
            "SELECT count(*), coalesce(sum(codex_usage_count > 0), 0),"
            " coalesce(sum(codex_usage_count), 0), coalesce(sum(usage_count > 0), 0)"
            " FROM memories WHERE codex_home = ? AND missing_since IS NULL"
            " AND archived_at IS NULL", (codex_home,)).fetchone()
        inserted = after - before
        seen = conn.execute(  # every row this sync saw was given this home: the index serves
            "SELECT count(*) FROM memories WHERE codex_home = ? AND last_sync_id = ?",
            (codex_home, sync_id),
        ).fetchone()[0]
        conn.execute(
            "UPDATE syncs SET finished_at = ?, stage1_rows = ?, folder_threads = ?, inserted = ?,"
            " updated = ?, marked_missing = ? WHERE id = ?",
            (int(time.time()), stage1_rows, folder_threads, inserted, seen - inserted, marked,
             sync_id),
        )
    return SyncReport(
        codex_home=codex_home,
        sync_id=sync_id,
        stage1_rows=stage1_rows,
        folder_threads=folder_threads,
        inserted=inserted,
        updated=seen - inserted,
        marked_missing=marked,
        invalid_ids=invalid[0],
        stage1_found=stage1_found,
        folder_found=sources.folder_found,
        raw_sections=folder_counts["raw_memories"],
        summary_headers=folder_counts["rollout_summary"],
        skipped=tuple(skipped),
        state_db=db_path,
        sqlite_home_from=sources.sqlite_home_from,
        forget_requests_seen_gone=seen_gone,
        counts={"memories": memories, "cited_codex": cited_codex,
                "codex_citations": codex_citations, "cited_memcite": cited_memcite},
    )


def _close_forget_requests(conn: sqlite3.Connection, codex_home: str, now: int) -> int:
    """Mark the requests to forget whose memory this sync no longer found anywhere in Codex
    (neither its table nor its memory folder): Codex has forgotten it."""
    return conn.execute(
        "UPDATE forget_requests SET state = 'forgotten', seen_gone_at = ?"
        " WHERE state = 'done' AND codex_home = ? AND thread_id IN"
        " (SELECT thread_id FROM memories WHERE codex_home = ? AND missing_since IS NOT NULL)",
        (now, codex_home, codex_home)).rowcount


# --------------------------------------------------------------------------- stage1 in SQL

# A thread id already in the form Codex counts (lowercase hyphenated UUID), as a GLOB.
_COUNTED_FORM = "-".join("[0-9a-f]" * width for width in (8, 4, 4, 4, 12))
_IS_COUNTED = f"(typeof(thread_id) = 'text' AND thread_id GLOB '{_COUNTED_FORM}')"
# SQLite's trim() with the ASCII part of Rust's White_Space ("non-blank" as Codex means it).
_BLANK = "char(9, 10, 11, 12, 13, 32)"

# The columns _UPSERT_STAGE1 sets, from a row of _UPSERT_STAGE1's VALUES; a row none of
# whose values would change is left as it is (its synced_at and last_sync_id are moved by
# _TOUCH_SEEN, which writes one index rather than every one).
_CHANGED = """
    source_updated_at IS NOT excluded.source_updated_at
    OR generated_at IS NOT excluded.generated_at
    OR (excluded.rollout_slug IS NOT NULL AND rollout_slug IS NOT excluded.rollout_slug)
    OR codex_usage_count IS NOT excluded.codex_usage_count
    OR codex_last_usage IS NOT excluded.codex_last_usage
    OR selected_for_phase2 IS NOT excluded.selected_for_phase2
    OR selected_for_phase2_source_updated_at
        IS NOT excluded.selected_for_phase2_source_updated_at
    OR has_raw_memory IS NOT excluded.has_raw_memory
    OR has_rollout_summary IS NOT excluded.has_rollout_summary
    OR source IS NOT 'stage1_outputs'
    OR codex_home IS NOT excluded.codex_home
    OR missing_since IS NOT NULL
"""
_RANGE = "thread_id > :low AND thread_id <= :high"
# The next range: its last thread id, and how many rows it holds.
_UPPER_BOUND = ("SELECT max(thread_id), count(*) FROM (SELECT thread_id FROM codex.stage1_outputs"
                " WHERE thread_id > ? ORDER BY thread_id LIMIT ?)")
# Rows no range reaches (NULL, numbers, the empty string): never a thread id.
_OUT_OF_RANGES = ("SELECT count(*) FROM codex.stage1_outputs"
                  " WHERE thread_id IS NULL OR thread_id <= ''")
# The rows of a range copied in SQL that no change rewrote.
_TOUCH_SEEN = (
    "UPDATE memories SET synced_at = :now, last_sync_id = :sync"
    " WHERE thread_id IN (SELECT thread_id FROM codex.stage1_outputs"
    f" WHERE {_RANGE} AND {_IS_COUNTED}) AND last_sync_id IS NOT :sync"
)


_SCHEMA_INDEXES: list[tuple[str, str]] | None = None


def _memories_indexes() -> list[tuple[str, str]]:
    """(name, CREATE INDEX) of the secondary indexes the migrations give ``memories``."""
    global _SCHEMA_INDEXES
    if _SCHEMA_INDEXES is None:
        fresh = sqlite3.connect(":memory:", isolation_level=None)
        try:
            migrate(fresh)
            _SCHEMA_INDEXES = fresh.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index'"
                " AND tbl_name = 'memories' AND sql IS NOT NULL ORDER BY name").fetchall()
        finally:
            fresh.close()
    return _SCHEMA_INDEXES


def _present_indexes(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute(
        "SELECT name FROM main.sqlite_master WHERE type = 'index' AND tbl_name = 'memories'")}


def _drop_indexes(conn: sqlite3.Connection) -> None:
    """Drop the secondary indexes of ``memories`` before a large load (one transaction)."""
    with transaction(conn):
        present = _present_indexes(conn)
        for name, _ in _memories_indexes():
            if name in present:
                conn.execute(f"DROP INDEX main.{name}")


def _restore_indexes(conn: sqlite3.Connection) -> None:
    """Build each secondary index of ``memories`` that is missing, one transaction each."""
    for name, sql in _memories_indexes():
        if name not in _present_indexes(conn):
            with transaction(conn):
                conn.execute(sql.replace("CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1))


def _fetch_leniently(conn: sqlite3.Connection, sql: str, params) -> list[tuple]:
    """The rows of ``sql``, a text that is not UTF-8 read with U+FFFD (Codex's text is
    untrusted too)."""
    saved = conn.text_factory
    conn.text_factory = lambda data: data.decode("utf-8", "replace")
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.text_factory = saved


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


class _Stage1Copy:
    """The ``stage1_outputs`` pass in SQL, batch by batch over ranges of thread ids."""

    def __init__(self, conn: sqlite3.Connection, path: str, sync_values: tuple, batch_rows: int,
                 progress: Progress | None, total: int) -> None:
        self.conn, self.path, self.batch_rows = conn, path, batch_rows
        # (codex_home, now, now, sync_id): the last values of a row of _UPSERT_STAGE1
        self.home, self.now, _, self.sync_id = self.sync_values = sync_values
        self.progress, self.total = progress, total
        self.stamp: tuple[int, int, int] | None = None

    def attach(self) -> bool:
        """Attach Codex's database read-only (``immutable`` as ``codex_home`` reads it);
        False when this connection does not take URI file names (or SQLite is older than
        3.35, which ``INSERT ... RETURNING`` needs)."""
        if sqlite3.sqlite_version_info < (3, 35, 0):
            return False
        with open(self.path, "rb") as handle:
            header = handle.read(100)
        immutable = len(header) > 19 and header[18] == 2 \
            and not os.path.exists(self.path + "-wal")
        self.stamp = _stamp(self.path) if immutable else None
        quoted = self.path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
        uri = f"file:{quoted}?mode=ro" + ("&immutable=1" if immutable else "")
        try:
            self.conn.execute("ATTACH DATABASE ? AS codex", (uri,))
        except sqlite3.OperationalError:
            return False  # the URI was taken as a plain (missing) file name: nothing created
        except UnicodeEncodeError:
            return False  # a path that is not UTF-8: SQLite cannot be given its name
        return True

    def run(self, invalid: list[int], *, bulk: bool) -> int:
        """Copy every row; return how many were synced. ``bulk``: build the indexes after."""
        conn = self.conn
        dropped = False
        try:
            if bulk:
                _drop_indexes(conn)
                dropped = True
            return self._copy(invalid)
        except sqlite3.Error as exc:
            self._check_unchanged()
            if getattr(exc, "sqlite_errorname", "") not in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
                raise  # memcite's database (locked, full, read-only): reported as such
            raise home.CodexHomeError(
                f"{self.path}: cannot copy stage1_outputs ({exc})",
                hint="check the file with `sqlite3 FILE 'PRAGMA integrity_check'`") from None
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.execute("DETACH DATABASE codex")
            if dropped:
                _restore_indexes(conn)

    def _copy(self, invalid: list[int]) -> int:
        conn = self.conn
        columns = {row[1] for row in conn.execute("PRAGMA codex.table_info(stage1_outputs)")}
        picked = [name if name in columns else "NULL" for name in home.STAGE1_COLUMNS]
        for text_column in ("raw_memory", "rollout_summary"):
            picked.append(f"length(trim(coalesce({text_column}, ''), {_BLANK})) > 0"
                          if text_column in columns else "0")
        odd_rows = f"SELECT {', '.join(picked)} FROM codex.stage1_outputs WHERE {_RANGE}" \
                   f" AND NOT {_IS_COUNTED}"
        # Codex's text is untrusted: a row whose slug is not plain ASCII (perhaps not even
        # UTF-8) is read again into Python, its text decoded leniently.
        by_id = f"SELECT {', '.join(picked)} FROM codex.stage1_outputs WHERE thread_id = ?"
        picked[home.STAGE1_COLUMNS.index("selected_for_phase2")] = \
            f"coalesce({picked[home.STAGE1_COLUMNS.index('selected_for_phase2')]}, 0)"
        copy_range = (
            _STAGE1_INTO + f"SELECT {', '.join(picked)}, 'stage1_outputs', :home, :now, :now,"
            f" :sync FROM codex.stage1_outputs WHERE {_RANGE} AND {_IS_COUNTED}"
            " ORDER BY thread_id" + _STAGE1_ON_CONFLICT + f" WHERE {_CHANGED}"
            " RETURNING CASE WHEN rollout_slug GLOB '*[^ -~]*' THEN thread_id END"
        )
        invalid[0] += conn.execute(_OUT_OF_RANGES).fetchone()[0]
        params = {"home": self.home, "now": self.now, "sync": self.sync_id, "low": ""}
        synced = 0
        while True:
            high, in_range = conn.execute(_UPPER_BOUND, (params["low"], self.batch_rows)
                                          ).fetchone()
            if high is None:
                break
            params["high"] = high
            with transaction(conn):
                texts = [row[0] for row in _fetch_leniently(conn, copy_range, params) if row[0]]
                conn.execute(_TOUCH_SEEN, params)
                odd = _fetch_leniently(conn, odd_rows, params)
                normalised = list(_normalised_stage1(odd, invalid))
                rows = normalised + [_fetch_leniently(conn, by_id, (thread_id,))[0]
                                     for thread_id in texts]
                if rows:
                    conn.executemany(_UPSERT_STAGE1, [(*row, *self.sync_values) for row in rows])
            synced += in_range - len(odd) + len(normalised)
            params["low"] = high
            if self.progress:
                self.progress("stage1_outputs", synced, self.total)
        self._check_unchanged()
        return synced

    def _check_unchanged(self) -> None:
        if self.stamp is not None and _stamp(self.path) != self.stamp:
            raise home.CodexHomeError(
                f"{self.path}: Codex wrote to its database during the sync; "
                "run memcite sync again",
                hint="what was read may be inconsistent; re-running is cheap (rows are updated "
                     "in place)",
            )


def _folder_params(item: home.FolderMemory, params: dict) -> dict:
    return {
        "thread_id": item.thread_id,
        "updated_at": item.updated_at,
        "rollout_slug": item.rollout_slug,
        "rollout_summary_file": item.rollout_summary_file,
        "rollout_path": item.rollout_path,
        "cwd": item.cwd,
        "git_branch": item.git_branch,
        "has_raw_memory": int(item.source == "raw_memories" and item.has_text),
        "has_rollout_summary": int(item.source == "rollout_summary" and item.has_text),
        "source": item.source,
        **params,
    }
