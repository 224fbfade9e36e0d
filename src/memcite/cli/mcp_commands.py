"""The body of ``memcite mcp``: where things are, resolved once, then the server
(``memcite.mcp.server``) until the client closes its input; returns the exit code.

Free of Typer, so that the fast path runs it (Typer's import is most of a cold start, and
Codex does not wait long for ``initialize``).
"""

from __future__ import annotations


def mcp(codex_home: str | None = None, db: str | None = None, confirm_ttl: float = 600.0) -> int:
    """``memcite mcp``: serve the tools on stdio, for the Codex home and database the options
    (else the environment) name."""
    from memcite.cli.console import memcite_version
    from memcite.mcp import server
    from memcite.paths import Locations

    return server.run(Locations(db=db, codex_home=codex_home), confirm_ttl,
                      version=memcite_version())
