"""A note (project, global or session scope) as text: parsed into entries without losing a byte,
rendered back the same way.

It lives in the read path, below the notes wing, because ``memcite instructions``
reads the scoped notes entry by entry; ``memcite.notes.model`` is its name for the
notes wing.

The file is the truth. ``parse_note`` keeps every line: the lines before the
first ``## `` heading (title, ``Project:``, ``Updated:`` and anything a person
wrote), each section's heading, its entries and its loose lines (paragraphs,
blank lines, sub-headings). ``render_note(parse_note(text)) == text`` for any
text. Only entries memcite creates or changes are rendered anew; the others keep
their original lines, and a hand-written entry is only given an id.

An entry is one bullet (``-``, ``*`` or ``+`` at the start of a line), its id in
brackets after the marker (``- [k3f9a2] text``), and the indented lines that follow
it without a blank line: provenance lines (``Topic:``, ``Date:``, ``Source:``,
``Evidence:``, ``Confidence:``, ``Tier:``, ``Expires:``, ``Via:``, ``Confirmed:``) and
anything else a person added, kept in order. ``Via:`` says through what the entry was
written (``cli``, ``mcp``, ``draft file``) and ``Confirmed:`` whether a person confirmed it
(``yes (--yes by ana, 2026-11-30)``) or not (``no (automatic)``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

TITLE = "# Project memory"
# Each scope's title, and the header line that says whose note it is (checked before a write).
SCOPE_TITLES = {"project": TITLE, "global": "# Global memory", "session": "# Session memory"}
OWNER_HEADERS = {"project": "Project", "global": "Scope", "session": "Session"}


def project_line_value(project: str) -> str:
    """A project's path as its ``Project:`` line says it: as it is, or as a JSON string
    (``"/home/me/a\\tb"``) when it holds a tab or starts or ends with white space, which
    the line could not keep (a tab shown raw, white space trimmed). A path starts with
    ``/``, never ``"``, so the two forms never meet."""
    if "\t" in project or project != project.strip():
        import json

        return json.dumps(project, ensure_ascii=False)
    return project


def project_from_line(value: str | None) -> str | None:
    """The project's path a ``Project:`` line's (trimmed) value names: the JSON string
    decoded, or the value as it is."""
    if value is None or len(value) < 2 or not (value.startswith('"') and value.endswith('"')):
        return value
    from memcite.untrusted import loads_json

    try:
        decoded = loads_json(value)
    except ValueError:
        return value
    return decoded if isinstance(decoded, str) else value
SECTIONS: dict[str, str] = {
    "decisions": "Durable decisions",
    "state": "Current state",
    "risks": "Risks and next steps",
}
FIELDS = ("Topic", "Date", "Source", "Evidence", "Confidence", "Tier", "Expires", "Via",
          "Confirmed")
VIAS = ("cli", "mcp", "draft file")
CONFIDENCES = ("HIGH", "MEDIUM", "LOW")
TIERS = ("CORE", "IMP", "SEC", "IRR")
ID_LENGTH = 6
_ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
_BULLET_RE = re.compile(r"([-*+]) (.*)\Z", re.DOTALL)
_ID_RE = re.compile(r"\[([0-9a-z]{6})\] ?(.*)\Z", re.DOTALL)
_FIELD_RE = re.compile(r"\s+([A-Za-z]+):[ \t]*(.*)\Z")


def is_entry_id(value: str) -> bool:
    """An entry id: six lower-case letters and digits, at least one of each."""
    return (len(value) == ID_LENGTH and all(c in _ID_ALPHABET for c in value)
            and any(c.isdigit() for c in value) and any(c.isalpha() for c in value))


def section_key(heading_text: str) -> str | None:
    """``decisions``, ``state`` or ``risks`` for one of the three headings (any case), else None."""
    wanted = heading_text.strip().casefold()
    for key, title in SECTIONS.items():
        if title.casefold() == wanted:
            return key
    return None


@dataclass
class Entry:
    """One bullet and its indented lines; ``raw`` is the bullet line as read (None once changed)."""

    text: str
    id: str | None = None
    marker: str = "-"
    body: list[str] = field(default_factory=list)
    raw: str | None = None

    def bullet_line(self) -> str:
        if self.raw is not None:
            return self.raw
        if self.id is None:
            return f"{self.marker} {self.text}"
        return f"{self.marker} [{self.id}] {self.text}"

    def lines(self) -> list[str]:
        return [self.bullet_line(), *self.body]

    def fields(self) -> dict[str, str]:
        """The provenance lines, by their canonical name (the first of each)."""
        found: dict[str, str] = {}
        for line in self.body:
            match = _FIELD_RE.match(line)
            if match:
                name = _canonical_field(match.group(1))
                if name and name not in found:
                    found[name] = match.group(2).strip()
        return found

    def get(self, name: str) -> str | None:
        return self.fields().get(name)

    def set_field(self, name: str, value: str) -> None:
        """Set one provenance line: replaced where it is, else added after the known ones."""
        line = f"  {name}: {value}"
        last_known = -1
        for index, existing in enumerate(self.body):
            match = _FIELD_RE.match(existing)
            if match and _canonical_field(match.group(1)) == name:
                self.body[index] = line
                return
            if match and _canonical_field(match.group(1)):
                last_known = index
        self.body.insert(last_known + 1, line)

    def content(self) -> str:
        """What the entry says, without its id: the hashed and compared form."""
        return "\n".join([self.text, *self.body])

    def content_hash(self) -> str:
        return hashlib.sha256(self.content().encode("utf-8", "surrogateescape")).hexdigest()


def _canonical_field(name: str) -> str | None:
    for known in FIELDS:
        if known.lower() == name.lower():
            return known
    return None


@dataclass
class Section:
    """A ``## `` heading and what follows it: entries and loose lines, in order."""

    heading: str
    items: list[Entry | str] = field(default_factory=list)
    key: str | None = field(init=False)  # decisions, state, risks, or None

    def __post_init__(self) -> None:
        self.key = section_key(self.heading[3:])

    def entries(self) -> list[Entry]:
        return [item for item in self.items if isinstance(item, Entry)]

    def add(self, entry: Entry) -> None:
        """Add after the section's last entry, else right under the heading."""
        last = max((i for i, item in enumerate(self.items) if isinstance(item, Entry)), default=-1)
        self.items.insert(last + 1, entry)


@dataclass
class Note:
    """A whole note: the lines before the first section, then the sections."""

    preamble: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    newline: str = "\n"

    # ----------------------------------------------------------------- header lines

    def header(self, name: str) -> str | None:
        """The value of the first preamble line ``name: value`` (at the start of a line)."""
        for line in self.preamble:
            if line.startswith(f"{name}:"):
                return line[len(name) + 1:].strip()
        return None

    def owner(self, scope: str) -> str | None:
        """Whose note it is, by its scope's header line (``Project:``, ``Scope:``, ``Session:``)."""
        value = self.header(OWNER_HEADERS[scope])
        return project_from_line(value) if scope == "project" else value

    def set_header(self, name: str, value: str) -> None:
        """Replace the ``name:`` line, or add it after the other header lines (or the title)."""
        for index, line in enumerate(self.preamble):
            if line.startswith(f"{name}:"):
                self.preamble[index] = f"{name}: {value}"
                return
        anchor = -1
        for index, line in enumerate(self.preamble):
            if line.startswith(("Project:", "Scope:", "Session:", "Updated:")) or (
                    anchor == -1 and line.startswith("# ")):
                anchor = index
        if anchor == -1:
            self.preamble[:0] = [TITLE, ""]
            anchor = 0
        insert_at = anchor + 1
        if self.preamble[anchor].startswith("# "):
            # a blank line between the title and the header lines
            if insert_at >= len(self.preamble) or self.preamble[insert_at] != "":
                self.preamble.insert(insert_at, "")
            insert_at += 1
        self.preamble.insert(insert_at, f"{name}: {value}")

    @property
    def project(self) -> str | None:
        return project_from_line(self.header("Project"))

    @property
    def updated(self) -> str | None:
        return self.header("Updated")

    # ----------------------------------------------------------------- entries

    def section(self, key: str, *, create: bool = False) -> Section | None:
        for section in self.sections:
            if section.key == key:
                return section
        if not create:
            return None
        section = Section(f"## {SECTIONS[key]}", [""])
        if self.sections:
            last = self.sections[-1].items
            if not last or last[-1] != "":
                last.append("")
        elif self.preamble and self.preamble[-1] != "":
            self.preamble.append("")
        self.sections.append(section)
        return section

    def entries(self) -> list[tuple[str | None, Entry]]:
        """Every entry with its section's key (None: a section of the person's own)."""
        return [(section.key, entry) for section in self.sections for entry in section.entries()]

    def find(self, entry_id: str) -> tuple[Section, Entry] | None:
        for section in self.sections:
            for entry in section.entries():
                if entry.id == entry_id:
                    return section, entry
        return None

    def remove(self, entry_id: str) -> Entry | None:
        found = self.find(entry_id)
        if found is None:
            return None
        section, entry = found
        section.items.remove(entry)
        return entry

    def ids(self) -> set[str]:
        return {entry.id for _, entry in self.entries() if entry.id}


# --------------------------------------------------------------------------- parse and render


def parse_note(text: str) -> Note:
    """Read a note; never fails, never drops a line (``render_note`` gives ``text`` back)."""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    note = Note(newline=newline)
    current: Section | None = None
    entry: Entry | None = None
    for line in lines:
        if line.startswith("## "):
            current = Section(line)
            note.sections.append(current)
            entry = None
            continue
        if current is None:
            note.preamble.append(line)
            continue
        if entry is not None and line[:1] in (" ", "\t") and line.strip():
            entry.body.append(line)
            continue
        bullet = _BULLET_RE.match(line)
        if bullet:
            entry = _entry_from_bullet(line, bullet.group(1), bullet.group(2))
            current.items.append(entry)
            continue
        entry = None
        current.items.append(line)
    _drop_duplicate_ids(note)
    return note


def _entry_from_bullet(line: str, marker: str, rest: str) -> Entry:
    match = _ID_RE.match(rest)
    if match and is_entry_id(match.group(1)):
        return Entry(text=match.group(2), id=match.group(1), marker=marker, raw=line)
    return Entry(text=rest, marker=marker, raw=line)


def _drop_duplicate_ids(note: Note) -> None:
    """A second entry with an id already seen (a copied line) counts as new: it gets its own id."""
    seen: set[str] = set()
    for _, entry in note.entries():
        if entry.id in seen:
            entry.id = None  # its line stays as written until it is given an id
        elif entry.id:
            seen.add(entry.id)


def render_note(note: Note) -> str:
    lines = list(note.preamble)
    for section in note.sections:
        lines.append(section.heading)
        for item in section.items:
            lines.extend(item.lines() if isinstance(item, Entry) else [item])
    return note.newline.join(lines)


def new_note(project: str, updated: str, *, scope: str = "project") -> Note:
    """An empty note with the title, its owner line (``Project:`` the project's path, ``Scope:
    global`` or ``Session:`` the session id, given as ``project``), ``Updated:`` and the three
    sections."""
    owner = project_line_value(project) if scope == "project" else project
    return parse_note(
        f"{SCOPE_TITLES[scope]}\n\n{OWNER_HEADERS[scope]}: {owner}\nUpdated: {updated}\n\n"
        + "\n".join(f"## {title}\n" for title in SECTIONS.values())
    )


def new_entry_id(seed: str, taken: set[str]) -> str:
    """A short id derived from ``seed``, not in ``taken``, with a letter and a digit."""
    counter = 0
    while True:
        digest = int.from_bytes(hashlib.sha256(f"{seed}\0{counter}".encode(
            "utf-8", "surrogateescape")).digest()[:8], "big")
        chars = []
        for _ in range(ID_LENGTH):
            digest, index = divmod(digest, len(_ID_ALPHABET))
            chars.append(_ID_ALPHABET[index])
        candidate = "".join(chars)
        if is_entry_id(candidate) and candidate not in taken:
            return candidate
        counter += 1


def assign_ids(note: Note, taken: set[str] | None = None) -> list[Entry]:
    """Give every entry without an id one; return those entries (hand-written ones, adopted)."""
    used = note.ids() | (taken or set())
    adopted = []
    for key, entry in note.entries():
        if entry.id is None:
            entry.id = new_entry_id(f"{key}\0{entry.content()}", used)
            entry.raw = None
            used.add(entry.id)
            adopted.append(entry)
    return adopted


def normalized_text(text: str) -> str:
    """How two entries' texts are compared: case and runs of spaces ignored."""
    return " ".join(text.split()).casefold()
