"""Recording replies: the counting policies, idempotence, the log, cited-line hashes, rebuild."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time

import pytest

from memcite.citations.reading import parse_reply
from memcite.errors import CitationError, InputError
from memcite.ledger.memory_files import cited_lines_sha256, resolve_cited_path
from memcite.ledger.recording import (
    MemoryFiles,
    ReplyInput,
    parse_time,
    plan_ids,
    rebuild,
    record_in_ledger,
    record_replies,
    record_reply,
    reply_to_record,
    result_notes,
    terminated_counts,
)
from memcite.ledger.store import open_store, transaction

A = "019c6e27-e55b-73d1-87d8-4e01f1f75043"
B = "019c7714-3b77-74d1-9866-e1f484aae2ab"
UNKNOWN = "019c0000-0000-7000-8000-00000000abcd"
NOW = 1_800_000_000


def block(ids=(), entries=(), close=True) -> str:
    body = "<oai-mem-citation>\n<citation_entries>\n" + "".join(e + "\n" for e in entries)
    body += "</citation_entries>\n<rollout_ids>\n" + "".join(i + "\n" for i in ids)
    body += "</rollout_ids>\n"
    return body + ("</oai-mem-citation>" if close else "")


@pytest.fixture
def conn(tmp_path):
    connection = open_store(tmp_path / "m.sqlite")
    with transaction(connection):
        connection.executemany(
            "INSERT INTO memories (thread_id, source_updated_at, source, first_synced_at,"
            " synced_at) VALUES (?, 100, 'stage1_outputs', 100, 100)",
            [(A,), (B,)],
        )
    yield connection
    connection.close()


def usage(conn, thread_id):
    return conn.execute("SELECT usage_count, last_usage FROM memories WHERE thread_id = ?",
                        (thread_id,)).fetchone()


# --------------------------------------------------------------------------- policies


@pytest.mark.parametrize(
    ("ids", "terminated", "policy", "counted"),
    [
        ([A, B], 2, "default", [A, B]),
        ([A, B], 2, "codex", [A, B]),
        # Spelling variants of one UUID: Codex counts each, the default policy once.
        ([A, A.upper(), "{" + A + "}"], 3, "codex", [A, A, A]),
        ([A, A.upper(), "{" + A + "}"], 3, "default", [A]),
        ([A.replace("-", ""), "urn:uuid:" + A], 2, "default", [A]),
        # Ids that are not UUIDs are never counted.
        (["not-a-uuid", A, "urn:UUID:" + B], 3, "codex", [A]),
        # From a block that was never closed: Codex counts, the default policy does not.
        ([A, B], 1, "codex", [A, B]),
        ([A, B], 1, "default", [A]),
        ([A, B], 0, "default", []),
    ],
)
def test_policies_count_as_specified(ids, terminated, policy, counted):
    planned = plan_ids(ids, terminated, policy)
    assert [c.thread_id for c in planned if c.counted] == counted
    assert [c.rollout_id for c in planned] == ids  # every id is kept, as written


def test_unknown_policy_is_an_input_error():
    with pytest.raises(InputError, match="unknown policy"):
        plan_ids([A], 1, "sometimes")


def test_terminated_counts_splits_off_an_unclosed_last_block():
    text = ("answer\n" + block([A], ["MEMORY.md:1-2|note=[a]"])
            + "\nmore\n" + block([B, A], ["MEMORY.md:3-4|note=[b]"], close=False))
    reading = parse_reply(text)
    assert list(reading.citation.rollout_ids) == [A, B]
    assert terminated_counts(text, reading) == (1, 1)
    closed = "x" + block([A, B], ["MEMORY.md:1-2|note=[a]"])
    assert terminated_counts(closed, parse_reply(closed)) == (1, 2)


# --------------------------------------------------------------------------- recording


def test_record_counts_and_logs_every_id(conn):
    text = "Done.\n" + block([A, A.upper(), "not-a-uuid", UNKNOWN], ["MEMORY.md:1-1|note=[x]"])
    result = record_reply(conn, ReplyInput(text, at=NOW), now=NOW + 5)
    assert result.status == "recorded"
    assert result.counted == [A, UNKNOWN]
    assert result.unknown == [UNKNOWN]
    assert result.not_uuid == ["not-a-uuid"]
    assert usage(conn, A) == (1, NOW)
    assert usage(conn, B) == (0, None)
    rows = conn.execute("SELECT rollout_id, thread_id, terminated, counted, known FROM cited_ids"
                        " ORDER BY position").fetchall()
    assert rows == [(A, A, 1, 1, 1), (A.upper(), A, 1, 0, 1), ("not-a-uuid", None, 1, 0, 0),
                    (UNKNOWN, UNKNOWN, 1, 1, 0)]
    reply = conn.execute("SELECT key_kind, replied_at, recorded_at, policy, profile, blocks,"
                         " unterminated FROM replies").fetchone()
    assert reply == ("sha256", NOW, NOW + 5, "default", "codex", 1, 0)


def test_codex_policy_counts_each_spelling(conn):
    text = block([A, A.upper(), B])
    record_reply(conn, text, policy="codex", now=NOW)
    assert usage(conn, A) == (2, NOW)
    assert usage(conn, B) == (1, NOW)


def test_the_same_reply_twice_counts_once(conn):
    text = "same\n" + block([A])
    first = record_reply(conn, text, now=NOW)
    second = record_reply(conn, text, now=NOW + 60)
    assert (first.status, second.status) == ("recorded", "duplicate")
    assert second.counted == []
    assert usage(conn, A) == (1, NOW)
    assert conn.execute("SELECT count(*) FROM replies").fetchone()[0] == 1


def test_the_callers_id_is_the_key(conn):
    text = block([A])
    record_reply(conn, ReplyInput(text, id="turn-1"), now=NOW)
    record_reply(conn, ReplyInput(text, id="turn-2"), now=NOW)
    again = record_reply(conn, ReplyInput("other text " + block([A]), id="turn-1"), now=NOW)
    assert again.status == "duplicate"
    assert usage(conn, A)[0] == 2
    keys = [r[0] for r in conn.execute("SELECT reply_key FROM replies ORDER BY id")]
    assert keys == ["turn-1", "turn-2"]


def test_the_text_key_is_the_sha256_of_the_reply(conn):
    text = "é\n" + block([A])
    result = record_reply(conn, text, now=NOW)
    assert result.reply_key == hashlib.sha256(text.encode()).hexdigest()


def test_no_reply_text_is_stored(conn, tmp_path):
    marker = "ZEBRA-QUOKKA-7731"
    text = f"The {marker} answer.\n" + block([A], [f"MEMORY.md:1-1|note=[see {marker[:5]}]"])
    record_reply(conn, ReplyInput(text, id="r1"), now=NOW)
    conn.close()
    for name in os.listdir(tmp_path):
        assert marker.encode() not in (tmp_path / name).read_bytes(), name


def test_last_usage_never_moves_back(conn):
    record_reply(conn, ReplyInput("new " + block([A]), at=NOW), now=NOW)
    record_reply(conn, ReplyInput("old " + block([A]), at=NOW - 86_400), now=NOW)
    assert usage(conn, A) == (2, NOW)
    assert rebuild(conn).differences == ()


def test_a_reply_without_citation_is_recorded_and_counts_nothing(conn):
    result = record_reply(conn, "just an answer", now=NOW)
    assert result.status == "recorded" and result.ids == ()
    assert conn.execute("SELECT blocks FROM replies").fetchone() == (0,)


def test_strict_profile_refuses_a_reply_with_problems_and_records_nothing(conn):
    text = block(["not-a-uuid", A])
    with pytest.raises(CitationError):
        record_reply(conn, text, profile="strict", now=NOW)
    assert conn.execute("SELECT count(*) FROM replies").fetchone()[0] == 0
    assert usage(conn, A) == (0, None)


def test_a_failure_inside_the_transaction_leaves_nothing_half_written(conn):
    conn.execute("CREATE TEMP TRIGGER boom BEFORE INSERT ON cited_entries "
                 "BEGIN SELECT RAISE(ABORT, 'boom'); END")
    with pytest.raises(sqlite3.IntegrityError):
        record_reply(conn, block([A], ["MEMORY.md:1-1|note=[x]"]), now=NOW)
    assert conn.execute("SELECT count(*) FROM replies").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM cited_ids").fetchone()[0] == 0
    assert usage(conn, A) == (0, None)
    assert not conn.in_transaction


def test_record_replies_goes_on_after_a_rejected_reply(conn):
    replies = [ReplyInput(block([A]), id="1"), ReplyInput(block(["bad id"]), id="2"),
               ReplyInput(block([B]), id="3")]
    results = list(record_replies(conn, replies, profile="strict", now=NOW))
    assert [r.status for r in results] == ["recorded", "rejected", "recorded"]
    assert results[1].error and results[1].reading is None
    assert usage(conn, A)[0] == 1 and usage(conn, B)[0] == 1


def test_a_rerun_batch_records_exactly_what_was_missing(conn):
    replies = [ReplyInput(f"reply {n}\n" + block([A if n % 2 else B])) for n in range(10)]
    list(record_replies(conn, replies[:4], now=NOW))  # a run that stopped early
    statuses = [r.status for r in record_replies(conn, replies, now=NOW)]
    assert statuses == ["duplicate"] * 4 + ["recorded"] * 6
    assert usage(conn, A)[0] == 5 and usage(conn, B)[0] == 5


class _NotingConnection:
    """A connection that notes the SQL text of every statement it is given."""

    def __init__(self, conn):
        self.conn, self.sql = conn, []

    def execute(self, sql, *args):
        self.sql.append(sql)
        return self.conn.execute(sql, *args)

    def executemany(self, sql, rows):
        self.sql.append(sql)
        return self.conn.executemany(sql, rows)

    @property
    def in_transaction(self):
        return self.conn.in_transaction


def test_each_reply_is_one_transaction_of_the_same_few_statements(conn):
    noting = _NotingConnection(conn)
    sizes = [1, 3, 70]  # ids and entries per reply: the SQL text must not depend on them
    texts = [f"reply {n}\n" + block([A, B] * n, [f"MEMORY.md:{i + 1}-{i + 1}|note=[n]"
                                                  for i in range(n)]) for n in sizes]
    for text in texts:
        before = len(noting.sql)
        assert record_reply(noting, text, now=NOW).status == "recorded"
        statements = noting.sql[before:]
        assert statements[0] == "BEGIN IMMEDIATE" and statements[-1] == "COMMIT"
        assert statements.count("BEGIN IMMEDIATE") == 1 and len(statements) == 6
    assert len(set(noting.sql)) == 6  # prepared once, reused for every reply
    assert usage(conn, A)[0] == 3 and usage(conn, B)[0] == 3
    assert conn.execute("SELECT count(*) FROM cited_entries").fetchone()[0] == sum(sizes)


@pytest.mark.parametrize("batch, commits", [(1, 249), (100, 3), (250, 1), (1000, 1)])
def test_record_replies_commits_a_batch_per_transaction(conn, batch, commits):
    noting = _NotingConnection(conn)
    replies = [ReplyInput(f"reply {n}\n" + block([A if n % 2 else B]), id=str(n))
               for n in range(250)]
    replies[120] = ReplyInput(block(["bad id"]), id="rejected")  # strict: rejected, in place
    results = list(record_replies(noting, replies, profile="strict", now=NOW,
                                  batch_replies=batch, batch_seconds=3600))
    assert [r.reply_key for r in results] == [r.id for r in replies]
    assert [r.status for r in results].count("recorded") == 249
    assert results[120].status == "rejected"
    assert noting.sql.count("BEGIN IMMEDIATE") == noting.sql.count("COMMIT") == commits
    assert usage(conn, A)[0] + usage(conn, B)[0] == 249


def test_record_replies_commits_a_slow_batch_after_batch_seconds(conn):
    noting = _NotingConnection(conn)

    def slow_replies():
        for n in range(4):
            yield ReplyInput(f"reply {n}\n" + block([A]), id=str(n))
            time.sleep(0.03)

    statuses = []
    for result in record_replies(noting, slow_replies(), now=NOW, batch_replies=100,
                                 batch_seconds=0.05):
        statuses.append(result.status)
        # A result comes once its batch is committed: the reply is in the database.
        assert conn.execute("SELECT 1 FROM replies WHERE reply_key = ?",
                            (result.reply_key,)).fetchone()
    assert statuses == ["recorded"] * 4
    assert 1 < noting.sql.count("BEGIN IMMEDIATE") < 4


def test_record_reply_takes_the_callers_reading(conn, monkeypatch):
    text = "shown\n" + block([A], ["MEMORY.md:1-1|note=[x]"])
    reading = parse_reply(text)
    import memcite.citations.reading as reading_module

    def no_second_reading(*args, **kwargs):
        raise AssertionError("the reply was read again")

    monkeypatch.setattr(reading_module, "parse_reply", no_second_reading)
    result = record_reply(conn, text, reading=reading, now=NOW)
    assert result.status == "recorded" and result.reading is reading
    assert usage(conn, A)[0] == 1


def test_reply_to_record_refuses_an_empty_reply_and_reads_at():
    with pytest.raises(InputError, match=r"^stdin: the reply is empty; nothing recorded"):
        reply_to_record(" \n", where="stdin")
    reply = reply_to_record("hi", where="r.txt", id="", at="1970-01-01T00:01:00Z", cwd="")
    assert (reply.id, reply.at, reply.cwd, reply.where) == (None, 60, None, "r.txt")


def test_record_in_ledger_and_result_notes(tmp_path):
    from memcite.paths import Locations

    where = Locations(db=tmp_path / "l.sqlite", environ={})
    text = "shown\n" + block([A, UNKNOWN], ["MEMORY.md:1-1|note=[x]"])
    result = record_in_ledger(where, ReplyInput(text), parse_reply(text), profile="codex",
                              policy="default", memory_root=None)
    assert result_notes(result) == [
        f"recorded 1 reply (key {result.reply_key[:16]}): 2 memory ids cited, 2 citations "
        "counted for 2 memories, 1 cited line range",
        f"note: {A} is not a memory in the inventory; logged (run `memcite sync` if it is new)",
        f"note: {UNKNOWN} is not a memory in the inventory; logged (run `memcite sync` if it "
        "is new)"]
    again = record_in_ledger(where, ReplyInput(text), parse_reply(text), profile="codex",
                             policy="default", memory_root=None)
    assert result_notes(again) == [
        f"note: this reply was already recorded (key {result.reply_key[:16]}); nothing counted "
        "again"]


def test_known_is_logged_when_no_id_or_only_some_ids_are_memories(conn):
    only_unknown = record_reply(conn, "u " + block([UNKNOWN]), now=NOW)
    assert only_unknown.unknown == [UNKNOWN] and only_unknown.counted == [UNKNOWN]
    # B comes from a block never closed: the default policy does not count it, yet it is known.
    text = "m " + block([A, UNKNOWN]) + "\n" + block([B], close=False)
    mixed = record_reply(conn, text, now=NOW)
    assert [(c.thread_id, c.counted, c.known) for c in mixed.ids] == [
        (A, True, True), (UNKNOWN, True, False), (B, False, True)]
    rows = conn.execute("SELECT c.thread_id, c.counted, c.known FROM cited_ids c"
                        " WHERE c.reply_id = ? ORDER BY position", (mixed.reply_id,)).fetchall()
    assert rows == [(A, 1, 1), (UNKNOWN, 1, 0), (B, 0, 1)]
    assert usage(conn, A) == (1, NOW) and usage(conn, B) == (0, None)


# --------------------------------------------------------------------------- cited lines


@pytest.mark.parametrize(
    ("data", "start", "end", "lines"),
    [
        (b"a\nb\nc\n", 2, 3, b"b\nc"),
        (b"a\r\nb\r\nc", 1, 2, b"a\nb"),  # CRLF read as Rust's lines()
        (b"a\nb\n", 1, 1, b"a"),
        (b"a\nb\n", 2, 3, None),  # past the end
        (b"a\nb\n", 0, 1, None),  # line 0
        (b"a\nb\n", 2, 1, None),  # reversed
        (b"", 1, 1, None),
    ],
)
def test_cited_lines_sha256(data, start, end, lines):
    expected = None if lines is None else hashlib.sha256(lines).hexdigest()
    assert cited_lines_sha256(data, start, end) == expected


def test_resolve_cited_path_stays_inside_the_root(tmp_path):
    root = tmp_path / "memories"
    (root / "skills" / "x").mkdir(parents=True)
    (root / "MEMORY.md").write_text("m\n")
    (root / "skills" / "x" / "SKILL.md").write_text("s\n")
    (tmp_path / "secret.md").write_text("secret\n")
    (root / "link.md").symlink_to(tmp_path / "secret.md")
    (root / "inner.md").symlink_to(root / "MEMORY.md")
    real = os.path.realpath
    assert resolve_cited_path(root, "MEMORY.md") == real(root / "MEMORY.md")
    assert resolve_cited_path(root, "./skills/x/SKILL.md") == real(root / "skills/x/SKILL.md")
    assert resolve_cited_path(root, "inner.md") == real(root / "MEMORY.md")
    for outside in ["../secret.md", "skills/../../secret.md", str(tmp_path / "secret.md"),
                    "link.md", "", "skills", "C:\\memories\\MEMORY.md", "missing.md"]:
        assert resolve_cited_path(root, outside) is None, outside


def test_entries_are_logged_with_the_hash_of_the_cited_lines(conn, tmp_path):
    root = tmp_path / "memories"
    root.mkdir()
    (root / "MEMORY.md").write_bytes(b"# T\nline two\nline three\n")
    text = block([A], ["MEMORY.md:2-3|note=[two]", "MEMORY.md:9-9|note=[far]",
                       "../m.sqlite:1-1|note=[out]"])
    result = record_reply(conn, text, memory_root=root, now=NOW)
    assert (result.entries, result.entries_hashed) == (3, 1)
    rows = conn.execute("SELECT path, line_start, line_end, note, lines_sha256 FROM cited_entries"
                        " ORDER BY position").fetchall()
    assert rows == [
        ("MEMORY.md", 2, 3, "two", hashlib.sha256(b"line two\nline three").hexdigest()),
        ("MEMORY.md", 9, 9, "far", None),
        ("../m.sqlite", 1, 1, "out", None),
    ]


def test_memory_files_reread_a_file_that_changed(tmp_path):
    root = tmp_path / "memories"
    root.mkdir()
    path = root / "MEMORY.md"
    path.write_bytes(b"one\n")
    files = MemoryFiles(root)
    first = files.lines_sha256("MEMORY.md", 1, 1)
    path.write_bytes(b"changed line\n")
    assert files.lines_sha256("MEMORY.md", 1, 1) != first
    assert MemoryFiles(tmp_path / "absent").lines_sha256("MEMORY.md", 1, 1) is None


def test_memory_files_look_at_a_file_once_per_reply(tmp_path, monkeypatch):
    root = tmp_path / "memories"
    root.mkdir()
    (root / "MEMORY.md").write_bytes(b"one\ntwo\n")
    files = MemoryFiles(root)
    files.lines_sha256("MEMORY.md", 1, 1)  # read once, then remembered by its stamp
    opens, reads = [], []
    real_open, real_read = os.open, os.read
    monkeypatch.setattr(os, "open", lambda path, *a, **k: opens.append(path) or real_open(
        path, *a, **k))
    monkeypatch.setattr(os, "read", lambda fd, n: reads.append(fd) or real_read(fd, n))
    cited = [("MEMORY.md", 1, 1), ("MEMORY.md", 1, 2), ("MEMORY.md", 1, 1)]
    hashes = files.entry_hashes(cited)
    assert opens == ["MEMORY.md"] and reads == []  # opened once (from the root's handle), not read
    assert hashes == [hashlib.sha256(b"one").hexdigest(), hashlib.sha256(b"one\ntwo").hexdigest(),
                      hashlib.sha256(b"one").hexdigest()]
    assert MemoryFiles(None).entry_hashes(cited) == [None, None, None]


# --------------------------------------------------------------------------- rebuild


def test_rebuild_reports_and_fixes_counts_that_disagree_with_the_log(conn):
    record_reply(conn, block([A]), now=NOW)
    record_reply(conn, "two " + block([A, B]), now=NOW + 10)
    assert rebuild(conn).differences == ()
    conn.execute("UPDATE memories SET usage_count = 7, last_usage = 5 WHERE thread_id = ?", (A,))
    check = rebuild(conn, apply=False)
    assert [(d.thread_id, d.usage_count, d.logged_usage_count, d.logged_last_usage)
            for d in check.differences] == [(A, 7, 2, NOW + 10)]
    assert usage(conn, A) == (7, 5)  # a check changes nothing
    fixed = rebuild(conn)
    assert fixed.applied and usage(conn, A) == (2, NOW + 10)
    assert rebuild(conn).differences == ()


# --------------------------------------------------------------------------- times


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (1_700_000_000, 1_700_000_000),
        (1_700_000_000.9, 1_700_000_000),
        ("1700000000", 1_700_000_000),
        ("2026-01-20T10:00:00Z", 1_768_903_200),
        ("2026-01-20T10:00:00.500Z", 1_768_903_200),
        ("2026-01-20T12:00:00+02:00", 1_768_903_200),
        ("2026-01-20T10:00:00", 1_768_903_200),  # naive: UTC
    ],
)
def test_parse_time(value, seconds):
    assert parse_time(value) == seconds


@pytest.mark.parametrize("value", ["yesterday", "", True, None, [1], "inf", "nan", "1e400",
                                   float("inf"), float("nan"), 2**70])
def test_parse_time_refuses_other_values(value):
    with pytest.raises(InputError):
        parse_time(value)
