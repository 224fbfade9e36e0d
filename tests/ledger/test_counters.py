"""The counters ``stats`` reads (memcite.ledger.counters): after any sequence of record, sync,
restore, rebuild and raw writes they equal the plain counts, and ``stats`` says the same with
them as without them."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import uuid
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcite.ledger import counters
from memcite.ledger.recording import ReplyInput, rebuild, record_reply
from memcite.ledger.store import open_store, transaction
from memcite.ledger.sync import sync_codex_home
from memcite.retention import stats as stats_module
from memcite.retention.archive import restore_memories
from memcite.retention.stats import collect_stats

NOW = 1_800_000_000
DAY = 86_400
THREADS = [str(uuid.UUID(int=n + 1, version=4)) for n in range(4)]
CODEX_SCHEMA = """
CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY, source_updated_at INTEGER NOT NULL,
    raw_memory TEXT NOT NULL, rollout_summary TEXT NOT NULL, rollout_slug TEXT,
    generated_at INTEGER NOT NULL, usage_count INTEGER, last_usage INTEGER,
    selected_for_phase2 INTEGER NOT NULL DEFAULT 0, selected_for_phase2_source_updated_at INTEGER);
"""


def _no_counters():
    """``stats`` with every counter unreadable: the plain counts of the tables."""
    return mock.patch.multiple(stats_module, memory_totals=lambda conn: None,
                               reply_totals=lambda conn: None,
                               week_counters=lambda conn, first, last: None,
                               active_before_day=lambda conn, rule, day: None)


def _report(conn, root, **options) -> dict:
    report = collect_stats(conn, memory_root=root, as_of=NOW, max_unused_days=30, limit=0,
                           weeks=True, **options).to_dict()
    report.pop("entries")
    return report


def assert_counters_exact(conn, root) -> None:
    """The counters equal a fresh count, and every stats report is the same read through them."""
    assert counters.counter_differences(conn) == []
    for options in ({}, {"rule": "codex"}, {"since": NOW - 20 * DAY}):
        with_counters = _report(conn, root, **options)
        with _no_counters():
            assert _report(conn, root, **options) == with_counters


class Home:
    """A Codex home with its table, and memcite's database synced from it."""

    def __init__(self, folder: str, empty_ledger_copy=None) -> None:
        self.home = os.path.join(folder, "codex_home")
        self.root = os.path.join(self.home, "memories")
        os.makedirs(self.root)
        self.codex = sqlite3.connect(os.path.join(self.home, "memories_1.sqlite"),
                                     isolation_level=None)
        self.codex.executescript(CODEX_SCHEMA)
        path = os.path.join(folder, "memcite.sqlite")
        if empty_ledger_copy is not None:  # a migrated empty ledger copied, not migrated again
            empty_ledger_copy(path)
        self.conn = open_store(path)
        self.replies = 0

    def put(self, n: int, updated_days_ago: int, codex_count: int | None,
            used_days_ago: int | None = None) -> None:
        self.codex.execute(
            "INSERT OR REPLACE INTO stage1_outputs (thread_id, source_updated_at, raw_memory,"
            " rollout_summary, generated_at, usage_count, last_usage) VALUES (?, ?, 'm', 's', ?,"
            " ?, ?)", (THREADS[n], NOW - updated_days_ago * DAY, NOW, codex_count,
                       None if used_days_ago is None else NOW - used_days_ago * DAY))

    def apply(self, step: tuple) -> None:
        kind, *args = step
        conn = self.conn
        if kind == "put":
            self.put(*args)
        elif kind == "drop":
            self.codex.execute("DELETE FROM stage1_outputs WHERE thread_id = ?", (THREADS[args[0]],))
        elif kind in ("put and sync", "drop and sync"):
            self.apply((kind.split()[0], *args))
            self.apply(("sync",))
        elif kind == "sync":
            sync_codex_home(conn, self.home, now=NOW, batch_rows=3)
        elif kind == "record":
            ids, days_ago, late = args
            text = ("ok\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:1-1|note=[t]\n"
                    "</citation_entries>\n<rollout_ids>\n"
                    + "\n".join(THREADS[i] if i < len(THREADS) else "not-a-uuid" for i in ids)
                    + "\n</rollout_ids>\n</oai-mem-citation>")
            self.replies += 1
            at = NOW - days_ago * DAY
            record_reply(conn, ReplyInput(text, id=f"r{self.replies}", at=at), memory_root=self.root,
                         now=at + (2 * 3600 if late else 0))
        elif kind == "archive":  # as an earlier memcite's prune --apply did
            with transaction(conn):
                conn.execute("UPDATE memories SET archived_at = ? WHERE thread_id = ?",
                             (NOW, THREADS[args[0]]))
        elif kind == "restore":
            restore_memories(conn, thread_ids=[THREADS[args[0]]], now=NOW, missing_ok=True)
        elif kind == "tamper":  # a count that drifted from the log: rebuild puts it back
            with transaction(conn):
                conn.execute("UPDATE memories SET usage_count = usage_count + 2,"
                             " last_usage = ? WHERE thread_id = ?", (NOW, THREADS[args[0]]))
        elif kind == "rebuild":
            rebuild(conn)
        elif kind == "interrupted sync":  # a large first load killed before its end
            with transaction(conn):
                counters.suspend_memory_totals(conn)
                conn.execute("UPDATE memories SET missing_since = ?, codex_usage_count = 7"
                             " WHERE thread_id = ?", (NOW, THREADS[args[0]]))


thread = st.integers(0, len(THREADS) - 1)
steps = st.one_of(
    st.tuples(st.just("put"), thread, st.sampled_from([0, 29, 31, 60, 400]),
              st.sampled_from([None, 0, 1, 5]), st.sampled_from([None, 1, 29, 31, 200])),
    st.tuples(st.just("drop"), thread),
    st.tuples(st.just("put and sync"), thread, st.sampled_from([0, 29, 31, 60, 400]),
              st.sampled_from([None, 0, 1, 5]), st.sampled_from([None, 1, 29, 31, 200])),
    st.tuples(st.just("drop and sync"), thread),
    st.tuples(st.just("sync")),
    st.tuples(st.just("record"), st.lists(st.integers(0, len(THREADS) + 1), max_size=4),
              st.sampled_from([0, 2, 29, 31, 90]), st.booleans()),
    st.tuples(st.just("archive"), thread),
    st.tuples(st.just("restore"), thread),
    st.tuples(st.just("tamper"), thread),
    st.tuples(st.just("rebuild")),
    st.tuples(st.just("interrupted sync"), thread),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(steps, min_size=1, max_size=12))
def test_counters_equal_the_plain_counts_after_any_writes(empty_ledger_copy, plan):
    with tempfile.TemporaryDirectory() as folder:
        home = Home(folder, empty_ledger_copy)
        try:
            for step in plan:
                home.apply(step)
                if counters.memory_totals(home.conn) is None:  # suspended: stats counts
                    with _no_counters():
                        expected = _report(home.conn, home.root)
                    assert _report(home.conn, home.root) == expected
                    continue
                assert_counters_exact(home.conn, home.root)
            home.apply(("sync",))  # a sync ends any suspension: exact again
            assert counters.memory_totals(home.conn) is not None
            assert_counters_exact(home.conn, home.root)
        finally:
            home.conn.close()
            home.codex.close()


@pytest.fixture
def home(tmp_path):
    home = Home(str(tmp_path))
    for n in range(len(THREADS)):
        home.put(n, 20 * n, n % 3 or None, 10 * n)
    sync_codex_home(home.conn, home.home, now=NOW)
    home.apply(("record", [0, 1, 1, 9], 3, False))
    home.apply(("record", [2], 40, True))
    yield home
    home.conn.close()
    home.codex.close()


def test_a_large_first_sync_counts_once_at_its_end(tmp_path):
    home = Home(str(tmp_path))
    for n in range(len(THREADS)):
        home.put(n, n, 1)
    statements = []
    home.conn.set_trace_callback(statements.append)
    sync_codex_home(home.conn, home.home, now=NOW)
    home.conn.set_trace_callback(None)
    # The triggers fired for no row (the trace shows a trigger's statements as "-- TRIGGER").
    assert not [s for s in statements if "memories_count" in s or "memories_days" in s]
    assert counters.memory_totals(home.conn)["memories"] == len(THREADS)
    assert_counters_exact(home.conn, home.root)


@pytest.mark.parametrize("plan", [
    # a memory cited once, then gone from Codex
    [("record", [3], 2, False), ("drop", 3), ("sync",)],
    # Codex's last use moves while memcite's own, later, stays the last use
    [("record", [1], 0, False), ("put", 1, 400, 3, 200), ("sync",), ("put", 1, 400, 3, 31),
     ("sync",)],
    # archived, cited, restored; a folder-only memory is out of Codex's scope
    [("record", [2, 2], 1, True), ("archive", 2), ("tamper", 2), ("restore", 2), ("rebuild",)],
    [("interrupted sync", 3), ("record", [3], 5, False), ("sync",)],
])
def test_sequences_keep_the_counters_exact(home, plan):
    for step in plan:
        home.apply(step)
        if counters.memory_totals(home.conn) is not None:
            assert_counters_exact(home.conn, home.root)
    assert counters.memory_totals(home.conn) is not None


@pytest.mark.parametrize("sql", [
    "DELETE FROM memories WHERE thread_id = '{t0}'",
    "UPDATE memories SET source = 'raw_memories', usage_count = 0 WHERE thread_id = '{t1}'",
    "UPDATE memories SET codex_last_usage = NULL, source_updated_at = NULL",
    "DELETE FROM cited_ids WHERE position = 0",
    "UPDATE cited_ids SET counted = 1 - counted",
    "UPDATE replies SET replied_at = replied_at - 30 * 86400, recorded_at = recorded_at + 7200",
    "DELETE FROM replies WHERE id = 1",
])
def test_any_write_keeps_the_counters_exact(home, sql):
    with transaction(home.conn):
        home.conn.execute(sql.format(t0=THREADS[0], t1=THREADS[1]))
    assert_counters_exact(home.conn, home.root)


def test_rebuild_check_reports_a_drifted_counter_and_rebuild_recounts_it(home):
    conn = home.conn
    with transaction(conn):
        conn.execute("UPDATE memory_totals SET cited = cited + 1")
        conn.execute("UPDATE citation_weeks SET citations = citations + 2")
    report = rebuild(conn, apply=False)
    names = [c["counter"] for c in report.counters]
    assert "memory_totals.cited" in names
    assert any(name.startswith("citation_weeks.") for name in names)
    assert not report.applied
    report = rebuild(conn)
    assert report.applied and report.counters
    assert rebuild(conn, apply=False).counters == ()
    assert_counters_exact(conn, home.root)


def test_an_interrupted_sync_is_reported_and_stats_counts_the_table(home):
    conn = home.conn
    with transaction(conn):
        counters.suspend_memory_totals(conn)
    assert counters.memory_totals(conn) is None
    assert [c["counter"] for c in rebuild(conn, apply=False).counters] == [
        "memory_totals.exact"]
    with _no_counters():
        expected = _report(conn, home.root)
    assert _report(conn, home.root) == expected
    sync_codex_home(conn, home.home, now=NOW)  # the next sync counts again
    assert counters.memory_totals(conn) is not None


def test_stats_reads_no_table_whole_through_the_counters(home):
    """The warm path (one home, no --since) scans neither memories nor replies (an index
    walked in order for the first rows of a list, up to a LIMIT, is no scan of the table)."""
    statements = []
    home.conn.set_trace_callback(statements.append)
    collect_stats(home.conn, memory_root=home.root, as_of=NOW, max_unused_days=30, weeks=True)
    home.conn.set_trace_callback(None)
    scans = []
    for sql in statements:
        if sql.lstrip().upper().startswith(("SELECT", "WITH")):
            for row in home.conn.execute("EXPLAIN QUERY PLAN " + sql):
                walk = "USING INDEX" in row[-1] and " LIMIT " in sql
                if row[-1].startswith("SCAN") and not walk and (
                        "memories" in row[-1] or " r" in row[-1] or "replies" in row[-1]):
                    scans.append((sql, row[-1]))
    assert scans == []


def test_an_older_database_read_without_migrating_is_counted(tmp_path, home):
    conn = home.conn
    with contextlib.ExitStack():
        expected = _report(conn, home.root)
    for table in ("memory_totals", "reply_totals", "citation_weeks", "last_used_days"):
        conn.execute(f"DROP TABLE {table}")  # the triggers go with them
    assert _report(conn, home.root) == expected


def test_several_homes_in_one_database_are_counted_apart(home, tmp_path):
    """With a second home in the database, each home's report keeps to its rows (the plain
    counts of that home), with the counters as without them."""
    other = Home(str(tmp_path / "other"))
    try:
        other.conn.close()
        other.conn = home.conn  # the same memcite database
        other.codex.execute(
            "INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory,"
            " rollout_summary, generated_at, usage_count) VALUES (?, ?, 'm', 's', ?, 2)",
            (str(uuid.UUID(int=99, version=4)), NOW - 90 * DAY, NOW))
        sync_codex_home(home.conn, other.home, now=NOW)
        assert counters.counter_differences(home.conn) == []
        for where in (home, other):
            options = {"codex_home": os.path.realpath(where.home)}
            with_counters = _report(home.conn, where.root, **options)
            with _no_counters():
                assert _report(home.conn, where.root, **options) == with_counters
        assert _report(home.conn, other.root, codex_home=os.path.realpath(other.home)
                       )["memories"] == 1
    finally:
        other.codex.close()


def test_the_counts_outside_codex_go_through_their_index_or_without_it(home):
    """A recount after a large first load counts the rows outside Codex through their small
    index (left to itself, SQLite walked a million rows through another index); a schema
    without that index is counted all the same."""
    conn = home.conn
    home.apply(("drop and sync", 2))  # a row gone from Codex: counted outside it
    expected = counters._count_memory_totals(conn)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    with transaction(conn):
        counters.recount(conn, everything=False)
    conn.set_trace_callback(None)
    outside = [s for s in statements if "missing_since IS NOT NULL" in s and "sum(" in s]
    assert outside and all("INDEXED BY memories_outside_codex" in s for s in outside)
    for statement in outside:
        plan = " ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + statement))
        assert "memories_outside_codex" in plan, plan
    with transaction(conn):
        conn.execute("DROP INDEX memories_outside_codex")
    assert counters._count_memory_totals(conn) == expected
    assert expected[list(counters.MEMORY_TOTALS).index("gone")] == 1
