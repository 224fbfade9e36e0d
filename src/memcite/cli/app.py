"""The ``memcite`` command line: parses arguments, calls the library, prints, maps errors to exit codes.

Per-reply commands keep their bodies in light modules (see ``memcite.cli.fastpath``);
the other command groups live in ``cli_*`` modules that add themselves here.
"""

from __future__ import annotations

from typing import Annotated

import typer

from memcite.cli import citations_commands
from memcite.cli.inputs import DEFAULT_MAX_BYTES
from memcite.cli.options import ErrorsOpt, JsonOpt, MaxBytesOpt, SourceArg, exit_with

app = typer.Typer(
    name="memcite",
    help="Read, record and audit the memory citations of coding agents.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

ProfileOpt = Annotated[
    str,
    typer.Option(
        "--profile",
        help="codex: read exactly as Codex does, problems are warnings; "
        "strict: the same reading, problems are errors (exit 1).",
    ),
]


@app.command()
def parse(
    source: SourceArg = None,
    profile: ProfileOpt = "codex",
    errors: ErrorsOpt = "strict",
    max_bytes: MaxBytesOpt = DEFAULT_MAX_BYTES,
    json: JsonOpt = False,
) -> None:
    """Read the citation blocks of one reply: entries, ids, what Codex counts, diagnostics."""
    exit_with(citations_commands.parse(source, profile, errors, max_bytes, json))


@app.command()
def strip(
    source: SourceArg = None,
    profile: ProfileOpt = "codex",
    errors: ErrorsOpt = "strict",
    max_bytes: MaxBytesOpt = DEFAULT_MAX_BYTES,
) -> None:
    """Write the visible reply, byte for byte, with every citation block removed."""
    exit_with(citations_commands.strip(source, profile, errors, max_bytes))


def _register_command_groups() -> None:
    from memcite.cli import ledger_app, notes_app, readpath_app, retention_app

    for module in (ledger_app, readpath_app, retention_app, notes_app):
        module.register(app)


_register_command_groups()

__all__ = ["app"]
