"""``memcite stats`` as one library function: ``build`` reads one Codex home's usage report
(dead memories, top, unknown ids, checks) from memcite's ledger, or from Codex's own table
when there is no ledger yet, and returns the ``StatsReport`` whose ``to_dict()`` is
``memcite.contracts.outputs.StatsOutput``. The command line's ``stats``, ``report`` and the
MCP server's ``stats`` tool all call it; none reads another's printed output.

Where things are comes in as one ``memcite.paths.Locations`` (built at the boundary from
the flags and the environment) and the time to judge at as ``now``: nothing here reads
the environment or the clock. Light at import (no pydantic, no Typer): the fast path runs it.
"""

from __future__ import annotations

import os

from memcite.display import count
from memcite.errors import InputError, MemciteError

JUDGE_OVERRIDE = "--judge-without-usage"


class UsageUnknown(MemciteError):
    """No usage data for the home: judging would call every memory dead (exit 3)."""

    exit_code = 3


def as_time(value: str | None, what: str, default: int | None) -> int | None:
    """An option's time (epoch seconds or ISO 8601) as epoch seconds; ``default`` when None."""
    if value is None:
        return default
    if value.strip().isdigit() and len(value.strip()) <= 12:
        from memcite.times import in_range

        if in_range(int(value)):
            return int(value)  # epoch seconds, without importing the ledger's parser
    from memcite.ledger.recording import parse_time

    return parse_time(value, what=what)


def check_limit(limit: int, option: str = "--limit") -> int:
    """``limit`` when it is 0 (everything) or more, else an ``InputError``."""
    if limit < 0:
        raise InputError(f"{option}: must be 0 (everything) or more, not {limit}")
    return limit


def resolve_settings_for(codex_home: str | None, *, rule: str = "memcite",
                         max_unused_days: int | None = None, n: int | None = None,
                         config_path: str | None = None, codex_memories: dict | None = None):
    """The retention settings: command line, memcite's config ``config_path`` (the caller's
    resolved path, ``Locations.config.path``; None: no config file; not read for Codex's
    rules: ``rule`` ``codex``, and ``select``), Codex's ``[memories]`` in ``codex_home`` (none
    when ``codex_home`` is None; ``codex_memories`` when the caller has read it already, e.g.
    ``memcite.retention.rules.codex_memories_of``), defaults."""
    from memcite.retention.rules import (
        load_codex_memories_config,
        load_memcite_config,
        resolve_settings,
    )

    mine = load_memcite_config(config_path) if rule == "memcite" else None
    codex = codex_memories
    if codex is None and codex_home is not None:
        codex = load_codex_memories_config(codex_home)
    return resolve_settings(
        {"max_unused_days": max_unused_days, "max_raw_memories_for_consolidation": n},
        mine, codex, rule=rule)


def require_usage(locations, judge_without_usage: bool) -> None:
    """Refuse to judge a home whose usage data (Codex's table) is not where Codex keeps it."""
    if locations.has_usage_data or judge_without_usage:
        return
    raise UsageUnknown(
        f"usage unknown: nothing judged. {locations.state_db} does not exist (Codex's SQLite "
        f"home: {locations.describe_sqlite_home()}), so how often each memory of "
        f"{locations.codex_home} was used is unknown, and every one would look dead",
        hint="if Codex keeps its databases elsewhere, set sqlite_home in config.toml or "
             f"CODEX_SQLITE_HOME as Codex does and run `memcite sync`; {JUDGE_OVERRIDE} "
             "judges anyway, on memcite's own log and the memories' dates")


def store_of(locations) -> dict:
    """The Codex memory store read, as reports name it."""
    return {"store": locations.store, "store_from": locations.store_from,
            "memory_folder": locations.memory_folder, "dual_write": locations.dual_write}


def require_synced_usage(conn, locations, judge_without_usage: bool) -> None:
    """Refuse to judge from an inventory whose last sync of the home found no usage data, or
    read the other memory store than the one Codex reads now."""
    from memcite.retention.stats import last_synced_store, never_synced, synced_usage

    synced_store = last_synced_store(conn, locations.codex_home)
    if synced_store is not None and synced_store != locations.store:
        raise UsageUnknown(
            f"memcite's last sync of {locations.codex_home} read memory store {synced_store}, "
            f"but Codex reads {locations.store} now ({locations.store_from}): the inventory "
            "holds the other store's memories, so nothing was judged",
            hint="run `memcite sync`: it reads the store Codex reads (the other store's "
                 "memories are marked missing, never deleted)")

    if never_synced(conn, locations.codex_home) and locations.has_usage_data:
        from memcite.ledger.codex_home import CodexHomeError, count_stage1_outputs

        try:
            rows = count_stage1_outputs(locations.state_db)
        except CodexHomeError:
            rows = 0
        if rows:  # a silent "memories 0" would say the opposite of what Codex holds
            raise UsageUnknown(
                f"{locations.codex_home} was never synced: memcite's inventory holds none of "
                f"the {count(rows, 'memory', 'memories')} in Codex's table "
                f"({locations.state_db}), so nothing was judged",
                hint="run `memcite sync` first (and again whenever Codex has consolidated)")
    if judge_without_usage or synced_usage(conn, locations.codex_home):
        return
    raise UsageUnknown(
        f"usage unknown: nothing judged. memcite's last sync of {locations.codex_home} read no "
        "rows of Codex's table (its memories database was not found or empty then), so how "
        "often each memory was used is unknown",
        hint=f"run `memcite sync` now that {locations.state_db} is there; "
             f"{JUDGE_OVERRIDE} judges anyway")


def log_root(conn, locations) -> str | None:
    """The memory folder the citation log keeps to (for ``prune --rule tiered``): None (every
    reply) while the database holds no other home, as ``stats`` does."""
    from memcite.retention.checks import MemoryFolder
    from memcite.retention.stats import memories_of
    from memcite.untrusted import storable_or_none

    if memories_of(conn, locations.codex_home) == "memories":
        return None
    return storable_or_none(MemoryFolder(locations.memory_folder).root)


def require_citation_log(conn, locations, log_root: str | None,
                         judge_without_usage: bool) -> None:
    """The tiered rule judges entries by memcite's citation log, not Codex's counters: without
    a single reply recorded (for this folder), every entry would look unused."""
    where, args = ("", ()) if log_root is None else (" WHERE memory_root = ?", (log_root,))
    if judge_without_usage or (conn is not None and conn.execute(
            f"SELECT 1 FROM replies{where} LIMIT 1", args).fetchone()):
        return
    raise UsageUnknown(
        f"usage unknown: nothing judged. memcite's citation log holds no reply for "
        f"{locations.memory_folder}, so which entries of MEMORY.md are used is unknown, and "
        "every one would look unused",
        hint="record replies first (`memcite setup codex` wires the Stop hook; `memcite "
             f"ingest --codex-home` reads past sessions); {JUDGE_OVERRIDE} judges anyway, on "
             "the entries' dates")


def nothing_to_report(where, home: str) -> MemciteError:
    """Neither a ledger nor Codex's table: the error, with a hint true to how the home came."""
    if where.codex_home.from_option:
        step = (f"check that {home} is the Codex home (it holds memories_1.sqlite once Codex "
                "has consolidated), or run `memcite sync`")
    else:
        step = "pass the Codex home with --codex-home (or CODEX_HOME), or run `memcite sync`"
    return InputError(
        f"no memcite database ({where.db_path}) and no Codex memories database "
        f"({os.path.join(home, 'memories_1.sqlite')}): nothing to report",
        hint=f"{step}; `memcite demo` shows the whole loop on sample data")


def build(where, *, now: int, rule: str = "memcite", max_unused_days: int | None = None,
          since: int | None = None, limit: int = 20, cache: bool = True,
          judge_without_usage: bool = False):
    """The usage report of the Codex home ``where`` names, judged at ``now``: a ``StatsReport``.

    Read from memcite's ledger (``where.db``), or, when the default ledger does not exist
    yet, from Codex's own table. Raises ``UsageUnknown`` (exit 3) rather than call every
    memory dead when no usage is known, a ``MemciteError`` or ``sqlite3.Error`` otherwise.
    """
    return _collect(where, now=now, rule=rule, max_unused_days=max_unused_days, since=since,
                    limit=limit, cache=cache, judge_without_usage=judge_without_usage)[0]


def build_page(where, *, now: int, limit: int, since: int | None = None,
               judge_without_usage: bool = False) -> tuple[dict, dict]:
    """``(stats dict, extras)`` for ``memcite report``'s page: ``build`` as ``stats --json``
    reads it, and the page's extras (``memcite.retention.report_data``)."""
    return _collect(where, now=now, rule="memcite", max_unused_days=None, since=since,
                    limit=limit, cache=True, judge_without_usage=judge_without_usage,
                    extras=True)


def _collect(where, *, now: int, rule: str, max_unused_days: int | None, since: int | None,
             limit: int, cache: bool, judge_without_usage: bool, extras: bool = False):
    from memcite.ledger.codex_home import locate
    from memcite.retention.rules import check_rule, codex_memories_of

    check_rule(rule)
    check_limit(limit)
    locations = locate(where)
    settings = resolve_settings_for(locations.codex_home, rule=rule,
                                    max_unused_days=max_unused_days,
                                    config_path=where.config.path,
                                    codex_memories=codex_memories_of(locations))
    require_usage(locations, judge_without_usage)
    root = locations.memory_folder
    codex_db = locations.state_db
    path = where.db_path
    common = dict(memory_root=root, as_of=now, max_unused_days=settings.max_unused_days,
                  rule=rule, limit=limit)
    if not where.db.given and not os.path.exists(path) and os.path.isfile(codex_db):
        from memcite.retention.stats import collect_codex_stats

        if since is not None:
            raise InputError("--since needs memcite's citation log; "
                             "there is no memcite database yet",
                             hint="record replies or run `memcite sync` first")
        report = collect_codex_stats(codex_db, codex_home=locations.codex_home, **common)
        report.codex_home = locations.codex_home
        return _finish(report, where, locations, None, extras)
    if not where.db.given and not os.path.exists(path):
        raise nothing_to_report(where, locations.codex_home)
    from memcite.ledger.store import open_store
    from memcite.retention.stats import collect_stats

    conn = open_store(path, readonly=True)
    try:
        require_synced_usage(conn, locations, judge_without_usage)
        report = collect_stats(conn, since=since, weeks=True,
                               cache_dir=where.cache_dir if cache else None,
                               codex_home=locations.codex_home, **common)
        return _finish(report, where, locations, conn, extras)
    finally:
        conn.close()


def _finish(report, where, locations, conn, extras: bool):
    """``(report, None)``, or with ``extras`` ``(its dict, the page's extras)``: from the
    ledger ``conn``, or from Codex's table when ``conn`` is None."""
    from memcite.retention.audit_counts import audit_of

    report.state_db = locations.state_db if locations.has_usage_data else None
    report.store = store_of(locations)
    report.audit = audit_of(where.cache_dir, locations)
    if not extras:
        return report, None
    from memcite.retention.report_data import report_extras

    stats = report.to_dict()
    more = {} if conn is not None else {"codex_db": locations.state_db}
    return stats, report_extras(conn, stats, codex_home=locations.codex_home,
                                memory_folder=locations.memory_folder, **more)


def fleet_settings(where, *, rule: str, max_unused_days: int | None):
    """The retention settings for a report over a fleet server: the command line, memcite's
    config, and Codex's ``[memories]`` only of a Codex home a person named (``--codex-home``
    or ``CODEX_HOME``); the default ``~/.codex`` is never looked for (the server's reader may
    have no Codex at all)."""
    from memcite.retention.rules import check_rule

    check_rule(rule)
    home = codex_memories = None
    if where.codex_home_named:
        from memcite.ledger.codex_home import locate
        from memcite.retention.rules import codex_memories_of

        located = locate(where)  # a named home that is no folder is an error
        home, codex_memories = located.codex_home, codex_memories_of(located)
    return resolve_settings_for(home, rule=rule, max_unused_days=max_unused_days,
                                config_path=where.config.path, codex_memories=codex_memories)
