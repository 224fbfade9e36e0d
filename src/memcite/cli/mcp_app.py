"""``memcite mcp``: a thin Typer wrapper; the server lives in ``memcite.cli.mcp_server``."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli.options import CodexHomeOpt, exit_with

# As the other commands' --db, but $MEMCITE_DB is left for each tool to read as its command
# does (``memcite stats`` on the fast path tells a named database from the default one).
McpDbOpt = Annotated[
    Optional[str],  # noqa: UP045 - Typer reads the annotation at run time
    typer.Option("--db", metavar="PATH", show_default=False,
                 help="memcite's database (default: $MEMCITE_DB, else memcite.sqlite in "
                 "$MEMCITE_HOME or the user data folder)."),
]


def mcp(
    codex_home: CodexHomeOpt = None,
    db: McpDbOpt = None,
    confirm_ttl: Annotated[
        float, typer.Option("--confirm-ttl", metavar="SECONDS", min=1,
                            help="How long a save or forget draft's confirm_token stays valid."),
    ] = 600.0,
) -> None:
    """Serve memcite's project notes as MCP tools on stdio (recall, save, list, forget, stats, lint).

    Runs until the client closes its input. It answers `initialize` and `tools/list` within
    a twentieth of a second of its start (the tools themselves load in the background), so
    a client that does not wait for it, as Codex, has its tools from the first request.

    Example, in Codex's config.toml (`memcite setup codex --apply` writes it, with
    memcite's absolute path):

    \b
        [mcp_servers.memcite]
        command = "memcite"
        args = ["mcp", "--codex-home", "/home/me/.codex"]
    """
    from memcite.cli import mcp_server
    from memcite.paths import resolve_codex_home

    exit_with(mcp_server.run(resolve_codex_home(codex_home), db, confirm_ttl))


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command()(mcp)
