"""What Codex removes by itself, and where memcite's requests go, in each memory store.

Seen with the real binary: at start-up Codex deletes the rows of the store it reads that
nobody used for ``max_unused_days`` (30) and that no consolidation selected; memcite's next
sync marks them missing and says Codex removed them by itself. Under ``version = "v2"``
``prune --apply`` writes its ad-hoc note into ``memories_v2/``, which the v2 consolidation
lists in its workspace diff.
"""

from __future__ import annotations

import sqlite3
import time

import pytest

from conftest import assert_ran

DAY = 86400
OLD, FRESH = "019a0000-0000-7000-8000-0000000000a1", "019a0000-0000-7000-8000-0000000000a2"
DATABASES = {"v1": "memories_1.sqlite", "v2": "memories_v2_1.sqlite"}


def _add(db, thread_id: str, updated_at: int) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory, "
                     "rollout_summary, rollout_slug, generated_at) VALUES (?, ?, 'r', 's', 'slug', ?)",
                     (thread_id, updated_at, updated_at))
    conn.close()


def _threads(db) -> set[str]:
    with sqlite3.connect(db) as conn:
        found = {row[0] for row in conn.execute("SELECT thread_id FROM stage1_outputs")}
    conn.close()
    return found


@pytest.mark.parametrize("store", sorted(DATABASES))
def test_codex_s_start_up_pruning_is_told_apart_from_memcite_s_requests(world, store):
    if store == "v2":
        world.append_config('version = "v2"\n')
    assert_ran(world.exec("hello"))  # Codex creates its databases
    db = world.codex_home / DATABASES[store]
    now = int(time.time())
    _add(db, OLD, now - 60 * DAY)
    _add(db, FRESH, now)
    first = world.memcite_json("sync", "--codex-home", str(world.codex_home))
    assert (first["store"], first["inserted"]) == (store, 2)
    assert_ran(world.exec("hello again"))  # start-up pruning
    assert _threads(db) == {FRESH}, "Codex did not prune the old unused row"
    second = world.memcite_json("sync", "--codex-home", str(world.codex_home))
    assert (second["marked_missing"], second["gone_by_codex"], second["gone_asked"]) == (1, 1, 0)


def test_under_v2_the_prune_note_goes_where_the_v2_consolidation_reads_it(world):
    world.append_config('version = "v2"\n')
    assert_ran(world.exec("hello"))
    db = world.codex_home / DATABASES["v2"]
    _add(db, FRESH, int(time.time()))
    world.memcite("sync", "--codex-home", str(world.codex_home))
    later = str(int(time.time()) + 90 * DAY)  # judged 90 days from now: unused, dead
    done = world.memcite("prune", "--apply", "--as-of", later, "--codex-home", str(world.codex_home))
    folder = world.codex_home / "memories_v2" / "extensions" / "ad_hoc" / "notes"
    notes = list(folder.iterdir())
    assert len(notes) == 1, done.stdout
    assert not (world.memories / "extensions" / "ad_hoc" / "notes").exists()
    with sqlite3.connect(db) as conn:  # let the next start consolidate now (no back-off)
        conn.execute("DELETE FROM jobs")
    conn.close()
    assert_ran(world.exec("hello again"))
    diff = (world.codex_home / "memories_v2" / "phase2_workspace_diff.md").read_text()
    assert f"extensions/ad_hoc/notes/{notes[0].name}" in diff
