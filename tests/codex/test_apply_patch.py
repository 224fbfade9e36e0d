"""``memcite.codex.apply_patch`` against the table of what Codex 0.171 does with each patch
(``tests/apply_patch_cases.py``; the end-to-end suite runs the same table through the
binary), and the rules the table rests on."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apply_patch_cases import CASES, simulate
from memcite.codex import apply_patch as ap


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_parser_predicts_what_codex_writes(case):
    assert simulate(case.patch, case.files) == (case.status, case.after), case.why


@pytest.mark.parametrize("text, lines", [
    ("a\nb", ["a", "b"]),
    ("a\nb\n", ["a", "b"]),
    ("a\r\nb\r\n", ["a", "b"]),
    ("a\rb\r", ["a\rb\r"]),  # a lone \r is no line end
    ("a\u2028b\x85c\x0cd\x0be\x1ef\u2029g", ["a\u2028b\x85c\x0cd\x0be\x1ef\u2029g"]),
    ("", []),
    ("\n\n", ["", ""]),
])
def test_lines_split_on_newline_only(text, lines):
    assert ap.split_lines(text) == lines


def test_trim_is_rust_s_white_space_not_python_s():
    assert ap.trim("\u2028\x85\x0c\x0b\u00a0\u3000 x \t\r\n") == "x"
    for kept in ("\x1c", "\x1d", "\x1e", "\x1f", "\u200b", "\ufeff"):  # str.strip() takes some
        assert ap.trim(f"{kept}x{kept}") == f"{kept}x{kept}"


@pytest.mark.parametrize("lines, pattern, start, eof, found", [
    (["a", "b", "c"], ["b", "c"], 0, False, 1),
    (["a  ", "b\t"], ["a", "b"], 0, False, 0),  # white space at the end ignored
    (["  a ", " b"], ["a", "b"], 0, False, 0),  # and at both ends
    (["x \u2014 \u201cy\u201d"], ["x - \"y\""], 0, False, 0),  # typographic punctuation
    (["x", "q", "x"], ["x"], 0, True, 2),  # end of file first
    (["x", "q", "x"], ["x"], 1, False, 2),  # from start on
    (["one"], ["too", "many"], 0, False, None),
    (["a"], [], 0, False, 0),
])
def test_seek_sequence(lines, pattern, start, eof, found):
    assert ap.seek_sequence(lines, pattern, start, eof) == found


def test_landings_follow_moves_and_mark_what_the_patch_adds():
    files = {"/w/old.md": "# Old\nkept\n"}
    hunks = ap.parse_patch("*** Begin Patch\n*** Update File: old.md\n*** Move to: new.md\n"
                           "@@\n kept\n+added\n*** Add File: other.md\n+x\n*** End Patch")
    landed = ap.landings(hunks, "/w", files.get)
    assert sorted(landed) == ["/w/new.md", "/w/other.md"]
    moved = landed["/w/new.md"]
    assert moved.text == "# Old\nkept\nadded\n" and moved.added == [True, True, True]
    assert moved.complete


def test_a_hunk_that_cannot_be_applied_still_lands_its_own_lines():
    hunks = ap.parse_patch("*** Begin Patch\n*** Update File: gone.md\n@@\n ctx\n+new\n"
                           "*** End Patch")
    (landing,) = ap.landings(hunks, "/w", lambda path: None).values()
    assert not landing.complete and landing.text == "ctx\nnew\n"
    assert landing.added == [False, True] and "cannot be read" in landing.problems[0]


_PIECES = ["*** Begin Patch", "*** End Patch", "*** Add File: a.md", "*** Update File: a.md",
           "*** Delete File: a.md", "*** Move to: b.md", "*** End of File", "@@", "@@ x", "+x",
           "-x", " x", "", "\u2028", "\t", "EOF", "<<EOF", "x\r"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=8)), max_size=12),
       st.text(max_size=20))
def test_any_text_parses_or_is_refused_and_any_hunks_land(pieces, file_text):
    try:
        hunks = ap.parse_patch("\n".join(pieces))
    except ap.PatchError:
        return
    landed = ap.landings(hunks, "/w", lambda path: file_text if path == "/w/a.md" else None)
    for landing in landed.values():
        assert len(landing.added) <= landing.text.count("\n") + 1
