"""``memcite thread``: what Codex's memory did in one thread, and what it costs (``--cost``).

The body lives in ``memcite.cli.thread_commands``; this wrapper declares the options and
is registered by ``memcite.cli.app`` once it exists.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import thread_commands
from memcite.cli.options import COMMAND, DbOpt, JsonOpt, exit_with

ThreadCodexHomeOpt = Annotated[
    Optional[str],  # noqa: UP045 - Typer reads the annotation at run time
    typer.Option(
        "--codex-home",
        metavar="DIR",
        help="Codex's home folder, holding sessions/ and config.toml (default: $CODEX_HOME, "
        "else ~/.codex); Codex's databases are read where Codex keeps them (config "
        "sqlite_home, else $CODEX_SQLITE_HOME, else the home).",
        show_default=False,
        show_envvar=False,
    ),
]


def thread(
    thread_id: Annotated[
        Optional[str],  # noqa: UP045
        typer.Argument(metavar="ID", show_default=False,
                       help="The thread's id (the end of its session file's name)."),
    ] = None,
    last: Annotated[bool, typer.Option(
        "--last", help="The thread run most recently in this project (the git work tree of "
        "the current folder; outside a git project, the home's newest); a subagent's thread "
        "is passed over.")] = False,
    anywhere: Annotated[bool, typer.Option(
        "--anywhere", help="With --last: the newest thread of the whole Codex home, wherever "
        "it ran.")] = False,
    cost: Annotated[bool, typer.Option(
        "--cost", help="Instead of one thread: the tokens the memory message added to every "
        "thread, per day and per folder, and Codex's background memory jobs.")] = False,
    since: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--since", metavar="TIME", show_default=False,
                     help="With --cost: only what happened at or after this time (epoch "
                     "seconds or ISO 8601)."),
    ] = None,
    codex_home: ThreadCodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Tell what Codex's memory did in one thread.

    Whether the memory message was injected (its size, whether the summary was cut, whether
    it is today's), whether the thread could get memory, whether Codex will make a memory
    from it, which replies cited which memories (each cited entry checked), and, when memory
    was not used, the likely reason and the setting that changes it. Read-only.

    Examples:

    \b
        memcite thread --last
        memcite thread --last --anywhere
        memcite thread 019b7635-7fb3-7cf8-8f11-6f64065672e0 --json
        memcite thread --cost --since 2026-03-01
    """
    exit_with(thread_commands.thread(thread_id, last, cost, since, codex_home, db, json,
                                     anywhere=anywhere))


def register(app) -> None:
    """Add ``memcite thread`` to ``app``."""
    app.command(**COMMAND)(thread)
