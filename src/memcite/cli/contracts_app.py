"""``memcite schema``, added to the Typer app; the body is in ``memcite.cli.contracts_commands``."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import contracts_commands
from memcite.cli.options import COMMAND, JsonOpt, exit_with


def schema(
    name: Annotated[
        Optional[str],  # noqa: UP045 - Typer reads the annotation at run time
        typer.Argument(metavar="NAME", show_default=False,
                       help="A command whose --json output to describe (parse, stats, and the "
                       "others `memcite schema` lists), or config; none: list the names."),
    ] = None,
    json: JsonOpt = False,
    write: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--write", metavar="DIR", show_default=False,
                     help="Generate the schema files from the models into DIR "
                     "(NAME's only when given)."),
    ] = None,
) -> None:
    """Print the JSON Schema of a command's --json output.

    Without a NAME, lists the schemas and what each describes.

    Examples:

    \b
        memcite schema
        memcite schema stats > stats.schema.json
        memcite schema --write src/memcite/contracts/schemas
    """
    exit_with(contracts_commands.schema(name, json, write))


def register(app) -> None:
    """Add this module's commands to ``app``."""
    app.command(**COMMAND)(schema)
