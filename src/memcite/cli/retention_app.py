"""``memcite stats``, ``prune``, ``restore``, ``select`` and ``demo``: thin Typer wrappers.

The bodies live in ``memcite.cli.retention_commands`` (shared with the fast path) and
``memcite.cli.demo`` (the loop: ``memcite.demo.loop``); this module only declares the options.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import retention_commands
from memcite.cli.fastpath import COUNT_MAX, DAYS_MAX
from memcite.cli.options import (
    COMMAND,
    CodexHomeOpt,
    CodexSqliteHomeOpt,
    DbOpt,
    JsonOpt,
    choices,
    exit_with,
)
from memcite.retention.rules import RULES

_UNUSED_HELP = "Unused for more than this many days (0 or more) is dead (default: "
MaxUnusedOpt = Annotated[
    Optional[int],  # noqa: UP045
    typer.Option("--max-unused-days", min=0, max=DAYS_MAX, metavar="N", show_default=False,
                 help=_UNUSED_HELP + "memcite's config, except with --rule codex; then "
                 "[memories] in Codex's config.toml; then 30)."),
]
# select follows Codex's rule, which memcite's config does not change.
SelectMaxUnusedOpt = Annotated[
    Optional[int],  # noqa: UP045
    typer.Option("--max-unused-days", min=0, max=DAYS_MAX, metavar="N", show_default=False,
                 help=_UNUSED_HELP + "[memories] in Codex's config.toml, then 30)."),
]
_RULE_HELP = ("memcite: the last use is the latest of memcite's, Codex's and the memory's "
              "re-extraction; codex: Codex's own rule (its last_usage, else source_updated_at), "
              "on the rows of Codex's table only")
RuleOpt = Annotated[
    str,
    typer.Option("--rule", metavar=choices(RULES), help=_RULE_HELP + "."),
]
PruneRuleOpt = Annotated[
    str,
    typer.Option("--rule", metavar=choices(retention_commands.PRUNE_RULES),
                 help=_RULE_HELP + "; tiered: the entries of MEMORY.md and of memcite's notes, "
                 "each by its tier's window ([retention.tiers] in memcite's config), from its "
                 "last citation in memcite's log."),
]
AsOfOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--as-of", metavar="TIME", show_default=False,
                 help="Judge ages as of this time (epoch seconds or ISO 8601; default: now)."),
]
JudgeOpt = Annotated[
    bool,
    typer.Option("--judge-without-usage", help="Judge even when Codex's memories database "
                 "(its usage counters) is not where Codex keeps it; otherwise nothing is "
                 "judged (exit 3)."),
]
SinceOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--since", metavar="TIME", show_default=False,
                 help="Only citations from replies made at or after this time (epoch seconds or "
                 "ISO 8601)."),
]


def stats(
    db: DbOpt = None,
    codex_home: CodexSqliteHomeOpt = None,
    max_unused_days: MaxUnusedOpt = None,
    rule: RuleOpt = "memcite",
    as_of: AsOfOpt = None,
    since: SinceOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=0, max=COUNT_MAX, metavar="N",
                                       help="Rows per list (0: everything).")] = 20,
    json: JsonOpt = False,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Check every citation again (default: reuse the last checks while "
        "no reply was recorded and no cited file changed).")] = False,
    judge_without_usage: JudgeOpt = False,
    machine: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--machine", metavar="NAME", show_default=False,
        help="With --db postgresql://...: only this machine's pushes.")] = None,
    project: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--project", metavar="DIR", show_default=False,
        help="With --db postgresql://...: only replies made in this folder or under it, and "
        "memories whose cwd is there.")] = None,
) -> None:
    """Report how a Codex home's memories are used.

    Dead memories (unused for longer than --max-unused-days), the most cited, cited ids
    memcite does not know, the checks of cited lines, usage per section and per week.
    With no memcite database, straight from Codex's memories_1.sqlite. With --db
    postgresql://..., the same report over every machine that ran `memcite push` there.

    Examples:

    \b
        memcite stats
        memcite stats --since 2026-02-01 --max-unused-days 14
        memcite stats --json --limit 0 --rule codex --as-of 2026-03-01
        memcite stats --db postgresql://memcite@db.example/fleet --machine ci-7
    """
    exit_with(retention_commands.stats(db, codex_home, max_unused_days, rule, as_of, since, limit,
                                   json, no_cache, judge_without_usage=judge_without_usage,
                                   machine=machine, project=project))


def prune(
    db: DbOpt = None,
    codex_home: CodexSqliteHomeOpt = None,
    max_unused_days: MaxUnusedOpt = None,
    rule: PruneRuleOpt = "memcite",
    limit: Annotated[int, typer.Option("--limit", min=0, max=COUNT_MAX, metavar="N",
                                       help="At most this many memories (0: no "
                                       "limit).")] = 200,
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
    """Preview the memories to forget, or ask Codex to forget them.

    Without --apply nothing changes. --apply leaves Codex one ad-hoc note asking its
    next consolidation to forget them; --in-codex-db also deletes their rows, each saved
    first. `memcite restore` undoes either.

    Examples:

    \b
        memcite prune
        memcite prune --rule codex --json
        memcite prune --apply --limit 50
    """
    exit_with(retention_commands.prune(
        db, codex_home, max_unused_days, rule, limit, as_of, apply=apply,
        in_codex_db=in_codex_db, include_recent_threads=include_recent_threads,
        judge_without_usage=judge_without_usage, json=json))


def restore(
    thread_ids: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Argument(metavar="ID", show_default=False,
                       help="The thread ids of the memories to restore."),
    ] = None,
    db: DbOpt = None,
    all: Annotated[bool, typer.Option("--all", help="Restore every archived memory.")] = False,  # noqa: A002
    since: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--since", metavar="TIME", show_default=False,
                     help="Restore what was asked or archived at or after this time (epoch "
                     "seconds or ISO 8601)."),
    ] = None,
    batch: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--batch", metavar="ID", show_default=False,
                     help="Restore what one prune asked: its batch id, as prune printed it, or "
                     "the start of it."),
    ] = None,
    json: JsonOpt = False,
) -> None:
    """Undo what `memcite prune --apply` did.

    The note's requests are withdrawn, deleted rows put back into Codex's table, and
    summary files an earlier memcite archived moved back.

    Examples:

    \b
        memcite restore 019b6fc1-ecb1-7139-8308-da69824b8d55
        memcite restore --batch 1a2b3c4d
        memcite restore --since 2026-03-01
    """
    exit_with(retention_commands.restore(thread_ids, db, all, since, batch, json))


def archived(
    db: DbOpt = None,
    codex_home: CodexHomeOpt = None,
    all_homes: Annotated[bool, typer.Option("--all-homes", help="Every Codex home in the "
                                            "database, not only this one.")] = False,
    limit: Annotated[int, typer.Option("--limit", min=0, max=COUNT_MAX, metavar="N",
                                       help="At most this many (0: all).")] = 50,
    json: JsonOpt = False,
) -> None:
    """List what prune asked Codex to forget.

    Newest first: each memory with its state, the day it was asked, how (a note, or
    rows deleted) and its batch; then the summary files an earlier memcite archived.

    Examples:

    \b
        memcite archived
        memcite archived --all-homes --limit 0
    """
    exit_with(retention_commands.archived(db, codex_home, all_homes, limit, json))


def show(
    thread_id: Annotated[str, typer.Argument(metavar="ID", show_default=False,
                                             help="The memory's thread id.")],
    db: DbOpt = None,
    codex_home: CodexSqliteHomeOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=0, max=COUNT_MAX, metavar="N",
                                       help="Recent citations to list (0: all).")] = 10,
    json: JsonOpt = False,
) -> None:
    """Everything memcite knows of one memory.

    Its label, cwd, branch, times, both usage counts (memcite's and Codex's), recent
    citations and their checks, and its rollout summary's first lines.

    Examples:

    \b
        memcite show 019b6fc1-ecb1-7139-8308-da69824b8d55
        memcite show 019b6fc1-ecb1-7139-8308-da69824b8d55 --json --limit 0
    """
    exit_with(retention_commands.show(thread_id, db, codex_home, limit, json))


def select(
    db: DbOpt = None,
    codex_home: CodexSqliteHomeOpt = None,
    n: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option("--n", min=1, max=COUNT_MAX, metavar="N", show_default=False,
                     help="How many memories the consolidation takes, 1 or more: Codex's "
                     "max_raw_memories_for_consolidation (default: [memories] in Codex's "
                     "config.toml, then 256)."),
    ] = None,
    max_unused_days: SelectMaxUnusedOpt = None,
    as_of: AsOfOpt = None,
    json: JsonOpt = False,
    judge_without_usage: JudgeOpt = False,
) -> None:
    """The memories Codex's next consolidation would take.

    By Codex's rule: the memories used within --max-unused-days, ranked by use count,
    then by last use; the first --n of them, listed by thread id.

    Examples:

    \b
        memcite select
        memcite select --n 64 --json
    """
    exit_with(retention_commands.select(db, codex_home, n, max_unused_days, as_of, json,
                                        judge_without_usage))


def demo(
    keep: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--keep", metavar="DIR", show_default=False,
                     help="Build the demo in this (new or empty) folder and keep it."),
    ] = None,
) -> None:
    """Run the whole loop on a sample Codex home.

    In a temporary folder (or --keep's): sync, instructions, record, stats and a prune
    preview, each step printed as the command it runs. Nothing outside that folder is
    written.

    Examples:

    \b
        memcite demo
        memcite demo --keep ./memcite-demo
    """
    from memcite.cli.demo import demo_command

    exit_with(demo_command(keep))


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    for command in (stats, prune, restore, archived, show, select, demo):
        app.command(**COMMAND)(command)
