"""``memcite hook stop``: new replies recorded after each turn; never a failure, never a byte on stdout."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from codex_sessions import (
    MEMORIES,
    cited_reply,
    session_bytes,
    session_id,
    turn,
    write_session,
)
from memcite.cli.gate_commands import hook_stop
from memcite.codex.stop_hook import codex_home_of
from memcite.ledger import hook_log
from memcite.ledger.hook_log import append_entry, read_entries
from memcite.ledger.store import open_store, transaction

SESSION = session_id(7)


@pytest.fixture
def home(tmp_path, monkeypatch, memory_home):
    """A Codex home with a memory folder, memcite's data folder beside it, both in the environment."""
    codex = memory_home
    monkeypatch.setenv("CODEX_HOME", str(codex))
    monkeypatch.setenv("MEMCITE_HOME", str(tmp_path / "memcite"))
    monkeypatch.delenv("MEMCITE_DB", raising=False)
    conn = open_store(_db(tmp_path))  # the inventory knows the cited memories
    with transaction(conn):
        conn.executemany("INSERT INTO memories (thread_id, source, first_synced_at, synced_at)"
                         " VALUES (?, 'stage1_outputs', 1, 1)", [(t,) for t in MEMORIES])
    conn.close()
    return codex


def _db(tmp_path: Path) -> Path:
    (tmp_path / "memcite").mkdir(exist_ok=True)
    return tmp_path / "memcite" / "memcite.sqlite"


def _log(tmp_path: Path) -> list[dict]:
    return read_entries(tmp_path / "memcite" / "logs" / "hooks.log", 1000)


def _last_stop(tmp_path: Path) -> dict:
    """The log's last Stop-hook run (a quarantine the hook started detached may log its own
    line after it, at any moment)."""
    return [entry for entry in _log(tmp_path) if entry["event"] == "stop"][-1]


def _usage(tmp_path: Path) -> int:
    conn = sqlite3.connect(_db(tmp_path))
    try:
        return conn.execute("SELECT coalesce(sum(usage_count), 0) FROM memories").fetchone()[0]
    finally:
        conn.close()


def payload(path, message=None, **extra) -> bytes:
    body = {"session_id": SESSION, "turn_id": "t1", "transcript_path": str(path), "cwd": "/w",
            "hook_event_name": "Stop", "model": "gpt-5", "permission_mode": "default",
            "stop_hook_active": False, "last_assistant_message": message}
    body.update(extra)
    return json.dumps(body).encode()


def run_hook(data: bytes, capsys, **options) -> None:
    code = hook_stop(stdin=io.BytesIO(data), **options)
    out, err = capsys.readouterr()
    assert (code, out, err) == (0, "", "")


def subprocess_hook(data: bytes, env=None, args=()) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memcite", "hook", "stop", *args], input=data,
                          capture_output=True, env=env or os.environ.copy(), timeout=60)


def test_each_turn_records_only_what_is_new(home, tmp_path, capsys):
    path = write_session(home, SESSION, 2)
    run_hook(payload(path), capsys)
    assert _usage(tmp_path) == 2
    for number in (3, 4):  # the file grows between turns
        with open(path, "ab") as handle:
            handle.write(turn(number))
        run_hook(payload(path), capsys)
    assert _usage(tmp_path) == 4
    runs = _log(tmp_path)
    assert [r["status"] for r in runs] == ["ok"] * 3
    assert [r["recorded"] for r in runs] == [4, 2, 2]
    assert runs[1]["from_offset"] == runs[0]["to_offset"] and not runs[1]["reread"]
    assert runs[0]["session_id"] == SESSION and runs[0]["at"].endswith("Z")
    assert isinstance(runs[0]["at_epoch"], int)


def test_a_rewritten_session_is_read_again_and_counts_stay_exact(home, tmp_path, capsys):
    path = write_session(home, SESSION, 3)
    run_hook(payload(path), capsys)
    path.write_bytes(session_bytes(SESSION, 4, tool_output=10))
    run_hook(payload(path), capsys)
    last = _last_stop(tmp_path)
    assert last["reread"] and last["recorded"] == 2 and last["replies"] == 8
    assert _usage(tmp_path) == 4


def test_a_compressed_session(home, tmp_path, capsys):
    path = write_session(home, SESSION, 2, archived=True, zst=True)
    run_hook(payload(path), capsys)
    assert _usage(tmp_path) == 2


def test_the_memory_folder_comes_from_the_session_files_home(home, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "elsewhere"))
    path = write_session(home, SESSION, 1)
    run_hook(payload(path), capsys)
    conn = sqlite3.connect(_db(tmp_path))
    roots = {row[0] for row in conn.execute("SELECT memory_root FROM replies")}
    assert roots == {os.path.realpath(home / "memories")}


@pytest.mark.parametrize(
    ("data", "status", "words"),
    [
        (b"", "error", "empty"),
        (b"not json", "error", "not JSON"),
        (b"[1, 2]", "error", "not a JSON object"),
        (b'{"transcript_path": 7}', "error", "not a string"),
        (b'{"transcript_path": null}', "skipped", "no transcript_path"),
        (b'{"session_id": "s"}', "skipped", "no transcript_path"),
        (b'{"transcript_path": "/no/such/rollout.jsonl"}', "error", "no such session file"),
        (b"\xff\xfe{", "error", "not JSON"),
    ],
)
def test_bad_payloads_are_logged_and_exit_zero(home, tmp_path, capsys, data, status, words):
    run_hook(data, capsys)
    entry = _last_stop(tmp_path)
    assert entry["status"] == status
    assert words in (entry.get("error") or entry.get("reason"))


def test_a_folder_as_transcript_is_an_error(home, tmp_path, capsys):
    run_hook(payload(home), capsys)
    assert "directory" in _last_stop(tmp_path)["error"]


def test_an_oversized_payload_is_refused_unread(home, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("memcite.codex.stop_hook.MAX_PAYLOAD_BYTES", 100)
    run_hook(payload(write_session(home, SESSION, 1), pad="x" * 200), capsys)
    assert "larger than" in _last_stop(tmp_path)["error"]


def test_a_broken_database_is_logged(home, tmp_path, capsys):
    _db(tmp_path).write_bytes(b"this is not a database" * 10)
    run_hook(payload(write_session(home, SESSION, 1)), capsys)
    assert "not an SQLite database" in _last_stop(tmp_path)["error"]


def test_unknown_arguments_are_ignored_not_fatal(home, tmp_path):
    path = write_session(home, SESSION, 1)
    done = subprocess_hook(payload(path), args=("--bogus", "x"))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    entry = _last_stop(tmp_path)
    assert entry["status"] == "ok" and entry["ignored_args"] == "--bogus x"


def test_a_locked_database_is_logged_busy_and_the_next_turn_catches_up(home, tmp_path):
    path = write_session(home, SESSION, 2)
    writer = sqlite3.connect(_db(tmp_path), isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        started = time.monotonic()
        done = subprocess_hook(payload(path))
        elapsed = time.monotonic() - started
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert elapsed < 10
    entry = _last_stop(tmp_path)
    assert entry["status"] == "busy" and "nothing was lost" in entry["reason"], entry
    assert "error" not in entry  # doctor counts no failure for it
    assert _usage(tmp_path) == 0
    done = subprocess_hook(payload(path))
    assert done.returncode == 0 and _last_stop(tmp_path)["recorded"] == 4
    assert _usage(tmp_path) == 2


def test_typer_path_behaves_the_same(home, tmp_path):
    path = write_session(home, SESSION, 1)
    env = {**os.environ, "MEMCITE_NO_FASTPATH": "1"}
    done = subprocess_hook(payload(path), env=env)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert _last_stop(tmp_path)["recorded"] == 2


def test_the_fast_path_imports_no_typer(home, tmp_path):
    path = write_session(home, SESSION, 1)
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "memcite", "hook", "stop"],
                          input=payload(path), capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stdout == b""
    imported = done.stderr.decode()
    for heavy in ("typer", "click", "rich", "tiktoken", "pydantic"):
        assert f" {heavy}\n" not in imported and f" {heavy}." not in imported, heavy


def test_the_hook_and_a_whole_home_ingest_at_once_count_nothing_twice(home, tmp_path):
    paths = [write_session(home, session_id(n), 20) for n in range(1, 4)]
    env = os.environ.copy()
    ingest = subprocess.Popen([sys.executable, "-m", "memcite", "ingest"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    hooks = [threading.Thread(target=subprocess_hook, args=(payload(p),)) for p in paths]
    for thread in hooks:
        thread.start()
    for thread in hooks:
        thread.join()
    assert ingest.wait(timeout=120) == 0, ingest.stderr.read()
    assert _usage(tmp_path) == 60
    conn = sqlite3.connect(_db(tmp_path))
    assert conn.execute("SELECT count(*) FROM replies").fetchone()[0] == 120


@pytest.mark.parametrize(
    ("path", "home"),
    [
        ("/h/.codex/sessions/2026/01/20/rollout-x.jsonl", "/h/.codex"),
        ("/h/.codex/archived_sessions/rollout-x.jsonl.zst", "/h/.codex"),
        ("/h/.codex/sessions/rollout-x.jsonl", None),
        ("/h/elsewhere/2026/01/20/rollout-x.jsonl", None),
        ("/h/.codex/sessions/2026/jan/20/rollout-x.jsonl", None),
    ],
)
def test_codex_home_of_a_session_file(path, home):
    assert codex_home_of(path) == home


def test_the_log_is_rotated_and_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(hook_log, "MAX_LOG_BYTES", 2_000)
    log = tmp_path / "logs" / "hooks.log"
    for number in range(500):
        append_entry(log, {"n": number, "error": "e" * 2_000})  # cut to MAX_FIELD_CHARS
    assert log.stat().st_size < 2_000 + 700
    assert Path(str(log) + ".1").stat().st_size < 2_000 + 700
    assert not Path(str(log) + ".2").exists()
    last = read_entries(log, 5)
    assert [e["n"] for e in last] == [495, 496, 497, 498, 499]
    assert len(last[-1]["error"]) == hook_log.MAX_FIELD_CHARS
    assert oct(log.stat().st_mode & 0o777) == "0o600"
    assert oct(log.parent.stat().st_mode & 0o777) == "0o700"


def test_a_payload_whose_stdin_stays_open_is_read_to_the_end_of_the_object(home, tmp_path):
    path = write_session(home, SESSION, 1)
    process = subprocess.Popen([sys.executable, "-m", "memcite", "hook", "stop"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    data = payload(path)
    process.stdin.write(data[:50])
    process.stdin.flush()
    time.sleep(0.2)
    process.stdin.write(data[50:])
    process.stdin.flush()  # and never closed
    try:
        assert process.wait(timeout=30) == 0
    finally:
        process.stdin.close()
    assert process.stdout.read() == b"" and _last_stop(tmp_path)["recorded"] == 2


def test_a_run_past_its_deadline_stops_and_says_so(home, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("memcite.codex.stop_hook.HOOK_DEADLINE_SECONDS", 0.2)

    def slow(*args, **kwargs):
        time.sleep(5)

    monkeypatch.setattr("memcite.ledger.session_offsets.ingest_session_file", slow)
    started = time.monotonic()
    run_hook(payload(write_session(home, SESSION, 1)), capsys)
    assert time.monotonic() - started < 3
    assert "gave up after" in _last_stop(tmp_path)["error"]


def visible(number: int) -> str:
    """``last_assistant_message`` of a turn: its final reply without the citation block."""
    return cited_reply(number).split("<oai-mem-citation>")[0].rstrip()


def test_a_final_reply_not_yet_on_disk_is_waited_for(home, tmp_path, capsys):
    path = write_session(home, SESSION, 1)
    lines = turn(2).splitlines(keepends=True)
    with open(path, "ab") as handle:
        handle.write(b"".join(lines[:-2]))  # the final reply and its event copy still queued

    def flush_later():
        time.sleep(0.4)
        with open(path, "ab") as handle:
            handle.write(b"".join(lines[-2:]))

    writer = threading.Thread(target=flush_later)
    writer.start()
    run_hook(payload(path, visible(2)), capsys)
    writer.join()
    entry = _last_stop(tmp_path)
    assert entry["status"] == "ok" and entry.get("waited_for_reply")
    assert entry["replies"] == 4 and _usage(tmp_path) == 2  # both turns' citations


def test_a_final_reply_already_on_disk_costs_no_wait(home, tmp_path, capsys):
    path = write_session(home, SESSION, 3)
    started = time.monotonic()
    run_hook(payload(path, visible(3)), capsys)
    assert time.monotonic() - started < 1.4
    assert "waited_for_reply" not in _last_stop(tmp_path)


def test_a_final_reply_that_never_comes_delays_the_hook_a_bounded_time(home, tmp_path, capsys):
    path = write_session(home, SESSION, 1)
    started = time.monotonic()
    run_hook(payload(path, "a reply Codex never wrote to the file"), capsys)
    assert 1.4 <= time.monotonic() - started < 5
    entry = _last_stop(tmp_path)
    assert entry["status"] == "ok" and entry["recorded"] == 2 and "waited_for_reply" not in entry


def test_the_hook_keeps_a_snapshot_when_the_memory_folder_changed_only(home, tmp_path, capsys):
    from memcite.ledger.snapshots import SnapshotStore, snapshot_folder

    path = write_session(home, SESSION, 1)
    run_hook(payload(path), capsys)
    assert _last_stop(tmp_path)["snapshot"]["taken"] == 1
    run_hook(payload(path), capsys)
    assert "snapshot" not in _last_stop(tmp_path)  # unchanged: nothing but the look
    with open(os.path.join(home, "memories", "MEMORY.md"), "a") as handle:
        handle.write("- one more line\n")
    run_hook(payload(path), capsys)
    assert _last_stop(tmp_path)["snapshot"]["taken"] == 2
    index = SnapshotStore(snapshot_folder(str(_db(tmp_path)))).index()
    assert [(s["reason"], s["baseline"]) for s in index] == [("hook", True), ("hook", False)]
