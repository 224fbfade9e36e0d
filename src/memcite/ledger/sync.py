"""Filling memcite's inventory from a Codex home (``memcite sync``).

Three streaming passes, each committed in batches so that recorders are never
kept waiting long: ``stage1_outputs`` (authoritative for times and Codex's
counts), then ``raw_memories.md`` sections and ``rollout_summaries/*.md``
headers (they add cwd, paths and branch, and bring in threads the database
lacks). Rows are updated in place, only those that change (the folder's sections and
headers are merged per thread in a temporary table first); memcite's own counts are never touched,
except that a memory cited before it was first synced gets its logged counts.
Rows of this home that no pass saw are marked ``missing_since``, never deleted.

``stage1_outputs`` is copied in SQL, over ranges of thread ids in key order, with
Codex's database attached read-only. Each range is read and compared with the
inventory first, holding no lock on memcite's database: the rows that are new or
changed go to a temporary table, and the rows of this home that Codex no longer
holds are noted. Only then is a write transaction taken, to copy the staged rows
with one ``INSERT ... SELECT``; a range with nothing new takes none, so a re-sync
with nothing changed writes nothing (``synced_at`` and ``last_sync_id`` name the
last sync that wrote a row). A large first load (more rows than the inventory
holds) drops the secondary indexes a load in key order would write all over
(those keyed by times and counts) and builds them after, each in its own
transaction; any sync puts back an index an interrupted load left missing. After
each write transaction the lock is left free for as long as it was held (at most
0.11 s), so that a recorder sleeping in SQLite's busy handler gets its turn. The
rare thread id not already in its counted form (uppercase, braced, ...) is
normalised in Python.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice

from memcite.citations.thread_ids import normalize_thread_id
from memcite.display import count
from memcite.ledger import codex_home as home
from memcite.ledger import counters
from memcite.ledger.recording import backfill_usage
from memcite.ledger.store import migrate, transaction
from memcite.untrusted import NotRegularFile, check_regular, open_regular, storable

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
    updated: int  # rows this sync changed (not counting new ones)
    marked_missing: int
    invalid_ids: int  # rows or sections whose thread id is not a UUID (skipped)
    stage1_found: bool
    folder_found: bool
    raw_sections: int = 0  # of folder_threads: raw_memories.md sections
    summary_headers: int = 0  # of folder_threads: rollout_summaries/*.md headers
    skipped: tuple[str, ...] = ()  # memory files not read (a symlink leading out, ...), and why
    state_db: str = ""  # where Codex's table was looked for
    sqlite_home_from: str = "CODEX_HOME"  # why there (see codex_home.locate_codex_home)
    sqlite_home_said: str = ""  # that, in words that name the home's true origin
    forget_requests_seen_gone: int = 0  # requests to forget whose memory Codex no longer has
    counts: dict | None = None  # this home's memories, cited by Codex's counters and memcite's log
    unchanged: int = 0  # rows seen again as they were: not written
    gone_asked: int = 0  # of marked_missing: memories memcite had asked Codex to forget
    store: str = home.DEFAULT_STORE  # the memory store read: the one Codex reads (v1 | v2)
    store_from: str = home.STORE_FROM_DEFAULT  # why that one
    memory_folder: str = ""
    dual_write: bool = False  # Codex also consolidates the other store (never reads it)

    @property
    def usage_data(self) -> bool:
        """False: Codex's table was not found, so no memory's usage is known."""
        return self.stage1_found

    def warnings(self) -> list[str]:
        """What a user must be told loudly about this sync."""
        if self.stage1_found:
            return []
        return [f"no usage data: {self.state_db} not found (Codex's SQLite home: "
                f"{self.sqlite_home_said or 'from ' + self.sqlite_home_from}); memories were "
                "read from the memory folder only, "
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
            "unchanged": self.unchanged,
            "gone_asked": self.gone_asked,
            "gone_by_codex": self.marked_missing - self.gone_asked,
            "store": self.store,
            "store_from": self.store_from,
            "memory_folder": self.memory_folder,
            "dual_write": self.dual_write,
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

# From the memory folder: each thread's sections and summaries are first merged into
# temp.folder_rows (holding no lock on memcite's database), then written with one upsert
# per thread that fills what stage1_outputs lacks; the times and flags of a row that
# stage1_outputs gave are left alone. Merged: the first time and slug found, the last
# file, path, cwd and branch, and whether any section or summary had a body.
_FOLDER_COLUMNS = ("thread_id", "updated_at", "rollout_slug", "rollout_summary_file",
                   "rollout_path", "cwd", "git_branch", "has_raw_memory",
                   "has_rollout_summary", "source")
_FOLDER_TABLE = ("CREATE TEMP TABLE folder_rows (thread_id TEXT PRIMARY KEY, updated_at,"
                 " rollout_slug, rollout_summary_file, rollout_path, cwd, git_branch,"
                 " has_raw_memory, has_rollout_summary, source) WITHOUT ROWID")
_MERGE_FOLDER = (
    f"INSERT INTO temp.folder_rows ({', '.join(_FOLDER_COLUMNS)})"
    f" VALUES ({', '.join(':' + column for column in _FOLDER_COLUMNS)})"
    " ON CONFLICT (thread_id) DO UPDATE SET"
    " updated_at = coalesce(updated_at, excluded.updated_at),"
    " rollout_slug = coalesce(rollout_slug, excluded.rollout_slug),"
    " rollout_summary_file = coalesce(excluded.rollout_summary_file, rollout_summary_file),"
    " rollout_path = coalesce(excluded.rollout_path, rollout_path),"
    " cwd = coalesce(excluded.cwd, cwd),"
    " git_branch = coalesce(excluded.git_branch, git_branch),"
    " has_raw_memory = max(has_raw_memory, excluded.has_raw_memory),"
    " has_rollout_summary = max(has_rollout_summary, excluded.has_rollout_summary)"
)
# What a merged row makes of a memory ({fresh}: the stage1_outputs pass did not give it; see
# _not_seen_yet). A memory whose values would not change is not written at all, so that a
# re-sync with nothing changed writes nothing.
_FOLDER_VALUES = {
    "rollout_summary_file": "coalesce(excluded.rollout_summary_file, rollout_summary_file)",
    "rollout_path": "coalesce(excluded.rollout_path, rollout_path)",
    "cwd": "coalesce(excluded.cwd, cwd)",
    "git_branch": "coalesce(excluded.git_branch, git_branch)",
    "rollout_slug": "coalesce(rollout_slug, excluded.rollout_slug)",
    "source_updated_at": "CASE WHEN {fresh} THEN coalesce(excluded.source_updated_at,"
                         " source_updated_at) ELSE source_updated_at END",
    "has_raw_memory": "CASE WHEN {fresh} THEN excluded.has_raw_memory ELSE has_raw_memory END",
    "has_rollout_summary": "CASE WHEN {fresh} THEN excluded.has_rollout_summary"
                           " ELSE has_rollout_summary END",
    "source": "CASE WHEN {fresh} THEN excluded.source ELSE source END",
    "codex_home": "excluded.codex_home",
    "missing_since": "NULL",
}
_WRITE_FOLDER = (
    "INSERT INTO memories (thread_id, source_updated_at, rollout_slug, rollout_summary_file,"
    " rollout_path, cwd, git_branch, has_raw_memory, has_rollout_summary, source, codex_home,"
    " first_synced_at, synced_at, last_sync_id)"
    " SELECT thread_id, updated_at, rollout_slug, rollout_summary_file, rollout_path, cwd,"
    " git_branch, has_raw_memory, has_rollout_summary, source, :home, :now, :now, :sync"
    " FROM temp.folder_rows WHERE thread_id > :low AND thread_id <= :high ORDER BY thread_id"
    " ON CONFLICT (thread_id) DO UPDATE SET "
    + ", ".join(f"{column} = {value}" for column, value in _FOLDER_VALUES.items())
    + ", synced_at = excluded.synced_at, last_sync_id = excluded.last_sync_id WHERE "
    + " OR ".join(f"({value}) IS NOT {column}" for column, value in _FOLDER_VALUES.items())
)


def _not_seen_yet(in_sql: bool) -> str:
    """SQL true for a row (in an upsert's DO UPDATE) that this sync has not seen yet: not
    written by it, and (stage1_outputs copied in SQL, an unchanged row not rewritten) not a
    row of Codex's table left as it was."""
    written = "last_sync_id IS NOT excluded.last_sync_id"
    if not in_sql:
        return written
    return (f"({written} AND NOT (source = 'stage1_outputs'"
            " AND codex_home IS excluded.codex_home AND missing_since IS NULL"
            " AND thread_id NOT IN (SELECT thread_id FROM temp.stage1_unseen)))")


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
    store: str = home.DEFAULT_STORE  # the memory store read: the one Codex reads (v1 | v2)
    store_from: str = home.STORE_FROM_DEFAULT
    memory_folder: str = ""
    dual_write: bool = False
    sqlite_home_said: str = ""  # where the SQLite home came from, truthfully, in words

    @property
    def folder_found(self) -> bool:
        return self.raw_found or self.summaries_found


def check_codex_home(codex_home: str | os.PathLike | home.CodexLocations) -> SyncSources:
    """The sources of ``codex_home``, or a ``CodexHomeError`` when there is nothing to sync.

    Given a folder, Codex's table is looked for in it; given ``CodexLocations``, in
    its SQLite home. Called by ``memcite sync`` before it opens memcite's database,
    so that a wrong home creates nothing.
    """
    if isinstance(codex_home, home.CodexLocations):
        where = codex_home
    else:
        real = os.path.realpath(os.fspath(codex_home))
        store, why = home.memory_store(home.read_codex_config(real)) if os.path.isdir(real) \
            else (home.DEFAULT_STORE, home.STORE_FROM_DEFAULT)
        where = home.CodexLocations(real, real, "CODEX_HOME", store, why)
    real = where.codex_home
    if not os.path.isdir(real):
        raise home.CodexHomeError(f"{real}: no such folder",
                                  hint="pass the Codex home with --codex-home or CODEX_HOME")
    folder = where.memory_folder
    state_db = where.state_db
    try:  # SQLite opens it itself, blocking: a FIFO or a device there is refused first
        check_regular(state_db)
    except NotRegularFile as exc:
        raise home.CodexHomeError(
            f"{state_db}: {exc.strerror}; not read, nothing synced (the inventory is left as "
            "it was)", hint=f"remove {state_db}; Codex writes its database there") from None
    except OSError:
        pass  # missing or unreadable: not found, as below
    raw = os.path.join(folder, home.RAW_MEMORIES)
    summaries = os.path.join(folder, home.ROLLOUT_SUMMARIES)
    sources = SyncSources(real, state_db, where.sqlite_home_from, raw, summaries,
                          stage1_found=os.path.isfile(state_db),
                          raw_found=os.path.isfile(raw), summaries_found=os.path.isdir(summaries),
                          store=where.store, store_from=where.store_from, memory_folder=folder,
                          dual_write=where.dual_write,
                          sqlite_home_said=where.describe_sqlite_home())
    if not sources.stage1_found and not sources.folder_found:
        raise home.CodexHomeError(
            f"{real}: no {os.path.basename(state_db)} and no memory folder "
            f"({os.path.basename(folder)}/) of memory store {where.store} ({where.store_from}),"
            " nothing to sync (the inventory is left as it was)",
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
            "INSERT INTO syncs (codex_home, started_at, store) VALUES (?, ?, ?)",
            (codex_home, now, sources.store)).lastrowid
        if total > before:  # a large first load: counted in one scan at the end, not per row
            counters.suspend_memory_totals(conn)
    params = {"home": codex_home, "now": now, "sync": sync_id}

    turns = _Turns(conn)
    invalid = [0]
    stage1_rows = 0
    in_sql = False  # whether stage1_outputs was copied in SQL (its unseen rows noted)
    _restore_indexes(turns)  # an interrupted large first load may have left some out
    try:
        if stage1_found:
            copy = _Stage1Copy(turns, db_path, (codex_home, now, now, sync_id), batch_rows,
                               progress, total)
            in_sql = copy.attach()
            if in_sql:
                stage1_rows = copy.run(invalid, bulk=total > before)
            else:  # this connection cannot attach a read-only database: row by row
                rows = _normalised_stage1(home.iter_stage1_outputs(db_path, command="sync"),
                                          invalid)
                for batch in _batches(rows, batch_rows):
                    with turns.transaction():
                        conn.executemany(
                            _UPSERT_STAGE1,
                            [(*row, codex_home, now, now, sync_id) for row in batch])
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
        conn.execute("DROP TABLE IF EXISTS temp.folder_rows")
        conn.execute(_FOLDER_TABLE)
        for kind, found in passes:
            for batch in _batches(found, batch_rows):
                conn.execute("BEGIN")  # the temporary table only: no lock on the ledger
                try:
                    conn.executemany(_MERGE_FOLDER, [_folder_params(item) for item in batch])
                finally:
                    conn.execute("COMMIT")
                folder_counts[kind] += len(batch)
                if progress:
                    progress("memory folder", sum(folder_counts.values()), None)
        _write_folder_rows(turns, params, _not_seen_yet(in_sql), batch_rows)
        folder_threads = sum(folder_counts.values())

        after = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        # Not seen: a row of this home no pass wrote, and (copied in SQL, where an unchanged
        # row is not written) that Codex's table does not hold: marked batch by batch.
        marked = _mark_unseen(turns, (now, codex_home, sync_id), batch_rows) if in_sql else 0
        with turns.transaction():
            if not in_sql:
                marked = conn.execute(
                    "UPDATE memories SET missing_since = ? WHERE codex_home = ?"
                    " AND missing_since IS NULL AND last_sync_id IS NOT ?"
                    " AND thread_id NOT IN (SELECT thread_id FROM temp.folder_rows)",
                    (now, codex_home, sync_id)).rowcount
            if after > before:
                backfill_usage(conn)
            seen_gone = _close_forget_requests(conn, codex_home, now)
            # Of the rows gone from Codex in this sync, those memcite had asked Codex to forget
            # (the rest Codex removed by itself: its start-up pruning, or consolidation).
            gone_asked = conn.execute(
                "SELECT count(*) FROM memories AS m WHERE +m.codex_home = ?"
                " AND m.missing_since = ? AND EXISTS (SELECT 1 FROM forget_requests AS f"
                " WHERE f.thread_id = m.thread_id AND f.state IN ('done', 'forgotten'))",
                (codex_home, now)).fetchone()[0] if marked else 0
            # A large first load was counted in one scan here, not row by row.
            counters.resume_memory_totals(conn)
    finally:
        if in_sql:
            _drop_staging_tables(conn)
        conn.execute("DROP TABLE IF EXISTS temp.folder_rows")
    # Read holding no lock: every row of this home not missing was seen by this sync.
    seen, memories, cited_codex, codex_citations, cited_memcite = conn.execute(
        "SELECT count(*), coalesce(sum(archived_at IS NULL), 0),"
        " coalesce(sum(archived_at IS NULL AND codex_usage_count > 0), 0),"
        " coalesce(sum(CASE WHEN archived_at IS NULL THEN codex_usage_count END), 0),"
        " coalesce(sum(archived_at IS NULL AND usage_count > 0), 0)"
        " FROM memories WHERE codex_home = ? AND missing_since IS NULL", (codex_home,)).fetchone()
    inserted = after - before
    # Written by this sync (new or changed): a row it left as it was keeps an older sync id.
    written = conn.execute("SELECT count(*) FROM memories WHERE codex_home = ?"
                           " AND last_sync_id = ?", (codex_home, sync_id)).fetchone()[0]
    updated = max(written - inserted, 0)
    with turns.transaction():
        conn.execute(
            "UPDATE syncs SET finished_at = ?, stage1_rows = ?, folder_threads = ?, inserted = ?,"
            " updated = ?, marked_missing = ? WHERE id = ?",
            (int(time.time()), stage1_rows, folder_threads, inserted, updated, marked,
             sync_id),
        )
    return SyncReport(
        codex_home=codex_home,
        sync_id=sync_id,
        stage1_rows=stage1_rows,
        folder_threads=folder_threads,
        inserted=inserted,
        updated=updated,
        unchanged=max(seen - inserted - updated, 0),
        marked_missing=marked,
        invalid_ids=invalid[0],
        stage1_found=stage1_found,
        folder_found=sources.folder_found,
        raw_sections=folder_counts["raw_memories"],
        summary_headers=folder_counts["rollout_summary"],
        skipped=tuple(skipped),
        state_db=db_path,
        sqlite_home_from=sources.sqlite_home_from,
        sqlite_home_said=sources.sqlite_home_said,
        forget_requests_seen_gone=seen_gone,
        gone_asked=min(gone_asked, marked),
        store=sources.store,
        store_from=sources.store_from,
        memory_folder=storable(sources.memory_folder),
        dual_write=sources.dual_write,
        counts={"memories": memories, "cited_codex": cited_codex,
                "codex_citations": codex_citations, "cited_memcite": cited_memcite},
    )


def _mark_unseen(turns: _Turns, values: tuple[int, str, int], batch_rows: int) -> int:
    """Mark missing the rows the copy in SQL noted unseen that no later pass wrote, a range
    of thread ids per transaction; return how many."""
    conn, marked, low = turns.conn, 0, ""
    while True:
        high = conn.execute(
            "SELECT max(thread_id) FROM (SELECT thread_id FROM temp.stage1_unseen"
            " WHERE thread_id > ? ORDER BY thread_id LIMIT ?)", (low, batch_rows)).fetchone()[0]
        if high is None:
            return marked
        with turns.transaction():
            marked += conn.execute(
                "UPDATE memories SET missing_since = ? WHERE +codex_home = ?"
                " AND missing_since IS NULL AND last_sync_id IS NOT ? AND thread_id IN"
                " (SELECT thread_id FROM temp.stage1_unseen WHERE thread_id > ? AND thread_id <= ?"
                " AND thread_id NOT IN (SELECT thread_id FROM temp.folder_rows))",
                (*values, low, high)).rowcount
        low = high


def _close_forget_requests(conn: sqlite3.Connection, codex_home: str, now: int) -> int:
    """Mark the requests to forget whose memory this sync no longer found anywhere in Codex
    (neither its table nor its memory folder): Codex has forgotten it."""
    return conn.execute(  # from the few requests, not the many memories of the home
        "UPDATE forget_requests SET state = 'forgotten', seen_gone_at = ?"
        " WHERE state = 'done' AND codex_home = ? AND EXISTS (SELECT 1 FROM memories AS m"
        " WHERE m.thread_id = forget_requests.thread_id AND +m.codex_home = ?"
        " AND m.missing_since IS NOT NULL)",
        (now, codex_home, codex_home)).rowcount


# --------------------------------------------------------------------------- stage1 in SQL

# A thread id already in the form Codex counts (lowercase hyphenated UUID), as a GLOB.
_COUNTED_FORM = "-".join("[0-9a-f]" * width for width in (8, 4, 4, 4, 12))
_IS_COUNTED = f"(typeof(thread_id) = 'text' AND thread_id GLOB '{_COUNTED_FORM}')"
# A text holding a character other than a space ("non-blank" as Codex's phase-2 selection
# means it, SQLite's trim()): what codex_home's length(trim(text, ' ')) > 0 says (up to a
# NUL character, as SQLite reads text), without copying the text.
_NON_BLANK = "coalesce({column}, '') GLOB '*[^ ]*'"
# A slug that is not plain ASCII (perhaps not even UTF-8): read again in Python.
_NOT_ASCII = "rollout_slug GLOB '*[^ -~]*'"

# The columns of memories a stage1_outputs row gives (in _STAGE1_INTO's order), and those
# of them compared to tell a changed row.
_STAGE1_TARGETS = (
    "thread_id", "source_updated_at", "generated_at", "rollout_slug", "codex_usage_count",
    "codex_last_usage", "selected_for_phase2", "selected_for_phase2_source_updated_at",
    "has_raw_memory", "has_rollout_summary",
)


def _changed(old: str, new: str, new_home: str) -> str:
    """SQL true when writing the row ``new`` (a prefix: ``excluded.``, ``c.``) over ``old``
    would change it (``_UPSERT_STAGE1``'s values; a NULL slug keeps the old one)."""
    terms = [f"{old}{column} IS NOT {new}{column}" for column in _STAGE1_TARGETS[1:]
             if column != "rollout_slug"]
    terms.append(f"({new}rollout_slug IS NOT NULL AND {old}rollout_slug IS NOT {new}rollout_slug)")
    terms += [f"{old}source IS NOT 'stage1_outputs'", f"{old}codex_home IS NOT {new_home}",
              f"{old}missing_since IS NOT NULL"]
    return "\n    OR ".join(terms)


_CHANGED = _changed("", "excluded.", "excluded.codex_home")
_RANGE = "thread_id > :low AND thread_id <= :high"
# The next range: its last thread id, and how many rows it holds.
_UPPER_BOUND = ("SELECT max(thread_id), count(*) FROM (SELECT thread_id FROM codex.stage1_outputs"
                " WHERE thread_id > ? ORDER BY thread_id LIMIT ?)")
# Rows no range reaches (NULL, numbers, the empty string): never a thread id.
_OUT_OF_RANGES = ("SELECT count(*) FROM codex.stage1_outputs"
                  " WHERE thread_id IS NULL OR thread_id <= ''")
# The rows of this home in a range (or after the last one) that Codex's table does not hold
# in the counted form: marked missing at the end unless another pass saw them. (The unary +
# keeps SQLite from walking the whole home by its index rather than the range by the key.)
_NOTE_UNSEEN = (
    "INSERT OR IGNORE INTO temp.stage1_unseen SELECT m.thread_id FROM main.memories AS m"
    " WHERE m.thread_id > :low {upper} AND +m.codex_home = :home AND m.missing_since IS NULL"
    " AND NOT EXISTS (SELECT 1 FROM codex.stage1_outputs AS c WHERE c.thread_id = m.thread_id)"
)
_STAGING_TABLES = (
    "CREATE TEMP TABLE stage1_changed ("
    + ", ".join(f"{column}{' TEXT PRIMARY KEY' if column == 'thread_id' else ''}"
                for column in _STAGE1_TARGETS) + ") WITHOUT ROWID",
    "CREATE TEMP TABLE stage1_unseen (thread_id TEXT PRIMARY KEY) WITHOUT ROWID",
)
# A writer waiting in SQLite's busy handler sleeps at most as long as it has waited and never
# more than 100 ms between tries: after each write transaction the lock is left free that long.
_LONGEST_TURN = 0.11


class _Turns:
    """Write transactions that leave a recorder waiting for the lock its turn."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.free_until = 0.0  # time.monotonic() before which this sync takes no write lock

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        pause = self.free_until - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        started = time.monotonic()
        with transaction(self.conn):
            yield self.conn
        ended = time.monotonic()
        self.free_until = ended + min(ended - started, _LONGEST_TURN)


_SCHEMA_INDEXES: list[tuple[str, str]] | None = None
# The secondary indexes a load in thread-id order only appends to (keyed by the home and the
# sync, by the row, or holding no new row): kept during a large load. The others (keyed by
# times and counts) would be written all over by every range: dropped and built after.
_KEPT_DURING_LOAD = frozenset({
    "memories_archived_at", "memories_usage_count", "memories_codex_home_sync",
    "memories_outside_codex", "memories_codex_cited",
})


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


def _drop_indexes(turns: _Turns) -> None:
    """Drop the secondary indexes of ``memories`` a large load would write all over (one
    transaction)."""
    with turns.transaction() as conn:
        present = _present_indexes(conn)
        for name, _ in _memories_indexes():
            if name in present and name not in _KEPT_DURING_LOAD:
                conn.execute(f"DROP INDEX main.{name}")


def _restore_indexes(turns: _Turns) -> None:
    """Build each secondary index of ``memories`` that is missing, one transaction each."""
    for name, sql in _memories_indexes():
        if name not in _present_indexes(turns.conn):
            with turns.transaction() as conn:
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
    """The ``stage1_outputs`` pass in SQL, range by range of thread ids."""

    def __init__(self, turns: _Turns, path: str, sync_values: tuple, batch_rows: int,
                 progress: Progress | None, total: int) -> None:
        self.turns, self.conn, self.path, self.batch_rows = turns, turns.conn, path, batch_rows
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
        try:  # checked again just before ATTACH opens it (never a FIFO, never a hang)
            fd = open_regular(self.path)
            try:
                header = os.read(fd, 100)
            finally:
                os.close(fd)
        except OSError as exc:
            raise home.CodexHomeError(f"{self.path}: cannot read: {exc.strerror or exc}; "
                                      "stage1_outputs not copied") from None
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
        _drop_staging_tables(self.conn)
        for sql in _STAGING_TABLES:
            self.conn.execute(sql)
        return True

    def run(self, invalid: list[int], *, bulk: bool) -> int:
        """Copy every row; return how many were synced. ``bulk``: build the indexes after."""
        conn = self.conn
        dropped = False
        try:
            if bulk:
                _drop_indexes(self.turns)
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
            conn.execute("DROP TABLE IF EXISTS temp.stage1_changed")
            if dropped:
                _restore_indexes(self.turns)

    def _copy(self, invalid: list[int]) -> int:
        conn = self.conn
        columns = {row[1] for row in conn.execute("PRAGMA codex.table_info(stage1_outputs)")}
        picked = [name if name in columns else "NULL" for name in home.STAGE1_COLUMNS]
        for text_column in ("raw_memory", "rollout_summary"):
            picked.append(_NON_BLANK.format(column=text_column)
                          if text_column in columns else "0")
        odd_rows = f"SELECT {', '.join(picked)} FROM codex.stage1_outputs WHERE {_RANGE}" \
                   f" AND NOT {_IS_COUNTED}"
        # Codex's text is untrusted: a row whose slug is not plain ASCII (perhaps not even
        # UTF-8) is read again into Python, its text decoded leniently.
        by_id = f"SELECT {', '.join(picked)} FROM codex.stage1_outputs WHERE thread_id = ?"
        picked[home.STAGE1_COLUMNS.index("selected_for_phase2")] = \
            f"coalesce({picked[home.STAGE1_COLUMNS.index('selected_for_phase2')]}, 0)"
        stage_range = (
            "INSERT OR REPLACE INTO temp.stage1_changed SELECT c.* FROM (SELECT "
            + ", ".join(f"{value} AS {column}" for value, column in zip(picked, _STAGE1_TARGETS, strict=True))
            + f" FROM codex.stage1_outputs WHERE {_RANGE} AND {_IS_COUNTED}) AS c"
            " LEFT JOIN main.memories AS m ON m.thread_id = c.thread_id"
            f" WHERE m.thread_id IS NULL OR {_changed('m.', 'c.', ':home')}"
        )
        copy_staged = (
            _STAGE1_INTO + f"SELECT {', '.join(_STAGE1_TARGETS)}, 'stage1_outputs', :home, :now,"
            " :now, :sync FROM temp.stage1_changed WHERE true ORDER BY thread_id"
            + _STAGE1_ON_CONFLICT + f" WHERE {_CHANGED}"
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
            # Read and compare, holding no lock on memcite's database.
            conn.execute("DELETE FROM temp.stage1_changed")
            conn.execute(stage_range, params)
            conn.execute(_NOTE_UNSEEN.format(upper="AND m.thread_id <= :high"), params)
            texts = [row[0] for row in conn.execute(
                f"DELETE FROM temp.stage1_changed WHERE {_NOT_ASCII} RETURNING thread_id")]
            odd = _fetch_leniently(conn, odd_rows, params)
            normalised = list(_normalised_stage1(odd, invalid))
            rows = normalised + [_fetch_leniently(conn, by_id, (thread_id,))[0]
                                 for thread_id in texts]
            staged = conn.execute("SELECT count(*) FROM temp.stage1_changed").fetchone()[0]
            if staged or rows:
                with self.turns.transaction():
                    conn.execute(copy_staged, params)
                    conn.executemany(_UPSERT_STAGE1, [(*row, *self.sync_values) for row in rows])
            synced += in_range - len(odd) + len(normalised)
            params["low"] = high
            if self.progress:
                self.progress("stage1_outputs", synced, self.total)
        conn.execute(_NOTE_UNSEEN.format(upper=""), params)
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


def _drop_staging_tables(conn: sqlite3.Connection) -> None:
    """Drop the temporary tables of a ``stage1_outputs`` copy (they live with the connection)."""
    conn.execute("DROP TABLE IF EXISTS temp.stage1_changed")
    conn.execute("DROP TABLE IF EXISTS temp.stage1_unseen")


def _write_folder_rows(turns: _Turns, params: dict, fresh: str, batch_rows: int) -> None:
    """Write the merged memory-folder rows into the inventory, a range of thread ids per
    transaction; a memory they would not change is left as it was."""
    conn, write = turns.conn, _WRITE_FOLDER.format(fresh=fresh)
    low = ""
    while True:
        high = conn.execute(
            "SELECT max(thread_id) FROM (SELECT thread_id FROM temp.folder_rows"
            " WHERE thread_id > ? ORDER BY thread_id LIMIT ?)", (low, batch_rows)).fetchone()[0]
        if high is None:
            return
        with turns.transaction():
            conn.execute(write, {**params, "low": low, "high": high})
        low = high


def _folder_params(item: home.FolderMemory) -> dict:
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
    }


def sync_home(where, open_ledger: Callable[[], sqlite3.Connection], *,
              progress=None) -> SyncReport:
    """``memcite sync``: fill the inventory of the ledger ``open_ledger`` opens from the Codex
    home ``where`` (a ``memcite.paths.Locations``) names. The home is checked before the
    ledger is opened: a wrong home creates nothing."""
    locations = home.locate(where)
    check_codex_home(locations)
    conn = open_ledger()
    try:
        return sync_codex_home(conn, locations, progress=progress)
    finally:
        conn.close()


def render_text(report: SyncReport) -> str:
    """What ``memcite sync`` prints on stdout about ``report`` (its notes go to stderr)."""
    found = []
    if report.stage1_found:
        found.append(f"{count(report.stage1_rows, 'row')} from {report.state_db}")
    if report.folder_found:
        found.append(f"{count(report.raw_sections, 'raw_memories.md section')} and "
                     f"{count(report.summary_headers, 'rollout summary header')}")
    also = f"; dual_write: Codex also consolidates {'v2' if report.store == 'v1' else 'v1'}" \
        if report.dual_write else ""
    text = (
        f"synced {report.codex_home}: {', '.join(found)}\n"
        f"  memory store {report.store}, the one Codex reads ({report.store_from}){also}\n"
        f"  {report.inserted} new, {report.updated} changed, {report.unchanged} unchanged "
        f"(not rewritten), {report.marked_missing} marked missing (gone from Codex, kept)\n"
        + (f"  of those gone: {report.gone_asked} memcite had asked Codex to forget, "
           f"{report.marked_missing - report.gone_asked} Codex removed by itself (its start-up "
           "pruning of unused memories, or its consolidation)\n" if report.marked_missing else "")
    )
    counts = report.counts or {}
    if report.stage1_found:
        text += (
            f"  memories {counts.get('memories', 0)}; cited: by Codex's counters "
            f"{counts.get('cited_codex', 0)} ({counts.get('codex_citations', 0)} citations), "
            f"by memcite's log {counts.get('cited_memcite', 0)}\n")
    else:
        text += (f"  memories {counts.get('memories', 0)}; usage unknown (no Codex "
                 "memories database)\n")
    if report.forget_requests_seen_gone:
        text += (f"  {count(report.forget_requests_seen_gone, 'memory', 'memories')} memcite "
                 "asked Codex to forget are gone from Codex now\n")
    return text


def render_notes(report: SyncReport) -> list[str]:
    """The notes ``memcite sync`` prints on stderr after its report (without ``memcite: ``)."""
    notes = []
    if report.invalid_ids:
        notes.append(f"note: skipped {count(report.invalid_ids, 'row')} with a thread id that is not "
                     "a UUID")
    notes.extend(f"warning: {line}" for line in report.skipped)
    return notes
