"""``memcite lint``: a thin Typer wrapper; the body lives in ``memcite.cli.lint_commands``."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import lint_commands
from memcite.cli.options import CodexHomeOpt, JsonOpt, exit_with


def lint(
    paths: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Argument(help="Memory folders or files (default: $CODEX_HOME/memories and "
                       "$CODEX_HOME/memory).", show_default=False),
    ] = None,
    json: JsonOpt = False,
    format: Annotated[  # noqa: A002
        str, typer.Option("--format", help="text: one finding per line with a hint; github: "
                          "workflow annotations."),
    ] = "text",
    strict: Annotated[bool, typer.Option(
        "--strict", help="Warnings count as findings too (exit 1).")] = False,
    hook: Annotated[bool, typer.Option(
        "--hook", help="Run as Codex's PostToolUse hook: read the payload on stdin, lint the memory "
        "files the tool touched, exit 2 with the findings on stderr.")] = False,
    codex_home: CodexHomeOpt = None,
) -> None:
    """Check tiers, supersession and provenance of memory entries, and Codex's memory file formats."""
    exit_with(lint_commands.lint(paths, json, format, strict, hook, codex_home))


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command()(lint)
