"""The ledger commands, ``memcite sync``, ``record``, ``ingest`` and ``rebuild``, added to the Typer app.

The bodies live in ``memcite.cli.ledger_commands`` (``record`` also runs there on
the fast path, without Typer, and so does ``ingest``); these wrappers only declare the
options.
"""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from memcite.cli import ledger_commands
from memcite.cli.inputs import DEFAULT_MAX_BYTES
from memcite.cli.options import (
    COMMAND,
    CodexHomeOpt,
    CodexSqliteHomeOpt,
    DbOpt,
    ErrorsOpt,
    JsonOpt,
    SourceArg,
    choices,
    exit_with,
    max_bytes_option,
)

PolicyOpt = Annotated[
    str,
    typer.Option(
        "--policy", metavar=choices(ledger_commands.POLICY_CHOICES),
        help="default: each distinct thread once per reply, closed blocks only; "
        "codex: count exactly as Codex does.",
    ),
]
ProfileOpt = Annotated[
    str,
    typer.Option("--profile", metavar=choices(ledger_commands.PROFILE_CHOICES),
                 help="codex: problems are warnings; strict: problems are errors "
                 "and the reply is not recorded."),
]


def record(
    source: SourceArg = None,
    db: DbOpt = None,
    codex_home: CodexHomeOpt = None,
    jsonl: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--jsonl", metavar="FILE", show_default=False,
                     help='A batch: one reply per line, a JSON object with "text" and, if known, '
                     '"id", "at", "thread_id" and "cwd" (as the options below); - for stdin.'),
    ] = None,
    policy: PolicyOpt = "default",
    profile: ProfileOpt = "codex",
    errors: ErrorsOpt = "strict",
    max_bytes: max_bytes_option("Refuse a reply larger than") = DEFAULT_MAX_BYTES,
    id: Annotated[  # noqa: A002 - the option is --id
        Optional[str],  # noqa: UP045
        typer.Option("--id", metavar="ID", show_default=False,
                     help="A stable id for the reply, so recording it again counts nothing "
                     "twice (default: the SHA-256 of its text)."),
    ] = None,
    at: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--at", metavar="TIME", show_default=False,
                     help="When the reply was made: epoch seconds or ISO 8601 (default: now)."),
    ] = None,
    thread_id: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--thread-id", metavar="ID", show_default=False,
                     help="The Codex thread (session) that replied."),
    ] = None,
    cwd: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--cwd", metavar="DIR", show_default=False,
                     help="The working directory of that thread."),
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="Print the reading and what was "
                                       "recorded (JSON Lines with --jsonl).")] = False,
) -> None:
    """Record the memories one reply cites.

    Reads one reply (or, with --jsonl, a batch of them), records its citations in
    memcite's database and prints the visible reply, citation blocks removed, so it
    can sit in a pipe. No reply text is stored.

    Examples:

    \b
        memcite record reply.txt
        memcite record --json --at 2026-01-20T10:00:00Z reply.txt
        memcite record --jsonl replies.jsonl
    """
    exit_with(ledger_commands.record(
        source=source, db=db, codex_home=codex_home, jsonl=jsonl, policy=policy,
        profile=profile, errors=errors, max_bytes=max_bytes, id=id, at=at,
        thread_id=thread_id, cwd=cwd, json=json,
    ))


def sync(db: DbOpt = None, codex_home: CodexSqliteHomeOpt = None, json: JsonOpt = False) -> None:
    """Fill memcite's inventory from a Codex home, read-only.

    Reads Codex's memories database (memories_1.sqlite) and the memory folder, and
    prints what changed; nothing of Codex's is written. A progress bar shows on a
    terminal.

    Examples:

    \b
        memcite sync
        memcite sync --codex-home ~/.codex --json
    """
    progress = None
    if not json and sys.stderr.isatty():
        progress = ledger_commands.RichProgress()
    try:
        exit_with(ledger_commands.sync(db=db, codex_home=codex_home, json=json,
                                   progress=progress))
    finally:
        if progress is not None:
            progress.stop()


def ingest(
    rollouts: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Argument(metavar="FILE", show_default=False,
                       help="Codex session files (rollout-*.jsonl or .jsonl.zst); none: every "
                       "session of the Codex home, each read from where the last read "
                       "stopped."),
    ] = None,
    db: DbOpt = None,
    codex_home: CodexHomeOpt = None,
    since: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--since", metavar="TIME", show_default=False,
                     help="With no files: only the session files modified since this time "
                     "(epoch seconds or ISO 8601)."),
    ] = None,
    policy: PolicyOpt = "default",
    profile: ProfileOpt = "codex",
    json: Annotated[bool, typer.Option("--json", help="One JSON object per file read.")] = False,
    progress: Annotated[
        Optional[bool],  # noqa: UP045
        typer.Option("--progress/--no-progress", help="Show progress on stderr while a long "
                     "file is read (default: only when stderr is a terminal).",
                     show_default=False),
    ] = None,
    max_bytes: max_bytes_option("Skip (and report) a reply line longer than") = DEFAULT_MAX_BYTES,
) -> None:
    """Record the replies in Codex session files.

    Records the citations of the assistant replies found (no reply text is stored).
    Each reply is keyed by its session id (the first session_meta line's) and line
    number (the file's path and line when there is no session_meta line): ingesting a
    file again, even after Codex appended to it, counts nothing twice, while two turns
    that say the same thing each count, as in Codex. With no files named, every session
    under the Codex home's sessions/ and archived_sessions/ is brought up to date.

    Examples:

    \b
        memcite ingest
        memcite ingest --codex-home ~/.codex --since 2026-11-01
        memcite ingest ~/.codex/sessions/2026/01/20/rollout-*.jsonl
    """
    exit_with(ledger_commands.ingest(rollouts, db=db, codex_home=codex_home, policy=policy,
                                     profile=profile, json=json, since=since,
                                     progress=progress, max_bytes=max_bytes))


def rebuild(
    db: DbOpt = None,
    check: Annotated[bool, typer.Option(
        "--check", help="Only report differences (exit 1 if any); change nothing.")] = False,
    json: JsonOpt = False,
) -> None:
    """Recompute usage counts from the citation log.

    Reports every count that differs from the log, then corrects it (with --check,
    only reports).

    Examples:

    \b
        memcite rebuild --check
        memcite rebuild --json
    """
    exit_with(ledger_commands.rebuild(db=db, check=check, json=json))


def register(app) -> None:
    """Add this module's commands to ``app``."""
    for command in (sync, record, ingest, rebuild):
        app.command(**COMMAND)(command)
