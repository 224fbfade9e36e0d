"""Exporting a scope's note and event log as JSON Lines, and importing such a file back.

An export is one header line, then one line per note entry and one per event, each a JSON
object naming its ``kind`` (``header``, ``entry``, ``event``), its ``scope`` and its ``owner``
(the project's canonical path, ``global``, or the session id: whose note it came from):

- the header: ``format`` (``memcite-notes``), ``version`` (``FORMAT_VERSION``), memcite's
  version, when, and how many entries and events follow;
- an entry: its id (null for a hand-written entry never given one), section key (null for
  a section of the person's own), text, ``body`` (its indented lines as stored: provenance
  and anything else) and ``fields`` (the provenance lines by name, for reading);
- an event: its id, and under ``event`` the event as the log stores it (``Event.to_json``).

An import reads such a file as untrusted input: every line is checked on its own, a bad one
is reported with its number and the rest go on. Entries are saved through
``operations.save_entries`` (the secret and personal-data refusals, the lock, the atomic
write, the change log); events are appended to the log under the same lock, never
rewriting it. Deduplicated: an entry whose id is already in the note, or whose text
(case and spacing aside) already is, is skipped; an event whose id is already in the log,
or with the same kind, text, files and ``supersedes``, is skipped. A line whose owner is
not the note it would go into here (another project, another session) is refused unless
``other_project``: then it goes into this project's (this session's) note, its original
owner kept in its provenance. Each item imported records where it came from: an
``Imported:`` line on an entry (with its original ``Date:``, ``Via:`` and ``Confirmed:``),
an ``imported`` list in an event's provenance.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field

from memcite.errors import InputError
from memcite.notes import storage
from memcite.notes.model import SECTIONS, Entry, is_entry_id, normalized_text
from memcite.notes.refusals import NoteRefusal
from memcite.notes.storage import NoteLocation, locate_note
from memcite.times import iso_utc as _iso
from memcite.untrusted import loads_json

FORMAT = "memcite-notes"
FORMAT_VERSION = 1
MAX_LINE_BYTES = 256 * 1024
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_BODY_LINES = 200
_DRAFT_FIELDS = ("Topic", "Source", "Evidence", "Confidence", "Tier", "Expires")
_KEPT_FIELDS = ("Date", "Via", "Confirmed")  # replaced on import: kept in the Imported: line
_ENTRY_KEYS = {"kind", "scope", "owner", "id", "section", "text", "body", "fields"}
_EVENT_KEYS = {"kind", "scope", "owner", "id", "event"}
_FIELD_LINE = re.compile(r"\s+([A-Za-z]+):[ \t]*(.*)\Z")


def _dumps(value: dict) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


# --------------------------------------------------------------------------- export


@dataclass
class Export:
    location: NoteLocation
    lines: list[str]  # each one JSON object, without its newline
    entries: int
    events: int


def export_scope(location: NoteLocation, *, now: float) -> Export:
    """The scope's note and event log as export lines (read-only; a note that is not this
    scope's is refused, as ``recall`` refuses it)."""
    from memcite import __version__
    from memcite.notes import operations
    from memcite.notes.events import read_events

    note = operations.read_note(location)
    owner = location.owner
    head = {"scope": location.scope, "owner": owner}
    body: list[str] = []
    entries = note.entries() if note is not None else []
    for key, entry in entries:
        body.append(_dumps({"kind": "entry", **head, "id": entry.id, "section": key,
                            "text": entry.text, "body": list(entry.body),
                            "fields": entry.fields()}))
    events = read_events(location)
    for event in events:
        body.append(_dumps({"kind": "event", **head, "id": event.id, "event": event.to_json()}))
    header = _dumps({"kind": "header", "format": FORMAT, "version": FORMAT_VERSION,
                     "memcite": __version__, "exported_at": int(now),
                     "exported_at_iso": _iso(now), **head, "entries": len(entries),
                     "events": len(events)})
    return Export(location, [header, *body], len(entries), len(events))


# --------------------------------------------------------------------------- import


class LineRefused(Exception):
    """One line not taken: ``reason`` a short word, ``message`` what a person reads."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass
class ImportResult:
    source: str
    dry_run: bool
    header: dict
    outcomes: list[dict] = field(default_factory=list)  # one per line after the header
    tightened: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        found = {"imported": 0, "skipped": 0, "refused": 0}
        for outcome in self.outcomes:
            found[outcome["action"]] += 1
        return found


def import_export(data: bytes, *, source: str, cwd: str, home: str, session: str | None,
                  conn: sqlite3.Connection | None, now: float, today: str,
                  dry_run: bool = False, other_project: bool = False,
                  yes: bool = False) -> ImportResult:
    """Import the lines of an export (``data``, named ``source`` in provenance and messages).

    A file that is not an export at all (not UTF-8, too large, no header line, a format
    version this memcite does not know) raises ``InputError``; anything wrong with one line
    is that line's outcome (``refused``), and the others go on. ``conn`` (the change log)
    may be None only for a dry run.
    """
    if len(data) > MAX_FILE_BYTES:
        raise InputError(f"{source}: larger than {MAX_FILE_BYTES} bytes; not an export memcite "
                         "reads")
    if not dry_run and conn is None:
        raise ValueError("an import needs the database for the note's change log")
    lines = data.split(b"\n")
    numbered = [(number, line) for number, line in enumerate(lines, start=1) if line.strip()]
    if not numbered:
        raise InputError(f"{source}: empty; not a memcite export",
                         hint="memcite note export > FILE writes one")
    first_number, first = numbered[0]
    header = _header(first, source, first_number)
    result = ImportResult(source, dry_run, header)
    state = _State(source=source, cwd=cwd, home=home, session=session, conn=conn, now=now,
                   today=today, dry_run=dry_run, other_project=other_project, yes=yes)
    for number, line in numbered[1:]:
        outcome = {"line": number, "kind": None, "scope": None, "id": None}
        try:
            raw = _parse_line(line)
            outcome.update(kind=raw.get("kind") if isinstance(raw.get("kind"), str) else None,
                           scope=raw.get("scope") if isinstance(raw.get("scope"), str) else None,
                           id=raw.get("id") if isinstance(raw.get("id"), str) else None)
            action, reason, message, entry_id = state.take(raw)
            outcome.update(action=action, reason=reason, message=message)
            if entry_id:
                outcome["id"] = entry_id
        except LineRefused as refused:
            outcome.update(action="refused", reason=refused.reason, message=refused.message)
        except NoteRefusal as refusal:
            outcome.update(action="refused", reason=refusal.reason,
                           message=refusal.message.split(". Nothing")[0])
        except InputError as error:
            outcome.update(action="refused", reason="invalid", message=error.message)
        result.outcomes.append(outcome)
    result.tightened = state.finish()
    return result


def _header(line: bytes, source: str, number: int) -> dict:
    where = f"{source}: line {number}"
    if len(line) > MAX_LINE_BYTES:
        raise InputError(f"{where}: longer than {MAX_LINE_BYTES} bytes; not a memcite export")
    try:
        raw = loads_json(line.decode("utf-8"))
    except ValueError:  # not UTF-8, not JSON, nested too deeply
        raw = None
    if not isinstance(raw, dict) or raw.get("kind") != "header" or raw.get("format") != FORMAT:
        raise InputError(f"{where}: not the header of a memcite export (the first line says "
                         f"format {FORMAT!r})", hint="memcite note export > FILE writes one")
    version = raw.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(f"{where}: the header's version is not a whole number")
    if version > FORMAT_VERSION:
        raise InputError(f"{where}: format version {version}, newer than this memcite reads "
                         f"({FORMAT_VERSION})", hint="upgrade memcite")
    return {key: raw[key] for key in ("format", "version", "memcite", "exported_at",
                                      "exported_at_iso", "scope", "owner", "entries", "events")
            if key in raw and isinstance(raw[key], (str, int)) and not isinstance(raw[key], bool)}


def _parse_line(line: bytes) -> dict:
    if len(line) > MAX_LINE_BYTES:
        raise LineRefused("too-long", f"longer than {MAX_LINE_BYTES} bytes; not read")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise LineRefused("invalid", "not UTF-8") from None
    try:
        raw = loads_json(text)
    except ValueError as exc:
        raise LineRefused("invalid", f"not JSON ({str(exc).split(':')[0]})") from None
    if not isinstance(raw, dict):
        raise LineRefused("invalid", "not a JSON object")
    return raw


def _string(raw: dict, key: str, *, optional: bool = False, one_line: bool = True) -> str | None:
    value = raw.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise LineRefused("invalid", f"{key!r} is not a non-empty string")
    if "\0" in value or (one_line and ("\n" in value or "\r" in value)):
        raise LineRefused("invalid", f"{key!r} holds a control character")
    return value


@dataclass
class _State:
    source: str
    cwd: str
    home: str
    session: str | None
    conn: sqlite3.Connection | None
    now: float
    today: str
    dry_run: bool
    other_project: bool
    yes: bool
    locations: dict = field(default_factory=dict)
    event_targets: set = field(default_factory=set)
    # what this batch has taken so far, per note folder (a dry run writes nothing to read back)
    seen_ids: dict = field(default_factory=dict)
    seen_texts: dict = field(default_factory=dict)
    seen_events: dict = field(default_factory=dict)
    tightened: list = field(default_factory=list)

    # ------------------------------------------------------------------ shared

    def _stamp(self) -> str:
        return f"from {self.source} at {_iso(self.now)}"

    def _target(self, raw: dict) -> tuple[NoteLocation, str]:
        scope = _string(raw, "scope")
        owner = _string(raw, "owner")
        if scope not in ("project", "global", "session"):
            raise LineRefused("invalid", f"scope {scope!r} is not one of global, project, "
                              "session")
        session = self.session if scope == "session" else None
        if scope == "session" and not session:
            raise LineRefused("no-session", "a session's line, and no session named here "
                              "(pass --session ID or set MEMCITE_SESSION)")
        key = (scope, session)
        if key not in self.locations:
            self.locations[key] = locate_note(self.cwd, self.home, scope=scope, session=session)
        location = self.locations[key]
        if owner != location.owner and not self.other_project:
            whose = {"project": "another project", "session": "another session",
                     "global": "not the global note"}[scope]
            raise LineRefused("other-project", f"from {whose} ({_shown(owner)}), not "
                              f"{_shown(location.owner)}; pass --other-project to import it "
                              "here")
        return location, owner

    def take(self, raw: dict) -> tuple[str, str | None, str, str | None]:
        kind = raw.get("kind")
        if kind == "entry":
            return self._entry(raw)
        if kind == "event":
            return self._event(raw)
        if kind == "header":
            raise LineRefused("invalid", "a second header line")
        raise LineRefused("invalid", f"kind {_shown(str(kind))} is not entry or event")

    # ------------------------------------------------------------------ entries

    def _entry(self, raw: dict):
        from memcite.notes import operations

        unknown = sorted(set(raw) - _ENTRY_KEYS)
        if unknown:
            raise LineRefused("invalid", f"unknown keys: {', '.join(map(_shown, unknown[:5]))}")
        entry_id = _string(raw, "id", optional=True)
        if entry_id is not None and not is_entry_id(entry_id):
            raise LineRefused("invalid", f"id {_shown(entry_id)} is not an entry id")
        section = raw.get("section")
        if section is None:
            raise LineRefused("invalid", "an entry outside the three sections (a section of "
                              "the person's own); add it by hand")
        if section not in SECTIONS:
            raise LineRefused("invalid", f"section {_shown(str(section))} is not one of "
                              f"{', '.join(SECTIONS)}")
        text = _string(raw, "text")
        body = raw.get("body", [])
        if not isinstance(body, list) or len(body) > MAX_BODY_LINES or not all(
                isinstance(line, str) and line[:1] in (" ", "\t") and line.strip()
                and not any(c in line for c in "\0\r\n") for line in body):
            raise LineRefused("invalid", f"'body' is not a list of at most {MAX_BODY_LINES} "
                              "indented lines")
        if raw.get("fields") is not None and not isinstance(raw.get("fields"), dict):
            raise LineRefused("invalid", "'fields' is not an object")
        location, owner = self._target(raw)
        folder = location.project_dir
        parsed = Entry(text=text, id=entry_id, body=list(body))
        fields = parsed.fields()
        kept = []
        for line in body:
            match = _FIELD_LINE.match(line)
            name = match.group(1).capitalize() if match else None
            if name in _DRAFT_FIELDS or name in _KEPT_FIELDS:
                continue
            kept.append(line)
        original = "; ".join(f"{name.lower()} {fields[name]}" for name in _KEPT_FIELDS
                             if fields.get(name))
        imported = f"  Imported: {self._stamp()}" + (
            f" (owner {owner})" if owner != location.owner else "") + (
            f"; {original}" if original else "")
        draft = operations.EntryDraft(
            section=section, text=text, topic=fields.get("Topic"), source=fields.get("Source"),
            evidence=fields.get("Evidence"), confidence=fields.get("Confidence"),
            tier=fields.get("Tier"), expires=fields.get("Expires"), id=entry_id,
            body=[*kept, imported])
        # dedup: by id, then by text, against the note here and this batch
        note = operations.read_note(location)
        ids = (note.ids() if note else set()) | self.seen_ids.setdefault(folder, set())
        texts = {normalized_text(entry.text) for _, entry in (note.entries() if note else [])}
        texts |= self.seen_texts.setdefault(folder, set())
        if entry_id is not None and entry_id in ids:
            same = note is not None and note.find(entry_id) is not None and normalized_text(
                note.find(entry_id)[1].text) == normalized_text(text)
            return ("skipped", "same-id", "already there" if same or note is None else
                    "an entry with this id is already there (with other text); it is kept",
                    entry_id)
        if normalized_text(text) in texts:
            return "skipped", "same-text", "an entry with the same text is already there", None
        confirmed_by = "--yes" if self.yes else None
        if self.dry_run:
            result = operations.save_entries(location, [draft], today=self.today, now=self.now,
                                             conn=None, dry_run=True, via="draft file",
                                             confirmed_by=confirmed_by, command="import")
            if result.questions and not self.yes:
                raise NoteRefusal("needs-confirmation", "needs a person's confirmation: "
                                  + "; ".join(result.questions) + " (pass --yes)")
            message = "would be imported"
        else:
            result = operations.save_entries(location, [draft], today=self.today, now=self.now,
                                             conn=self.conn, via="draft file",
                                             confirmed_by=confirmed_by, command="import")
            self.tightened += result.tightened
            message = "imported"
        taken = result.outcomes[0]["id"] if result.outcomes else entry_id
        if taken:
            self.seen_ids[folder].add(taken)
        self.seen_texts[folder].add(normalized_text(text))
        return "imported", None, message + f" into the {location.scope} note", taken

    # ------------------------------------------------------------------ events

    def _event(self, raw: dict):
        from memcite.notes import checks, events
        from memcite.notes.events import Event, read_events

        unknown = sorted(set(raw) - _EVENT_KEYS)
        if unknown:
            raise LineRefused("invalid", f"unknown keys: {', '.join(map(_shown, unknown[:5]))}")
        stored = raw.get("event")
        if not isinstance(stored, dict):
            raise LineRefused("invalid", "'event' is not an object")
        if stored.get("id") != raw.get("id"):
            raise LineRefused("invalid", "the line's id is not its event's")
        epoch = stored.get("epoch")
        if not isinstance(epoch, int) or isinstance(epoch, bool) or not 0 <= epoch < 2 ** 40:
            raise LineRefused("invalid", "'epoch' is not a time in seconds")
        files = stored.get("files", [])
        if not isinstance(files, list) or not all(isinstance(path, str) for path in files):
            raise LineRefused("invalid", "'files' is not a list of paths")
        if not isinstance(stored.get("provenance") or {}, dict):
            raise LineRefused("invalid", "'provenance' is not an object")
        if not isinstance(stored.get("text"), str) or not isinstance(stored.get("kind"), str):
            raise LineRefused("invalid", "not an event (its id, time, kind and text)")
        event = Event.from_json(stored)
        if event is None:
            raise LineRefused("invalid", "not an event (its id, time, kind and text)")
        event.time = _iso(event.epoch)  # the time is the epoch's, whatever the line says
        location, owner = self._target(raw)
        text, _ = events.check_text(event.text, redact=False)
        if text != event.text:
            raise LineRefused("invalid", "the event's text is not as memcite writes it "
                              "(surrounding or trailing spaces)")
        if len(event.files) > events.MAX_FILES:
            raise LineRefused("invalid", f"{len(event.files)} files; an event names at most "
                              f"{events.MAX_FILES}")
        for path in event.files:
            parts = path.split("/")
            if not path or path.startswith("/") or ".." in parts or "" in parts or "\\" in path:
                raise LineRefused("invalid", f"{_shown(path)} is not a project-relative path")
            if events.project_file(location, path, cwd=location.project) != path:
                raise LineRefused("invalid", f"{_shown(path)} is not a project-relative path")
            events.check_text(path, redact=False)
        if event.fragile and not event.files:
            raise LineRefused("invalid", "fragile, and names no file")
        provenance = dict(event.provenance)
        from memcite.secrets import scan

        if scan(_dumps(provenance)):
            raise NoteRefusal("secret", "the event's provenance holds what must not be stored")
        subjects = checks.sensitive_subjects(text)
        if subjects and not self.yes:
            raise NoteRefusal("needs-confirmation", f"the event mentions {', '.join(subjects)}: "
                              "confirm that it belongs in the project's log (pass --yes)")
        record = {"from": self.source, "at": int(self.now), "at_iso": _iso(self.now)}
        if owner != location.owner:
            record["owner"] = owner
        previous = provenance.get("imported")
        provenance["imported"] = [*(previous if isinstance(previous, list) else []), record]
        event.provenance = provenance
        folder = location.project_dir
        seen_ids, seen_content = self.seen_events.setdefault(folder, (set(), set()))

        def check(known: list) -> tuple[str, str] | None:
            ids = {item.id for item in known} | seen_ids
            if event.id in ids:
                return "same-id", "already in the log"
            content = {_event_content(item) for item in known} | seen_content
            if _event_content(event) in content:
                return "same-content", "an event with the same kind, text and files is there"
            if event.supersedes and event.supersedes not in ids:
                raise LineRefused("invalid", f"supersedes {event.supersedes}, which is not in "
                                  "the log (import the events in order)")
            return None

        if self.dry_run:
            skipped = check(read_events(location))
            if skipped:
                return "skipped", skipped[0], skipped[1], event.id
            message = "would be appended"
        else:
            from memcite.notes.operations import prepare_folders

            self.tightened += prepare_folders(location, location.project_dir)
            with storage.locked(location.project_dir):
                skipped = check(read_events(location))
                if skipped:
                    return "skipped", skipped[0], skipped[1], event.id
                events.append_event(events.events_path(location), event)
            self.event_targets.add((location.scope, location.session))
            message = "appended"
        seen_ids.add(event.id)
        seen_content.add(_event_content(event))
        return "imported", None, f"{message} to the {location.scope} event log", event.id

    def finish(self) -> list[str]:
        """Rewrite the gate index of each log events were appended to (once, at the end)."""
        from memcite.notes.events import read_events, write_gate_index

        for key in sorted(self.event_targets, key=str):
            location = self.locations[key]
            with storage.locked(location.project_dir):
                write_gate_index(location.project_dir, read_events(location))
        return self.tightened


def _event_content(event) -> tuple:
    return (event.kind, normalized_text(event.text), tuple(event.files), event.supersedes)


def _shown(value: str) -> str:
    from memcite.readpath.event_log import shown_value as shown

    return shown(value)

