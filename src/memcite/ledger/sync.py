"""Filling memcite's inventory from a Codex home (``memcite sync``).

Three streaming passes, each committed in batches so that recorders are never
kept waiting long: ``stage1_outputs`` (authoritative for times and Codex's
counts), then ``raw_memories.md`` sections and ``rollout_summaries/*.md``
headers (they add cwd, paths and branch, and bring in threads the database
lacks). Rows are updated in place; memcite's own counts are never touched,
except that a memory cited before it was first synced gets its logged counts.
Rows of this home that no pass saw are marked ``missing_since``, never deleted.
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
from memcite.ledger.recording import backfill_usage
from memcite.ledger.store import transaction
from memcite.untrusted import storable

BATCH_ROWS = 5000

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


_UPSERT_STAGE1 = """
INSERT INTO memories (
    thread_id, source_updated_at, generated_at, rollout_slug, codex_usage_count,
    codex_last_usage, selected_for_phase2, selected_for_phase2_source_updated_at,
    has_raw_memory, has_rollout_summary, source, codex_home, first_synced_at, synced_at,
    last_sync_id)
VALUES (?, ?, ?, ?, ?, ?, coalesce(?, 0), ?, ?, ?, 'stage1_outputs', ?, ?, ?, ?)
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
    params = {"home": codex_home, "now": now, "sync": sync_id}

    invalid = [0]
    stage1_rows = 0
    if stage1_found:
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
        memories, cited_codex, codex_citations, cited_memcite = conn.execute(
            "SELECT count(*), coalesce(sum(codex_usage_count > 0), 0),"
            " coalesce(sum(codex_usage_count), 0), coalesce(sum(usage_count > 0), 0)"
            " FROM memories WHERE codex_home = ? AND missing_since IS NULL"
            " AND archived_at IS NULL", (codex_home,)).fetchone()
        inserted = after - before
        seen = conn.execute(
            "SELECT count(*) FROM memories WHERE last_sync_id = ?", (sync_id,)
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
