"""Truncation: Codex's 4-bytes rule byte for byte, and memcite's budgeted head cut."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcite.readpath.tokens import ApproxTokenizer, get_tokenizer
from memcite.readpath.truncation import (
    approx_token_count,
    truncate_approx,
    truncate_to_budget,
)

# Text without lone surrogates (memory files are decoded UTF-8, which has none).
TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=400)


def reference_approx(text: str, budget: int) -> str:
    """Codex's rule (docs/read-path.md) written out character by character, as a second opinion."""
    if not text:
        return text
    size = len(text.encode("utf-8"))
    if budget > 0 and size <= 4 * budget:
        return text
    max_bytes = 4 * budget
    if max_bytes == 0:
        return f"…{math.ceil(size / 4)} tokens truncated…"
    left, right = max_bytes // 2, max_bytes - max_bytes // 2
    prefix, suffix, offset = [], [], 0
    starts = []
    for char in text:
        width = len(char.encode("utf-8"))
        starts.append((offset, offset + width, char))
        offset += width
    for _start, end, char in starts:
        if end <= left:
            prefix.append(char)
        else:
            break
    prefix_end = sum(len(c.encode("utf-8")) for c in prefix)
    for start, _end, char in starts:
        if start >= size - right and start >= prefix_end:
            suffix.append(char)
    n = math.ceil((size - max_bytes) / 4)
    return "".join(prefix) + f"…{n} tokens truncated…" + "".join(suffix)


SPEC_EXAMPLES = [
    ("abcdef", 0, "…2 tokens truncated…"),
    ("example output", 1, "ex…3 tokens truncated…ut"),
    ("b" * 10_001, 2_500, "b" * 5_000 + "…1 tokens truncated…" + "b" * 5_000),
    (
        "this is an example of a long output that should be truncated",
        5,
        "this is an…10 tokens truncated… truncated",
    ),
]


@pytest.mark.parametrize(("text", "budget", "expected"), SPEC_EXAMPLES)
def test_approx_reproduces_every_spec_example(text, budget, expected):
    assert truncate_approx(text, budget) == expected


@pytest.mark.parametrize(
    ("text", "budget", "expected"),
    [
        ("", 0, ""),  # empty stays empty, even with no budget
        ("", 5, ""),
        ("abcd", 1, "abcd"),  # exactly 4*T bytes: unchanged
        ("abcde", 1, "ab…1 tokens truncated…de"),  # one byte over still costs a token
        ("a", 0, "…1 tokens truncated…"),
        # "é" is 2 bytes: the prefix may not end inside it, nor the suffix start inside it
        ("aéééééb", 1, "a…2 tokens truncated…b"),
        # a 4-byte character wider than half the budget is dropped from both sides
        ("😀😀😀", 1, "…2 tokens truncated…"),
        ("\ufeff", 0, "…1 tokens truncated…"),
        # no spaces or newlines are added around the marker
        ("line one\nline two\n", 2, "line…3 tokens truncated…two\n"),
    ],
)
def test_approx_edge_cases(text, budget, expected):
    assert truncate_approx(text, budget) == expected


def test_approx_rejects_a_negative_budget():
    with pytest.raises(ValueError):
        truncate_approx("abc", -1)


@given(TEXT, st.integers(min_value=0, max_value=120))
def test_approx_matches_the_reference_rule(text, budget):
    assert truncate_approx(text, budget) == reference_approx(text, budget)


@given(TEXT, st.integers(min_value=1, max_value=120))
def test_approx_keeps_at_most_the_budget_of_original_bytes(text, budget):
    result = truncate_approx(text, budget)
    if result != text:
        # The text may hold "…" itself: split at the marker whose count Codex's rule gives.
        size = len(text.encode())
        marker = f"…{-(-(size - 4 * budget) // 4)} tokens truncated…"
        splits = [(result[:i], result[i + len(marker):]) for i in range(len(result))
                  if result.startswith(marker, i)]
        assert any(
            text.startswith(prefix) and text.endswith(suffix)
            and len(prefix.encode()) + len(suffix.encode()) <= 4 * budget
            for prefix, suffix in splits
        ), result


@pytest.mark.parametrize(
    ("text", "tokens"), [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("é", 1), ("😀😀", 2)]
)
def test_approx_token_count(text, tokens):
    assert approx_token_count(text) == tokens
    assert ApproxTokenizer().count(text) == tokens


# -- the budgeted head cut ------------------------------------------------------------------


@pytest.fixture(scope="module")
def o200k():
    return get_tokenizer("o200k_base")


class CountingTokenizer:
    """Wraps a tokenizer and counts how many bytes of text it was asked to encode."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.encoded_bytes = 0

    def count(self, text):
        self.encoded_bytes += len(text.encode())
        return self.inner.count(text)

    def boundaries(self, text):
        self.encoded_bytes += len(text.encode())
        return self.inner.boundaries(text)


def _summary(sections: int, lines: int = 8) -> str:
    parts = ["v1\n"]
    for number in range(sections):
        parts.append(f"\n## Section {number}\n\n")
        for line in range(lines):
            parts.append(f"- fact {number}.{line}: the build uses `make test-{line}` on Linux\n")
    return "".join(parts)


def test_text_that_fits_is_unchanged_and_counted_exactly(o200k):
    text = _summary(2)
    result = truncate_to_budget(text, 2_500, o200k)
    assert result.text == text
    assert not result.truncated
    assert result.tokens == o200k.count(text)


def test_empty_text(o200k):
    result = truncate_to_budget("", 10, o200k)
    assert (result.text, result.tokens, result.truncated) == ("", 0, False)


def test_cut_prefers_a_heading_and_says_how_much_was_left_out(o200k):
    text = _summary(5)  # small enough to be encoded whole (the first prefix), over the budget
    assert len(text.encode()) <= 5 * 500 + 64 and o200k.count(text) > 500
    result = truncate_to_budget(text, 500, o200k)
    head, marker = result.text.rsplit("\n", 1)[0] + "\n", result.text.rsplit("\n", 1)[1]
    assert result.truncated and result.cut == "heading"
    assert text.startswith(head)
    assert text[len(head) :].startswith("## Section")  # the cut falls just before a heading
    assert marker == f"…{result.omitted_tokens} tokens truncated…"
    assert result.omitted_exact  # the whole (small) text was encoded: the count is exact
    assert result.omitted_tokens == o200k.count(text) - o200k.count(head)
    assert 0.85 * 500 <= result.tokens <= 500
    assert result.tokens == o200k.count(result.text)


def test_cut_falls_on_a_line_when_no_heading_is_near(o200k):
    text = "".join(f"line {n} of a long list without any headings at all\n" for n in range(2_000))
    result = truncate_to_budget(text, 300, o200k)
    assert result.cut == "line"
    head = result.text[: result.text.index("…")]
    assert head.endswith("\n") and text.startswith(head)
    assert result.tokens <= 300


def test_one_long_line_is_cut_between_characters(o200k):
    text = "日本語のテキスト" * 5_000  # no line breaks, multi-byte characters
    result = truncate_to_budget(text, 200, o200k)
    assert result.cut == "character"
    head = result.text[: result.text.index("…")]
    assert text.startswith(head)
    assert 0.85 * 200 <= result.tokens <= 200


def test_estimated_counts_are_marked_with_a_tilde(o200k):
    text = _summary(4_000)  # ~2 MB: only a prefix is encoded
    result = truncate_to_budget(text, 2_500, o200k)
    assert not result.omitted_exact
    assert f"…~{result.omitted_tokens} tokens truncated…" in result.text
    true_rest = o200k.count(text) - o200k.count(result.text[: result.kept_bytes])
    assert abs(result.omitted_tokens - true_rest) < 0.05 * true_rest


def test_only_a_prefix_is_encoded(o200k):
    text = _summary(2_500)  # ~1.3 MB
    counting = CountingTokenizer(o200k)
    result = truncate_to_budget(text, 2_500, counting)
    assert result.truncated
    assert counting.encoded_bytes < len(text.encode()) / 20


def test_budget_too_small_for_the_marker_gives_nothing(o200k):
    result = truncate_to_budget("word " * 1_000, 0, o200k)
    assert (result.text, result.tokens, result.truncated, result.cut) == ("", 0, True, "empty")


def test_budget_for_the_marker_alone(o200k):
    result = truncate_to_budget("word " * 1_000, 9, o200k)
    assert result.cut in ("marker", "character")
    assert result.tokens <= 9


def test_a_custom_marker_may_contain_braces(o200k):
    marker = "\n[{n} cut; see /tmp/{odd}/memory_summary.md]"
    result = truncate_to_budget(_summary(40), 300, o200k, marker=marker)
    assert result.text.endswith("cut; see /tmp/{odd}/memory_summary.md]")


def test_negative_budget_is_refused(o200k):
    with pytest.raises(ValueError):
        truncate_to_budget("abc", -1, o200k)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=80),
            st.sampled_from(["\n", "\n## Heading\n", "# Title\n", "é" * 30, "\r\n"]),
        ),
        max_size=60,
    ),
    st.integers(min_value=0, max_value=400),
)
def test_result_never_exceeds_the_budget_nor_splits_a_character(o200k, pieces, budget):
    text = "".join(pieces)
    result = truncate_to_budget(text, budget, o200k)
    assert result.tokens == o200k.count(result.text)
    assert result.tokens <= budget
    if not result.truncated:
        assert result.text == text
    elif result.cut not in ("empty", "marker"):
        head = text.encode()[: result.kept_bytes]
        assert text.startswith(head.decode("utf-8"))  # raises if a character was split
        assert result.text.startswith(head.decode("utf-8"))
        if result.cut in ("heading", "line"):
            assert head.endswith(b"\n")


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(["word ", "é", "\n", "## H\n", "the build ", "日本"]), min_size=1),
    st.integers(min_value=60, max_value=600),
)
def test_result_uses_most_of_the_budget_when_the_input_is_larger(o200k, words, budget):
    text = "".join(words) * 200
    if o200k.count(text) <= budget:
        return
    result = truncate_to_budget(text, budget, o200k)
    assert 0.85 * budget <= result.tokens <= budget


@given(TEXT, st.integers(min_value=0, max_value=60))
def test_approx_tokenizer_head_cut_stays_within_budget(text, budget):
    tokenizer = ApproxTokenizer()
    result = truncate_to_budget(text, budget, tokenizer)
    assert result.tokens == tokenizer.count(result.text) <= budget
