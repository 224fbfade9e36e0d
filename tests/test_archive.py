"""Archiving and restoring (memcite.retention.archive): rows marked, summary files moved and never
deleted, everything logged, and undone by restore."""

from __future__ import annotations

import hashlib
import os

import pytest

from memcite.cli.demo import load_sample_builder
from memcite.ledger.store import open_store
from memcite.ledger.sync import sync_codex_home
from memcite.retention.archive import (
    ArchiveError,
    Candidate,
    archive_log,
    archive_memories,
    prune_candidates,
    restore_memories,
)

NOW = 1_800_000_000


def _tree(folder) -> dict[str, str]:
    """Every file under ``folder`` with the SHA-256 of its bytes."""
    found = {}
    for base, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(base, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, folder)] = hashlib.sha256(handle.read()).hexdigest()
    return found


@pytest.fixture
def home(tmp_path):
    builder = load_sample_builder()
    home = tmp_path / "codex_home"
    builder.build_codex_home(str(home), now=NOW)
    conn = open_store(tmp_path / "memcite.sqlite")
    sync_codex_home(conn, home, now=NOW)
    yield conn, home
    conn.close()


def _archive(conn, home, candidates, when=NOW + 10):
    return archive_memories(conn, candidates, codex_home=home,
                            archive_dir=home / "memcite_archive", now=when, rule="codex")


def test_archive_moves_files_marks_rows_logs_and_restore_undoes_it(home):
    conn, home = home
    codex_db = (home / "memories_1.sqlite").read_bytes()
    before = _tree(home / "memories")
    candidates = prune_candidates(conn, as_of=NOW, max_unused_days=30, rule="codex", limit=200)
    assert len(candidates) >= 5
    moved = _archive(conn, home, candidates)
    assert all(m.done for m in moved)
    with_files = [m for m in moved if m.file_to]
    assert with_files, "the sample home has summaries for pruned threads"
    for item in with_files:
        assert not os.path.exists(item.file_from) and os.path.isfile(item.file_to)
        assert item.file_to.startswith(str(home / "memcite_archive"))
    # Nothing deleted: the memory folder and the archive together hold every original file.
    after = _tree(home / "memories")
    archived = _tree(home / "memcite_archive")
    assert sorted([*after.values(), *archived.values()]) == sorted(before.values())
    count = conn.execute("SELECT count(*) FROM memories WHERE archived_at = ?",
                         (NOW + 10,)).fetchone()[0]
    assert count == len(candidates)
    assert [e["action"] for e in archive_log(conn, limit=0)] == ["archive"] * len(candidates)
    # Archived memories are no longer candidates, nor in the report's active count.
    assert prune_candidates(conn, as_of=NOW, max_unused_days=30, rule="codex", limit=200) == []

    restored = restore_memories(conn, all_archived=True, now=NOW + 20)
    assert len(restored) == len(candidates) and all(r.done for r in restored)
    assert _tree(home / "memories") == before
    assert _tree(home / "memcite_archive") == {}
    assert conn.execute("SELECT count(*) FROM memories WHERE archived_at IS NOT NULL"
                        ).fetchone()[0] == 0
    assert (home / "memories_1.sqlite").read_bytes() == codex_db


def test_restore_by_id_and_since(home):
    conn, home = home
    candidates = prune_candidates(conn, as_of=NOW, max_unused_days=30, rule="memcite", limit=3)
    _archive(conn, home, candidates[:1], when=NOW + 10)
    _archive(conn, home, candidates[1:], when=NOW + 100)
    restored = restore_memories(conn, since=NOW + 50, now=NOW + 200)
    assert sorted(r.thread_id for r in restored) == sorted(c.thread_id for c in candidates[1:])
    first = candidates[0].thread_id
    restored = restore_memories(conn, thread_ids=[first.upper()], now=NOW + 300)
    assert [(r.thread_id, r.done) for r in restored] == [(first, True)]
    again = restore_memories(conn, thread_ids=[first], now=NOW + 400)
    assert [(r.done, r.problem) for r in again] == [(False, "not archived")]


def test_restore_never_overwrites_a_file_that_came_back(home):
    conn, home = home
    candidate = prune_candidates(conn, as_of=NOW, max_unused_days=30, rule="codex", limit=1)
    moved = _archive(conn, home, candidate)[0]
    assert moved.file_to
    with open(moved.file_from, "w") as handle:
        handle.write("re-extracted by Codex\n")
    result = restore_memories(conn, thread_ids=[moved.thread_id], now=NOW + 20)[0]
    assert result.done and "exists again" in result.problem
    assert open(moved.file_from).read() == "re-extracted by Codex\n"
    assert os.path.isfile(moved.file_to)


def test_archiving_twice_never_overwrites_in_the_archive(home):
    conn, home = home
    candidate = prune_candidates(conn, as_of=NOW, max_unused_days=30, rule="codex", limit=1)
    first = _archive(conn, home, candidate)[0]
    restore_memories(conn, all_archived=True, now=NOW + 20)
    # A copy of the file is left in the archive by hand; the next archive keeps both.
    os.makedirs(os.path.dirname(first.file_to), exist_ok=True)
    with open(first.file_to, "w") as handle:
        handle.write("older copy\n")
    second = _archive(conn, home, candidate, when=NOW + 30)[0]
    assert second.file_to == first.file_to + ".1"
    assert open(first.file_to).read() == "older copy\n"


def test_archive_folder_inside_the_memory_folder_is_refused(home):
    conn, home = home
    candidate = prune_candidates(conn, as_of=NOW, max_unused_days=30, rule="codex", limit=1)
    with pytest.raises(ArchiveError, match="must not be inside"):
        archive_memories(conn, candidate, codex_home=home,
                         archive_dir=home / "memories" / "old", now=NOW, rule="memcite")


def test_a_symlinked_home_does_not_get_the_archive_inside_the_memory_folder(home, tmp_path):
    conn, home = home
    link = tmp_path / "link_to_home"
    link.symlink_to(home)
    candidate = prune_candidates(conn, as_of=NOW, max_unused_days=30, rule="codex", limit=1)
    before = _tree(home / "memories")
    with pytest.raises(ArchiveError, match="must not be inside"):
        archive_memories(conn, candidate, codex_home=link,
                         archive_dir=link / "memories" / "old", now=NOW, rule="codex")
    assert _tree(home / "memories") == before


def test_files_move_from_the_home_the_row_was_synced_from(home, tmp_path):
    conn, home = home
    elsewhere = tmp_path / "another_home"
    (elsewhere / "memories" / "rollout_summaries").mkdir(parents=True)
    candidates = prune_candidates(conn, as_of=NOW, max_unused_days=30, rule="codex", limit=200)
    moved = archive_memories(conn, candidates, codex_home=elsewhere, now=NOW, rule="codex")
    with_files = [m for m in moved if m.file_to]
    assert with_files
    assert all(m.codex_home == os.path.realpath(home) for m in moved)
    for item in with_files:
        assert item.file_from.startswith(os.path.realpath(home / "memories"))
        assert item.file_to.startswith(os.path.realpath(home / "memcite_archive"))
    assert not (elsewhere / "memcite_archive").exists()


def test_prune_candidates_are_what_codex_itself_deletes(home):
    """Codex's own start-up pruning query, run on its table, picks the same rows (the
    folder-only rows of the sample home and rows gone from Codex are no candidates)."""
    import sqlite3

    conn, home = home
    codex_db = sqlite3.connect(home / "memories_1.sqlite")
    cutoff = NOW - 30 * 86_400
    codex_rows = [row[0] for row in codex_db.execute(
        "SELECT thread_id FROM stage1_outputs WHERE selected_for_phase2 = 0"
        " AND COALESCE(last_usage, source_updated_at) < ?"
        " ORDER BY COALESCE(last_usage, source_updated_at), source_updated_at, thread_id"
        " LIMIT 200", (cutoff,))]
    codex_db.close()
    picked = prune_candidates(conn, as_of=NOW, max_unused_days=30, rule="codex", limit=200)
    assert [c.thread_id for c in picked] == codex_rows
    # Codex deletes the oldest row; after a sync, it is no longer a candidate either.
    codex_db = sqlite3.connect(home / "memories_1.sqlite")
    with codex_db:
        codex_db.execute("DELETE FROM stage1_outputs WHERE thread_id = ?", (codex_rows[0],))
    codex_db.close()
    summaries = home / "memories" / "rollout_summaries"
    for path in summaries.iterdir():
        if codex_rows[0] in path.read_text():
            path.unlink()
    raw = home / "memories" / "raw_memories.md"
    raw.write_text(raw.read_text().replace(codex_rows[0], "not-a-thread"))
    sync_codex_home(conn, home, now=NOW + 1)
    assert conn.execute("SELECT missing_since FROM memories WHERE thread_id = ?",
                        (codex_rows[0],)).fetchone()[0] == NOW + 1
    for rule in ("codex", "memcite"):
        picked = prune_candidates(conn, as_of=NOW, max_unused_days=30, rule=rule, limit=0)
        assert codex_rows[0] not in [c.thread_id for c in picked]
    assert [c.thread_id for c in prune_candidates(conn, as_of=NOW, max_unused_days=30,
                                                  rule="codex", limit=200)] == codex_rows[1:]


def test_unknown_or_bad_ids(home):
    conn, home = home
    moved = _archive(conn, home, [Candidate("0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee")])
    assert (moved[0].done, moved[0].problem) == (False, "not an active memory")
    with pytest.raises(ArchiveError, match="not a thread id"):
        restore_memories(conn, thread_ids=["nope"], now=NOW)
    result = restore_memories(conn, thread_ids=["0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee"], now=NOW)
    assert result[0].problem == "no such memory"
