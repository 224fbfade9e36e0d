"""``ingest FILE`` again, nothing changed: one look-up; anything changed: read and hashed whole.

``memcite.ledger.ingest_checks`` notes each whole read of a file (its stamp, a digest of
its recorded replies, what it reported). These tests check that a file read again as it
was is not read (no line parsed) and reports what a read reports, and that every kind of
change (appended, touched, rewritten in place with its old times put back, its recorded
replies changed, other read options) means a whole read with every reply hashed again.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from codex_sessions import (
    MEMORIES,
    ledger_knowing,
    memory_folder,
    paged_line,
    paged_session_lines,
    paged_turn,
    paginate,
    session_bytes,
    session_id,
    session_path,
)
from memcite.ledger import ingest, ingest_checks
from memcite.ledger.ingest import ingest_rollout

SESSION = session_id(41)


@pytest.fixture(autouse=True)
def settled_at_once(monkeypatch):
    """The files here are written just before they are read; note them all the same."""
    monkeypatch.setattr(ingest_checks, "SETTLED_NS", 0)


@pytest.fixture
def conn(tmp_path):
    connection = ledger_knowing(tmp_path / "m.sqlite", MEMORIES)
    yield connection
    connection.close()


@pytest.fixture
def lines_parsed(monkeypatch) -> list[int]:
    """How many lines each read hands to the JSON parser (one count per read)."""
    counts: list[int] = []
    real = ingest.iter_rollout_replies

    def counting(*args, **kwargs):
        counts.append(0)
        loads = ingest.loads_json

        def counted(data):
            counts[-1] += 1
            return loads(data)

        ingest.loads_json = counted
        try:
            yield from real(*args, **kwargs)
        finally:
            ingest.loads_json = loads

    monkeypatch.setattr(ingest, "iter_rollout_replies", counting)
    return counts


def _later() -> None:
    """Let the file system's clock move on (its times have a granularity)."""
    time.sleep(0.05)


def _paginated(tmp_path, turns: int = 6) -> os.PathLike:
    """A paginated file with a bad line, a line over 4 KiB and a reply still pending."""
    path = session_path(tmp_path / "codex", SESSION)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = paged_session_lines(SESSION, turns)
    lines.insert(3, b'{"type": "response_item", "payload": {"role": "assistant", \n')  # not JSON
    lines.insert(5, paged_line("response_item", {"type": "message", "role": "assistant",
                                                 "content": [{"type": "output_text",
                                                              "text": "x" * 5000}]}, 999))
    lines += paged_turn(turns + 1, len(lines), response_item=False, ends=False)
    path.write_bytes(b"".join(lines))
    return path


def _read(conn, path, max_bytes: int = 4096, **options):
    return ingest_rollout(conn, path, memory_root=memory_folder(path.parents[4]),
                          max_bytes=max_bytes, **options).to_dict()


def test_a_file_read_again_unchanged_is_not_read_and_reports_as_a_read(conn, tmp_path,
                                                                       lines_parsed):
    path = _paginated(tmp_path)
    first = _read(conn, path)
    assert first["recorded"] == 6 and first["bad_line_count"] == 1
    assert first["long_line_count"] == 1 and first["pending"] == 1
    conn.execute("DELETE FROM ingest_checks")  # as before the notes: a whole read again
    reread = _read(conn, path)
    again = _read(conn, path)
    assert len(lines_parsed) == 2 and lines_parsed[1] > 6  # the third read read nothing
    assert again == reread
    assert again["replies"] == again["duplicates"] == 6 and again["recorded"] == 0
    assert again["bad_lines"] == first["bad_lines"] and again["long_lines"] == first["long_lines"]
    assert again["session_id"] == SESSION


def test_a_legacy_file_too(conn, tmp_path, lines_parsed):
    path = session_path(tmp_path / "codex", SESSION)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(session_bytes(SESSION, 4))
    first = _read(conn, path, max_bytes=1 << 20)
    again = _read(conn, path, max_bytes=1 << 20)
    assert len(lines_parsed) == 1 and first["recorded"] == first["replies"] > 0
    assert again["duplicates"] == again["replies"] == first["replies"]


def test_an_appended_file_is_read_whole_and_its_new_reply_recorded(conn, tmp_path, lines_parsed):
    path = _paginated(tmp_path)
    _read(conn, path)
    _later()
    with open(path, "ab") as handle:
        handle.write(b"".join(paged_turn(20, 500)))
    again = _read(conn, path)
    assert len(lines_parsed) == 2 and again["recorded"] == 1
    assert again["duplicates"] == 6


def test_a_touched_file_is_read_whole(conn, tmp_path, lines_parsed):
    path = _paginated(tmp_path)
    _read(conn, path)
    _later()
    os.utime(path)
    _read(conn, path)
    assert len(lines_parsed) == 2


def test_a_reply_changed_in_place_with_the_old_times_put_back_is_found(conn, tmp_path,
                                                                       lines_parsed):
    """Same size, same inode, the modification time set back: the change time tells."""
    path = _paginated(tmp_path)
    _read(conn, path)
    info = os.stat(path)
    data = path.read_bytes()
    changed = data.replace(b"Turn 3: done", b"Turn 3: DONE")
    assert changed != data and len(changed) == len(data)
    _later()
    with open(path, "r+b") as handle:
        handle.write(changed)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    again = _read(conn, path)
    assert len(lines_parsed) > 1  # read and hashed whole (and again, once its replies moved)
    assert again["recorded"] == 1 and again["set_aside"] == 1
    recorded = conn.execute("SELECT count(*) FROM replies").fetchone()[0]
    assert recorded == 7  # the changed reply is a new one (its old text set aside)


def test_a_migrated_file_is_read_whole_and_its_replies_moved(conn, tmp_path, lines_parsed):
    path = session_path(tmp_path / "codex", SESSION)
    path.parent.mkdir(parents=True, exist_ok=True)
    legacy = session_bytes(SESSION, 4)
    path.write_bytes(legacy)
    _read(conn, path, max_bytes=1 << 20)
    _later()
    migrated = path.with_name("new.jsonl")
    migrated.write_bytes(paginate(legacy))
    os.replace(migrated, path)  # as codex migrate-rollouts writes it
    again = _read(conn, path, max_bytes=1 << 20)
    assert len(lines_parsed) >= 2 and again["rekeyed"] > 0 and again["recorded"] == 0


def test_recorded_replies_changed_mean_a_whole_read(conn, tmp_path, lines_parsed):
    path = _paginated(tmp_path)
    _read(conn, path)
    conn.execute("DELETE FROM replies WHERE reply_key = (SELECT max(reply_key) FROM replies)")
    again = _read(conn, path)
    assert len(lines_parsed) == 2 and again["recorded"] == 1


def test_other_read_options_mean_a_whole_read(conn, tmp_path, lines_parsed):
    path = _paginated(tmp_path)
    _read(conn, path)
    again = ingest_rollout(conn, path, max_bytes=1 << 20).to_dict()
    assert len(lines_parsed) == 2 and again["long_line_count"] == 0


def test_a_file_changed_just_before_its_read_is_not_noted(conn, tmp_path, lines_parsed,
                                                          monkeypatch):
    monkeypatch.setattr(ingest_checks, "SETTLED_NS", 60 * 10**9)
    path = _paginated(tmp_path)
    _read(conn, path)
    _read(conn, path)
    assert len(lines_parsed) == 2
    assert conn.execute("SELECT count(*) FROM ingest_checks").fetchone()[0] == 0


def test_a_strict_read_is_never_skipped(conn, tmp_path, lines_parsed):
    path = _paginated(tmp_path)
    _read(conn, path)
    _read(conn, path, profile="strict")
    assert len(lines_parsed) == 2


def test_a_damaged_note_means_a_whole_read(conn, tmp_path, lines_parsed):
    path = _paginated(tmp_path)
    _read(conn, path)
    conn.execute("UPDATE ingest_checks SET report = ?", (json.dumps({"replies": "many"}),))
    _read(conn, path)
    conn.execute("UPDATE ingest_checks SET report = '[[[['")
    _read(conn, path)
    assert len(lines_parsed) == 3


def test_a_file_name_that_is_not_utf8_is_noted_and_skipped(conn, tmp_path, lines_parsed):
    """No session_meta: the replies are keyed by the path, whose byte 0xfd is stored escaped."""
    folder = os.fsencode(tmp_path) + b"/odd\xfd"
    os.makedirs(folder)
    path = folder + b"/rollout.jsonl"
    with open(path, "wb") as handle:
        handle.write(b"".join(paged_session_lines(SESSION, 3)[1:]))  # no session_meta
    name = os.fsdecode(path)
    first = ingest_rollout(conn, name).to_dict()
    again = ingest_rollout(conn, name).to_dict()
    assert first["recorded"] == 3 and again["duplicates"] == 3 and len(lines_parsed) == 1


def test_a_paginated_file_name_that_is_not_utf8_is_checked_by_its_stored_keys(conn, tmp_path):
    folder = os.fsencode(tmp_path) + b"/odd\xfc"
    os.makedirs(folder)
    path = os.fsdecode(folder + b"/rollout.jsonl")
    lines = paged_session_lines(SESSION, 3)
    with open(path, "wb") as handle:  # a paginated file whose session_meta names no id
        handle.write(lines[0].replace(SESSION.encode(), b"") .replace(b'"id": ""', b'"x": 1')
                     + b"".join(lines[1:]))
    first = ingest_rollout(conn, path).to_dict()
    conn.execute("DELETE FROM ingest_checks")  # a whole read again, its keys checked
    again = ingest_rollout(conn, path).to_dict()
    assert first["recorded"] == 3
    assert (again["recorded"], again["duplicates"], again["rekeyed"]) == (0, 3, 0)
