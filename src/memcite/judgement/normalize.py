"""Text as a judge reads it: compatibility forms folded and invisible characters removed.

A line that hides a word behind a zero-width space, a bidi control or fullwidth letters
reads the same to the model as the plain word, so every rule judges the folded text. The
folding is for judging only: what is shown or stored stays as it was written.
"""

from __future__ import annotations

import unicodedata

# Zero-width and joiner characters, the word joiner, the BOM, the soft hyphen, and the
# bidi embedding, override and isolate controls: none is visible, all can split a word.
INVISIBLE = frozenset(
    "\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_DROP = {ord(ch): None for ch in INVISIBLE}


def has_invisible(text: str) -> bool:
    """Whether ``text`` holds a character that :func:`for_judging` removes as invisible."""
    return not text.isascii() and not INVISIBLE.isdisjoint(text)


def for_judging(text: str) -> str:
    """``text`` folded by NFKC with every invisible character removed (lines are kept)."""
    if text.isascii():
        return text
    if INVISIBLE.isdisjoint(text) and unicodedata.is_normalized("NFKC", text):
        return text  # the common case of non-ASCII text, checked without building a copy
    return unicodedata.normalize("NFKC", text.translate(_DROP)).translate(_DROP)
