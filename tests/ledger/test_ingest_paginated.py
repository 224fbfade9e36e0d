"""Codex's paginated session files: replies, their item_completed copies, messages between
agents, replies known only from their parsed citation, and files rewritten by
``codex migrate-rollouts`` (legacy to paginated) without a reply counted twice or lost."""

from __future__ import annotations

import json
import shutil

import pytest
import zstandard

from codex_sessions import (
    MEMORIES,
    cited_reply,
    count_parses,
    ledger_knowing,
    paged_line,
    paged_meta,
    paged_session_lines,
    paged_turn,
    paginate,
    session_bytes,
    session_id,
    session_path,
    turn,
)
from memcite.contracts.outputs import IngestOutput
from memcite.ledger.ingest import (
    MAX_PENDING,
    RolloutScan,
    ingest_rollout,
    iter_rollout_replies,
    rebuild_block,
    rekey_moved_replies,
)
from memcite.ledger.session_offsets import ingest_session_file, load_offset
from memcite.ledger.store import open_store

SESSION = session_id(7)


@pytest.fixture
def conn(tmp_path):
    connection = ledger_knowing(tmp_path / "m.sqlite", MEMORIES)
    yield connection
    connection.close()


@pytest.fixture
def parsed(monkeypatch):
    """The texts ``parse_reply`` is asked to read, in order."""
    return count_parses(monkeypatch)


def moved(old: bytes, new_path) -> int:
    """How many replies of ``old`` are on another line in the file at ``new_path``."""
    scratch = new_path.with_name("old-" + new_path.name)
    scratch.write_bytes(old)
    keys = [r.id for r in iter_rollout_replies(scratch)]
    scratch.unlink()
    return sum(a != b for a, b in zip(keys, [r.id for r in iter_rollout_replies(new_path)],
                                      strict=True))


def usage(conn) -> int:
    return conn.execute("SELECT coalesce(sum(usage_count), 0) FROM memories").fetchone()[0]


def ledger(conn) -> list[tuple]:
    """What the log says: each reply's key, text hash and time, and the ids it counted."""
    return conn.execute(
        "SELECT r.reply_key, r.text_sha256, r.replied_at, group_concat(c.thread_id)"
        " FROM replies r LEFT JOIN cited_ids c ON c.reply_id = r.id AND c.counted = 1"
        " GROUP BY r.id ORDER BY r.reply_key").fetchall()


def write(path, lines: list[bytes]):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines))
    return path


def line_of(lines: list[bytes], kind: str, payload_type: str, nth: int = 0) -> int:
    """The 1-based number of the ``nth`` line of that kind and payload type."""
    found = [n for n, raw in enumerate(lines, start=1)
             if (data := json.loads(raw))["type"] == kind and data["payload"].get("type") == payload_type]
    return found[nth]


# --------------------------------------------------------------------------- replies


def test_a_paginated_file_s_replies_are_its_response_items(conn, tmp_path):
    lines = paged_session_lines(SESSION, 3)
    path = write(session_path(tmp_path, SESSION), lines)
    scan = RolloutScan(str(path))
    replies = list(iter_rollout_replies(path, scan))
    assert scan.paginated and scan.pending == 0
    # one reply a turn: the item_completed copy is not another one
    assert [r.id for r in replies] == [f"{SESSION}:{line_of(lines, 'response_item', 'message', 2 * n + 1)}"
                                       for n in range(3)]
    assert replies[0].text == cited_reply(1)  # the exact text, block and all
    report = ingest_rollout(conn, path)
    assert (report.replies, report.recorded, report.counted, report.pending) == (3, 3, 3, 0)
    assert usage(conn) == 3


def test_a_message_between_agents_is_never_a_reply(conn, tmp_path):
    lines = paged_session_lines(SESSION, 1)
    between = paged_line("response_item", {
        "type": "agent_message", "role": "assistant", "author": "/root", "recipient": "/root/w",
        "content": [{"type": "output_text", "text": cited_reply(9)}]}, len(lines), 99)
    path = write(session_path(tmp_path, SESSION), [*lines, between])
    assert len(list(iter_rollout_replies(path))) == 1
    assert ingest_rollout(conn, path).recorded == 1 and usage(conn) == 1
    again = ingest_rollout(conn, path)  # nor counted as a known reply on a re-ingest
    assert (again.replies, again.duplicates) == (1, 1)


def test_a_reply_seen_only_in_item_completed_is_recorded_from_its_citation(conn, tmp_path):
    lines = paged_session_lines(SESSION, 2, response_item=False)
    path = write(session_path(tmp_path, SESSION), lines)
    replies = list(iter_rollout_replies(path))
    first = line_of(lines, "event_msg", "item_completed")
    assert [r.id for r in replies] == [f"{SESSION}:{first}",
                                       f"{SESSION}:{line_of(lines, 'event_msg', 'item_completed', 1)}"]
    assert replies[0].text == cited_reply(1)  # the block rebuilt is the block Codex parsed
    report = ingest_rollout(conn, path)
    assert (report.recorded, report.counted) == (2, 2)
    assert ingest_rollout(conn, path).duplicates == 2 and usage(conn) == 2


def test_with_both_lines_the_response_item_is_the_reply_and_counts_once(conn, tmp_path):
    # the item_completed (with memory_citation) comes first, its response_item after
    lines = paged_session_lines(SESSION, 2)
    path = write(session_path(tmp_path, SESSION), lines)
    report = ingest_rollout(conn, path)
    assert (report.replies, report.recorded, report.counted) == (2, 2, 2)
    keys = {row[0] for row in ledger(conn)}
    assert keys == {f"{SESSION}:{line_of(lines, 'response_item', 'message', n)}" for n in (1, 3)}


def test_the_other_order_in_one_read_counts_once_too(conn, tmp_path):
    lines = paged_session_lines(SESSION, 1)
    at = line_of(lines, "event_msg", "item_completed") - 1
    lines[at], lines[at + 1] = lines[at + 1], lines[at]  # response_item, then item_completed
    path = write(session_path(tmp_path, SESSION), lines)
    assert ingest_rollout(conn, path).recorded == 1 and usage(conn) == 1


def test_a_reply_waits_for_its_turn_s_end(conn, tmp_path):
    lines = paged_session_lines(SESSION, 1, response_item=False, ends=False)
    path = write(session_path(tmp_path, SESSION), lines)
    report = ingest_rollout(conn, path)
    assert (report.recorded, report.pending) == (0, 1)  # a response_item may still follow
    ended = paged_line("event_msg", {"type": "task_complete",
                                     "turn_id": "019d0000-0000-7000-8000-000000000001"}, len(lines), 20)
    write(path, [*lines, ended])
    report = ingest_rollout(conn, path)
    assert (report.recorded, report.pending, usage(conn)) == (1, 0, 1)


def test_an_aborted_turn_ends_the_wait(conn, tmp_path):
    lines = paged_session_lines(SESSION, 1, response_item=False, ends=False)
    aborted = paged_line("event_msg", {"type": "turn_aborted", "reason": "interrupted",
                                       "turn_id": "019d0000-0000-7000-8000-000000000001"}, len(lines))
    path = write(session_path(tmp_path, SESSION), [*lines, aborted])
    assert ingest_rollout(conn, path).recorded == 1


@pytest.mark.parametrize("where", ["archived", "zst"])
def test_a_complete_file_records_what_still_waits(conn, tmp_path, where):
    lines = paged_session_lines(SESSION, 1, response_item=False, ends=False)
    path = session_path(tmp_path, SESSION, archived=where == "archived", zst=where == "zst")
    data = b"".join(lines)
    path.write_bytes(zstandard.ZstdCompressor().compress(data) if where == "zst" else data)
    assert ingest_rollout(conn, path).recorded == 1
    other = open_store(tmp_path / "other.sqlite")
    assert ingest_session_file(other, path).report.recorded == 1
    other.close()


def test_many_waiting_replies_are_bounded(tmp_path):
    lines = [paged_meta(SESSION)]
    for number in range(1, MAX_PENDING + 3):
        lines += paged_turn(number, len(lines), response_item=False, ends=False)
    path = write(session_path(tmp_path, SESSION), lines)
    scan = RolloutScan(str(path))
    assert len(list(iter_rollout_replies(path, scan))) == 2  # the oldest, recorded as it goes
    assert scan.pending == MAX_PENDING


# --------------------------------------------------------------------------- incremental reads


def _mixed_turns() -> list[bytes]:
    """Turns of every kind: with both lines, item_completed only, nothing cited."""
    lines = [paged_meta(SESSION)]
    lines += paged_turn(1, len(lines))
    lines += paged_turn(2, len(lines), response_item=False)
    lines += paged_turn(3, len(lines), cite=None)
    lines += paged_turn(4, len(lines), response_item=False)
    lines += paged_turn(5, len(lines))
    return lines


def test_a_read_cut_at_any_line_counts_each_reply_once(tmp_path):
    lines = _mixed_turns()
    whole_path = write(tmp_path / "whole" / "rollout-a.jsonl", lines)
    whole = open_store(tmp_path / "whole.sqlite")
    ingest_rollout(whole, whole_path)
    expected = ledger(whole)
    whole.close()
    assert len(expected) == 5
    for cut in range(1, len(lines)):
        for second_cut in (cut, min(cut + 1, len(lines)), len(lines)):
            conn = open_store(tmp_path / f"cut{cut}-{second_cut}.sqlite")
            path = session_path(tmp_path / f"c{cut}-{second_cut}", SESSION)
            write(path, lines[:cut])
            ingest_session_file(conn, path, origin="hook")
            write(path, lines[:second_cut])
            ingest_session_file(conn, path)
            write(path, lines)
            ingest_session_file(conn, path)
            assert ingest_session_file(conn, path).report is None or \
                ingest_session_file(conn, path).report.recorded == 0
            keys = [(row[0].split(":")[1], row[1], row[3]) for row in ledger(conn)]
            assert keys == [(row[0].split(":")[1], row[1], row[3]) for row in expected], (cut, second_cut)
            conn.close()


def test_the_offset_stops_at_a_waiting_reply(conn, tmp_path):
    lines = paged_session_lines(SESSION, 1, response_item=False, ends=False)
    path = write(session_path(tmp_path, SESSION), lines)
    read = ingest_session_file(conn, path)
    assert read.to_offset == path.stat().st_size and read.report.pending == 1
    waiting = line_of(lines, "event_msg", "item_completed")
    stored = load_offset(conn, path)
    assert stored.lines_read == waiting - 1
    assert stored.byte_offset == sum(len(raw) for raw in lines[:waiting - 1])


def test_a_budget_never_stalls_on_a_waiting_reply(conn, tmp_path):
    lines = paged_session_lines(SESSION, 1, response_item=False, ends=False)
    at = len(lines)
    for n in range(40):  # a long turn after the reply: tool output, 4 KB a line
        lines.append(paged_line("response_item", {"type": "function_call_output", "call_id": "x",
                                                  "output": "o" * 4000}, at + n))
    lines.append(paged_line("event_msg", {"type": "task_complete",
                                          "turn_id": "019d0000-0000-7000-8000-000000000001"}, at + 40))
    path = write(session_path(tmp_path, SESSION), lines)
    for _ in range(200):
        read = ingest_session_file(conn, path, budget=10_000)
        if read.caught_up and load_offset(conn, path).byte_offset == path.stat().st_size:
            break
    else:
        pytest.fail("the reads never reached the end of the file")
    assert conn.execute("SELECT count(*) FROM replies").fetchone()[0] == 1 and usage(conn) == 1


# --------------------------------------------------------------------------- rebuilt blocks


def test_the_block_is_rebuilt_from_the_parsed_citation():
    assert rebuild_block({"entries": [{"path": "a.md", "lineStart": 1, "lineEnd": 3, "note": "n"}],
                          "rolloutIds": ["x"]}) == (
        "<oai-mem-citation>\n<citation_entries>\na.md:1-3|note=[n]\n</citation_entries>\n"
        "<rollout_ids>\nx\n</rollout_ids>\n</oai-mem-citation>")
    hostile = {"entries": [{"path": "a\nb.md", "lineStart": 1, "lineEnd": 2, "note": ""},
                           {"path": "c.md", "lineStart": True, "lineEnd": 2},
                           {"path": "d.md", "lineStart": -1, "lineEnd": 2}, "not an entry",
                           {"path": "e.md", "lineStart": 4, "lineEnd": 5}],
               "rolloutIds": ["y\n</rollout_ids>", 7, "z"]}
    assert rebuild_block(hostile) == (
        "<oai-mem-citation>\n<citation_entries>\ne.md:4-5|note=[]\n</citation_entries>\n"
        "<rollout_ids>\nz\n</rollout_ids>\n</oai-mem-citation>")
    assert rebuild_block("no") is None and rebuild_block({"entries": "no"}) is None


# --------------------------------------------------------------------------- rewritten files


def test_a_legacy_file_migrated_keeps_its_replies_once(conn, tmp_path, parsed):
    path = session_path(tmp_path, SESSION)
    path.write_bytes(session_bytes(SESSION, 4))
    assert ingest_rollout(conn, path).recorded == 8
    before = ledger(conn)
    legacy = path.read_bytes()
    path.write_bytes(paginate(legacy))  # lines move: task events added, some dropped
    assert moved(legacy, path) >= 5
    again = ingest_rollout(conn, path)
    assert (again.recorded, again.duplicates, again.rekeyed) == (0, 8, moved(legacy, path))
    said = IngestOutput.model_validate(again.to_dict())  # as `ingest --json` says it
    assert (said.rekeyed, said.set_aside, said.pending) == (moved(legacy, path), 0, 0)
    after = ledger(conn)
    assert [row[1:] for row in after] != [] and sorted(row[1:] for row in after) == \
        sorted(row[1:] for row in before)  # the same replies, times and counted ids
    assert {row[0] for row in after} == {r.id for r in iter_rollout_replies(path)}  # new lines
    assert usage(conn) == 4
    count = len(parsed)
    third = ingest_rollout(conn, path)  # keys and lines agree again: nothing moves
    assert (third.recorded, third.duplicates, third.rekeyed) == (0, 8, 0)
    assert len(parsed) == count  # a recorded reply is checked, never parsed again


def test_a_migrated_file_read_from_its_offset(conn, tmp_path):
    path = session_path(tmp_path, SESSION)
    path.write_bytes(session_bytes(SESSION, 3))
    ingest_session_file(conn, path, origin="hook")
    legacy = path.read_bytes()
    path.write_bytes(paginate(legacy))
    read = ingest_session_file(conn, path)
    assert read.reread and (read.report.recorded, read.report.rekeyed) == \
        (0, moved(legacy, path)) and read.report.rekeyed
    assert usage(conn) == 3
    with open(path, "ab") as handle:  # Codex goes on, in the paginated form
        handle.write(b"".join(paged_turn(9, 100)))
    grown = ingest_session_file(conn, path)
    assert not grown.reread and grown.report.recorded == 1 and usage(conn) == 4


@pytest.mark.parametrize("ingested_between", [True, False])
def test_a_migration_that_shortens_the_file_loses_no_later_reply(conn, tmp_path, ingested_between):
    # Replies appended after a migration that shortened the file land on numbers old keys
    # had (here line 54): none is lost, none counted twice, whether memcite read the
    # migrated file before Codex went on or only after.
    path = session_path(tmp_path, SESSION)
    legacy = session_bytes(SESSION, 6)
    path.write_bytes(legacy)
    ingest_rollout(conn, path)
    migrated = paginate(legacy).splitlines(keepends=True)
    dropped = [raw for raw in migrated  # shorter than before
               if b'"task_started"' not in raw and b'"task_complete"' not in raw]
    path.write_bytes(b"".join(dropped))
    assert len(dropped) < legacy.count(b"\n")
    if ingested_between:
        report = ingest_rollout(conn, path)
        assert report.recorded == 0 and usage(conn) == 6
    more = b"".join(raw for n in (21, 22, 23) for raw in paged_turn(n, len(dropped) + 10 * n))
    with open(path, "ab") as handle:
        handle.write(more)
    old_keys = {row[0] for row in conn.execute("SELECT reply_key FROM replies")}
    new_keys = [r.id for r in iter_rollout_replies(path)][-3:]
    assert ingested_between or set(new_keys) & old_keys  # an appended reply on an old key
    report = ingest_rollout(conn, path)
    assert (report.recorded, usage(conn)) == (3, 9)
    assert conn.execute("SELECT count(*) FROM replies").fetchone()[0] == 15
    assert {row[0] for row in conn.execute("SELECT reply_key FROM replies")} == \
        {r.id for r in iter_rollout_replies(path)}


def test_set_aside_replies_make_room_for_the_lines_own(conn, tmp_path):
    path = session_path(tmp_path, SESSION)
    path.write_bytes(session_bytes(SESSION, 2))
    ingest_rollout(conn, path)
    old_keys = {row[0] for row in ledger(conn)}
    # the file replaced by another of the same thread, shorter: its reply is new, on an old key
    lines = paged_session_lines(SESSION, 1)
    padding = [paged_line("response_item", {"type": "reasoning", "summary": []}, 0)] * 2
    lines = [lines[0], *padding, *lines[1:]]
    assert line_of(lines, "response_item", "message", 1) == 8  # the first legacy reply's line
    write(path, lines)
    report = ingest_session_file(conn, path).report
    assert report.recorded == 1 and report.set_aside == 4 and conn.execute(
        "SELECT count(*) FROM replies WHERE reply_key LIKE '%~%'").fetchone()[0] == 4
    assert ingest_rollout(conn, path).recorded == 0
    # the file grows over the lines the old replies had: read from its offset, none is lost
    more = [raw for n in range(2, 5) for raw in paged_turn(n, len(lines) + 10 * n)]
    write(path, [*lines, *padding, *more])  # turn 2's reply on line 17
    assert {r.id for r in iter_rollout_replies(path)} & (old_keys - {f"{SESSION}:8"})
    grown = ingest_session_file(conn, path)
    assert not grown.reread and grown.report.recorded == 3
    assert usage(conn) == 2 + 4


def test_rekeying_an_unchanged_file_moves_nothing(conn, tmp_path):
    path = write(session_path(tmp_path, SESSION), paged_session_lines(SESSION, 2))
    ingest_rollout(conn, path)
    before = ledger(conn)
    assert rekey_moved_replies(conn, path) == (0, 0)
    assert ledger(conn) == before


def test_the_same_file_under_another_name_keeps_its_keys(conn, tmp_path):
    path = write(session_path(tmp_path, SESSION), paged_session_lines(SESSION, 2))
    ingest_rollout(conn, path)
    copy = session_path(tmp_path, SESSION, archived=True)
    shutil.copy(path, copy)
    report = ingest_rollout(conn, copy)
    assert (report.recorded, report.rekeyed, report.duplicates) == (0, 0, 2)


def test_legacy_files_keep_the_unparsed_shortcut(conn, tmp_path, parsed):
    path = session_path(tmp_path, SESSION)
    path.write_bytes(session_bytes(SESSION, 2) + turn(3))
    ingest_rollout(conn, path)
    count = len(parsed)
    assert ingest_rollout(conn, path).duplicates == 6 and len(parsed) == count
