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
PruneRuleOpt = Annotated[
    str,
    typer.Option("--rule", metavar=choices(retention_commands.PRUNE_RULES),
                 help="memcite: last use is max(memcite's, Codex's, re-extraction); "
                 "codex: Codex's COALESCE(last_usage, source_updated_at), on the rows of Codex's "
                 "table only; tiered: MEMORY.md's and memcite's notes' entries by their tier "
                 "([retention.tiers] windows, memcite's citation log)."),
]
AsOfOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--as-of", metavar="TIME", help="Judge ages as of this time (epoch seconds or ISO 8601; "
                 "default now).", show_default=False),
]
JudgeOpt = Annotated[
    bool,
    typer.Option("--judge-without-usage", help="Judge even when Codex's memories database "
                 "(its usage counters) is not where Codex keeps it; otherwise nothing is "
                 "judged (exit 3)."),
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
    judge_without_usage: JudgeOpt = False,
) -> None:
    """Usage report of one Codex home: dead memories, most cited, unknown ids, citation checks,
    sections, weeks."""
    exit_with(retention_commands.stats(db, codex_home, max_unused_days, rule, as_of, since, limit,
                                   json, no_cache, judge_without_usage=judge_without_usage))


def prune(
    db: DbOpt = None,
    codex_home: CodexHomeOpt = None,
    max_unused_days: MaxUnusedOpt = None,
    rule: PruneRuleOpt = "memcite",
    limit: Annotated[int, typer.Option("--limit", min=0, metavar="N",
                                       help="At most this many (0: no limit).")] = 200,
    as_of: AsOfOpt = None,
    apply: Annotated[bool, typer.Option(
        "--apply", help="Ask Codex to forget them: one ad-hoc note in its memory folder for its "
        "next consolidation (default: preview only).")] = False,
    in_codex_db: Annotated[bool, typer.Option(
        "--in-codex-db", help="With --apply: delete their rows from Codex's stage1_outputs as "
        "its own start-up pruning does (each row saved first; the one write memcite makes to "
        "a Codex database).")] = False,
    include_recent_threads: Annotated[bool, typer.Option(
        "--include-recent-threads", help="With --in-codex-db: also delete rows of threads "
        "updated within Codex's max_rollout_age_days (Codex may extract them again).")] = False,
    judge_without_usage: JudgeOpt = False,
    json: JsonOpt = False,
) -> None:
    """Preview the memories to forget; --apply asks Codex to forget them (see --in-codex-db)."""
    exit_with(retention_commands.prune(
        db, codex_home, max_unused_days, rule, limit, as_of, apply=apply,
        in_codex_db=in_codex_db, include_recent_threads=include_recent_threads,
        judge_without_usage=judge_without_usage, json=json))


def restore(
    thread_ids: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Argument(help="Thread ids to restore.", show_default=False, metavar="ID"),
    ] = None,
    db: DbOpt = None,
    all: Annotated[bool, typer.Option("--all", help="Restore every archived memory.")] = False,  # noqa: A002
    since: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--since", metavar="TIME",
                     help="Restore what was asked or archived at or after this time.",
                     show_default=False),
    ] = None,
    batch: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--batch", help="Restore what one prune asked (its batch id, or the "
                     "start of it).", show_default=False),
    ] = None,
    json: JsonOpt = False,
) -> None:
    """Undo `prune --apply`: a note's requests withdrawn, deleted rows put back into Codex's
    table (and summary files an earlier memcite archived moved back)."""
    exit_with(retention_commands.restore(thread_ids, db, all, since, batch, json))


def archived(
    db: DbOpt = None,
    codex_home: CodexHomeOpt = None,
    all_homes: Annotated[bool, typer.Option("--all-homes", help="Every Codex home in the "
                                            "database, not only this one.")] = False,
    limit: Annotated[int, typer.Option("--limit", min=0,
                                       help="At most this many (0: all).")] = 50,
    json: JsonOpt = False,
) -> None:
    """List what prune asked Codex to forget (and what an earlier memcite archived)."""
    exit_with(retention_commands.archived(db, codex_home, all_homes, limit, json))


def show(
    thread_id: Annotated[str, typer.Argument(help="The memory's thread id.",
                                             show_default=False)],
    db: DbOpt = None,
    codex_home: CodexHomeOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=0,
                                       help="Recent citations to list (0: all).")] = 10,
    json: JsonOpt = False,
) -> None:
    """One memory: label, cwd, branch, times, both counts, recent citations and their checks,
    its rollout summary's first lines."""
    exit_with(retention_commands.show(thread_id, db, codex_home, limit, json))


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
    judge_without_usage: JudgeOpt = False,
) -> None:
    """The memories Codex's next consolidation would take, in its order."""
    exit_with(retention_commands.select(db, codex_home, n, max_unused_days, as_of, json,
                                        judge_without_usage))


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
    for command in (stats, prune, restore, archived, show, select, demo):
        app.command()(command)
