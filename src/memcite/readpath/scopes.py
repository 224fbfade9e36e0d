"""Scoped notes: where each scope's note lives, and the pure rules that read them together.

Three scopes, most specific first: ``session`` (one agent session's scratchpad),
``project`` (one repository's note) and ``global`` (facts about the user). The read
path resolves session → project → global:

- entries of two scopes that share a topic conflict: the more specific scope wins,
  unless only the less specific one is confirmed by a person (``resolve``);
- when the budget is tight, entries are compacted by relevance, lowest first:
  importance (from the tier) x 0.95^(days since last confirmed), the more specific
  scope kept first on ties (``compaction_order``), in steps: without provenance
  lines, then a one-line digest (``digest``), then left out.

Everything here is a pure function of its inputs (today's date is passed in); the
files are read by ``memcite.readpath.instructions``.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

from memcite.readpath.note_format import FIELDS, Entry, Note
from memcite.readpath.projects import SCOPES

IMPORTANCE = {"CORE": 1.0, "IMP": 0.7, "SEC": 0.4, "IRR": 0.1}
NO_TIER_IMPORTANCE = 0.5
DECAY = 0.95
# Compaction steps, in the order they are applied to an entry.
FULL, NO_PROVENANCE, DIGEST, LEFT_OUT = 0, 1, 2, 3
STEP_NAMES = {NO_PROVENANCE: "provenance lines dropped", DIGEST: "one-line digest",
              LEFT_OUT: "left out"}
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_FIELD_NAMES = {name.lower() for name in FIELDS}


# --------------------------------------------------------------------------- entries


@dataclass(eq=False)
class ScopedEntry:
    """One entry of one scope's note, with what resolution and compaction look at."""

    scope: str
    entry: Entry
    order: int  # its place among all entries read (scopes most specific first)

    def __post_init__(self) -> None:
        fields = self.entry.fields()
        topic = fields.get("Topic")
        self.topic: str | None = topic.casefold() if topic else None
        self.confirmed: bool = _says_yes(fields.get("Confirmed"))
        tier = (fields.get("Tier") or "").strip().upper()
        self.tier: str | None = tier if tier in IMPORTANCE else None
        dates = _DATE_RE.findall(fields.get("Date") or "")
        if self.confirmed:
            dates += _DATE_RE.findall(fields.get("Confirmed") or "")
        self.last: str | None = max(dates) if dates else None  # last confirmed, else saved

    @property
    def id(self) -> str | None:
        return self.entry.id


def _says_yes(value: str | None) -> bool:
    return (value or "").strip().lower().startswith("yes")


def is_confirmed(entry: Entry) -> bool:
    """Whether a person confirmed the entry (its ``Confirmed:`` line says yes)."""
    return _says_yes(entry.get("Confirmed"))


def scoped_entries(notes: list[tuple[str, Note]]) -> list[ScopedEntry]:
    """Every entry of the notes given as ``(scope, note)``, in that order."""
    found = []
    for scope, note in notes:
        for _, entry in note.entries():
            found.append(ScopedEntry(scope, entry, len(found)))
    return found


# --------------------------------------------------------------------------- conflicts


@dataclass(frozen=True)
class Override:
    """A conflict by topic: which entry was kept, which left out, and why."""

    topic: str
    kept_id: str | None
    kept_scope: str
    dropped_id: str | None
    dropped_scope: str
    why: str

    def to_dict(self) -> dict:
        return {"topic": self.topic, "kept": {"id": self.kept_id, "scope": self.kept_scope},
                "dropped": {"id": self.dropped_id, "scope": self.dropped_scope}, "why": self.why}


def _specificity(scope: str) -> int:
    return len(SCOPES) - SCOPES.index(scope)  # session 3, project 2, global 1


def resolve(entries: list[ScopedEntry]) -> tuple[list[ScopedEntry], list[Override]]:
    """Keep one scope per topic: confirmed first, then the more specific scope; the entries of
    the other scopes on that topic are left out, each with an ``Override``. Entries without a
    topic, and entries of the same scope, never conflict."""
    by_topic: dict[str, list[ScopedEntry]] = {}
    for item in entries:
        if item.topic:
            by_topic.setdefault(item.topic, []).append(item)
    dropped: set[int] = set()
    overrides: list[Override] = []
    for topic, group in by_topic.items():
        if len({item.scope for item in group}) < 2:
            continue
        winner = max(group, key=lambda item: (item.confirmed, _specificity(item.scope),
                                              -item.order))
        for item in group:
            if item.scope == winner.scope:
                continue
            dropped.add(item.order)
            overrides.append(Override(topic, winner.id, winner.scope, item.id, item.scope,
                                      _why(winner, item)))
    kept = [item for item in entries if item.order not in dropped]
    return kept, overrides


def _why(winner: ScopedEntry, loser: ScopedEntry) -> str:
    if winner.confirmed and not loser.confirmed:
        return f"{winner.scope} is confirmed, {loser.scope} is automatic"
    both = "both confirmed" if winner.confirmed else "both automatic"
    return f"{winner.scope} is more specific than {loser.scope} ({both})"


# --------------------------------------------------------------------------- relevance


def days_between(then: str | None, today: str) -> int:
    """Whole days from ``then`` to ``today`` (both ``YYYY-MM-DD``); 0 when unknown or ahead."""
    try:
        days = (_dt.date.fromisoformat(today[:10]) - _dt.date.fromisoformat((then or "")[:10])).days
    except ValueError:
        return 0
    return max(days, 0)


def relevance(item: ScopedEntry, today: str) -> float:
    """importance(tier) x 0.95^(days since the entry was last confirmed)."""
    importance = IMPORTANCE.get(item.tier or "", NO_TIER_IMPORTANCE)
    return importance * DECAY ** days_between(item.last, today)


def compaction_order(entries: list[ScopedEntry], today: str) -> list[ScopedEntry]:
    """The entries in the order they are compacted: lowest relevance first, the less specific
    scope first on ties, then the later entry first."""
    ranked = {item.order: round(relevance(item, today), 12) for item in entries}
    return sorted(entries, key=lambda item: (ranked[item.order], _specificity(item.scope),
                                             -item.order))


# --------------------------------------------------------------------------- compaction steps

_BACKTICKS = r"`[^`\n]+`"  # anything in backticks
_PATH = r"(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*"  # paths
_FILE_NAME = r"[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7}\b"  # file names
_WORDS = (
    r"--?[a-z][\w-]*"  # options
    r"|\b[A-Za-z_]*[a-z][A-Z][A-Za-z0-9_]*\b"  # camelCase, CamelCase
    r"|\b[A-Za-z0-9]+_[A-Za-z0-9_]+\b"  # snake_case
    r"|\bv?\d+(?:\.\d+)+\b"  # versions
    r"|\b[A-Za-z]+[0-9][A-Za-z0-9]*\b"  # words with digits
    r"|\b[A-Z][A-Za-z0-9]+\b"  # names
)
# What a digest keeps: the first match at each place, left to right (``finditer``).
_KEEP_RE = re.compile("|".join((_BACKTICKS, _PATH, _FILE_NAME, _WORDS)))
# ``_KEEP_RE.finditer`` tries the path and file name patterns at every character, and each
# attempt runs to the end of a run of word characters: quadratic on a long line without
# spaces. ``_keep_matches`` finds the same matches in linear time from four patterns, each
# searched for its next match and kept until the scan passes it (whichever starts first
# wins, the earlier pattern on a tie, as in the alternation). Inside a run of the characters
# a path (file name) pattern starts with, it matches at every place or none (what follows
# the run decides), so after trying the place the scan is at it is searched only where a
# run starts (or at ``~``). The camelCase pattern first checks that the word is all ASCII:
# otherwise its backtracking is quadratic in a word it cannot match (no change in what it
# matches: a match runs from a word's start to its end, in ASCII letters, digits and ``_``).
_WORDS_LINEAR = _WORDS.replace(
    r"|\b[A-Za-z_]*[a-z][A-Z]", r"|\b(?=[A-Za-z0-9_]+\b)[A-Za-z_]*[a-z][A-Z]", 1)
_KEEP_PARTS = (
    (re.compile(_BACKTICKS), None),
    (re.compile(_PATH), re.compile(r"(?:(?<![\w.-])|(?=~))" + _PATH)),
    (re.compile(_FILE_NAME), re.compile(r"(?<![\w-])" + _FILE_NAME)),
    (re.compile(_WORDS_LINEAR), None),
)


def _next_match(part: int, text: str, start: int):
    pattern, at_run_start = _KEEP_PARTS[part]
    if at_run_start is None:
        return pattern.search(text, start)
    return pattern.match(text, start) or at_run_start.search(text, start + 1)


def _keep_matches(text: str):
    """The matches of ``_KEEP_RE.finditer(text)`` (the same spans), in linear time."""
    ahead = [_next_match(part, text, 0) for part in range(len(_KEEP_PARTS))]
    while True:
        best = None
        for found in ahead:
            if found is not None and (best is None or found.start() < best.start()):
                best = found
        if best is None:
            return
        yield best
        position = best.end()  # every pattern matches at least one character
        for part, found in enumerate(ahead):
            if found is not None and found.start() < position:
                ahead[part] = _next_match(part, text, position)


DIGEST_CHARS = 60


def provenance_free(entry: Entry) -> list[str]:
    """The entry's lines without its provenance lines (``Topic:``, ``Source:``, ...)."""
    kept = [entry.bullet_line()]
    for line in entry.body:
        name = line.strip().split(":", 1)[0].lower()
        if ":" in line and name in _FIELD_NAMES:
            continue
        kept.append(line)
    return kept


def digest(entry: Entry) -> str:
    """One line: the start of the entry's text, then every path, identifier and name of the
    rest of its text and lines, verbatim, each once."""
    text = " ".join(entry.text.split())
    body = " ".join(line.strip() for line in provenance_free(entry)[1:])
    head = text
    if len(text) > DIGEST_CHARS:
        cut = text.rfind(" ", 0, DIGEST_CHARS)
        head = text[: cut if cut > 0 else DIGEST_CHARS]
    rest = (text[len(head):] + " " + body).strip()
    keep: list[str] = []
    kept: set[str] = set()
    for match in _keep_matches(rest):
        word = match.group(0).rstrip(".,:;")
        if len(word) > 1 and word not in kept and word not in head:
            keep.append(word)
            kept.add(word)
    line = head + (" …" if rest else "")
    if keep:
        line += " [" + " ".join(keep) + "]"
    prefix = f"{entry.marker} [{entry.id}] " if entry.id else f"{entry.marker} "
    return prefix + line


def entry_lines(entry: Entry, step: int) -> list[str]:
    """The entry as shown at a compaction step (no lines once left out)."""
    if step == FULL:
        return entry.lines()
    if step == NO_PROVENANCE:
        return provenance_free(entry)
    if step == DIGEST:
        return [digest(entry)]
    return []


def render_scoped(note: Note, steps: dict[int, int]) -> str:
    """The note with each entry (by ``id()`` of its ``Entry``) at its step; the rest as written."""
    lines = list(note.preamble)
    for section in note.sections:
        lines.append(section.heading)
        for item in section.items:
            if isinstance(item, Entry):
                lines.extend(entry_lines(item, steps.get(id(item), FULL)))
            else:
                lines.append(item)
    return note.newline.join(lines)


def without(note: Note, left_out: set[int]) -> Note:
    """A shallow copy of ``note`` without the entries (by ``id()``) in ``left_out``."""
    from memcite.readpath.note_format import Section

    copy = Note(list(note.preamble), [], note.newline)
    for section in note.sections:
        kept = Section(section.heading, [item for item in section.items
                                         if not (isinstance(item, Entry) and id(item) in left_out)])
        copy.sections.append(kept)
    return copy
