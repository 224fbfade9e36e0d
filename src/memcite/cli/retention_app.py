"""``memcite stats``, ``prune``, ``restore``, ``select`` and ``demo``: thin Typer wrappers.

The bodies live in ``memcite.cli.retention_commands`` (shared with the fast path) and
``memcite.cli.demo``; this module only declares the options.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import retention_commands
from memcite.cli.options import CodexHomeOpt, DbOpt, JsonOpt, choices, exit_with
from memcite.retention.rules import RULES

MaxUnusedOpt = Annotated[
    Optional[int],  # noqa: UP045
    typer.Option("--max-unused-days", min=0, metavar="N", show_default=False,
                 help="Unused for more than this many days is dead (default: memcite config "
                 "(not for --rule codex or select), then [memories] in Codex's config.toml, "
                 "then 30)."),
]
RuleOpt = Annotated[
    str,
    typer.Option("--rule", metavar=choices(RULES),
                 help="memcite: last use is max(memcite's, Codex's, re-extraction); "
                 "codex: Codex's COALESCE(last_usage, source_updated_at), on the rows of Codex's "
                 "table only."),
]
AsOfOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--as-of", metavar="TIME", help="Judge ages as of this time (epoch seconds or ISO 8601; "
                 "default now).", show_default=False),
]
SinceOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--since", metavar="TIME", help="Only citations from replies made at or after this time.",
                 show_default=False),
]


def stats(
    db: DbOpt = None,
    codex_home: CodexHomeOpt = None,
    max_unused_days: MaxUnusedOpt = None,
    rule: RuleOpt = "memcite",
    as_of: AsOfOpt = None,
    since: SinceOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=0, metavar="N",
                                       help="Rows per list; 0 lists everything.")] = 20,
    json: JsonOpt = False,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Check every citation again (default: reuse the last checks while "
        "no reply was recorded and no cited file changed).")] = False,
) -> None:
    """Usage report: dead memories, most cited, unknown ids, citation checks, sections, weeks."""
    exit_with(retention_commands.stats(db, codex_home, max_unused_days, rule, as_of, since, limit,
                                   json, no_cache))


def prune(
    db: DbOpt = None,
    codex_home: CodexHomeOpt = None,
    max_unused_days: MaxUnusedOpt = None,
    rule: RuleOpt = "memcite",
    limit: Annotated[int, typer.Option("--limit", min=0, metavar="N",
                                       help="At most this many (0: no limit).")] = 200,
    as_of: AsOfOpt = None,
    archive_dir: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--archive-dir", metavar="DIR", help="Where summary files go (default "
                     "$CODEX_HOME/memcite_archive).", show_default=False),
    ] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Archive them (default: preview only).")
                     ] = False,
    json: JsonOpt = False,
) -> None:
    """Preview the memories to forget; --apply archives them (files moved, never deleted)."""
    exit_with(retention_commands.prune(db, codex_home, max_unused_days, rule, limit, as_of,
                                   archive_dir, apply, json))


def restore(
    thread_ids: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Argument(help="Thread ids to restore.", show_default=False, metavar="ID"),
    ] = None,
    db: DbOpt = None,
    all: Annotated[bool, typer.Option("--all", help="Restore every archived memory.")] = False,  # noqa: A002
    since: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--since", metavar="TIME", help="Restore what was archived at or after this time.",
                     show_default=False),
    ] = None,
    json: JsonOpt = False,
) -> None:
    """Undo `prune --apply`: summary files moved back, rows active again."""
    exit_with(retention_commands.restore(thread_ids, db, all, since, json))


def select(
    db: DbOpt = None,
    codex_home: CodexHomeOpt = None,
    n: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option("--n", min=1, metavar="N", show_default=False,
                     help="max_raw_memories_for_consolidation (default: [memories] in "
                     "Codex's config.toml, then 256)."),
    ] = None,
    max_unused_days: MaxUnusedOpt = None,
    as_of: AsOfOpt = None,
    json: JsonOpt = False,
) -> None:
    """The memories Codex's next consolidation would take, in its order."""
    exit_with(retention_commands.select(db, codex_home, n, max_unused_days, as_of, json))


def demo(
    keep: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--keep", metavar="DIR", help="Build the demo in this (new or empty) folder and keep it.",
                     show_default=False),
    ] = None,
) -> None:
    """Run the whole loop on a sample Codex home in a temporary folder: sync, instructions,
    record, stats, prune preview."""
    from memcite.cli.demo import demo_command

    exit_with(demo_command(keep))


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    for command in (stats, prune, restore, select, demo):
        app.command()(command)
