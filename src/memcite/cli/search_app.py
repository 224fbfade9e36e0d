"""``memcite search``: full-text search over the notes, the event logs and Codex's memory.

The body lives in ``memcite.cli.search_commands``; this wrapper declares the options and
is registered by ``memcite.cli.app`` once it exists.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import search_commands
from memcite.cli.fastpath import COUNT_MAX
from memcite.cli.notes_app import CwdOpt, SessionOpt
from memcite.cli.options import COMMAND, CodexHomeOpt, DbOpt, JsonOpt, choices, exit_with


def search(
    query: Annotated[Optional[str], typer.Argument(  # noqa: UP045
        metavar="TEXT", show_default=False,
        help="The words to look for (all must match; no search syntax).")] = None,
    scope: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--scope", metavar=choices(("global", "project", "session")) + ",...",
        show_default=False,
        help="Which notes and event logs, a comma list of global, project and session "
        "(default: project,global).")] = None,
    session: SessionOpt = None,
    kind: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--kind", metavar=choices(search_commands.KIND_CHOICES), show_default=False,
        help="Search only the notes, the event logs or Codex's memory folder (default: "
        "all).")] = None,
    limit: Annotated[int, typer.Option(
        "--limit", metavar="N", min=0, max=COUNT_MAX, help="Print at most this many hits.")] = 20,
    cwd: CwdOpt = None,
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Search the notes, event logs and Codex's memory.

    This project's note and event log, the global note and log, and Codex's memory folder
    (MEMORY.md, memory_summary.md, rollout summaries, skills), ranked best first, each hit
    with its file, line and the matching text (secrets masked). Another project's note and
    events never match. The index lives in memcite's database and is refreshed first (only
    changed files are read again); Codex's files are only read.

    Examples:

    \b
        memcite search "flaky test"
        memcite search sqlite --kind events --limit 5
        memcite search deploy --scope global --json
    """
    exit_with(search_commands.search(query, scope, session, kind, limit, cwd, codex_home, db,
                                     json))


def register(app) -> None:
    """Add ``memcite search`` to ``app``."""
    app.command(**COMMAND)(search)
