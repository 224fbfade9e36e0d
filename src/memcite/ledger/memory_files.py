"""The files of a memory folder as citations see them: where a cited path leads
(never outside the folder), a file's lines by Rust's rule, and the hash of a range.

One module for the ledger (which hashes the cited lines when a reply is recorded)
and the stats (which check them later), so that both agree by construction.
Light on purpose: ``memcite stats`` imports it on its cold path.
"""

from __future__ import annotations

import hashlib
import os

# What ``locate`` says of a cited path.
INSIDE = "ok"
OUTSIDE = "outside_root"
MISSING = "missing"


def byte_lines(data: bytes) -> list[bytes]:
    """Rust's ``str::lines`` on bytes: split on LF, drop one CR before it, no empty last line."""
    if not data:
        return []
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return [line[:-1] if line.endswith(b"\r") else line for line in lines]


def lines_sha256(lines: list[bytes], line_start: int, line_end: int) -> str | None:
    """SHA-256 (hex) of ``lines[line_start..line_end]`` (1-based, inclusive) joined by LF;
    None when the range is reversed, starts at 0 or runs past the end."""
    if not 1 <= line_start <= line_end <= len(lines):
        return None
    return hashlib.sha256(b"\n".join(lines[line_start - 1 : line_end])).hexdigest()


def cited_lines_sha256(data: bytes, line_start: int, line_end: int) -> str | None:
    """``lines_sha256`` of a file's bytes: the hash the ledger records for a cited range."""
    return lines_sha256(byte_lines(data), line_start, line_end)


def locate(real_root: str, path: str) -> tuple[str, str | None]:
    """Where cited ``path`` leads in the memory folder whose real path is ``real_root``.

    ``("ok", real path)`` for a regular file inside the folder; ``("outside_root", None)``
    for an empty or absolute path, a drive, any ``..`` component, or a symlink leading
    out; ``("missing", None)`` otherwise. Only names are looked at, never contents.
    """
    if not path or path.startswith(("/", "\\")) or os.path.isabs(path):
        return OUTSIDE, None
    parts = path.replace("\\", "/").split("/")
    if ".." in parts or (len(parts[0]) >= 2 and parts[0][1] == ":"):
        return OUTSIDE, None
    real = os.path.realpath(os.path.join(real_root, *[p for p in parts if p not in ("", ".")]))
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        return OUTSIDE, None  # a symlink leading out
    if real == real_root or not os.path.isfile(real):
        return MISSING, None
    return INSIDE, real


def resolve_cited_path(root: str | os.PathLike, path: str) -> str | None:
    """The real path of a regular file ``path`` inside the memory folder ``root``, or None.

    Nothing outside ``root`` is ever opened (see ``locate``).
    """
    return locate(os.path.realpath(os.fspath(root)), path)[1]


# A reply recorded this long after it was made had its cited ranges hashed from the memory
# folder's git history at the reply's time (memcite.ledger.memory_history), not from now.
LATE_HASH_SECONDS = 3600
