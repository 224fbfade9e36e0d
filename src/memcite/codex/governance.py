"""Memory governance directives for Codex: the ``AGENTS.md`` blocks ``setup codex --governance`` writes.

Two blocks, their text kept as data in ``templates/``:

- ``memory-governance``, for the ``AGENTS.md`` at the root of Codex's memory folder
  (``memories/``, or ``memories_v2/`` under memory store v2). Codex's consolidation
  agent runs with that folder as its working directory, and Codex makes the folder a
  git repository: Codex's project-doc discovery walks from the working directory up
  to the nearest folder with a ``.git``, so that ``AGENTS.md`` is the one it loads
  into the agent's instructions. The block tells the agent to keep tiers
  (``[CORE]``/``[IMP]``/``[SEC]``/``[IRR]``), at most 80 ``[CORE]`` entries,
  ``superseded_by:`` lines and provenance (``Source``, ``Evidence``, ``Confidence``)
  under ``[CORE]`` and ``[IMP]`` entries.
- ``pre-retrieval``, for the project's ``AGENTS.md`` (the root of the git work tree):
  look up MEMORY.md before modifying a file.

A block is framed by two HTML comments; the opening one carries the SHA-256 of the
text between them, so memcite can tell its own block from one a person has edited
since: an edited block is never rewritten nor removed. The block is appended after
one newline (none in an empty file), so taking it out gives back the file's bytes.
Pure functions of the text: nothing here opens a file.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources

MEMORY_GOVERNANCE = "memory-governance"
PRE_RETRIEVAL = "pre-retrieval"
KINDS = (MEMORY_GOVERNANCE, PRE_RETRIEVAL)
AGENTS_FILE = "AGENTS.md"
_TEMPLATES = {MEMORY_GOVERNANCE: "memory_governance.md", PRE_RETRIEVAL: "pre_retrieval.md"}
_OPEN = re.compile(r"^<!-- memcite:(?P<kind>[a-z-]+) sha256=(?P<digest>[0-9a-f]{16})\b[^\n]*-->\n",
                   re.MULTILINE)


def directives(kind: str) -> str:
    """The text of one kind of directives, as shipped with memcite."""
    return resources.files("memcite.codex").joinpath("templates", _TEMPLATES[kind]).read_text(
        encoding="utf-8")


def _digest(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def _close(kind: str) -> str:
    return f"<!-- /memcite:{kind} -->\n"


def block(kind: str, body: str | None = None) -> str:
    """The block setup writes for ``kind`` (``body``: its text, default the shipped one)."""
    body = directives(kind) if body is None else body
    return (f"<!-- memcite:{kind} sha256={_digest(body)} written by `memcite setup codex "
            f"--governance`; `--remove` takes it out, and an edited block is left alone -->\n"
            f"{body}{_close(kind)}")


@dataclass(frozen=True)
class Found:
    """One memcite block of ``kind`` in a file: where, and whether it is as memcite wrote it."""

    start: int
    end: int
    body: str
    intact: bool  # the text matches the digest its opening line carries


def find_block(text: str, kind: str) -> Found | None:
    """The first block of ``kind`` in ``text`` (an opening without its closing: not intact)."""
    for match in _OPEN.finditer(text):
        if match.group("kind") != kind:
            continue
        close = _close(kind)
        position = text.find("\n" + close, match.end() - 1)
        if position < 0:
            return Found(match.start(), match.end(), "", False)
        body = text[match.end():position + 1]
        end = position + 1 + len(close)
        return Found(match.start(), end, body, _digest(body) == match.group("digest"))
    return None


@dataclass(frozen=True)
class Edit:
    """The file's text after the edit (``None``: no file), and a note when something is left."""

    after: str | None
    note: str | None = None


def add_block(text: str | None, kind: str, path: str) -> Edit:
    """``text`` with the current block of ``kind``: appended, brought up to date when memcite's
    own older block is there, left as is when a person edited it."""
    wanted = block(kind)
    if text is None or text == "":
        return Edit(wanted)
    found = find_block(text, kind)
    if found is None:
        return Edit(text + "\n" + wanted)
    if not found.intact:
        return Edit(text, f"{path}: the {kind} directives were edited since memcite wrote "
                          "them; left as is")
    if text[found.start:found.end] == wanted:
        return Edit(text)
    return Edit(text[:found.start] + wanted + text[found.end:],
                f"{path}: the {kind} directives are brought up to date with this memcite's")


def remove_block(text: str | None, kind: str, path: str) -> Edit:
    """``text`` without memcite's block of ``kind`` and the newline put before it; an edited
    block is left. A file that held only the block goes (``after`` None)."""
    if text is None:
        return Edit(None)
    found = find_block(text, kind)
    if found is None:
        return Edit(text)
    if not found.intact:
        return Edit(text, f"{path}: the {kind} directives were edited since memcite wrote "
                          "them; left as is")
    start = found.start
    if start >= 1 and text[start - 1] == "\n":
        start -= 1  # the newline setup put before its block
    after = text[:start] + text[found.end:]
    return Edit(after or None)


__all__ = ["AGENTS_FILE", "KINDS", "MEMORY_GOVERNANCE", "PRE_RETRIEVAL", "Edit", "Found",
           "add_block", "block", "directives", "find_block", "remove_block"]
