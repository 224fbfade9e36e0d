"""The full citation tally behind ``memcite stats --no-cache``: its fast paths (a cited range
hashed from one slice of the file, entries grouped by SQL, each path resolved once, each
file opened once) give exactly what the straightforward way gives."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcite.ledger import memory_files
from memcite.ledger.memory_files import FileLines, byte_lines, lines_sha256
from memcite.ledger.store import open_store, transaction
from memcite.retention.checks import (
    MEMORY_INDEX,
    MemoryFolder,
    check_entry,
    count_section_citations,
    markdown_sections,
)
from memcite.retention.stats import collect_stats
from memcite.retention.tally import ReplyScope, _full_tally
from memcite.rust_text import RUST_WHITESPACE

NOW = 1_800_000_000

# Bytes that reach every branch: line ends (LF, CR LF, a lone CR), ASCII and Unicode white
# space, a heading, text, invalid UTF-8.
LINE_BYTES = st.lists(st.sampled_from([b"\n", b"\r\n", b"\r", b" ", b"\t", b"\x0b", b"a", b"#",
                                       "\u00a0".encode(), "\u2003".encode(), "é".encode(),
                                       b"\xe2", b"\xff", b"x y"]), max_size=40).map(b"".join)


# --------------------------------------------------------------------------- lines and hashes


@given(LINE_BYTES, st.integers(0, 12), st.integers(0, 12))
def test_a_span_is_the_lines_joined_by_lf(data, line_start, line_end):
    lines, listed = FileLines(data), byte_lines(data)
    assert lines_sha256(lines, line_start, line_end) == lines_sha256(listed, line_start, line_end)
    if 1 <= line_start <= line_end <= len(listed):
        assert lines.span(line_start, line_end) == b"\n".join(listed[line_start - 1 : line_end])


@given(LINE_BYTES, st.integers(-1, 12))
def test_windows_are_every_span_of_their_length_in_order(data, length):
    lines, listed = FileLines(data), byte_lines(data)
    expected = [b"\n".join(listed[start : start + length])
                for start in range(len(listed) - length + 1)] if length >= 1 else []
    assert list(lines.windows(length)) == expected


# --------------------------------------------------------------------------- one entry checked


def _blank_line(line: bytes) -> bool:
    return not line.decode("utf-8", "replace").strip(RUST_WHITESPACE)


def _reference_outcome(data: bytes, line_start: int, line_end: int, recorded: str | None) -> str:
    """``check_entry``'s outcome computed line by line from a list (the rule as written)."""
    lines = byte_lines(data)
    if not 1 <= line_start <= line_end <= len(lines):
        outcome, current = "out_of_range", None
    elif all(_blank_line(line) for line in lines[line_start - 1 : line_end]):
        outcome, current = "blank", None
    else:
        outcome, current = None, lines_sha256(lines, line_start, line_end)
    if outcome is None and recorded is None:
        return "unverified"
    if outcome is None and current == recorded:
        return "ok"
    if outcome in (None, "out_of_range", "blank") and recorded is not None \
            and line_end >= line_start >= 1:
        length = line_end - line_start + 1
        first = next((start for start in range(1, len(lines) - length + 2)
                      if lines_sha256(lines, start, start + length - 1) == recorded), None)
        if first not in (None, line_start):
            return "moved"
    return outcome or "changed"


@settings(max_examples=150)
@given(now=LINE_BYTES, then=LINE_BYTES,
       cited=st.lists(st.tuples(st.integers(0, 10), st.integers(0, 10),
                                st.sampled_from(["then", "now", "none", "junk"])), max_size=6))
def test_check_entry_equals_the_rule_applied_line_by_line(now, then, cited):
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "m.md"), "wb") as handle:
            handle.write(now)
        folder = MemoryFolder(root)
        for line_start, line_end, source in cited:
            recorded = {"then": lines_sha256(byte_lines(then), line_start, line_end),
                        "now": lines_sha256(byte_lines(now), line_start, line_end),
                        "none": None, "junk": "0" * 64}[source]
            assert check_entry(folder, "m.md", line_start, line_end, recorded) \
                == _reference_outcome(now, line_start, line_end, recorded)
        folder.close()


# --------------------------------------------------------------------------- the whole tally

FILES = {
    "MEMORY.md": b"# One\nalpha\nbeta\n\n## Two\ngamma\n   \ndelta\n# Three\nepsilon\n",
    "rollout_summaries/a.md": b"first\nsecond\r\nthird\n\nfifth\n",
    "rollout_summaries/b.md": b"only line",
}
# Spellings of cited paths: the files, another spelling of one, a link inside, a link and
# paths leading out, a missing file, a folder.
PATHS = ["MEMORY.md", "./MEMORY.md", "rollout_summaries/a.md", "rollout_summaries//b.md",
         "link.md", "out.md", "../outside.md", "/etc/passwd", "gone.md", "rollout_summaries"]
KNOWN = [f"00000000-0000-4000-8000-00000000000{n}" for n in range(3)]
UNKNOWN = [f"10000000-0000-4000-8000-00000000000{n}" for n in range(3)]


def _memory_folder(base: str) -> str:
    root = os.path.join(base, "memories")
    os.makedirs(os.path.join(root, "rollout_summaries"))
    for name, data in FILES.items():
        with open(os.path.join(root, name), "wb") as handle:
            handle.write(data)
    with open(os.path.join(base, "outside.md"), "wb") as handle:
        handle.write(b"secret\n")
    os.symlink("rollout_summaries/a.md", os.path.join(root, "link.md"))
    os.symlink("../outside.md", os.path.join(root, "out.md"))
    return root


def _digest(path: str, line_start: int, line_end: int, kind: str) -> str | None:
    data = FILES.get(path.replace("./", "").replace("//", "/"), b"")
    if kind == "now":
        return lines_sha256(byte_lines(data), line_start, line_end)
    if kind == "shifted":  # the lines one further down: moved up by one
        return lines_sha256(byte_lines(data), line_start + 1, line_end + 1)
    return None if kind == "none" else "0" * 64


ENTRY = st.tuples(st.sampled_from(PATHS), st.integers(0, 11), st.integers(0, 3),
                  st.sampled_from(["now", "shifted", "none", "junk"]))
CITED_ID = st.sampled_from([*KNOWN, *UNKNOWN, "not-a-uuid", "Not-A-Uuid"])
REPLY = st.tuples(st.lists(ENTRY, max_size=4), st.lists(CITED_ID, max_size=3),
                  st.integers(0, 9), st.booleans())


def _write_ledger(db: str, root: str, replies) -> sqlite3.Connection:
    """What ``record`` would store for ``replies``, written with plain SQL (fast enough for
    hypothesis); the first of the known ids is synced as a memory only afterwards."""
    conn = open_store(db)
    with transaction(conn):
        for thread_id in KNOWN[1:]:
            conn.execute("INSERT INTO memories (thread_id, source, first_synced_at, synced_at)"
                         " VALUES (?, 'stage1_outputs', ?, ?)", (thread_id, NOW, NOW))
        for number, (entries, ids, days_ago, other_root) in enumerate(replies, start=1):
            at = NOW - days_ago * 86_400
            conn.execute("INSERT INTO replies VALUES (?, ?, 'id', ?, ?, ?, NULL, NULL, 'codex',"
                         " 'default', 'record', ?, 1, 0, 0)",
                         (number, f"key-{number}", "0" * 64, at, at,
                          root + "-other" if other_root else root))
            for position, (path, line_start, span, kind) in enumerate(entries):
                line_end = line_start + span - 1 if span else line_start - 1  # 0: reversed
                conn.execute("INSERT INTO cited_entries VALUES (?, ?, ?, ?, ?, 'n', 1, 1, ?)",
                             (number, position, path, line_start, line_end,
                              _digest(path, line_start, line_end, kind)))
            for position, rollout_id in enumerate(ids):
                thread_id = rollout_id if rollout_id[0].isdigit() else None
                known = int(rollout_id in KNOWN[1:])
                conn.execute("INSERT INTO cited_ids VALUES (?, ?, ?, ?, 1, ?, ?)",
                             (number, position, rollout_id, thread_id,
                              int(thread_id is not None), known))
        conn.execute("INSERT INTO memories (thread_id, source, first_synced_at, synced_at)"
                     " VALUES (?, 'stage1_outputs', ?, ?)", (KNOWN[0], NOW, NOW))
    return conn


def _straightforward_tally(conn: sqlite3.Connection, root: str, scope: ReplyScope):
    """Every cited entry and id row taken one at a time, in Python: the reference."""
    kept = {reply_id for reply_id, at, memory_root in conn.execute(
        "SELECT id, replied_at, memory_root FROM replies")
        if (scope.since is None or at >= scope.since)
        and (scope.memory_root is None or memory_root == scope.memory_root)}
    folder = MemoryFolder(root)
    entries: dict[tuple, int] = {}
    per_file: dict[str, int] = {}
    index_ranges = []
    for reply_id, path, line_start, line_end, digest in conn.execute(
            "SELECT reply_id, path, line_start, line_end, lines_sha256 FROM cited_entries"):
        if reply_id not in kept:
            continue
        key = (path, line_start, line_end, digest)
        entries[key] = entries.get(key, 0) + 1
        real = folder.resolve(path)[1]
        name = os.path.relpath(real, folder.root) if real is not None else path
        per_file[name] = per_file.get(name, 0) + 1
        if real is not None and real == folder.resolve(MEMORY_INDEX)[1]:
            index_ranges.append((line_start, line_end, 1))
    outcomes: dict[str, list[int]] = {}
    for (path, line_start, line_end, digest), count in entries.items():
        outcome = check_entry(folder, path, line_start, line_end, digest)
        totals = outcomes.setdefault(outcome, [0, 0])
        totals[0] += 1
        totals[1] += count
    with open(os.path.join(root, MEMORY_INDEX), "rb") as handle:
        sections = markdown_sections(byte_lines(handle.read()))
    count_section_citations(sections, index_ranges)
    memories = {row[0] for row in conn.execute("SELECT thread_id FROM memories")}
    unknown: dict[str, int] = {}
    not_uuid: dict[str, int] = {}
    for reply_id, rollout_id, thread_id, counted, known in conn.execute(
            "SELECT reply_id, rollout_id, thread_id, counted, known FROM cited_ids"):
        if reply_id not in kept:
            continue
        if thread_id is None:
            not_uuid[rollout_id] = not_uuid.get(rollout_id, 0) + 1
        elif counted and not known and thread_id not in memories:
            unknown[thread_id] = unknown.get(thread_id, 0) + 1
    folder.close()
    return outcomes, per_file, [s.to_dict() for s in sections], unknown, not_uuid


@settings(max_examples=100)
@given(replies=st.lists(REPLY, min_size=1, max_size=8), since_days=st.sampled_from([None, 4]),
       one_root=st.booleans())
def test_the_sql_grouped_tally_equals_one_row_at_a_time(empty_ledger_copy, replies, since_days,
                                                         one_root):
    with tempfile.TemporaryDirectory() as base:
        root = _memory_folder(base)
        real_root = os.path.realpath(root)
        # a copy of a migrated empty ledger, not a new migration per example
        db = empty_ledger_copy(os.path.join(base, "memcite.sqlite"))
        conn = _write_ledger(db, real_root, replies)
        scope = ReplyScope(None if since_days is None else NOW - since_days * 86_400,
                           real_root if one_root else None)
        folder = MemoryFolder(root)
        tally = _full_tally(conn, folder, scope, limit=0)
        folder.close()
        outcomes, per_file, sections, unknown, not_uuid = _straightforward_tally(
            conn, real_root, scope)
        conn.close()
    assert {o: [v["entries"], v["citations"]] for o, v in tally.checks.outcomes.items()
            if v["entries"]} == outcomes
    assert tally.checks.entries == sum(v[0] for v in outcomes.values())
    assert tally.per_file == per_file
    assert [s.to_dict() for s in tally.sections] == sections
    assert tally.unknown == unknown
    assert tally.not_uuid == not_uuid


# --------------------------------------------------------------------------- opened once


def _count_opens(monkeypatch) -> list[tuple[int, int]]:
    """The regular files ``os.open`` opens from now on, by inode (device, inode)."""
    opened: list[tuple[int, int]] = []
    real_open = os.open

    def counting_open(path, flags, mode=0o777, *, dir_fd=None):
        fd = real_open(path, flags, mode, dir_fd=dir_fd)
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            opened.append((info.st_dev, info.st_ino))
        return fd

    monkeypatch.setattr(os, "open", counting_open)
    return opened


def test_stats_opens_each_cited_file_once(tmp_path, monkeypatch):
    """Resolving (safely) and reading share one descriptor: a file cited at many ranges, and
    MEMORY.md read again for its entries, is opened once for the whole report."""
    root = _memory_folder(str(tmp_path))
    paths = ["MEMORY.md", "rollout_summaries/a.md", "rollout_summaries//b.md", "out.md",
             "../outside.md", "gone.md", "rollout_summaries"]
    replies = [([(path, start, 2, "now") for path in paths for start in (1, 2, 3)],
                [KNOWN[1]], 0, False)] * 3
    conn = _write_ledger(str(tmp_path / "memcite.sqlite"), os.path.realpath(root), replies)
    opened = _count_opens(monkeypatch)
    report = collect_stats(conn, memory_root=root, as_of=NOW, max_unused_days=30, limit=0)
    conn.close()
    files = {(info.st_dev, info.st_ino) for info in
             (os.stat(os.path.join(root, name)) for name in FILES)}
    assert sorted(opened) == sorted(files)  # each memory file once, nothing else
    assert report.citation_checks.files_read == len(FILES)
    assert report.citation_checks.outcomes["outside_root"]["citations"] == 2 * 3 * 3


def test_a_file_cited_under_several_spellings_is_read_once(tmp_path, monkeypatch):
    """Each spelling is opened to be resolved (a link is only known by opening it), but the
    file is read once."""
    root = _memory_folder(str(tmp_path))
    opened = _count_opens(monkeypatch)
    folder = MemoryFolder(root)
    for path in ("MEMORY.md", "./MEMORY.md", "rollout_summaries/a.md", "link.md"):
        assert check_entry(folder, path, 1, 1, None) == "unverified"
    assert len(opened) == 4 and len(set(opened)) == 2
    assert folder.files_read == 2
    folder.close()


def test_the_lines_checked_are_those_of_the_descriptor_checked(tmp_path):
    """A file swapped for a link leading out after it was resolved: what is checked is what
    the safe open read, never the file outside."""
    root = _memory_folder(str(tmp_path))
    folder = MemoryFolder(root)
    assert folder.resolve("rollout_summaries/b.md")[0] == "ok"
    target = os.path.join(root, "rollout_summaries", "b.md")
    os.remove(target)
    os.symlink(os.path.join(str(tmp_path), "outside.md"), target)
    expected = hashlib.sha256(b"only line").hexdigest()
    assert check_entry(folder, "rollout_summaries/b.md", 1, 1, expected) == "ok"
    assert MemoryFolder(root).resolve("rollout_summaries/b.md") == ("outside_root", None)
    folder.close()


@pytest.mark.parametrize("path", ["MEMORY.md", "./MEMORY.md", "link.md", "out.md", "gone.md",
                                  "../outside.md"])
def test_the_stamp_taken_when_read_is_the_stamp_of_a_fresh_look(tmp_path, path):
    root = _memory_folder(str(tmp_path))
    reading, fresh = MemoryFolder(root), MemoryFolder(root)
    reading.resolve("MEMORY.md")
    reading.resolve(path)
    assert reading.stamp(path) == fresh.stamp(path)
    reading.close()
    fresh.close()


def test_a_file_too_large_is_stamped_and_skipped_not_read(tmp_path, monkeypatch):
    root = _memory_folder(str(tmp_path))
    monkeypatch.setattr("memcite.retention.checks.MAX_FILE_BYTES", 4)
    folder = MemoryFolder(root)
    assert folder.already_read("rollout_summaries/b.md") is None
    assert check_entry(folder, "rollout_summaries/b.md", 1, 1, "0" * 64) == "unverified"
    assert folder.already_read("rollout_summaries/b.md")[1:] == (
        None, MemoryFolder(root).stamp("rollout_summaries/b.md")[2])
    assert "rollout_summaries/b.md" in folder.skipped
    assert folder.files_read == 1
    folder.close()


@pytest.mark.parametrize(("summary", "lines", "problem"), [
    ("s.md", ["the body", "second"], None),
    ("out.md", [], "rollout_summaries/out.md: outside root"),  # a link leading out
    ("gone.md", [], "rollout_summaries/gone.md: missing"),
])
def test_a_memory_card_reads_its_summary_through_the_checked_descriptor(tmp_path, summary,
                                                                         lines, problem):
    from memcite.retention.memory_card import memory_card

    root = _memory_folder(str(tmp_path))
    with open(os.path.join(root, "rollout_summaries", "s.md"), "wb") as handle:
        handle.write(b"thread_id: x\n\n\nthe body\nsecond\n")
    os.symlink(os.path.join(str(tmp_path), "outside.md"),
               os.path.join(root, "rollout_summaries", "out.md"))
    conn = _write_ledger(str(tmp_path / "memcite.sqlite"), os.path.realpath(root), [])
    conn.execute("UPDATE memories SET rollout_summary_file = ? WHERE thread_id = ?",
                 (summary, KNOWN[0]))
    card = memory_card(conn, KNOWN[0], memory_root=root)
    conn.close()
    assert (card["summary_lines"], card["summary_problem"]) == (lines, problem)


@given(st.binary(max_size=5000))
def test_memory_files_sha256_gives_hashlibs_digests(data):
    """``memory_files.sha256`` (CPython's built-in, no OpenSSL to load) hashes as hashlib does."""
    assert memory_files.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
