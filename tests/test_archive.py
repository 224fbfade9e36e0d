"""Archiving and restoring (memcite.archive): rows marked, summary files moved and never
deleted, everything logged, and undone by restore."""

from __future__ import annotations

import hashlib
import os

import pytest

from memcite.archive import (
    ArchiveError,
    Candidate,
    archive_log,
    archive_memories,
    prune_candidates,
    restore_memories,
)
from memcite.demo import _builder, find_corpus
from memcite.store import open_store
from memcite.sync import sync_codex_home

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
    builder = _builder(find_corpus())
    home = tmp_path / "codex_home"
    builder.build_codex_home(str(home), now=NOW)
    conn = open_store(tmp_path / "memcite.sqlite")
    sync_codex_home(conn, home, now=NOW)
    yield conn, home
    conn.close()


def _archive(conn, home, candidates, when=NOW + 10):
    return archive_memories(conn, candidates, memory_root=home / "memories",
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
    with pytest.raises(ArchiveError, match="must not be inside"):
        archive_memories(conn, [Candidate("x")], memory_root=home / "memories",
                         archive_dir=home / "memories" / "old", now=NOW, rule="memcite")


def test_unknown_or_bad_ids(home):
    conn, home = home
    moved = _archive(conn, home, [Candidate("0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee")])
    assert (moved[0].done, moved[0].problem) == (False, "not an active memory")
    with pytest.raises(ArchiveError, match="not a thread id"):
        restore_memories(conn, thread_ids=["nope"], now=NOW)
    result = restore_memories(conn, thread_ids=["0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee"], now=NOW)
    assert result[0].problem == "no such memory"
