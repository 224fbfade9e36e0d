"""Hypothesis properties of the reader: round trips, totality, agreement with the plain reading."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcite import Citation, CitationEntry, CitationError, parse_reply, render_citation
from memcite.rust_text import RUST_WHITESPACE
from plain_reader import plain_read

FRAGMENTS = [
    "<oai-mem-citation>", "</oai-mem-citation>", "<citation_entries>", "</citation_entries>",
    "<rollout_ids>", "</rollout_ids>", "<thread_ids>", "</thread_ids>", "<memory_citation>",
    "|note=[", "]", ":", "-", "+", "\n", "\r\n", "\r", " ", "\t", "\u3000", "\u2028", "\x85",
    "\ufeff", "\x1c", "MEMORY.md", "1", "42", "007", "4294967295", "4294967296", "9" * 12,
    "019c6e27-e55b-73d1-87d8-4e01f1f75043", "019C6E27E55B73D19866E1F484AAE2AB",
    "{019c6e27-e55b-73d1-87d8-4e01f1f75043}", "urn:uuid:019c7714-3b77-74d1-9866-e1f484aae2ab",
    "not-a-uuid", "```\n", "..", "/", "\\", "é", "\U0001f600",
]
reply_texts = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=40
).map("".join)


@given(reply_texts)
def test_agrees_with_the_plain_reading(text):
    reading = parse_reply(text)
    expected = plain_read(text)
    assert reading.visible == expected["visible"]
    assert list(reading.thread_ids) == expected["thread_ids"]
    if expected["citation"] is None:
        assert reading.citation is None
    else:
        got = reading.citation
        assert [(e.path, e.line_start, e.line_end, e.note) for e in got.entries] == expected[
            "citation"
        ]["entries"]
        assert list(got.rollout_ids) == expected["citation"]["rollout_ids"]


@given(st.text())
def test_any_text_is_read_and_every_character_is_accounted_for(text):
    reading = parse_reply(text)
    hidden = sum(block.end - block.start for block in reading.blocks)
    assert len(reading.visible) + hidden == len(text)
    rebuilt, position = [], 0
    for block in reading.blocks:
        rebuilt.append(text[position : block.start])
        position = block.end
    rebuilt.append(text[position:])
    assert "".join(rebuilt) == reading.visible


@given(reply_texts)
def test_fragments_are_accounted_for(text):
    reading = parse_reply(text)
    spans = sum(block.end - block.start for block in reading.blocks)
    assert len(reading.visible) + spans == len(text)
    for block in reading.blocks:
        assert text.startswith("<oai-mem-citation>", block.start)
        assert block.terminated == text.startswith("</oai-mem-citation>", block.body_end)


@given(reply_texts)
def test_strict_accepts_exactly_what_codex_reads_without_warnings(text):
    codex = parse_reply(text)
    try:
        strict = parse_reply(text, profile="strict")
    except CitationError as error:
        assert codex.has_warnings
        assert all(d.severity == "error" for d in error.diagnostics)
        assert len(error.diagnostics) == sum(d.severity != "info" for d in codex.diagnostics)
    else:
        assert not codex.has_warnings
        assert strict.to_dict() == codex.to_dict()


@given(reply_texts)
def test_diagnostics_point_inside_the_reply(text):
    lines = text.split("\n")
    for diagnostic in parse_reply(text).diagnostics:
        assert 1 <= diagnostic.line <= len(lines)
        assert 1 <= diagnostic.column <= len(lines[diagnostic.line - 1]) + 1


# Values a model can write and read back unchanged: trimmed, one line, no
# "|note=[" inside a note, and a path whose trimmed form is itself.
_line_text = st.text(
    st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=20
).filter(lambda s: s == s.strip(RUST_WHITESPACE))
paths = _line_text
notes = _line_text.filter(lambda s: "|note=[" not in s and "|note=[" not in s + "]")
ids = _line_text.filter(
    lambda s: s and "<" not in s
)
numbers = st.integers(min_value=0, max_value=4294967295)
entries = st.builds(CitationEntry, paths, numbers, numbers, notes)


@given(st.lists(entries, max_size=6), st.lists(ids, max_size=6, unique=True))
def test_render_then_read_gives_the_citation_back(entry_list, id_list):
    citation = Citation(list(entry_list), list(id_list))
    block = render_citation(citation)
    # paths and notes must not themselves contain tags that end the sections early
    if any(
        tag in e.path + e.note
        for e in entry_list
        for tag in ("</citation_entries>", "</oai-mem-citation>", "<citation_entries>")
    ):
        return
    reading = parse_reply("Answer.\n\n" + block)
    assert reading.visible == "Answer.\n\n"
    if not entry_list and not id_list:
        assert reading.citation is None
    else:
        assert reading.citation == citation


@pytest.mark.parametrize("size", [0, 1, 10, 1000])
def test_render_round_trip_sizes(size):
    citation = Citation(
        [CitationEntry(f"f{i}.md", i, i + 1, f"n {i}") for i in range(size)],
        [f"id-{i}" for i in range(size)],
    )
    reading = parse_reply(render_citation(citation))
    assert (reading.citation or Citation([], [])) == citation
