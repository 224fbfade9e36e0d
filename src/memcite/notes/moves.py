"""Moving an entry between scopes (promote, demote) and ending a session; never silent.

A move is the moment an entry is most likely to be wrong, so ``plan_move`` shows
what would move, from where to where, scans the entry again for secrets and for
other projects' paths, and refuses a promotion to global of an entry that names this
project's paths unless its text is rewritten. ``move_entry`` then needs a person's
confirmation, keeps the entry's id, section and lines (its ``Confirmed:`` line says
who confirmed the move and when), writes the target before the source (a crash
leaves the entry in both, never in neither) and logs the move in both notes' logs.
``end_session`` moves what is left of a session's note into the archive.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field

from memcite.errors import InputError
from memcite.notes import checks, storage
from memcite.notes.changelog import Change, log_changes
from memcite.notes.model import Entry, new_note, render_note
from memcite.notes.operations import (
    archive_name,
    confirmation_line,
    prepare_folders,
    read_note,
    section_like,
)
from memcite.notes.refusals import NoteRefusal
from memcite.notes.storage import NoteLocation, locate_note

# Where each direction may go, and the scopes searched for the entry (nearest first).
PROMOTE = {"project": ("session",), "global": ("project", "session")}
DEMOTE = {"project": ("global",), "session": ("project", "global")}
_ORDER = ("session", "project", "global")


@dataclass
class MovePlan:
    """What a move would do, for the person to confirm."""

    command: str  # promote | demote
    entry_id: str
    source: NoteLocation
    target: NoteLocation
    heading: str  # the section heading the entry sits under
    entry: Entry  # as it will be written (rewritten with --text)
    before_hash: str  # the entry's content hash in the source note
    concerns: list[str] = field(default_factory=list)  # what the person should look at
    rewritten: bool = False

    def to_json(self) -> dict:
        return {"command": self.command, "id": self.entry_id,
                "from": {"scope": self.source.scope, "note_file": self.source.note_file},
                "to": {"scope": self.target.scope, "note_file": self.target.note_file},
                "entry": "\n".join(self.entry.lines()), "concerns": self.concerns,
                "rewritten": self.rewritten}


def _sources(command: str, to: str, from_scope: str | None) -> tuple[str, ...]:
    table = PROMOTE if command == "promote" else DEMOTE
    if to not in table:
        raise InputError(f"--to: {command} goes to {' or '.join(table)}, not {to!r}")
    allowed = table[to]
    if from_scope is None:
        return allowed
    if from_scope not in allowed:
        raise InputError(f"--scope {from_scope}: {command} --to {to} moves an entry from "
                         f"{' or '.join(allowed)}")
    return (from_scope,)


def plan_move(cwd: str, home: str, entry_id: str, *, command: str, to: str,
              session: str | None = None, from_scope: str | None = None,
              text: str | None = None) -> MovePlan:
    """Find the entry, check it, and say what the move would do; nothing is written."""
    from memcite.secrets import scan

    searched = _sources(command, to, from_scope)
    if "session" in (to, from_scope):
        if not session:
            raise InputError("a move to or from the session scope needs the session id",
                             hint="pass --session ID or set MEMCITE_SESSION")
    target = locate_note(cwd, home, scope=to, session=session)
    found = None
    for scope in searched:
        if scope == "session" and not session:
            continue
        source = locate_note(cwd, home, scope=scope, session=session)
        note = read_note(source)
        hit = note.find(entry_id) if note is not None else None
        if hit is not None:
            found = (source, hit)
            break
    if found is None:
        scopes = [s for s in searched if s != "session" or session]
        notes = "note" if len(scopes) == 1 else "notes"
        raise InputError(f"no entry {entry_id!r} in the {', '.join(scopes)} {notes} seen from {cwd}",
                         hint="`memcite note list --scope SCOPE` lists each scope's entries")
    source, (section, original) = found
    entry = Entry(original.text, original.id, original.marker, list(original.body))
    rewritten = False
    if text is not None:
        text = " ".join(text.split())
        if not text:
            raise InputError("--text: the rewritten entry is empty")
        entry.text, entry.raw, rewritten = text, None, True
        entry.body = [line for line in entry.body if _is_field(line)]
    findings = scan(_scanned(entry))
    if findings:
        listing = "; ".join(f"{f.kind} ({f.masked})" for f in findings)
        raise NoteRefusal("secret", f"the entry {entry_id} holds what must not be stored in a "
                          f"note: {listing}. Nothing was moved; forget it, or rewrite it with "
                          "--text", findings=[f.to_json() for f in findings])
    concerns = [f"it {reason}" for reason in checks.other_projects(
        _scanned(entry), project=source.project, slug=source.slug, home=home)]
    if to == "global":
        named = checks.project_paths(_scanned(entry), project=source.project, slug=source.slug)
        if rewritten:
            entry.body = [line for line in entry.body
                          if not (_field(line) in ("source", "evidence") and
                                  checks.project_paths(line, project=source.project, slug=source.slug))]
            named = checks.project_paths(_scanned(entry), project=source.project, slug=source.slug)
        if named or concerns:
            what = ", ".join(named) if named else "; ".join(concerns)
            raise NoteRefusal(
                "project-specific",
                f"the entry {entry_id} names {'this project' if named else 'other projects'} "
                f"({what}); a global entry holds everywhere, so nothing was moved. Rewrite it "
                "without them with --text \"...\"", names=named or concerns)
    return MovePlan(command, entry_id, source, target, section.heading, entry,
                    original.content_hash(), concerns, rewritten)


def _field(line: str) -> str:
    return line.strip().split(":", 1)[0].lower() if ":" in line else ""


def _is_field(line: str) -> bool:
    from memcite.notes.model import FIELDS

    return _field(line) in {name.lower() for name in FIELDS}


def _scanned(entry: Entry) -> str:
    return "\n".join([entry.text, *[line.strip() for line in entry.body]])


@dataclass
class MoveResult:
    plan: MovePlan
    confirmed_by: str
    tightened: list[str] = field(default_factory=list)


def move_entry(plan: MovePlan, *, now: float, today: str, conn: sqlite3.Connection,
               confirmed_by: str | None) -> MoveResult:
    """Move the planned entry: target written first, then the source; logged in both."""
    if confirmed_by is None:
        raise NoteRefusal(
            "needs-confirmation",
            f"{plan.command} moves [{plan.entry_id}] from {plan.source.scope} "
            f"({plan.source.note_file}) to {plan.target.scope} ({plan.target.note_file}). "
            "Nothing was moved; run it on a terminal to be asked, or pass --yes",
            questions=[f"{plan.command} [{plan.entry_id}] to {plan.target.scope}?"],
            move=plan.to_json())
    source, target = plan.source, plan.target
    tightened = prepare_folders(source, source.project_dir)
    tightened += prepare_folders(target, target.project_dir)
    first, second = sorted([source.project_dir, target.project_dir])
    with storage.locked(first), storage.locked(second):
        note = read_note(source)
        found = note.find(plan.entry_id) if note is not None else None
        if found is None or found[1].content_hash() != plan.before_hash:
            raise InputError(f"the entry {plan.entry_id} changed or left {source.note_file} "
                             "meanwhile; nothing was moved, run the command again")
        entry = plan.entry
        entry.set_field("Confirmed", confirmation_line(confirmed_by, today))
        entry.raw = None
        destination = read_note(target) or new_note(target.owner, today, scope=target.scope)
        existing = destination.find(plan.entry_id)
        if existing is not None:
            raise InputError(f"the {target.scope} note already has an entry {plan.entry_id} "
                             f"({existing[1].text[:60]!r}); nothing was moved",
                             hint="forget one of the two first")
        section_like(destination, plan.heading).add(entry)
        destination.set_header("Updated", today)
        storage.atomic_write(target.note_file,
                             render_note(destination).encode("utf-8", "surrogateescape"))
        note.remove(plan.entry_id)
        note.set_header("Updated", today)
        storage.atomic_write(source.note_file, render_note(note).encode("utf-8", "surrogateescape"))
        after = entry.content_hash()
        log_changes(conn, project=source.owner, slug=source.log_slug, command=plan.command,
                    confirmed_by=confirmed_by,
                    changes=[Change("move-out", plan.entry_id, plan.before_hash, None,
                                    target.note_file)], at=int(now))
        log_changes(conn, project=target.owner, slug=target.log_slug, command=plan.command,
                    confirmed_by=confirmed_by,
                    changes=[Change("move-in", plan.entry_id, plan.before_hash, after,
                                    source.note_file)], at=int(now))
    return MoveResult(plan, confirmed_by, tightened)


@dataclass
class EndResult:
    location: NoteLocation
    archived: str | None  # None: the session had no note (or no entries left)
    entries: list[str] = field(default_factory=list)


def end_session(cwd: str, home: str, session: str, *, now: float,
                conn: sqlite3.Connection) -> EndResult:
    """Move the session's note, with the entries not promoted, into the archive; delete nothing."""
    location = locate_note(cwd, home, scope="session", session=session)
    if not os.path.isfile(location.note_file):
        return EndResult(location, None)
    prepare_folders(location, location.archive_dir)
    with storage.locked(location.project_dir):
        note = read_note(location)
        ids = [entry.id for _, entry in note.entries() if entry.id] if note else []
        data = storage.read_file(location.note_file) or b""
        target = archive_name(location.archive_dir, now, "memory")
        storage.move_file(location.note_file, target)
        import hashlib

        changes = [Change("forget", entry.id, entry.content_hash(), None, target)
                   for _, entry in (note.entries() if note else []) if entry.id]
        changes.append(Change("end-session", None, hashlib.sha256(data).hexdigest(), None, target))
        log_changes(conn, project=location.owner, slug=location.log_slug, command="end-session",
                    confirmed_by="request", changes=changes, at=int(now))
    return EndResult(location, target, ids)


def context_log_slugs(cwd: str, home: str, session: str | None) -> list[str]:
    """The log names of every note seen from ``cwd``: an entry's history across its moves."""
    slugs = []
    for scope in _ORDER:
        if scope == "session" and not session:
            continue
        slugs.append(locate_note(cwd, home, scope=scope, session=session).log_slug)
    return slugs


def note_history(location: NoteLocation, db_path: str, *, entry_id: str | None, limit: int = 0,
                 across_scopes: bool, session: str | None) -> tuple[list[str], list[dict]]:
    """``memcite note log``'s work: the change log of ``location``'s note (with ``entry_id`` and
    ``across_scopes``, of every note seen from its folder: the entry's history across its
    moves) read from the ledger at ``db_path`` (none yet: nothing logged). The log names read,
    and the rows, oldest first, each with ``at_iso``."""
    from memcite.ledger.store import open_store
    from memcite.notes.changelog import read_log
    from memcite.times import iso_utc

    slugs = [location.log_slug]
    if entry_id is not None and across_scopes:
        slugs = context_log_slugs(location.cwd, location.home, session)
    rows: list[dict] = []
    if os.path.exists(db_path):
        conn = open_store(db_path, readonly=True)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if "note_log" in tables:
                rows = read_log(conn, slug=slugs, entry_id=entry_id, limit=limit)
        finally:
            conn.close()
    for row in rows:
        row["at_iso"] = iso_utc(row["at"])
    return slugs, rows
