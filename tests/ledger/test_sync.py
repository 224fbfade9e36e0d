"""``sync``: the inventory from a Codex home, read-only, updated in place, gone rows marked."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memcite.demo.loop import load_sample_builder
from memcite.ledger import codex_home
from memcite.ledger import sync as sync_module
from memcite.ledger.codex_home import CodexHomeError
from memcite.ledger.recording import rebuild, record_reply
from memcite.ledger.store import open_store
from memcite.ledger.sync import sync_codex_home

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
NOW = 1_800_000_000
DAY = 86_400


BUILDER = load_sample_builder(CORPUS)
THREADS = {BUILDER.thread_id(i): row for i, row in enumerate(BUILDER.THREADS)}
IN_DB = [t for t, row in THREADS.items() if row[-1] != "folder"]
FOLDER_ONLY = [t for t, row in THREADS.items() if row[-1] == "folder"]


@pytest.fixture
def home(codex_home):
    return codex_home


@pytest.fixture
def conn(ledger):
    return ledger


def _tree_digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def row(conn, thread_id, columns="*"):
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(f"SELECT {columns} FROM memories WHERE thread_id = ?",
                            (thread_id,)).fetchone()
    finally:
        conn.row_factory = None


def test_sync_fills_the_inventory_from_the_database_and_the_folder(home, conn):
    report = sync_codex_home(conn, home, now=NOW)
    assert report.stage1_rows == len(IN_DB) == 33
    assert report.inserted == len(THREADS) == 36
    assert report.marked_missing == 0
    ids = {r[0] for r in conn.execute("SELECT thread_id FROM memories")}
    assert ids == set(THREADS)
    weekly = row(conn, BUILDER.thread_id(0))
    assert weekly["source"] == "stage1_outputs"
    assert weekly["source_updated_at"] == NOW - 2 * DAY
    assert weekly["codex_usage_count"] == 5 and weekly["codex_last_usage"] == NOW - DAY
    assert weekly["usage_count"] == 0 and weekly["last_usage"] is None  # memcite's own
    assert weekly["cwd"] == "/home/dev/reports"  # from the folder
    assert weekly["rollout_slug"] == "weekly_report_format"
    assert weekly["rollout_summary_file"].endswith("-weekly_report_format.md")
    assert weekly["git_branch"] == "main"
    assert weekly["selected_for_phase2"] == 1
    assert weekly["has_raw_memory"] == 1 and weekly["has_rollout_summary"] == 1
    assert weekly["codex_home"] == os.path.realpath(home)


def test_blank_texts_and_never_cited_rows_keep_codex_values(home, conn):
    sync_codex_home(conn, home, now=NOW)
    blank = row(conn, BUILDER.thread_id(32))  # raw "  \n": SQLite's trim() keeps the newline
    assert (blank["has_raw_memory"], blank["has_rollout_summary"]) == (1, 0)
    never = row(conn, BUILDER.thread_id(27))  # cache_invalidation: never cited
    assert never["codex_usage_count"] is None and never["codex_last_usage"] is None
    assert never["codex_last_used"] == never["source_updated_at"]


def test_threads_only_in_the_folder_take_their_header_values(home, conn):
    sync_codex_home(conn, home, now=NOW)
    pruned = row(conn, FOLDER_ONLY[0])
    assert pruned["source"] == "raw_memories"
    assert pruned["source_updated_at"] == BUILDER.ID_EPOCH_MS // 1000 - 120 * DAY
    assert pruned["codex_usage_count"] is None
    assert pruned["has_raw_memory"] == 1 and pruned["has_rollout_summary"] == 1


def test_the_codex_home_is_never_written(home, conn):
    before = _tree_digest(home)
    sync_codex_home(conn, home, now=NOW)
    assert _tree_digest(home) == before  # no -wal or -shm beside memories_1.sqlite either


def test_sync_reads_a_database_that_codex_has_open(home, conn):
    writer = sqlite3.connect(home / "memories_1.sqlite")
    writer.execute("UPDATE stage1_outputs SET usage_count = 42 WHERE thread_id = ?",
                   (BUILDER.thread_id(0),))
    writer.commit()  # in Codex's -wal file, not yet in the main file
    try:
        assert (home / "memories_1.sqlite-wal").exists()
        sync_codex_home(conn, home, now=NOW)
    finally:
        writer.close()
    assert row(conn, BUILDER.thread_id(0))["codex_usage_count"] == 42


def test_resync_updates_rows_in_place_and_marks_gone_rows(home, conn):
    sync_codex_home(conn, home, now=NOW)
    codex = sqlite3.connect(home / "memories_1.sqlite")
    gone = BUILDER.thread_id(1)
    codex.execute("DELETE FROM stage1_outputs WHERE thread_id = ?", (gone,))
    codex.execute("UPDATE stage1_outputs SET usage_count = 99, source_updated_at = ?"
                  " WHERE thread_id = ?", (NOW, BUILDER.thread_id(0)))
    codex.commit()
    codex.close()
    # The thread is gone from the folder too.
    raw = home / "memories" / "raw_memories.md"
    raw.write_text(raw.read_text().replace(gone, "not-a-thread"))
    for summary in (home / "memories" / "rollout_summaries").glob("*.md"):
        if gone in summary.read_text():
            summary.unlink()

    report = sync_codex_home(conn, home, now=NOW + DAY)
    assert (report.inserted, report.marked_missing) == (0, 1)
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 36
    assert row(conn, gone)["missing_since"] == NOW + DAY
    updated = row(conn, BUILDER.thread_id(0))
    assert (updated["codex_usage_count"], updated["source_updated_at"]) == (99, NOW)
    assert updated["missing_since"] is None
    assert updated["first_synced_at"] == NOW and updated["synced_at"] == NOW + DAY

    # A third sync keeps the first time it was seen missing.
    assert sync_codex_home(conn, home, now=NOW + 2 * DAY).marked_missing == 0
    assert row(conn, gone)["missing_since"] == NOW + DAY


def test_a_row_that_comes_back_is_no_longer_missing(home, conn, tmp_path):
    sync_codex_home(conn, home, now=NOW)
    db = home / "memories_1.sqlite"
    saved = db.read_bytes()
    codex = sqlite3.connect(db)
    codex.execute("DELETE FROM stage1_outputs WHERE thread_id = ?", (BUILDER.thread_id(30),))
    codex.commit()
    codex.close()
    sync_codex_home(conn, home, now=NOW + 1)
    assert row(conn, BUILDER.thread_id(30))["missing_since"] == NOW + 1
    db.write_bytes(saved)
    sync_codex_home(conn, home, now=NOW + 2)
    assert row(conn, BUILDER.thread_id(30))["missing_since"] is None


def test_sync_never_touches_memcites_own_counts(home, conn):
    sync_codex_home(conn, home, now=NOW)
    thread = BUILDER.thread_id(0)
    reply = ("ok\n<oai-mem-citation>\n<rollout_ids>\n" + thread +
             "\n</rollout_ids>\n</oai-mem-citation>")
    record_reply(conn, reply, now=NOW + 5)
    sync_codex_home(conn, home, now=NOW + 10)
    assert (row(conn, thread)["usage_count"], row(conn, thread)["last_usage"]) == (1, NOW + 5)


def test_a_memory_cited_before_its_first_sync_gets_its_logged_count(home, conn):
    thread = BUILDER.thread_id(4)
    reply = ("ok\n<oai-mem-citation>\n<rollout_ids>\n" + thread +
             "\n</rollout_ids>\n</oai-mem-citation>")
    result = record_reply(conn, reply, now=NOW + 5)
    assert result.unknown == [thread]
    sync_codex_home(conn, home, now=NOW + 10)
    assert (row(conn, thread)["usage_count"], row(conn, thread)["last_usage"]) == (1, NOW + 5)
    assert rebuild(conn, apply=False).differences == ()


def test_a_home_with_nothing_to_sync_is_an_error_and_marks_nothing(home, conn, tmp_path):
    sync_codex_home(conn, home, now=NOW)
    empty = tmp_path / "empty_home"
    empty.mkdir()
    with pytest.raises(CodexHomeError, match="nothing to sync"):
        sync_codex_home(conn, empty, now=NOW + 1)
    with pytest.raises(CodexHomeError, match="no such folder"):
        sync_codex_home(conn, tmp_path / "absent", now=NOW + 1)
    assert conn.execute("SELECT count(*) FROM memories WHERE missing_since IS NOT NULL"
                        ).fetchone()[0] == 0


def test_a_folder_only_home_is_synced(home, conn):
    (home / "memories_1.sqlite").unlink()
    report = sync_codex_home(conn, home, now=NOW)
    assert not report.stage1_found and report.stage1_rows == 0
    sources = {r[0] for r in conn.execute("SELECT DISTINCT source FROM memories")}
    assert sources == {"raw_memories"}  # every summary's thread has a raw memory section
    # Threads with no summary and no raw memory section cannot be known from the folder.
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 33
    only_summary = home / "memories" / "raw_memories.md"
    only_summary.write_text("# Raw Memories\n\nNo raw memories yet.\n")
    sync_codex_home(conn, home, now=NOW + 1)
    sources = {r[0] for r in conn.execute("SELECT DISTINCT source FROM memories")}
    assert sources == {"rollout_summary"}
    assert conn.execute("SELECT count(*) FROM memories WHERE missing_since IS NULL"
                        ).fetchone()[0] == 33


def test_an_older_codex_schema_and_odd_ids_are_read(tmp_path, conn):
    home = tmp_path / "old"
    home.mkdir()
    old = sqlite3.connect(home / "memories_1.sqlite")
    old.execute("CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY,"
                " source_updated_at INTEGER NOT NULL, raw_memory TEXT NOT NULL,"
                " generated_at INTEGER NOT NULL)")
    upper = "019C6E27-E55B-73D1-87D8-4E01F1F75043"
    old.executemany("INSERT INTO stage1_outputs VALUES (?, ?, ?, ?)",
                    [(upper, 10, "text", 11), ("not-a-uuid", 10, "x", 11),
                     ("019c7714-3b77-74d1-9866-e1f484aae2ab", 12, "  ", 13)])
    old.commit()
    old.close()
    report = sync_codex_home(conn, home, now=NOW)
    assert (report.stage1_rows, report.invalid_ids) == (2, 1)
    first = row(conn, upper.lower())
    assert first["selected_for_phase2"] == 0 and first["codex_usage_count"] is None
    assert first["has_raw_memory"] == 1 and first["has_rollout_summary"] == 0
    assert row(conn, "019c7714-3b77-74d1-9866-e1f484aae2ab")["has_raw_memory"] == 0


def test_not_a_codex_database_is_a_clear_error(tmp_path, conn):
    home = tmp_path / "h"
    home.mkdir()
    (home / "memories_1.sqlite").write_text("not sqlite")
    with pytest.raises(CodexHomeError, match="not an SQLite database"):
        sync_codex_home(conn, home, now=NOW)
    other = sqlite3.connect(tmp_path / "other.sqlite")
    other.execute("CREATE TABLE t (x)")
    other.commit()
    other.close()
    os.replace(tmp_path / "other.sqlite", home / "memories_1.sqlite")
    with pytest.raises(CodexHomeError, match="no stage1_outputs"):
        sync_codex_home(conn, home, now=NOW)


def test_progress_is_reported_in_batches(home, conn):
    seen = []
    sync_codex_home(conn, home, now=NOW, batch_rows=10,
                    progress=lambda phase, done, total: seen.append((phase, done, total)))
    stage1 = [s for s in seen if s[0] == "stage1_outputs"]
    assert stage1 == [("stage1_outputs", n, 33) for n in (10, 20, 30, 33)]
    assert seen[-1][0] == "memory folder"


def test_raw_memories_sections_are_read(home):
    sections = list(codex_home.iter_raw_memories(home / "memories" / "raw_memories.md"))
    assert len(sections) == 33
    first = sections[0]
    assert first.thread_id == BUILDER.thread_id(0)
    assert first.cwd == "/home/dev/reports"
    assert first.rollout_summary_file.endswith("-chMQ-weekly_report_format.md")
    assert first.rollout_slug == "weekly_report_format"
    assert first.where.endswith("raw_memories.md:3")
    assert first.has_text


def test_summary_headers_stop_at_the_blank_line(tmp_path):
    path = tmp_path / "2026-01-01T00-00-00-abcd-some_slug.md"
    path.write_text("thread_id: 019c6e27-e55b-73d1-87d8-4e01f1f75043\n"
                    "updated_at: 2026-01-02T03:04:05Z\ncwd: /w\n\n"
                    "cwd: /not/a/header\nbody\n")
    found = codex_home.read_rollout_summary_header(path)
    assert found.cwd == "/w"
    assert found.updated_at == 1_767_323_045
    assert found.rollout_slug == "some_slug"
    assert found.has_text
    (tmp_path / "no_header.md").write_text("# Just a summary\n")
    assert codex_home.read_rollout_summary_header(tmp_path / "no_header.md") is None


def _codex_writes(db: Path) -> None:
    """What Codex does to its database: a write, checkpointed into the main file on close."""
    writer = sqlite3.connect(db)
    writer.execute("CREATE TABLE codex_grew (x BLOB)")
    writer.executemany("INSERT INTO codex_grew VALUES (?)", [(b"x" * 1000,)] * 100)
    writer.commit()
    writer.close()


def test_a_codex_database_written_during_an_immutable_read_is_refused(home):
    db = home / "memories_1.sqlite"
    assert db.read_bytes()[18] == 2 and not Path(f"{db}-wal").exists()  # read immutable
    rows = codex_home.iter_stage1_outputs(db, batch_size=1, command="sync")
    next(rows)
    _codex_writes(db)
    with pytest.raises(CodexHomeError, match="Codex wrote to its database during the sync; "
                                             "run memcite sync again"):
        list(rows)


def test_sync_refuses_a_read_during_which_codex_wrote(home, conn):
    def codex_writes_midway(phase, done, total):
        if phase == "stage1_outputs" and done == 10:
            _codex_writes(home / "memories_1.sqlite")

    with pytest.raises(CodexHomeError, match="run memcite sync again"):
        sync_codex_home(conn, home, now=NOW, batch_rows=10, progress=codex_writes_midway)
    report = sync_codex_home(conn, home, now=NOW + 1)  # Codex is done: a re-run reads it all
    assert report.stage1_rows == len(IN_DB)


def test_an_unchanged_immutable_read_is_accepted(home):
    db = home / "memories_1.sqlite"
    assert codex_home.count_stage1_outputs(db) == len(list(codex_home.iter_stage1_outputs(db)))


def test_every_stage1_thread_id_is_validated(tmp_path, conn):
    home = tmp_path / "odd"
    home.mkdir()
    codex = sqlite3.connect(home / "memories_1.sqlite")
    codex.execute("CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY,"
                  " source_updated_at INTEGER NOT NULL)")
    good = "019c7714-3b77-74d1-9866-e1f484aae2ab"
    odd = ["zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz",  # 36 characters, lowercase, not a UUID
           "019c7714+3b77+74d1+9866+e1f484aae2ab",
           "019c77143b7774d19866e1f484aae2ab0000"]
    codex.executemany("INSERT INTO stage1_outputs VALUES (?, 1)", [(t,) for t in [good, *odd]])
    codex.commit()
    codex.close()
    report = sync_codex_home(conn, home, now=NOW)
    assert (report.stage1_rows, report.invalid_ids) == (1, 3)
    assert [r[0] for r in conn.execute("SELECT thread_id FROM memories")] == [good]


# --------------------------------------------------------------------------- the copy in SQL


def _inventory(conn, bookkeeping=True):
    """Every row of ``memories``; ``bookkeeping=False`` leaves out which sync wrote it last
    (the copy in SQL does not rewrite an unchanged row, the row-by-row copy does)."""
    conn.row_factory = sqlite3.Row
    try:
        rows = [dict(r) for r in conn.execute("SELECT * FROM memories ORDER BY thread_id")]
    finally:
        conn.row_factory = None
    if not bookkeeping:
        for found in rows:
            del found["synced_at"], found["last_sync_id"]
    return rows


def _memories_indexes(conn):
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'"
                                       " AND tbl_name = 'memories' AND sql IS NOT NULL")}


def test_the_sql_copy_and_the_row_by_row_copy_give_the_same_inventory(home, tmp_path,
                                                                      monkeypatch):
    # A connection that cannot attach Codex's database read-only (an SQLite that does not
    # take URI file names) has it read row by row, as sync did before.
    by_rows, in_sql = open_store(tmp_path / "rows.sqlite"), open_store(tmp_path / "sql.sqlite")
    try:
        for now in (NOW, NOW + DAY):
            with monkeypatch.context() as patched:
                patched.setattr(sync_module._Stage1Copy, "attach", lambda self: False)
                by_rows_report = sync_codex_home(by_rows, home, now=now, batch_rows=7)
            in_sql_report = sync_codex_home(in_sql, home, now=now, batch_rows=7)
            # Row by row, every row of Codex's table is written again; in SQL, only those
            # that changed. What each says it wrote differs, nothing else.
            by_rows_said, in_sql_said = by_rows_report.to_dict(), in_sql_report.to_dict()
            seen = {(said["updated"] + said["unchanged"]) for said in (by_rows_said, in_sql_said)}
            assert len(seen) == 1
            for said in (by_rows_said, in_sql_said):
                del said["updated"], said["unchanged"]
            assert by_rows_said == in_sql_said
            assert _inventory(by_rows, False) == _inventory(in_sql, False)
            codex = sqlite3.connect(home / "memories_1.sqlite")
            codex.execute("UPDATE stage1_outputs SET usage_count = 7 WHERE thread_id = ?",
                          (BUILDER.thread_id(3),))
            codex.execute("DELETE FROM stage1_outputs WHERE thread_id = ?",
                          (BUILDER.thread_id(5),))
            codex.commit()
            codex.close()
    finally:
        by_rows.close()
        in_sql.close()


def test_a_large_first_load_builds_the_indexes_after(home, conn):
    expected = _memories_indexes(conn)
    during = []
    sync_codex_home(conn, home, now=NOW, batch_rows=10,
                    progress=lambda phase, done, total: during.append(_memories_indexes(conn)))
    # Only the indexes a load in key order appends to stay during the load.
    assert sync_module._KEPT_DURING_LOAD < expected
    assert during[0] == sync_module._KEPT_DURING_LOAD and _memories_indexes(conn) == expected
    # A re-sync (no more rows than the inventory holds) keeps them.
    during.clear()
    sync_codex_home(conn, home, now=NOW + 1, batch_rows=10,
                    progress=lambda phase, done, total: during.append(_memories_indexes(conn)))
    assert all(seen == expected for seen in during)


def test_an_index_an_interrupted_load_left_out_is_built_again(home, conn):
    expected = _memories_indexes(conn)
    sync_codex_home(conn, home, now=NOW)
    conn.execute("DROP INDEX memories_codex_home_sync")  # as a load killed midway leaves it
    conn.execute("DROP INDEX memories_active_last_used")
    sync_codex_home(conn, home, now=NOW + 1)
    assert _memories_indexes(conn) == expected


def test_a_resync_rewrites_only_the_stage1_rows_that_changed(home, conn):
    shutil.rmtree(home / "memories")  # the stage1_outputs pass alone
    sync_codex_home(conn, home, now=NOW)
    conn.execute("CREATE TEMP TABLE rewritten (thread_id TEXT)")
    conn.execute("CREATE TEMP TRIGGER noted AFTER UPDATE ON memories"
                 " BEGIN INSERT INTO rewritten VALUES (new.thread_id); END")
    statements = []
    conn.set_trace_callback(statements.append)
    report = sync_codex_home(conn, home, now=NOW + 1, batch_rows=5)
    conn.set_trace_callback(None)
    assert conn.execute("SELECT count(*) FROM rewritten").fetchone()[0] == 0
    assert (report.updated, report.unchanged) == (0, len(IN_DB))  # every row seen, none written
    assert report.marked_missing == 0
    # No write transaction per range: the sync's own row, the marking, the sync's end.
    assert statements.count("BEGIN IMMEDIATE") == 3
    codex = sqlite3.connect(home / "memories_1.sqlite")
    codex.execute("UPDATE stage1_outputs SET last_usage = 5 WHERE thread_id = ?",
                  (BUILDER.thread_id(2),))
    codex.commit()
    codex.close()
    report = sync_codex_home(conn, home, now=NOW + 2)
    assert [r[0] for r in conn.execute("SELECT thread_id FROM rewritten")] == [
        BUILDER.thread_id(2)]
    assert tuple(row(conn, BUILDER.thread_id(2), "codex_last_usage, last_sync_id, synced_at")) == \
        (5, report.sync_id, NOW + 2)
    assert (report.updated, report.unchanged) == (1, len(IN_DB) - 1)


def test_ids_no_range_reaches_are_counted_invalid(tmp_path, conn):
    home = tmp_path / "odd"
    home.mkdir()
    codex = sqlite3.connect(home / "memories_1.sqlite")
    codex.execute("CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY,"
                  " source_updated_at INTEGER NOT NULL)")
    good = "019c7714-3b77-74d1-9866-e1f484aae2ab"
    codex.executemany("INSERT INTO stage1_outputs VALUES (?, 1)",
                      [(good,), (None,), ("",), (b"019c7714-3b77-74d1-9866-e1f484aae2ab",)])
    codex.commit()
    codex.close()
    report = sync_codex_home(conn, home, now=NOW)
    assert (report.stage1_rows, report.invalid_ids) == (1, 3)
    assert [r[0] for r in conn.execute("SELECT thread_id FROM memories")] == [good]


def test_slugs_that_are_not_ascii_are_read_as_text(tmp_path, conn):
    home = tmp_path / "slugs"
    home.mkdir()
    codex = sqlite3.connect(home / "memories_1.sqlite")
    codex.execute("CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY,"
                  " source_updated_at INTEGER NOT NULL, rollout_slug TEXT)")
    ids = [f"019c7714-3b77-74d1-9866-e1f484aae2a{n}" for n in range(3)]
    codex.execute("INSERT INTO stage1_outputs VALUES (?, 1, 'plain_slug')", (ids[0],))
    codex.execute("INSERT INTO stage1_outputs VALUES (?, 1, 'café_notes')", (ids[1],))
    codex.execute("INSERT INTO stage1_outputs VALUES (?, 1, CAST(x'6261ff64' AS TEXT))",
                  (ids[2],))  # not UTF-8
    codex.commit()
    codex.close()
    for now in (NOW, NOW + 1):  # a re-sync keeps the text as it was decoded
        report = sync_codex_home(conn, home, now=now)
        assert (report.stage1_rows, report.invalid_ids) == (3, 0)
        slugs = dict(conn.execute("SELECT thread_id, rollout_slug FROM memories"))
        assert slugs == {ids[0]: "plain_slug", ids[1]: "café_notes", ids[2]: "ba\ufffdd"}


@pytest.mark.parametrize("text", [
    None, "", " ", "\t\n\x0b\x0c\r ", "a", "  a  ", "\u00a0", "\u2003", "\u3000x",
    "\x00", "\x00abc", "  \x00abc", " a\x00", "\x85", "- Task: something useful.\n" * 20,
])
def test_the_non_blank_test_agrees_with_trim(text):
    # The copy in SQL tells a non-blank text without copying it; the row-by-row path trims.
    conn = sqlite3.connect(":memory:")
    trimmed, globbed = conn.execute(
        "SELECT length(trim(coalesce(:t, ''))) > 0, "
        + sync_module._NON_BLANK.format(column=":t"), {"t": text}).fetchone()
    assert globbed == trimmed


def test_text_that_is_not_utf8_is_non_blank_as_trim_says(tmp_path):
    conn = sqlite3.connect(":memory:")
    for raw in (b"\xff", b" \xfe ", b"\x80abc", b"   "):
        trimmed, globbed = conn.execute(
            "SELECT length(trim(CAST(:t AS TEXT))) > 0, "
            + sync_module._NON_BLANK.format(column="CAST(:t AS TEXT)"), {"t": raw}).fetchone()
        assert globbed == trimmed, raw


def test_a_resync_of_the_demo_home_with_nothing_changed_writes_no_row(home, conn):
    # The demo's home: rows in Codex's table, sections and summaries in the memory folder,
    # and threads only the folder knows. The second and third syncs write none of them.
    first = sync_codex_home(conn, home, now=NOW, batch_rows=7)
    assert first.inserted == len(THREADS)
    before = _inventory(conn)  # with which sync wrote each row last
    conn.execute("CREATE TEMP TABLE written (thread_id TEXT)")
    for trigger in ("INSERT", "UPDATE"):
        conn.execute(f"CREATE TEMP TRIGGER noted_{trigger.lower()} AFTER {trigger} ON memories"
                     " BEGIN INSERT INTO written VALUES (new.thread_id); END")
    for later in (NOW + DAY, NOW + 2 * DAY):
        report = sync_codex_home(conn, home, now=later, batch_rows=7)
        assert conn.execute("SELECT count(*) FROM written").fetchone()[0] == 0
        assert _inventory(conn) == before
        assert (report.inserted, report.updated, report.unchanged, report.marked_missing) == \
            (0, 0, len(THREADS), 0)


def test_a_resync_writes_only_the_folder_rows_that_changed(home, conn):
    sync_codex_home(conn, home, now=NOW, batch_rows=7)
    folder_only = next(thread for thread in THREADS if thread not in IN_DB)
    summary = next((home / "memories" / "rollout_summaries").glob("*.md"))
    text = summary.read_text(encoding="utf-8")
    assert "cwd: " in text
    summary.write_text(text.replace("cwd: ", "cwd: /moved", 1), encoding="utf-8")
    report = sync_codex_home(conn, home, now=NOW + DAY, batch_rows=7)
    assert (report.updated, report.unchanged) == (1, len(THREADS) - 1)
    (changed,) = conn.execute("SELECT cwd FROM memories WHERE last_sync_id = ?",
                              (report.sync_id,)).fetchall()
    assert changed[0].startswith("/moved")
    # A thread only the folder knows, unchanged and unwritten, is still seen: not missing.
    assert row(conn, folder_only, "missing_since, source")[0] is None


def test_a_writer_waiting_during_a_sync_transaction_gets_its_turn(monkeypatch):
    # After a write transaction of t seconds the lock is left free min(t, 0.11) s: as long as
    # a writer waiting in SQLite's busy handler sleeps between tries.
    clock = [100.0]
    slept = []
    monkeypatch.setattr(sync_module.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(sync_module.time, "sleep", lambda s: (slept.append(round(s, 3)),
                                                            clock.__setitem__(0, clock[0] + s)))
    conn = sqlite3.connect(":memory:", isolation_level=None)
    turns = sync_module._Turns(conn)
    for held, then in ((0.05, 0.01), (2.0, 0.0), (0.2, 0.5)):
        with turns.transaction():
            clock[0] += held
        clock[0] += then  # work holding no lock (reading the next range)
    with turns.transaction():
        pass
    assert slept == [0.04, 0.11]  # the last gap (0.5 s) was already long enough


def _write_codex_rows(path: Path, rows: int) -> None:
    """A Codex table of ``rows`` rows with random thread ids (short texts)."""
    codex = sqlite3.connect(path)
    codex.execute("CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY,"
                  " source_updated_at INTEGER NOT NULL, raw_memory TEXT NOT NULL,"
                  " rollout_summary TEXT NOT NULL, rollout_slug TEXT, generated_at INTEGER NOT NULL,"
                  " usage_count INTEGER, last_usage INTEGER,"
                  " selected_for_phase2 INTEGER NOT NULL DEFAULT 0,"
                  " selected_for_phase2_source_updated_at INTEGER)")
    codex.execute(
        """
        WITH RECURSIVE c(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM c WHERE n + 1 < ?),
        u(n, h) AS (SELECT n, lower(hex(randomblob(16))) FROM c)
        INSERT INTO stage1_outputs
        SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' || substr(h, 14, 3) || '-8'
                   || substr(h, 18, 3) || '-' || substr(h, 21, 12),
               1700000000 + n, CASE WHEN n % 5 THEN 'raw ' || n ELSE ' ' END, 'summary',
               'slug_' || n, 1700000600 + n, CASE WHEN n % 3 = 0 THEN n % 7 END,
               CASE WHEN n % 3 = 0 THEN 1700000000 + n END, n % 2, NULL FROM u
        """, (rows,))
    codex.commit()
    codex.close()


def test_a_sync_killed_during_a_large_first_load_is_finished_by_the_next(tmp_path):
    home, rows = tmp_path / "codex", 100_000
    home.mkdir()
    _write_codex_rows(home / "memories_1.sqlite", rows)
    db = tmp_path / "m.sqlite"
    open_store(db).close()
    command = [sys.executable, "-m", "memcite", "sync", "--codex-home", str(home), "--db",
               str(db), "--json"]
    victim = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    watcher = sqlite3.connect(db, timeout=30)
    deadline, loaded = time.monotonic() + 60, 0
    while time.monotonic() < deadline and victim.poll() is None and loaded == 0:
        loaded = watcher.execute("SELECT count(*) FROM memories").fetchone()[0]
        time.sleep(0.005)
    assert victim.poll() is None, "the sync finished before it could be killed"
    victim.send_signal(signal.SIGKILL)
    victim.communicate()
    loaded = watcher.execute("SELECT count(*) FROM memories").fetchone()[0]
    assert 0 < loaded < rows  # killed during the copy: whole ranges were committed
    # The indexes a large load drops are missing until a sync builds them again.
    assert _memories_indexes(watcher) == sync_module._KEPT_DURING_LOAD
    assert watcher.execute("SELECT finished_at FROM syncs").fetchall() == [(None,)]
    watcher.close()

    rerun = subprocess.run(command, capture_output=True, timeout=300, check=False)
    assert rerun.returncode == 0, rerun.stderr.decode()
    report = json.loads(rerun.stdout)
    assert (report["stage1_rows"], report["inserted"], report["updated"], report["unchanged"],
            report["marked_missing"]) == (rows, rows - loaded, 0, loaded, 0)
    conn = open_store(db)
    try:
        assert _memories_indexes(conn) == {name for name, _ in sync_module._memories_indexes()}
        conn.execute("ATTACH DATABASE ? AS codex", (str(home / "memories_1.sqlite"),))
        same = conn.execute(
            "SELECT count(*) FROM memories AS m JOIN codex.stage1_outputs AS c USING (thread_id)"
            " WHERE m.source_updated_at = c.source_updated_at"
            " AND m.codex_usage_count IS c.usage_count AND m.codex_last_usage IS c.last_usage"
            " AND m.selected_for_phase2 = c.selected_for_phase2"
            " AND m.has_raw_memory = (c.raw_memory != ' ') AND m.rollout_slug = c.rollout_slug"
            " AND m.missing_since IS NULL").fetchone()[0]
        assert same == rows == conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    finally:
        conn.close()


def test_rows_gone_from_codex_are_marked_a_batch_per_transaction(home, conn):
    shutil.rmtree(home / "memories")
    sync_codex_home(conn, home, now=NOW)
    gone = IN_DB[:20]
    codex = sqlite3.connect(home / "memories_1.sqlite")
    codex.executemany("DELETE FROM stage1_outputs WHERE thread_id = ?", [(t,) for t in gone])
    codex.commit()
    codex.close()
    statements = []
    conn.set_trace_callback(statements.append)
    report = sync_codex_home(conn, home, now=NOW + DAY, batch_rows=7)
    conn.set_trace_callback(None)
    assert (report.marked_missing, report.updated, report.unchanged) == (20, 0, len(IN_DB) - 20)
    assert statements.count("BEGIN IMMEDIATE") == 3 + 3  # 20 rows marked, 7 per transaction
    missing = {r[0] for r in conn.execute(
        "SELECT thread_id FROM memories WHERE missing_since = ?", (NOW + DAY,))}
    assert missing == set(gone)


def test_a_sync_tells_the_memories_codex_removed_by_itself_from_those_memcite_asked_for(home, conn):
    sync_codex_home(conn, home, now=NOW)
    asked, pruned = IN_DB[0], IN_DB[1]
    conn.execute("INSERT INTO forget_requests (batch, thread_id, codex_home, way, state,"
                 " requested_at) VALUES ('b1', ?, ?, 'note', 'done', ?)",
                 (asked, os.path.realpath(home), NOW))
    codex = sqlite3.connect(home / "memories_1.sqlite")
    codex.executemany("DELETE FROM stage1_outputs WHERE thread_id = ?", [(asked,), (pruned,)])
    codex.commit()
    codex.close()
    for thread in (asked, pruned):  # gone from the memory folder too, as consolidation leaves it
        for summary in (home / "memories" / "rollout_summaries").glob("*.md"):
            if thread in summary.read_text(encoding="utf-8"):
                summary.unlink()
    raw = home / "memories" / "raw_memories.md"
    sections = raw.read_text(encoding="utf-8").split("\n## Thread ")
    raw.write_text("\n## Thread ".join(part for part in sections
                                       if not part.startswith((f"`{asked}`", f"`{pruned}`"))),
                   encoding="utf-8")
    report = sync_codex_home(conn, home, now=NOW + DAY)
    said = report.to_dict()
    assert (said["marked_missing"], said["gone_asked"], said["gone_by_codex"]) == (2, 1, 1)
    assert conn.execute("SELECT state FROM forget_requests").fetchone()[0] == "forgotten"
    assert row(conn, pruned, "missing_since")[0] == NOW + DAY  # when it left Codex
