"""The ``memcite`` command line: parses arguments, calls the library, prints, maps errors to exit codes.

Per-reply commands keep their bodies in light modules (see ``memcite.cli.fastpath``);
the other command groups live in ``cli_*`` modules that add themselves here.
"""

from __future__ import annotations

import inspect
from typing import Annotated

import typer
from typer.core import TyperGroup

from memcite.cli import citations_commands
from memcite.cli.console import memcite_version
from memcite.cli.inputs import DEFAULT_MAX_BYTES
from memcite.cli.options import (
    COMMAND,
    ErrorsOpt,
    JsonOpt,
    MaxBytesOpt,
    SourceArg,
    choices,
    exit_with,
)
from memcite.errors import EXIT_INTERRUPTED, EXIT_OK

ROOT_HELP = """Read, record and audit the memory citations of coding agents.

Start with `memcite demo` (a sample Codex home in a temporary folder; nothing outside
it is written), then `memcite setup codex` to wire memcite into Codex. `memcite COMMAND
--help` tells more of each command.

Examples:

\b
    memcite demo
    memcite setup codex --apply
    memcite stats
"""

# Help is plain text (no rich boxes), as wide as the terminal allows up to this many columns.
HELP_WIDTH = 100

# The command list of `memcite --help`, in groups (each command's Typer ``rich_help_panel``),
# each group and each command in it in this order: what a new user needs first, first.
HELP_PANELS: dict[str, tuple[str, ...]] = {
    "Start here": ("demo", "setup", "doctor", "stats", "report"),
    "Questions about your memory": ("show", "trace", "audit", "thread", "search", "select",
                                    "consolidation", "lint", "prune", "restore", "archived",
                                    "sync"),
    "Notes": ("note", "instructions", "mcp"),
    "Pipelines and the protocol": ("ingest", "record", "rebuild", "parse", "strip", "truncate",
                                   "schema", "conformance", "event", "hook"),
    "Fleet": ("push",),
}


class _OutputClosed(Exception):
    """A BrokenPipeError carried past click, which would otherwise exit 1 for it."""


class MemciteGroup(TyperGroup):
    """memcite's command group: whole one-line summaries in the command list, and a closed
    output pipe handed to ``memcite.__main__`` (exit 141) instead of click's exit 1."""

    def format_commands(self, ctx, formatter) -> None:
        panels: dict[str, list[tuple[str, str]]] = {}
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                summary = inspect.cleandoc(command.help or "").split("\n\n", 1)[0]
                panel = getattr(command, "rich_help_panel", None) or "Commands"
                panels.setdefault(panel, []).append((name, " ".join(summary.split())))
        order = {name: place for names in HELP_PANELS.values() for place, name in enumerate(names)}
        for panel in sorted(panels, key=lambda p: list(HELP_PANELS).index(p)
                            if p in HELP_PANELS else len(HELP_PANELS)):
            with formatter.section(panel):
                formatter.write_dl(sorted(panels[panel], key=lambda row: order.get(row[0], 99)))

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            raise _OutputClosed() from exc


app = typer.Typer(
    name="memcite",
    cls=MemciteGroup,
    help=ROOT_HELP,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": HELP_WIDTH},
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"memcite {memcite_version()}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", help="Print memcite's version and exit.",
                     is_eager=True, callback=_print_version),
    ] = False,
) -> None:
    """Read, record and audit the memory citations of coding agents."""


def run_typer(args: list[str]) -> int:
    """Run ``args`` through Typer and return the exit code (usage errors printed, exit 2)."""
    try:
        result = app(args=args, prog_name="memcite", standalone_mode=False)
    except _OutputClosed:
        raise BrokenPipeError from None
    except SystemExit as exc:  # click's own answer to a closed pipe (while printing help): exit 1
        if isinstance(exc.__context__, BrokenPipeError):
            raise BrokenPipeError from None
        raise
    except typer.Abort:
        return EXIT_INTERRUPTED
    except typer.TyperException as error:  # click's usage errors: printed as click prints them
        _show_masked(error)
        if args[:1] == ["-v"] and getattr(error, "option_name", None) == "-v":
            import sys

            sys.stderr.write("hint: memcite -V (or --version) prints memcite's version\n")
        return error.exit_code
    return result if isinstance(result, int) else EXIT_OK


def _show_masked(error: typer.TyperException) -> None:
    """Print a click error as click prints it, secrets masked: click quotes the arguments it
    could not read (``No such option: -----BEGIN RSA PRIVATE KEY-----…``: a PEM block starts
    with ``-``, which click takes for an option; a key given for a command name or a value)."""
    import io
    import sys

    from memcite.cli import console
    from memcite.cli.console import masked

    if console.json_errors():  # a usage error under --json: one JSON object too
        sys.stderr.write(console.error_json(error.format_message(), None, error.exit_code) + "\n")
        sys.stderr.flush()
        return
    buffer = io.StringIO()
    error.show(file=buffer)
    sys.stderr.write(masked(buffer.getvalue()))
    sys.stderr.flush()


ProfileOpt = Annotated[
    str,
    typer.Option(
        "--profile",
        metavar=choices(citations_commands.PROFILE_CHOICES),
        help="codex: read exactly as Codex does, problems are warnings; "
        "strict: the same reading, problems are errors (exit 1; strip still writes the reply).",
    ),
]


@app.command(**COMMAND)
def parse(
    source: SourceArg = None,
    profile: ProfileOpt = "codex",
    errors: ErrorsOpt = "strict",
    max_bytes: MaxBytesOpt = DEFAULT_MAX_BYTES,
    json: JsonOpt = False,
) -> None:
    """Read the citation blocks of one reply.

    Prints the entries, the rollout ids, what Codex counts and the diagnostics (the
    visible reply is `memcite strip`'s). With --profile strict, a problem is an error.

    Examples:

    \b
        memcite parse reply.txt
        memcite parse --json --profile strict reply.txt
        memcite parse - < reply.txt
    """
    exit_with(citations_commands.parse(source, profile, errors, max_bytes, json))


@app.command(**COMMAND)
def strip(
    source: SourceArg = None,
    profile: ProfileOpt = "codex",
    errors: ErrorsOpt = "strict",
    max_bytes: MaxBytesOpt = DEFAULT_MAX_BYTES,
) -> None:
    """Write a reply without its citation blocks.

    The visible reply, byte for byte, with every citation block removed, to stdout.

    Examples:

    \b
        memcite strip reply.txt > visible.txt
        memcite strip --errors replace - < reply.txt
    """
    exit_with(citations_commands.strip(source, profile, errors, max_bytes))


def _register_command_groups() -> None:
    from memcite.cli import (
        audit_app,
        codex_app,
        conformance_app,
        consolidation_app,
        contracts_app,
        event_app,
        fleet_app,
        ledger_app,
        lint_app,
        mcp_app,
        notes_app,
        readpath_app,
        report_app,
        retention_app,
        search_app,
        thread_app,
    )

    for module in (ledger_app, readpath_app, retention_app, report_app, notes_app, event_app,
                   search_app, lint_app, codex_app, consolidation_app, thread_app, fleet_app,
                   mcp_app, contracts_app, conformance_app, audit_app):
        module.register(app)
    panel_of = {name: panel for panel, names in HELP_PANELS.items() for name in names}
    for info in app.registered_commands:
        info.rich_help_panel = panel_of.get(info.name or info.callback.__name__)
    for group in app.registered_groups:
        group.rich_help_panel = panel_of.get(group.name or group.typer_instance.info.name)


_register_command_groups()

__all__ = ["MemciteGroup", "app", "run_typer"]
