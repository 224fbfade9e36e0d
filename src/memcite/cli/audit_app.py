"""``memcite trace`` and ``memcite audit``: where each memory came from, and which are poisoned.

The bodies live in ``memcite.cli.audit_commands``; this wrapper declares the options and is
registered by ``memcite.cli.app``.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import audit_commands
from memcite.cli.options import COMMAND, CodexHomeOpt, DbOpt, JsonOpt, choices, exit_with


def trace(
    ident: Annotated[str, typer.Argument(
        metavar="ID", help="A memory's thread id, or FILE:LINE of MEMORY.md or "
        "memory_summary.md (also raw_memories.md, a file of rollout_summaries/).")],
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Tell where one memory came from.

    Its source thread (time, project, source), where the words of each of its sentences
    first appear in that thread's session (the user's message, the assistant's text, or a
    tool's output, naming the tool and the call), the replies that cited it since and their
    checks, and how to forget it. FILE:LINE is traced to the memories it was consolidated
    from as far as the folder allows; the report says where the trail ends. Read-only.

    Examples:

    \b
        memcite trace 019b7635-7fb3-7cf8-8f11-6f64065672e0
        memcite trace memory_summary.md:12 --json
    """
    exit_with(audit_commands.trace(ident, codex_home, db, json))


def audit(
    codex_home: CodexHomeOpt = None,
    project: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--project", metavar="DIR", show_default=False,
                     help="Flag the memories, and the lines of MEMORY.md and "
                     "memory_summary.md, whose source project is not this folder."),
    ] = None,
    json: JsonOpt = False,
    format: Annotated[  # noqa: A002
        str, typer.Option("--format", metavar=choices(audit_commands.AUDIT_FORMATS),
                          help="text: the counts and findings; json: as --json; sarif: a SARIF "
                          "2.1.0 log for code-scanning dashboards."),
    ] = "text",
    quarantine: Annotated[bool, typer.Option(
        "--quarantine", help="Preview asking Codex to forget every memory found poisoned "
        "(a memory you restored stays restored until its text changes).")] = False,
    apply: Annotated[bool, typer.Option(
        "--apply", help="With --quarantine: write the request (an ad-hoc note for Codex's next "
        "consolidation; `memcite restore ID` undoes it).")] = False,
    db: DbOpt = None,
) -> None:
    """Find poisoned, tainted, cross-project or secret memories.

    Severity comes from where a sentence's words came from (the user, the project's own
    files, command output or outside files, third-party content such as MCP, web or fetched
    text), what it would make the agent do (commands, hosts, credentials, recipients,
    acts in the user's world, safety settings, harmful code to paste or run) and markers
    (concealment, standing orders, triggers, authority claims, overrides of the agent's
    instructions or safety, hidden text).
    Poisoned (high): an instruction from outside the project or third-party content, or,
    from anywhere but the user, an override or an act in the user's world (money moved,
    the user's data sent away). A project's own conventions are never high; the user's own
    words are not judged. Secrets (high), as lint finds them. Without --project, a table
    per project.
    Exit 1 when a high-severity finding exists. Read-only without --quarantine --apply.

    Examples:

    \b
        memcite audit
        memcite audit --project . --json
        memcite audit --format sarif > memory.sarif
        memcite audit --quarantine
        memcite audit --quarantine --apply
    """
    exit_with(audit_commands.audit(codex_home, project, json, format=format, quarantine=quarantine,
                                   apply=apply, db=db))


def register(app) -> None:
    """Add ``memcite trace`` and ``memcite audit`` to ``app``."""
    app.command(**COMMAND)(trace)
    app.command(**COMMAND)(audit)
