"""Codex's ad-hoc note names: what memcite makes always passes Codex's rule, and the checker
refuses what the rule refuses."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcite.ledger.adhoc_notes import (
    adhoc_note_name,
    is_adhoc_note_name,
    note_slug,
    numbered,
)

AT = int(datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC).timestamp())


@pytest.mark.parametrize(("text", "name"), [
    ("memcite: forget 3 memories", "2026-03-04T05-06-07-memcite-forget-3-memories.md"),
    ("  Ünïcode — only!  ", "2026-03-04T05-06-07-n-code-only.md"),
    ("", "2026-03-04T05-06-07-note.md"),
    ("---", "2026-03-04T05-06-07-note.md"),
    ("a" * 200, "2026-03-04T05-06-07-" + "a" * 80 + ".md"),
    ("x" * 79 + "-yz", "2026-03-04T05-06-07-" + "x" * 79 + ".md"),
])
def test_names_made_from_text(text, name):
    assert adhoc_note_name(AT, text) == name
    assert is_adhoc_note_name(name)


@pytest.mark.parametrize("name", [
    "2026-03-04T05-06-07-.md",                       # empty slug
    "2026-03-04T05-06-07-Upper.md",                  # not [a-z0-9-]
    "2026-03-04T05-06-07-under_score.md",
    "2026-03-04T05-06-07-slug.txt",                  # not .md
    "2026-03-04 05-06-07-slug.md",                   # not the prefix
    "2026-03-04T05:06:07-slug.md",
    "2026-03-04T05-06-07-" + "a" * 81 + ".md",       # slug over 80 bytes
    "../2026-03-04T05-06-07-slug.md",
    "2026-03-04T05-06-07-slug.md\n",
])
def test_names_codex_refuses(name):
    assert not is_adhoc_note_name(name)


@given(st.integers(min_value=0, max_value=253_402_300_799), st.text())
def test_every_made_name_passes_codex_rule(at, text):
    name = adhoc_note_name(at, text)
    assert is_adhoc_note_name(name)
    assert len(name.encode()) <= 128
    assert note_slug(note_slug(text)) == note_slug(text)  # a slug is its own slug
    for number in (2, 10, 12345):
        assert is_adhoc_note_name(numbered(name, number))
        assert numbered(name, number) != name
