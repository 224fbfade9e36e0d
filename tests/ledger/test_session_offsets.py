"""Session offsets: a session file is read from where the last read stopped, and counts stay exact."""

from __future__ import annotations

import os

import pytest

from codex_sessions import (
    MEMORIES,
    ledger_knowing,
    memory_folder,
    session_bytes,
    session_id,
    turn,
    write_session,
)
from memcite.errors import InputError
from memcite.ledger.ingest import ingest_rollout
from memcite.ledger.session_offsets import (
    fingerprint,
    ingest_codex_home,
    ingest_session_file,
    iter_session_files,
    load_offset,
    whole_lines_end,
)
from memcite.ledger.store import open_store

SESSION = session_id(1)


@pytest.fixture
def conn(tmp_path):
    connection = ledger_knowing(tmp_path / "m.sqlite", MEMORIES)
    yield connection
    connection.close()


def usage(conn) -> int:
    return conn.execute("SELECT sum(usage_count) FROM memories").fetchone()[0]


def keys(conn) -> list[str]:
    return [row[0] for row in conn.execute("SELECT reply_key FROM replies ORDER BY reply_key")]


def test_a_growing_file_is_read_from_its_offset(conn, tmp_path):
    path = write_session(tmp_path, SESSION, 3)
    first = ingest_session_file(conn, path)
    assert (first.status, first.from_offset, first.to_offset) == ("read", 0, path.stat().st_size)
    assert (first.report.replies, first.report.counted) == (6, 3)  # two replies a turn, one cites
    with open(path, "ab") as handle:
        handle.write(turn(4))
    second = ingest_session_file(conn, path)
    assert second.from_offset == first.to_offset and not second.reread
    assert (second.report.replies, second.report.recorded, second.report.duplicates) == (2, 2, 0)
    assert usage(conn) == 4
    # the keys are the same as a whole read gives: place in the file, line numbers continued
    whole = open_store(tmp_path / "whole.sqlite")
    ingest_rollout(whole, path)
    assert keys(whole) == keys(conn)


def test_nothing_new_reads_nothing(conn, tmp_path):
    path = write_session(tmp_path, SESSION, 2)
    ingest_session_file(conn, path)
    again = ingest_session_file(conn, path)
    assert again.status == "unchanged" and again.report is None


def test_a_line_being_written_waits_for_its_newline(conn, tmp_path):
    path = write_session(tmp_path, SESSION, 1)
    half = turn(2)
    with open(path, "ab") as handle:
        handle.write(half[:-40])  # the last line (an event copy) lacks its end
    first = ingest_session_file(conn, path)
    assert first.to_offset == path.stat().st_size - (len(half) - 40 - half[:-40].rfind(b"\n") - 1)
    assert not first.caught_up and first.report.bad_line_count == 0
    with open(path, "ab") as handle:
        handle.write(half[-40:])
    second = ingest_session_file(conn, path)
    assert second.to_offset == path.stat().st_size and second.caught_up
    assert usage(conn) == 2


def test_a_rewritten_file_is_read_again_without_counting_twice(conn, tmp_path):
    path = write_session(tmp_path, SESSION, 3)
    ingest_session_file(conn, path)
    # rewritten in place: same session, the turns' tool outputs differ (a longer file)
    path.write_bytes(session_bytes(SESSION, 4, tool_output=50))
    result = ingest_session_file(conn, path)
    assert result.reread and result.from_offset == 0
    # lines keep their numbers, so replies 1-3 are duplicates, turn 4 is new
    assert (result.report.recorded, result.report.duplicates) == (2, 6)
    assert usage(conn) == 4


def test_a_shrunk_file_is_read_again_from_the_start(conn, tmp_path):
    path = write_session(tmp_path, SESSION, 3)
    ingest_session_file(conn, path)
    path.write_bytes(session_bytes(SESSION, 1))
    result = ingest_session_file(conn, path)
    assert result.reread and result.report.duplicates == 2 and result.report.recorded == 0
    assert load_offset(conn, path).byte_offset == path.stat().st_size


def test_a_budget_reads_whole_lines_and_the_rest_later(conn, tmp_path):
    path = write_session(tmp_path, SESSION, 6)
    reads = []
    while True:
        result = ingest_session_file(conn, path, budget=8_000)
        reads.append(result)
        if result.caught_up:
            break
    assert len(reads) > 3
    assert all(r.to_offset - r.from_offset <= 40_000 for r in reads)  # one line may pass the budget
    assert usage(conn) == 6
    assert sum(r.report.replies for r in reads if r.report) == 12


def test_zstd_files_are_read_whole_when_changed_only(conn, tmp_path):
    path = write_session(tmp_path, SESSION, 2, zst=True)
    first = ingest_session_file(conn, path)
    assert first.report.replies == 4 and usage(conn) == 2
    assert ingest_session_file(conn, path).status == "unchanged"
    write_session(tmp_path, SESSION, 3, zst=True)
    again = ingest_session_file(conn, path)
    assert (again.report.recorded, again.report.duplicates) == (2, 4)


def test_offsets_start_where_keys_continue_after_a_plain_ingest(conn, tmp_path):
    path = write_session(tmp_path, SESSION, 2)
    ingest_rollout(conn, path)  # an explicit ingest stores no offset
    result = ingest_session_file(conn, path)
    assert result.report.duplicates == 4 and result.report.recorded == 0


def test_a_locked_database_leaves_the_offset(conn, tmp_path):
    path = write_session(tmp_path, SESSION, 2)
    blocker = open_store(tmp_path / "m.sqlite")
    timid = open_store(tmp_path / "m.sqlite", busy_timeout_ms=50)
    blocker.execute("BEGIN IMMEDIATE")
    with pytest.raises(Exception, match="locked"):
        ingest_session_file(timid, path)
    blocker.execute("ROLLBACK")
    assert load_offset(conn, path) is None
    assert ingest_session_file(timid, path).report.recorded == 4


@pytest.mark.parametrize("bad", ["missing", "folder"])
def test_a_file_that_cannot_be_read_is_a_clear_error(conn, tmp_path, bad):
    path = tmp_path / "x.jsonl"
    if bad == "folder":
        path.mkdir()
    with pytest.raises(InputError, match="x.jsonl"):
        ingest_session_file(conn, path)


def test_whole_lines_end_table(tmp_path):
    data = b"aaaa\nbbbbbbbbbb\ncc\nddd"
    path = tmp_path / "f"
    path.write_bytes(data)
    with open(path, "rb") as handle:
        size = len(data)
        assert whole_lines_end(handle, 0, size) == 19  # after "cc\n"
        assert whole_lines_end(handle, 19, size) == 19  # "ddd" has no newline yet
        assert whole_lines_end(handle, 0, size, budget=7) == 5
        assert whole_lines_end(handle, 5, size, budget=3) == 16  # one line longer than the budget
        assert whole_lines_end(handle, 0, 0) == 0


def test_fingerprint_sees_the_head_and_the_tail(tmp_path):
    path = tmp_path / "f"
    data = bytes(range(256)) * 100
    path.write_bytes(data)
    with open(path, "rb") as handle:
        mark = fingerprint(handle, len(data))
        assert fingerprint(handle, len(data) - 1) != mark
    for place in (0, len(data) - 1):
        changed = bytearray(data)
        changed[place] ^= 1
        path.write_bytes(bytes(changed))
        with open(path, "rb") as handle:
            assert fingerprint(handle, len(data)) != mark


def test_the_home_walk_finds_sessions_and_prefers_plain_files(tmp_path):
    a = write_session(tmp_path, session_id(1), 1, day=19)
    b = write_session(tmp_path, session_id(2), 1, day=20, zst=True)
    c = write_session(tmp_path, session_id(3), 1, day=20)
    write_session(tmp_path, session_id(3), 1, day=20, zst=True)  # the plain one wins
    d = write_session(tmp_path, session_id(4), 1, archived=True)
    (tmp_path / "sessions" / "notes.txt").write_text("x")
    assert list(iter_session_files(tmp_path)) == [str(a), str(b), str(c), str(d)]
    old = os.stat(a).st_mtime - 1000
    os.utime(a, (old, old))
    assert str(a) not in list(iter_session_files(tmp_path, since=int(old) + 500))


def test_a_whole_home_twice_records_nothing_the_second_time(conn, tmp_path):
    memory_folder(tmp_path)
    for number in range(1, 6):
        write_session(tmp_path, session_id(number), 2, zst=number == 5)
    first = ingest_codex_home(conn, tmp_path, memory_root=tmp_path / "memories")
    assert (first.files, first.read, first.recorded, first.counted) == (5, 5, 20, 10)
    second = ingest_codex_home(conn, tmp_path)
    assert (second.files, second.unchanged, second.recorded) == (5, 5, 0)
    # The sessions' replies are older than LATE_HASH_SECONDS and the memory folder has no git
    # history: their cited ranges are left unhashed (checked as unverified), not hashed as now.
    entries = conn.execute("SELECT count(*), count(lines_sha256) FROM cited_entries").fetchone()
    assert entries == (10, 0)


def test_the_window_reads_only_its_bytes(tmp_path):
    from memcite.ledger.session_offsets import _Window

    path = tmp_path / "f"
    path.write_bytes(b"0123456789\nabcdef\n")
    window = _Window(open(path, "rb"), 3, 14)
    assert window.readline(4) == b"3456"
    assert window.readline() == b"789\n"
    assert window.read() == b"abc"
    assert window.read(5) == b"" and window.readline() == b""
    window.close()


# --------------------------------------------------------------------------- the command


def _run(*args, env):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "memcite", *args], capture_output=True, text=True,
                          env=env, timeout=120)


@pytest.fixture
def env(tmp_path):
    return {**os.environ, "MEMCITE_DB": str(tmp_path / "cli.sqlite"),
            "CODEX_HOME": str(tmp_path / "codex"), "MEMCITE_HOME": str(tmp_path / "data")}


def test_ingest_with_no_files_brings_the_home_up_to_date(tmp_path, env):
    import json

    home = tmp_path / "codex"
    memory_folder(home)
    first_path = write_session(home, session_id(1), 2)
    write_session(home, session_id(2), 1, archived=True, zst=True)
    done = _run("ingest", env=env)
    assert done.returncode == 0, done.stderr
    assert "2 session files, 2 read (0 again from the start), 0 unchanged; 6 replies, 6 recorded" \
        in done.stdout
    with open(first_path, "ab") as handle:
        handle.write(turn(3))
    done = _run("ingest", "--json", env=env)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(d["path"], d["status"], d["recorded"], d["reread"]) for d in lines] == \
        [(str(first_path), "read", 2, False)]
    assert lines[0]["from_offset"] > 0 and lines[0]["to_offset"] == first_path.stat().st_size
    assert "1 unchanged" in done.stderr
    again = _run("ingest", "--codex-home", str(home), env=env)
    assert "0 read" in again.stdout and "0 recorded" in again.stdout


def test_ingest_since_and_its_errors(tmp_path, env):
    home = tmp_path / "codex"
    old = write_session(home, session_id(1), 1, day=1)
    write_session(home, session_id(2), 1, day=2)
    os.utime(old, (1_000_000_000, 1_000_000_000))
    done = _run("ingest", "--since", "2020-01-01", env=env)
    assert done.returncode == 0 and "1 session file," in done.stdout
    bad = _run("ingest", "--since", "yesterday", env=env)
    assert bad.returncode == 2 and "--since" in bad.stderr
    both = _run("ingest", str(old), "--since", "2020-01-01", env=env)
    assert both.returncode == 2 and "leave it out" in both.stderr
    empty = _run("ingest", "--codex-home", str(tmp_path / "nothing"), env=env)
    assert empty.returncode == 2 and "no sessions/" in empty.stderr
    assert not (tmp_path / "nothing").exists()
