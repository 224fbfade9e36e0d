"""The entry reader (memcite.retention.entries): tables of memory files and what they hold, and properties."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcite.retention.entries import (
    IMPORTANCE,
    TIERS,
    entry_title,
    normalize_name,
    read_entries,
    text_lines,
    tier_suggestion,
)


def _one(text):
    entries = read_entries(text)
    assert len(entries) == 1, entries
    return entries[0]


def test_a_bullet_with_tier_and_provenance():
    entry = _one(
        "# Group\n## API\n"
        "- [CORE] API rate limit is 1000 req/min — per key, measured\n"
        "  Source: session-2026-07-15-abc123\n"
        "  Evidence: Confirmed via load test in PR #847\n"
        "  Confidence: HIGH\n"
    )
    assert (entry.line_start, entry.line_end) == (3, 6)
    assert entry.tier == "CORE" and entry.importance == 1.0
    assert (entry.mark.tag, entry.mark.line, entry.mark.column) == ("CORE", 3, 3)
    assert entry.title == "API rate limit is 1000 req/min"
    assert [(f.key, f.value, f.line, f.column) for f in entry.fields] == [
        ("source", "session-2026-07-15-abc123", 4, 3),
        ("evidence", "Confirmed via load test in PR #847", 5, 3),
        ("confidence", "HIGH", 6, 3),
    ]
    assert entry.heading == "API" and entry.headings == ("Group", "API")


def test_the_seed_paragraph_form():
    entry = _one("[CORE] API rate limit is 1000 req/min per key\n  Source: s\n  Evidence: e\n  Confidence: HIGH\n")
    assert entry.tier == "CORE" and entry.line_end == 4 and len(entry.fields) == 3
    assert entry.mark.column == 1


def test_consecutive_prefixed_lines_are_separate_entries():
    entries = read_entries("[CORE] one\n[IMP] two\n[SEC] three\n[IRR] four\nplain five\n")
    assert [e.tier for e in entries] == ["CORE", "IMP", "SEC", "IRR"]
    assert entries[-1].body == "four\nplain five"  # a plain line continues the paragraph above


@pytest.mark.parametrize(
    "text, expected",
    [
        ("# T\napplies_to: cwd=/x\n\n- one\n", ["one"]),  # a task group's line is not an entry
        ("# Project memory\n\nProject: /p\nUpdated: 2026-01-02\n\n## Current state\n- ok\n", ["ok"]),
        ("- one\n- two\n* three\n+ four\n1. five\n2) six\n", ["one", "two", "three", "four", "five", "six"]),
        ("- one\n\n  more of one\n- two\n", ["one", "two"]),  # a loose list item keeps its indented lines
        ("para one\nstill one\n\npara two\n", ["para one", "para two"]),
        ("- one\n```\n- not an entry\n```\n- two\n", ["one", "two"]),
        ("~~~\n[CORE] in a fence\n~~~\n", []),
        ("    indented code under nothing\n", []),
        ("- [x] done\n- [ ] todo\n", ["[x] done", "[ ] todo"]),
        ("- [Docs](https://x) link first\n", ["[Docs](https://x) link first"]),
        ("", []),
        ("\n\n# only a heading\n\n", []),
    ],
)
def test_what_is_an_entry(text, expected):
    assert [e.text for e in read_entries(text)] == expected


def test_an_indented_fence_belongs_to_its_entry():
    entries = read_entries("- run this\n  ```sh\n  - not an entry\n  ```\n- next\n")
    assert [(e.text, e.line_start, e.line_end) for e in entries] == [("run this", 1, 4), ("next", 5, 5)]


@pytest.mark.parametrize(
    "line, key",
    [
        ("  superseded_by: X", "superseded_by"),
        ("  Superseded-By: X", "superseded_by"),
        ("  superseded by: X", "superseded_by"),
        ("  **Source**: X", "source"),
        ("  **Source:** X", "source"),
        ("  - Evidence: X", "evidence"),
        ("\tConfidence:X", "confidence"),
        ("  Tier: X", "tier"),
        ("  Expires: X", "expires"),
        ("  Id: X", "id"),
    ],
)
def test_field_spellings(line, key):
    entry = _one(f"- entry\n{line}\n")
    assert [(f.key, f.value) for f in entry.fields] == [(key, "X")]


@pytest.mark.parametrize(
    "line, entry_id, text",
    [
        ("- `d7f3a1` Use WAL — busy timeout", "d7f3a1", "Use WAL — busy timeout"),
        ("- Use WAL <!-- id: d7f3 -->", "d7f3", "Use WAL"),
        ("- Use WAL {#wal-1}", "wal-1", "Use WAL"),
        ("- [CORE] `ab12` Use WAL", "ab12", "Use WAL"),
        ("- `ab12` [CORE] Use WAL", "ab12", "Use WAL"),
        ("- `pytest` is the runner", None, "`pytest` is the runner"),  # no digit: a code span, not an id
        ("- Use WAL\n  Id: x9", "x9", "Use WAL"),
    ],
)
def test_entry_ids(line, entry_id, text):
    entry = _one(line + "\n")
    assert (entry.entry_id, entry.text) == (entry_id, text)


@pytest.mark.parametrize(
    "text, heading, decision",
    [
        ("Decision: Use REST API [2026-03-01]", None, "Use REST API [2026-03-01]"),
        ("Decision: Use REST API — it is simple", None, "Use REST API"),
        ("**Decision:** gRPC", None, "gRPC"),
        ("Use WAL — readers never block — PR 12", "Durable decisions", "Use WAL"),
        ("Use WAL — readers never block", "Current state", None),
        ("No decision here", None, None),
        ("DECISION: shout", None, "shout"),
    ],
)
def test_decisions(text, heading, decision):
    prefix = f"## {heading}\n" if heading else ""
    entry = _one(f"{prefix}- {text}\n")
    assert entry.decision == decision


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Decision: Use REST API [2026-03-01]", "use rest api"),
        ("  `Use   WAL`. ", "use wal"),
        ('"Migrate to gRPC"', "migrate to grpc"),
        ("**Bold** title (2026-01-02)", "bold title"),
    ],
)
def test_normalize_name(text, expected):
    assert normalize_name(text) == expected


@pytest.mark.parametrize(
    "tag, expected",
    [("CROE", "CORE"), ("core", "CORE"), ("Core", "CORE"), ("IMPORTANT", "IMP"), ("IMPP", "IMP"),
     ("SECONDARY", "SEC"), ("IRRELEVANT", "IRR"), ("IRRELEVENT", "IRR"), ("CRE", "CORE"),
     ("CORE", None), ("WIP", None), ("TODO", None), ("NOTE", None), ("x", None)],
)
def test_tier_suggestion(tag, expected):
    assert tier_suggestion(tag) == expected


def test_tier_from_the_tier_line_and_importance_table():
    assert _one("- x\n  Tier: SEC\n").tier == "SEC"
    assert _one("- x\n  Tier: nope\n").tier is None
    assert _one("- [core] x\n").tier is None
    assert IMPORTANCE == {"CORE": 1.0, "IMP": 0.7, "SEC": 0.4, "IRR": 0.1, None: 0.5}


def test_entry_title_stops_at_the_first_em_dash():
    assert entry_title("A — B — C") == "A"
    assert entry_title("A-B - C") == "A-B - C"


# --------------------------------------------------------------------------- properties

_words = st.text(alphabet=st.sampled_from("abcdefghij XYZ0123"), min_size=1, max_size=20).map(str.strip).filter(
    lambda s: s and not s[0].isdigit())
_entry = st.tuples(
    st.sampled_from([None, *TIERS]),
    _words,
    st.lists(st.tuples(st.sampled_from(["Source", "Evidence", "Confidence", "superseded_by", "Expires"]), _words),
             max_size=4),
)


def _render(entries, headings=("# Group", "## Section")):
    lines = list(headings)
    for tier, text, fields in entries:
        lines.append(f"- [{tier}] {text}" if tier else f"- {text}")
        lines.extend(f"  {key}: {value}" for key, value in fields)
    return "\n".join(lines) + "\n"


@given(st.lists(_entry, max_size=12))
def test_rendered_entries_read_back(entries):
    read = read_entries(_render(entries))
    assert [(e.tier, e.text, [(f.key, f.value) for f in e.fields]) for e in read] == [
        (tier, text, [(key.lower(), value) for key, value in fields]) for tier, text, fields in entries
    ]


@given(st.lists(_entry, min_size=1, max_size=8), st.lists(st.sampled_from(["", "# New", "- added", "text"]),
                                                           max_size=6))
def test_lines_above_shift_entries_without_changing_them(entries, above):
    base = read_entries(_render(entries))
    shifted_text = "\n".join([*above, ""]) + _render(entries)
    shifted = read_entries(shifted_text)
    tail = shifted[len(shifted) - len(base):]
    offset = len(above)
    assert [(e.text, e.fields and [(f.key, f.value) for f in e.fields], e.line_start + offset) for e in base] == [
        (e.text, e.fields and [(f.key, f.value) for f in e.fields], e.line_start) for e in tail]


@given(st.text(max_size=400))
def test_any_text_reads_without_error_and_entries_are_ordered(text):
    entries = read_entries(text)
    line_count = len(text_lines(text))
    previous_end = 0
    for entry in entries:
        assert previous_end < entry.line_start <= entry.line_end <= line_count
        for item in entry.fields:
            assert entry.line_start <= item.line <= entry.line_end
        previous_end = entry.line_end


def test_lines_are_numbered_as_codex_numbers_them():
    # Only LF ends a line (a form feed or U+2028 does not), as in Rust's str::lines.
    entries = read_entries("- one\x0cstill one\r\n- two\u2028still two\n- three")
    assert [(e.text, e.line_start) for e in entries] == [
        ("one\x0cstill one", 1), ("two\u2028still two", 2), ("three", 3)]


def test_codex_s_list_of_a_section_s_sources_holds_no_entry():
    text = ("# Task Group: billing\n\napplies_to: cwd=/srv/billing; reuse_rule=same repo\n\n"
            "## Invoices\n\n- Invoices close on the 3rd business day.\n\n"
            "### rollout_summary_files\n\n- rollout_summaries/2026-01-02-a.md (cwd=/srv/billing)\n"
            "- rollout_summaries/2026-01-03-b.md (cwd=/srv/billing)\n\n"
            "## Refunds\n\n- Refunds over $500 need a second approver.\n")
    titles = [entry.text for entry in read_entries(text)]
    assert titles == ["Invoices close on the 3rd business day.",
                      "Refunds over $500 need a second approver."]


def test_codex_s_source_list_is_part_of_its_section_not_a_section():
    from memcite.retention.checks import markdown_sections

    lines = ["# Task Group: billing", "", "## Invoices", "- Invoices close on the 3rd.", "",
             "### rollout_summary_files", "- rollout_summaries/2026-01-02-a.md", "",
             "## Refunds", "- Refunds need a second approver."]
    sections = markdown_sections([line.encode() for line in lines])
    assert [(s.title, s.line, s.end_line) for s in sections] == [
        ("Task Group: billing", 1, 2), ("Invoices", 3, 8), ("Refunds", 9, 10)]
