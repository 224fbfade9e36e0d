"""Supersession chains: which entry a ``superseded_by:`` value names, and the live head of a chain.

Shared by ``memcite lint`` (dangling references, forks, loops) and usage per entry
(the current decision of each chain). Pure: works on entries already read.
"""

from __future__ import annotations

from collections.abc import Sequence

from memcite.retention.entries import Entry, normalize_name
from memcite.value_classes import FrozenSlots


class Located(FrozenSlots):
    """An entry and the file it is in."""

    __slots__ = ("path", "entry")
    _fields = _compared = __slots__

    def __init__(self, path: str, entry: Entry) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "entry", entry)


class EntryIndex:
    """Entries of several files, found by id, title or decision (same file first)."""

    def __init__(self, files: Sequence[tuple[str, Sequence[Entry]]]) -> None:
        self.files = files
        self._by_id: dict[str, list[Located]] = {}
        self._by_name: dict[str, list[Located]] = {}
        for path, entries in files:
            for entry in entries:
                located = Located(path, entry)
                if entry.entry_id:
                    self._by_id.setdefault(entry.entry_id, []).append(located)
                names = {normalize_name(entry.title)}
                if entry.decision:
                    names.add(normalize_name(entry.decision))
                for name in names - {""}:
                    self._by_name.setdefault(name, []).append(located)

    def resolve(self, value: str, path: str) -> Located | None:
        """The entry a ``superseded_by:`` value names: by id, else by title or decision."""
        text = value.strip().strip("\"'`").strip()
        candidates = self._by_id.get(text.lstrip("#")) or self._by_name.get(normalize_name(text)) or []
        for located in candidates:
            if located.path == path:
                return located
        return candidates[0] if candidates else None


def entry_key(located: Located) -> tuple[str, int]:
    """What tells entries apart across files: the file and the first line."""
    return located.path, located.entry.line_start


def superseding(index: EntryIndex, located: Located) -> list[Located]:
    """The entries ``located``'s ``superseded_by:`` lines resolve to, each once, in order."""
    found = []
    for value in located.entry.superseded_by:
        target = index.resolve(value, located.path)
        if target is not None and entry_key(target) not in {entry_key(t) for t in found}:
            found.append(target)
    return found


def live_head(index: EntryIndex, located: Located) -> Located | None:
    """The entry a chain starting at ``located`` ends at (one with no resolvable ``superseded_by:``),
    following the first reference at each step; None when the chain loops."""
    seen = {entry_key(located)}
    current = located
    while True:
        targets = superseding(index, current)
        if not targets:
            return current
        current = targets[0]
        if entry_key(current) in seen:
            return None
        seen.add(entry_key(current))


__all__ = ["EntryIndex", "Located", "entry_key", "live_head", "superseding"]
