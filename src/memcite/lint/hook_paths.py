"""Which memory files a Codex tool call touched, read from a PostToolUse hook payload.

``tool_input`` differs from tool to tool (a patch, a shell command, a ``path``
field, ...), so the payload is treated as opaque JSON: every string in it is
searched for patch headers (``*** Update File: <path>``) and for words that look
like paths of memory files. Pure: nothing is opened; paths are only compared.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence

_PATCH_HEADER = re.compile(r"^\*\*\* (?:Update File|Add File|Delete File|Move to):[ \t]*(.+?)[ \t]*$",
                           re.MULTILINE)
_WORD = re.compile(r"[^\s'\"`;|&<>(){}]+")
MEMORY_NAMES = ("MEMORY.md", "memory_summary.md")
_MARKERS = ("MEMORY.md", "memory_summary.md", "memories", "memory", "rollout_summaries", "ad_hoc")
MAX_STRINGS = 10_000
MAX_CANDIDATES = 1_000


def payload_strings(payload: object, limit: int = MAX_STRINGS) -> Iterator[str]:
    """Every string value in a JSON value, depth first, at most ``limit`` of them (no recursion)."""
    stack = [payload]
    count = 0
    while stack and count < limit:
        value = stack.pop()
        if isinstance(value, str):
            count += 1
            yield value
        elif isinstance(value, dict):
            stack.extend(reversed(list(value.values())))
        elif isinstance(value, list):
            stack.extend(reversed(value))


def _looks_like_memory_path(word: str) -> bool:
    return any(marker in word for marker in _MARKERS)


def candidate_paths(payload: object) -> list[str]:
    """Strings of the payload that may name memory files: patch headers, path-like words, whole values."""
    found: list[str] = []
    for text in payload_strings(payload):
        if len(found) >= MAX_CANDIDATES:
            break
        if "*** " in text:
            found.extend(match.group(1) for match in _PATCH_HEADER.finditer(text))
        if not _looks_like_memory_path(text):
            continue
        if "\n" not in text and len(text) <= 4096:
            found.append(text.strip())
        found.extend(word for word in _WORD.findall(text) if _looks_like_memory_path(word))
    return list(dict.fromkeys(found))[:MAX_CANDIDATES]


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def touched_memory_files(payload: object, roots: Sequence[str], cwd: str | None = None) -> list[str]:
    """The absolute paths of memory files the payload names: inside one of ``roots``, or any
    ``MEMORY.md``/``memory_summary.md``. Relative paths are taken from the payload's ``cwd``."""
    if cwd is None and isinstance(payload, dict) and isinstance(payload.get("cwd"), str):
        cwd = payload["cwd"]
    base = cwd if cwd and os.path.isabs(cwd) else os.getcwd()
    real_roots = [os.path.realpath(root) for root in roots]
    touched: list[str] = []
    for candidate in candidate_paths(payload):
        if not candidate or "\x00" in candidate:
            continue
        path = os.path.expanduser(candidate.removeprefix("file://"))
        path = os.path.normpath(path if os.path.isabs(path) else os.path.join(base, path))
        real = os.path.realpath(path)
        name = os.path.basename(real)
        adhoc = f"{os.sep}extensions{os.sep}ad_hoc{os.sep}notes{os.sep}" in real
        if not (name.endswith(".md") or adhoc):
            continue
        if name in MEMORY_NAMES or any(_inside(real, root) for root in real_roots):
            if real not in touched:
                touched.append(real)
    return touched


__all__ = ["MEMORY_NAMES", "candidate_paths", "payload_strings", "touched_memory_files"]
