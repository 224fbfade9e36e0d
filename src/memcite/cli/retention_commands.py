"""The bodies of ``memcite stats``, ``prune``, ``restore``, ``archived``, ``select`` and
``show``; each builds this run's ``memcite.paths.Locations``, calls its library function
(named in its docstring), prints the model as text or ``--json``, and returns the exit code.

Shared by the Typer commands (``memcite.cli.retention_app``) and, for ``stats``, the
fast path: this module imports neither Typer, pydantic nor sqlite-utils.
"""

from __future__ import annotations

import sqlite3
import sys
import time

from memcite.cli.console import dump_json
from memcite.cli.ledger_commands import (
    database_error,
    report_error,
)
from memcite.errors import EXIT_OK, InputError, MemciteError
from memcite.ledger.database import ledger_opener
from memcite.paths import Locations
from memcite.retention.rules import check_rule
from memcite.retention.stats_report import as_time as _time
from memcite.retention.stats_report import check_limit as _check_limit
from memcite.retention.stats_text import print_stats


def report_read_failure(db: str | None, error: Exception) -> int:
    """Report a memcite or database error from a command body that reads; its exit code."""
    if isinstance(error, sqlite3.Error):
        error = database_error(db, error, "not read; nothing was written")
    return report_error(error)


# --------------------------------------------------------------------------- stats


def stats(
    db: str | None = None,
    codex_home: str | None = None,
    max_unused_days: int | None = None,
    rule: str = "memcite",
    as_of: str | None = None,
    since: str | None = None,
    limit: int = 20,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
    no_cache: bool = False,
    judge_without_usage: bool = False,
    machine: str | None = None,
    project: str | None = None,
    full: bool = False,
) -> int:
    """Print the usage report of one Codex home (dead memories, top, unknown ids, checks), or
    with ``db`` (or ``$MEMCITE_DB``) a PostgreSQL URL, of the fleet server."""
    from memcite.paths import Locations

    where = Locations(db=db, codex_home=codex_home)
    if where.db_is_server:
        return fleet_stats(where, machine=machine, project=project,
                           max_unused_days=max_unused_days, rule=rule, as_of=as_of,
                           since=since, limit=limit, json=json, full=full)
    if machine is not None or project is not None:
        return report_error(InputError("--machine and --project report on a fleet server",
                                       hint="give --db postgresql://... (the server "
                                            "`memcite push` sends to)"))
    try:
        from memcite.retention.stats_report import build

        check_rule(rule)
        _check_limit(limit)
        report = build(where, now=_time(as_of, "--as-of", int(time.time())), rule=rule,
                       max_unused_days=max_unused_days, since=_time(since, "--since", None),
                       limit=limit, cache=not no_cache, judge_without_usage=judge_without_usage)
    except (MemciteError, sqlite3.Error) as error:
        return report_read_failure(where.db_given, error)
    if json:
        dump_json(report.to_dict())
    else:
        given = {**where.options_given(), "--as-of": as_of}
        print_stats(report, where={name: value for name, value in given.items() if value},
                    full=full)
    return 0


def fleet_stats(where, *, machine: str | None, project: str | None, max_unused_days,
                rule: str, as_of: str | None, since: str | None, limit: int, json: bool,  # noqa: A002
                full: bool = False) -> int:
    """``memcite stats`` over a fleet server (``where.db``); no Codex home is looked for."""
    from memcite.fleet.report import fleet_stats as build_fleet_stats

    try:
        _check_limit(limit)
        report = build_fleet_stats(where, now=_time(as_of, "--as-of", int(time.time())),
                                   machine=machine, project=project, rule=rule,
                                   max_unused_days=max_unused_days,
                                   since=_time(since, "--since", None), limit=limit)
    except MemciteError as error:
        return report_error(error)
    if json:
        dump_json(report.to_dict())
    else:
        from memcite.fleet.connection import describe

        print_stats(report, where={"--db": describe(where.db_path)}, full=full)
    return EXIT_OK


# --------------------------------------------------------------------------- prune, restore


def prune(
    db: str | None = None,
    codex_home: str | None = None,
    max_unused_days: int | None = None,
    rule: str = "memcite",
    limit: int = 200,
    as_of: str | None = None,
    apply: bool = False,
    in_codex_db: bool = False,
    include_recent_threads: bool = False,
    judge_without_usage: bool = False,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
) -> int:
    """Preview the memories the rule would forget; with ``apply``, ask Codex to forget them.

    ``apply`` writes one ad-hoc note asking Codex's consolidation to drop them;
    ``apply`` with ``in_codex_db`` deletes their rows from Codex's table as its own
    start-up pruning does (saved first; ``restore`` puts them back). Memories gone from
    Codex are never offered and, with ``--rule codex``, rows only in the memory folder
    are not judged; both are counted in the output (``memcite.retention.prune.run``;
    ``--rule tiered``: ``memcite.codex.tiered_prune.prune_tiered``).
    """
    from memcite.ledger.codex_home import locate

    if rule == TIERED:
        from memcite.codex.tiered_prune import check_tiered_options, prune_tiered
        from memcite.codex.tiered_prune import render_text as tiered_text

        try:
            check_tiered_options(in_codex_db=in_codex_db, max_unused_days=max_unused_days,
                                 include_recent_threads=include_recent_threads)
            _check_limit(limit)
            where = Locations(db=db, codex_home=codex_home)
            locations = locate(where)
            done = prune_tiered(locations, ledger_opener(where, write=apply, missing_is_none=True),
                                config_path=where.config.path,
                                now=_time(as_of, "--as-of", int(time.time())), limit=limit,
                                apply=apply, judge_without_usage=judge_without_usage,
                                applied_at=time.time())
        except (MemciteError, sqlite3.Error) as error:
            return report_read_failure(db, error)
        return _printed(done, tiered_text, json)
    from memcite.retention import prune as pruning

    try:
        if in_codex_db and not apply:
            raise InputError("--in-codex-db says how --apply forgets; add --apply",
                             hint="without --apply, prune only previews")
        check_rule(rule)
        _check_limit(limit)
        where = Locations(db=db, codex_home=codex_home)
        locations = locate(where)
        done = pruning.run(locations, ledger_opener(where, write=apply), rule=rule,
                           max_unused_days=max_unused_days, config_path=where.config.path,
                           now=_time(as_of, "--as-of", int(time.time())), limit=limit,
                           apply=apply, in_codex_db=in_codex_db,
                           include_recent_threads=include_recent_threads,
                           judge_without_usage=judge_without_usage,
                           applied_at=int(time.time()), ledger_missing=_missing(where))
    except (MemciteError, sqlite3.Error) as error:
        return report_read_failure(db, error)
    return _printed(done, pruning.render_text, json)


def _missing(where) -> str | None:
    """memcite's database when it was not named and does not exist yet, else None."""
    import os

    return None if where.db.given or os.path.exists(where.db_path) else where.db_path


def _printed(model, render, json: bool) -> int:  # noqa: A002 - mirrors the --json flag
    """Print ``model`` as ``--json`` (its ``to_dict()``, or the dict itself) or as ``render``'s
    text; exit 0."""
    if json:
        dump_json(model if isinstance(model, dict) else model.to_dict())
    else:
        sys.stdout.write(render(model))
    return EXIT_OK


TIERED = "tiered"
PRUNE_RULES = ("memcite", "codex", TIERED)


def restore(
    thread_ids: list[str] | None = None,
    db: str | None = None,
    all: bool = False,  # noqa: A002 - mirrors the --all flag
    since: str | None = None,
    batch: str | None = None,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
) -> int:
    """Undo ``prune --apply`` for the given ids, ``--all``, ``--since TIME`` or ``--batch``:
    requests withdrawn, rows put back into Codex's table, files an older memcite moved put back
    (``memcite.retention.restore.restore``)."""
    from memcite.retention.restore import (
        render_text,
        restore_exit_code,
        restore_in_ledger,
        thread_ids_to_restore,
    )

    thread_ids = list(thread_ids or [])
    try:
        if not thread_ids and not all and since is None and batch is None:
            raise InputError("say what to restore: thread ids, --all, --since TIME or --batch",
                             hint="`memcite archived` lists what can be restored")
        since_time = _time(since, "--since", None)
        restored = restore_in_ledger(Locations(db=db), thread_ids=thread_ids_to_restore(thread_ids),
                                     every=all, since=since_time, batch=batch,
                                     now=int(time.time()))
    except (MemciteError, sqlite3.Error) as error:
        return report_read_failure(db, error)
    _printed(restored, render_text, json)
    return restore_exit_code(restored, bool(thread_ids))


def archived(
    db: str | None = None,
    codex_home: str | None = None,
    all_homes: bool = False,
    limit: int = 50,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
) -> int:
    """List the requests to forget (and what an older memcite archived), newest first, each
    open one with whether Codex did it (``memcite.audit.forget_requests.list_archived``)."""
    from memcite.audit.forget_requests import list_archived, render_text
    from memcite.codex.consolidation import request_outcomes
    from memcite.ledger.codex_home import locate

    try:
        _check_limit(limit)
        where = Locations(db=db, codex_home=codex_home)
        home = None if all_homes else locate(where).codex_home
        listing = list_archived(ledger_opener(where, write=False), codex_home=home, limit=limit,
                                now=int(time.time()),
                                env_sqlite_home=where.codex_sqlite_home_env,
                                request_outcomes=request_outcomes)
    except (MemciteError, sqlite3.Error) as error:
        return report_read_failure(db, error)
    return _printed(listing, render_text, json)


# --------------------------------------------------------------------------- select


def select(
    db: str | None = None,
    codex_home: str | None = None,
    n: int | None = None,
    max_unused_days: int | None = None,
    as_of: str | None = None,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
    judge_without_usage: bool = False,
) -> int:
    """Print the memories Codex's next consolidation would take, in its order
    (``memcite.retention.selection.build``)."""
    from memcite.codex.consolidation import enabled_threads
    from memcite.retention.selection import build, render_text

    try:
        where = Locations(db=db, codex_home=codex_home)
        selection = build(where, now=_time(as_of, "--as-of", int(time.time())), n=n,
                          max_unused_days=max_unused_days,
                          judge_without_usage=judge_without_usage,
                          enabled_threads=enabled_threads)
    except (MemciteError, sqlite3.Error) as error:
        return report_read_failure(db, error)
    return _printed(selection, render_text, json)


# --------------------------------------------------------------------------- show


def show(
    thread_id: str,
    db: str | None = None,
    codex_home: str | None = None,
    limit: int = 10,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
) -> int:
    """Print what memcite knows of one memory: label, place, times, both counts, citations
    (``memcite.retention.memory_card.memory_card``)."""
    from memcite.retention.memory_card import memory_card_of, render_text

    try:
        _check_limit(limit)
        card = memory_card_of(Locations(db=db, codex_home=codex_home), thread_id, limit=limit)
    except (MemciteError, sqlite3.Error) as error:
        return report_read_failure(db, error)
    return _printed(card, render_text, json)
