"""``memcite schema``, added to the Typer app; the body is in ``memcite.cli.contracts_commands``."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import contracts_commands
from memcite.cli.options import JsonOpt, exit_with


def schema(
    name: Annotated[
        Optional[str],  # noqa: UP045 - Typer reads the annotation at run time
        typer.Argument(help="A command whose --json output to describe (parse, stats, ...), "
                            "or config; none: list the names.", show_default=False),
    ] = None,
    json: JsonOpt = False,
    write: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--write", metavar="DIR", show_default=False,
                     help="Generate the schema files from the models into DIR "
                          "(NAME's only when given)."),
    ] = None,
) -> None:
    """Print the JSON Schema of a command's --json output, or list the schemas."""
    exit_with(contracts_commands.schema(name, json, write))


def register(app) -> None:
    """Add this module's commands to ``app``."""
    app.command()(schema)
