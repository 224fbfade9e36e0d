"""The note format: parsed without losing a byte, hand-written entries kept, ids short and stable."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcite.notes.model import (
    Entry,
    assign_ids,
    is_entry_id,
    new_entry_id,
    new_note,
    parse_note,
    render_note,
    section_key,
)

SAMPLE = """# Project memory

Project: /src/payments-api
Updated: 2026-11-20

## Durable decisions
- [a1b2c3] Use gRPC between services — latency — 2026-05-15
  Topic: transport
  Date: 2026-05-15
  Source: docs/adr/0007.md
  Confidence: HIGH
  Tier: CORE
* a hand-written decision
  with a second line a person wrote

Some paragraph a person left here.

## Current state
- [x9y8z7] Verified: `make test` passes on main
  Evidence: CI run 4411
  Expires: when the build image changes

## Risks and next steps
- Flaky test in tests/ledger/test_sync.py — owner: ana — needs a seed

## Links a person added
- https://example.com/runbook
"""


def test_sample_round_trips_byte_for_byte():
    assert render_note(parse_note(SAMPLE)) == SAMPLE


def test_sample_entries_sections_ids_and_fields():
    note = parse_note(SAMPLE)
    assert note.project == "/src/payments-api"
    assert note.updated == "2026-11-20"
    entries = note.entries()
    assert [(key, e.id) for key, e in entries] == [
        ("decisions", "a1b2c3"), ("decisions", None), ("state", "x9y8z7"), ("risks", None),
        (None, None),
    ]
    first = entries[0][1]
    assert first.fields() == {"Topic": "transport", "Date": "2026-05-15",
                              "Source": "docs/adr/0007.md", "Confidence": "HIGH", "Tier": "CORE"}
    assert entries[1][1].marker == "*"
    assert entries[1][1].body == ["  with a second line a person wrote"]
    assert entries[2][1].get("Expires") == "when the build image changes"


def test_assigning_ids_changes_only_the_bullet_lines_of_hand_written_entries():
    note = parse_note(SAMPLE)
    adopted = assign_ids(note)
    assert len(adopted) == 3
    before = SAMPLE.split("\n")
    after = render_note(note).split("\n")
    assert len(before) == len(after)
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    assert len(changed) == 3
    for old, new in changed:
        marker, rest = old.split(" ", 1)
        assert new == f"{marker} [{new.split('[')[1][:6]}] {rest}"
    # and the new ids are read back as ids
    assert {e.id for _, e in parse_note(render_note(note)).entries()} == note.ids()


@pytest.mark.parametrize(
    ("line", "entry_id", "text"),
    [
        ("- [a1b2c3] text", "a1b2c3", "text"),
        ("- [abcdef] text", None, "[abcdef] text"),  # no digit: a word, not an id
        ("- [123456] text", None, "[123456] text"),  # no letter
        ("- [CORE] API limit", None, "[CORE] API limit"),
        ("- [a1b2c3d] text", None, "[a1b2c3d] text"),  # seven characters
        ("- [A1B2C3] text", None, "[A1B2C3] text"),  # upper case
        ("* [k3f9a2] star bullet", "k3f9a2", "star bullet"),
        ("+ plain", None, "plain"),
    ],
)
def test_bullet_ids(line, entry_id, text):
    note = parse_note(f"## Current state\n{line}\n")
    (_, entry), = note.entries()
    assert entry.id == entry_id
    assert entry.text == text


def test_a_copied_entry_with_the_same_id_gets_a_new_one():
    note = parse_note("## Current state\n- [a1b2c3] one\n- [a1b2c3] copy\n")
    ids = [e.id for _, e in note.entries()]
    assert ids == ["a1b2c3", None]
    assign_ids(note)
    assert len(note.ids()) == 2


@pytest.mark.parametrize(
    ("heading", "key"),
    [("Durable decisions", "decisions"), ("current STATE", "state"),
     (" Risks and next steps ", "risks"), ("Decisions", None), ("Notes", None)],
)
def test_section_keys(heading, key):
    assert section_key(heading) == key


def test_new_note_has_the_compact_structure():
    text = render_note(new_note("/a/b", "2026-11-30"))
    assert text == ("# Project memory\n\nProject: /a/b\nUpdated: 2026-11-30\n\n"
                    "## Durable decisions\n\n## Current state\n\n## Risks and next steps\n")


def test_set_header_replaces_or_adds():
    note = parse_note("# Project memory\n\nProject: /a\n\n## Current state\n")
    note.set_header("Updated", "2026-11-30")
    assert render_note(note).startswith("# Project memory\n\nProject: /a\nUpdated: 2026-11-30\n")
    note.set_header("Updated", "2026-12-01")
    assert note.updated == "2026-12-01"
    bare = parse_note("some text\n")
    bare.set_header("Project", "/x")
    assert bare.project == "/x"
    assert "some text" in render_note(bare)


def test_set_field_replaces_in_place_and_keeps_other_lines():
    entry = Entry("t", "a1b2c3", body=["  Source: a", "  a person's remark", "  Tier: SEC"])
    entry.set_field("Tier", "CORE")
    entry.set_field("Evidence", "e")
    assert entry.body == ["  Source: a", "  a person's remark", "  Tier: CORE", "  Evidence: e"]


def test_new_ids_are_ids_and_avoid_taken_ones():
    taken: set[str] = set()
    for number in range(300):
        new = new_entry_id("same seed", taken) if number % 2 else new_entry_id(str(number), taken)
        assert is_entry_id(new) and new not in taken
        taken.add(new)


def test_crlf_notes_round_trip():
    text = SAMPLE.replace("\n", "\r\n")
    note = parse_note(text)
    assert render_note(note) == text
    assert [e.id for _, e in note.entries()][0] == "a1b2c3"


_lines = st.lists(st.one_of(
    st.sampled_from(["## Durable decisions", "## Current state", "## Risks and next steps",
                     "## Other", "# Project memory", "Project: /p", "Updated: 2026-01-01", "",
                     "- [a1b2c3] x", "- [d4e5f6] y", "* hand", "  Source: s", "  more", "\t tab",
                     "- ", "-x", "### sub"]),
    st.text(alphabet=st.characters(exclude_characters="\n\r"), max_size=30),
), max_size=30)


@given(_lines)
def test_any_text_round_trips(lines):
    text = "\n".join(lines)
    assert render_note(parse_note(text)) == text


@given(_lines)
def test_after_assigning_ids_every_entry_keeps_its_content(lines):
    note = parse_note("\n".join(lines))
    before = [(key, e.content()) for key, e in note.entries()]
    assign_ids(note)
    again = parse_note(render_note(note))
    assert [(key, e.content()) for key, e in again.entries()] == before
    assert all(e.id for _, e in again.entries())
