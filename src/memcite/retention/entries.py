"""The entries of a memory file: tier, provenance lines, supersession, id and title, with line numbers.

One reading shared by ``memcite lint``, usage per entry and retention, for Codex's
``MEMORY.md`` and for memcite's own notes (which have the same shape: headings,
then one bullet per entry). An entry is a top-level bullet, or a paragraph, under
a heading. It may open with a tier prefix (``[CORE]``, ``[IMP]``, ``[SEC]``,
``[IRR]``, after the bullet marker if any) and be followed by indented lines
``Source:``, ``Evidence:``, ``Confidence:``, ``superseded_by:``, ``Tier:``,
``Expires:`` or ``Id:``. Fenced code is never read as entries. Pure functions of
the text: nothing here opens a file.
"""

from __future__ import annotations

import re

from memcite.value_classes import FrozenSlots, Slots

TIERS = ("CORE", "IMP", "SEC", "IRR")
# Relevance weights per tier (``None``: no tier).
IMPORTANCE: dict[str | None, float] = {"CORE": 1.0, "IMP": 0.7, "SEC": 0.4, "IRR": 0.1, None: 0.5}
CONFIDENCE_LEVELS = ("HIGH", "MEDIUM", "LOW")
# The long names a person may write instead of the prefixes.
_TIER_LONG_NAMES = {"IMPORTANT": "IMP", "SECONDARY": "SEC", "IRRELEVANT": "IRR"}
# Lines under a heading that describe the heading, not an entry (Codex's task groups, notes' headers).
HEADING_FIELDS = ("applies_to", "project", "updated")

_FIELD_KEYS = {
    "source": "source",
    "evidence": "evidence",
    "confidence": "confidence",
    "superseded_by": "superseded_by",
    "superseded-by": "superseded_by",
    "superseded by": "superseded_by",
    "supersededby": "superseded_by",
    "tier": "tier",
    "expires": "expires",
    "id": "id",
}
# Each pattern below is linear in the line: no lazy group before a run of spaces, and a run
# of spaces tried from its start only ((?<![ \t])), since a long run made them quadratic.
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*)$")  # the title: group 2 less its trailing " \t#"
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_BULLET = re.compile(r"^([-*+]|\d{1,9}[.)])[ \t]+")
_FIELD = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+)?(?:\*\*|__)?(?P<key>source|evidence|confidence|superseded[_ -]?by|tier"
    r"|expires|id)(?:\*\*|__)?[ \t]*:(?:\*\*|__)?[ \t]*(?P<value>.*)$",  # value: less trailing " \t"
    re.IGNORECASE,
)
_HEADING_FIELD = re.compile(r"^(?P<key>applies_to|project|updated)[ \t]*:", re.IGNORECASE)
_PREFIX = re.compile(r"^\[(?P<tag>[A-Za-z]{2,12})\](?=[ \t]|$)")
# Compiled at its first use (``re``'s cache): few lines hold a comment, and folding case costs.
_ID_COMMENT = r"<!--[ \t]*id[ \t]*:[ \t]*(?P<id>[A-Za-z0-9_-]{2,40})[ \t]*-->"
_ID_BRACES = re.compile(r"(?<![ \t])[ \t]*\{#(?P<id>[A-Za-z0-9_-]{2,40})\}[ \t]*$")
# memcite's own notes open an entry with its id in brackets: ``- [k3f9a2] text``.
_NOTE_ID = re.compile(r"^\[(?P<id>(?=[a-z]*\d)(?=\d*[a-z])[0-9a-z]{6})\](?:[ \t]+|$)")
_ID_LEADING = re.compile(r"^`(?P<id>(?=[a-z0-9-]*\d)[a-z0-9][a-z0-9-]{3,15})`(?:[ \t]+|$)")
_DECISION = re.compile(r"(?:^|(?<=[\s*_(]))Decision[ \t]*:(?:\*\*|__)?[ \t]*(?P<text>.+)$",
                       re.IGNORECASE)
_DECISION_TAIL = re.compile(r"(?<![ \t])[ \t]+—[ \t]+")  # `Decision: x — why`: the why is cut
_TRAILING_DATE = re.compile(r"(?<![ \t])[ \t]*[\[(]\d{4}-\d\d-\d\d[\])]$")


_set = object.__setattr__  # how the frozen values below set their fields in __init__


class EntryField(FrozenSlots):
    """One provenance or supersession line under an entry: ``key`` is normalised (``superseded_by``)."""

    __slots__ = ("key", "value", "line", "column")
    _fields = _compared = __slots__

    def __init__(self, key: str, value: str, line: int, column: int) -> None:
        _set(self, "key", key)
        _set(self, "value", value)
        _set(self, "line", line)
        _set(self, "column", column)  # where the key starts, 1-based


class TierMark(FrozenSlots):
    """The bracketed word an entry opens with (``[CORE]``, or a misspelling such as ``[CROE]``)."""

    __slots__ = ("tag", "line", "column")
    _fields = _compared = __slots__

    def __init__(self, tag: str, line: int, column: int) -> None:
        _set(self, "tag", tag)  # as written, without brackets
        _set(self, "line", line)
        _set(self, "column", column)


class Entry(FrozenSlots):
    """One entry of a memory file, with where it is and what it says about itself."""

    __slots__ = ("line_start", "line_end", "text", "body", "heading", "headings", "mark",
                 "entry_id", "fields", "title", "decision")
    _fields = _compared = __slots__

    def __init__(self, line_start: int, line_end: int, text: str, body: str,
                 heading: str | None, headings: tuple[str, ...], mark: TierMark | None = None,
                 entry_id: str | None = None, fields: tuple[EntryField, ...] = (),
                 title: str = "", decision: str | None = None) -> None:
        _set(self, "line_start", line_start)  # first line, 1-based
        _set(self, "line_end", line_end)  # last line, provenance lines included
        _set(self, "text", text)  # the first line after the bullet marker, tier prefix and id
        # every line of the entry that is not a provenance line, markers removed
        _set(self, "body", body)
        _set(self, "heading", heading)  # the nearest heading above
        _set(self, "headings", headings)  # every heading above, outermost first
        _set(self, "mark", mark)
        _set(self, "entry_id", entry_id)
        _set(self, "fields", fields)
        # its name for ``superseded_by:``: the text up to the first `` — ``
        _set(self, "title", title)
        # its ``Decision: …`` text, or its title under a decisions heading
        _set(self, "decision", decision)

    @property
    def tier(self) -> str | None:
        """The entry's tier: the prefix when it is a known one, else a known ``Tier:`` value."""
        if self.mark is not None and self.mark.tag in TIERS:
            return self.mark.tag
        for item in self.fields:
            if item.key == "tier" and item.value.strip() in TIERS:
                return item.value.strip()
        return None

    @property
    def importance(self) -> float:
        return IMPORTANCE[self.tier]

    def values(self, key: str) -> list[EntryField]:
        """The entry's lines of one key (``source``, ``superseded_by``, ...), in file order."""
        return [item for item in self.fields if item.key == key]

    @property
    def superseded_by(self) -> list[str]:
        return [item.value for item in self.fields if item.key == "superseded_by" and item.value]


def entry_decision(text: str, heading: str | None) -> str | None:
    """The decision an entry states: its ``Decision: …`` text, or its title under a decisions heading."""
    if ":" in text:
        match = _DECISION.search(text)
        if match:
            decision = match.group("text")
            tail = _DECISION_TAIL.search(decision, 1)
            return (decision if tail is None else decision[:tail.start()]).strip()
    if heading and "decision" in heading.lower():
        return entry_title(text) or None
    return None


def entry_title(text: str) -> str:
    """``text`` up to the first `` — `` (an em dash between spaces), stripped."""
    return text.split(" — ", 1)[0].strip()


def normalize_name(text: str) -> str:
    """The form titles, decisions and ``superseded_by:`` values are compared in.

    Case-folded, Markdown emphasis and quotes removed, spaces collapsed, a leading
    ``Decision:``, a trailing date in brackets and trailing punctuation dropped.
    """
    name = text.strip().strip("\"'`").strip()
    name = re.sub(r"[`*_]+", "", name) if any(c in name for c in "`*_") else name
    if name[:9].lower() == "decision:":
        name = name[9:]
    name = _TRAILING_DATE.sub("", name.strip())
    name = " ".join(name.split()).casefold()
    return name.rstrip(".;:,!").strip()


def tier_suggestion(tag: str) -> str | None:
    """The tier a misspelt or mis-cased prefix most likely means, or None if ``tag`` looks like no tier.

    ``CROE`` → ``CORE``, ``core`` → ``CORE``, ``IMPORTANT`` → ``IMP``; ``WIP`` → None.
    """
    upper = tag.upper()
    if upper in _TIER_LONG_NAMES:
        return _TIER_LONG_NAMES[upper]
    if upper in TIERS:
        return upper if tag != upper else None
    for tier in (*TIERS, *_TIER_LONG_NAMES):
        if len(upper) >= 3 and _one_edit_apart(upper, tier):
            return _TIER_LONG_NAMES.get(tier, tier)
    return None


def _one_edit_apart(a: str, b: str) -> bool:
    """Whether one substitution, insertion, deletion or swap of neighbours turns ``a`` into ``b``."""
    if a == b:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] \
            and a[diff[1]] == b[diff[0]]
    if abs(len(a) - len(b)) != 1:
        return False
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def _opening(rest: str, line: int, column: int) -> tuple[TierMark | None, str | None, str]:
    """Split an entry's first line (after the bullet) into its tier mark, its id and its text."""
    mark = None
    entry_id = None
    note_id = _NOTE_ID.match(rest) if rest[:1] == "[" else None
    if note_id:
        entry_id = note_id.group("id")
        column += note_id.end()
        rest = rest[note_id.end():]
    prefix = _PREFIX.match(rest)
    if prefix and prefix.group("tag").upper() != "X":
        mark = TierMark(prefix.group("tag"), line, column)
        consumed = prefix.end()
        column += consumed
        rest = rest[consumed:].lstrip(" \t")
    leading = _ID_LEADING.match(rest)
    if leading:
        entry_id = entry_id or leading.group("id")
        column += leading.end()
        rest = rest[leading.end():]
        prefix = None if mark else _PREFIX.match(rest)  # the id may come first: - `a1b2` [CORE] text
        if prefix:
            mark = TierMark(prefix.group("tag"), line, column)
            rest = rest[prefix.end():].lstrip(" \t")
    comment = re.search(_ID_COMMENT, rest, re.IGNORECASE) if "<!--" in rest else None
    if comment:
        entry_id = entry_id or comment.group("id")
        rest = (rest[: comment.start()] + rest[comment.end():]).strip()
    braces = _ID_BRACES.search(rest) if rest.rstrip().endswith("}") else None
    if braces:
        entry_id = entry_id or braces.group("id")
        rest = rest[: braces.start()]
    return mark, entry_id, rest.strip()


class _Open(Slots):
    """An entry being read: its lines so far."""

    __slots__ = ("line_start", "line_end", "text", "body", "mark", "entry_id", "fields",
                 "is_paragraph", "blank_after")
    _fields = __slots__

    def __init__(self, line_start: int, line_end: int, text: str, body: list[str],
                 mark: TierMark | None, entry_id: str | None, fields: list[EntryField],
                 is_paragraph: bool, blank_after: bool = False) -> None:
        self.line_start = line_start
        self.line_end = line_end
        self.text = text
        self.body = body
        self.mark = mark
        self.entry_id = entry_id
        self.fields = fields
        self.is_paragraph = is_paragraph
        self.blank_after = blank_after

    def close(self, headings: tuple[str, ...]) -> Entry:
        entry_id = self.entry_id
        if entry_id is None:
            ids = [item.value for item in self.fields if item.key == "id" and item.value]
            entry_id = ids[0] if ids else None
        heading = headings[-1] if headings else None
        return Entry(
            line_start=self.line_start,
            line_end=self.line_end,
            text=self.text,
            body="\n".join(self.body),
            heading=heading,
            headings=headings,
            mark=self.mark,
            entry_id=entry_id,
            fields=tuple(self.fields),
            title=entry_title(self.text),
            decision=entry_decision(self.text, heading),
        )


def _field(line: str, number: int) -> EntryField | None:
    match = _FIELD.match(line)
    if match is None:
        return None
    key = _FIELD_KEYS.get(match.group("key").lower())
    if key is None:
        return None
    return EntryField(key, match.group("value").rstrip(" \t"), number, match.start("key") + 1)


def text_lines(text: str) -> list[str]:
    """Rust's ``str::lines``, the numbering Codex's citations use: split on LF only, one CR
    before it dropped, no empty last line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


# the heading under which Codex's MEMORY.md lists the rollout summaries a section came from
SOURCE_LIST = "rollout_summary_files"


def read_entries(text: str) -> list[Entry]:
    """Every entry of a memory file's ``text``, in file order (see the module's docstring)."""
    entries: list[Entry] = []
    headings: list[tuple[int, str]] = []
    current: _Open | None = None
    fence: str | None = None
    fence_in_entry = False

    def close() -> None:
        nonlocal current
        if current is not None:
            entries.append(current.close(tuple(title for _, title in headings)))
            current = None

    for number, raw in enumerate(text_lines(text), start=1):
        line = raw.rstrip()
        if fence is not None:
            if _FENCE.match(line) and line.strip().startswith(fence):
                fence = None
            if fence_in_entry and current is not None:
                current.line_end = number
            continue
        opening_fence = _FENCE.match(line)
        if opening_fence:
            fence = opening_fence.group(1)[0] * 3
            fence_in_entry = current is not None and line[:1] in (" ", "\t")
            if fence_in_entry:
                current.line_end = number
            else:
                close()
            continue
        if not line.strip():
            if current is not None:
                if current.is_paragraph:
                    close()
                else:
                    current.blank_after = True
            continue
        heading = _HEADING.match(line)
        if heading:
            close()
            level = len(heading.group(1))
            while headings and headings[-1][0] >= level:
                headings.pop()
            headings.append((level, heading.group(2).rstrip(" \t#").strip()))
            continue
        indented = line[:1] in (" ", "\t")
        if indented:
            if current is None:
                continue  # indented text under no entry: a code block or stray continuation
            found = _field(line, number)
            if found is not None:
                current.fields.append(found)
            else:
                current.body.append(line.strip())
            current.line_end = number
            current.blank_after = False
            continue
        bullet = _BULLET.match(line)
        if bullet and headings and headings[-1][1].lower().rstrip(": ") == SOURCE_LIST:
            close()  # Codex's list of a section's sources: no entry of knowledge
            continue
        if bullet:
            close()
            mark, entry_id, rest = _opening(line[bullet.end():], number, bullet.end() + 1)
            current = _Open(number, number, rest, [rest], mark, entry_id, [], is_paragraph=False)
            continue
        if _PREFIX.match(line):
            close()
            mark, entry_id, rest = _opening(line, number, 1)
            current = _Open(number, number, rest, [rest], mark, entry_id, [], is_paragraph=True)
            continue
        if current is None and _HEADING_FIELD.match(line):
            continue
        if current is not None and not current.blank_after:
            found = _field(line, number)
            if found is not None:
                current.fields.append(found)
            else:
                current.body.append(line.strip())
            current.line_end = number
            continue
        close()
        mark, entry_id, rest = _opening(line, number, 1)
        current = _Open(number, number, rest, [rest], mark, entry_id, [], is_paragraph=True)
    close()
    return entries


__all__ = [
    "CONFIDENCE_LEVELS",
    "HEADING_FIELDS",
    "IMPORTANCE",
    "TIERS",
    "Entry",
    "EntryField",
    "TierMark",
    "entry_decision",
    "entry_title",
    "normalize_name",
    "read_entries",
    "text_lines",
    "tier_suggestion",
]
