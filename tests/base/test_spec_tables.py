"""Every example of docs/citation-format.md as a table of exact cases."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcite import parse_reply
from memcite.citations.thread_ids import normalize_thread_id
from memcite.rust_text import RUST_WHITESPACE, rust_trim

O, C = "<oai-mem-citation>", "</oai-mem-citation>"  # noqa: E741


def entries_of(*lines: str):
    """The entries memcite reads from a block holding ``lines`` as its entries section."""
    body = "\n".join(lines)
    reading = parse_reply(f"{O}\n<citation_entries>\n{body}\n</citation_entries>\n{C}")
    if reading.citation is None:
        return []
    return [(e.path, e.line_start, e.line_end, e.note) for e in reading.citation.entries]


# docs/citation-format.md §4, the table, row by row
ENTRY_TABLE = [
    ("MEMORY.md:1-2|note=[x]", ("MEMORY.md", 1, 2, "x")),
    ("  MEMORY.md : 3 - 5 |note=[  padded  ]  ", ("MEMORY.md", 3, 5, "padded")),
    ("C:\\memories\\MEMORY.md:2-4|note=[ok]", ("C:\\memories\\MEMORY.md", 2, 4, "ok")),
    ("MEMORY.md:1-2|note=[]", ("MEMORY.md", 1, 2, "")),
    ("MEMORY.md:1-2|note=[see [docs] here]", ("MEMORY.md", 1, 2, "see [docs] here")),
    ("MEMORY.md:1-2|note=[x]]", ("MEMORY.md", 1, 2, "x]")),
    ("MEMORY.md:1-2", None),
    ("MEMORY.md:1-2|note=[x", None),
    ("MEMORY.md:1-2|note=[x] tail", None),
    ("MEMORY.md:5|note=[x]", None),
    ("MEMORY.md:1.5-2|note=[x]", None),
    ("MEMORY.md:0x1-2|note=[x]", None),
    ("MEMORY.md:1_0-20|note=[x]", None),
    ("MEMORY.md:\u0661-\u0662|note=[x]", None),  # Arabic-Indic digits
    ("MEMORY.md:1-4294967296|note=[x]", None),
    ("MEMORY.md:1-4294967295|note=[x]", ("MEMORY.md", 1, 4294967295, "x")),
    ("MEMORY.md:+1-+2|note=[x]", ("MEMORY.md", 1, 2, "x")),
    ("MEMORY.md:007-010|note=[x]", ("MEMORY.md", 7, 10, "x")),
    ("MEMORY.md:9-2|note=[x]", ("MEMORY.md", 9, 2, "x")),
    ("MEMORY.md:0-0|note=[x]", ("MEMORY.md", 0, 0, "x")),
    (":1-2|note=[x]", ("", 1, 2, "x")),
    ("../secrets.md:1-2|note=[x]", ("../secrets.md", 1, 2, "x")),
    ("/etc/passwd:1-1|note=[x]", ("/etc/passwd", 1, 1, "x")),
    # the LAST "|note=[" and the LAST ":" decide the split
    ("a:1-2|note=[x]:3-4|note=[y]", ("a:1-2|note=[x]", 3, 4, "y")),
    ("a.md:1-2|note=[time 10:30]", ("a.md", 1, 2, "time 10:30")),
    ("a.md:1-2-3|note=[x]", None),  # the second part "2-3" is not a u32
    ("a.md:--2|note=[x]", None),
    ("a.md:1-|note=[x]", None),
    ("a.md: -2|note=[x]", None),
    ("a.md:++1-2|note=[x]", None),
    ("a.md:-1-2|note=[x]", None),
    ("a.md:1 2-3|note=[x]", None),
    ("   ", None),
    ("", None),
]


@pytest.mark.parametrize(("line", "expected"), ENTRY_TABLE)
def test_entry_rule_table(line, expected):
    assert entries_of(line) == ([] if expected is None else [expected])


def test_entries_keep_order_and_duplicates_across_blocks():
    text = (
        f"{O}<citation_entries>\nb.md:1-1|note=[1]\na.md:2-2|note=[2]\n</citation_entries>{C}"
        f"{O}<citation_entries>\nb.md:1-1|note=[1]\n</citation_entries>{C}"
    )
    entries = parse_reply(text).citation.entries
    assert [(e.path, e.note) for e in entries] == [("b.md", "1"), ("a.md", "2"), ("b.md", "1")]


# docs/citation-format.md §2, stage A
STAGE_A = [
    ("no block at all", "no block at all"),
    (f"hello{O}x{C} world", "hello world"),
    (f"answer\n{O}x{C}", "answer\n"),
    (f"a{O}x{O}y{C}z{C}b", f"az{C}b"),
    (f"answer {O}hidden to the end", "answer "),
    ("hello <oai-mem-", "hello <oai-mem-"),
    (f"stray {C} close", f"stray {C} close"),
    (f"{O}{C}", ""),
    (f"{O.upper()}x{C.upper()}", f"{O.upper()}x{C.upper()}"),  # case-sensitive
    ("<oai-mem-citation >x</oai-mem-citation>", "<oai-mem-citation >x</oai-mem-citation>"),
    ("<memory_citation>x</memory_citation>", "<memory_citation>x</memory_citation>"),
    (f"a{O}1{C}b{O}2{C}c", "abc"),
    (f"```\n{O}x{C}\n```", "```\n\n```"),  # fences are not understood
]


@pytest.mark.parametrize(("text", "visible"), STAGE_A)
def test_stage_a_visible_text(text, visible):
    assert parse_reply(text).visible == visible


def test_unterminated_block_is_still_parsed_and_counted():
    uuid = "019c6e27-e55b-73d1-87d8-4e01f1f75043"
    reading = parse_reply(f"answer\n{O}\n<rollout_ids>\n{uuid}\n</rollout_ids>\n")
    assert reading.visible == "answer\n"
    assert reading.thread_ids == [uuid]
    assert "block-unterminated" in {d.code for d in reading.diagnostics}


def test_nested_block_reads_inner_sections_from_the_outer_body():
    reading = parse_reply(f"{O}<rollout_ids>\nA\n</rollout_ids>{O}<rollout_ids>\nB\n</rollout_ids>{C}")
    assert reading.citation.rollout_ids == ["A"]


def test_block_in_code_fence_is_counted_and_reported():
    uuid = "019c6e27-e55b-73d1-87d8-4e01f1f75043"
    reading = parse_reply(f"```\n{O}<rollout_ids>\n{uuid}\n</rollout_ids>{C}\n```\n")
    assert reading.thread_ids == [uuid]
    assert "block-in-code-fence" in {d.code for d in reading.diagnostics}


# docs/citation-format.md §3, stage B
def ids_of(body: str):
    reading = parse_reply(f"{O}{body}{C}")
    return None if reading.citation is None else list(reading.citation.rollout_ids)


STAGE_B_IDS = [
    ("<rollout_ids>\na\n\n  b  \na\n</rollout_ids>", ["a", "b"]),
    ("<thread_ids>\nlegacy\n</thread_ids>", ["legacy"]),
    ("<rollout_ids>\nnew\n</rollout_ids><thread_ids>\nlegacy\n</thread_ids>", ["new"]),
    ("<rollout_ids>\nnever closed\n<thread_ids>\nlegacy\n</thread_ids>", ["legacy"]),
    ("<rollout_ids>\n</rollout_ids><thread_ids>\nlegacy\n</thread_ids>", None),
    ("<rollout_ids>\nfirst\n</rollout_ids><rollout_ids>\nsecond\n</rollout_ids>", ["first"]),
    ("</rollout_ids>x<rollout_ids>\ny\n</rollout_ids>", ["y"]),
    ("<rollout_ids>not-a-uuid</rollout_ids>", ["not-a-uuid"]),
    ("<rollout_ids>\n a b \n</rollout_ids>", ["a b"]),
    ("<rollout_ids>\n\ufeffx\u200b\n</rollout_ids>", ["\ufeffx\u200b"]),
    ("<rollout_ids>\nx\u2028y\n</rollout_ids>", ["x\u2028y"]),
    ("<rollout_ids>\nx\ry\n</rollout_ids>", ["x\ry"]),
    ("<ROLLOUT_IDS>\nx\n</ROLLOUT_IDS>", None),
]


@pytest.mark.parametrize(("body", "ids"), STAGE_B_IDS)
def test_stage_b_ids(body, ids):
    assert ids_of(body) == ids


def test_ids_seen_set_spans_blocks():
    text = f"{O}<rollout_ids>\na\nb\n</rollout_ids>{C}{O}<rollout_ids>\nb\nc\n</rollout_ids>{C}"
    assert parse_reply(text).citation.rollout_ids == ["a", "b", "c"]


STAGE_B_ENTRIES = [
    # first open, first close after it; a second section is ignored
    ("<citation_entries>\na:1-1|note=[1]\n</citation_entries><citation_entries>\nb:2-2|note=[2]\n"
     "</citation_entries>", ["a"]),
    ("<citation_entries>\na:1-1|note=[1]\n", []),  # never closed: no entries
    ("</citation_entries><citation_entries>\na:1-1|note=[1]\n</citation_entries>", ["a"]),
    ("<rollout_ids>\nx\n</rollout_ids><citation_entries>\na:1-1|note=[1]\n</citation_entries>", ["a"]),
    ("<citation_entries>a:1-1|note=[1]</citation_entries>", ["a"]),  # same line as the tags
    ("<citation_entries>\r\na:1-1|note=[1]\r\nb:2-2|note=[2]\r\n</citation_entries>", ["a", "b"]),
    # a bare \r, U+2028, U+0085, \x0b, \x0c do not split lines: one line, split at the LAST note
    ("<citation_entries>\na:1-1|note=[1]\rb:2-2|note=[2]\n</citation_entries>", ["a:1-1|note=[1]\rb"]),
    ("<citation_entries>\na:1-1|note=[1]\u2028b:2-2|note=[2]\n</citation_entries>", ["a:1-1|note=[1]\u2028b"]),
    ("<citation_entries>\na:1-1|note=[1]\x85b:2-2|note=[2]\n</citation_entries>", ["a:1-1|note=[1]\x85b"]),
    ("<citation_entries>\na:1-1|note=[1]\x0bb:2-2|note=[2]\n</citation_entries>", ["a:1-1|note=[1]\x0bb"]),
    ("<citation_entries>\na:1-1|note=[1]\x0cb:2-2|note=[2]\n</citation_entries>", ["a:1-1|note=[1]\x0cb"]),
]


@pytest.mark.parametrize(("body", "paths"), STAGE_B_ENTRIES)
def test_stage_b_entries(body, paths):
    reading = parse_reply(f"{O}{body}{C}")
    found = [] if reading.citation is None else [e.path for e in reading.citation.entries]
    assert found == paths


def test_no_citation_when_both_lists_are_empty():
    reading = parse_reply(f"x{O}<citation_entries>\nbad\n</citation_entries>{C}")
    assert reading.citation is None
    assert reading.visible == "x"


def test_sections_in_any_order():
    text = f"{O}<rollout_ids>\nid\n</rollout_ids><citation_entries>\na:1-1|note=[]\n</citation_entries>{C}"
    citation = parse_reply(text).citation
    assert citation.rollout_ids == ["id"]
    assert citation.entries[0].path == "a"


# "Trim" is Rust's: Unicode White_Space, not Python's str.strip()
@pytest.mark.parametrize("char", list(RUST_WHITESPACE))
def test_rust_whitespace_is_trimmed(char):
    assert rust_trim(f"{char}x{char}") == "x"
    assert entries_of(f"{char}a.md:1-2|note=[x]{char}") == [("a.md", 1, 2, "x")]


@pytest.mark.parametrize("char", ["\x1c", "\x1d", "\x1e", "\x1f", "\u200b", "\ufeff"])
def test_not_rust_whitespace_is_kept(char):
    assert rust_trim(f"{char}x{char}") == f"{char}x{char}"
    assert entries_of(f"a.md:1-2|note=[x]{char}") == []
    assert entries_of(f"{char}a.md:1-2|note=[x]") == [(f"{char}a.md", 1, 2, "x")]


# docs/citation-format.md §5: which ids Codex counts
UUID = "019c6e27-e55b-73d1-87d8-4e01f1f75043"
ID_TABLE = [
    (UUID, UUID),
    (UUID.upper(), UUID),
    (UUID.replace("-", ""), UUID),
    (UUID.replace("-", "").upper(), UUID),
    ("{" + UUID + "}", UUID),
    ("urn:uuid:" + UUID, UUID),
    ("urn:uuid:" + UUID.upper(), UUID),
    ("00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"),
    ("URN:UUID:" + UUID, None),
    ("urn:uuid:" + UUID.replace("-", ""), None),
    ("{" + UUID.replace("-", "") + "}", None),
    ("{" + UUID, None),
    (UUID[:-1], None),
    (UUID + "0", None),
    (UUID.replace("-", "_"), None),
    ("019c6e27e55b-73d1-87d8-4e01f1f75043", None),
    ("g" * 32, None),
    ("not-a-uuid", None),
    ("\uff10" * 32, None),  # full-width digits
]


# The rule as a regular expression (memcite checks it with string operations, cheaper at start-up).
_HEX = "[0-9a-fA-F]"
_HYPHENATED = rf"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
_ID_RULE = re.compile(rf"({_HEX}{{32}})|({_HYPHENATED})|\{{({_HYPHENATED})\}}|urn:uuid:({_HYPHENATED})")


def _by_the_rule(rollout_id: str) -> str | None:
    match = _ID_RULE.fullmatch(rollout_id)
    if match is None:
        return None
    digits = next(group for group in match.groups() if group is not None).replace("-", "").lower()
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


_ID_PIECES = st.lists(st.sampled_from(["0", "9", "a", "F", "g", "-", "{", "}", "urn:uuid:", "URN:",
                                       "\uff10", " ", "\n", UUID, UUID.replace("-", ""), UUID[:8]]),
                      max_size=12).map("".join)


@given(_ID_PIECES | st.text(alphabet="0123456789abcdefABCDEF-{}:nru", max_size=46))
def test_thread_id_rule_agrees_with_its_regular_expression(rollout_id):
    assert normalize_thread_id(rollout_id) == _by_the_rule(rollout_id)


@pytest.mark.parametrize(("rollout_id", "counted"), ID_TABLE)
def test_thread_id_rule(rollout_id, counted):
    assert normalize_thread_id(rollout_id) == counted
    reading = parse_reply(f"{O}<rollout_ids>\n{rollout_id}\n</rollout_ids>{C}")
    assert reading.citation.rollout_ids == [rollout_id]
    assert reading.thread_ids == ([] if counted is None else [counted])


def test_case_variants_are_counted_twice_and_reported():
    reading = parse_reply(f"{O}<rollout_ids>\n{UUID}\n{UUID.upper()}\n</rollout_ids>{C}")
    assert reading.thread_ids == [UUID, UUID]
    assert [d.code for d in reading.diagnostics] == ["id-case-variant"]
