"""The sample home's session files (corpus/build_codex_home.py): shaped as Codex writes them,
fixed by ``now``, and what ``memcite ingest`` and the Stop hook find in them."""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memcite.cli.gate_commands import hook_stop
from memcite.codex.stop_hook import codex_home_of, reply_on_disk
from memcite.demo.loop import load_sample_builder, stop_payload
from memcite.ledger.hook_log import read_entries

NOW = 1_800_000_000
BUILDER = load_sample_builder()
SESSION_NAME = re.compile(
    r"^sessions/(\d{4})/(\d{2})/(\d{2})/rollout-(\d{4})-(\d{2})-(\d{2})T\d{2}-\d{2}-\d{2}-"
    r"([0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})\.jsonl$")


def _files(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*.jsonl"))}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return Path(BUILDER.build_codex_home(str(tmp_path_factory.mktemp("sample") / "codex"),
                                         now=NOW, sessions=True))


def _relative(home: Path) -> dict[str, bytes]:
    """The session files with the folder they were built in taken out (the sessions name the
    home and the project folders beside it)."""
    root = str(home.parent).encode()
    return {name: data.replace(root, b"ROOT") for name, data in _files(home).items()}


def test_the_sessions_are_fixed_by_now_and_only_written_when_asked(home, tmp_path):
    again = Path(BUILDER.build_codex_home(str(tmp_path / "again" / "codex"), now=NOW,
                                          sessions=True))
    assert _relative(again) == _relative(home)
    assert 2 <= len(_files(home)) <= 4
    later = Path(BUILDER.build_codex_home(str(tmp_path / "later"), now=NOW + 86_400,
                                          sessions=True))
    assert set(_files(later)).isdisjoint(_files(home))  # other days, other ids
    plain = Path(BUILDER.build_codex_home(str(tmp_path / "plain"), now=NOW))
    assert not (plain / "sessions").exists()


def test_each_file_is_where_and_how_codex_writes_it(home):
    sessions = BUILDER.sample_sessions(NOW, str(home.parent / "projects"))
    assert sorted(s["path"] for s in sessions) == sorted(_files(home))
    for session in sessions:
        name = SESSION_NAME.match(session["path"].replace(os.sep, "/"))
        assert name, session["path"]
        assert name.group(1, 2, 3) == name.group(4, 5, 6)  # the folder is the file's day
        assert name.group(7) == session["id"]
        path = home / session["path"]
        assert codex_home_of(str(path)) == str(home)
        raw = path.read_text(encoding="utf-8")
        assert raw.endswith("\n") and ", " not in raw.split('"payload"')[0]  # compact lines
        lines = _lines(path)
        keys = ["timestamp", "ordinal", "type", "payload"] if session["ordinal"] \
            else ["timestamp", "type", "payload"]
        assert all(list(line) == keys for line in lines)
        if session["ordinal"]:
            assert [line["ordinal"] for line in lines] == list(range(len(lines)))
        assert lines[0]["type"] == "session_meta"
        assert lines[0]["payload"]["id"] == session["id"]
        assert lines[0]["payload"]["cwd"] == session["cwd"]
        stamps = [line["timestamp"] for line in lines]
        assert stamps == sorted(stamps) and all(s.endswith("Z") and len(s) == 24 for s in stamps)
        assert stamps[-1] < time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(NOW))  # all before now
        kinds = {line["type"] for line in lines}
        assert kinds == {"session_meta", "turn_context", "event_msg", "response_item"}
        events = [line["payload"]["type"] for line in lines if line["type"] == "event_msg"]
        assert events.count("task_complete") == len(session["turns"])
        replies = [line["payload"] for line in lines if line["type"] == "response_item"
                   and line["payload"].get("role") == "assistant"]
        assert [r["content"][0]["text"] for r in replies] == [t["reply"] for t in session["turns"]]
        done = [line["payload"]["last_agent_message"] for line in lines
                if line["payload"].get("type") == "task_complete"]
        assert done == [t["message"] for t in session["turns"]]
        assert not any("<oai-mem-citation>" in m for m in done)
        assert int(path.stat().st_mtime) == session["turns"][-1]["at"] + 1


def test_the_replies_cite_memories_of_the_sample_home(home):
    known = {BUILDER.thread_id(i) for i, row in enumerate(BUILDER.THREADS) if row[6] != "folder"}
    cited = [t for s in BUILDER.sample_sessions(NOW) for turn in s["turns"] for t in turn["threads"]]
    assert cited and set(cited) <= known
    for session in BUILDER.sample_sessions(NOW):
        for turn in session["turns"]:
            for entry in turn["entries"]:
                path, first, last = BUILDER._cited_lines(entry)
                lines = (home / "memories" / path).read_text(encoding="utf-8").split("\n")
                assert last <= len(lines) and any(lines[n - 1].strip() for n in range(first, last + 1))


def test_memcite_ingest_finds_the_citations_put_there(home, tmp_path):
    db = tmp_path / "memcite.sqlite"
    env = {**os.environ, "MEMCITE_HOME": str(tmp_path / "data"), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-m", "memcite", "ingest", "--json", "--db", str(db),
                           "--codex-home", str(home)], capture_output=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    reports = [json.loads(line) for line in done.stdout.decode().splitlines() if line.strip()]
    files = {r["session_id"]: r for r in reports if r.get("session_id")}
    sessions = BUILDER.sample_sessions(NOW)
    assert set(files) == {s["id"] for s in sessions}
    for session in sessions:
        report = files[session["id"]]
        assert report["recorded"] == len(session["turns"]) and not report["bad_line_count"]
        assert report["counted"] == sum(len(set(t["threads"])) for t in session["turns"])
    conn = sqlite3.connect(db)
    try:
        by_reply = {}
        for key, thread in conn.execute(
                "SELECT r.reply_key, c.thread_id FROM replies r JOIN cited_ids c ON c.reply_id = r.id"
                " ORDER BY r.id, c.position"):
            by_reply.setdefault(key.split(":")[0], []).append(thread)
    finally:
        conn.close()
    assert by_reply == {s["id"]: [t for turn in s["turns"] for t in turn["threads"]]
                        for s in sessions}


def test_the_stop_hook_records_a_session_from_codex_s_payload(home, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCITE_HOME", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    session = BUILDER.sample_sessions(NOW)[-1]
    transcript = str(home / session["path"])
    payload = stop_payload(session, transcript, BUILDER.SESSION_MODEL)
    # The end of the reply Codex passes is in the file: the hook does not wait for a flush.
    assert reply_on_disk(transcript, os.path.getsize(transcript), payload["last_assistant_message"])
    db = tmp_path / "data" / "memcite.sqlite"
    assert hook_stop(db=str(db), stdin=io.BytesIO(json.dumps(payload).encode())) == 0
    entry = read_entries(tmp_path / "data" / "logs" / "hooks.log", 1)[-1]
    assert (entry["status"], entry["recorded"], entry["turn_id"]) == \
        ("ok", len(session["turns"]), session["turns"][-1]["turn_id"])
    assert entry["counted"] == sum(len(set(t["threads"])) for t in session["turns"])
    assert "waited_for_reply" not in entry
