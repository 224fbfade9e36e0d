"""``ingest``: assistant replies out of Codex rollout files, plain or zstd, streamed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from codex_sessions import count_parses, ledger_knowing
from memcite.errors import InputError
from memcite.ledger.ingest import RolloutScan, check_rollout, ingest_rollout, iter_rollout_replies

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
SAMPLE = next((CORPUS / "codex_home" / "sessions").rglob("rollout-*.jsonl"))
MEMORIES = CORPUS / "codex_home" / "memories"
SESSION = "019bdb5e-1c40-7a21-9c3e-5f0d2b7a4e11"
KNOWN = ("019b7635-7fb3-7cf8-8f11-6f64065672e0", "019b76da-a800-7de5-8c3e-9e72e44926e8")


@pytest.fixture
def conn(tmp_path):
    connection = ledger_knowing(tmp_path / "m.sqlite", KNOWN)
    yield connection
    connection.close()


def test_assistant_messages_are_the_replies(tmp_path):
    scan = RolloutScan(str(SAMPLE))
    replies = list(iter_rollout_replies(SAMPLE, scan))
    assert len(replies) == 3  # event_msg copies and user messages are not replies
    first = replies[0]
    assert first.text.startswith("Use `BEGIN IMMEDIATE`")  # output_text parts joined
    assert "<oai-mem-citation>" in first.text and first.text.endswith("</oai-mem-citation>")
    assert (first.thread_id, first.cwd) == (SESSION, "/home/dev/memcite")
    assert first.at == 1_768_903_206
    assert first.id == f"{SESSION}:7" and first.where == f"{SAMPLE}:7"  # keyed by its place
    assert replies[2].text == "Anything else?"
    assert (scan.session_id, scan.replies, scan.lines) == (SESSION, 3, 13)


def test_ingest_records_the_citations(conn):
    # Ingested a minute after the last reply: the cited lines are hashed as they are now.
    report = ingest_rollout(conn, SAMPLE, memory_root=MEMORIES, now=1_768_903_502 + 60)
    assert (report.replies, report.recorded, report.duplicates) == (3, 3, 0)
    assert report.counted == 3  # the default policy: the upper-case variant once
    assert report.unknown_ids == {"019c0000-0000-7000-8000-000000000000"}
    assert report.not_uuid_ids == {"not-a-uuid"}
    counts = dict(conn.execute("SELECT thread_id, usage_count FROM memories"))
    assert counts == {KNOWN[0]: 1, KNOWN[1]: 1}
    last = conn.execute("SELECT last_usage FROM memories WHERE thread_id = ?",
                        (KNOWN[1],)).fetchone()[0]
    assert last == 1_768_903_502  # the reply's own time, not the time of ingesting
    replies = conn.execute("SELECT thread_id, cwd, origin FROM replies").fetchall()
    assert {r[:2] for r in replies} == {(SESSION, "/home/dev/memcite")}
    assert replies[0][2] == f"ingest:{SAMPLE}"
    hashes = conn.execute("SELECT lines_sha256 IS NOT NULL FROM cited_entries"
                          " ORDER BY reply_id, position").fetchall()
    assert hashes == [(1,), (1,), (0,)]  # the out-of-range entry has no hash


def test_an_old_session_ingested_without_history_keeps_no_hash(conn):
    """Ingested months after the replies, in a memory folder without git history: the file
    now says nothing of what was cited, so nothing is hashed (the checks say unverified)."""
    ingest_rollout(conn, SAMPLE, memory_root=MEMORIES, now=1_800_000_000)
    hashes = conn.execute("SELECT lines_sha256 FROM cited_entries").fetchall()
    assert hashes and all(h == (None,) for h in hashes)


def test_ingesting_twice_counts_once(conn):
    ingest_rollout(conn, SAMPLE)
    again = ingest_rollout(conn, SAMPLE)
    assert (again.recorded, again.duplicates, again.counted) == (0, 3, 0)
    assert conn.execute("SELECT sum(usage_count) FROM memories").fetchone()[0] == 2


def test_codex_policy_counts_case_variants(conn):
    report = ingest_rollout(conn, SAMPLE, policy="codex")
    assert report.counted == 4
    assert conn.execute("SELECT usage_count FROM memories WHERE thread_id = ?",
                        (KNOWN[1],)).fetchone()[0] == 2


def test_zstd_rollouts_read_the_same(conn, tmp_path):
    packed = tmp_path / (SAMPLE.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(SAMPLE.read_bytes()))
    plain = [(r.text, r.at, r.thread_id) for r in iter_rollout_replies(SAMPLE)]
    assert [(r.text, r.at, r.thread_id) for r in iter_rollout_replies(packed)] == plain
    assert ingest_rollout(conn, packed).recorded == 3


def test_a_damaged_zstd_file_is_an_input_error(tmp_path):
    broken = tmp_path / "rollout.jsonl.zst"
    broken.write_bytes(b"\x28\xb5\x2f\xfd" + b"garbage" * 10)
    with pytest.raises(InputError, match="rollout.jsonl.zst"):
        list(iter_rollout_replies(broken))


def test_bad_and_unknown_lines_are_skipped(conn, tmp_path):
    rollout = tmp_path / "rollout.jsonl"
    meta = {"type": "session_meta", "payload": {"id": SESSION.upper(), "cwd": "/w"}}
    reply = {"timestamp": "2026-01-20T10:00:00Z", "type": "response_item",
             "payload": {"type": "message", "role": "assistant",
                         "content": [{"type": "output_text", "text": "hi"},
                                     {"type": "refusal", "text": "ignored"}]}}
    lines = [
        json.dumps(meta),
        '{"type": "response_item", "payload": {"role": "assistant", "broken',
        json.dumps({"type": "something_new", "payload": {"role": "assistant"}}),
        json.dumps({"type": "response_item", "payload": {"type": "message",
                                                         "role": "assistant", "content": 5}}),
        json.dumps(reply),
    ]
    rollout.write_text("\n".join(lines) + "\n")
    scan = RolloutScan(str(rollout))
    replies = list(iter_rollout_replies(rollout, scan))
    assert [r.text for r in replies] == ["hi"]
    assert replies[0].thread_id == SESSION  # normalised
    assert (scan.bad_line_count, scan.bad_lines) == (1, [2])
    report = ingest_rollout(conn, rollout)
    assert report.bad_line_count == 1 and report.recorded == 1


def test_missing_files_and_folders_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        list(iter_rollout_replies(tmp_path / "absent.jsonl"))
    with pytest.raises(InputError, match="is a directory"):
        list(iter_rollout_replies(tmp_path))


def test_replies_are_yielded_one_at_a_time(tmp_path):
    # Streaming: the first reply arrives before the rest of the file is read.
    rollout = tmp_path / "rollout.jsonl"
    item = {"type": "response_item", "payload": {"type": "message", "role": "assistant",
                                                 "content": [{"type": "output_text",
                                                              "text": "x"}]}}
    rollout.write_text("\n".join([json.dumps(item)] * 1000) + "\n")
    scan = RolloutScan(str(rollout))
    iterator = iter_rollout_replies(rollout, scan)
    next(iterator)
    assert scan.lines == 1
    iterator.close()


def test_a_huge_tool_output_line_is_skipped_and_replies_around_it_are_read(tmp_path):
    rollout = tmp_path / "rollout.jsonl"
    huge = {"type": "response_item",
            "payload": {"type": "function_call_output", "output": "y" * 3_000_000}}
    reply = {"type": "response_item", "payload": {"type": "message", "role": "assistant",
                                                  "content": [{"type": "output_text",
                                                               "text": "z" * 200_000}]}}
    rollout.write_text("\n".join(json.dumps(item) for item in (huge, reply, huge)))
    scan = RolloutScan(str(rollout))
    replies = list(iter_rollout_replies(rollout, scan))
    assert [len(r.text) for r in replies] == [200_000]  # a long reply is read whole
    assert replies[0].where.endswith(":2") and scan.lines == 3


def _rollout(path: Path, session: str | None, texts: list[str]) -> Path:
    """A rollout file: a session_meta line (unless ``session`` is None), then one reply per text."""
    lines = [] if session is None else [
        json.dumps({"type": "session_meta", "payload": {"id": session, "cwd": "/w"}})]
    lines += [json.dumps({"timestamp": "2026-01-20T10:00:00Z", "type": "response_item",
                          "payload": {"type": "message", "role": "assistant",
                                      "content": [{"type": "output_text", "text": text}]}})
              for text in texts]
    path.write_text("\n".join(lines) + "\n")
    return path


DONE = f"Done.\n\n<oai-mem-citation>\n<rollout_ids>\n{KNOWN[0]}\n</rollout_ids>\n</oai-mem-citation>"
OTHER_SESSION = "019bdb5e-1c40-7a21-9c3e-5f0d2b7a4e12"


def test_identical_replies_in_two_turns_or_sessions_each_count_as_in_codex(conn, tmp_path):
    first = _rollout(tmp_path / "a.jsonl", SESSION, [DONE, "Next?", DONE])
    second = _rollout(tmp_path / "b.jsonl", OTHER_SESSION, [DONE])
    assert ingest_rollout(conn, first).counted == 2  # two turns, the same text
    assert ingest_rollout(conn, second).counted == 1  # another session, the same text
    usage = conn.execute("SELECT usage_count FROM memories WHERE thread_id = ?", (KNOWN[0],))
    assert usage.fetchone()[0] == 3
    keys = [r[0] for r in conn.execute("SELECT reply_key FROM replies ORDER BY id")]
    assert keys == [f"{SESSION}:2", f"{SESSION}:3", f"{SESSION}:4", f"{OTHER_SESSION}:2"]


def test_reingesting_a_grown_rollout_records_only_the_new_replies(conn, tmp_path):
    rollout = _rollout(tmp_path / "a.jsonl", SESSION, [DONE])
    assert ingest_rollout(conn, rollout).recorded == 1
    _rollout(rollout, SESSION, [DONE, DONE])  # Codex appended a turn saying the same
    again = ingest_rollout(conn, rollout)
    assert (again.recorded, again.duplicates, again.counted) == (1, 1, 1)


def test_without_session_meta_a_reply_is_keyed_by_its_file_and_line(tmp_path):
    rollout = _rollout(tmp_path / "a.jsonl", None, [DONE, DONE])
    replies = list(iter_rollout_replies(rollout))
    assert [r.id for r in replies] == [f"{rollout}:1", f"{rollout}:2"]


def test_check_rollout_reads_nothing_and_refuses_what_cannot_be_opened(tmp_path):
    check_rollout(SAMPLE)
    with pytest.raises(InputError, match="no such file"):
        check_rollout(tmp_path / "absent.jsonl")
    with pytest.raises(InputError, match="is a directory"):
        check_rollout(tmp_path)


@pytest.fixture
def parsed(monkeypatch):
    """The texts ``parse_reply`` is asked to read, in order."""
    return count_parses(monkeypatch)


def test_a_reingest_parses_only_the_replies_not_yet_recorded(conn, tmp_path, parsed):
    rollout = _rollout(tmp_path / "a.jsonl", SESSION, [DONE, "Next?"])
    assert ingest_rollout(conn, rollout).recorded == 2
    assert len(parsed) == 2
    again = ingest_rollout(conn, rollout)
    assert (again.replies, again.recorded, again.duplicates, again.counted) == (2, 0, 2, 0)
    assert len(parsed) == 2  # nothing read again
    _rollout(rollout, SESSION, [DONE, "Next?", "Turn 3.", DONE])  # Codex appended two
    grown = ingest_rollout(conn, rollout)
    assert (grown.replies, grown.recorded, grown.duplicates, grown.counted) == (4, 2, 2, 1)
    assert parsed[2:] == ["Turn 3.", DONE]
    keys = [r[0] for r in conn.execute("SELECT reply_key FROM replies ORDER BY id")]
    assert keys == [f"{SESSION}:{n}" for n in (2, 3, 4, 5)]


def test_a_file_without_session_meta_skips_its_recorded_replies_too(conn, tmp_path, parsed):
    rollout = _rollout(tmp_path / "a.jsonl", None, [DONE, DONE])
    ingest_rollout(conn, rollout)
    again = ingest_rollout(conn, rollout)
    assert (again.replies, again.duplicates, len(parsed)) == (2, 2, 2)


def test_strict_still_reads_recorded_replies_and_rejects_their_problems(conn, tmp_path, parsed):
    unterminated = f"Done.\n\n<oai-mem-citation>\n<rollout_ids>\n{KNOWN[0]}\n"
    rollout = _rollout(tmp_path / "a.jsonl", SESSION, [DONE, unterminated])
    assert ingest_rollout(conn, rollout).recorded == 2  # the codex profile records both
    strict = ingest_rollout(conn, rollout, profile="strict")
    assert (strict.replies, strict.duplicates, strict.rejected) == (2, 1, 1)
    assert len(parsed) == 4
