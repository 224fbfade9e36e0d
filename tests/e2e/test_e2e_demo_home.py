"""The demo's sample home is in the shape the real Codex writes: its databases' tables and
their columns, and its session files' line types, are those of a home Codex 0.171 made here
(one turn that got the memory message and cited it, then a consolidation)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from test_e2e_thread import CITE, _memory

from conftest import assert_ran
from memcite.demo.loop import load_sample_builder


def _tables(path: Path) -> dict[str, list[str]]:
    with sqlite3.connect(path) as db:
        names = [row[0] for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        found = {name: [row[1] for row in db.execute(f"PRAGMA table_info({name})")]
                 for name in names}
    db.close()
    return found


def _line_types(home: Path) -> set[tuple]:
    """Each line's (type, payload type, role) and its top-level keys, over every session file."""
    found = set()
    for path in (home / "sessions").rglob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            payload = item.get("payload") or {}
            found.add((item["type"], payload.get("type"), payload.get("role")))
    return found


def test_the_demo_home_has_the_tables_columns_and_lines_of_a_real_one(world, tmp_path):
    _memory(world)
    world.model.reply(CITE)
    assert_ran(world.exec("What do you remember?"))
    real = world.codex_home
    demo = Path(load_sample_builder().build_codex_home(str(tmp_path / "demo" / "codex_home"),
                                                       sessions=True))
    for name in ("memories_1.sqlite", "state_5.sqlite"):
        ours, codex = _tables(demo / name), _tables(real / name)
        assert ours, name
        for table, columns in ours.items():
            assert table in codex, f"{name}: Codex has no table {table}"
            assert columns == codex[table], f"{name}: {table}'s columns differ from Codex's"
    # The session lines: every kind the demo writes is one Codex writes, and the ones that
    # carry the memory message and the replies are there.
    ours, codex = _line_types(demo), _line_types(real)
    needed = {("session_meta", None, None), ("response_item", "message", "developer"),
              ("response_item", "message", "assistant"), ("event_msg", "task_started", None),
              ("event_msg", "task_complete", None), ("turn_context", None, None)}
    assert needed <= ours and needed <= codex
    odd = ours - codex
    # reasoning, tool calls and agent_message lines: Codex writes them in turns that have
    # them (the mock's turn has none)
    assert odd <= {("response_item", "reasoning", None), ("response_item", "function_call", None),
                   ("response_item", "function_call_output", None),
                   ("event_msg", "agent_message", None), ("event_msg", "user_message", None),
                   ("response_item", "message", "user")} | codex, odd
    # The memory message the demo put in its sessions is the one memcite says Codex injects
    # for its memory folder, and memcite thread finds it injected wherever a reply cites.
    for path in sorted((demo / "sessions").rglob("*.jsonl")):
        report = world.memcite_json("thread", path.name[-42:-6], "--codex-home", str(demo))
        assert report["memory"]["injected"] and report["memory"]["matches_current"]
        assert report["citations"]["cited_replies"] >= 1 and report["reason"] is None
