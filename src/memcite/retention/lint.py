"""``memcite lint``: tiers, supersession and provenance of memory entries, and Codex's folder formats.

Every check is a pure function of text (or of entries read by
``memcite.retention.entries``) that returns ``Finding``s with a stable code;
``lint_paths`` is the thin part that finds and reads the files. The codes, their
severities and what they mean are listed in ``CODES`` (and in the README).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from memcite.citations.thread_ids import normalize_thread_id
from memcite.retention.entries import (
    CONFIDENCE_LEVELS,
    TIERS,
    Entry,
    normalize_name,
    read_entries,
    tier_suggestion,
)

ERROR = "error"
WARNING = "warning"

# code -> (severity, what it means). A code never changes meaning; new checks get new codes.
CODES: dict[str, tuple[str, str]] = {
    "tier-unknown": (ERROR, "a tier prefix or Tier: value that is no tier ([CROE], [core], Tier: TOP)"),
    "tier-conflict": (WARNING, "the prefix and the Tier: line name different tiers"),
    "tier-core-limit": (ERROR, "more than 80 CORE entries in one file"),
    "tier-core-near-limit": (WARNING, "72 to 80 CORE entries in one file: review some for demotion"),
    "superseded-not-irr": (WARNING, "an entry with superseded_by: that is not marked [IRR]"),
    "supersession-dangling": (ERROR, "a superseded_by: value that names no entry (by id or title)"),
    "supersession-loop": (ERROR, "a superseded_by: chain that comes back to where it started"),
    "superseded-twice": (ERROR, "an entry superseded by two different entries (a fork)"),
    "duplicate-decision": (ERROR, "two live entries state the same decision, no chain between them"),
    "provenance-missing": (WARNING, "a CORE or IMP entry without Source:, Evidence: or Confidence:"),
    "confidence-invalid": (WARNING, "a Confidence: value other than HIGH, MEDIUM or LOW"),
    "summary-not-v1": (ERROR, "memory_summary.md whose first line is not exactly v1"),
    "adhoc-name-invalid": (ERROR, "an ad-hoc note file name that breaks Codex's rule"),
    "rollout-summary-header": (ERROR, "a rollout summary whose header is malformed"),
    "rollout-thread-id": (ERROR, "a rollout summary whose thread_id is not a UUID"),
    "rollout-summary-name": (WARNING, "a rollout summary file named otherwise than Codex names it"),
    "pointer-range": (ERROR, "a path:a-b pointer whose lines are not in the file"),
    "pointer-missing": (ERROR, "a path:a-b pointer to a memory file that does not exist"),
    "file-unreadable": (ERROR, "a memory file that could not be read (too large, not UTF-8, I/O)"),
}
CORE_LIMIT = 80
CORE_NEAR_LIMIT = 72
MAX_FILE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: where (file, 1-based line and column), what, and what to do."""

    code: str
    severity: str
    path: str
    line: int
    column: int
    message: str
    hint: str = ""

    def to_dict(self) -> dict:
        return {"code": self.code, "severity": self.severity, "path": self.path, "line": self.line,
                "column": self.column, "message": self.message, "hint": self.hint}


def _finding(code: str, path: str, line: int, column: int, message: str, hint: str = "",
             severity: str | None = None) -> Finding:
    return Finding(code, severity or CODES[code][0], path, line, column, message, hint)


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in reading order: by file, line, column, then code."""
    return sorted(findings, key=lambda f: (f.path, f.line, f.column, f.code, f.message))


# --------------------------------------------------------------------------- tiers and provenance


def check_tiers(path: str, entries: Sequence[Entry]) -> list[Finding]:
    """Unknown or misspelt tiers, conflicting tiers, and the CORE limit of one file."""
    findings = []
    core = 0
    for entry in entries:
        mark = entry.mark
        if mark is not None and mark.tag not in TIERS:
            suggestion = tier_suggestion(mark.tag)
            if suggestion is not None:
                findings.append(_finding(
                    "tier-unknown", path, mark.line, mark.column,
                    f"[{mark.tag}] is not a tier", f"write [{suggestion}] (tiers: CORE, IMP, SEC, IRR)"))
        for item in entry.values("tier"):
            value = item.value.strip()
            if value not in TIERS:
                suggestion = tier_suggestion(value) if value.isalpha() else None
                findings.append(_finding(
                    "tier-unknown", path, item.line, item.column, f"Tier: {value!r} is not a tier",
                    f"write Tier: {suggestion}" if suggestion else "use one of CORE, IMP, SEC, IRR"))
            elif mark is not None and mark.tag in TIERS and mark.tag != value:
                findings.append(_finding(
                    "tier-conflict", path, item.line, item.column,
                    f"the prefix says [{mark.tag}] and this line says Tier: {value}",
                    "keep one of them"))
        if entry.tier == "CORE":
            core += 1
            where = mark or entry
            line = where.line if mark else entry.line_start
            column = mark.column if mark else 1
            if core == CORE_LIMIT + 1:
                findings.append(_finding(
                    "tier-core-limit", path, line, column,
                    f"more than {CORE_LIMIT} CORE entries (this is the {core}st)",
                    "demote the least used CORE entries to [IMP]"))
            elif core == CORE_NEAR_LIMIT:
                findings.append(_finding(
                    "tier-core-near-limit", path, line, column,
                    f"{core} CORE entries, the limit is {CORE_LIMIT}",
                    "review the CORE entries for demotion before adding more"))
    return findings


def check_provenance(path: str, entries: Sequence[Entry]) -> list[Finding]:
    """CORE and IMP entries carry ``Source:``, ``Evidence:`` and ``Confidence: HIGH|MEDIUM|LOW``."""
    findings = []
    for entry in entries:
        if entry.tier not in ("CORE", "IMP"):
            continue
        missing = [name for name, key in (("Source:", "source"), ("Evidence:", "evidence"),
                                          ("Confidence:", "confidence"))
                   if not any(item.value for item in entry.values(key))]
        if missing:
            findings.append(_finding(
                "provenance-missing", path, entry.line_start, 1,
                f"{entry.tier} entry without {', '.join(missing)}",
                "add indented lines under it: Source: (session or commit), Evidence: (what showed it), "
                "Confidence: HIGH|MEDIUM|LOW"))
        for item in entry.values("confidence"):
            if item.value and item.value.strip().upper() not in CONFIDENCE_LEVELS:
                findings.append(_finding(
                    "confidence-invalid", path, item.line, item.column,
                    f"Confidence: {item.value!r} is not HIGH, MEDIUM or LOW",
                    "HIGH: verified by a test; MEDIUM: observed, untested; LOW: inferred"))
    return findings


# --------------------------------------------------------------------------- supersession


@dataclass(frozen=True, slots=True)
class Located:
    """An entry and the file it is in."""

    path: str
    entry: Entry


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


def _key(located: Located) -> tuple[str, int]:
    return located.path, located.entry.line_start


def _targets(index: EntryIndex, located: Located) -> list[Located]:
    found = []
    for value in located.entry.superseded_by:
        target = index.resolve(value, located.path)
        if target is not None and _key(target) not in {_key(t) for t in found}:
            found.append(target)
    return found


def check_supersession(files: Sequence[tuple[str, Sequence[Entry]]]) -> list[Finding]:
    """Dangling references, forks, loops, superseded entries not IRR, and duplicate live decisions."""
    index = EntryIndex(files)
    findings: list[Finding] = []
    edges: dict[tuple[str, int], list[Located]] = {}
    nodes: dict[tuple[str, int], Located] = {}
    for path, entries in files:
        for entry in entries:
            located = Located(path, entry)
            nodes[_key(located)] = located
            seen: list[tuple[str, int]] = []
            for item in entry.values("superseded_by"):
                if not item.value:
                    findings.append(_finding(
                        "supersession-dangling", path, item.line, item.column,
                        "superseded_by: names nothing", "name the replacing entry by its id or title"))
                    continue
                target = index.resolve(item.value, path)
                if target is None:
                    findings.append(_finding(
                        "supersession-dangling", path, item.line, item.column,
                        f"superseded_by: {item.value!r} matches no entry's id, title or decision",
                        "name the replacing entry exactly as its title (text before ' — ') or its id"))
                    continue
                if _key(target) not in seen and seen:
                    findings.append(_finding(
                        "superseded-twice", path, item.line, item.column,
                        f"superseded a second time, by {_describe(target, path)}",
                        "keep one superseded_by: line; supersede the other replacement in turn"))
                if _key(target) not in seen:
                    seen.append(_key(target))
            if entry.superseded_by and entry.tier != "IRR":
                line, column = (entry.mark.line, entry.mark.column) if entry.mark else (entry.line_start, 1)
                findings.append(_finding(
                    "superseded-not-irr", path, line, column,
                    f"superseded entry is marked {('[' + entry.tier + ']') if entry.tier else 'with no tier'}",
                    "mark it [IRR] so that consolidation prunes it"))
            edges[_key(located)] = _targets(index, located)
    findings.extend(_loops(nodes, edges))
    findings.extend(_duplicates(files))
    return findings


def _describe(located: Located, path: str) -> str:
    where = f"line {located.entry.line_start}" if located.path == path else \
        f"{located.path}:{located.entry.line_start}"
    return f"{located.entry.title!r} ({where})"


def _loops(nodes: dict, edges: dict) -> list[Finding]:
    """One finding per cycle of ``superseded_by:`` references, at the cycle's first entry in file order."""
    findings = []
    state: dict[tuple[str, int], int] = {}  # 1 on the current path, 2 done
    reported: set[frozenset] = set()
    for start in sorted(nodes):
        if state.get(start):
            continue
        stack: list[tuple[tuple[str, int], int]] = [(start, 0)]
        path: list[tuple[str, int]] = [start]
        state[start] = 1
        while stack:
            node, position = stack[-1]
            targets = edges.get(node, [])
            if position < len(targets):
                stack[-1] = (node, position + 1)
                nxt = _key(targets[position])
                if state.get(nxt) == 1:
                    cycle = path[path.index(nxt):]
                    members = frozenset(cycle)
                    if members not in reported:
                        reported.add(members)
                        first = min(cycle)
                        titles = " → ".join(repr(nodes[k].entry.title) for k in
                                            cycle[cycle.index(first):] + cycle[: cycle.index(first)] + [first])
                        located = nodes[first]
                        item = located.entry.values("superseded_by")[0]
                        findings.append(_finding(
                            "supersession-loop", located.path, item.line, item.column,
                            f"superseded_by: chain loops: {titles}",
                            "the newest entry of a chain must not be superseded; remove one reference"))
                elif not state.get(nxt):
                    state[nxt] = 1
                    stack.append((nxt, 0))
                    path.append(nxt)
            else:
                state[node] = 2
                stack.pop()
                path.pop()
    return findings


def _duplicates(files: Sequence[tuple[str, Sequence[Entry]]]) -> list[Finding]:
    """Live entries (no ``superseded_by:``) of one file that state the same decision."""
    findings = []
    for path, entries in files:
        first_seen: dict[str, Entry] = {}
        for entry in entries:
            if entry.superseded_by or not entry.decision:
                continue
            name = normalize_name(entry.decision)
            if not name:
                continue
            if name in first_seen:
                earlier = first_seen[name]
                findings.append(_finding(
                    "duplicate-decision", path, entry.line_start, 1,
                    f"same decision as line {earlier.line_start}: {entry.decision!r}",
                    "merge the two, or mark the older [IRR] with superseded_by: naming the newer"))
            else:
                first_seen[name] = entry
    return findings


def check_entry_files(files: Sequence[tuple[str, str]]) -> list[Finding]:
    """Every entry check over ``(path, text)`` pairs (supersession may cross files)."""
    read = [(path, read_entries(text)) for path, text in files]
    findings = []
    for path, entries in read:
        findings.extend(check_tiers(path, entries))
        findings.extend(check_provenance(path, entries))
    findings.extend(check_supersession(read))
    return findings


# --------------------------------------------------------------------------- Codex's folder


def check_memory_summary(path: str, text: str) -> list[Finding]:
    """``memory_summary.md`` opens with the line ``v1``, exactly."""
    first = text.split("\n", 1)[0].removesuffix("\r")
    if first == "v1":
        return []
    shown = first if len(first) <= 40 else first[:40] + "…"
    return [_finding("summary-not-v1", path, 1, 1, f"the first line is {shown!r}, not 'v1'",
                     "Codex reads the summary only when its first line is exactly v1")]


_ADHOC_PREFIX = re.compile(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-")
_ADHOC_SLUG = re.compile(r"[a-z0-9-]{1,80}")


def adhoc_name_problem(name: str) -> str | None:
    """Why ``name`` breaks Codex's rule for ad-hoc note files, or None when it follows it.

    At most 128 bytes, ending ``.md``, a 20-byte prefix ``YYYY-MM-DDTHH-MM-SS-``,
    then a slug of 1 to 80 bytes of ``[a-z0-9-]``.
    """
    size = len(name.encode("utf-8"))
    if size > 128:
        return f"{size} bytes, more than 128"
    if not name.endswith(".md"):
        return "does not end with .md"
    if not _ADHOC_PREFIX.match(name):
        return "does not start with a UTC time YYYY-MM-DDTHH-MM-SS-"
    slug = name[20:-3]
    if not _ADHOC_SLUG.fullmatch(slug):
        if not slug:
            return "has no slug after the time"
        if len(slug.encode("utf-8")) > 80:
            return "slug longer than 80 bytes"
        return f"slug {slug!r} holds characters other than a-z, 0-9 and -"
    return None


def adhoc_note_name(now: datetime, slug: str) -> str:
    """A name Codex accepts for an ad-hoc note written at ``now`` about ``slug`` (any text)."""
    moment = now.astimezone(UTC) if now.tzinfo else now
    cleaned = re.sub(r"[^a-z0-9-]+", "-", slug.lower()).strip("-")
    cleaned = re.sub(r"-{2,}", "-", cleaned)[:80].strip("-") or "note"
    return f"{moment:%Y-%m-%dT%H-%M-%S}-{cleaned}.md"


def check_adhoc_name(path: str, name: str) -> list[Finding]:
    problem = adhoc_name_problem(name)
    if problem is None:
        return []
    return [_finding("adhoc-name-invalid", path, 1, 1, f"ad-hoc note name {name!r} {problem}",
                     "name it YYYY-MM-DDTHH-MM-SS-<slug>.md with a slug of a-z, 0-9 and -")]


_HEADER = re.compile(r"([a-z_][a-z0-9_]*):[ \t]*(.*?)[ \t]*")
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(?:\.\d+)?(?:[Zz]|[+-]\d\d:\d\d)")
_REQUIRED_HEADER = ("thread_id", "updated_at", "rollout_path", "cwd")
_BASE62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_STEM = re.compile(r"(?P<time>\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d)-(?P<hash>[0-9A-Za-z]{4})(?:-(?P<slug>.*))?")


def summary_stem(thread_id: str) -> str | None:
    """The ``{time}-{hash4}`` Codex names a UUIDv7 thread's summary file with, or None if not v7."""
    digits = thread_id.replace("-", "")
    if len(digits) != 32 or digits[12] != "7":
        return None
    moment = datetime.fromtimestamp(int(digits[:12], 16) / 1000, tz=UTC)
    number = int(digits[-8:], 16) % 62**4
    code = ""
    for _ in range(4):
        number, digit = divmod(number, 62)
        code = _BASE62[digit] + code
    return f"{moment:%Y-%m-%dT%H-%M-%S}-{code}"


def check_rollout_summary(path: str, name: str, text: str) -> list[Finding]:
    """The header (``thread_id:``, ``updated_at:``, ``rollout_path:``, ``cwd:``, blank line) and name."""
    findings = []
    fields: dict[str, tuple[str, int]] = {}
    lines = text.split("\n")
    ended = False
    for number, raw in enumerate(lines, start=1):
        line = raw.removesuffix("\r")
        if not line.strip():
            if number == 1:
                findings.append(_finding("rollout-summary-header", path, 1, 1,
                                         "the file opens with a blank line, not the header",
                                         "start with thread_id: <uuid>"))
                return findings
            ended = True
            break
        match = _HEADER.fullmatch(line)
        if match is None:
            findings.append(_finding(
                "rollout-summary-header", path, number, 1,
                f"header line {line[:40]!r} is not 'key: value'",
                "end the header with a blank line before the summary"))
            ended = True
            break
        key, value = match.groups()
        if key in fields:
            findings.append(_finding("rollout-summary-header", path, number, 1,
                                     f"{key}: given twice (first on line {fields[key][1]})",
                                     "keep one"))
        else:
            fields[key] = (value, number)
    if not ended and fields:
        findings.append(_finding("rollout-summary-header", path, len(lines), 1,
                                 "no blank line after the header, and no summary",
                                 "a blank line separates the header from the summary"))
    missing = [key for key in _REQUIRED_HEADER if key not in fields]
    if missing:
        findings.append(_finding("rollout-summary-header", path, 1, 1,
                                 f"header without {', '.join(k + ':' for k in missing)}",
                                 "Codex writes thread_id:, updated_at:, rollout_path: and cwd:"))
    if "updated_at" in fields:
        value, number = fields["updated_at"]
        if not _RFC3339.fullmatch(value):
            findings.append(_finding("rollout-summary-header", path, number, 13,
                                     f"updated_at: {value!r} is not an RFC 3339 time",
                                     "write it as 2026-01-31T12:00:00Z"))
    if "thread_id" in fields:
        value, number = fields["thread_id"]
        normalized = normalize_thread_id(value)
        if normalized is None:
            findings.append(_finding("rollout-thread-id", path, number, 12,
                                     f"thread_id: {value!r} is not a UUID",
                                     "the thread id is the UUID in the session file's name"))
        elif normalized != value:
            findings.append(_finding("rollout-thread-id", path, number, 12,
                                     f"thread_id: {value!r} is not written as Codex writes it",
                                     f"write {normalized}", severity=WARNING))
        else:
            findings.extend(_check_stem(path, name, normalized))
    return findings


def _check_stem(path: str, name: str, thread_id: str) -> list[Finding]:
    expected = summary_stem(thread_id)
    stem = name.removesuffix(".md")
    match = _STEM.fullmatch(stem)
    if expected is None:
        return []
    if match is None or f"{match.group('time')}-{match.group('hash')}" != expected:
        return [_finding("rollout-summary-name", path, 1, 1,
                         f"file name {name!r} does not start with {expected}, the stem of its thread",
                         "Codex finds a summary by its name; rename it or fix thread_id:")]
    return []


# Pointers: "path:a-b" where path starts in the memory folder.
_POINTER = re.compile(
    r"(?<![\w./-])(?P<path>(?:MEMORY\.md|memory_summary\.md|raw_memories\.md"
    r"|(?:rollout_summaries|skills|extensions)/[\w./-]*[\w])):(?P<start>\d{1,10})-(?P<end>\d{1,10})(?!\d)"
)


def find_pointers(text: str) -> list[tuple[int, int, str, int, int]]:
    """``(line, column, path, start, end)`` for every ``path:a-b`` pointer into the memory folder."""
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        if ":" not in line:
            continue
        for match in _POINTER.finditer(line):
            found.append((number, match.start() + 1, match.group("path"), int(match.group("start")),
                          int(match.group("end"))))
    return found


def check_pointers(path: str, text: str, line_count) -> list[Finding]:
    """Pointers whose file is missing or whose range is outside it.

    ``line_count(relative path)`` is the number of lines of that file in the memory
    folder, or None when there is no such file inside it.
    """
    findings = []
    for line, column, target, start, end in find_pointers(text):
        count = line_count(target)
        shown = f"{target}:{start}-{end}"
        if count is None:
            findings.append(_finding("pointer-missing", path, line, column,
                                     f"{shown} points at a file that is not in the memory folder",
                                     "fix the path or remove the pointer"))
        elif not 1 <= start <= end <= count:
            why = "reversed" if start > end else ("starts at 0" if start == 0 else
                                                  f"past the end ({target} has {count} lines)")
            findings.append(_finding("pointer-range", path, line, column,
                                     f"{shown} points at nothing: the range is {why}",
                                     "update the range to the lines it means"))
    return findings


# --------------------------------------------------------------------------- files and folders


@dataclass(frozen=True, slots=True)
class LintReport:
    """What ``lint_paths`` found, and how many files it read."""

    findings: tuple[Finding, ...]
    files: int

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == WARNING)


_CODEX_MARKERS = ("MEMORY.md", "memory_summary.md", "raw_memories.md", "rollout_summaries")
_SKIPPED_DIRS = ("archive", "skills", ".git")


def _kind(parts: tuple[str, ...], codex_folder: bool) -> str | None:
    """What a file is, from its path inside a linted folder: which checks it gets (None: none)."""
    name = parts[-1]
    if name.startswith("."):
        return None
    if parts[-4:-1] == ("extensions", "ad_hoc", "notes"):
        return "adhoc"
    if not name.endswith(".md"):
        return None
    if name == "memory_summary.md":
        return "summary"
    if name == "MEMORY.md":
        return "memory"
    if len(parts) >= 2 and parts[-2] == "rollout_summaries":
        return "rollout"
    if codex_folder or name == "raw_memories.md":
        return None
    return "entries"


def _read(path: str) -> tuple[str | None, str]:
    """``(text, "")`` of a regular file, or ``(None, why it could not be read)``."""
    try:
        if not os.path.isfile(path):
            return None, "not a regular file"
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}"
    if len(data) > MAX_FILE_BYTES:
        return None, f"larger than {MAX_FILE_BYTES} bytes, not read"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 (byte {exc.start})"


def collect_files(path: str) -> list[tuple[str, str]]:
    """``(shown path, kind)`` of every file ``lint`` checks under ``path`` (a file or folder)."""
    if os.path.isdir(path):
        names = set(os.listdir(path))
        codex_folder = any(marker in names for marker in _CODEX_MARKERS)
        found = []
        for folder, dirs, files in os.walk(path):
            rel = os.path.relpath(folder, path)
            parts = () if rel == "." else tuple(rel.split(os.sep))
            dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
            for name in sorted(files):
                kind = _kind((*parts, name), codex_folder)
                if kind is not None:
                    found.append((os.path.join(folder, name), kind))
        return found
    parts = tuple(os.path.normpath(path).split(os.sep))
    kind = _kind(parts, False) or "entries"
    return [(path, kind)]


def _line_counter(root: str):
    from memcite.ledger.memory_files import byte_lines, locate

    real_root = os.path.realpath(root)
    cache: dict[str, int | None] = {}

    def count(relative: str) -> int | None:
        if relative not in cache:
            status, real = locate(real_root, relative)
            if real is None:
                cache[relative] = None
            else:
                try:
                    with open(real, "rb") as handle:
                        cache[relative] = len(byte_lines(handle.read(MAX_FILE_BYTES)))
                except OSError:
                    cache[relative] = None
        return cache[relative]

    return count


def lint_files(files: Sequence[tuple[str, str]]) -> LintReport:
    """Run the checks on ``(path, kind)`` pairs (see ``collect_files``)."""
    findings: list[Finding] = []
    entry_files: list[tuple[str, str]] = []
    counters: dict[str, object] = {}
    for path, kind in files:
        if kind == "adhoc":
            findings.extend(check_adhoc_name(path, os.path.basename(path)))
            continue
        text, why = _read(path)
        if text is None:
            findings.append(_finding("file-unreadable", path, 1, 1, f"{why}", "fix or remove the file"))
            continue
        if kind in ("memory", "entries"):
            entry_files.append((path, text))
        if kind == "summary":
            findings.extend(check_memory_summary(path, text))
        if kind in ("memory", "summary"):
            base = os.path.dirname(path) or "."
            counter = counters.setdefault(base, _line_counter(base))
            findings.extend(check_pointers(path, text, counter))
        if kind == "rollout":
            findings.extend(check_rollout_summary(path, os.path.basename(path), text))
    findings.extend(check_entry_files(entry_files))
    return LintReport(tuple(sort_findings(findings)), len(files))


def lint_paths(paths: Sequence[str]) -> LintReport:
    """Lint files and folders: a Codex memory folder, memcite's notes folder, or single files."""
    files: list[tuple[str, str]] = []
    seen: set[str] = set()
    for path in paths:
        for item in collect_files(path):
            real = os.path.realpath(item[0])
            if real not in seen:
                seen.add(real)
                files.append(item)
    return lint_files(files)


__all__ = [
    "CODES",
    "ERROR",
    "WARNING",
    "EntryIndex",
    "Finding",
    "LintReport",
    "adhoc_name_problem",
    "adhoc_note_name",
    "check_adhoc_name",
    "check_entry_files",
    "check_memory_summary",
    "check_pointers",
    "check_provenance",
    "check_rollout_summary",
    "check_supersession",
    "check_tiers",
    "collect_files",
    "find_pointers",
    "lint_files",
    "lint_paths",
    "sort_findings",
    "summary_stem",
]
