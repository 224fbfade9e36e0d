"""The prune selection, and restoring what an earlier memcite archived (memcite.retention.archive):
summary files moved back, never over a file, marks cleared, everything logged."""

from __future__ import annotations

import hashlib
import os

import pytest

from memcite.ledger.sync import sync_codex_home
from memcite.retention.archive import (
    ArchiveError,
    Candidate,
    Moved,
    archive_log,
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
def home(synced_ledger, codex_home):
    return synced_ledger, codex_home


def _archive(conn, home, candidates, when=NOW + 10):
    """What ``prune --apply`` of an earlier memcite did: the summary file moved into
    ``memcite_archive`` (never over a file), the row marked, the move logged."""
    moved = []
    for candidate in candidates:
        row = conn.execute("SELECT rollout_summary_file FROM memories WHERE thread_id = ?"
                           " AND archived_at IS NULL", (candidate.thread_id,)).fetchone()
        if row is None:
            moved.append(Moved(candidate.thread_id, "archive", done=False,
                               problem="not an active memory"))
            continue
        source = target = None
        if row[0] and (home / "memories" / "rollout_summaries" / row[0]).is_file():
            source = str(home / "memories" / "rollout_summaries" / row[0])
            target = str(home / "memcite_archive" / "rollout_summaries" / row[0])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            base, number = target, 0
            while os.path.lexists(target):
                number += 1
                target = f"{base}.{number}"
            os.rename(source, target)
        with conn:
            conn.execute("UPDATE memories SET archived_at = ? WHERE thread_id = ?",
                         (when, candidate.thread_id))
            conn.execute("INSERT INTO archive_log (action, thread_id, at, rule, file_from,"
                         " file_to) VALUES ('archive', ?, ?, 'codex', ?, ?)",
                         (candidate.thread_id, when, source, target))
        moved.append(Moved(candidate.thread_id, "archive", source, target))
    return moved


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


def test_restore_never_claims_a_file_it_could_not_put_back(home):
    conn, home = home
    candidates = prune_candidates(conn, as_of=NOW, max_unused_days=30, rule="codex", limit=2)
    moved = [m for m in _archive(conn, home, candidates) if m.file_to]
    assert len(moved) == 2
    os.rename(moved[0].file_to, moved[0].file_from)  # a crash after the move back
    os.remove(moved[1].file_to)  # lost from the archive
    results = {r.thread_id: r for r in restore_memories(conn, all_archived=True, now=NOW + 20)}
    assert results[moved[0].thread_id].done
    assert "already back in place" in results[moved[0].thread_id].problem
    assert not results[moved[1].thread_id].done
    assert "not restored" in results[moved[1].thread_id].problem
