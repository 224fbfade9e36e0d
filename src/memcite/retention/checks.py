"""Citation checks against the memory folder, and where citations land in ``MEMORY.md``.

A cited entry (path, line range, hash at citation time) is checked against the memory
folder as it is now: each file is read at most once (``MemoryFolder``), and nothing
outside the memory root is ever opened (``..``, absolute paths and symlinks leading
out are reported, not followed). ``MEMORY.md`` is cut into its markdown sections so
that citations can be counted per section.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Iterable

from memcite.ledger.memory_files import MAX_FILE_BYTES, FileLines, MemoryRoot, read_opened, sha256
from memcite.retention.entries import SOURCE_LIST
from memcite.rust_text import RUST_WHITESPACE
from memcite.secrets import is_masked
from memcite.value_classes import FrozenSlots, Slots

MEMORY_INDEX = "MEMORY.md"

# Outcomes of a citation check, from worst to best.
CHECK_OUTCOMES = ("outside_root", "missing", "not_to_cite", "removed", "out_of_range", "blank",
                  "changed", "moved", "unverified", "ok")
V2_FOLDER = "memories_v2"  # memory store v2's folder (memcite.ledger.codex_home.MEMORY_STORES)
SUMMARY_FILE = "memory_summary.md"
# Looking for moved lines hashes every window of the cited length: at most this many lines.
MAX_MOVE_SEARCH_LINES = 2_000_000
_OUTCOME_TEXT = {
    "outside_root": "points outside the memory folder (not read)",
    "missing": "no such file in the memory folder",
    "not_to_cite": "memory_summary.md, which Codex's v2 read path says never to cite",
    "removed": "the file was there once (Codex's git history or memcite's inventory has it) "
               "and is gone: Codex removed it",
    "out_of_range": "line range out of bounds",
    "blank": "the cited lines are blank",
    "changed": "the lines changed since they were cited",
    "moved": "the cited lines stand elsewhere in the file now",
    "unverified": "no hash was recorded when cited (or a secret was masked out of the path)",
    "ok": "unchanged",
}
# What each outcome means, in the few words ``stats`` and ``show`` print next to it (the same
# words in both). A check compares the cited lines as they are in the memory folder now with
# their hash: taken when the reply was recorded (for an old session ingested late, as the
# folder's git history had the file at the reply's time, else none).
OUTCOME_MEANING = {
    "outside_root": "outside the memory folder (never read)",
    "missing": "no such file in the memory folder, now or before",
    "not_to_cite": "memory store v2's summary: its read path says not to cite it",
    "removed": "the file was there once and is gone (Codex removed it)",
    "out_of_range": "line range out of bounds",
    "blank": "the cited lines are blank",
    "changed": "the lines changed since they were hashed",
    "moved": "the same lines stand elsewhere now",
    "unverified": "not checked: no hash to compare with",
    "ok": "unchanged since they were hashed",
}
_HEADING = re.compile(rb"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(rb"^[ \t]{0,3}(```|~~~)")
_CANDIDATE = re.compile(rb"(?:[ \t]{0,3}(?:```|~~~)|#{1,6}[ \t])")
# What may start a candidate after a line feed: found far faster than _CANDIDATE at each line.
_CANDIDATE_AFTER_LF = re.compile(rb"\n[ \t]{0,3}[`~#]")


def _candidate_starts(data: bytes):
    """The offsets of the lines of ``data`` that start like a heading or a fence."""
    if _CANDIDATE.match(data):
        yield 0
    for hit in _CANDIDATE_AFTER_LF.finditer(data):
        if _CANDIDATE.match(data, hit.start() + 1):
            yield hit.start() + 1


# --------------------------------------------------------------------------- the memory folder


class MemoryFolder:
    """The files of one memory folder, each read at most once; ``files_read`` counts reads.

    Files are opened through ``MemoryRoot`` (never outside the folder, regular files only)
    and read up to ``MAX_FILE_BYTES``; a larger file is not read and is listed in
    ``skipped`` (its citations are ``unverified``).
    """

    def __init__(self, root: str | os.PathLike | None,
                 known_once: Callable[[str], bool] | None = None) -> None:
        self._root = MemoryRoot(root)
        self.root = self._root.real
        # Memory store v2 (its folder's name): its read path says never to cite the summary.
        self.v2 = self.root is not None and os.path.basename(self.root) == V2_FOLDER
        # Whether a path (as cited) named a file memcite's inventory knew: set by the caller.
        self.known_once = known_once
        self._was_there: dict[str, bool] = {}
        self._history = None
        self.files_read = 0
        self.skipped: dict[str, str] = {}  # path inside the folder -> why it was not read
        self._resolved: dict[str, tuple[str, str | None]] = {}
        self._parts: dict[str, str] = {}  # real path -> the path inside the folder
        self._lines: dict[str, FileLines | None] = {}  # real path -> lines, read on resolving
        self._stamps: dict[str, list] = {}  # path as cited -> stamp of the file as read
        self.ranges: dict[tuple[str, int, int], tuple[str | None, str | None]] = {}
        self._windows: dict[tuple[str, int], dict[str, int]] = {}

    def find_lines(self, real: str, length: int, digest: str) -> int | None:
        """The first line where ``length`` lines hashing to ``digest`` start, or None (also
        when the file is too large to search)."""
        key = (real, length)
        index = self._windows.get(key)
        if index is None:
            lines = self.lines(real)
            index = {}
            if lines is not None and length >= 1 and len(lines) * length <= MAX_MOVE_SEARCH_LINES:
                hashes = [sha256(window).hexdigest() for window in lines.windows(length)]
                # From the last window to the first, so that the first start wins.
                index = dict(zip(reversed(hashes), range(len(hashes), 0, -1), strict=True))
            self._windows[key] = index
        return index.get(digest)

    def close(self) -> None:
        self._root.close()

    def was_there(self, path: str) -> bool:
        """Whether a file missing now was in the folder once: memcite's inventory knew it (a
        rollout summary of a synced memory), or the folder's git history (Codex keeps one)
        holds it. Asked only of missing files, each once."""
        found = self._was_there.get(path)
        if found is None:
            found = bool(self.known_once and self.known_once(path))
            if not found and self.root is not None:
                if self._history is None:
                    from memcite.ledger.memory_history import MemoryHistory

                    self._history = MemoryHistory(self.root)
                found = self._history.ever_had(path)
            self._was_there[path] = found
        return found

    def resolve(self, path: str) -> tuple[str, str | None]:
        """``(outcome, real path)``: ``ok`` with the file's real path (a name: files are
        opened from the folder's handle, never by it), or ``outside_root`` / ``missing``
        with None (``unverified`` for a masked path, never opened).

        A file is read as soon as it is resolved, from the descriptor that resolving opened
        (so each file is opened once; see ``lines``)."""
        cached = self._resolved.get(path)
        if cached is None:
            cached = self._resolved[path] = self._resolve(path)
        return cached

    def _resolve(self, path: str) -> tuple[str, str | None]:
        if is_masked(path):
            return "unverified", None  # a secret was masked out of it when recorded: never opened
        if self.root is None:
            return "missing", None
        outcome, fd, parts = self._root.open(path)
        if fd is None:
            return outcome, None
        real = os.path.join(self.root, *parts)
        try:
            if real in self._lines:  # read already, under another spelling
                stamp = _stamp(os.fstat(fd))
            else:
                self._parts[real] = inside = "/".join(parts)
                self._lines[real], stamp = self._read(fd, inside)
            self._stamps[path] = [outcome, parts, stamp]
        except OSError:
            self._lines.setdefault(real, None)
        finally:
            os.close(fd)
        return outcome, real

    def _read(self, fd: int, inside: str) -> tuple[FileLines | None, list[int]]:
        """The lines of the file open on ``fd`` (None when it is larger than the cap: then
        in ``skipped``) and its stamp as read; raises ``OSError``."""
        read, stamp = read_opened(fd, MAX_FILE_BYTES)
        self.files_read += 1
        if read.too_large:
            self.skipped[inside] = (f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB,"
                                    " not read (its citations are unverified)")
            return None, list(stamp[1:])
        return FileLines(read.data), list(stamp[1:])

    def stamp(self, path: str) -> list | None:
        """What tells that ``path`` now resolves or reads differently: the components it
        resolves to and the file's inode, size and mtime (as the file was read when it was
        resolved; else opened safely, nothing read)."""
        if is_masked(path):
            return ["unverified", None, None]
        if path in self._stamps:  # taken from the descriptor the file was read from
            return self._stamps[path]
        outcome, stamp, parts = self._root.stamp(path)
        return [outcome, parts, list(stamp[1:]) if stamp else None]

    def streamed_sections(self, real: str) -> list[Section] | None:
        """The markdown sections of a file too large to hold, read in chunks (constant memory)."""
        inside = self._parts.get(real)
        if inside is None:
            return None
        _outcome, fd, _parts = self._root.open(inside)
        if fd is None:
            return None
        try:
            return markdown_sections_streamed(lambda n: os.read(fd, n))
        except OSError:
            return None
        finally:
            os.close(fd)

    def already_read(self, path: str) -> tuple[str, FileLines | None, list[int] | None] | None:
        """``(outcome, lines, stamp)`` of a path resolved already (None when it was not: then
        nothing is opened), as read then: lines None when the file is larger than the cap
        (then in ``skipped``), stamp (inode, size, mtime) None when it could not be read (then
        ``missing`` if it resolved)."""
        if path not in self._resolved:
            return None
        outcome, real = self._resolved[path]
        if real is None:
            return outcome, None, None
        stamp = self._stamps.get(path)
        if stamp is None:
            return "missing", None, None
        return outcome, self._lines.get(real), stamp[2]

    def lines(self, real: str) -> FileLines | None:
        """The lines of a file inside the root (Rust's ``lines``), as read when it was
        resolved; None when it cannot be read or is larger than the cap (then in ``skipped``)."""
        return self._lines.get(real)


def _stamp(st: os.stat_result) -> list[int]:
    """A file's inode, size and mtime, as ``MemoryFolder.stamp`` lists them."""
    return [st.st_ino, st.st_size, st.st_mtime_ns]


_set = object.__setattr__  # how the frozen values below set their fields in __init__


class CheckedEntry(FrozenSlots):
    """One distinct cited entry (path, range, hash at citation time) and what it is now."""

    __slots__ = ("path", "line_start", "line_end", "outcome", "citations", "moved_to")
    _fields = _compared = __slots__

    def __init__(self, path: str, line_start: int, line_end: int, outcome: str, citations: int,
                 moved_to: tuple[int, int] | None = None) -> None:
        _set(self, "path", path)
        _set(self, "line_start", line_start)
        _set(self, "line_end", line_end)
        _set(self, "outcome", outcome)
        _set(self, "citations", citations)
        _set(self, "moved_to", moved_to)  # ``moved``: where the cited lines stand now

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "outcome": self.outcome,
            "problem": _OUTCOME_TEXT[self.outcome],
            "citations": self.citations,
            "moved_to": list(self.moved_to) if self.moved_to else None,
        }


def check_entry(folder: MemoryFolder, path: str, line_start: int, line_end: int,
                recorded_sha256: str | None) -> str:
    """The outcome of checking one cited entry against the folder as it is now."""
    if folder.v2 and path.removeprefix("./") == SUMMARY_FILE:
        return "not_to_cite"
    outcome, real = folder.resolve(path)
    if real is None:
        if outcome == "missing" and folder.was_there(path):
            return "removed"
        return outcome
    key = (real, line_start, line_end)
    state = folder.ranges.get(key)
    if state is None:
        lines = folder.lines(real)
        if lines is None and folder._parts.get(real) in folder.skipped:
            state = ("unverified", None)  # too large to read: neither checked nor blamed
        else:
            state = _range_state(lines, line_start, line_end)
        folder.ranges[key] = state
    outcome, current = state
    if outcome is None:
        if recorded_sha256 is None:
            return "unverified"
        if current == recorded_sha256:
            return "ok"
    if outcome in (None, "out_of_range", "blank") and recorded_sha256 is not None \
            and line_end >= line_start >= 1 \
            and folder.find_lines(real, line_end - line_start + 1, recorded_sha256) \
            not in (None, line_start):
        return "moved"
    return outcome or "changed"


def moved_to(folder: MemoryFolder, path: str, line_start: int, line_end: int,
             recorded_sha256: str | None) -> tuple[int, int] | None:
    """Where the lines cited at ``line_start..line_end`` stand now, when they ``moved``."""
    _outcome, real = folder.resolve(path)
    if real is None or recorded_sha256 is None or line_end < line_start:
        return None
    start = folder.find_lines(real, line_end - line_start + 1, recorded_sha256)
    return None if start is None else (start, start + line_end - line_start)


_ASCII_SPACE = b" \t\n\x0b\x0c\r"


def _is_blank(text: bytes) -> bool:
    """Nothing but white space (Rust's ``trim``) in ``text``: a line, or lines joined by LF."""
    stripped = text.strip(_ASCII_SPACE)
    if not stripped:
        return True
    if stripped.isascii():
        return False
    return not stripped.decode("utf-8", "replace").strip(RUST_WHITESPACE)


def _range_state(lines: list[bytes] | None, line_start: int, line_end: int
                 ) -> tuple[str | None, str | None]:
    """``(outcome, None)`` when the range is unusable, else ``(None, its hash now)``."""
    if lines is None:
        return "missing", None
    if not 1 <= line_start <= line_end <= len(lines):
        return "out_of_range", None
    # The lines joined by LF, as hashed at citation time: blank when all of it is white space
    # (an LF is white space, and no UTF-8 character spans one).
    cited = (lines.span(line_start, line_end) if isinstance(lines, FileLines)
             else b"\n".join(lines[line_start - 1 : line_end]))
    if _is_blank(cited):
        return "blank", None
    return None, sha256(cited).hexdigest()


class CitationChecks(Slots):
    """Counts per outcome (distinct entries and citations) and the worst offenders."""

    __slots__ = ("entries", "citations", "outcomes", "worst", "files_read", "memory_root",
                 "skipped")
    _fields = __slots__

    def __init__(self, entries: int = 0, citations: int = 0,
                 outcomes: dict[str, dict[str, int]] | None = None,
                 worst: list[CheckedEntry] | None = None, files_read: int = 0,
                 memory_root: str | None = None, skipped: dict[str, str] | None = None) -> None:
        self.entries = entries
        self.citations = citations
        self.outcomes = ({o: {"entries": 0, "citations": 0} for o in CHECK_OUTCOMES}
                         if outcomes is None else outcomes)
        self.worst = [] if worst is None else worst
        self.files_read = files_read
        self.memory_root = memory_root
        self.skipped = {} if skipped is None else skipped  # files not read, and why

    @property
    def broken(self) -> int:
        """Citations whose entry is not ``ok`` or ``unverified``."""
        return sum(v["citations"] for k, v in self.outcomes.items()
                   if k not in ("ok", "unverified"))

    def to_dict(self) -> dict:
        return {
            "memory_root": self.memory_root,
            "entries": self.entries,
            "citations": self.citations,
            "broken": self.broken,
            "outcomes": {k: dict(v) for k, v in self.outcomes.items()},
            "worst": [entry.to_dict() for entry in self.worst],
            "files_read": self.files_read,
            "skipped": dict(self.skipped),
        }


def check_citations(rows: Iterable[tuple[str, int, int, str | None, int]],
                    folder: MemoryFolder, *, limit: int | None = 20) -> CitationChecks:
    """Check ``(path, line_start, line_end, lines_sha256, citations)`` rows against ``folder``.

    Counts are per distinct entry (hash included); the worst offenders are listed per
    place and outcome (entries cited with different hashes that fail alike are one row).
    """
    checks = CitationChecks(memory_root=folder.root)
    bad: dict[tuple[str, int, int, str], int] = {}
    moves: dict[tuple[str, int, int, str], tuple[int, int] | None] = {}
    entries = {outcome: 0 for outcome in CHECK_OUTCOMES}
    citations = dict(entries)
    for path, line_start, line_end, digest, count in rows:
        outcome = check_entry(folder, path, line_start, line_end, digest)
        entries[outcome] += 1
        citations[outcome] += count
        if outcome != "ok" and outcome != "unverified":
            key = (path, line_start, line_end, outcome)
            bad[key] = bad.get(key, 0) + count
            if outcome == "moved":
                moves[key] = moved_to(folder, path, line_start, line_end, digest)
    for outcome, counts in checks.outcomes.items():
        counts["entries"] += entries[outcome]
        counts["citations"] += citations[outcome]
    checks.entries = sum(entries.values())
    checks.citations = sum(citations.values())
    checks.worst = rank_worst([CheckedEntry(*key, count, moves.get(key))
                               for key, count in bad.items()], limit)
    checks.files_read = folder.files_read
    checks.skipped = dict(folder.skipped)
    return checks


def rank_worst(bad: list[CheckedEntry], limit: int | None) -> list[CheckedEntry]:
    """The failing entries, most cited first, then worst outcome, then place; ``limit`` 0 or
    None keeps all."""
    rank = {outcome: index for index, outcome in enumerate(CHECK_OUTCOMES)}
    bad.sort(key=lambda e: (-e.citations, rank[e.outcome], e.path, e.line_start, e.line_end))
    return bad if not limit else bad[:limit]


# --------------------------------------------------------------------------- MEMORY.md sections


class Section(Slots):
    """One markdown heading of ``MEMORY.md`` and the citations landing in it."""

    __slots__ = ("title", "path", "level", "line", "end_line", "citations")
    _fields = __slots__

    def __init__(self, title: str, path: str, level: int, line: int, end_line: int,
                 citations: int = 0) -> None:
        self.title = title
        self.path = path  # parent headings and this one, joined by " > "
        self.level = level
        self.line = line
        self.end_line = end_line
        self.citations = citations

    def to_dict(self) -> dict:
        return {"title": self.title, "path": self.path, "level": self.level, "line": self.line,
                "end_line": self.end_line, "citations": self.citations}


def _candidate_lines(lines):
    """``(number, line)`` of the lines that may be a heading or a fence: every line of a
    list, only the few that start like one in ``FileLines`` (found by a regex in C)."""
    if not isinstance(lines, FileLines):
        yield from enumerate(lines, start=1)
        return
    for start in _candidate_starts(lines.data):
        number = lines.line_number_at(start)
        yield number, lines[number - 1]


_LONG_LINE = 64 * 1024  # of a longer line, only this much is looked at when streaming


def _streamed_candidates(read, counted: list[int]):
    """``_candidate_lines`` of a file read in chunks by ``read(n)``, in constant memory (a
    line longer than ``_LONG_LINE`` is looked at by its start); ``counted[0]`` ends as the
    number of lines."""
    number = 0
    pending = b""  # the start of the line still open at the end of the last chunk
    overflow = False  # that line is longer than _LONG_LINE: its rest is dropped
    while chunk := read(_STREAM_CHUNK):
        if overflow:
            first = chunk.find(b"\n")
            if first < 0:
                continue
            chunk, overflow = b"\n" + chunk[first + 1 :], False
            chunk = pending + chunk
            pending = b""
        last = chunk.rfind(b"\n")
        if last < 0:
            pending += chunk
            if len(pending) > _LONG_LINE:
                pending, overflow = pending[:_LONG_LINE], True
            continue
        data, rest = pending + chunk[: last + 1], chunk[last + 1 :]
        at = 0
        for start in _candidate_starts(data):
            number += data.count(b"\n", at, start)
            at = start
            end = data.find(b"\n", at)
            line = data[at:end]
            yield number + 1, line[:-1] if line.endswith(b"\r") else line
        number += data.count(b"\n", at)
        pending = rest[:_LONG_LINE]
        overflow = len(rest) > _LONG_LINE
    if pending:
        match = _CANDIDATE.match(pending)
        if match:
            yield number + 1, pending[:-1] if pending.endswith(b"\r") else pending
        number += 1
    counted[0] = number


_STREAM_CHUNK = 1 << 20


def markdown_sections_streamed(read) -> list[Section]:
    """``markdown_sections`` of a file too large to hold, read in chunks by ``read(n)``."""
    counted = [0]
    return _sections(_streamed_candidates(read, counted), lambda: counted[0])


def markdown_sections(lines) -> list[Section]:
    """The ATX headings of a markdown file (fenced code skipped), each running to the next."""
    return _sections(_candidate_lines(lines), lambda: len(lines))


def _sections(candidates, total_lines) -> list[Section]:
    """Sections from ``(number, line)`` candidates; ``total_lines()`` is read at the end."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    fenced = False
    for number, line in candidates:
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match is None:
            continue
        level = len(match.group(1))
        title = match.group(2).decode("utf-8", "replace")
        if title.strip().lower().rstrip(": ") == SOURCE_LIST:
            continue  # Codex's list of a section's sources: part of that section, no section
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        sections.append(Section(title, " > ".join(t for _, t in stack), level, number, number))
    count = total_lines()
    for index, section in enumerate(sections):
        section.end_line = sections[index + 1].line - 1 if index + 1 < len(sections) else count
    return sections


def count_section_citations(sections: list[Section],
                            ranges: Iterable[tuple[int, int, int]]) -> None:
    """Add ``citations`` for each ``(line_start, line_end, count)`` to every section it overlaps
    (a heading's section ends where the next heading starts)."""
    starts = [section.line for section in sections]
    for line_start, line_end, count in ranges:
        low, high = min(line_start, line_end), max(line_start, line_end)
        first = max(0, bisect.bisect_right(starts, low) - 1)
        for section in sections[first:]:
            if section.line > high:
                break
            if section.end_line >= low:
                section.citations += count
