"""Cutting text to a token budget: Codex's 4-bytes rule, and memcite's head cut at section boundaries.

Pure functions of their inputs. ``truncate_approx`` reproduces, byte for byte,
what Codex does to ``memory_summary.md`` (docs/read-path.md, "What Codex
does", step 3). ``truncate_to_budget`` keeps the head of the text and cuts it
at a markdown heading when that costs little, else at a line boundary, else at
a character boundary; it encodes only a prefix of the text (extended while it
is too short), never the whole of a large file.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Protocol

APPROX_BYTES_PER_TOKEN = 4
DEFAULT_MARKER = "…{n} tokens truncated…"

# A cut at a heading is taken when the result still fills this share of the
# budget; a cut at a line boundary when it fills LINE_CUT_SHARE; otherwise the
# text is cut at the last character that fits.
HEADING_CUT_SHARE = 0.90
LINE_CUT_SHARE = 0.86

_HEADING_LINE = re.compile(rb"\n(?=#{1,6}(?:[ \t]|\r?\n|$))")


class Tokenizer(Protocol):
    """What truncation needs from a tokenizer (see ``memcite.readpath.tokens``)."""

    name: str

    def count(self, text: str) -> int:
        """How many tokens ``text`` encodes to."""

    def boundaries(self, text: str) -> list[int]:
        """The UTF-8 byte offsets at which the tokens of ``text`` end, in order."""


def approx_token_count(text: str) -> int:
    """Codex's estimate: one token per 4 bytes of UTF-8, rounded up."""
    return -(-len(text.encode("utf-8")) // APPROX_BYTES_PER_TOKEN)


def truncate_approx(text: str, budget: int) -> str:
    """Cut the middle of ``text`` to ``budget`` 4-byte tokens exactly as Codex does."""
    if budget < 0:
        raise ValueError(f"budget must be >= 0, not {budget}")
    if not text:
        return text
    data = text.encode("utf-8")
    total = len(data)
    max_bytes = APPROX_BYTES_PER_TOKEN * budget
    if budget > 0 and total <= max_bytes:
        return text
    if max_bytes == 0:
        return DEFAULT_MARKER.replace("{n}", str(-(-total // APPROX_BYTES_PER_TOKEN)))
    left = max_bytes // 2
    right = max_bytes - left
    prefix_end = _char_start_at_or_before(data, left)
    suffix_start = max(_char_start_at_or_after(data, total - right), prefix_end)
    removed_tokens = -(-(total - max_bytes) // APPROX_BYTES_PER_TOKEN)
    return (
        data[:prefix_end].decode("utf-8")
        + DEFAULT_MARKER.replace("{n}", str(removed_tokens))
        + data[suffix_start:].decode("utf-8")
    )


@dataclass(frozen=True, slots=True)
class Truncation:
    """The head of a text cut to a budget, and what was left out."""

    text: str  # the result, marker included
    tokens: int  # tokens of ``text``, counted by the tokenizer
    truncated: bool
    kept_bytes: int = 0  # UTF-8 bytes of the input kept (its head)
    omitted_bytes: int = 0
    omitted_tokens: int = 0  # exact when ``omitted_exact``, else estimated from the prefix
    omitted_exact: bool = True
    cut: str = "none"  # none | heading | line | character | marker (nothing kept) | empty

    def to_dict(self) -> dict:
        return {
            "tokens": self.tokens,
            "truncated": self.truncated,
            "kept_bytes": self.kept_bytes,
            "omitted_bytes": self.omitted_bytes,
            "omitted_tokens": self.omitted_tokens,
            "omitted_exact": self.omitted_exact,
            "cut": self.cut,
        }


def format_count(n: int, exact: bool) -> str:
    """``1234`` when exact, ``~1234`` when estimated."""
    return str(n) if exact else f"~{n}"


def truncate_to_budget(
    text: str, budget: int, tokenizer: Tokenizer, *, marker: str = DEFAULT_MARKER
) -> Truncation:
    """Keep the head of ``text`` within ``budget`` tokens, marker included, encoding only a prefix.

    ``marker`` is text in which ``{n}`` stands for the number of tokens left out
    (``~N`` when estimated from the encoded prefix). When even the marker does
    not fit, the result is empty.
    """
    if budget < 0:
        raise ValueError(f"budget must be >= 0, not {budget}")
    if not text:
        return Truncation("", 0, False)
    data = text.encode("utf-8")
    total = len(data)

    # Every token is at least one byte, so a text of at most ``budget`` bytes fits.
    # Start from a prefix of about 5 bytes per token (English prose and code take 3 to 4.5),
    # and extend it in proportion to what it held while it holds too few tokens.
    window = total if total <= budget else min(total, 5 * budget + 64)
    while True:
        window = _char_start_at_or_before(data, window) if window < total else total
        offsets = tokenizer.boundaries(data[:window].decode("utf-8"))
        if window == total:
            if len(offsets) <= budget:
                return Truncation(text, len(offsets), False, kept_bytes=total)
            break
        if len(offsets) > budget:
            break
        wanted = window * (budget + 1) * 1.25 / max(len(offsets), 1)
        window = min(total, max(int(wanted), 2 * window))

    whole = window == total
    rate = len(offsets) / window if window else 1.0

    def omitted_for(cut: int) -> tuple[int, bool]:
        kept_tokens = bisect_right(offsets, cut)
        if whole:
            return len(offsets) - kept_tokens, True
        # the prefix window's tokens, plus the rest of the text at the prefix's rate
        estimated_total = len(offsets) + round((total - window) * rate)
        return estimated_total - kept_tokens, False

    widest_marker = marker.replace("{n}", format_count(max(total, 1), whole))
    reserve = tokenizer.count(widest_marker)
    limit = budget - reserve
    if limit <= 0:
        n, exact = omitted_for(0)
        alone = marker.replace("{n}", format_count(n, exact))
        alone_tokens = tokenizer.count(alone)
        if alone_tokens <= budget:
            return Truncation(alone, alone_tokens, True, 0, total, n, exact, "marker")
        return Truncation("", 0, True, 0, total, n, exact, "empty")

    attempt_limit = limit
    for _ in range(8):
        end = offsets[attempt_limit - 1] if attempt_limit <= len(offsets) else window
        cut, kind = _choose_cut(data, end, offsets, budget, reserve)
        n, exact = omitted_for(cut)
        result = data[:cut].decode("utf-8") + marker.replace("{n}", format_count(n, exact))
        used = tokenizer.count(result)
        if used <= budget:
            return Truncation(result, used, True, cut, total - cut, n, exact, kind)
        attempt_limit -= max(used - budget, 1)
        if attempt_limit <= 0:
            break
    n, exact = omitted_for(0)
    alone = marker.replace("{n}", format_count(n, exact))
    alone_tokens = tokenizer.count(alone)
    if alone_tokens <= budget:
        return Truncation(alone, alone_tokens, True, 0, total, n, exact, "marker")
    return Truncation("", 0, True, 0, total, n, exact, "empty")


def _choose_cut(
    data: bytes, end: int, offsets: list[int], budget: int, reserve: int
) -> tuple[int, str]:
    """Where to cut a head of at most ``end`` bytes: a heading, a line end, or a character."""

    def smallest_cut_filling(share: float) -> int:
        needed = math.ceil(share * budget) - reserve  # whole tokens the head must keep
        if needed <= 0:
            return 0
        return offsets[needed - 1] if needed <= len(offsets) else len(data) + 1

    line_cut = data.rfind(b"\n", 0, end) + 1
    if line_cut > 0:
        heading_cut = _last_heading_start(data, smallest_cut_filling(HEADING_CUT_SHARE), line_cut)
        if heading_cut > 0:
            return heading_cut, "heading"
        if line_cut >= smallest_cut_filling(LINE_CUT_SHARE):
            return line_cut, "line"
    return _char_start_at_or_before(data, end), "character"


def _last_heading_start(data: bytes, lower: int, upper: int) -> int:
    """Start of the last markdown heading line in ``[lower, upper]`` (0 when none)."""
    search_end = upper + 1
    floor = max(lower - 1, 0)
    while True:
        newline = data.rfind(b"\n#", floor, search_end)
        if newline < 0:
            return 0
        if _HEADING_LINE.match(data, newline):
            return newline + 1
        search_end = newline + 1


def _char_start_at_or_before(data: bytes, offset: int) -> int:
    """The largest character boundary <= ``offset``."""
    offset = min(offset, len(data))
    while 0 < offset < len(data) and data[offset] & 0xC0 == 0x80:
        offset -= 1
    return offset


def _char_start_at_or_after(data: bytes, offset: int) -> int:
    """The smallest character boundary >= ``offset``."""
    while offset < len(data) and data[offset] & 0xC0 == 0x80:
        offset += 1
    return offset


def truncate_text(text: str, budget: int, tokenizer_name: str, *, bpe_file: str | None = None,
                  tiktoken_cache_dir: str | None = None) -> tuple[str, bool]:
    """``memcite truncate``'s work: ``text`` cut to ``budget`` tokens of ``tokenizer_name``
    (``approx``: Codex's rule, the middle cut; a real tokenizer: the head kept, the marker
    inside the budget). Returns the text and whether a budget too small for even the marker
    left nothing."""
    if tokenizer_name == "approx":
        return truncate_approx(text, budget), False
    from memcite.readpath.tokens import get_tokenizer

    loaded = get_tokenizer(tokenizer_name, bpe_file=bpe_file, tiktoken_cache_dir=tiktoken_cache_dir)
    cut = truncate_to_budget(text, budget, loaded)
    return cut.text, cut.truncated and not cut.text
