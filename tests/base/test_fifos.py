"""A FIFO, a socket, a device or a folder planted where memcite opens a file: refused at once.

Everything an agent can write is untrusted, and a plain ``open`` of a FIFO waits for a
writer (for writing, for a reader) forever. Each test runs memcite in a subprocess with a
generous timeout, so that a regression fails (``TimeoutExpired``) instead of hanging the
suite, and checks that the refusal says what was found and where.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from codex_sessions import session_id, session_path, write_session

TIMEOUT = 10  # seconds: far more than any of these needs, far less than a hang
PROMPT = 5  # what "at once" means here, start-up included
SESSION = session_id(11)
KINDS = ["fifo", "socket", "device", "directory"]
WORDS = {"fifo": "a FIFO (named pipe)", "socket": "a socket", "device": "a device",
         "directory": "a directory"}


def plant(path: Path, kind: str) -> Path:
    """Put a ``kind`` of non-regular file at ``path``."""
    if os.path.lexists(path):
        os.remove(path)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        # A relative name: an AF_UNIX address is limited to ~100 bytes, tmp_path may be longer.
        saved = os.getcwd()
        os.chdir(path.parent)
        try:
            server = socket.socket(socket.AF_UNIX)
            server.bind(path.name)
            server.close()  # the socket file stays
        finally:
            os.chdir(saved)
    elif kind == "device":
        os.symlink("/dev/zero", path)  # a link to a device: followed, still refused
    else:
        path.mkdir()
    return path


def memcite(args: list[str], env: dict, stdin: bytes = b"", cwd=None):
    """``python -m memcite ARGS`` with ``env``; (exit code, stdout, stderr, seconds)."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "memcite", *args], input=stdin,
                          capture_output=True, env={**os.environ, **env}, timeout=TIMEOUT,
                          cwd=cwd)
    return (done.returncode, done.stdout.decode(), done.stderr.decode(),
            time.monotonic() - started)


def python(code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` (memcite's library) in a fresh interpreter; a hang is a timeout."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=TIMEOUT)


@pytest.fixture
def env(tmp_path, memory_home):
    codex = memory_home
    (tmp_path / "memcite").mkdir()
    return {"CODEX_HOME": str(codex), "MEMCITE_HOME": str(tmp_path / "memcite"),
            "MEMCITE_DB": str(tmp_path / "memcite" / "memcite.sqlite"),
            "MEMCITE_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}


def _log(env: dict) -> list[dict]:
    path = Path(env["MEMCITE_HOME"]) / "logs" / "hooks.log"
    return [json.loads(line) for line in path.read_text().splitlines()]


# --------------------------------------------------------------------------- the Stop hook


@pytest.mark.parametrize("kind", KINDS)
def test_the_stop_hook_refuses_a_transcript_that_is_not_a_regular_file(env, tmp_path, kind):
    """stop_hook._run_stop -> session_offsets.ingest_session_file -> _open_regular: it used to
    open the transcript with a plain ``open`` and only then look at what it was, so a FIFO
    kept the hook waiting until its 20 s deadline."""
    transcript = plant(session_path(Path(env["CODEX_HOME"]), SESSION), kind)
    payload = json.dumps({"session_id": SESSION, "transcript_path": str(transcript),
                          "hook_event_name": "Stop", "last_assistant_message": "done"})
    code, out, err, seconds = memcite(["hook", "stop"], env, payload.encode())
    assert (code, out, err) == (0, "", "") and seconds < PROMPT
    [entry] = _log(env)
    assert entry["status"] == "error", entry
    assert entry["error"] == f"{transcript}: is {WORDS[kind]}, not a session file; not read"


def test_a_transcript_replaced_by_a_fifo_after_the_read_is_not_waited_on(env, tmp_path):
    """reply_on_disk and wait_for_growth look at the file again after it was read."""
    path = write_session(Path(env["CODEX_HOME"]), SESSION, 1)
    fifo = plant(tmp_path / "fifo", "fifo")
    result = python(f"""
        import time
        from memcite.codex.stop_hook import reply_on_disk, wait_for_growth
        started = time.monotonic()
        assert reply_on_disk({str(fifo)!r}, 100, "a reply not on disk") is True
        assert wait_for_growth({str(fifo)!r}, 0, 3) is False
        assert time.monotonic() - started < 1, time.monotonic() - started
        assert reply_on_disk({str(path)!r}, {path.stat().st_size}, "never said") is False
    """)
    assert result.returncode == 0, result.stderr


def test_a_fifo_as_the_hook_log_neither_blocks_the_hook_nor_is_written(env, tmp_path):
    """hook_log.append_entry opened the log for writing with a plain ``os.open``: with a FIFO
    there and no reader, the hook (its deadline already cleared) waited forever."""
    log = Path(env["MEMCITE_HOME"]) / "logs" / "hooks.log"
    log.parent.mkdir(parents=True)
    plant(log, "fifo")
    path = write_session(Path(env["CODEX_HOME"]), SESSION, 1)
    payload = json.dumps({"session_id": SESSION, "transcript_path": str(path),
                          "hook_event_name": "Stop"})
    code, out, err, seconds = memcite(["hook", "stop"], env, payload.encode())
    assert (code, out, err) == (0, "", "") and seconds < PROMPT
    assert Path(log).is_fifo()  # left as it was


# --------------------------------------------------------------------------- session_offsets


@pytest.mark.parametrize("kind", KINDS)
def test_ingest_session_file_refuses_at_once(env, tmp_path, kind):
    planted = plant(tmp_path / "rollout.jsonl", kind)
    result = python(f"""
        from memcite.errors import InputError
        from memcite.ledger.session_offsets import ingest_session_file
        from memcite.ledger.store import open_store
        conn = open_store({str(tmp_path / "m.sqlite")!r})
        try:
            ingest_session_file(conn, {str(planted)!r})
        except InputError as error:
            print(error)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{planted}: is {WORDS[kind]}, not a session file; not read"


# --------------------------------------------------------------------------- hook_log


def test_the_hook_log_refuses_a_fifo_for_writing_and_for_reading(tmp_path):
    log = plant(tmp_path / "hooks.log", "fifo")
    result = python(f"""
        from memcite.ledger.hook_log import append_entry, read_entries
        for call in (lambda: append_entry({str(log)!r}, {{"status": "ok"}}),
                     lambda: read_entries({str(log)!r})):
            try:
                call()
            except OSError as exc:
                print(exc.filename, "|", exc.strerror)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"{log} | a FIFO (named pipe), not a regular file"] * 2


# --------------------------------------------------------------------------- doctor


@pytest.mark.parametrize(("where", "check"), [
    ("config.toml", "codex-config"), ("hooks.json", "stop-hook"),
    ("memories_1.sqlite", "memories-db"), ("hooks.log", "hook-runs")])
def test_doctor_names_a_fifo_it_finds_and_reads_nothing_from_it(env, tmp_path, where, check):
    target = Path(env["MEMCITE_HOME"]) / "logs" / where if where == "hooks.log" \
        else Path(env["CODEX_HOME"]) / where
    target.parent.mkdir(parents=True, exist_ok=True)
    plant(target, "fifo")
    code, out, err, seconds = memcite(["doctor", "--json"], env, cwd=tmp_path)
    assert code == 1, err
    found = {c["name"]: c for c in json.loads(out)["checks"]}[check]
    assert found["status"] == "failure"
    assert str(target) in found["message"] and "a FIFO (named pipe)" in found["message"], found


# --------------------------------------------------------------------------- codex_home and sync


def test_sync_refuses_a_fifo_as_codex_config(env, tmp_path):
    config = plant(Path(env["CODEX_HOME"]) / "config.toml", "fifo")
    code, out, err, _ = memcite(["sync"], env)
    assert code == 2, (out, err)
    assert f"{config}: a FIFO (named pipe), not a regular file; Codex's config cannot be read" in err
    assert not os.path.exists(env["MEMCITE_DB"])  # refused before memcite's database is made


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_sync_refuses_codex_database_that_is_not_a_regular_file(env, tmp_path, kind):
    state = plant(Path(env["CODEX_HOME"]) / "memories_1.sqlite", kind)
    code, out, err, _ = memcite(["sync"], env)
    assert code == 2, (out, err)
    assert f"{state}: {WORDS[kind]}, not a regular file; not read, nothing synced" in err
    assert not os.path.exists(env["MEMCITE_DB"])


def test_codex_database_readers_refuse_a_fifo(tmp_path):
    """codex_home._open (stage1 count and rows) and sync._Stage1Copy.attach (SQLite opens the
    file itself, blocking) each look before they open."""
    fifo = plant(tmp_path / "memories_1.sqlite", "fifo")
    result = python(f"""
        import sqlite3
        from memcite.ledger.codex_home import CodexHomeError, count_stage1_outputs
        from memcite.ledger.sync import _Stage1Copy, _Turns
        try:
            count_stage1_outputs({str(fifo)!r})
        except CodexHomeError as error:
            print(error)
        copy = _Stage1Copy(_Turns(sqlite3.connect(":memory:")), {str(fifo)!r}, (None,) * 4,
                           10, None, 0)
        try:
            copy.attach()
        except CodexHomeError as error:
            print(error)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"{fifo}: a FIFO (named pipe), not a regular file; not read",
        f"{fifo}: cannot read: a FIFO (named pipe), not a regular file; stage1_outputs not copied"]


# --------------------------------------------------------------------------- lint


@pytest.mark.parametrize("kind", ["fifo", "socket"])  # a link to a device leads out: not followed
def test_lint_reports_a_planted_special_file_as_unreadable(env, tmp_path, kind):
    folder = Path(env["CODEX_HOME"]) / "memories"
    planted = plant(folder / "MEMORY.md", kind)  # the file Codex reads first
    code, out, err, seconds = memcite(["lint", "--json", str(folder)], env)
    assert seconds < PROMPT
    findings = [f for f in json.loads(out)["findings"] if f["code"] == "file-unreadable"]
    assert [(f["path"], f["message"]) for f in findings] == [
        (str(planted), f"{WORDS[kind]}, not a regular file")], (out, err)
    assert code == 1


def test_lint_line_counter_refuses_a_fifo_it_is_pointed_at(tmp_path):
    """run._line_counter opened the located file again with a plain ``open``."""
    fifo = plant(tmp_path / "pointed.md", "fifo")
    result = python(f"""
        from memcite.lint.run import _line_counter
        print(_line_counter({str(tmp_path)!r})({fifo.name!r}))
    """)
    assert (result.returncode, result.stdout.strip()) == (0, "None"), result.stderr


# --------------------------------------------------------------------------- a named FILE


NAMED_FILE_COMMANDS = {
    "note import": lambda path, cwd: ["note", "import", path, "--cwd", cwd],
    "note save --file": lambda path, cwd: ["note", "save", "--file", path, "--cwd", cwd],
    "parse": lambda path, cwd: ["parse", path],
    "strip": lambda path, cwd: ["strip", path],
    "record": lambda path, cwd: ["record", path],
    "record --jsonl": lambda path, cwd: ["record", "--jsonl", path],
    "truncate": lambda path, cwd: ["truncate", path],
    "conformance check --corpus": lambda path, cwd: ["conformance", "check", "--corpus", path,
                                                     "--", sys.executable, "-c", "pass"],
}


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
@pytest.mark.parametrize("command", sorted(NAMED_FILE_COMMANDS))
def test_every_command_reading_a_named_file_refuses_what_is_not_one(env, tmp_path, command, kind):
    """``note import FIFO`` waited for a writer for ever where ``--corpus FIFO`` was refused:
    a named FILE is a regular file everywhere (``-`` reads a pipe)."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    planted = plant(tmp_path / "input.jsonl", kind)
    args = NAMED_FILE_COMMANDS[command](str(planted), str(project))
    code, out, err, seconds = memcite(args, env, cwd=str(project))
    assert code == 2 and seconds < PROMPT, (code, out, err)
    assert str(planted) in err and WORDS[kind] in err, err
    assert "Traceback" not in err
