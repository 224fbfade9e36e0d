"""``memcite note ...``: project notes, a Typer sub-app of thin wrappers.

The bodies live in ``memcite.cli.notes_commands``; this module only declares the options.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import notes_commands
from memcite.cli.options import CodexHomeOpt, DbOpt, JsonOpt, exit_with

note_app = typer.Typer(
    name="note",
    help="Project notes: one user-approved note per project, secrets kept out, never lost.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

CwdOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--cwd", help="A folder of the project (default: the current directory); the "
                 "project is the git work tree holding it, else the folder itself.",
                 show_default=False),
]
YesOpt = Annotated[bool, typer.Option("--yes", help="Confirm without being asked (needed when "
                                      "not on a terminal).")]
ScopeOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--scope", metavar="global|project|session", show_default=False,
                 help="Which note: global (facts about the user), project (this repository's, "
                 "the default) or session (one agent session's scratchpad)."),
]
SessionOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--session", metavar="ID", envvar="MEMCITE_SESSION", show_default=False,
                 help="The agent session whose note --scope session means "
                 "(default: $MEMCITE_SESSION)."),
]
ArchivedArg = Annotated[str, typer.Argument(help="The archived file: its name in this project's "
                                            "archive, or its path.", show_default=False)]


def _text_option(name: str, help_text: str):
    return Annotated[Optional[str], typer.Option(name, help=help_text, show_default=False)]  # noqa: UP045


@note_app.command("path")
def path_command(scope: ScopeOpt = None, session: SessionOpt = None, cwd: CwdOpt = None,
                 codex_home: CodexHomeOpt = None, json: JsonOpt = False) -> None:
    """Where this project's note lives: project folder, slug, note file, archive, and whether it exists."""
    exit_with(notes_commands.path(cwd, codex_home, json, scope, session))


@note_app.command("save")
def save_command(
    text: Annotated[Optional[str], typer.Argument(  # noqa: UP045
        help="The entry to remember, or - to read it (or a whole draft note) from stdin.",
        show_default=False)] = None,
    file: _text_option("--file", "Read the entry, or a whole draft in the note's structure, "
                       "from this file.") = None,
    section: _text_option("--section", "decisions, state or risks (for one entry).") = None,
    topic: _text_option("--topic", "The entry's topic: an entry of the same topic in the section "
                        "is updated in place.") = None,
    source: _text_option("--source", "Where it comes from (file, commit, task id).") = None,
    evidence: _text_option("--evidence", "What supports it (a test, a measurement).") = None,
    confidence: _text_option("--confidence", "HIGH, MEDIUM or LOW.") = None,
    tier: _text_option("--tier", "CORE, IMP, SEC or IRR.") = None,
    expires: _text_option("--expires", "When (a date) or on what condition it stops being "
                          "true.") = None,
    redact: Annotated[bool, typer.Option("--redact", help="Replace each secret or personal "
                                         "datum found with [REDACTED:<kind>] and save, instead "
                                         "of refusing.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the exact note that would be "
                                          "written; write nothing.")] = False,
    yes: YesOpt = False,
    scope: ScopeOpt = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Add or update one entry (merged by id, text, then topic); written atomically and logged."""
    exit_with(notes_commands.save(text, file, section, topic, source, evidence, confidence, tier,
                                  expires, redact, dry_run, yes, cwd, codex_home, db, json,
                                  scope, session))


@note_app.command("recall")
def recall_command(
    check: Annotated[bool, typer.Option("--check", help="Mark entries naming files that are gone "
                                        "from the project as possibly stale.")] = False,
    scope: ScopeOpt = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    json: JsonOpt = False,
) -> None:
    """Print this project's note (and no other) as evidence from the past; read-only."""
    exit_with(notes_commands.recall(check, cwd, codex_home, json, scope, session))


@note_app.command("list")
def list_command(scope: ScopeOpt = None, session: SessionOpt = None, cwd: CwdOpt = None,
                 codex_home: CodexHomeOpt = None, json: JsonOpt = False) -> None:
    """Project slugs and their Updated: dates, never content; with --scope, that scope's entries
    (id, section, topic, date, provenance), one line each."""
    exit_with(notes_commands.list_notes(codex_home, cwd, json, scope, session))


@note_app.command("forget")
def forget_command(
    entry: _text_option("--entry", "Take only this entry (its id) out of the note.") = None,
    yes: YesOpt = False,
    scope: ScopeOpt = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Move the note (or one entry) into the archive under a UTC timestamp; nothing is deleted."""
    exit_with(notes_commands.forget(entry, yes, cwd, codex_home, db, json, scope, session))


@note_app.command("restore")
def restore_command(
    archived: ArchivedArg,
    merge: Annotated[bool, typer.Option("--merge", help="Add the archived entries the active note "
                                        "lacks.")] = False,
    replace: Annotated[bool, typer.Option("--replace", help="Archive the active note first, then "
                                          "put the archived one in its place.")] = False,
    scope: ScopeOpt = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Put an archived note or entry back (an active note is never overwritten silently)."""
    exit_with(notes_commands.restore(archived, merge, replace, cwd, codex_home, db, json, scope,
                                     session))


@note_app.command("purge")
def purge_command(
    archived: Annotated[str, typer.Argument(help="The exact path of one archived file.",
                                            show_default=False)],
    confirm: _text_option("--confirm", "The archived file's name, repeated.") = None,
    scope: ScopeOpt = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Delete one archived file for ever (asks again on a terminal); logged without content."""
    exit_with(notes_commands.purge(archived, confirm, cwd, codex_home, db, json, scope, session))


@note_app.command("log")
def log_command(
    entry: Annotated[Optional[str], typer.Argument(help="Only this entry's changes.",  # noqa: UP045
                                                   show_default=False)] = None,
    limit: Annotated[int, typer.Option("--limit", min=0, help="The last N changes (0: all).")] = 0,
    scope: ScopeOpt = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """The change log of this project's note: when, command, entry, hashes, who confirmed."""
    exit_with(notes_commands.log(entry, limit, cwd, codex_home, db, json, scope, session))


EntryIdArg = Annotated[str, typer.Argument(metavar="ID", help="The entry's id.",
                                           show_default=False)]
TextOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--text", show_default=False, help="Rewrite the entry's text as it moves (needed to promote "
    "to global an entry naming this project's paths); its id and history are kept.")]


@note_app.command("promote")
def promote_command(
    entry_id: EntryIdArg,
    to: Annotated[str, typer.Option("--to", metavar="project|global", show_default=False,
                                    help="Where it goes: project (from the session) or global "
                                    "(from the project or the session).")],
    text: TextOpt = None,
    yes: YesOpt = False,
    scope: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--scope", metavar="session|project", show_default=False,
        help="The scope it comes from (default: the nearest that has the id).")] = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Move an entry to a wider scope: shown, scanned again, confirmed, logged; id kept."""
    exit_with(notes_commands.move("promote", entry_id, to, text, yes, scope, session, cwd,
                                  codex_home, db, json))


@note_app.command("demote")
def demote_command(
    entry_id: EntryIdArg,
    to: Annotated[str, typer.Option("--to", metavar="project|session", show_default=False,
                                    help="Where it goes: project (from global) or session "
                                    "(from the project or global).")],
    text: TextOpt = None,
    yes: YesOpt = False,
    scope: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--scope", metavar="project|global", show_default=False,
        help="The scope it comes from (default: the nearest that has the id).")] = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Move an entry to a narrower scope: shown, scanned again, confirmed, logged; id kept."""
    exit_with(notes_commands.move("demote", entry_id, to, text, yes, scope, session, cwd,
                                  codex_home, db, json))


@note_app.command("end-session")
def end_session_command(
    session_id: Annotated[str, typer.Argument(metavar="ID", help="The session id.",
                                              show_default=False)],
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Archive a session's note with the entries not promoted; nothing is deleted."""
    exit_with(notes_commands.end_session(session_id, cwd, codex_home, db, json))


def register(app: typer.Typer) -> None:
    """Add ``memcite note`` to ``app``."""
    app.add_typer(note_app, name="note")
