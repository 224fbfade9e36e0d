"""Writing a project's typed, append-only event log: decisions, attempts, failures, fixes, issues, notes.

The log is ``events.jsonl`` beside the scope's note (same folder, 0700; the file 0600),
one JSON object per line, appended under the note folder's lock and never rewritten: a
correction is a new event that ``supersedes`` the old one. Each event carries its id,
time, kind, text, the files it names (project-relative), whether it marks those files
fragile, and its provenance (who, via cli or mcp, confirmed or not). Texts are scanned
for secrets as note entries are (refused unless redacted); paths outside the project are
refused.

Derived from the log, never edited by hand:

- the projection (``project``): open issues, the last decisions, failed attempts and
  fixes per file, fragile files; superseded events hidden; deterministic (the same log
  and staleness give the same bytes);
- the gate index (``gate/``): what the pre-action gate needs, sharded by file so that
  the gate reads a few small files whatever the size of the log
  (``memcite.codex.pre_tool_gate``).

Staleness (``stale_events``, ``stale_note_entries``): an event or note entry naming files
is stale when a file is gone, or git history has a commit touching it after the entry was
written.
"""

from __future__ import annotations

import errno
import json
import os
import secrets as _random
import stat
from dataclasses import dataclass

from memcite.errors import InputError
from memcite.notes import storage
from memcite.notes.refusals import NoteRefusal
from memcite.notes.storage import NoteLocation
from memcite.readpath.event_keys import APPROACHES_FILE, EVENTS_FILE, GATE_DIR
from memcite.readpath.event_log import (  # noqa: F401 - the log's reading, under this name too
    KINDS,
    Event,
    current,
    find_event,
    gate_index,
    is_event_id,
    normalize_command,
    note_entry_files,
    project,
    projection_of,
    read_events,
    render_projection,
    select,
    stale_events,
    stale_note_entries,
    superseded_by,
)
from memcite.readpath.event_log import shown_value as _shown
from memcite.times import iso_utc as _iso

MAX_TEXT_CHARS = 2000
MAX_FILES = 50
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


def new_event_id() -> str:
    return "ev-" + "".join(_random.choice(_ALPHABET) for _ in range(8))


def events_path(location: NoteLocation) -> str:
    return os.path.join(location.project_dir, EVENTS_FILE)


def gate_dir_of(project_dir: str) -> str:
    return os.path.join(project_dir, GATE_DIR)


def project_file(location: NoteLocation, path: str, cwd: str | None = None) -> str:
    """``path`` (relative to ``cwd``, else absolute) as a POSIX path relative to the project;
    a path outside the project is refused (exit 2)."""
    if not isinstance(path, str) or not path.strip() or "\0" in path or "\n" in path:
        raise InputError(f"--file: {_shown(str(path))} is not a file path")
    base = cwd or location.cwd
    full = os.path.normpath(os.path.join(base, os.path.expanduser(path)))
    # symlinks resolved for the part that exists: a link out of the project is outside
    existing = full
    rest: list[str] = []
    while not os.path.lexists(existing) and os.path.dirname(existing) != existing:
        existing, tail = os.path.split(existing)
        rest.insert(0, tail)
    resolved = os.path.join(os.path.realpath(existing), *rest)
    root = location.project.rstrip("/")
    # Where the file really is decides: a link inside the project pointing out of it is
    # outside. The name kept is the one given when that is inside the project too.
    if not resolved.startswith(root + "/"):
        raise InputError(f"--file: {_shown(path)} is outside the project ({location.project})"
                         + (f": it leads to {_shown(resolved)}" if resolved != full else "")
                         + "; events name files inside the project only")
    candidate = full if full.startswith(root + "/") else resolved
    return candidate[len(root) + 1:].replace(os.sep, "/")


def check_text(text: str, *, redact: bool) -> tuple[str, list[dict]]:
    from memcite.secrets import redact as redact_text
    from memcite.secrets import scan

    if not isinstance(text, str) or not text.strip():
        raise InputError("the event's text is empty", hint="say what happened")
    text = "\n".join(line.rstrip() for line in text.strip().splitlines())
    if len(text) > MAX_TEXT_CHARS:
        raise InputError(f"the event's text is {len(text)} characters; at most {MAX_TEXT_CHARS}",
                         hint="record the gist, with the files it concerns")
    findings = scan(text)
    if not findings:
        return text, []
    found = [finding.to_json() for finding in findings]
    if not redact:
        listing = "; ".join(f"line {item['line']}: {item['kind']} ({item['masked']})"
                            for item in found)
        raise NoteRefusal("secret", f"the event holds what must not be stored: {listing}. "
                          "Nothing was recorded; remove it, or pass --redact to record it with "
                          "each replaced by [REDACTED:<kind>]",
                          findings=[{key: item[key] for key in ("kind", "line", "masked")}
                                    for item in found])
    text = redact_text(text, findings)
    if scan(text):
        raise NoteRefusal("secret", "redaction left a finding in the event; nothing was recorded")
    return text, [{key: item[key] for key in ("kind", "line", "masked")} for item in found]


@dataclass
class AddResult:
    location: NoteLocation
    event: Event
    log_file: str
    redacted: list[dict]
    tightened: list[str]
    superseded: Event | None = None


def add_event(location: NoteLocation, *, kind: str, text: str, files: list[str] | None = None,
              supersedes: str | None = None, fragile: bool = False, via: str = "cli",
              confirmed_by: str | None = None, redact: bool = False, now: float,
              cwd: str | None = None, who: str | None = None) -> AddResult:
    """Append one event to the scope's log (under the note folder's lock); nothing else changes
    in the log. ``confirmed_by`` (``--yes``, ``terminal``, ``mcp-confirm``) marks it confirmed."""
    from memcite.notes import checks
    from memcite.notes.changelog import current_user
    from memcite.notes.operations import prepare_folders

    if kind not in KINDS:
        raise InputError(f"--kind: {_shown(str(kind))} is not one of {', '.join(KINDS)}")
    if via not in ("cli", "mcp"):
        raise ValueError(via)
    text, redacted = check_text(text, redact=redact)
    named = []
    for path in files or []:
        relative = project_file(location, path, cwd)
        if relative not in named:
            named.append(relative)
    if len(named) > MAX_FILES:
        raise InputError(f"--file: {len(named)} files; an event names at most {MAX_FILES}")
    for path in named:
        check_text(path, redact=False)
    if fragile and not named:
        raise InputError("--fragile marks the files the event names: give --file PATH")
    if supersedes is not None and not is_event_id(supersedes):
        raise InputError(f"--supersedes: {_shown(supersedes)} is not an event id "
                         "(ev- and 8 letters or digits, as event list shows)")
    subjects = checks.sensitive_subjects(text)
    if subjects and confirmed_by is None:
        raise NoteRefusal("needs-confirmation", f"the event mentions {', '.join(subjects)}: "
                          "confirm that it belongs in the project's log. Nothing was recorded",
                          subjects=subjects)
    tightened = prepare_folders(location, location.project_dir)
    path = events_path(location)
    with storage.locked(location.project_dir):
        known = read_events(location)
        superseded = None
        if supersedes is not None:
            superseded = next((event for event in known if event.id == supersedes), None)
            if superseded is None:
                raise InputError(f"--supersedes: no event {supersedes} in {path}",
                                 hint="memcite event list shows the ids")
        ids = {event.id for event in known}
        event_id = new_event_id()
        while event_id in ids:
            event_id = new_event_id()
        provenance = {"who": who or current_user(), "via": via,
                      "confirmed": confirmed_by is not None, "confirmation": confirmed_by}
        event = Event(event_id, _iso(now), int(now), kind, text, named, supersedes, fragile,
                      provenance)
        append_event(path, event)
        known.append(event)
        write_gate_index(location.project_dir, known)
    return AddResult(location, event, path, redacted, tightened, superseded)


def append_event(path: str, event: Event) -> None:
    """Append the event as one line (O_APPEND, 0600, synced), on a line of its own, then read
    it back as an event; the file is created if needed."""
    from memcite.durable_files import append_line

    data = (json.dumps(event.to_json(), ensure_ascii=False, sort_keys=True) + "\n").encode(
        "utf-8", "surrogateescape")
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0), storage.FILE_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NoteRefusal("permissions", f"{path}: a symbolic link, not an event log; left "
                              "alone", path=path) from None
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise NoteRefusal("not-writable", f"{path}: the event log cannot be written "
                              f"({exc.strerror}); nothing was recorded", path=path) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NoteRefusal("permissions", f"{path}: not a regular file; left alone", path=path)
        from memcite.untrusted import clear_nonblock

        clear_nonblock(fd)
        start = info.st_size
        storage.check_private_file(path)
        written = append_line(fd, data)
        os.fsync(fd)
        back = os.pread(fd, len(written), start)
    finally:
        os.close(fd)
    if not _reads_back(back, written, event):
        raise NoteRefusal("not-writable", f"{path}: reading the event back did not give the "
                          "event written; check the disk", path=path)


def _reads_back(back: bytes, written: bytes, event: Event) -> bool:
    """Whether the bytes read back are those written, ending the file, and their one line
    reads as ``event``, the way ``read_events`` reads it."""
    from memcite.readpath.event_log import event_of_line

    if back != written:
        return False
    lines = [line for line in back.split(b"\n") if line.strip()]
    return len(lines) == 1 and event_of_line(lines[0]) == event


def write_gate_index(project_dir: str, events: list[Event]) -> None:
    """Rewrite the gate index from the log: only the shard files whose content changed."""
    folder = gate_dir_of(project_dir)
    storage.ensure_private_dir(folder, project_dir)
    shards, approaches = gate_index(events)
    wanted = {name: json.dumps(content, ensure_ascii=False, sort_keys=True).encode()
              for name, content in shards.items()}
    wanted[APPROACHES_FILE] = json.dumps(approaches, ensure_ascii=False,
                                         sort_keys=True).encode()
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json") and name not in wanted:
            os.unlink(os.path.join(folder, name))
    for name, data in wanted.items():
        target = os.path.join(folder, name)
        try:
            with open(target, "rb") as handle:
                if handle.read() == data:
                    continue
        except OSError:
            pass
        storage.atomic_write(target, data)


@dataclass(frozen=True)
class EventView:
    """Events of one log as ``memcite event list|show`` show them: what was chosen, which event
    supersedes which, and what is stale."""

    log_file: str
    logged: list
    chosen: list
    hidden: dict
    stale: dict


def view_events(location: NoteLocation, *, kind: str | None = None, file: str | None = None,
                event_id: str | None = None, cwd: str | None = None) -> EventView:
    """``memcite event list``'s work (``event_id``: ``show``'s, that one event): the log read,
    the events of ``kind`` and touching ``file`` (a path of the project, from ``cwd``)
    chosen, and each marked superseded or stale."""
    logged = read_events(location)
    if event_id is not None:
        chosen = [find_event(logged, event_id)]
    else:
        wanted = project_file(location, file, cwd) if file is not None else None
        chosen = select(logged, kind=kind, file=wanted)
    return EventView(events_path(location), logged, chosen, superseded_by(logged),
                     stale_events(location.project, chosen))
