"""memcite's database: opening it safely, and its schema as named migrations.

The one place for SQL schema. Each migration is a function ``mNNN_name(conn)``
applied inside one ``BEGIN IMMEDIATE`` transaction, recorded by name in
``_memcite_migrations`` and counted in ``PRAGMA user_version`` (so that opening
an up-to-date database costs one pragma). Applying them twice changes nothing.

A file at the database path that is not a memcite database (not SQLite,
corrupt, read-only, or from a newer memcite) is reported with a clear error and
left byte-for-byte untouched: nothing is written before those checks pass.

Plain ``sqlite3`` rather than sqlite-utils: the schema uses generated columns
and partial indexes, and ``memcite record`` (one process per reply) cannot
afford sqlite-utils' import time.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from memcite.errors import MemciteError
from memcite.ledger.memory_files import open_regular

BUSY_TIMEOUT_MS = 15_000
WAL_AUTOCHECKPOINT_PAGES = 4000
WAL_SIZE_LIMIT_BYTES = 32 * 1024 * 1024
SQLITE_MAGIC = b"SQLite format 3\x00"
MIN_SQLITE = (3, 33, 0)


APPLICATION_ID = 0x6D656D63  # "memc", in the header of every database memcite creates
# The tables each schema version must have (later migrations may add more).
_REQUIRED_TABLES = {
    1: ("memories", "syncs", "replies", "cited_ids", "cited_entries"),
    2: ("archive_log",),
}


class StoreError(MemciteError):
    """The database cannot be opened or written: the file is left as it was (exit 2)."""


class DamagedStoreError(StoreError):
    """The database is damaged: memcite refuses to read or write it, the file is untouched (exit 3)."""

    exit_code = 3


# --------------------------------------------------------------------------- migrations


def _execute_script(conn: sqlite3.Connection, script: str) -> None:
    """Run each statement of ``script`` inside the caller's transaction.

    (``executescript`` would commit first, breaking the one-transaction rule.)
    """
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            conn.execute(statement)
            statement = ""
    if statement.strip():
        raise ValueError(f"incomplete SQL statement in a migration: {statement.strip()[:60]}")


def m001_initial(conn: sqlite3.Connection) -> None:
    """Inventory of memories, the sync log, and the append-only reply and citation log."""
    _execute_script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS memories (
            thread_id TEXT PRIMARY KEY,            -- lowercase hyphenated UUID
            source_updated_at INTEGER,             -- Unix seconds, as Codex stores them
            generated_at INTEGER,
            rollout_slug TEXT,
            rollout_summary_file TEXT,             -- file name in memories/rollout_summaries/
            rollout_path TEXT,
            cwd TEXT,
            git_branch TEXT,
            selected_for_phase2 INTEGER NOT NULL DEFAULT 0,
            selected_for_phase2_source_updated_at INTEGER,
            has_raw_memory INTEGER NOT NULL DEFAULT 0,      -- non-blank text in Codex
            has_rollout_summary INTEGER NOT NULL DEFAULT 0,
            -- memcite's own counts, from its citation log (never Codex's added in)
            usage_count INTEGER NOT NULL DEFAULT 0,
            last_usage INTEGER,
            -- Codex's counts as stage1_outputs held them at the last sync
            codex_usage_count INTEGER,
            codex_last_usage INTEGER,
            -- where the row came from
            source TEXT NOT NULL,                  -- stage1_outputs | raw_memories | rollout_summary
            codex_home TEXT,
            first_synced_at INTEGER NOT NULL,
            synced_at INTEGER NOT NULL,
            last_sync_id INTEGER REFERENCES syncs(id),
            missing_since INTEGER,                 -- gone from Codex at a later sync (kept)
            archived_at INTEGER,                   -- set by prune --apply, cleared by restore
            -- a memory's last use: max(memcite's, Codex's, re-extraction)
            last_used INTEGER GENERATED ALWAYS AS (
                max(coalesce(last_usage, 0), coalesce(codex_last_usage, 0),
                    coalesce(source_updated_at, 0))
            ) VIRTUAL,
            -- Codex's own retention key
            codex_last_used INTEGER GENERATED ALWAYS AS (
                coalesce(codex_last_usage, source_updated_at)
            ) VIRTUAL
        );
        CREATE INDEX IF NOT EXISTS memories_active_last_used
            ON memories (last_used, thread_id) WHERE archived_at IS NULL;
        CREATE INDEX IF NOT EXISTS memories_codex_retention
            ON memories (selected_for_phase2, codex_last_used, source_updated_at, thread_id)
            WHERE archived_at IS NULL;
        CREATE INDEX IF NOT EXISTS memories_usage_count
            ON memories (usage_count DESC, last_usage DESC) WHERE usage_count > 0;
        CREATE INDEX IF NOT EXISTS memories_archived_at
            ON memories (archived_at) WHERE archived_at IS NOT NULL;
        CREATE INDEX IF NOT EXISTS memories_codex_home_sync
            ON memories (codex_home, last_sync_id);

        CREATE TABLE IF NOT EXISTS syncs (
            id INTEGER PRIMARY KEY,
            codex_home TEXT NOT NULL,
            started_at INTEGER NOT NULL,
            finished_at INTEGER,                   -- NULL: interrupted
            stage1_rows INTEGER NOT NULL DEFAULT 0,
            folder_threads INTEGER NOT NULL DEFAULT 0,
            inserted INTEGER NOT NULL DEFAULT 0,
            updated INTEGER NOT NULL DEFAULT 0,
            marked_missing INTEGER NOT NULL DEFAULT 0
        );

        CREATE TABLE IF NOT EXISTS replies (
            id INTEGER PRIMARY KEY,
            reply_key TEXT NOT NULL UNIQUE,        -- the caller's id, else SHA-256 of the text
            key_kind TEXT NOT NULL,                -- id | sha256
            text_sha256 TEXT NOT NULL,             -- the reply text itself is never stored
            replied_at INTEGER NOT NULL,           -- when the reply was made (Unix seconds)
            recorded_at INTEGER NOT NULL,          -- when memcite recorded it
            thread_id TEXT,                        -- the replying thread, when known
            cwd TEXT,
            profile TEXT NOT NULL,
            policy TEXT NOT NULL,
            origin TEXT,                           -- record | ingest:<file> | hook:<file>
            memory_root TEXT,                      -- where cited paths were resolved
            blocks INTEGER NOT NULL,
            unterminated INTEGER NOT NULL,         -- 1 when the last block was never closed
            diagnostics INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS replies_replied_at ON replies (replied_at);

        CREATE TABLE IF NOT EXISTS cited_ids (
            reply_id INTEGER NOT NULL REFERENCES replies(id),
            position INTEGER NOT NULL,             -- order in the reply, from 0
            rollout_id TEXT NOT NULL,              -- as written
            thread_id TEXT,                        -- normalised; NULL when not a UUID
            terminated INTEGER NOT NULL,           -- 0: from a block that was never closed
            counted INTEGER NOT NULL,              -- added to usage_count under the policy
            known INTEGER NOT NULL,                -- a memory in the inventory when recorded
            PRIMARY KEY (reply_id, position)
        ) WITHOUT ROWID;
        -- Partial indexes only: a full index on thread_id would cost every recorded
        -- reply a write at a random place; these two are written only for rare rows.
        CREATE INDEX IF NOT EXISTS cited_ids_unknown
            ON cited_ids (thread_id) WHERE known = 0 AND counted = 1;
        CREATE INDEX IF NOT EXISTS cited_ids_not_uuid
            ON cited_ids (rollout_id) WHERE thread_id IS NULL;

        CREATE TABLE IF NOT EXISTS cited_entries (
            reply_id INTEGER NOT NULL REFERENCES replies(id),
            position INTEGER NOT NULL,
            path TEXT NOT NULL,                    -- as written, relative to the memory folder
            line_start INTEGER NOT NULL,
            line_end INTEGER NOT NULL,
            note TEXT NOT NULL,
            line INTEGER NOT NULL,                 -- where the entry is in the reply
            terminated INTEGER NOT NULL,
            lines_sha256 TEXT,                     -- cited lines at record time; NULL: unresolved
            PRIMARY KEY (reply_id, position)
        ) WITHOUT ROWID;
        """
    )


def m002_archive_log(conn: sqlite3.Connection) -> None:
    """The log of ``prune --apply`` and ``restore``, and indexes covering the stats queries."""
    conn.execute(
        """
        CREATE TABLE IF NOT EXISTS archive_log (
            id INTEGER PRIMARY KEY,
            action TEXT NOT NULL,                  -- archive | restore
            thread_id TEXT NOT NULL,
            at INTEGER NOT NULL,                   -- when it was done (Unix seconds)
            rule TEXT,                             -- memcite | codex (archive)
            reason TEXT,
            last_used INTEGER,
            file_from TEXT,                        -- the summary file moved, absolute paths
            file_to TEXT,
            problem TEXT                           -- a file that could not be moved, and why
        )
        """
    )
    conn.execute("CREATE INDEX IF NOT EXISTS archive_log_thread ON archive_log (thread_id, id)")
    # Dead memories by Codex's rule, stalest first.
    conn.execute(
        "CREATE INDEX IF NOT EXISTS memories_codex_last_used"
        " ON memories (codex_last_used, thread_id) WHERE archived_at IS NULL"
    )
    # Citation checks group entries by what was cited, without sorting.
    conn.execute(
        "CREATE INDEX IF NOT EXISTS cited_entries_check"
        " ON cited_entries (path, line_start, line_end, lines_sha256)"
    )


def m003_outside_codex_index(conn: sqlite3.Connection) -> None:
    """An index of the few memories outside Codex's table, so stats counts them without a scan.

    Its WHERE must stay word for word ``memcite.retention.stats._OUT_OF_SCOPE``, or SQLite
    will not use it.
    """
    conn.execute(
        "CREATE INDEX IF NOT EXISTS memories_outside_codex ON memories (missing_since, source)"
        " WHERE archived_at IS NULL AND (missing_since IS NOT NULL"
        " OR source != 'stage1_outputs')"
    )


def m004_note_log(conn: sqlite3.Connection) -> None:
    """The change log of project notes (``memcite note``): hashes and who confirmed, no content."""
    conn.execute(
        """
        CREATE TABLE IF NOT EXISTS note_log (
            id INTEGER PRIMARY KEY,
            at INTEGER NOT NULL,                   -- when (Unix seconds)
            command TEXT NOT NULL,                 -- save | forget | restore | purge
            action TEXT NOT NULL,                  -- save | update | forget | restore | purge |
                                                   -- adopt | hand-edit | archive
            project TEXT NOT NULL,                 -- the canonical project path
            slug TEXT NOT NULL,
            entry_id TEXT,                         -- NULL: the whole note or an archived file
            hash_before TEXT,                      -- SHA-256 of the content before, NULL: none
            hash_after TEXT,                       -- and after, NULL: gone from the note
            confirmed_by TEXT NOT NULL,            -- request | --yes | terminal | hand-edit
            user TEXT NOT NULL,                    -- the login name that ran the command
            file TEXT                              -- the archive file written or read
        )
        """
    )
    conn.execute("CREATE INDEX IF NOT EXISTS note_log_slug_entry ON note_log (slug, entry_id, id)")


def m005_forget_requests(conn: sqlite3.Connection) -> None:
    """The journal of ``prune --apply``: each memory memcite asked Codex to forget, and how.

    A row is written (``pending``) and committed before anything outside memcite's
    database is touched, completed (``done``) after, and settled by the next run if
    the command died in between (``rolled_back`` when nothing happened).
    """
    _execute_script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS forget_requests (
            id INTEGER PRIMARY KEY,
            batch TEXT NOT NULL,                   -- one prune run
            thread_id TEXT NOT NULL,
            codex_home TEXT NOT NULL,              -- real path of the home asked
            way TEXT NOT NULL,                     -- note | codex_db
            -- pending: intent logged, not yet done; done: asked (note written, or rows
            -- deleted from stage1_outputs); forgotten: a later sync found it gone from
            -- Codex; withdrawn / restored: undone by restore; rolled_back: never happened
            state TEXT NOT NULL,
            requested_at INTEGER NOT NULL,
            completed_at INTEGER,
            rule TEXT,
            reason TEXT,
            last_used INTEGER,
            label TEXT,
            summary_file TEXT,
            note_path TEXT,                        -- the ad-hoc note (way note)
            note_sha256 TEXT,                      -- its bytes as memcite wrote them
            codex_db TEXT,                         -- the memories_1.sqlite written (way codex_db)
            stage1_row TEXT,                       -- the whole deleted row, JSON (way codex_db)
            seen_gone_at INTEGER,
            undone_at INTEGER,
            undo_note_path TEXT,
            problem TEXT
        );
        CREATE INDEX IF NOT EXISTS forget_requests_thread ON forget_requests (thread_id, id);
        CREATE INDEX IF NOT EXISTS forget_requests_open
            ON forget_requests (codex_home, thread_id) WHERE state IN ('pending', 'done');
        """,
    )


def m006_session_offsets(conn: sqlite3.Connection) -> None:
    """How far each Codex session file has been read, so the Stop hook and ``ingest --codex-home``
    read only what is new (see ``memcite.ledger.session_offsets``)."""
    conn.execute(
        """
        CREATE TABLE IF NOT EXISTS session_offsets (
            path TEXT PRIMARY KEY,                 -- the session file's real path
            session_id TEXT,                       -- its first session_meta id; NULL: none read
            cwd TEXT,
            byte_offset INTEGER NOT NULL,          -- bytes read: the end of the last whole line
            lines_read INTEGER NOT NULL,           -- lines read (reply keys are session:line)
            fingerprint TEXT NOT NULL,             -- of the bytes before byte_offset (head, tail)
            size INTEGER NOT NULL,                 -- the file as it was when read
            mtime_ns INTEGER NOT NULL,
            updated_at INTEGER NOT NULL
        )
        """
    )


def m007_mask_secrets(conn: sqlite3.Connection) -> None:
    """Mask secrets in the notes, cited paths and ids that are not UUIDs recorded before
    recording masked them (``memcite.secrets.mask_secrets``); a masked path loses its hash.

    Each distinct value is looked at once (they repeat: a few paths, a few notes).
    """
    from memcite.secrets import mask_secrets

    def changed(sql: str) -> list[tuple[str, str]]:
        return [(new, old) for (old,) in conn.execute(sql) if (new := mask_secrets(old)) != old]

    conn.executemany("UPDATE cited_entries SET path = ?, lines_sha256 = NULL WHERE path = ?",
                     changed("SELECT DISTINCT path FROM cited_entries"))
    conn.executemany("UPDATE cited_entries SET note = ? WHERE note = ?",
                     changed("SELECT DISTINCT note FROM cited_entries"))
    conn.executemany("UPDATE cited_ids SET rollout_id = ? WHERE rollout_id = ? AND thread_id IS NULL",
                     changed("SELECT DISTINCT rollout_id FROM cited_ids WHERE thread_id IS NULL"))


def m008_entry_requests(conn: sqlite3.Connection) -> None:
    """The journal of ``prune --rule tiered --apply`` on Codex's ``MEMORY.md``: each entry memcite
    asked Codex's consolidation to remove or review, in which ad-hoc note (``pending`` committed
    before the note is written, ``done`` after, settled by the next run)."""
    _execute_script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS entry_requests (
            id INTEGER PRIMARY KEY,
            batch TEXT NOT NULL,                   -- one prune run
            codex_home TEXT NOT NULL,
            path TEXT NOT NULL,                    -- the memory file (MEMORY.md, full path)
            line_start INTEGER NOT NULL,
            line_end INTEGER NOT NULL,
            entry_sha256 TEXT NOT NULL,            -- the entry's lines when asked
            title TEXT,
            tier TEXT,
            action TEXT NOT NULL,                  -- prune | review
            reason TEXT,
            citations INTEGER NOT NULL,
            last_cited INTEGER,
            state TEXT NOT NULL,                   -- pending | done | rolled_back
            requested_at INTEGER NOT NULL,
            completed_at INTEGER,
            note_path TEXT NOT NULL,
            note_sha256 TEXT NOT NULL,
            problem TEXT
        );
        CREATE INDEX IF NOT EXISTS entry_requests_open
            ON entry_requests (codex_home, entry_sha256) WHERE state IN ('pending', 'done');
        """,
    )


def m009_stats_indexes(conn: sqlite3.Connection) -> None:
    """Indexes that let ``stats`` answer without reading the rows of ``memories``: the most
    cited memories under memcite's rule in the order ``stats`` lists them (a walk of the first
    rows), and Codex's usage counts of the active memories (counted and summed in the index).
    Each partial index's WHERE is, term by term, what ``memcite.retention.stats`` asks."""
    _execute_script(
        conn,
        """
        CREATE INDEX IF NOT EXISTS memories_top_memcite ON memories (
            max(usage_count, coalesce(codex_usage_count, 0)) DESC,
            max(coalesce(last_usage, 0), coalesce(codex_last_usage, 0)) DESC, thread_id)
            WHERE (usage_count > 0 OR codex_usage_count > 0) AND archived_at IS NULL
            AND missing_since IS NULL;
        CREATE INDEX IF NOT EXISTS memories_codex_cited ON memories (codex_usage_count)
            WHERE archived_at IS NULL AND codex_usage_count > 0;
        """,
    )


def m010_stats_counters(conn: sqlite3.Connection) -> None:
    """Counters ``stats`` reads instead of counting a million rows: totals of ``memories``
    and ``replies``, citations per week, kept by triggers in each write's transaction and
    filled here from the existing rows (see ``memcite.ledger.counters``)."""
    from memcite.ledger.counters import create_counters

    create_counters(conn)


def m011_sync_store(conn: sqlite3.Connection) -> None:
    """Which of Codex's memory stores each sync read (``v1``: ``memories/`` and
    ``memories_1.sqlite``; ``v2``: ``memories_v2/`` and ``memories_v2_1.sqlite``), so that
    reports name the store their figures come from. Older syncs read v1."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(syncs)")}
    if "store" not in columns:  # safe to apply twice, as every migration
        conn.execute("ALTER TABLE syncs ADD COLUMN store TEXT NOT NULL DEFAULT 'v1'")


def m012_summary_file_index(conn: sqlite3.Connection) -> None:
    """An index of the memories' rollout summary files: a citation of a summary missing now
    is told apart, by one seek, from a file that never was (Codex removed it)."""
    conn.execute("CREATE INDEX IF NOT EXISTS memories_summary_file ON memories"
                 " (rollout_summary_file, codex_home) WHERE rollout_summary_file IS NOT NULL")


SEARCH_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS search_files (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,             -- the file's absolute path as listed
        owner TEXT NOT NULL,                   -- whose rows: scope, Codex home, project
        kind TEXT NOT NULL,                    -- notes | events | memory
        mtime_ns INTEGER NOT NULL,             -- the stamp a refresh compares
        size INTEGER NOT NULL,
        inode INTEGER NOT NULL,
        device INTEGER NOT NULL,
        rows INTEGER NOT NULL,                 -- its rows in search_index
        indexed_at INTEGER NOT NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS search_files_owner ON search_files (owner, kind)",
    # One row per line (per event); rowid = search_files.id << 24 | line.
    # porter: a word matches its other forms (`probe` finds "probes"); an index made with
    # another tokenizer is rebuilt (``memcite.notes.search.ensure_schema``)
    "CREATE VIRTUAL TABLE IF NOT EXISTS search_index USING fts5(text, owner UNINDEXED, "
    "kind UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2')",
)
SEARCH_TOKENIZER = "porter unicode61 remove_diacritics 2"


def fts5_available(conn: sqlite3.Connection) -> bool:
    """Whether this SQLite has FTS5 (a build may lack it)."""
    try:
        if conn.execute("SELECT sqlite_compileoption_used('ENABLE_FTS5')").fetchone()[0]:
            return True
        conn.execute("CREATE VIRTUAL TABLE temp.memcite_fts5_probe USING fts5(x)")
        conn.execute("DROP TABLE temp.memcite_fts5_probe")
        return True
    except sqlite3.Error:
        return False


def m013_search_index(conn: sqlite3.Connection) -> None:
    """The index of ``memcite search`` (``memcite.notes.search``): an FTS5 table of the lines
    of the notes, event logs and Codex's memory files, and each indexed file's stamp. Without
    FTS5 only the stamp table is made (search then says so; it creates the rest when run by
    a Python that has FTS5): no other command may fail for want of it."""
    conn.execute(SEARCH_SCHEMA[0])
    conn.execute(SEARCH_SCHEMA[1])
    if fts5_available(conn):
        conn.execute(SEARCH_SCHEMA[2])


def m014_ingest_checks(conn: sqlite3.Connection) -> None:
    """What the last whole read of each session file ``memcite ingest FILE`` was given found,
    so that reading it again when neither the file nor its recorded replies changed is one
    look-up (see ``memcite.ledger.ingest_checks``)."""
    conn.execute(
        """
        CREATE TABLE IF NOT EXISTS ingest_checks (
            path TEXT PRIMARY KEY,                 -- the session file's real path
            file_stamp TEXT NOT NULL,              -- device, inode, size, times; read options
            rows_digest TEXT NOT NULL,             -- SHA-256 of its recorded keys and texts' SHA-256
            report TEXT NOT NULL,                  -- what the read reported (JSON)
            checked_at INTEGER NOT NULL
        )
        """
    )


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    m001_initial,
    m002_archive_log,
    m003_outside_codex_index,
    m004_note_log,
    m005_forget_requests,
    m006_session_offsets,
    m007_mask_secrets,
    m008_entry_requests,
    m009_stats_indexes,
    m010_stats_counters,
    m011_sync_store,
    m012_summary_file_index,
    m013_search_index,
    m014_ingest_checks,
)
SCHEMA_VERSION = len(MIGRATIONS)


def migration_name(migration: Callable) -> str:
    """The name a migration is recorded under."""
    return migration.__name__


# --------------------------------------------------------------------------- transactions


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction: ``BEGIN IMMEDIATE`` (waits for the lock), commit, or roll back."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    note_own_state = getattr(conn, "note_own_state", None)
    if note_own_state is not None:
        note_own_state()  # the file as this connection's own write left it


@contextmanager
def read_snapshot(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One read transaction (``BEGIN``): every query inside sees the same state of the log."""
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations this database lacks, each in its own transaction; return their names."""
    applied: list[str] = []
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _memcite_migrations "
        "(name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)"
    )
    for index, migration in enumerate(MIGRATIONS, start=1):
        name = migration_name(migration)
        with transaction(conn):
            # Re-checked under the write lock: another process may have just applied it.
            done = conn.execute(
                "SELECT 1 FROM _memcite_migrations WHERE name = ?", (name,)
            ).fetchone()
            if done is None:
                migration(conn)
                conn.execute(
                    "INSERT INTO _memcite_migrations (name, applied_at) VALUES (?, ?)",
                    (name, int(time.time())),
                )
                applied.append(name)
            if _user_version(conn) < index:
                conn.execute(f"PRAGMA user_version = {index}")
    return applied


def _user_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


# --------------------------------------------------------------------------- opening


def _check_file(path: str, *, readonly: bool) -> bool:
    """Refuse what is not a memcite-writable SQLite file; True when the file exists."""
    if os.path.isdir(path):
        raise StoreError(f"{path}: is a directory, not a database file",
                         hint="pass a file path with --db")
    if os.path.islink(path) and not os.path.exists(path):
        raise StoreError(f"{path}: is a link to a missing file; no database created through it",
                         hint="remove the link, or pass the file itself with --db")
    if not os.path.exists(path):
        if readonly:
            raise StoreError(f"{path}: no such database",
                             hint="record or sync something first, or pass --db")
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise StoreError(f"{path}: the folder {parent} does not exist")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise StoreError(f"{path}: cannot create the database, {parent} is read-only",
                             hint="choose a writable location with --db or MEMCITE_DB")
        return False
    try:
        fd = open_regular(path)  # a FIFO or a device is refused here, without blocking
    except ValueError:
        raise StoreError(f"{path!r}: not a usable file name (it holds a NUL byte)") from None
    except OSError as exc:
        raise StoreError(f"{path}: cannot read: {exc.strerror or exc}",
                         hint="point --db or MEMCITE_DB at a regular file") from None
    try:
        header = os.read(fd, 100)
        size = os.fstat(fd).st_size
    except OSError as exc:
        raise StoreError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        _close_database_fd(fd)
    if header and not header.startswith(SQLITE_MAGIC):
        raise StoreError(
            f"{path}: not an SQLite database (left untouched)",
            hint="point --db or MEMCITE_DB at a memcite database or at a new file",
        )
    if header and len(header) < 100:
        raise DamagedStoreError(f"{path}: a truncated SQLite file (left untouched)",
                                hint="restore it from a backup or move it aside")
    problem = _header_problem(header, size, wal_in_use=_wal_has_frames(path)) if header else None
    if problem is not None:
        raise DamagedStoreError(f"{path}: the database is damaged ({problem}); left untouched",
                                hint=_DAMAGED_HINT)
    if not readonly:
        parent = os.path.dirname(os.path.abspath(path))
        if not os.access(path, os.W_OK) or not os.access(parent, os.W_OK | os.X_OK):
            raise StoreError(
                f"{path}: read-only (the file or its folder cannot be written; left untouched)",
                hint="make it writable, or choose another database with --db",
            )
    return True


_DAMAGED_HINT = ("restore it from a backup, or move it aside to start a new one "
                 "(the usage counts can be rebuilt only from an intact log)")


def _wal_has_frames(path: str) -> bool:
    """Whether ``path``'s ``-wal`` file holds frames (a header alone is 32 bytes)."""
    try:
        return os.path.getsize(path + "-wal") > 32
    except OSError:
        return False


def _header_problem(header: bytes, size: int, *, wal_in_use: bool = False) -> str | None:
    """What the 100-byte header says is wrong with a file of ``size`` bytes, or None.

    With frames in the ``-wal`` file, a header counting more pages than the file holds is
    no damage: a checkpoint writes page 1 (and its new page count) before the pages that
    extend the file, and a checkpoint cut short is finished from the WAL by the next one.
    (Refusing it made a ``record`` fail now and then while another writer checkpointed.)
    """
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        return f"its header names a page size of {page_size} bytes"
    if size % page_size:
        return f"{size} bytes is not a whole number of {page_size}-byte pages: cut short or padded"
    pages = int.from_bytes(header[28:32], "big")
    if header[92:96] == header[24:28] and pages * page_size > size and not wal_in_use:
        return f"its header counts {pages} pages, the file holds {size // page_size}: cut short"
    return None


def _unclean_end(path: str) -> bool:
    """Whether the last writer ended without closing the database (a crash, a kill).

    A clean close deletes the ``-wal`` file; a read-only connection leaves an empty one.
    A ``-wal`` with frames while no connection holds the database (nobody holds the
    shared lock SQLite keeps on the ``-shm`` file's "dead man switch" byte) means an
    unclean end. Where the lock cannot be probed (no OFD locks), the answer is False.
    """
    try:
        if os.path.getsize(path + "-wal") == 0:
            return False
    except OSError:
        return False
    try:
        import fcntl
        import struct
    except ImportError:
        return False
    if not hasattr(fcntl, "F_OFD_SETLK"):
        return False
    try:
        fd = os.open(path + "-shm", os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return True  # frames, and no index of them: nobody is using it
    except OSError:
        return False
    try:
        # Asked with an open-file-description lock, which takes none and sees this process's
        # own SQLite locks as well as others'
        lock = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, _SHM_DMS_BYTE, 1, 0)
        try:
            found = fcntl.fcntl(fd, fcntl.F_OFD_GETLK, lock)
        except OSError:
            return False
        # another connection holds it: a writer at work, not a crash
        return struct.unpack("hhqqi4x", found)[0] == fcntl.F_UNLCK
    finally:
        # closing a descriptor drops every POSIX lock this process holds on the file: with a
        # connection of this process open, SQLite's own lock on the byte would go with it
        _close_database_fd(fd, database=path)


_SHM_DMS_BYTE = 128  # SQLite's UNIX_SHM_DMS: (22 + 8) * 4 + 8


def check_integrity(conn: sqlite3.Connection, path: str = "the database") -> None:
    """Raise ``DamagedStoreError`` unless ``PRAGMA quick_check`` says ``ok``."""
    try:
        rows = [row[0] for row in conn.execute("PRAGMA quick_check(5)")]
    except sqlite3.DatabaseError as exc:
        rows = [str(exc)]
    if rows != ["ok"]:
        raise DamagedStoreError(
            f"{path}: the database is damaged (quick_check: {'; '.join(map(str, rows))}); "
            "left untouched", hint=_DAMAGED_HINT)


# ---------------------------------------------------------------- the last clean quick_check

# Beside the database: the state of its file when a ``quick_check`` last found it intact.
CHECKED_SUFFIX = "-checked"
_CHECKED_FORMAT = "memcite-quick-check 1"


def _quiet_stamp(path: str) -> str | None:
    """What identifies the database file's bytes: its device, inode, size, change and
    modification times (a write moves the change time, which no one can set back); None
    while its ``-wal`` holds frames (a writer at work, or a crash: always checked)."""
    if _wal_has_frames(path) or os.path.exists(path + "-journal"):
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (f"{_CHECKED_FORMAT} {info.st_dev} {info.st_ino} {info.st_size} "
            f"{info.st_mtime_ns} {info.st_ctime_ns}\n")


def _checked_file(path: str) -> tuple[str, str]:
    folder, name = os.path.split(os.path.abspath(path))
    return folder, name + CHECKED_SUFFIX


def _checked_before(path: str, stamp: str | None) -> bool:
    """Whether the file is as it was when a ``quick_check`` last found it intact."""
    if stamp is None:
        return False
    from memcite.durable_files import open_folder, read_file_at

    folder, name = _checked_file(path)
    try:
        fd = open_folder(folder)
        try:
            data = read_file_at(fd, name, os.path.join(folder, name), 256)
        finally:
            os.close(fd)
    except (OSError, MemciteError):
        return False  # unreadable, a link, a FIFO: checked again
    return data == stamp.encode()


def remember_clean(path: str | os.PathLike, stamp: str | None = None) -> bool:
    """Note beside the database that its file, as it is now (``stamp``, taken before the
    check), passed ``quick_check``; False when it could not be noted (checked next time)."""
    path = os.fspath(path)
    stamp = _quiet_stamp(path) if stamp is None else stamp
    if stamp is None:
        return False
    from memcite.durable_files import open_folder, replace_file_at

    folder, name = _checked_file(path)
    try:
        fd = open_folder(folder)
        try:
            replace_file_at(fd, name, stamp.encode(), os.path.join(folder, name), 0o600)
        finally:
            os.close(fd)
    except (OSError, MemciteError):
        return False
    return _quiet_stamp(path) == stamp  # changed meanwhile: the note says nothing true


# Closing any descriptor of a file drops every POSIX lock this process holds on it, SQLite's
# own included. A descriptor memcite opens on a database file (to read its header) is
# therefore never closed while a connection of this process has that file open: it is kept
# until the last such connection closes. (Closing it at once dropped an open connection's
# shared lock; another process's writer, closing, then took itself for the last connection
# and deleted the -wal and -shm under it: "disk I/O error" at the next open, and writes to a
# deleted -wal. tests/ledger/test_store.py::test_a_second_open_keeps_the_first_connections_locks.)
_OPEN_CONNECTIONS: dict[tuple[int, int], int] = {}  # (device, inode) -> connections open
_KEPT_FDS: dict[tuple[int, int], list[int]] = {}


def _close_database_fd(fd: int, *, database: str | None = None) -> None:
    """Close ``fd``, a descriptor on a database file (or, with ``database``, on one of that
    database's companion files: its ``-shm``), unless a connection of this process has the
    database open (then it is closed with the last one)."""
    try:
        info = os.stat(database) if database is not None else os.fstat(fd)
    except OSError:
        os.close(fd)
        return
    key = (info.st_dev, info.st_ino)
    if _OPEN_CONNECTIONS.get(key):
        _KEPT_FDS.setdefault(key, []).append(fd)
    else:
        os.close(fd)


def _file_state(conn: sqlite3.Connection, path: str) -> tuple | None:
    """What changes when anyone but ``conn`` changes the database: SQLite's ``data_version``
    (moved by another connection's commit), the file's and its ``-wal``'s identity, size,
    modification and change times (moved by any write, SQLite's or not); None when it
    cannot be told."""
    try:
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        info = os.stat(path)
    except (OSError, sqlite3.Error):
        return None
    try:
        wal = os.stat(path + "-wal")
        wal_state = (wal.st_ino, wal.st_size, wal.st_mtime_ns, wal.st_ctime_ns)
    except FileNotFoundError:
        wal_state = None
    except OSError:
        return None
    return (version, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns,
            info.st_ctime_ns, wal_state)


class _CheckedConnection(sqlite3.Connection):
    """A writer's connection to a database found intact when it was opened: closing it
    notes the file as it is then, but only when this connection's own writes (made
    through SQLite, which keep it intact) were the last change: the file and its ``-wal``
    as its last write left them (``own_state``, taken after each ``transaction`` and at
    the open), and no other connection's commit since. Anything else (the file damaged
    while a batch command waits at a prompt, a ``record`` meanwhile, a write outside
    ``transaction``) leaves the note as it was, and the next batch command checks again.
    Each connection is counted by its file while it is open (see ``_close_database_fd``)."""

    checked_path: str | None = None
    file_key: tuple[int, int] | None = None
    own_state: tuple | None = None

    def note_own_state(self) -> None:
        """Take the file's state as this connection's own write (or its open) left it."""
        if self.checked_path is not None:
            self.own_state = _file_state(self, self.checked_path)

    def count_open(self, path: str) -> None:
        """Count this connection as one open on the file ``path``."""
        try:
            info = os.stat(path)
        except OSError:
            return
        self.file_key = (info.st_dev, info.st_ino)
        _OPEN_CONNECTIONS[self.file_key] = _OPEN_CONNECTIONS.get(self.file_key, 0) + 1

    def close(self) -> None:
        path, self.checked_path = self.checked_path, None
        clean = path is not None and not self.in_transaction and self.own_state is not None \
            and _file_state(self, path) == self.own_state
        super().close()
        key, self.file_key = self.file_key, None
        if key is not None:
            left = _OPEN_CONNECTIONS.get(key, 1) - 1
            if left > 0:
                _OPEN_CONNECTIONS[key] = left
            else:
                _OPEN_CONNECTIONS.pop(key, None)
                for fd in _KEPT_FDS.pop(key, []):
                    os.close(fd)
        if clean:
            remember_clean(path)


def _check_once(path: str, check: Callable[[], None], *, note: bool = True) -> bool:
    """``check()`` (a ``quick_check`` raising ``DamagedStoreError``) unless the file is as it
    was at the last clean check; the clean result noted (unless not ``note``: a read-only
    open writes nothing). True when the file was trusted or found intact and noted."""
    stamp = _quiet_stamp(path)
    if _checked_before(path, stamp):
        return True
    check()
    return remember_clean(path, stamp) if stamp is not None and note else False


def _check_read_only(path: str) -> None:
    """``check_integrity`` through a read-only connection, which recovers the WAL's index
    but, unlike a writer's last close, never checkpoints into the file it refuses."""
    uri = "file:" + _uri_path(os.path.abspath(path)) + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None,
                               timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot open the database ({exc})") from None
    try:
        check_integrity(conn, path)
    finally:
        conn.close()


def _schema_problem(tables: set[str], version: int) -> str | None:
    """What is missing from the schema ``version`` promises, or None."""
    missing = [name for since, names in _REQUIRED_TABLES.items() if version >= since
               for name in names if name not in tables]
    return f"{'table' if len(missing) == 1 else 'tables'} {', '.join(missing)} missing" if missing else None


def _create_private(path: str) -> None:
    """Create an empty database file readable by its owner only (0600, whatever the umask);
    SQLite gives its ``-wal`` and ``-shm`` the same mode."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                         0o600))
    except FileExistsError:
        if os.path.islink(path):  # a link put there since the look: never created through
            raise StoreError(f"{path}: is a link to a missing file; no database created "
                             "through it", hint="remove the link, or pass the file itself "
                             "with --db") from None
        # else another process created it meanwhile
    except OSError as exc:
        raise StoreError(f"{path}: cannot create the database ({exc.strerror or exc})") from None


def open_store(path: str | os.PathLike, *, readonly: bool = False,
               migrate_schema: bool = True,
               busy_timeout_ms: int = BUSY_TIMEOUT_MS,
               quick_check: bool = False) -> sqlite3.Connection:
    """Open (creating if needed) memcite's database, checked and migrated; autocommit mode.

    ``readonly`` opens an existing database for reading only and never migrates.
    Writes go through ``transaction(conn)``; each waits at most ``busy_timeout_ms``
    for another writer (the Stop hook waits little and gives up).

    ``quick_check``: run SQLite's ``PRAGMA quick_check`` over the whole file before
    anything is written (before the migrations, before WAL mode is set) and refuse a
    damaged database with a ``DamagedStoreError`` (exit 3), the file left byte for byte.
    The cheap checks of every open (the header, the schema) miss a damaged page of a
    table or an index; the batch commands that write (``sync``, ``ingest``, ``prune
    --apply``, ``restore``, ``rebuild``, the note commands) ask for it, the per-reply
    ``record`` and Stop hook do not (see ``benchmarks/bench_quick_check.py`` for its cost).
    The check runs once per change of the file: a clean one is noted beside the database
    (``<db>-checked``, the file's device, inode, size and times), a file found as noted is
    not checked again, and closing a connection opened with the check notes the file as
    its own writes left it. Any other change (a ``record``, a page damaged from outside,
    frames in the ``-wal``) moves those times or stamps, and the whole file is checked.
    """
    path = os.fspath(path)
    if sqlite3.sqlite_version_info < MIN_SQLITE:
        raise StoreError(
            f"SQLite {sqlite3.sqlite_version} is too old for memcite's database "
            f"(needs {'.'.join(map(str, MIN_SQLITE))}: generated columns, UPDATE ... FROM)",
            hint="use a Python built with a newer SQLite",
        )
    exists = _check_file(path, readonly=readonly)
    new = not exists or os.path.getsize(path) == 0
    if not exists:
        _create_private(path)
    verified = False
    if exists and not readonly and _unclean_end(path):
        # A writer's connection could checkpoint into the file it refuses: a read-only one.
        _check_read_only(path)
        verified = quick_check
    elif exists and not readonly and quick_check and not new:
        verified = _check_once(path, lambda: _check_read_only(path))
    mode = "ro" if readonly else "rw"
    uri = "file:" + _uri_path(os.path.abspath(path)) + f"?mode={mode}"
    if readonly and not _writable(path):
        # A read-only mount, or a file we may not write: SQLite could not create the -shm it
        # needs to read a WAL database; immutable reads the file as it is, locking nothing.
        uri += "&immutable=1"
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None,
                               timeout=busy_timeout_ms / 1000, check_same_thread=False,
                               factory=_CheckedConnection)
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot open the database ({exc})") from None
    conn.count_open(path)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        if new and not readonly:
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        version = _user_version(conn)
        # Reading the schema is what finds most corruption, before anything is written.
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if not tables and not new and \
                conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
            raise StoreError(
                f"{path}: an empty SQLite database that memcite did not create (left untouched)",
                hint="point --db or MEMCITE_DB at a memcite database or at a new file",
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{path}: written by a newer memcite (schema {version}; this memcite knows "
                f"{SCHEMA_VERSION}); left untouched",
                hint="upgrade memcite (pip install -U codex-memcite)",
            )
        if tables and "_memcite_migrations" not in tables:
            raise StoreError(
                f"{path}: an SQLite database, but not memcite's (left untouched)",
                hint="point --db or MEMCITE_DB at a memcite database or at a new file",
            )
        problem = _schema_problem(tables, version)
        if problem is not None:
            raise DamagedStoreError(f"{path}: the database is damaged ({problem}); left untouched",
                                    hint=_DAMAGED_HINT)
        if readonly:
            conn.execute("PRAGMA query_only = 1")
            if quick_check:
                _check_once(path, lambda: check_integrity(conn, path), note=False)
            return conn
        _set_wal(conn, busy_timeout_ms)
        # WAL with NORMAL: a commit is atomic and durable across a crashed process;
        # only a power cut can lose the last transactions, never corrupt the file.
        conn.execute("PRAGMA synchronous = NORMAL")
        # A reply writes ~20 small pages; checkpointing (and syncing) every 4,000 pages
        # rather than 1,000 writes each hot page back once as often (~20% per reply).
        conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}")
        conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT_BYTES}")
        if migrate_schema and version < SCHEMA_VERSION:
            migrate(conn)
        if verified or (quick_check and new):
            conn.checked_path = path  # found intact (or new): its close notes it, unchanged
            conn.note_own_state()  # by others since (see _CheckedConnection)
    except StoreError:
        conn.close()
        raise
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise _open_error(path, exc, busy_timeout_ms) from None
    return conn


def _set_wal(conn: sqlite3.Connection, busy_timeout_ms: int) -> None:
    """Put the database in WAL mode, waiting up to ``busy_timeout_ms`` for the other
    connections: SQLite answers a change of journal mode that another connection's lock
    blocks with "database is locked" at once, without its busy handler (eight first writers
    of a new database at the same time: some were refused)."""
    deadline = time.monotonic() + busy_timeout_ms / 1000
    pause = 0.005
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if ("locked" not in text and "busy" not in text) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def _writable(path: str) -> bool:
    """Whether SQLite could write beside ``path`` (its -shm and -wal) and to it."""
    parent = os.path.dirname(os.path.abspath(path))
    return os.access(path, os.W_OK) and os.access(parent, os.W_OK | os.X_OK)


def _open_error(path: str, exc: sqlite3.DatabaseError,
                busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> StoreError:
    text = str(exc)
    if "readonly" in text or "read-only" in text:
        return StoreError(f"{path}: read-only ({text}); left untouched",
                          hint="choose another database with --db")
    if "locked" in text or "busy" in text:
        return StoreError(f"{path}: still locked by another process after "
                          f"{busy_timeout_ms / 1000:g} s ({text})",
                          hint="retry once the other memcite command has finished")
    if isinstance(exc, sqlite3.OperationalError) and "malformed" not in text \
            and "not a database" not in text:
        return StoreError(f"{path}: cannot open the database ({text}); left untouched")
    return DamagedStoreError(
        f"{path}: the database is corrupt or unreadable ({text}); left untouched",
        hint=_DAMAGED_HINT,
    )


def _uri_path(path: str) -> str:
    """Escape a file path for an SQLite ``file:`` URI."""
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


def schema_snapshot(conn: sqlite3.Connection) -> dict[str, object]:
    """Every table's columns (with generated ones) and every index: for tests and ``--json``."""
    snapshot: dict[str, object] = {}
    names = [row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name")]
    for name in names:
        columns = [row[1] for row in conn.execute(f"PRAGMA table_xinfo({name})")]
        indexes = {}
        for row in conn.execute(f"PRAGMA index_list({name})"):
            index_name = row[1]
            if index_name.startswith("sqlite_autoindex"):
                continue
            indexes[index_name] = [
                info[2] if info[2] is not None else "<expr>"
                for info in conn.execute(f"PRAGMA index_xinfo({index_name})")
                if info[5]  # key columns only
            ]
        snapshot[name] = {"columns": columns, "indexes": indexes}
    return snapshot
