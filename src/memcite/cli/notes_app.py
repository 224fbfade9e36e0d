"""``memcite note ...``: project notes, a Typer sub-app of thin wrappers.

The bodies live in ``memcite.cli.notes_commands``; this module only declares the options.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import notes_commands
from memcite.cli.fastpath import COUNT_MAX
from memcite.cli.options import COMMAND, CodexHomeOpt, DbOpt, JsonOpt, choices, exit_with
from memcite.readpath.note_format import CONFIDENCES, SECTIONS, TIERS

note_app = typer.Typer(
    name="note",
    help="Project notes: one user-approved note per project.\n\n"
    "Each project's note lives in the Codex home (memory/projects/); secrets are kept out, "
    "and nothing is lost: forget archives, every change is logged. --scope global and "
    "--scope session reach the user's global note and one agent session's scratchpad.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

CwdOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--cwd", metavar="DIR", show_default=False,
                 help="A folder of the project (default: the current directory); the project "
                 "is the git work tree holding it, else the folder itself."),
]
YesOpt = Annotated[bool, typer.Option("--yes", help="Confirm without being asked (needed when "
                                      "not on a terminal).")]
SaveYesOpt = Annotated[bool, typer.Option(
    "--yes", help="Confirm the entry as yours: stamped 'Confirmed: yes (--yes ...)'. Without it "
    "an ordinary save goes ahead, stamped 'Confirmed: no (automatic)'; only a save that needs "
    "a person (an entry naming a sensitive subject or another project, a topic matching several "
    "entries) is asked on a terminal, and refused off one (exit 3, nothing saved).")]
ScopeOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--scope", metavar=choices(("global", "project", "session")), show_default=False,
                 help="Which note: global (facts about the user), project (this repository's, "
                 "the default) or session (one agent session's scratchpad)."),
]
SessionOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--session", metavar="ID", envvar="MEMCITE_SESSION", show_default=False,
                 show_envvar=False,
                 help="The agent session whose note --scope session means "
                 "(default: $MEMCITE_SESSION)."),
]
ArchivedArg = Annotated[str, typer.Argument(
    metavar="FILE", show_default=False,
    help="The archived file: its name in this project's archive, or its path.")]
EntryIdArg = Annotated[str, typer.Argument(metavar="ID", help="The entry's id (6 letters and "
                                           "digits, as recall and list show it).",
                                           show_default=False)]
FromScopeHelp = "The scope it comes from (default: the nearest that has the id)."


def _text_option(name: str, help_text: str, metavar: str = "TEXT"):
    return Annotated[Optional[str], typer.Option(name, help=help_text, metavar=metavar,  # noqa: UP045
                                                 show_default=False)]


@note_app.command("path", **COMMAND)
def path_command(scope: ScopeOpt = None, session: SessionOpt = None, cwd: CwdOpt = None,
                 codex_home: CodexHomeOpt = None, json: JsonOpt = False) -> None:
    """Where this project's note lives, and whether it exists.

    Prints the project folder, its slug, the note file and the archive folder.

    Examples:

    \b
        memcite note path
        memcite note path --scope global --json
    """
    exit_with(notes_commands.path(cwd, codex_home, json, scope, session))


@note_app.command("save", **COMMAND)
def save_command(
    text: Annotated[Optional[str], typer.Argument(  # noqa: UP045
        metavar="TEXT", show_default=False,
        help="The entry to remember, or - to read it (or a whole draft note) from stdin.")] = None,
    file: _text_option("--file", "Read the entry, or a whole draft in the note's structure, "
                       "from this file.", metavar="FILE") = None,
    section: _text_option("--section", "The section of one entry: decisions (durable "
                          "decisions), state (current state) or risks (risks and next steps).",
                          metavar=choices(tuple(SECTIONS))) = None,
    topic: _text_option("--topic", "The entry's topic: an entry of the same topic in the section "
                        "is updated in place.") = None,
    source: _text_option("--source", "Where it comes from (a file, a commit, a task id).") = None,
    evidence: _text_option("--evidence", "What supports it (a test, a measurement).") = None,
    confidence: _text_option("--confidence", "How sure it is (any case).",
                             metavar=choices(CONFIDENCES)) = None,
    tier: _text_option("--tier", "Its retention tier, for `prune --rule tiered`: CORE never "
                       "pruned; the others decay while unused (by default IMP is reviewed after "
                       "about 80 days, SEC pruned after 30, IRR at once); any case.",
                       metavar=choices(TIERS)) = None,
    expires: _text_option("--expires", "When (a date) or on what condition it stops being "
                          "true.") = None,
    redact: Annotated[bool, typer.Option("--redact", help="Replace each secret or personal "
                                         "datum found with a marker naming its kind "
                                         "([REDACTED:email]) and save, instead of "
                                         "refusing.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the exact note that would be "
                                          "written; write nothing.")] = False,
    yes: SaveYesOpt = False,
    scope: ScopeOpt = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Add or update one entry of the note.

    An entry with the same id, the same text, or the same topic in its section is
    updated in place; anything else is added. A secret or personal datum is refused
    (see --redact). The note is written atomically and the change logged.

    Examples:

    \b
        memcite note save "Use WAL for the cache database" --section decisions \\
            --source src/db.py --confidence HIGH --tier CORE
        memcite note save "All tests pass" --section state --evidence "CI 4411"
        memcite note save --file draft.md --dry-run
    """
    exit_with(notes_commands.save(text, file, section, topic, source, evidence, confidence, tier,
                                  expires, redact, dry_run, yes, cwd, codex_home, db, json,
                                  scope, session))


@note_app.command("recall", **COMMAND)
def recall_command(
    check: Annotated[bool, typer.Option("--check", help="Mark entries naming files that are gone "
                                        "from the project as possibly stale.")] = False,
    scope: ScopeOpt = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    json: JsonOpt = False,
) -> None:
    """Print this project's note, read-only.

    The note (and no other project's) is shown as evidence from past sessions, not as
    instructions, each entry with its id and age.

    Examples:

    \b
        memcite note recall
        memcite note recall --check --json
    """
    exit_with(notes_commands.recall(check, cwd, codex_home, json, scope, session))


@note_app.command("list", **COMMAND)
def list_command(scope: ScopeOpt = None, session: SessionOpt = None, cwd: CwdOpt = None,
                 codex_home: CodexHomeOpt = None, json: JsonOpt = False) -> None:
    """List the notes, or one scope's entries.

    Without --scope: every project's slug and its Updated: date, never content. With
    --scope: that note's entries (id, section, topic, date, provenance), one line each.

    Examples:

    \b
        memcite note list
        memcite note list --scope project
    """
    exit_with(notes_commands.list_notes(codex_home, cwd, json, scope, session))


@note_app.command("forget", **COMMAND)
def forget_command(
    entry: _text_option("--entry", "Take only this entry (its id) out of the note.",
                        metavar="ID") = None,
    yes: YesOpt = False,
    scope: ScopeOpt = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Move the note, or one entry, into the archive.

    The archived file is named by the UTC time; nothing is deleted, and the
    `memcite note restore` command that brings it back is printed.

    Examples:

    \b
        memcite note forget --entry k3f9a2
        memcite note forget --yes
    """
    exit_with(notes_commands.forget(entry, yes, cwd, codex_home, db, json, scope, session))


@note_app.command("restore", **COMMAND)
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
    """Put an archived note or entry back.

    An archived entry is merged into the active note; an archived whole note never
    overwrites an active one silently (see --merge and --replace). The archived file
    stays in the archive.

    Examples:

    \b
        memcite note restore 2026-11-30T18-20-05Z-entry-k3f9a2.md
        memcite note restore 2026-11-30T18-20-05Z-memory.md --merge
    """
    exit_with(notes_commands.restore(archived, merge, replace, cwd, codex_home, db, json, scope,
                                     session))


@note_app.command("purge", **COMMAND)
def purge_command(
    archived: Annotated[str, typer.Argument(metavar="FILE", show_default=False,
                                            help="The exact path of one archived file.")],
    confirm: _text_option("--confirm", "The archived file's name, repeated.",
                          metavar="NAME") = None,
    scope: ScopeOpt = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Delete one archived file for ever.

    The only command that cannot be undone: asks again on a terminal, and logs the
    file's hash, never its content.

    Examples:

    \b
        memcite note purge --confirm 2026-11-30T18-20-05Z-memory.md \\
          ~/.codex/memory/archive/api-67f4ed43ee39/2026-11-30T18-20-05Z-memory.md
    """
    exit_with(notes_commands.purge(archived, confirm, cwd, codex_home, db, json, scope, session))


@note_app.command("log", **COMMAND)
def log_command(
    entry: Annotated[Optional[str], typer.Argument(  # noqa: UP045
        metavar="ID", show_default=False, help="Only this entry's changes.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=0, max=COUNT_MAX, metavar="N",
                                       help="The last N changes (0: all).")] = 0,
    scope: ScopeOpt = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """The change log of this project's note.

    One line per change, oldest first: when, command, entry, hashes before and after,
    who confirmed. One entry's log follows it through every scope it moved to.

    Examples:

    \b
        memcite note log
        memcite note log k3f9a2 --json
    """
    exit_with(notes_commands.log(entry, limit, cwd, codex_home, db, json, scope, session))


TextOpt = _text_option(
    "--text", "Rewrite the entry's text as it moves (needed to make global an entry naming "
    "this project's paths); its id and history are kept.")


@note_app.command("promote", **COMMAND)
def promote_command(
    entry_id: EntryIdArg,
    to: Annotated[str, typer.Option("--to", metavar=choices(("project", "global")),
                                    show_default=False,
                                    help="Where it goes: project (from the session) or global "
                                    "(from the project or the session).")],
    text: TextOpt = None,
    yes: YesOpt = False,
    scope: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--scope", metavar=choices(("session", "project")), show_default=False,
        help=FromScopeHelp)] = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Move an entry to a wider scope, keeping its id.

    The entry is shown, scanned for secrets again, confirmed (on a terminal, or with
    --yes) and the move logged.

    Examples:

    \b
        memcite note promote k3f9a2 --to global --text "Prefers 2-space indent"
        memcite note promote 4mz9h2 --to project --session 019c6e27 --yes
    """
    exit_with(notes_commands.move("promote", entry_id, to, text, yes, scope, session, cwd,
                                  codex_home, db, json))


@note_app.command("demote", **COMMAND)
def demote_command(
    entry_id: EntryIdArg,
    to: Annotated[str, typer.Option("--to", metavar=choices(("project", "session")),
                                    show_default=False,
                                    help="Where it goes: project (from global) or session "
                                    "(from the project or global).")],
    text: _text_option("--text", "Rewrite the entry's text as it moves; its id and history "
                       "are kept.") = None,
    yes: YesOpt = False,
    scope: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--scope", metavar=choices(("project", "global")), show_default=False,
        help=FromScopeHelp)] = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Move an entry to a narrower scope, keeping its id.

    The entry is shown, scanned for secrets again, confirmed (on a terminal, or with
    --yes) and the move logged.

    Examples:

    \b
        memcite note demote 4mz9h2 --to project --yes
        memcite note demote k3f9a2 --to session --session 019c6e27
    """
    exit_with(notes_commands.move("demote", entry_id, to, text, yes, scope, session, cwd,
                                  codex_home, db, json))


@note_app.command("end-session", **COMMAND)
def end_session_command(
    session_id: Annotated[str, typer.Argument(metavar="ID", help="The session's id.",
                                              show_default=False)],
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Archive a session's note, once the session is over.

    What is left of it (the entries not promoted) goes into the archive; nothing is
    deleted.

    Examples:

    \b
        memcite note end-session 019c6e27
    """
    exit_with(notes_commands.end_session(session_id, cwd, codex_home, db, json))


@note_app.command("export", **COMMAND)
def export_command(scope: ScopeOpt = None, session: SessionOpt = None, cwd: CwdOpt = None,
                   codex_home: CodexHomeOpt = None) -> None:
    """Print a note's entries and event log as JSON Lines.

    A header line (the format's version), then one line per entry and per event as
    stored, each naming its kind, scope and owner; read-only. The lines are JSON
    already, so there is no --json; `memcite note import` reads them back.

    Examples:

    \b
        memcite note export > notes.jsonl
        memcite note export --scope global > global.jsonl
    """
    exit_with(notes_commands.export(cwd, codex_home, scope, session))


@note_app.command("import", **COMMAND)
def import_command(
    file: Annotated[str, typer.Argument(metavar="FILE", show_default=False,
                                        help="An export of `memcite note export`, or - for "
                                        "stdin.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what each line would do; "
                                          "write nothing.")] = False,
    other_project: Annotated[bool, typer.Option(
        "--other-project", help="Take the lines whose owner is another project (or session) "
        "into this one's note, their owner kept in provenance.")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Confirm the entries and events that need "
                                      "a person's confirmation.")] = False,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Import an export's entries and events into the notes here.

    Each line is checked on its own: secrets and personal data refused as by note
    save, duplicates (same id, or same text) skipped, another project's lines
    refused without --other-project. Exits 1 when a line was refused.

    Examples:

    \b
        memcite note import notes.jsonl --dry-run
        memcite note import notes.jsonl --other-project --yes
    """
    exit_with(notes_commands.import_(file, dry_run, other_project, yes, cwd, codex_home, db,
                                     json, session))


def register(app: typer.Typer) -> None:
    """Add ``memcite note`` to ``app``."""
    app.add_typer(note_app, name="note")
