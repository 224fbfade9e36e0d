"""The entry reader's patterns are linear in a line: each gives what the old pattern gave,
and a long run of spaces no longer takes seconds (the old patterns were quadratic in it)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hang_guard import no_hang
from memcite.retention import entries

OLD_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
OLD_ID_BRACES = re.compile(r"[ \t]*\{#(?P<id>[A-Za-z0-9_-]{2,40})\}[ \t]*$")
OLD_DECISION = re.compile(
    r"(?:^|(?<=[\s*_(]))Decision[ \t]*:(?:\*\*|__)?[ \t]*(?P<text>.+?)(?:[ \t]+—[ \t]+.*)?$",
    re.IGNORECASE)
OLD_TRAILING_DATE = re.compile(r"[ \t]*[\[(]\d{4}-\d\d-\d\d[\])]$")
OLD_FIELD = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+)?(?:\*\*|__)?(?P<key>source|evidence|confidence|superseded[_ -]?by|tier"
    r"|expires|id)(?:\*\*|__)?[ \t]*:(?:\*\*|__)?[ \t]*(?P<value>.*?)[ \t]*$", re.IGNORECASE)

PIECES = st.sampled_from(["#", "## ", " ", "\t", "—", " — ", "Decision:", "decision :", "**",
                          "{#ab-1}", "(2026-01-02)", "[2026-01-02]", "x", "Source:", "- ", "é",
                          "_", "(", "}", "{#", "#a"])
LINES = st.lists(PIECES, max_size=14).map("".join)


def _decision_old(text):
    match = OLD_DECISION.search(text)
    return match.group("text").strip() if match else None


@given(LINES)
def test_the_same_readings_as_the_old_patterns(line):
    old = OLD_HEADING.match(line)
    new = entries._HEADING.match(line)
    assert (old is None) == (new is None)
    if old:
        assert old.group(2).strip() == new.group(2).rstrip(" \t#").strip()
    assert entries.entry_decision(line, None) == (_decision_old(line) if ":" in line else None)
    assert entries._TRAILING_DATE.sub("", line) == OLD_TRAILING_DATE.sub("", line)
    old_b, new_b = OLD_ID_BRACES.search(line), entries._ID_BRACES.search(line)
    assert (old_b and (old_b.span(), old_b.group("id"))) == (new_b and (new_b.span(), new_b.group("id")))
    old_f, new_f = OLD_FIELD.match(line), entries._FIELD.match(line)
    assert (old_f is None) == (new_f is None)
    if old_f:
        assert old_f.group("value") == new_f.group("value").rstrip(" \t")


@pytest.mark.parametrize("line", [
    "Decision: a" + " " * 200_000 + "b",
    "# title" + " " * 200_000 + "x",
    "- entry" + " " * 200_000 + "x}",
    "Source: x" + " " * 200_000 + "y",
    "text" + " " * 200_000 + "(2026-01-0",
])
def test_a_long_run_of_spaces_is_read_at_once(line):
    with no_hang():
        entries.entry_decision(line, "Decisions")
        entries.normalize_name(line)
        entries.read_entries(line + "\n")
        entries.read_entries("- " + line + "\n")
