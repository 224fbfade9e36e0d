"""The ``memcite`` command line: parses arguments, calls the library, prints, maps errors to exit codes.

Per-reply commands keep their bodies in light modules (see ``memcite.fastpath``);
the other command groups live in ``cli_*`` modules that add themselves here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from memcite import reading_commands
from memcite.inputs import DEFAULT_MAX_BYTES

app = typer.Typer(
    name="memcite",
    help="Read, record and audit the memory citations of coding agents.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

SourceArg = Annotated[
    Optional[str],  # noqa: UP045 - Typer reads the annotation at run time
    typer.Argument(help="Reply file to read, or - for stdin (the default).", show_default=False),
]
ProfileOpt = Annotated[
    str,
    typer.Option(
        "--profile",
        help="codex: read exactly as Codex does, problems are warnings; "
        "strict: the same reading, problems are errors (exit 1).",
    ),
]
ErrorsOpt = Annotated[
    str,
    typer.Option("--errors", help="strict: invalid UTF-8 is an error; replace: read it as U+FFFD."),
]
MaxBytesOpt = Annotated[
    int, typer.Option("--max-bytes", help="Refuse inputs larger than this many bytes.", min=1)
]


def _exit(code: int) -> None:
    if code:
        raise typer.Exit(code)


@app.command()
def parse(
    source: SourceArg = None,
    profile: ProfileOpt = "codex",
    errors: ErrorsOpt = "strict",
    max_bytes: MaxBytesOpt = DEFAULT_MAX_BYTES,
    json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Read the citation blocks of one reply: entries, ids, what Codex counts, diagnostics."""
    _exit(reading_commands.parse(source, profile, errors, max_bytes, json))


@app.command()
def strip(
    source: SourceArg = None,
    profile: ProfileOpt = "codex",
    errors: ErrorsOpt = "strict",
    max_bytes: MaxBytesOpt = DEFAULT_MAX_BYTES,
) -> None:
    """Write the visible reply, byte for byte, with every citation block removed."""
    _exit(reading_commands.strip(source, profile, errors, max_bytes))


def _register_command_groups() -> None:
    from memcite import cli_ledger, cli_readpath, cli_retention

    for module in (cli_ledger, cli_readpath, cli_retention):
        module.register(app)


_register_command_groups()

__all__ = ["app", "Path"]
