"""``memcite report``: a thin Typer wrapper; the body is ``memcite.cli.report_commands``."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli.options import COMMAND, CodexHomeOpt, DbOpt, exit_with
from memcite.cli.report_commands import DEFAULT_FILE
from memcite.cli.retention_app import AsOfOpt, JudgeOpt, SinceOpt

OutputOpt = Annotated[
    Optional[str],  # noqa: UP045 - Typer reads the annotation at run time
    typer.Option("--output", "-o", "--html", metavar="FILE", show_default=False,
                 help=f"Write the page here (default: {DEFAULT_FILE} in memcite's data folder, "
                 "$MEMCITE_HOME else ~/.local/share/memcite, never the current folder; "
                 "replaced atomically, never through a link)."),
]
OpenOpt = Annotated[
    bool, typer.Option("--open", help="Open the page in the default browser once written.")]


def report(
    output: OutputOpt = None,
    open_page: OpenOpt = False,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    as_of: AsOfOpt = None,
    since: SinceOpt = None,
    judge_without_usage: JudgeOpt = False,
) -> None:
    """Write the usage report as one self-contained HTML page.

    The same data as `memcite stats --json`: a summary, citations per week, memories by
    age of last use, the citation checks, tiers, the dead memories (sortable, each linked
    to its rollout summary), the most cited and the notes per scope. Inline style and
    SVG charts: the page loads nothing and reads whole without JavaScript. It goes to
    memcite's data folder (or --output), its path is printed, and --open opens it.

    Examples:

    \b
        memcite report
        memcite report --open
        memcite report --output ~/reports/codex.html
        memcite report --since 2026-02-01 --as-of 2026-03-01
    """
    from memcite.cli.report_commands import report as report_body

    exit_with(report_body(output, open_page, codex_home, db, as_of, since, judge_without_usage))


def register(app: typer.Typer) -> None:
    """Add ``memcite report`` to ``app``."""
    app.command(**COMMAND)(report)
