"""The store: a freshly migrated schema, migrations, and refusing files that are not ours."""

from __future__ import annotations

import hashlib
import os
import sqlite3

import pytest

from memcite.ledger import store
from memcite.ledger.store import StoreError, migrate, open_store, schema_snapshot

# What a fresh database must hold: every column (generated ones included) and index.
EXPECTED_SCHEMA = {
    "_memcite_migrations": {"columns": ["name", "applied_at"], "indexes": {}},
    "memories": {
        "columns": [
            "thread_id", "source_updated_at", "generated_at", "rollout_slug",
            "rollout_summary_file", "rollout_path", "cwd", "git_branch", "selected_for_phase2",
            "selected_for_phase2_source_updated_at", "has_raw_memory", "has_rollout_summary",
            "usage_count", "last_usage", "codex_usage_count", "codex_last_usage", "source",
            "codex_home", "first_synced_at", "synced_at", "last_sync_id", "missing_since",
            "archived_at", "last_used", "codex_last_used",
        ],
        "indexes": {
            "memories_active_last_used": ["last_used", "thread_id"],
            "memories_codex_retention": [
                "selected_for_phase2", "codex_last_used", "source_updated_at", "thread_id"],
            "memories_usage_count": ["usage_count", "last_usage"],
            "memories_archived_at": ["archived_at"],
            "memories_codex_home_sync": ["codex_home", "last_sync_id"],
            "memories_codex_last_used": ["codex_last_used", "thread_id"],  # m002
            "memories_outside_codex": ["missing_since", "source"],  # m003, partial
            "memories_top_memcite": ["<expr>", "<expr>", "thread_id"],  # m009, partial
            "memories_summary_file": ["rollout_summary_file", "codex_home"],  # m012, partial
            "memories_codex_cited": ["codex_usage_count"],  # m009, partial
        },
    },
    "archive_log": {  # m002
        "columns": ["id", "action", "thread_id", "at", "rule", "reason", "last_used",
                    "file_from", "file_to", "problem"],
        "indexes": {"archive_log_thread": ["thread_id", "id"]},
    },
    "note_log": {  # m004
        "columns": ["id", "at", "command", "action", "project", "slug", "entry_id", "hash_before",
                    "hash_after", "confirmed_by", "user", "file"],
        "indexes": {"note_log_slug_entry": ["slug", "entry_id", "id"]},
    },
    "forget_requests": {  # m005
        "columns": ["id", "batch", "thread_id", "codex_home", "way", "state", "requested_at",
                    "completed_at", "rule", "reason", "last_used", "label", "summary_file",
                    "note_path", "note_sha256", "codex_db", "stage1_row", "seen_gone_at", "undone_at",
                    "undo_note_path", "problem"],
        "indexes": {"forget_requests_thread": ["thread_id", "id"],
                    "forget_requests_open": ["codex_home", "thread_id"]},  # partial
    },
    "entry_requests": {  # m008
        "columns": ["id", "batch", "codex_home", "path", "line_start", "line_end", "entry_sha256",
                    "title", "tier", "action", "reason", "citations", "last_cited", "state",
                    "requested_at", "completed_at", "note_path", "note_sha256", "problem"],
        "indexes": {"entry_requests_open": ["codex_home", "entry_sha256"]},  # partial
    },
    "syncs": {
        "columns": ["id", "codex_home", "started_at", "finished_at", "stage1_rows",
                    "folder_threads", "inserted", "updated", "marked_missing", "store"],
        "indexes": {},
    },
    "replies": {
        "columns": ["id", "reply_key", "key_kind", "text_sha256", "replied_at", "recorded_at",
                    "thread_id", "cwd", "profile", "policy", "origin", "memory_root", "blocks",
                    "unterminated", "diagnostics"],
        "indexes": {"replies_replied_at": ["replied_at"]},
    },
    "cited_ids": {
        "columns": ["reply_id", "position", "rollout_id", "thread_id", "terminated", "counted",
                    "known"],
        "indexes": {
            "cited_ids_unknown": ["thread_id"],  # partial: known = 0 AND counted = 1
            "cited_ids_not_uuid": ["rollout_id"],  # partial: thread_id IS NULL
        },
    },
    "session_offsets": {  # m006
        "columns": ["path", "session_id", "cwd", "byte_offset", "lines_read", "fingerprint",
                    "size", "mtime_ns", "updated_at"],
        "indexes": {},
    },
    "cited_entries": {
        "columns": ["reply_id", "position", "path", "line_start", "line_end", "note", "line",
                    "terminated", "lines_sha256"],
        "indexes": {  # m002
            "cited_entries_check": ["path", "line_start", "line_end", "lines_sha256"]},
    },
    "memory_totals": {  # m010: counters kept by triggers
        "columns": ["id", "exact", "memories", "archived", "archived_cited", "cited", "citations",
                    "codex_cited", "codex_citations", "gone", "gone_cited", "folder_only",
                    "outside_codex_cited"],
        "indexes": {},
    },
    "reply_totals": {"columns": ["id", "replies", "late", "late_after"], "indexes": {}},  # m010
    "citation_weeks": {"columns": ["week", "citations"], "indexes": {}},  # m010
    "last_used_days": {"columns": ["rule", "day", "memories"], "indexes": {}},  # m010
    "search_files": {  # m013: the stamps of the files memcite search indexed
        "columns": ["id", "path", "owner", "kind", "mtime_ns", "size", "inode", "device", "rows",
                    "indexed_at"],
        "indexes": {"search_files_owner": ["owner", "kind"]},
    },
    "ingest_checks": {  # m014: the last whole read of each file `ingest FILE` was given
        "columns": ["path", "file_stamp", "rows_digest", "report", "checked_at"],
        "indexes": {},
    },
    # m013: the FTS5 table of memcite search, and the shadow tables FTS5 keeps beside it
    "search_index": {"columns": ["text", "owner", "kind", "search_index", "rank"], "indexes": {}},
    "search_index_config": {"columns": ["k", "v"], "indexes": {}},
    "search_index_content": {"columns": ["id", "c0", "c1", "c2"], "indexes": {}},
    "search_index_data": {"columns": ["id", "block"], "indexes": {}},
    "search_index_docsize": {"columns": ["id", "sz"], "indexes": {}},
    "search_index_idx": {"columns": ["segid", "term", "pgno"], "indexes": {}},
}
# The triggers that keep m010's counters.
EXPECTED_TRIGGERS = sorted(
    f"{table}_{kind}_{change}" for table, kind in (("memories", "count"), ("memories", "days"),
                                                   ("replies", "count"), ("cited_ids", "count"))
    for change in ("insert", "delete", "update"))


ALL_MIGRATIONS = sorted(store.migration_name(m) for m in store.MIGRATIONS)


def _digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _siblings(path) -> list[str]:
    folder = os.path.dirname(path)
    return sorted(name for name in os.listdir(folder) if name.startswith(os.path.basename(path)))


def test_fresh_database_has_exactly_the_expected_columns_and_indexes(tmp_path):
    conn = open_store(tmp_path / "m.sqlite")
    snapshot = schema_snapshot(conn)
    assert snapshot == {name: {"columns": spec["columns"], "indexes": spec["indexes"]}
                        for name, spec in EXPECTED_SCHEMA.items()}
    assert [row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")] == EXPECTED_TRIGGERS


def test_unique_reply_key_is_enforced(tmp_path):
    conn = open_store(tmp_path / "m.sqlite")
    row = ("k", "id", "x", 1, 1, None, None, "codex", "default", None, None, 0, 0, 0)
    sql = ("INSERT INTO replies (reply_key, key_kind, text_sha256, replied_at, recorded_at,"
           " thread_id, cwd, profile, policy, origin, memory_root, blocks, unterminated,"
           " diagnostics) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    conn.execute(sql, row)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(sql, row)


def test_database_is_wal_with_a_busy_timeout(tmp_path):
    conn = open_store(tmp_path / "m.sqlite")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000


def test_migrations_are_recorded_and_safe_to_apply_twice(tmp_path):
    conn = open_store(tmp_path / "m.sqlite")
    before = schema_snapshot(conn)
    assert migrate(conn) == []
    assert schema_snapshot(conn) == before
    names = [row[0] for row in conn.execute("SELECT name FROM _memcite_migrations ORDER BY name")]
    assert names == ALL_MIGRATIONS
    assert conn.execute("PRAGMA user_version").fetchone()[0] == store.SCHEMA_VERSION
    # Running every migration's body again changes nothing either.
    with store.transaction(conn):
        for migration in store.MIGRATIONS:
            migration(conn)
    assert schema_snapshot(conn) == before


def test_reopening_does_not_migrate_again(tmp_path):
    open_store(tmp_path / "m.sqlite").close()
    conn = open_store(tmp_path / "m.sqlite")
    applied = conn.execute("SELECT name, applied_at FROM _memcite_migrations").fetchall()
    assert len(applied) == store.SCHEMA_VERSION
    conn.close()
    conn = open_store(tmp_path / "m.sqlite")
    assert conn.execute("SELECT name, applied_at FROM _memcite_migrations").fetchall() == applied


def test_a_failing_migration_leaves_nothing_behind(tmp_path, monkeypatch):
    conn = open_store(tmp_path / "m.sqlite")

    def m999_broken(conn):
        conn.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    monkeypatch.setattr(store, "MIGRATIONS", (*store.MIGRATIONS, m999_broken))
    with pytest.raises(RuntimeError):
        migrate(conn)
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in tables
    assert conn.execute("PRAGMA user_version").fetchone()[0] == store.SCHEMA_VERSION
    names = [r[0] for r in conn.execute("SELECT name FROM _memcite_migrations ORDER BY name")]
    assert names == ALL_MIGRATIONS


def test_new_migrations_are_applied_in_order_and_recorded(tmp_path, monkeypatch):
    open_store(tmp_path / "m.sqlite").close()

    def m999_extra(conn):
        conn.execute("CREATE TABLE extra (x)")

    monkeypatch.setattr(store, "MIGRATIONS", (*store.MIGRATIONS, m999_extra))
    monkeypatch.setattr(store, "SCHEMA_VERSION", len(store.MIGRATIONS))
    conn = open_store(tmp_path / "m.sqlite")
    names = [r[0] for r in conn.execute("SELECT name FROM _memcite_migrations ORDER BY name")]
    assert names == [*ALL_MIGRATIONS, "m999_extra"]
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(store.MIGRATIONS)
    assert "extra" in schema_snapshot(conn)


def test_a_zero_byte_file_becomes_a_database(tmp_path):
    path = tmp_path / "empty.sqlite"
    path.write_bytes(b"")
    conn = open_store(path)
    assert "memories" in schema_snapshot(conn)


@pytest.mark.parametrize(
    "content",
    [b"hello, this is a text file\n" * 10, b"\x00" * 4096, b"SQLite format 3\x00short"],
    ids=["text", "zeros", "truncated-header"],
)
def test_a_non_sqlite_file_is_refused_and_left_untouched(tmp_path, content):
    path = tmp_path / "m.sqlite"
    path.write_bytes(content)
    with pytest.raises(StoreError) as error:
        open_store(path)
    assert "left untouched" in str(error.value)
    assert path.read_bytes() == content
    assert _siblings(path) == ["m.sqlite"]


def test_a_corrupt_database_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "m.sqlite"
    open_store(path).close()
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the schema page
    path.write_bytes(bytes(data))
    before = _digest(path)
    with pytest.raises(StoreError) as error:
        open_store(path)
    assert "corrupt" in str(error.value)
    assert _digest(path) == before
    assert _siblings(path) == ["m.sqlite"]


def test_another_applications_database_is_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE notes (body TEXT)")
    other.commit()
    other.close()
    before = _digest(path)
    with pytest.raises(StoreError, match="not memcite's"):
        open_store(path)
    assert _digest(path) == before


def test_a_database_from_a_newer_memcite_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "m.sqlite"
    conn = open_store(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    before = _digest(path)
    with pytest.raises(StoreError, match=r"newer memcite \(schema 99"):
        open_store(path)
    assert _digest(path) == before


def test_a_read_only_database_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "m.sqlite"
    open_store(path).close()
    before = _digest(path)
    real_access = os.access
    monkeypatch.setattr(store.os, "access",
                        lambda p, mode: False if os.fspath(p) == str(path) else real_access(p, mode))
    with pytest.raises(StoreError, match="read-only"):
        open_store(path)
    assert _digest(path) == before


def test_a_read_only_folder_is_refused(tmp_path, monkeypatch):
    # os.access stands in for the file modes, which root (as in CI) ignores.
    folder = tmp_path / "ro"
    folder.mkdir()
    real_access = os.access
    monkeypatch.setattr(store.os, "access",
                        lambda p, mode: False if os.fspath(p) == str(folder) else real_access(p, mode))
    with pytest.raises(StoreError, match="read-only"):
        open_store(folder / "m.sqlite")
    assert list(folder.iterdir()) == []


def test_a_directory_or_a_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(StoreError, match="is a directory"):
        open_store(tmp_path)
    with pytest.raises(StoreError, match="does not exist"):
        open_store(tmp_path / "nowhere" / "m.sqlite")


def test_readonly_open_never_writes(tmp_path):
    path = tmp_path / "m.sqlite"
    open_store(path).close()
    conn = open_store(path, readonly=True)
    with pytest.raises(sqlite3.OperationalError):
        conn.execute("INSERT INTO syncs (codex_home, started_at) VALUES ('x', 1)")
    with pytest.raises(StoreError, match="no such database"):
        open_store(tmp_path / "absent.sqlite", readonly=True)


def test_transaction_rolls_back_on_error(tmp_path):
    conn = open_store(tmp_path / "m.sqlite")
    with pytest.raises(ZeroDivisionError), store.transaction(conn):
        conn.execute("INSERT INTO syncs (codex_home, started_at) VALUES ('x', 1)")
        1 / 0  # noqa: B018
    assert conn.execute("SELECT count(*) FROM syncs").fetchone()[0] == 0
    assert not conn.in_transaction


def test_partial_indexes_hold_only_their_rows(tmp_path):
    conn = open_store(tmp_path / "m.sqlite")
    sql = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index'"
                            " AND sql IS NOT NULL"))
    assert sql["cited_ids_unknown"].endswith("WHERE known = 0 AND counted = 1")
    assert sql["cited_ids_not_uuid"].endswith("WHERE thread_id IS NULL")
    assert sql["memories_active_last_used"].endswith("WHERE archived_at IS NULL")


@pytest.mark.parametrize(
    ("query", "index"),
    [
        ("SELECT thread_id, last_used FROM memories WHERE archived_at IS NULL"
         " AND last_used < 5 ORDER BY last_used, thread_id", "memories_active_last_used"),
        ("SELECT thread_id FROM memories WHERE usage_count > 0"
         " ORDER BY usage_count DESC, last_usage DESC", "memories_usage_count"),
        ("SELECT thread_id, count(*) FROM cited_ids WHERE known = 0 AND counted = 1"
         " GROUP BY thread_id", "cited_ids_unknown"),
        ("SELECT rollout_id, count(*) FROM cited_ids WHERE thread_id IS NULL"
         " GROUP BY rollout_id", "cited_ids_not_uuid"),
        ("SELECT thread_id FROM memories WHERE (usage_count > 0 OR codex_usage_count > 0) AND"
         " archived_at IS NULL AND missing_since IS NULL ORDER BY max(usage_count,"
         " coalesce(codex_usage_count, 0)) DESC, max(coalesce(last_usage, 0),"
         " coalesce(codex_last_usage, 0)) DESC, thread_id LIMIT 50", "memories_top_memcite"),
        ("SELECT count(*), coalesce(sum(codex_usage_count), 0) FROM memories"
         " WHERE archived_at IS NULL AND codex_usage_count > 0", "memories_codex_cited"),
    ],
)
def test_report_queries_use_their_indexes(tmp_path, query, index):
    conn = open_store(tmp_path / "m.sqlite")
    plan = " ".join(row[-1] for row in conn.execute("EXPLAIN QUERY PLAN " + query))
    assert index in plan, plan


def test_schema_seen_through_sqlite_utils(tmp_path):
    """The migrated schema as an independent inspector (sqlite-utils) reads it: tables, the
    plain columns (generated ones are hidden from it), index columns and which are partial."""
    import sqlite_utils

    db = sqlite_utils.Database(open_store(tmp_path / "m.sqlite"))
    assert sorted(db.table_names()) == sorted(EXPECTED_SCHEMA)
    generated = {"memories": {"last_used", "codex_last_used"},
                 "search_index": {"search_index", "rank"}}  # FTS5's hidden columns
    for name, spec in EXPECTED_SCHEMA.items():
        table = db[name]
        assert [c.name for c in table.columns] == [
            c for c in spec["columns"] if c not in generated.get(name, set())], name
        indexes = {i.name: i for i in table.indexes if i.origin == "c"}
        assert {n: i.columns for n, i in indexes.items()} == {
            n: [None if c == "<expr>" else c for c in cols]
            for n, cols in spec["indexes"].items()}, name
    partial = {i.name for t in db.tables for i in t.indexes if i.partial}
    assert partial == {"memories_active_last_used", "memories_codex_retention",
                       "memories_usage_count", "memories_archived_at", "memories_codex_last_used",
                       "memories_outside_codex", "cited_ids_unknown", "cited_ids_not_uuid",
                       "forget_requests_open", "entry_requests_open", "memories_top_memcite",
                       "memories_codex_cited", "memories_summary_file"}


def test_a_second_open_keeps_the_first_connections_locks(tmp_path):
    """Opening the database again in the same process (its header is read through a
    descriptor of its own) keeps the first connection's POSIX locks: closing that descriptor
    dropped them, so another process's writer, closing, took itself for the last connection
    and deleted the ``-wal`` and ``-shm`` under the open one ("disk I/O error" next)."""
    import subprocess
    import sys

    from memcite.ledger.store import open_store

    db = str(tmp_path / "ledger.sqlite")
    first = open_store(db)
    first.execute("CREATE TABLE t (x)")
    first.execute("INSERT INTO t VALUES (1)")
    open_store(db, readonly=True).close()
    other = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
             "c.execute('INSERT INTO t VALUES (2)'); c.commit(); c.close()")
    subprocess.run([sys.executable, "-c", other, db], check=True)
    assert os.path.exists(db + "-wal") and os.path.exists(db + "-shm")
    first.execute("INSERT INTO t VALUES (3)")
    second = open_store(db, readonly=True)
    try:
        assert second.execute("SELECT count(*) FROM t").fetchone() == (3,)
    finally:
        second.close()
        first.close()
    assert not os.path.exists(db + "-wal")  # the last close checkpoints as before


def test_probing_for_an_unclean_end_keeps_this_process_s_locks(tmp_path):
    """Whether the last writer crashed is told by a lock on the ``-shm`` file's "dead man
    switch" byte, probed through a descriptor of its own. Closing that descriptor dropped the
    POSIX locks this process's open connection held on the file, so another process took
    itself for the only one and cut the ``-shm`` file under the open connection's mapping
    (a bus error in the Stop hook, while its audit wrote the ledger)."""
    import fcntl
    import subprocess
    import sys

    from memcite.ledger.store import open_store

    if not hasattr(fcntl, "F_OFD_GETLK"):
        pytest.fail("this test needs open-file-description locks (Linux)")
    db = str(tmp_path / "ledger.sqlite")
    first = open_store(db)
    first.execute("CREATE TABLE t (x)")
    first.execute("INSERT INTO t VALUES (1)")
    try:
        assert os.path.getsize(db + "-wal") > 0
        assert store._unclean_end(db) is False  # this process holds it: no crash
        probe = ("import fcntl, os, struct, sys; fd = os.open(sys.argv[1], os.O_RDWR); "
                 "lock = struct.pack('hhqqi4x', fcntl.F_WRLCK, os.SEEK_SET, 128, 1, 0); "
                 "got = fcntl.fcntl(fd, fcntl.F_OFD_GETLK, lock); "
                 "print(struct.unpack('hhqqi4x', got)[0] != fcntl.F_UNLCK)")
        held = subprocess.run([sys.executable, "-c", probe, db + "-shm"], check=True,
                              capture_output=True, text=True).stdout.strip()
        assert held == "True"  # the connection's lock on the byte is still there
        assert first.execute("SELECT count(*) FROM t").fetchone() == (1,)
    finally:
        first.close()


def test_a_writer_that_died_mid_way_is_an_unclean_end(tmp_path):
    """A ``-wal`` with frames that no connection holds (its writer ended without closing)
    is an unclean end; the same file while a connection holds it is not."""
    import subprocess
    import sys

    db = str(tmp_path / "ledger.sqlite")
    crash = ("import os, sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
             "c.execute('PRAGMA journal_mode=wal'); c.execute('CREATE TABLE t (x)'); "
             "c.execute('INSERT INTO t VALUES (1)'); os._exit(0)")
    subprocess.run([sys.executable, "-c", crash, db], check=True)
    assert os.path.getsize(db + "-wal") > 32
    assert store._unclean_end(db) is True
    holder = ("import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1]); "
              "c.execute('SELECT count(*) FROM t').fetchone(); print('open', flush=True); "
              "sys.stdin.readline()")
    with subprocess.Popen([sys.executable, "-c", holder, db], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as other:
        assert other.stdout.readline().strip() == "open"
        assert store._unclean_end(db) is False
        other.stdin.write("\n")
        other.stdin.flush()


def test_a_dangling_link_is_never_created_through(tmp_path):
    """``--db`` naming a link to a missing file: refused, nothing created at its target."""
    target = tmp_path / "elsewhere" / "ledger.sqlite"
    target.parent.mkdir()
    link = tmp_path / "memcite.sqlite"
    link.symlink_to(target)
    with pytest.raises(StoreError, match="link to a missing file"):
        open_store(link)
    assert not target.exists() and link.is_symlink()


def test_a_link_put_in_place_after_the_look_is_never_created_through(tmp_path):
    """The race: the path was free when looked at, a link is there when created."""
    target = tmp_path / "elsewhere.sqlite"
    link = tmp_path / "memcite.sqlite"
    link.symlink_to(target)
    with pytest.raises(StoreError, match="link to a missing file"):
        store._create_private(str(link))
    assert not target.exists()


def test_a_new_database_waits_for_another_connection_to_put_it_in_wal_mode(tmp_path, monkeypatch):
    """SQLite answers a change of journal mode that another connection's lock blocks with
    "database is locked" at once, without its busy handler (two first writers of a new
    database switching at the same time): eight concurrent first saves saw some refused.
    The switch is tried again until the busy timeout, as every other write waits."""
    refusals = []
    execute = store._CheckedConnection.execute

    def busy_twice(self, sql, *args):
        if sql == "PRAGMA journal_mode = WAL" and len(refusals) < 2:
            refusals.append(sql)
            raise sqlite3.OperationalError("database is locked")
        return execute(self, sql, *args)

    monkeypatch.setattr(store._CheckedConnection, "execute", busy_twice)
    conn = open_store(str(tmp_path / "memcite.sqlite"), busy_timeout_ms=5_000)
    assert len(refusals) == 2
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_a_lock_held_past_the_busy_timeout_still_refuses_the_open(tmp_path, monkeypatch):
    execute = store._CheckedConnection.execute

    def always_busy(self, sql, *args):
        if sql == "PRAGMA journal_mode = WAL":
            raise sqlite3.OperationalError("database is locked")
        return execute(self, sql, *args)

    monkeypatch.setattr(store._CheckedConnection, "execute", always_busy)
    with pytest.raises(StoreError, match="still locked"):
        open_store(str(tmp_path / "memcite.sqlite"), busy_timeout_ms=200)
