"""The bodies of ``memcite note ...`` (path, save, recall, list, forget, restore, purge, log,
promote, demote, end-session); each returns the exit code.

Free of Typer. Only this layer knows the defaults (the working directory,
``$CODEX_HOME``, the database) and talks to a person: a save or forget that
needs confirmation asks on a terminal, and otherwise needs ``--yes``. A refusal
prints its reason on stderr (and the refusal object with ``--json``) and exits 3.
"""

from __future__ import annotations

import os
import sys
import time

from memcite.cli import note_runs
from memcite.cli.console import dump_json, note, source_name
from memcite.cli.ledger_commands import open_database
from memcite.cli.note_runs import codex_home_of as _codex_home
from memcite.cli.note_runs import confirmed as _confirmed
from memcite.cli.note_runs import note_location as _location
from memcite.cli.note_runs import out as _out
from memcite.cli.note_runs import report_tightened as _report_tightened
from memcite.cli.note_runs import run_body as _run
from memcite.cli.note_runs import session_of as _session
from memcite.errors import InputError
from memcite.paths import Locations
from memcite.times import iso_utc as _iso
from memcite.times import utc_day as _today

# --------------------------------------------------------------------------- shared



_SCOPE_WORDS = {"project": "this project's note", "global": "the global note",
                "session": "this session's note"}


# --------------------------------------------------------------------------- path


def path(cwd: str | None = None, codex_home: str | None = None, json: bool = False,  # noqa: A002
         scope: str | None = None, session: str | None = None) -> int:
    """Print where this project's (or the scope's) note lives, and whether it exists."""

    def body() -> int:
        location = _location(cwd, codex_home, scope, session)
        info = location.to_json()
        if json:
            dump_json(info)
            return 0
        _out(f"project folder: {location.project_folder}")
        _out(f"canonical path: {location.project}")
        _out(f"slug:           {location.slug}")
        if location.scope != "project":
            _out(f"scope:          {location.scope}"
                 + (f" (session {location.session})" if location.session else ""))
        _out(f"note:           {location.note_file} ({'exists' if info['exists'] else 'none yet'})")
        _out(f"archive:        {location.archive_dir}")
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
    from memcite.notes import operations

    def body() -> int:
        content, from_file = _read_input(text, file)
        location = _location(cwd, codex_home, scope, session)
        via = "draft file" if from_file else "cli"
        if from_file and content.lstrip().startswith(("# ", "## ")) and "\n## " in "\n" + content:
            drafts = operations.drafts_from_note_text(content, location.project)
            if not drafts:
                raise InputError("the draft holds no entries (bullets under the three sections)")
            given = {"topic": topic, "source": source, "evidence": evidence,
                     "confidence": confidence, "tier": tier, "expires": expires}
            for draft in drafts:
                for name, value in given.items():
                    if value and not getattr(draft, name):
                        setattr(draft, name, value)
        else:
            if section is None:
                raise InputError("--section is required for one entry",
                                 hint="--section decisions, state or risks")
            drafts = [operations.EntryDraft(section, content, topic, source, evidence, confidence,
                                       tier, expires)]
        now = time.time()
        today = _today(now)
        if dry_run:
            result = operations.save_entries(location, drafts, today=today, now=now, conn=None,
                                             redact=redact, dry_run=True, via=via,
                                             confirmed_by="--yes" if yes else None)
            return _print_save(result, json)
        conn = open_database(db, quick_check=True)  # a damaged ledger refused, nothing written
        try:
            result = _confirmed(lambda who: operations.save_entries(
                location, drafts, today=today, now=now, conn=conn, redact=redact,
                confirmed_by=who, via=via), yes)
        finally:
            conn.close()
        _report_tightened(result.tightened)
        return _print_save(result, json)

    return _run(body, db, json)


def _print_save(result, json: bool) -> int:  # noqa: A002
    if json:
        dump_json({
            "note_file": result.location.note_file, "project": result.location.project,
            "slug": result.location.slug, "scope": result.location.scope,
            "written": result.written, "dry_run": not result.written,
            "entries": result.outcomes, "adopted": result.adopted, "redacted": result.redactions,
            "archived": result.archived, "tightened": result.tightened,
            **({"text": result.text} if not result.written else {}),
        })
        return 0
    if not result.written:
        sys.stdout.write(result.text if result.text.endswith("\n") else result.text + "\n")
        note("dry run: nothing was written")
        return 0
    words = {"save": "saved", "update": "updated", "unchanged": "unchanged (already there)"}
    for outcome in result.outcomes:
        _out(f"{words[outcome['action']]} [{outcome['id']}] in {outcome['section']}: "
             f"{outcome['text']}")
    for entry_id in result.adopted:
        note(f"a hand-written entry was given the id {entry_id}")
    for item in result.redactions:
        note(f"redacted {item['kind']} on line {item['line']} of entry {item['entry']}")
    for path_ in result.archived:
        note(f"the previous version is kept in {path_}")
    if all(outcome["action"] == "unchanged" for outcome in result.outcomes) and not result.adopted:
        _out(f"note: {result.location.note_file} (nothing to change)")
    else:
        _out(f"note: {result.location.note_file} (read back and verified)")
    _say_project_folder(result.location)
    return 0


def _say_project_folder(location) -> None:
    """Outside a git work tree the project is the folder itself: say so, since a note saved
    in the wrong folder (a home folder, `/`) is easy to miss."""
    if location.scope != "project" or os.path.lexists(os.path.join(location.project, ".git")):
        return
    note(f"the project is {location.project} (no git work tree above it: the folder itself); "
         "run from the repository, or pass --cwd, to save the note of another project")


# --------------------------------------------------------------------------- recall


def recall(check: bool = False, cwd: str | None = None, codex_home: str | None = None,
           json: bool = False, scope: str | None = None, session: str | None = None) -> int:  # noqa: A002
    """Print this project's (or the scope's) note, as evidence from the past; read-only."""
    from memcite.notes import operations
    from memcite.notes.operations import RECALL_FRAME, shown_entries

    def body() -> int:
        location = _location(cwd, codex_home, scope, session)
        recalled = operations.recall_note(location, today=_today(time.time()), check=check)
        if json:
            dump_json({
                "project": location.project, "note_file": location.note_file,
                "exists": recalled.note is not None,
                "updated": recalled.note.updated if recalled.note else None,
                "notice": RECALL_FRAME if recalled.note else None,
                "entries": shown_entries(recalled.entries),
                "events": recalled.events,
            })
            return 0
        if recalled.note is None:
            if location.scope == "project":
                _out(f"No project note for {location.project} (looked for {location.note_file}).")
            else:
                _out(f"No {location.scope} note (looked for {location.note_file}).")
            _print_projection(recalled)
            return 0
        _print_recalled(recalled, location, check)
        _print_projection(recalled)
        return 0

    return _run(body, None, json)


def _print_recalled(recalled, location, check: bool) -> None:
    from memcite.display import shown  # a hand-edited note: masked, as search masks it
    from memcite.notes.model import Entry
    from memcite.notes.operations import RECALL_FRAME

    by_id = {item["id"]: item for item in recalled.entries if item["id"]}
    if location.scope == "project":
        _out(f"Project note for {location.project}")
    elif location.scope == "global":
        _out("Global note (facts about the user, for every project)")
    else:
        _out(f"Session note for the session {location.session}")
    _out(f"Source: {location.note_file} (updated {recalled.note.updated or 'unknown'})")
    _out(RECALL_FRAME)
    extra = [line for line in recalled.note.preamble if line.strip()
             and not line.startswith(("# ", "Project:", "Scope:", "Session:", "Updated:"))]
    if extra:
        _out()
        for line in extra:
            _out(shown(line))
    for section in recalled.note.sections:
        if not any(isinstance(item, Entry) or item.strip() for item in section.items):
            continue  # an empty section: no heading with nothing under it
        _out()
        _out(shown(section.heading))
        for item in section.items:
            if not isinstance(item, Entry):
                if item.strip():
                    _out(shown(item))
                continue
            info = by_id.get(item.id, {})
            age = info.get("age_days")
            notes_ = [f"{age} day{'' if age == 1 else 's'} old"] if age is not None else []
            if info.get("expired"):
                notes_.append(f"expired {item.get('Expires')}")
            when = f" ({', '.join(notes_)})" if notes_ else ""
            label = item.id or "no id yet"
            _out(f"{item.marker} [{label}] {shown(item.text)}{when}")
            for line in item.body:
                _out(shown(line))
            if check:
                for gone in _missing_for(recalled, item):
                    _out(f"  ! possibly stale: {gone} is not in the project now")
                for why in _missing_for(recalled, item, "stale"):
                    if why.startswith("changed "):
                        _out(f"  ! possibly stale: {why[8:]} changed in git since this entry")


def _missing_for(recalled, entry, key: str = "missing_paths") -> list[str]:
    for item in recalled.entries:
        if item["id"] == entry.id and item["text"] == entry.text:
            return item.get(key, [])
    return []


def _print_projection(recalled) -> None:
    """The event log's projection, after the note (memcite.notes.events)."""
    if not recalled.events:
        return
    from memcite.notes.events import events_path, render_projection

    text = render_projection(recalled.events)
    if text:
        _out()
        _out(f"Events: {events_path(recalled.location)} (evidence, as the note)")
        from memcite.display import shown

        sys.stdout.write(shown(text))


# --------------------------------------------------------------------------- list


def list_notes(codex_home: str | None = None, cwd: str | None = None, json: bool = False,  # noqa: A002
               scope: str | None = None, session: str | None = None) -> int:
    """Print project slugs and their Updated: dates, never content; with a scope, what that
    scope's note knows: one line per entry (id, section, topic, date, provenance)."""
    from memcite.notes import operations

    def body() -> int:
        if cwd is not None and not os.path.isdir(cwd):
            raise InputError(f"--cwd: {cwd} is not a folder")
        if scope is not None:
            return _list_scope(operations, _location(cwd, codex_home, scope, session), json)
        listed = operations.list_notes(_codex_home(codex_home))
        if json:
            dump_json({"notes": listed})
            return 0
        if not listed:
            _out("No project notes.")
        for item in listed:
            _out(f"{item['slug']}  {item['updated'] or '-'}")
        return 0

    return _run(body, None, json)


def _list_scope(operations, location, json: bool) -> int:  # noqa: A002
    listed = operations.list_entries(location)
    if json:
        dump_json({"scope": location.scope, "session": location.session,
                   "note_file": location.note_file, "entries": listed})
        return 0
    if not listed:
        _out(f"No entries in {_SCOPE_WORDS[location.scope]} ({location.note_file}).")
    for item in listed:
        how = "confirmed" if item["confirmed"] else "automatic"
        provenance = ", ".join(part for part in (
            item["via"] and f"via {item['via']}", how,
            item["source"] and f"source {item['source']}") if part)
        _out(f"{item['id'] or '(no id)'}  {item['section'] or '-':<9}  "
             f"{item['topic'] or '-'}  {item['date'] or '-'}  {provenance}")
    return 0


# --------------------------------------------------------------------------- forget and restore


def forget(entry: str | None = None, yes: bool = False, cwd: str | None = None,
           codex_home: str | None = None, db: str | None = None, json: bool = False,  # noqa: A002
           scope: str | None = None, session: str | None = None) -> int:
    """Move the note, or one entry, into the archive (recoverable)."""
    from memcite.notes import operations

    def body() -> int:
        location = _location(cwd, codex_home, scope, session)
        now = time.time()
        if not os.path.isfile(location.note_file):
            raise InputError(f"no {location.scope} note ({location.note_file}); "
                             "nothing to forget")
        conn = open_database(db, quick_check=True)  # a damaged ledger refused, nothing written
        try:
            result = _confirmed(lambda who: operations.forget_note(
                location, entry_id=entry, now=now, today=_today(now), conn=conn,
                confirmed_by=who), yes)
        finally:
            conn.close()
        _report_tightened(result.tightened)
        name = os.path.basename(result.archived)
        if json:
            again = "" if location.scope == "project" else f" --scope {location.scope}"
            dump_json({"project": location.project, "scope": location.scope, "entry_id": entry,
                       "archived": result.archived, "restore": f"memcite note restore {name}{again}",
                       "tightened": result.tightened})
            return 0
        what = f"entry {entry}" if entry else "the note"
        _out(f"moved {what} to {result.archived}")
        again = "" if location.scope == "project" else f" --scope {location.scope}"
        _out(f"nothing was deleted; bring it back with: memcite note restore {name}{again}")
        return 0

    return _run(body, db, json)


def restore(archived: str, merge: bool = False, replace: bool = False, cwd: str | None = None,
            codex_home: str | None = None, db: str | None = None, json: bool = False,  # noqa: A002
            scope: str | None = None, session: str | None = None) -> int:
    """Put an archived note or entry back."""
    from memcite.notes import operations

    def body() -> int:
        if merge and replace:
            raise InputError("--merge and --replace exclude each other")
        location = _location(cwd, codex_home, scope, session)
        now = time.time()
        conn = open_database(db, quick_check=True)  # a damaged ledger refused, nothing written
        try:
            result = operations.restore_note(location, archived, now=now, today=_today(now), conn=conn,
                                        mode="merge" if merge else "replace" if replace else None)
        finally:
            conn.close()
        _report_tightened(result.tightened)
        if json:
            dump_json({"project": location.project, "note_file": location.note_file,
                       "source": result.source, "restored": result.restored, "kept": result.kept,
                       "replaced_to": result.replaced_to, "tightened": result.tightened})
            return 0
        if result.replaced_to:
            _out(f"the active note was archived first: {result.replaced_to}")
        _out(f"restored {len(result.restored)} entr{'y' if len(result.restored) == 1 else 'ies'} "
             f"from {result.source} into {location.note_file}")
        for entry_id in result.kept:
            note(f"entry {entry_id} is in the active note with other content; the active one kept")
        _out("the archived file stays in the archive")
        return 0

    return _run(body, db, json)


def purge(archived: str, confirm: str | None = None, cwd: str | None = None,
          codex_home: str | None = None, db: str | None = None, json: bool = False,  # noqa: A002
          scope: str | None = None, session: str | None = None) -> int:
    """Delete one archived file for ever (the only irreversible command)."""
    from memcite.notes import operations
    from memcite.notes.refusals import NoteRefusal

    def body() -> int:
        if cwd is not None and not os.path.isdir(cwd):
            raise InputError(f"--cwd: {cwd} is not a folder")
        target = operations.purge_target(_codex_home(codex_home), archived, confirm)
        if scope is not None:
            location = _location(cwd, codex_home, scope, session)
            if os.path.realpath(os.path.dirname(target.path)) != os.path.realpath(
                    location.archive_dir):
                raise InputError(f"{target.path}: not in the {scope} archive "
                                 f"({location.archive_dir})")
        confirmed_by = "--confirm"
        if note_runs.interactive():
            if not note_runs.ask(f"memcite: delete {target.path} for ever? It cannot be brought back."):
                raise NoteRefusal("needs-confirmation", "not confirmed; nothing was deleted",
                                  path=target.path)
            confirmed_by = "--confirm+terminal"
        conn = open_database(db, quick_check=True)  # a damaged ledger refused, nothing written
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
    from memcite.notes.changelog import read_log

    def body() -> int:
        if limit < 0:
            raise InputError(f"--limit: must be 0 (everything) or more, not {limit}")
        location = _location(cwd, codex_home, scope, session)
        slugs: list[str] = [location.log_slug]
        if entry is not None and scope is None:
            from memcite.notes.moves import context_log_slugs

            slugs = context_log_slugs(location.cwd, location.home, _session(session))
        rows: list[dict] = []
        if os.path.exists(Locations(db=db).db_path):
            conn = open_database(db, readonly=True)
            try:
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
                if "note_log" in tables:
                    rows = read_log(conn, slug=slugs, entry_id=entry, limit=limit)
            finally:
                conn.close()
        for row in rows:
            row["at_iso"] = _iso(row["at"])
        if json:
            dump_json({"project": location.project, "slug": location.slug,
                       "scope": location.scope, "entry_id": entry, "log": rows})
            return 0
        if not rows:
            _out(f"No logged changes for {location.project}"
                 + (f" entry {entry}." if entry else "."))
        for row in rows:
            what = f"[{row['entry_id']}]" if row["entry_id"] else "(note)"
            before = (row["hash_before"] or "-")[:12]
            after = (row["hash_after"] or "-")[:12]
            where = f"  {row['file']}" if row["file"] else ""
            note_of = "" if len(slugs) == 1 else f"{row['slug']}  "
            _out(f"{row['at_iso']}  {note_of}{row['command']:<7} {row['action']:<9} {what:<8}  "
                 f"{before} -> {after}  confirmed: {row['confirmed_by']} by {row['user']}{where}")
        return 0

    return _run(body, db, json)


# --------------------------------------------------------------------------- scopes


def _show_plan(plan) -> None:
    """What a move would do, on stderr: the entry, where from, where to, what to look at."""
    sys.stderr.write(f"memcite: {plan.command} [{plan.entry_id}]\n"
                     f"  from: {plan.source.scope} ({plan.source.note_file})\n"
                     f"  to:   {plan.target.scope} ({plan.target.note_file})\n")
    for line in plan.entry.lines():
        sys.stderr.write(f"  | {line}\n")
    for concern in plan.concerns:
        sys.stderr.write(f"  ! {concern}\n")


def move(command: str, entry_id: str, to: str, text: str | None = None, yes: bool = False,
         scope: str | None = None, session: str | None = None, cwd: str | None = None,
         codex_home: str | None = None, db: str | None = None, json: bool = False) -> int:  # noqa: A002
    """Promote or demote one entry between scopes, after a person's confirmation."""
    from memcite.notes import moves
    from memcite.notes.refusals import NoteRefusal

    def body() -> int:
        folder = cwd or os.getcwd()
        if not os.path.isdir(folder):
            raise InputError(f"--cwd: {folder} is not a folder")
        plan = moves.plan_move(folder, _codex_home(codex_home), entry_id, command=command,
                               to=to, session=_session(session), from_scope=scope, text=text)
        _show_plan(plan)
        confirmed_by = "--yes" if yes else None
        if confirmed_by is None and note_runs.interactive():
            if not note_runs.ask(f"memcite: {command} [{entry_id}] to {to}?"):
                raise NoteRefusal("needs-confirmation", "not confirmed; nothing was moved",
                                  move=plan.to_json())
            confirmed_by = "terminal"
        now = time.time()
        conn = open_database(db, quick_check=True)  # a damaged ledger refused, nothing written
        try:
            result = moves.move_entry(plan, now=now, today=_today(now), conn=conn,
                                      confirmed_by=confirmed_by)
        finally:
            conn.close()
        _report_tightened(result.tightened)
        if json:
            dump_json({**plan.to_json(), "confirmed_by": result.confirmed_by, "at": int(now)})
            return 0
        _out(f"moved [{entry_id}] from {plan.source.scope} to {plan.target.scope} "
             f"({plan.target.note_file}); confirmed by {result.confirmed_by}, logged")
        return 0

    return _run(body, db, json)


def end_session(session_id: str, cwd: str | None = None, codex_home: str | None = None,
                db: str | None = None, json: bool = False) -> int:  # noqa: A002
    """Move what is left of a session's note (the entries not promoted) into the archive."""
    from memcite.notes import moves
    from memcite.readpath.projects import check_session_id

    def body() -> int:
        check_session_id(session_id)
        folder = cwd or os.getcwd()
        if not os.path.isdir(folder):
            raise InputError(f"--cwd: {folder} is not a folder")
        conn = open_database(db, quick_check=True)  # a damaged ledger refused, nothing written
        try:
            result = moves.end_session(folder, _codex_home(codex_home), session_id,
                                       now=time.time(), conn=conn)
        finally:
            conn.close()
        if json:
            dump_json({"session": session_id, "note_file": result.location.note_file,
                       "archived": result.archived, "entries": result.entries})
            return 0
        if result.archived is None:
            _out(f"the session {session_id} has no note ({result.location.note_file}); "
                 "nothing to archive")
            return 0
        _out(f"archived the session {session_id}'s note with {len(result.entries)} "
             f"entr{'y' if len(result.entries) == 1 else 'ies'} not promoted: {result.archived}")
        _out("nothing was deleted; bring it back with: memcite note restore "
             f"{os.path.basename(result.archived)} --scope session --session {session_id}")
        return 0

    return _run(body, db, json)


# --------------------------------------------------------------------------- export and import


def export(cwd: str | None = None, codex_home: str | None = None, scope: str | None = None,
           session: str | None = None) -> int:
    """Print the scope's note entries and event log as JSON Lines (memcite.notes.export)."""
    from memcite.notes.export import export_scope

    def body() -> int:
        location = _location(cwd, codex_home, scope, session)
        result = export_scope(location, now=time.time())
        sys.stdout.write("".join(line + "\n" for line in result.lines))
        note(f"exported {result.entries} entr{'y' if result.entries == 1 else 'ies'} and "
             f"{result.events} event{'' if result.events == 1 else 's'} of "
             f"{_SCOPE_WORDS[location.scope]} ({location.note_file})")
        return 0

    return _run(body, None, False)


def import_(file: str, dry_run: bool = False, other_project: bool = False, yes: bool = False,
            cwd: str | None = None, codex_home: str | None = None, db: str | None = None,
            json: bool = False, session: str | None = None) -> int:  # noqa: A002
    """Import an export's entries and events, line by line; exit 1 when a line was refused."""
    from memcite.cli.inputs import read_bytes
    from memcite.notes.export import MAX_FILE_BYTES, import_export

    def body() -> int:
        folder = cwd or os.getcwd()
        if not os.path.isdir(folder):
            raise InputError(f"--cwd: {folder} is not a folder")
        name = source_name(file)
        data = read_bytes(file, max_bytes=MAX_FILE_BYTES)
        now = time.time()
        conn = None if dry_run else open_database(db, quick_check=True)
        try:
            result = import_export(data, source=name, cwd=folder,
                                   home=_codex_home(codex_home), session=_session(session),
                                   conn=conn, now=now, today=_today(now), dry_run=dry_run,
                                   other_project=other_project, yes=yes)
        finally:
            if conn is not None:
                conn.close()
        _report_tightened(result.tightened)
        counts = result.counts()
        if json:
            dump_json({"source": result.source, "dry_run": dry_run, "header": result.header,
                       "counts": counts, "lines": result.outcomes})
        else:
            for outcome in result.outcomes:
                what = f"{outcome['kind'] or 'line'} {outcome['id'] or ''}".rstrip()
                if outcome["action"] == "refused":
                    sys.stderr.write(f"memcite: {name}: line {outcome['line']}: refused "
                                     f"({outcome['reason']}): {outcome['message']}\n")
                elif outcome["action"] == "skipped":
                    _out(f"line {outcome['line']}: skipped {what}: {outcome['message']}")
                else:
                    _out(f"line {outcome['line']}: {what}: {outcome['message']}")
            verb = "would import" if dry_run else "imported"
            _out(f"{name}: {verb} {counts['imported']}, skipped {counts['skipped']} (already "
                 f"there), refused {counts['refused']}")
            if dry_run:
                note("dry run: nothing was written")
        return 1 if counts["refused"] else 0

    return _run(body, db, json)
