"""The quarantine: after a change to Codex's memory folder, the Stop hook asks Codex (by an
ad-hoc note, journaled like ``prune --apply``) to forget each memory the audit finds poisoned;
``restore`` withdraws it; an unchanged folder costs a few ``stat`` calls."""

from __future__ import annotations

import os
import time

import pytest

from memcite.codex import memory_quarantine as quarantine
from memcite.ledger.store import open_store
from memcite.retention.forget import undo_requests
from poisoned_home import build_home

MIX = {"poisoned": 0.25, "user-directive": 0.25, "tool-fact": 0.25, "user-fact": 0.25}


@pytest.fixture
def home(tmp_path, monkeypatch):
    codex = tmp_path / "codex"
    planted = build_home(codex, 8, mix=MIX)
    monkeypatch.setenv("MEMCITE_CONFIG", str(tmp_path / "config.toml"))
    db = tmp_path / "data" / "memcite.sqlite"
    db.parent.mkdir()
    conn = open_store(str(db))
    yield codex, planted, conn, str(db)
    conn.close()


def _notes(codex) -> list:
    folder = codex / "memories" / "extensions" / "ad_hoc" / "notes"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _check(codex, conn, db, now=1_800_000_000):
    return quarantine.check_after_reply(conn, db, str(codex), str(codex / "memories"), now=now)


def test_a_changed_folder_quarantines_the_poisoned_memories_only(home):
    codex, planted, conn, db = home
    done = _check(codex, conn, db)
    poisoned = sorted(t for t, kind in planted.items() if kind == "poisoned")
    assert sorted(done["asked"]) == poisoned and done["poisoned"] == len(poisoned)
    (note,) = _notes(codex)
    text = note.read_text()
    assert text.startswith("# Quarantine") and all(t in text for t in poisoned)
    assert not any(t in text for t, kind in planted.items() if kind != "poisoned")
    assert "curl" not in text and "https://" not in text  # the injected words are not repeated
    rows = conn.execute("SELECT thread_id, rule, state, way FROM forget_requests").fetchall()
    assert sorted(rows) == sorted((t, "poisoned", "done", "note") for t in poisoned)


def test_an_unchanged_folder_is_not_audited_again(home, monkeypatch):
    codex, planted, conn, db = home
    assert _check(codex, conn, db) is not None
    monkeypatch.setattr(quarantine, "quarantine_poisoned",
                        lambda *a, **k: pytest.fail("audited an unchanged folder"))
    assert _check(codex, conn, db) is None
    monkeypatch.undo()
    summary = codex / "memories" / "memory_summary.md"
    summary.write_text(summary.read_text() + "- one more line\n")
    again = _check(codex, conn, db)
    assert again["asked"] == [] and len(again["dropped"]) == again["poisoned"]  # asked once
    assert len(_notes(codex)) == 1


def test_restore_withdraws_the_quarantine(home):
    codex, planted, conn, db = home
    _check(codex, conn, db)
    ids = [row[0] for row in conn.execute("SELECT id FROM forget_requests")]
    undone = undo_requests(conn, ids, now=1_800_000_100)
    assert {u.thread_id for u in undone} == {t for t, k in planted.items() if k == "poisoned"}
    assert {row[0] for row in conn.execute("SELECT state FROM forget_requests")} != {"done"}


def test_the_setting_turns_the_quarantine_off(home, tmp_path):
    codex, planted, conn, db = home
    (tmp_path / "config.toml").write_text("[gate]\nmemory_writes = false\n")
    assert _check(codex, conn, db) is None
    assert _notes(codex) == []


def test_a_link_in_place_of_the_stamp_file_is_refused_not_followed(home, tmp_path):
    codex, planted, conn, db = home
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    os.symlink(target, os.path.join(os.path.dirname(db), quarantine.STAMP_FILE))
    with pytest.raises(Exception, match="link"):
        _check(codex, conn, db)
    assert target.read_text() == "{}"


def test_the_stamp_changes_with_what_a_consolidation_writes(tmp_path):
    folder = tmp_path / "memories"
    folder.mkdir()
    first = quarantine.folder_stamp(str(folder))
    (folder / "MEMORY.md").write_text("# Memory\n")
    assert quarantine.folder_stamp(str(folder)) != first
    assert quarantine.folder_stamp(str(folder)) == quarantine.folder_stamp(str(folder))


def test_the_stop_hook_quarantines_and_logs_it_once(home, tmp_path, monkeypatch):
    import io
    import json

    from memcite.cli.gate_commands import hook_stop
    from memcite.ledger.hook_log import read_entries

    codex, planted, conn, db = home
    monkeypatch.setenv("MEMCITE_HOME", os.path.dirname(db))
    session = next((codex / "sessions").rglob("*.jsonl"))
    payload = json.dumps({"hook_event_name": "Stop", "session_id": "s", "turn_id": "t",
                          "transcript_path": str(session), "last_assistant_message": None})
    for _ in range(2):
        assert hook_stop(db=db, codex_home=str(codex), stdin=io.BytesIO(payload.encode())) == 0
    log = os.path.join(os.path.dirname(db), "logs", "hooks.log")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # the audit runs in a process of its own
        entries = read_entries(log, 100)
        if any(e["event"] == "quarantine" for e in entries):
            break
        time.sleep(0.2)
    stops = [e for e in entries if e["event"] == "stop"]
    assert [e["status"] for e in stops] == ["ok", "ok"], entries
    assert isinstance(stops[0]["quarantine"]["detached"], int)
    assert "quarantine" not in stops[1]  # the folder did not change in between
    (done,) = [e for e in entries if e["event"] == "quarantine"]
    assert done["status"] == "ok", done
    assert sorted(done["asked"]) == sorted(t for t, k in planted.items() if k == "poisoned")
    assert len(_notes(codex)) == 1
