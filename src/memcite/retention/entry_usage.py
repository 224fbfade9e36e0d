"""Usage per entry of ``MEMORY.md``: the cited line ranges attributed to the entries they cover,
and each entry's relevance.

A line number goes stale as soon as the file is edited above it, so a cited range is
followed by its content: the ledger keeps the SHA-256 of the cited lines at record
time, and when the lines at the cited numbers no longer have that hash, the range is
looked for elsewhere in the file (the nearest place with the same lines wins). A
range whose lines are nowhere any more is counted apart (``unattributed``). Pure
functions of the file's bytes, the citations and the time passed in.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence

from memcite.ledger.memory_files import byte_lines, lines_sha256, sha256
from memcite.retention.entries import IMPORTANCE, Entry, read_entries
from memcite.value_classes import FrozenSlots

DAY = 86_400
DECAY_PER_DAY = 0.95


_set = object.__setattr__  # how the frozen values below set their fields in __init__


class CitedRange(FrozenSlots):
    """One citation of ``MEMORY.md``: the lines as cited, when, and their hash at that time."""

    __slots__ = ("line_start", "line_end", "cited_at", "lines_sha256", "count")
    _fields = _compared = __slots__

    def __init__(self, line_start: int, line_end: int, cited_at: int,
                 lines_sha256: str | None = None, count: int = 1) -> None:
        _set(self, "line_start", line_start)
        _set(self, "line_end", line_end)
        _set(self, "cited_at", cited_at)  # Unix seconds
        # None: no hash was recorded, the numbers are taken as they are
        _set(self, "lines_sha256", lines_sha256)
        # citations of this same range (and hash), ``cited_at`` the latest of them
        _set(self, "count", count)


class EntryUsage(FrozenSlots):
    """How much one entry was used, and how relevant it is now."""

    __slots__ = ("entry", "citations", "last_cited", "relevance")
    _fields = _compared = __slots__

    def __init__(self, entry: Entry, citations: int, last_cited: int | None,
                 relevance: float) -> None:
        _set(self, "entry", entry)
        _set(self, "citations", citations)
        _set(self, "last_cited", last_cited)
        _set(self, "relevance", relevance)

    @property
    def tier(self) -> str | None:
        return self.entry.tier

    def to_dict(self) -> dict:
        return {"line_start": self.entry.line_start, "line_end": self.entry.line_end, "title": self.entry.title,
                "id": self.entry.entry_id, "tier": self.tier, "citations": self.citations,
                "last_cited": self.last_cited, "relevance": round(self.relevance, 6)}


class Attribution(FrozenSlots):
    """Every entry with its usage (file order), and the citations no entry could take."""

    __slots__ = ("entries", "moved", "unattributed")
    _fields = _compared = __slots__

    def __init__(self, entries: tuple[EntryUsage, ...], moved: int, unattributed: int) -> None:
        _set(self, "entries", entries)
        _set(self, "moved", moved)  # citations found at other line numbers than cited
        _set(self, "unattributed", unattributed)  # citations whose lines are gone, or cover no entry


def relevance(tier: str | None, last_cited: int | None, created_at: int | None, now: int) -> float:
    """importance(tier) x 0.95^(days since last cited, else since created); no time known: no decay."""
    since = last_cited if last_cited is not None else created_at
    days = max(0, now - since) / DAY if since is not None else 0.0
    return IMPORTANCE[tier] * DECAY_PER_DAY ** days


class _Windows:
    """Where each run of ``length`` lines starts, by hash, built once per length asked for."""

    def __init__(self, lines: Sequence[bytes]) -> None:
        self.lines = lines
        self._by_length: dict[int, dict[str, list[int]]] = {}

    def starts(self, length: int, digest: str) -> list[int]:
        if length not in self._by_length:
            table: dict[str, list[int]] = {}
            for start in range(1, len(self.lines) - length + 2):
                block = b"\n".join(self.lines[start - 1 : start - 1 + length])
                table.setdefault(sha256(block).hexdigest(), []).append(start)
            self._by_length[length] = table
        return self._by_length[length].get(digest, [])


def locate_range(lines: Sequence[bytes], cited: CitedRange, windows: _Windows | None = None
                 ) -> tuple[int, int] | None:
    """Where the cited lines are now (1-based, inclusive), or None when they are nowhere."""
    start, end = cited.line_start, cited.line_end
    if not 1 <= start <= end:
        return None
    if cited.lines_sha256 is None:
        return (start, end) if end <= len(lines) else None
    if lines_sha256(list(lines), start, end) == cited.lines_sha256:
        return start, end
    length = end - start + 1
    if length > len(lines):
        return None
    candidates = (windows or _Windows(lines)).starts(length, cited.lines_sha256)
    if not candidates:
        return None
    best = min(candidates, key=lambda s: (abs(s - start), s))
    return best, best + length - 1


def attribute_citations(data: bytes, citations: Iterable[CitedRange], *, now: int,
                        created_at: int | None = None) -> Attribution:
    """Attribute each cited range of a ``MEMORY.md`` (its bytes ``data``) to the entries it covers.

    ``created_at`` stands for when entries never cited were written (the file's
    age, say); ``now`` is the time relevance is judged at.
    """
    lines = byte_lines(data)
    entries = read_entries(data.decode("utf-8", errors="replace"))
    starts = [entry.line_start for entry in entries]
    windows = _Windows(lines)
    counts = [0] * len(entries)
    last: list[int | None] = [None] * len(entries)
    moved = unattributed = 0
    for cited in citations:
        found = locate_range(lines, cited, windows)
        if found is None:
            unattributed += cited.count
            continue
        if found != (cited.line_start, cited.line_end):
            moved += cited.count
        first, final = found
        index = max(0, bisect.bisect_right(starts, first) - 1)
        covered = False
        while index < len(entries) and entries[index].line_start <= final:
            if entries[index].line_end >= first:
                covered = True
                counts[index] += cited.count
                if last[index] is None or cited.cited_at > last[index]:
                    last[index] = cited.cited_at
            index += 1
        if not covered:
            unattributed += cited.count
    usage = tuple(
        EntryUsage(entry, counts[i], last[i], relevance(entry.tier, last[i], created_at, now))
        for i, entry in enumerate(entries)
    )
    return Attribution(usage, moved, unattributed)


# A route of memory store v2's summary names the rollout summary it leads to.
_ROUTE_FILE = re.compile(r"(?<![\w./-])rollout_summaries/([^\s:;,()`'\"<>\[\]]+\.md)")


def attribute_routes(data: bytes, citations: Iterable[tuple[str, CitedRange]], *, now: int,
                     created_at: int | None = None) -> Attribution:
    """Attribute citations of rollout summaries to the entries of memory store v2's summary
    (its bytes ``data``) that route to them.

    v2 has no ``MEMORY.md``, and its read path tells the model to cite rollout summaries,
    never ``memory_summary.md``: the summary's entries are routes (``- rollout_summaries/
    <file> — …; thread_id=…`` under project and date headings), and a citation of any lines
    of ``<file>`` (``citations``: ``(file name, range)``) is a use of each route naming it.
    """
    entries = read_entries(data.decode("utf-8", errors="replace"))
    lines = data.decode("utf-8", errors="replace").split("\n")
    routes: dict[str, list[int]] = {}
    for index, entry in enumerate(entries):
        head = lines[entry.line_start - 1] if entry.line_start - 1 < len(lines) else ""
        for name in dict.fromkeys(_ROUTE_FILE.findall(head)):
            routes.setdefault(name, []).append(index)
    counts = [0] * len(entries)
    last: list[int | None] = [None] * len(entries)
    unattributed = 0
    for name, cited in citations:
        taken = routes.get(name)
        if not taken:
            unattributed += cited.count
            continue
        for index in taken:
            counts[index] += cited.count
            if last[index] is None or cited.cited_at > last[index]:
                last[index] = cited.cited_at
    usage = tuple(
        EntryUsage(entry, counts[i], last[i], relevance(entry.tier, last[i], created_at, now))
        for i, entry in enumerate(entries)
    )
    return Attribution(usage, 0, unattributed)


__all__ = [
    "Attribution",
    "CitedRange",
    "EntryUsage",
    "attribute_citations",
    "attribute_routes",
    "locate_range",
    "relevance",
]
