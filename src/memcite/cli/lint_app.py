"""``memcite lint``: a thin Typer wrapper; the body lives in ``memcite.cli.lint_commands``."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import lint_commands
from memcite.cli.options import COMMAND, CodexHomeOpt, JsonOpt, choices, exit_with


def lint(
    paths: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Argument(metavar="PATH", show_default=False,
                       help="Memory folders or files (default: the Codex home's memories/ and "
                       "memory/)."),
    ] = None,
    json: JsonOpt = False,
    format: Annotated[  # noqa: A002
        str, typer.Option("--format", metavar=choices(lint_commands.FORMATS),
                          help="text: one finding per line with a hint; github: annotations "
                          "for a GitHub workflow."),
    ] = "text",
    strict: Annotated[bool, typer.Option(
        "--strict", help="Warnings count as findings too (exit 1).")] = False,
    hook: Annotated[bool, typer.Option(
        "--hook", help="Run as Codex's PostToolUse hook: read the payload on stdin, lint the memory "
        "files the tool touched, exit 2 with the findings on stderr.")] = False,
    codex_home: CodexHomeOpt = None,
) -> None:
    """Check memory entries and Codex's memory file formats.

    The entries' tiers, supersession (superseded_by:) and provenance lines, and the
    formats Codex reads. Exit 1 on an error (with --strict, on a warning too).

    Examples:

    \b
        memcite lint
        memcite lint ~/.codex/memories/MEMORY.md --strict
        memcite lint --format github ~/.codex/memories
    """
    exit_with(lint_commands.lint(paths, json, format, strict, hook, codex_home))


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command(**COMMAND)(lint)
