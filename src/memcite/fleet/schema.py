"""The fleet server's schema, as named migrations (as ``memcite.ledger.store`` is for SQLite).

Each migration is a function ``mNNN_name(cur)`` run in one transaction, under an advisory lock
so that machines pushing at once migrate once; applied names are kept in
``memcite_fleet_migrations``. Applying them twice changes nothing.

The citation log (``fleet_replies``, ``fleet_cited_ids``, ``fleet_cited_entries``) is
partitioned by month of the reply's time (``replied_at``, Unix seconds, UTC): a report
``--since`` a date reads only the months after it, and old months can be detached or dropped
whole. A month's partitions are made by the first push that has a reply in it
(``ensure_months``); a time before 1970 or from 2200 on lands in the default partition.
Every row carries ``machine_id``, and the log's rows carry the reply's ``cwd`` (for ``--project``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable

MIGRATION_LOCK = 0x6D656D63_01  # pg_advisory_xact_lock key: the schema
PARTITION_LOCK = 0x6D656D63_02  # and making a month's partitions
LOG_TABLES = ("fleet_replies", "fleet_cited_ids", "fleet_cited_entries")
FIRST_MONTH, LAST_YEAR = (1970, 1), 2200


def m001_initial(cur) -> None:
    """Machines and their ledgers' cursors, the partitioned citation log, the inventory."""
    cur.execute("""
        CREATE TABLE IF NOT EXISTS fleet_machines (
            id serial PRIMARY KEY,
            name text NOT NULL UNIQUE,
            first_push_at bigint NOT NULL,
            last_push_at bigint NOT NULL
        );
        -- One local ledger of a machine and how far it was pushed: its replies up to
        -- last_reply_id (the ledger's own row id; last_reply_key tells a rebuilt ledger apart),
        -- and the inventory as of the marks below. Moved in each batch's transaction.
        CREATE TABLE IF NOT EXISTS fleet_ledgers (
            machine_id integer NOT NULL REFERENCES fleet_machines (id),
            ledger text NOT NULL,
            last_reply_id bigint NOT NULL DEFAULT 0,
            last_reply_key text,
            inventory_mark text,
            pushed_at bigint,
            PRIMARY KEY (machine_id, ledger)
        );
        CREATE TABLE IF NOT EXISTS fleet_replies (
            machine_id integer NOT NULL,
            reply_key text NOT NULL,
            key_kind text NOT NULL,
            text_sha256 text NOT NULL,
            replied_at bigint NOT NULL,
            recorded_at bigint NOT NULL,
            thread_id text,
            cwd text,
            profile text NOT NULL,
            policy text NOT NULL,
            origin text,
            memory_root text,
            blocks integer NOT NULL,
            unterminated smallint NOT NULL,
            diagnostics integer NOT NULL,
            PRIMARY KEY (machine_id, replied_at, reply_key)
        ) PARTITION BY RANGE (replied_at);
        CREATE TABLE IF NOT EXISTS fleet_cited_ids (
            machine_id integer NOT NULL,
            reply_key text NOT NULL,
            replied_at bigint NOT NULL,
            position integer NOT NULL,
            rollout_id text NOT NULL,
            thread_id text,
            terminated smallint NOT NULL,
            counted smallint NOT NULL,
            known smallint NOT NULL,
            cwd text,
            PRIMARY KEY (machine_id, replied_at, reply_key, position)
        ) PARTITION BY RANGE (replied_at);
        CREATE TABLE IF NOT EXISTS fleet_cited_entries (
            machine_id integer NOT NULL,
            reply_key text NOT NULL,
            replied_at bigint NOT NULL,
            position integer NOT NULL,
            path text NOT NULL,
            line_start integer NOT NULL,
            line_end integer NOT NULL,
            note text NOT NULL,
            line integer NOT NULL,
            terminated smallint NOT NULL,
            lines_sha256 text,
            -- as the machine checked the entry when it pushed it (memcite.retention.checks)
            outcome text NOT NULL,
            moved_to text,
            file_key text NOT NULL,             -- the file, relative to the memory folder
            cwd text,
            PRIMARY KEY (machine_id, replied_at, reply_key, position)
        ) PARTITION BY RANGE (replied_at);
        -- The report's questions: ids no memory has, ids that are not UUIDs, checks by place.
        CREATE INDEX IF NOT EXISTS fleet_cited_ids_unknown
            ON fleet_cited_ids (thread_id) WHERE known = 0 AND counted = 1;
        CREATE INDEX IF NOT EXISTS fleet_cited_ids_not_uuid
            ON fleet_cited_ids (rollout_id) WHERE thread_id IS NULL;
        CREATE INDEX IF NOT EXISTS fleet_cited_entries_check
            ON fleet_cited_entries (path, line_start, line_end, lines_sha256, outcome);
        CREATE TABLE IF NOT EXISTS fleet_replies_default PARTITION OF fleet_replies DEFAULT;
        CREATE TABLE IF NOT EXISTS fleet_cited_ids_default PARTITION OF fleet_cited_ids DEFAULT;
        CREATE TABLE IF NOT EXISTS fleet_cited_entries_default
            PARTITION OF fleet_cited_entries DEFAULT;

        -- Each machine's inventory of memories, as its ledger holds it (memcite's counts from
        -- its own log, Codex's counters as of its last sync).
        CREATE TABLE IF NOT EXISTS fleet_memories (
            machine_id integer NOT NULL,
            thread_id text NOT NULL,
            source_updated_at bigint,
            generated_at bigint,
            rollout_slug text,
            rollout_summary_file text,
            cwd text,
            git_branch text,
            selected_for_phase2 smallint NOT NULL,
            has_raw_memory smallint NOT NULL,
            has_rollout_summary smallint NOT NULL,
            usage_count bigint NOT NULL,
            last_usage bigint,
            codex_usage_count bigint,
            codex_last_usage bigint,
            source text NOT NULL,
            codex_home text,
            synced_at bigint NOT NULL,
            missing_since bigint,
            archived_at bigint,
            PRIMARY KEY (machine_id, thread_id)
        );
        CREATE INDEX IF NOT EXISTS fleet_memories_thread ON fleet_memories (thread_id);
        -- Each machine's last finished sync per Codex home: which store it read.
        CREATE TABLE IF NOT EXISTS fleet_syncs (
            machine_id integer NOT NULL,
            codex_home text NOT NULL,
            store text NOT NULL,
            finished_at bigint NOT NULL,
            stage1_rows integer NOT NULL,
            PRIMARY KEY (machine_id, codex_home)
        );
        -- The headings of MEMORY.md as each machine last pushed them (citations per section).
        CREATE TABLE IF NOT EXISTS fleet_sections (
            machine_id integer NOT NULL,
            position integer NOT NULL,
            title text NOT NULL,
            path text NOT NULL,
            level integer NOT NULL,
            line integer NOT NULL,
            end_line integer NOT NULL,
            pushed_at bigint NOT NULL,
            PRIMARY KEY (machine_id, position)
        );
        -- One row per push: what it sent (the log a team reads to see who pushed when).
        CREATE TABLE IF NOT EXISTS fleet_pushes (
            id bigserial PRIMARY KEY,
            machine_id integer NOT NULL,
            ledger text NOT NULL,
            started_at bigint NOT NULL,
            finished_at bigint,
            replies bigint NOT NULL DEFAULT 0,
            citations bigint NOT NULL DEFAULT 0,
            entries bigint NOT NULL DEFAULT 0,
            memories bigint NOT NULL DEFAULT 0
        );
    """)


MIGRATIONS: tuple[Callable, ...] = (m001_initial,)


def migration_name(migration: Callable) -> str:
    return migration.__name__


def migrate(conn) -> list[str]:
    """Apply the migrations the server lacks (one transaction each); the names applied."""
    applied_now = []
    with conn.transaction():
        cur = conn.cursor()
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        cur.execute("CREATE TABLE IF NOT EXISTS memcite_fleet_migrations"
                    " (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
        done = {row[0] for row in cur.execute("SELECT name FROM memcite_fleet_migrations")}
        for migration in MIGRATIONS:
            name = migration_name(migration)
            if name in done:
                continue
            with conn.transaction():
                migration(cur)
                cur.execute("INSERT INTO memcite_fleet_migrations (name) VALUES (%s)", (name,))
            applied_now.append(name)
    return applied_now


def applied(conn) -> list[str]:
    """The migrations the server has (none when it has no fleet schema yet)."""
    cur = conn.cursor()
    if cur.execute("SELECT to_regclass('memcite_fleet_migrations')").fetchone()[0] is None:
        return []
    return [row[0] for row in cur.execute(
        "SELECT name FROM memcite_fleet_migrations ORDER BY name")]


def month_of(seconds: int) -> tuple[int, int] | None:
    """The (year, month) partition of a reply time, or None for the default partition."""
    try:
        moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None
    if (moment.year, moment.month) < FIRST_MONTH or moment.year >= LAST_YEAR:
        return None
    return moment.year, moment.month


def _month_bounds(year: int, month: int) -> tuple[int, int]:
    start = dt.datetime(year, month, 1, tzinfo=dt.UTC)
    end = dt.datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=dt.UTC)
    return int(start.timestamp()), int(end.timestamp())


def ensure_months(conn, months: Iterable[tuple[int, int]], known: set) -> None:
    """Make each month's partitions of the log tables that do not exist yet (own transaction)."""
    wanted = sorted(set(months) - known)
    if not wanted:
        return
    with conn.transaction():
        cur = conn.cursor()
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (PARTITION_LOCK,))
        for year, month in wanted:
            low, high = _month_bounds(year, month)
            for table in LOG_TABLES:
                name = f"{table}_{year:04d}_{month:02d}"
                if cur.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0] is None:
                    cur.execute(f"CREATE TABLE {name} PARTITION OF {table}"
                                f" FOR VALUES FROM ({low}) TO ({high})")
    known.update(wanted)
