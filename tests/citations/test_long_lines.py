"""One long line without spaces: every read-path step takes time in proportion to it.

Speed targets live in benchmarks/bench_long_lines.py. These tests check what the linear
code gives (the same as the quadratic code it replaced, on small inputs) and, on inputs
where the old code took minutes, that the answer comes at all: each runs under a generous
alarm, a guard against a hang rather than a timing.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hang_guard import no_hang
from memcite.readpath import scopes
from memcite.readpath.instructions import build_instructions
from memcite.readpath.note_format import Entry
from memcite.readpath.projects import find_project_root, project_note_path, project_slug
from memcite.readpath.tokens import ApproxTokenizer


def letters(size: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(size))


# --------------------------------------------------------------------------- digest


# The characters the digest's patterns turn on, and some pieces made of them.
KEEP_ALPHABET = list("aabBZz0919_-..//~`` \té٣,:;x") + ["v1", "--", "../", "~/", "a.txt", "1.2", "aB"]
KEEP_TEXT = st.lists(st.sampled_from(KEEP_ALPHABET), max_size=40).map("".join)


def spans(matches) -> list[tuple[int, int]]:
    return [match.span() for match in matches]


@settings(max_examples=2000, deadline=None)
@given(KEEP_TEXT)
def test_keep_matches_are_the_alternations_finditer(text):
    assert spans(scopes._keep_matches(text)) == spans(scopes._KEEP_RE.finditer(text))


@pytest.mark.parametrize("text", [
    "ab.cd.ef.gh",  # file names inside one run of word characters and dots
    "x.y-aaaa-aaaa.txt",  # a file name, then an option inside the same run
    "1.2-aaaa.txt",  # a version, then a file name starting inside its run
    "x~/a/b",  # a path starting at ~ in the middle of a word
    "aBaBaBé",  # camelCase followed by a non-ASCII letter: no match
    "aBcD",
    "`a/b/c` d/e",
    "../up/there and ./here/ and /abs/path.md",
    "snake_case_é v1.2.3x 1.2.3 CamelCase word2 --opt -x",
    "",
])
def test_keep_matches_table(text):
    assert spans(scopes._keep_matches(text)) == spans(scopes._KEEP_RE.finditer(text))


def test_keep_re_is_the_documented_alternation():
    assert scopes._KEEP_RE.pattern == (
        r"`[^`\n]+`"
        r"|(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*"
        r"|[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7}\b"
        r"|--?[a-z][\w-]*"
        r"|\b[A-Za-z_]*[a-z][A-Z][A-Za-z0-9_]*\b"
        r"|\b[A-Za-z0-9]+_[A-Za-z0-9_]+\b"
        r"|\bv?\d+(?:\.\d+)+\b"
        r"|\b[A-Za-z]+[0-9][A-Za-z0-9]*\b"
        r"|\b[A-Z][A-Za-z0-9]+\b"
    )


# At 200 KB, the alternation's finditer took minutes on each of the first three (2.6 s, 0.65 s
# and 3.1 s at 20 KB, growing with the square of the length); the last two were linear already.
LONG = 200_000
LONG_LINES = {
    "letters": lambda size: letters(size),
    "file names in one run": lambda size: ("ab." * size)[:size],
    "camelCase then é": lambda size: ("aB" * size)[: size - 1] + "é",
    "options": lambda size: ("-a" * size)[:size],
    "versions": lambda size: ("1." * size)[: size - 1] + "x",
}


def reference_digest(entry: Entry, monkeypatch) -> str:
    """The digest as the alternation's ``finditer`` makes it (fine on short lines)."""
    with monkeypatch.context() as patch:
        patch.setattr(scopes, "_keep_matches", scopes._KEEP_RE.finditer)
        return scopes.digest(entry)


def long_entry(line: str) -> Entry:
    return Entry(text=line, id="a1b2c3", body=["  Topic: long", "  " + line[::-1]])


@pytest.mark.parametrize("make", LONG_LINES.values(), ids=LONG_LINES.keys())
def test_a_digest_of_a_long_line_is_the_alternations(make, monkeypatch):
    entry = long_entry(make(3_000))
    assert scopes.digest(entry) == reference_digest(entry, monkeypatch)


@pytest.mark.parametrize("make", LONG_LINES.values(), ids=LONG_LINES.keys())
def test_a_digest_of_one_very_long_line_without_spaces(make):
    line = make(LONG)
    with no_hang():
        shown = scopes.digest(long_entry(line))
    assert shown.startswith("- [a1b2c3] " + line[: scopes.DIGEST_CHARS] + " …")
    assert "\n" not in shown


# Before, each name was looked for in the list of those kept: quadratic in their number
# (6 s for 30,000 names, 24 s for these 60,000).
def test_a_digest_keeps_each_of_many_distinct_names_once():
    names = [f"f{number}.txt" for number in range(60_000)]
    line = ",".join(names)  # 650 KB without a space
    entry = Entry(text="see the files", id="a1b2c3", body=["  " + line, "  " + line])
    with no_hang():
        shown = scopes.digest(entry)
    assert shown == "- [a1b2c3] see the files … [" + " ".join(names) + "]"


def test_a_long_word_then_a_path_is_found_once():
    word = letters(LONG)
    text = word + " ~/notes/" + word + "/x.md"
    with no_hang():
        found = [match.group(0) for match in scopes._keep_matches(text)]
    assert found == ["~/notes/" + word + "/x.md"]
    assert re.fullmatch(r"[a-z]+", word)


# --------------------------------------------------------------------------- the memcite profile


class CountingTokenizer:
    """Codex's 4-bytes rule, counting how often a text of ``long`` characters or more is encoded."""

    name = "approx"

    def __init__(self, long: int) -> None:
        self.inner = ApproxTokenizer()
        self.long = long
        self.long_encodes = 0

    def _seen(self, text: str) -> None:
        if len(text) >= self.long:
            self.long_encodes += 1

    def count(self, text: str) -> int:
        self._seen(text)
        return self.inner.count(text)

    def boundaries(self, text: str) -> list[int]:
        self._seen(text)
        return self.inner.boundaries(text)


def write_project_note(home, project, body: str) -> None:
    canonical = find_project_root(project)
    path = Path(project_note_path(home, project_slug(canonical)))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# Project memory\n\nProject: {canonical}\nUpdated: 2026-03-01\n\n{body}")


@pytest.mark.parametrize("where", ["entry", "loose line"])
def test_the_whole_note_is_encoded_at_most_three_times(tmp_path, where):
    home, project = tmp_path / "codex", tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "memory_summary.md").write_text("v1\n\n## User Profile\n\nshort.\n")
    line = letters(LONG)
    body = (f"## Durable decisions\n\n- [a1b2c3] {line}\n  Topic: long\n  Date: 2026-03-01\n"
            if where == "entry" else f"## Durable decisions\n\n- [a1b2c3] short\n\n{line}\n")
    write_project_note(home, project, body)
    tokenizer = CountingTokenizer(LONG)
    with no_hang():
        result = build_instructions(home / "memories", codex_home=home, cwd=project,
                                    tokenizer_name="approx", load_tokenizer=lambda: tokenizer,
                                    today="2026-03-02")
    assert result.truncated and result.used <= 2500
    assert 1 <= tokenizer.long_encodes <= (3 if where == "entry" else 2)
