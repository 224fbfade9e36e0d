"""How the note and event commands run (``memcite.cli.notes_commands``,
``memcite.cli.event_commands``, ``memcite.cli.search_commands``): which note a command is
about, the wrapper that maps refusals and errors to exit codes, and the confirmation asked
on a terminal. Free of Typer.
"""

from __future__ import annotations

import os
import sqlite3
import sys

from memcite.cli.console import dump_json, note, report_error
from memcite.errors import InputError, MemciteError
from memcite.paths import Locations


def codex_home_of(codex_home: str | None) -> str:
    """The Codex home of this run (``--codex-home``, ``$CODEX_HOME``, ``~/.codex``)."""
    return Locations(codex_home=codex_home).codex_home_path


def note_location(cwd: str | None, codex_home: str | None, scope: str | None = None,
                  session: str | None = None, locations: Locations | None = None):
    """The note a command is about: the project of ``cwd`` (or the working directory), in the
    scope asked for (the project's by default); ``locations``: the command's own, when it
    built one (else one is built from ``codex_home``)."""
    from memcite.notes.storage import locate_note

    folder = cwd or os.getcwd()
    if not os.path.isdir(folder):
        raise InputError(f"--cwd: {folder} is not a folder")
    # only an absent --scope means the project's note: `--scope ''` is a usage error
    home = locations.codex_home_path if locations is not None else codex_home_of(codex_home)
    return locate_note(folder, home,
                       scope="project" if scope is None else scope, session=session_of(session))


def session_of(session: str | None) -> str | None:
    """``--session``, else ``$MEMCITE_SESSION`` (the fast path and Typer both pass it)."""
    return session or os.environ.get("MEMCITE_SESSION") or None


def out(line: str = "") -> None:
    """One line on stdout (what comes from a note or a person goes through
    ``memcite.display.shown`` before it gets here)."""
    sys.stdout.write(line + "\n")


def write_lines(lines: list[tuple[str, str]]) -> None:
    """Write a command's lines in order (``memcite.notes.render``): ``out`` on stdout, ``note``
    on stderr after ``memcite: ``, ``err`` on stderr as given."""
    for stream, text in lines:
        if stream == "out":
            out(text)
        elif stream == "note":
            note(text)
        else:
            sys.stderr.write(text + "\n")


def _refused(refusal, json: bool) -> int:  # noqa: A002
    sys.stderr.write(f"memcite: refused ({refusal.reason}): {refusal.message}\n")
    proposal = refusal.details.get("proposed_note")
    if json:
        dump_json(refusal.to_json())
    elif proposal is not None:
        sys.stdout.write(proposal if proposal.endswith("\n") else proposal + "\n")
    return refusal.exit_code


def run_body(body, db: str | None, json: bool) -> int:  # noqa: A002
    """Run a command body; map refusals, memcite errors and database errors to exit codes."""
    from memcite.notes.refusals import NoteRefusal

    try:
        return body()
    except NoteRefusal as refusal:
        return _refused(refusal, json)
    except MemciteError as error:
        return report_error(error)
    except sqlite3.Error as error:
        from memcite.ledger.store import StoreError

        return report_error(StoreError(
            f"{db or 'the memcite database'}: {error}; the note's change log could not be written",
            hint="check the database; the note file itself is verified on every write"))
    except KeyboardInterrupt:
        return 130  # memcite.__main__ says "interrupted", once


def interactive() -> bool:
    """Whether a person is there to answer (stdin and stderr are terminals)."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def ask(question: str) -> bool:
    """Ask a yes/no question on the terminal; only ``y`` or ``yes`` is a yes."""
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def confirmed(run, yes: bool):
    """Run ``run(confirmed_by)``; when it needs confirmation, ask on a terminal and run again."""
    from memcite.notes.refusals import NoteRefusal

    try:
        return run("--yes" if yes else None)
    except NoteRefusal as refusal:
        if refusal.reason != "needs-confirmation" or yes or not interactive():
            raise
        if not ask(f"memcite: {refusal.message.split('. Nothing')[0]}.\nGo ahead?"):
            raise NoteRefusal("needs-confirmation", "not confirmed; nothing was changed",
                              **refusal.details) from None
        return run("terminal")


def report_tightened(tightened: list[str]) -> None:
    """Say which note folders were wider than 0700 and were tightened."""
    for folder in tightened:
        note(f"{folder}: was wider than 0700; tightened to 0700")
