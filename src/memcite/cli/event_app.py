"""``memcite event ...``: a project's append-only event log, a Typer sub-app of thin wrappers.

The bodies live in ``memcite.cli.event_commands``; this module only declares the options.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import event_commands
from memcite.cli.notes_app import CwdOpt, ScopeOpt, SessionOpt, YesOpt
from memcite.cli.options import COMMAND, CodexHomeOpt, JsonOpt, choices, exit_with
from memcite.notes.events import KINDS

event_app = typer.Typer(
    name="event",
    help="A project's append-only event log.\n\n"
    "Appended only, never rewritten (a correction supersedes an event); kept beside the "
    "project's note, with its modes and secret rules. Recall and the instructions show its "
    "projection; `memcite hook pre-tool` warns the agent from it.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

KindMeta = choices(KINDS)


@event_app.command("add", **COMMAND)
def add_command(
    text: Annotated[Optional[str], typer.Argument(  # noqa: UP045
        metavar="TEXT", show_default=False,
        help="What happened (commands in backticks name the approach), or - for stdin.")] = None,
    kind: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--kind", metavar=KindMeta, show_default=False,
        help="The event's kind (required).")] = None,
    file: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
        "--file", metavar="PATH", show_default=False,
        help="A file of the project the event concerns (again for more).")] = None,
    supersedes: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--supersedes", metavar="ID", show_default=False,
        help="The event this one corrects or closes; it is then hidden from recall.")] = None,
    fragile: Annotated[bool, typer.Option(
        "--fragile", help="Mark the files named fragile: the gate warns before they are "
        "touched.")] = False,
    redact: Annotated[bool, typer.Option(
        "--redact", help="Replace each secret or personal datum found with a marker naming "
        "its kind and record, instead of refusing.")] = False,
    yes: YesOpt = False,
    scope: ScopeOpt = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    json: JsonOpt = False,
) -> None:
    """Append one event to the project's log.

    The text and files are checked (secrets refused, files inside the project only), then
    the event is appended with its id, time and provenance; nothing already logged changes.

    Examples:

    \b
        memcite event add --kind failure "`pytest -n 8` deadlocks" \\
            --file tests/ledger/test_sync.py
        memcite event add --kind fix "fixed seed" --supersedes ev-3k9f2a7q
        memcite event add --kind note "hand-tuned" --file src/x.py --fragile
    """
    exit_with(event_commands.add(kind, text, file, supersedes, fragile, redact, yes, cwd,
                                 codex_home, json, scope, session))


@event_app.command("list", **COMMAND)
def list_command(
    kind: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--kind", metavar=KindMeta, show_default=False,
        help="Only events of this kind.")] = None,
    file: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--file", metavar="PATH", show_default=False,
        help="Only events naming this file.")] = None,
    scope: ScopeOpt = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    json: JsonOpt = False,
) -> None:
    """List the log's events, oldest first.

    Each with its id, time, kind, text and files, marked when superseded, or stale (a file
    it names is gone, or changed in git since).

    Examples:

    \b
        memcite event list
        memcite event list --kind failure --file src/sync.py --json
    """
    exit_with(event_commands.list_events(kind, file, cwd, codex_home, json, scope, session))


@event_app.command("show", **COMMAND)
def show_command(
    event_id: Annotated[str, typer.Argument(
        metavar="ID", show_default=False, help="The event's id, as event list shows it.")],
    scope: ScopeOpt = None,
    session: SessionOpt = None,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    json: JsonOpt = False,
) -> None:
    """Show one event and its provenance.

    Who recorded it, via the CLI or MCP, whether a person confirmed it, what it supersedes
    and what supersedes it.

    Examples:

    \b
        memcite event show ev-3k9f2a7q
        memcite event show ev-3k9f2a7q --json
    """
    exit_with(event_commands.show(event_id, cwd, codex_home, json, scope, session))


def register(app: typer.Typer) -> None:
    """Add ``memcite event`` to ``app``."""
    app.add_typer(event_app, name="event")
