"""Which stage-1 outputs the real Codex's consolidation takes when their texts are blank or
nearly so: its selection SQL tests ``length(trim(raw_memory)) > 0 OR
length(trim(rollout_summary)) > 0`` with SQLite's ``trim()``, which strips spaces only, so a
raw memory of two spaces and a newline is an input and one of spaces only is not. memcite's
``select`` and ``consolidation`` (and the inventory ``sync`` keeps) predict the same."""

from __future__ import annotations

import sqlite3
import time

import pytest
from mock_model import MockModel
from test_e2e_consolidation import Consolidator, forget_jobs, run

from conftest import CodexWorld

# thread id -> (raw_memory, rollout_summary)
TEXTS = {
    "019a0000-0000-7000-8000-0000000000b1": ("  \n", ""),       # a newline SQLite keeps
    "019a0000-0000-7000-8000-0000000000b2": ("   ", ""),        # spaces only: blank
    "019a0000-0000-7000-8000-0000000000b3": ("", "\t"),         # a tab SQLite keeps
    "019a0000-0000-7000-8000-0000000000b4": ("raw memory", ""),  # plain text
}


@pytest.fixture
def consolidator():
    return Consolidator()


@pytest.fixture
def world(tmp_path, codex, consolidator):
    with MockModel(responder=consolidator) as mock:
        made = CodexWorld(tmp_path, codex, mock)
        consolidator.root = made.memories
        yield made


def _add_rows(world: CodexWorld) -> None:
    """The rows, and their threads in Codex's threads table with memory_mode enabled (a row
    whose thread Codex does not know is never taken)."""
    now = int(time.time())
    with sqlite3.connect(world.memories_db()) as db:
        for index, (thread, (raw, summary)) in enumerate(TEXTS.items()):
            db.execute("INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory,"
                       " rollout_summary, rollout_slug, generated_at) VALUES (?, ?, ?, ?, ?, ?)",
                       (thread, now - index, raw, summary, f"blank-{index}", now - index))
    db.close()
    with sqlite3.connect(world.codex_home / "state_5.sqlite") as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(threads)")]
        picked = ", ".join("?" if name == "id" else
                           ("'enabled'" if name == "memory_mode" else name) for name in columns)
        for thread in TEXTS:
            db.execute(f"INSERT INTO threads ({', '.join(columns)}) SELECT {picked} FROM threads"
                       " LIMIT 1", (thread,))
    db.close()


def _selected(world: CodexWorld) -> set[str]:
    with sqlite3.connect(world.memories_db()) as db:
        rows = db.execute("SELECT thread_id FROM stage1_outputs WHERE selected_for_phase2 != 0")
        found = {row[0] for row in rows}
    db.close()
    return found


def test_codex_takes_what_sqlite_trim_leaves(world, consolidator):
    run(world, consolidator, "write")  # Codex makes its databases and a first baseline
    _add_rows(world)
    home = str(world.codex_home)
    predicted = {row["thread_id"] for row in
                 world.memcite_json("select", "--codex-home", home)["selected"]}
    report = world.memcite_json("consolidation", "--codex-home", home, check=False)
    forget_jobs(world)
    run(world, consolidator, "write")
    taken = _selected(world) & set(TEXTS)
    assert taken == {"019a0000-0000-7000-8000-0000000000b1",
                     "019a0000-0000-7000-8000-0000000000b3",
                     "019a0000-0000-7000-8000-0000000000b4"}
    assert predicted & set(TEXTS) == taken
    assert set(report["stores"][0]["inputs"]["new_threads"]) & set(TEXTS) == taken
