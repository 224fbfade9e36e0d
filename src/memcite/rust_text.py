"""Text rules as Rust's standard library applies them, which Codex relies on.

Python's ``str.strip()`` disagrees with Rust's ``str::trim``, and Codex's
behaviour follows Rust's. (Rust's ``str::lines`` splits on "\n" only; the
grammar's line terminals do the same.)
"""

from __future__ import annotations

# Unicode White_Space, exactly the characters Rust's str::trim removes.
# (Python's str.strip() also removes U+001C-U+001F; neither removes U+200B or U+FEFF.)
RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def rust_trim(text: str) -> str:
    """``str::trim``: remove Unicode White_Space from both ends."""
    return text.strip(RUST_WHITESPACE)


def rust_trim_end(text: str) -> str:
    """``str::trim_end``."""
    return text.rstrip(RUST_WHITESPACE)
