"""``memcite mcp``: a thin Typer wrapper over ``memcite.cli.mcp_commands.mcp``; the server lives in
``memcite.mcp.server``."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli.fastpath import SECONDS_MAX
from memcite.cli.options import COMMAND, DB_HELP, CodexSqliteHomeOpt, exit_with

# As the other commands' --db; $MEMCITE_DB is read with the rest of the environment, once, into
# the run's Locations (which tells a named database from the default one).
McpDbOpt = Annotated[
    Optional[str],  # noqa: UP045 - Typer reads the annotation at run time
    typer.Option("--db", metavar="PATH", show_default=False, help=DB_HELP),
]


def mcp(
    codex_home: CodexSqliteHomeOpt = None,
    db: McpDbOpt = None,
    confirm_ttl: Annotated[
        float, typer.Option("--confirm-ttl", metavar="N", min=1, max=SECONDS_MAX, show_default=False,
                            help="How many seconds (1 or more) a save or forget draft's "
                            "confirm_token stays valid (default: 600)."),
    ] = 600.0,
) -> None:
    """Serve memcite's notes as MCP tools on stdio.

    The tools: recall, save, list, forget, stats, lint, log_event, check_approach,
    file_history and search. It runs until the client closes its input, and answers
    `initialize` and `tools/list` within a twentieth of a second of its start (the tools
    themselves load in the background), so a client that does not wait for it, as Codex,
    has its tools from the first request.

    Examples: Codex starts it from its config.toml (`memcite setup codex --apply`
    writes this, with memcite's absolute path); by hand, one request on stdin lists the
    tools.

    \b
        [mcp_servers.memcite]
        command = "memcite"
        args = ["mcp", "--codex-home", "/home/me/.codex"]

    \b
        echo '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}' | memcite mcp
    """
    from memcite.cli import mcp_commands

    exit_with(mcp_commands.mcp(codex_home, db, confirm_ttl))


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command(**COMMAND)(mcp)
