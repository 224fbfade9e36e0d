"""The bodies of ``memcite note ...`` (path, save, recall, list, forget, restore, purge, log,
promote, demote, end-session, export, import); each returns the exit code.

Free of Typer. Only this layer knows the defaults (the working directory,
``$CODEX_HOME``, the database) and talks to a person: a save or forget that
needs confirmation asks on a terminal, and otherwise needs ``--yes``. A refusal
prints its reason on stderr (and the refusal object with ``--json``) and exits 3.
The work is in ``memcite.notes`` (``operations``, ``moves``, ``export``), and what each
command prints is ``memcite.notes.render``'s.
"""

from __future__ import annotations

import os
import sys
import time

from memcite.cli import note_runs
from memcite.cli.console import dump_json, note, source_name
from memcite.cli.note_runs import codex_home_of as _codex_home
from memcite.cli.note_runs import confirmed as _confirmed
from memcite.cli.note_runs import note_location as _location
from memcite.cli.note_runs import out as _out
from memcite.cli.note_runs import report_tightened as _report_tightened
from memcite.cli.note_runs import run_body as _run
from memcite.cli.note_runs import session_of as _session
from memcite.cli.note_runs import write_lines as _write_lines
from memcite.errors import InputError
from memcite.ledger.database import open_ledger
from memcite.paths import Locations
from memcite.times import utc_day as _today

# --------------------------------------------------------------------------- path


def path(cwd: str | None = None, codex_home: str | None = None, json: bool = False,  # noqa: A002
         scope: str | None = None, session: str | None = None) -> int:
    """Print where this project's (or the scope's) note lives, and whether it exists."""
    from memcite.notes.render import render_path

    def body() -> int:
        location = _location(cwd, codex_home, scope, session)
        info = location.to_json()
        if json:
            dump_json(info)
        else:
            sys.stdout.write(render_path(location, info["exists"]))
        return 0

    return _run(body, None, json)


# --------------------------------------------------------------------------- save


def _read_input(text: str | None, file: str | None) -> tuple[str, bool]:
    """The entry (or whole draft) text, and whether it came from a file or stdin."""
    from memcite.cli.inputs import decode_utf8, read_bytes

    if file is not None and text is not None and text != "-":
        raise InputError("give the entry as TEXT or with --file, not both")
    source = file if file is not None else ("-" if text == "-" else None)
    if source is None:
        if not text:
            raise InputError("nothing to save", hint="give TEXT, --file FILE, or - for stdin")
        return text, False
    return decode_utf8(read_bytes(source, max_bytes=1 << 20), name=source_name(source)), True


def save(text: str | None = None, file: str | None = None, section: str | None = None,
         topic: str | None = None, source: str | None = None, evidence: str | None = None,
         confidence: str | None = None, tier: str | None = None, expires: str | None = None,
         redact: bool = False, dry_run: bool = False, yes: bool = False, cwd: str | None = None,
         codex_home: str | None = None, db: str | None = None, json: bool = False,  # noqa: A002
         scope: str | None = None, session: str | None = None) -> int:
    """Add or update one entry (or merge a whole draft) in this project's (or the scope's) note."""
    from memcite.notes import operations, render

    def body() -> int:
        content, from_file = _read_input(text, file)
        where = Locations(db=db, codex_home=codex_home)
        location = _location(cwd, codex_home, scope, session, where)
        drafts = operations.save_drafts(content, from_file=from_file, project=location.project,
                                        section=section, topic=topic, source=source,
                                        evidence=evidence, confidence=confidence, tier=tier,
                                        expires=expires)
        via = "draft file" if from_file else "cli"
        now = time.time()
        today = _today(now)
        if dry_run:
            result = operations.save_entries(location, drafts, today=today, now=now, conn=None,
                                             redact=redact, dry_run=True, via=via,
                                             confirmed_by="--yes" if yes else None)
        else:
            conn = open_ledger(where, quick_check=True)  # a damaged ledger refused, nothing written
            try:
                result = _confirmed(lambda who: operations.save_entries(
                    location, drafts, today=today, now=now, conn=conn, redact=redact,
                    confirmed_by=who, via=via), yes)
            finally:
                conn.close()
            _report_tightened(result.tightened)
            _say_if_no_codex(where.codex_home_path)
        if json:
            dump_json(render.save_json(result))
        else:
            _write_lines(render.save_lines(result))
        return 0

    return _run(body, db, json)


def _say_if_no_codex(home: str) -> None:
    """A note saved where Codex never ran: say that the folder is no Codex home (memcite made
    only its notes there) and how to install Codex."""
    from memcite.ledger.home_state import INSTALL_CODEX, is_codex_home

    if not is_codex_home(home):
        note(f"{home} is no Codex home (Codex is not installed, or has never run there): the "
             "note is kept in its memory/ folder; install Codex with "
             f"`{INSTALL_CODEX}`, then `memcite setup codex` serves the notes to it")


# --------------------------------------------------------------------------- recall


def recall(check: bool = False, cwd: str | None = None, codex_home: str | None = None,
           json: bool = False, scope: str | None = None, session: str | None = None) -> int:  # noqa: A002
    """Print this project's (or the scope's) note, as evidence from the past; read-only."""
    from memcite.notes import operations
    from memcite.notes.operations import RECALL_FRAME
    from memcite.notes.render import recall_json, render_recall

    def body() -> int:
        location = _location(cwd, codex_home, scope, session)
        recalled = operations.recall_note(location, today=_today(time.time()), check=check)
        if json:
            dump_json(recall_json(recalled, location))
            return 0
        sys.stdout.write(render_recall(recalled, location, check, RECALL_FRAME))
        return 0

    return _run(body, None, json)


# --------------------------------------------------------------------------- list


def list_notes(codex_home: str | None = None, cwd: str | None = None, json: bool = False,  # noqa: A002
               scope: str | None = None, session: str | None = None) -> int:
    """Print project slugs and their Updated: dates, never content; with a scope, what that
    scope's note knows: one line per entry (id, section, topic, date, provenance)."""
    from memcite.notes import operations, render

    def body() -> int:
        if cwd is not None and not os.path.isdir(cwd):
            raise InputError(f"--cwd: {cwd} is not a folder")
        if scope is not None:
            location = _location(cwd, codex_home, scope, session)
            listed = operations.list_entries(location)
            if json:
                dump_json(render.scope_list_json(location, listed))
            else:
                sys.stdout.write(render.render_scope_list(location, listed))
            return 0
        listed = operations.list_notes(_codex_home(codex_home))
        if json:
            dump_json({"notes": listed})
        else:
            sys.stdout.write(render.render_note_list(listed))
        return 0

    return _run(body, None, json)


# --------------------------------------------------------------------------- forget and restore


def forget(entry: str | None = None, yes: bool = False, cwd: str | None = None,
           codex_home: str | None = None, db: str | None = None, json: bool = False,  # noqa: A002
           scope: str | None = None, session: str | None = None) -> int:
    """Move the note, or one entry, into the archive (recoverable)."""
    from memcite.notes import operations, render

    def body() -> int:
        where = Locations(db=db, codex_home=codex_home)
        location = _location(cwd, codex_home, scope, session, where)
        now = time.time()
        if not os.path.isfile(location.note_file):
            raise InputError(f"no {location.scope} note ({location.note_file}); "
                             "nothing to forget")
        conn = open_ledger(where, quick_check=True)  # a damaged ledger refused, nothing written
        try:
            result = _confirmed(lambda who: operations.forget_note(
                location, entry_id=entry, now=now, today=_today(now), conn=conn,
                confirmed_by=who), yes)
        finally:
            conn.close()
        _report_tightened(result.tightened)
        if json:
            dump_json(render.forget_json(location, entry, result))
        else:
            sys.stdout.write(render.render_forget(location, entry, result))
        return 0

    return _run(body, db, json)


def restore(archived: str, merge: bool = False, replace: bool = False, cwd: str | None = None,
            codex_home: str | None = None, db: str | None = None, json: bool = False,  # noqa: A002
            scope: str | None = None, session: str | None = None) -> int:
    """Put an archived note or entry back."""
    from memcite.notes import operations, render

    def body() -> int:
        if merge and replace:
            raise InputError("--merge and --replace exclude each other")
        where = Locations(db=db, codex_home=codex_home)
        location = _location(cwd, codex_home, scope, session, where)
        now = time.time()
        conn = open_ledger(where, quick_check=True)  # a damaged ledger refused, nothing written
        try:
            result = operations.restore_note(location, archived, now=now, today=_today(now), conn=conn,
                                        mode="merge" if merge else "replace" if replace else None)
        finally:
            conn.close()
        _report_tightened(result.tightened)
        if json:
            dump_json(render.restore_json(location, result))
        else:
            _write_lines(render.restore_lines(location, result))
        return 0

    return _run(body, db, json)


def purge(archived: str, confirm: str | None = None, cwd: str | None = None,
          codex_home: str | None = None, db: str | None = None, json: bool = False,  # noqa: A002
          scope: str | None = None, session: str | None = None) -> int:
    """Delete one archived file for ever (the only irreversible command)."""
    from memcite.notes import operations
    from memcite.notes.refusals import NoteRefusal
    from memcite.notes.render import check_in_archive

    def body() -> int:
        if cwd is not None and not os.path.isdir(cwd):
            raise InputError(f"--cwd: {cwd} is not a folder")
        where = Locations(db=db, codex_home=codex_home)
        target = operations.purge_target(where.codex_home_path, archived, confirm)
        if scope is not None:
            check_in_archive(target.path, _location(cwd, codex_home, scope, session, where))
        confirmed_by = "--confirm"
        if note_runs.interactive():
            if not note_runs.ask(f"memcite: delete {target.path} for ever? It cannot be brought back."):
                raise NoteRefusal("needs-confirmation", "not confirmed; nothing was deleted",
                                  path=target.path)
            confirmed_by = "--confirm+terminal"
        conn = open_ledger(where, quick_check=True)  # a damaged ledger refused, nothing written
        try:
            operations.purge_archived(target, now=time.time(), conn=conn, confirmed_by=confirmed_by)
        finally:
            conn.close()
        if json:
            dump_json({"purged": target.path, "sha256": target.sha256})
            return 0
        _out(f"deleted {target.path} for ever (logged by its hash, without its content)")
        return 0

    return _run(body, db, json)


# --------------------------------------------------------------------------- log


def log(entry: str | None = None, limit: int = 0, cwd: str | None = None,
        codex_home: str | None = None, db: str | None = None, json: bool = False,  # noqa: A002
        scope: str | None = None, session: str | None = None) -> int:
    """Print the change log of this project's (or the scope's) note; one entry's with ID,
    across every scope it moved through when no scope is named."""
    from memcite.notes import render
    from memcite.notes.moves import note_history

    def body() -> int:
        if limit < 0:
            raise InputError(f"--limit: must be 0 (everything) or more, not {limit}")
        locations = Locations(db=db, codex_home=codex_home)
        location = _location(cwd, codex_home, scope, session, locations)
        slugs, rows = note_history(location, locations.db_path, entry_id=entry, limit=limit,
                                   across_scopes=scope is None, session=_session(session))
        if json:
            dump_json(render.log_json(location, entry, rows))
        else:
            sys.stdout.write(render.render_log(location, entry, rows, len(slugs) > 1))
        return 0

    return _run(body, db, json)


# --------------------------------------------------------------------------- scopes


def move(command: str, entry_id: str, to: str, text: str | None = None, yes: bool = False,
         scope: str | None = None, session: str | None = None, cwd: str | None = None,
         codex_home: str | None = None, db: str | None = None, json: bool = False) -> int:  # noqa: A002
    """Promote or demote one entry between scopes, after a person's confirmation."""
    from memcite.notes import moves, render
    from memcite.notes.refusals import NoteRefusal

    def body() -> int:
        folder = cwd or os.getcwd()
        if not os.path.isdir(folder):
            raise InputError(f"--cwd: {folder} is not a folder")
        where = Locations(db=db, codex_home=codex_home)
        plan = moves.plan_move(folder, where.codex_home_path, entry_id, command=command,
                               to=to, session=_session(session), from_scope=scope, text=text)
        sys.stderr.write(render.render_plan(plan))
        confirmed_by = "--yes" if yes else None
        if confirmed_by is None and note_runs.interactive():
            if not note_runs.ask(f"memcite: {command} [{entry_id}] to {to}?"):
                raise NoteRefusal("needs-confirmation", "not confirmed; nothing was moved",
                                  move=plan.to_json())
            confirmed_by = "terminal"
        now = time.time()
        conn = open_ledger(where, quick_check=True)  # a damaged ledger refused, nothing written
        try:
            result = moves.move_entry(plan, now=now, today=_today(now), conn=conn,
                                      confirmed_by=confirmed_by)
        finally:
            conn.close()
        _report_tightened(result.tightened)
        if json:
            dump_json({**plan.to_json(), "confirmed_by": result.confirmed_by, "at": int(now)})
        else:
            sys.stdout.write(render.render_move(plan, result))
        return 0

    return _run(body, db, json)


def end_session(session_id: str, cwd: str | None = None, codex_home: str | None = None,
                db: str | None = None, json: bool = False) -> int:  # noqa: A002
    """Move what is left of a session's note (the entries not promoted) into the archive."""
    from memcite.notes import moves, render
    from memcite.readpath.projects import check_session_id

    def body() -> int:
        check_session_id(session_id)
        folder = cwd or os.getcwd()
        if not os.path.isdir(folder):
            raise InputError(f"--cwd: {folder} is not a folder")
        where = Locations(db=db, codex_home=codex_home)
        conn = open_ledger(where, quick_check=True)  # a damaged ledger refused, nothing written
        try:
            result = moves.end_session(folder, where.codex_home_path, session_id,
                                       now=time.time(), conn=conn)
        finally:
            conn.close()
        if json:
            dump_json(render.end_session_json(session_id, result))
        else:
            sys.stdout.write(render.render_end_session(session_id, result))
        return 0

    return _run(body, db, json)


# --------------------------------------------------------------------------- export and import


def export(cwd: str | None = None, codex_home: str | None = None, scope: str | None = None,
           session: str | None = None) -> int:
    """Print the scope's note entries and event log as JSON Lines (memcite.notes.export)."""
    from memcite.notes.export import export_scope
    from memcite.notes.render import export_summary

    def body() -> int:
        location = _location(cwd, codex_home, scope, session)
        result = export_scope(location, now=time.time())
        sys.stdout.write("".join(line + "\n" for line in result.lines))
        note(export_summary(location, result))
        return 0

    return _run(body, None, False)


def import_(file: str, dry_run: bool = False, other_project: bool = False, yes: bool = False,
            cwd: str | None = None, codex_home: str | None = None, db: str | None = None,
            json: bool = False, session: str | None = None) -> int:  # noqa: A002
    """Import an export's entries and events, line by line; exit 1 when a line was refused."""
    from memcite.cli.inputs import read_bytes
    from memcite.notes import render
    from memcite.notes.export import MAX_FILE_BYTES, import_export

    def body() -> int:
        folder = cwd or os.getcwd()
        if not os.path.isdir(folder):
            raise InputError(f"--cwd: {folder} is not a folder")
        name = source_name(file)
        data = read_bytes(file, max_bytes=MAX_FILE_BYTES)
        now = time.time()
        where = Locations(db=db, codex_home=codex_home)
        conn = None if dry_run else open_ledger(where, quick_check=True)
        try:
            result = import_export(data, source=name, cwd=folder,
                                   home=where.codex_home_path, session=_session(session),
                                   conn=conn, now=now, today=_today(now), dry_run=dry_run,
                                   other_project=other_project, yes=yes)
        finally:
            if conn is not None:
                conn.close()
        _report_tightened(result.tightened)
        if json:
            dump_json(render.import_json(result, dry_run))
        else:
            _write_lines(render.import_lines(name, result, dry_run))
        return 1 if result.counts()["refused"] else 0

    return _run(body, db, json)
