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

# A patch header: ``*** Update File: <path>``, the path without the spaces and tabs around it.
# (Written ``:[ \t]*(.+?)[ \t]*$``, the pattern took time quadratic in a run of spaces inside
# the path; the rest of the line is taken whole and stripped instead, with the same result.)
_PATCH_HEADER = re.compile(r"^\*\*\* (?:Update File|Add File|Delete File|Move to):(.*)$", re.MULTILINE)
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
            found.extend(path for match in _PATCH_HEADER.finditer(text)
                         if (path := _patch_path(match.group(1))))
        if not _looks_like_memory_path(text):
            continue
        if "\n" not in text and len(text) <= 4096:
            found.append(text.strip())
        found.extend(word for word in _WORD.findall(text) if _looks_like_memory_path(word))
    return list(dict.fromkeys(found))[:MAX_CANDIDATES]


def _patch_path(rest: str) -> str:
    """What ``:[ \t]*(.+?)[ \t]*$`` takes of the rest of a patch header: the text without the
    spaces and tabs around it, or its last character when it is only spaces and tabs ("" when
    there is nothing)."""
    return rest.strip(" \t") or rest[-1:]


def _path_max() -> int | None:
    """The length (in bytes) from which no path can be looked up, or None when unknown."""
    try:
        limit = os.pathconf("/", "PC_PATH_MAX")
    except (AttributeError, OSError, ValueError):
        return None
    return limit if 0 < limit <= 65536 else None


_PATH_MAX = _path_max()


def _realpath(path: str) -> str:
    """``os.path.realpath`` of an absolute, normalized ``path``, in time linear in its length.

    ``os.path.realpath`` looks up one component at a time, building the path so far anew each
    time: quadratic in the number of components. Once the path so far is ``PATH_MAX`` bytes
    long, every lookup fails (the name is too long) and it only appends the components left,
    so they are appended here in one go; below that, it resolves a part at a time.
    """
    if _PATH_MAX is None or os.sep != "/" or len(os.fsencode(path)) < _PATH_MAX:
        return os.path.realpath(path)
    names = [name for name in path.split("/") if name]
    sizes = [len(os.fsencode(name)) for name in names]
    resolved = "/"
    index = 0
    while index < len(names):
        size = len(os.fsencode(resolved))
        end = index
        while end < len(names) and size + 1 + sizes[end] < _PATH_MAX:
            size += 1 + sizes[end]
            end += 1
        if end == index:  # the next name makes PATH_MAX bytes or more: nothing more resolves
            return os.path.join(resolved, *names[index:])
        resolved = os.path.realpath(os.path.join(resolved, *names[index:end]))
        index = end
    return resolved


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
        real = _realpath(path)
        name = os.path.basename(real)
        adhoc = f"{os.sep}extensions{os.sep}ad_hoc{os.sep}notes{os.sep}" in real
        if not (name.endswith(".md") or adhoc):
            continue
        if name in MEMORY_NAMES or any(_inside(real, root) for root in real_roots):
            if real not in touched:
                touched.append(real)
    return touched


__all__ = ["MEMORY_NAMES", "candidate_paths", "payload_strings", "touched_memory_files"]
