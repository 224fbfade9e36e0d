"""Usage per entry of ``MEMORY.md`` and of memcite's notes: the ``entries`` part of ``memcite stats``
and what ``prune --rule tiered`` judges.

``MEMORY.md``'s entries get the citations of the log (``memcite.retention.entry_usage``
follows each cited range by its content); they count as written when the file was
last written (its mtime: Codex rewrites it at each consolidation, so an entry never
cited is not judged older than that). memcite's notes
(``<home>/memory/projects/<slug>/memory.md``) are never cited in the block (they are
outside Codex's memory folder): an entry counts from its ``Date:`` line, else from the
note's mtime. Files are read through ``MemoryRoot`` (inside their folder, regular
files, capped).
"""

from __future__ import annotations

import os
import re
import sqlite3

from memcite.ledger.memory_files import MAX_FILE_BYTES, MemoryRoot
from memcite.retention.entries import TIERS, Entry, read_entries
from memcite.retention.entry_usage import (
    Attribution,
    CitedRange,
    EntryUsage,
    attribute_citations,
    attribute_routes,
    relevance,
)
from memcite.retention.supersession import EntryIndex, Located, live_head
from memcite.untrusted import storable_or_none
from memcite.value_classes import FrozenSlots

TYPE_CHECKING = False  # ``typing`` is for type checkers only: importing it costs start-up
if TYPE_CHECKING:
    from memcite.retention.checks import MemoryFolder

MEMORY_FILE = "MEMORY.md"
SUMMARY_FILE = "memory_summary.md"  # memory store v2's entries: the summary's routes
V2_FOLDER = "memories_v2"  # memory store v2's folder (memcite.ledger.codex_home.MEMORY_STORES)


def is_v2_folder(memory_folder: str | None) -> bool:
    """Whether ``memory_folder`` is Codex's memory store v2 (no ``MEMORY.md``: its entries are
    the summary's routes to rollout summaries)."""
    return memory_folder is not None and \
        os.path.basename(os.path.normpath(memory_folder)) == V2_FOLDER
NOTES_FOLDER = "memory"  # memcite's notes, in the Codex home
NOTE_FILE = "memory.md"
MAX_NOTES = 1000  # notes read for one report


class FileEntries(FrozenSlots):
    """The entries of one memory file, with their usage."""

    __slots__ = ("path", "kind", "usage", "created_at", "moved", "unattributed", "problem")
    _fields = _compared = __slots__

    def __init__(self, path: str, kind: str, usage: tuple[EntryUsage, ...],
                 created_at: int | None, moved: int = 0, unattributed: int = 0,
                 problem: str | None = None) -> None:
        set_ = object.__setattr__
        set_(self, "path", path)  # full path
        set_(self, "kind", kind)  # codex | note
        set_(self, "usage", usage)
        set_(self, "created_at", created_at)  # when entries never cited count from (mtime)
        set_(self, "moved", moved)
        set_(self, "unattributed", unattributed)
        set_(self, "problem", problem)  # why the file was not read


def _mtime(st_stamp: tuple | None) -> int | None:
    return None if st_stamp is None else st_stamp[3] // 1_000_000_000


def _read(root: MemoryRoot, path: str) -> tuple[bytes | None, int | None, str | None]:
    """``(bytes, mtime, problem)`` of a file inside ``root``."""
    outcome, read, stamp = root.read(path, MAX_FILE_BYTES)
    if read is None:
        return None, None, None if outcome == "missing" else outcome
    if read.too_large:
        return None, _mtime(stamp), f"larger than {MAX_FILE_BYTES} bytes"
    return read.data, _mtime(stamp), None


def _already_read(folder: MemoryFolder | None, path: str
                  ) -> tuple[bytes | None, int | None, str | None] | None:
    """``_read`` of a file ``folder`` read already (the citation checks read it), else None."""
    done = folder.already_read(path) if folder is not None else None
    if done is None:
        return None
    outcome, lines, stamp = done
    if stamp is None:
        return None, None, None if outcome == "missing" else outcome
    if lines is None:
        return None, stamp[2] // 1_000_000_000, f"larger than {MAX_FILE_BYTES} bytes"
    return lines.data, stamp[2] // 1_000_000_000, None


def memory_citations(conn: sqlite3.Connection, memory_root: str | None, *, v2: bool = False
                     ) -> list:
    """The citations of ``MEMORY.md`` in the log, one per distinct range and hash, with their
    count and latest time (``memory_root``: only replies recorded against that folder).
    ``v2``: those of the rollout summaries instead, as ``(file name, range)``."""
    if v2:
        return _summary_citations(conn, memory_root)
    where, args = "e.path = ?", [MEMORY_FILE]
    if memory_root is not None:
        where += " AND r.memory_root = ?"
        args.append(storable_or_none(memory_root))
    rows = conn.execute(
        "SELECT e.line_start, e.line_end, e.lines_sha256, count(*), max(r.replied_at)"
        " FROM cited_entries e JOIN replies r ON r.id = e.reply_id"
        f" WHERE {where} GROUP BY 1, 2, 3", args).fetchall()
    return [CitedRange(start, end, at, digest, count) for start, end, digest, count, at in rows]


def _summary_citations(conn: sqlite3.Connection, memory_root: str | None
                       ) -> list[tuple[str, CitedRange]]:
    # A range of paths (not LIKE): the citations index is walked from its first such path.
    where, args = "e.path >= 'rollout_summaries/' AND e.path < 'rollout_summaries0'", []
    if memory_root is not None:
        where += " AND r.memory_root = ?"
        args.append(storable_or_none(memory_root))
    rows = conn.execute(
        "SELECT e.path, e.line_start, e.line_end, e.lines_sha256, count(*), max(r.replied_at)"
        " FROM cited_entries e JOIN replies r ON r.id = e.reply_id"
        f" WHERE {where} GROUP BY 1, 2, 3, 4", args).fetchall()
    return [(path.split("/", 1)[1], CitedRange(start, end, at, digest, count))
            for path, start, end, digest, count, at in rows if path.count("/") == 1]


def memory_entries(memory_folder: str | None, citations: list, *, now: int,
                   folder: MemoryFolder | None = None) -> FileEntries | None:
    """``MEMORY.md``'s entries with the citations attributed; None when there is no file.
    ``folder`` (on ``memory_folder``): when it read the file already, the bytes it read
    (so that the file is not opened again)."""
    if memory_folder is None:
        return None
    v2 = is_v2_folder(memory_folder)
    name = SUMMARY_FILE if v2 else MEMORY_FILE
    done = _already_read(folder, name)
    if done is None:
        with MemoryRoot(memory_folder) as root:
            done = _read(root, name)
    data, mtime, problem = done
    path = os.path.join(memory_folder, name)
    if data is None:
        return None if problem is None else FileEntries(path, "codex", (), mtime,
                                                        problem=problem)
    found: Attribution = attribute_routes(data, citations, now=now, created_at=mtime) if v2 \
        else attribute_citations(data, citations, now=now, created_at=mtime)
    return FileEntries(path, "codex", found.entries, mtime, found.moved, found.unattributed)


_DATE = re.compile(r"(\d{4})-(\d\d)-(\d\d)")


def day_seconds(text: str) -> int | None:
    """``YYYY-MM-DD`` (what follows is ignored) as Unix seconds at 00:00 UTC, None when it is no
    date. Days from the civil calendar by arithmetic: no ``calendar`` or ``datetime`` import."""
    match = _DATE.match(text.strip())
    if match is None:
        return None
    year, month, day = (int(part) for part in match.groups())
    if not (1 <= month <= 12 and 1 <= day <= _month_days(year, month)):
        return None
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return (era * 146097 + day_of_era - 719468) * 86_400


def _month_days(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def entry_date(entry: Entry) -> int | None:
    """A note entry's ``Date: YYYY-MM-DD`` line (the reader keeps it in the body) in Unix seconds."""
    for line in entry.body.split("\n"):
        if line[:5].lower() == "date:":
            return day_seconds(line[5:])
    return None


def note_entries(codex_home: str | None, *, now: int) -> list[FileEntries]:
    """The entries of memcite's notes under ``codex_home`` (no citations: notes are not cited)."""
    if codex_home is None:
        return []
    folder = os.path.join(codex_home, NOTES_FOLDER)
    try:
        slugs = sorted(os.listdir(os.path.join(folder, "projects")))[:MAX_NOTES]
    except OSError:
        return []
    found = []
    with MemoryRoot(folder) as root:
        for slug in slugs:
            inside = f"projects/{slug}/{NOTE_FILE}"
            data, mtime, problem = _read(root, inside)
            path = os.path.join(folder, "projects", slug, NOTE_FILE)
            if data is None:
                if problem is not None:
                    found.append(FileEntries(path, "note", (), mtime, problem=problem))
                continue
            usage = []
            for entry in read_entries(data.decode("utf-8", errors="replace")):
                written = entry_date(entry) or mtime
                usage.append(EntryUsage(entry, 0, None, relevance(entry.tier, None, written, now)))
            found.append(FileEntries(path, "note", tuple(usage), mtime))
    return found


def created_of(file: FileEntries, usage: EntryUsage) -> int | None:
    """When an entry counts as written: a note's ``Date:`` line, else the file's mtime."""
    if file.kind == "note":
        return entry_date(usage.entry) or file.created_at
    return file.created_at


def entry_row(file: FileEntries, usage: EntryUsage) -> dict:
    """One entry as the report lists it."""
    return {"path": file.path, "kind": file.kind, "line_start": usage.entry.line_start,
            "line_end": usage.entry.line_end, "title": usage.entry.title[:200],
            "id": usage.entry.entry_id, "tier": usage.tier, "citations": usage.citations,
            "last_cited": usage.last_cited, "created_at": created_of(file, usage),
            "relevance": round(usage.relevance, 6),
            "superseded_by": usage.entry.superseded_by[:1][0] if usage.entry.superseded_by
            else None}


def entries_report(files: list[FileEntries], *, limit: int) -> dict:
    """The ``entries`` part of ``memcite stats``: tier distribution, most and least relevant,
    never cited, live heads of supersession chains (``limit`` 0 lists everything)."""
    rows = [(f, u) for f in files for u in f.usage]
    tiers = {tier: 0 for tier in TIERS} | {"none": 0}
    for _file, usage in rows:
        tiers[usage.tier or "none"] += 1
    cut = (lambda items: items[:limit]) if limit else (lambda items: items)
    ranked = sorted(rows, key=lambda r: (-r[1].relevance, r[0].path, r[1].entry.line_start))
    least = sorted(rows, key=lambda r: (r[1].relevance, r[0].path, r[1].entry.line_start))
    never = [r for r in rows if r[1].citations == 0]
    return {
        "files": [{"path": f.path, "kind": f.kind, "entries": len(f.usage),
                   "citations": sum(u.citations for u in f.usage), "moved": f.moved,
                   "unattributed": f.unattributed, "problem": f.problem} for f in files],
        "count": len(rows),
        "tiers": tiers,
        "citations": sum(u.citations for _f, u in rows),
        "most_relevant": [entry_row(f, u) for f, u in cut(ranked)],
        "least_relevant": [entry_row(f, u) for f, u in cut(least)],
        "never_cited_count": len(never),
        "never_cited": [entry_row(f, u) for f, u in cut(never)],
        "chains": cut(chain_heads(files)),
    }


def relevance_split(files: list[FileEntries], *, limit: int) -> tuple[list[dict], list[dict]]:
    """``(most relevant, least relevant)`` of the cited entries, as the text report lists them
    (``--json`` keeps ``entries_report``'s full rankings): entries never cited have their own
    list, and no entry is in both (the least relevant are those left after the most,
    least first); ``limit`` 0 lists every cited entry as most relevant."""
    cited = sorted(((f, u) for f in files for u in f.usage if u.citations),
                   key=lambda r: (-r[1].relevance, r[0].path, r[1].entry.line_start))
    most = cited[:limit] if limit else cited
    rest = cited[len(most):]
    least = list(reversed(rest[-limit:] if limit else rest))
    return [entry_row(f, u) for f, u in most], [entry_row(f, u) for f, u in least]


def chain_heads(files: list[FileEntries]) -> list[dict]:
    """Each supersession chain once: its live head (None when it loops) and the entries it
    replaces, oldest first."""
    index = EntryIndex([(f.path, [u.entry for u in f.usage]) for f in files])
    usage_of = {(f.path, u.entry.line_start): (f, u) for f in files for u in f.usage}
    heads: dict[tuple[str, int] | None, list[Located]] = {}
    for file in files:
        for usage in file.usage:
            if not usage.entry.superseded_by:
                continue
            located = Located(file.path, usage.entry)
            head = live_head(index, located)
            key = None if head is None else (head.path, head.entry.line_start)
            if head is not None and key == (file.path, usage.entry.line_start):
                continue  # names nothing that resolves: lint's finding, not a chain
            heads.setdefault(key, []).append(located)
    chains = []
    for key, replaced in heads.items():
        head = None if key is None else entry_row(*usage_of[key])
        chains.append({"head": head, "loop": key is None,
                       "replaced": [{"path": r.path, "line_start": r.entry.line_start,
                                     "title": r.entry.title[:200]} for r in replaced]})
    return chains


__all__ = ["FileEntries", "chain_heads", "created_of", "entries_report", "entry_row",
           "memory_citations", "memory_entries", "note_entries", "relevance_split"]
