"""``memcite push``: send this ledger to a fleet's PostgreSQL (``memcite.fleet``).

The body lives in ``memcite.cli.fleet_commands``; the fleet's report is ``memcite stats
--db postgresql://…`` (declared with the other stats options in ``retention_app``).
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import fleet_commands
from memcite.cli.fastpath import COUNT_MAX
from memcite.cli.options import COMMAND, CodexHomeOpt, DbOpt, JsonOpt, exit_with


def push(
    to: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--to", metavar="URL", show_default=False,
        help="The server, postgresql://user@host:port/database (default: [fleet] url in "
        "memcite's config, else the PG* variables). Keep the password in PGPASSWORD or "
        "~/.pgpass; it is never printed.")] = None,
    machine: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--machine", metavar="NAME", show_default=False,
        help="This machine's name on the server (default: [fleet] machine, else the host "
        "name).")] = None,
    since: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--since", metavar="TIME", show_default=False,
        help="Only replies made at or after this time (epoch seconds or ISO 8601); older "
        "ones stay on this machine.")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Say what would be sent; send nothing, write nothing.")] = False,
    full: Annotated[bool, typer.Option(
        "--full", help="Send every reply again; the ones the server has are skipped.")] = False,
    batch: Annotated[int, typer.Option(
        "--batch", metavar="N", min=1, max=COUNT_MAX, help="Replies per batch (one transaction "
        "each).")] = 20_000,
    db: DbOpt = None,
    codex_home: CodexHomeOpt = None,
    json: JsonOpt = False,
) -> None:
    """Send this ledger's usage to a fleet's PostgreSQL server.

    What the server lacks: replies' metadata (never their text), their cited ids and
    entries (each with its check against this machine's memory folder), and the inventory
    of memories with Codex's counters. Each batch is one transaction that also moves this
    ledger's cursor, so a push can be stopped and run again without counting anything
    twice. Nothing leaves the machine until this command runs. `memcite stats --db URL`
    then reports on every machine that pushed.

    Examples:

    \b
        memcite push --to postgresql://memcite@db.example/fleet --dry-run
        memcite push --to postgresql://memcite@db.example/fleet --machine ci-7
        PGHOST=db.example PGDATABASE=fleet memcite push --json
    """
    exit_with(fleet_commands.push(to, db, codex_home, machine, since, dry_run, full, batch, json))


def register(app) -> None:
    """Add ``memcite push`` to ``app``."""
    app.command(**COMMAND)(push)
