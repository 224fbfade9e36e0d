"""``memcite stats --db postgresql://…``: the usage report over every machine that pushed.

The same report, in the same JSON contract, as ``memcite stats`` on one machine (see
``memcite.retention.stats``), its questions asked in SQL on the server (``fleet_queries``,
which a benchmark also hands to ``psql``). A fleet's memory is each thread id the machines'
inventories hold, merged:

- memcite's count is the sum of the machines' counts (each from its own citation log), its last
  use the latest; Codex's counters likewise (each machine's Codex counted its own replies);
- a memory is active while any machine has it active (not archived), in Codex's table while
  any machine's sync found it there, gone only when gone everywhere;
- its label (slug, summary file, cwd) is the one of the machine that synced it last.

Each cited entry was checked by the machine that pushed it, against that machine's memory
folder, when it pushed it; the sections are MEMORY.md's headings as last pushed. What needs a
machine's own files is left out: ``entries`` (per-entry relevance) and the paths of one home
(``codex_home``, ``state_db``, the checks' ``memory_root``) are null, ``files_read`` is 0.
Memories a machine asked Codex to forget are not pushed (``asked_to_forget`` is empty).
"""

from __future__ import annotations

from memcite.ledger.memory_files import LATE_HASH_SECONDS
from memcite.retention.checks import (
    CHECK_OUTCOMES,
    CheckedEntry,
    CitationChecks,
    Section,
    count_section_citations,
    rank_worst,
)
from memcite.retention.rules import check_rule, cutoff
from memcite.retention.stats import StatsReport, dead_entry, fill_weeks, top_entry
from memcite.untrusted import loads_json
from memcite.value_classes import FrozenSlots

WEEK = 7 * 86_400
MONDAY_OFFSET = 4 * 86_400
C = 'COLLATE "C"'  # order text as SQLite and Python do (by code point), whatever the locale

# The merged inventory of the memories in scope: one row per thread id (see the module's text).
SCOPE_TABLE = """
CREATE TEMP TABLE fleet_scope ON COMMIT DROP AS
SELECT merged.*,
  greatest(coalesce(last_usage, 0), coalesce(codex_last_usage, 0),
           coalesce(source_updated_at, 0)) AS last_used,
  coalesce(codex_last_usage, source_updated_at) AS codex_last_used
FROM (
SELECT thread_id,
  sum(usage_count)::bigint AS usage_count, max(last_usage) AS last_usage,
  sum(codex_usage_count)::bigint AS codex_usage_count, max(codex_last_usage) AS codex_last_usage,
  max(source_updated_at) AS source_updated_at,
  CASE WHEN bool_or(archived_at IS NULL) THEN NULL ELSE max(archived_at) END AS archived_at,
  CASE WHEN bool_or(missing_since IS NULL) THEN NULL ELSE max(missing_since) END
    AS missing_since,
  CASE WHEN bool_or(source = 'stage1_outputs' AND missing_since IS NULL) THEN 'stage1_outputs'
    ELSE (array_agg(source ORDER BY synced_at DESC, machine_id))[1] END AS source,
  (array_agg(rollout_slug ORDER BY synced_at DESC, machine_id))[1] AS rollout_slug,
  (array_agg(rollout_summary_file ORDER BY synced_at DESC, machine_id))[1]
    AS rollout_summary_file,
  (array_agg(cwd ORDER BY synced_at DESC, machine_id))[1] AS cwd
FROM fleet_memories
WHERE (%(machine_id)s::integer IS NULL OR machine_id = %(machine_id)s)
  AND (%(project)s::text IS NULL OR cwd = %(project)s OR left(cwd, length(%(project)s) + 1)
       = %(project)s || '/')
GROUP BY thread_id) AS merged
"""
RULE_SCOPE = {
    "memcite": "missing_since IS NULL",
    "codex": "missing_since IS NULL AND source = 'stage1_outputs'",
}
RULE_LAST_USED = {"memcite": "last_used", "codex": "codex_last_used"}
USAGE = ("thread_id, source_updated_at, last_usage, codex_last_usage, usage_count,"
         " codex_usage_count")
LABEL = "rollout_slug, rollout_summary_file, cwd"

# The replies (and their rows) in scope: a machine, a project (the reply's cwd), a time.
LOG_SCOPE = """(%(machine_id)s::integer IS NULL OR {a}machine_id = %(machine_id)s)
  AND (%(project)s::text IS NULL OR {a}cwd = %(project)s
       OR left({a}cwd, length(%(project)s) + 1) = %(project)s || '/')
  AND (%(since)s::bigint IS NULL OR {a}replied_at >= %(since)s)"""


def _log(alias: str = "") -> str:
    return LOG_SCOPE.format(a=f"{alias}." if alias else "")


def fleet_queries(rule: str, limit: int) -> dict[str, str]:
    """The report's SQL, by name, in the order it is run (parameters as ``%(name)s``)."""
    check_rule(rule)
    column, scope = RULE_LAST_USED[rule], RULE_SCOPE[rule]
    limit_sql = f" LIMIT {int(limit)}" if limit else ""
    if rule == "memcite":
        top_where = "(usage_count > 0 OR codex_usage_count > 0)"
        top_order = ("greatest(usage_count, coalesce(codex_usage_count, 0)) DESC, greatest("
                     "coalesce(last_usage, 0), coalesce(codex_last_usage, 0)) DESC")
    else:
        top_where = "codex_usage_count > 0"
        top_order = "codex_usage_count DESC, codex_last_usage DESC NULLS LAST"
    known = ("NOT EXISTS (SELECT 1 FROM fleet_memories m WHERE m.thread_id = c.thread_id"
             " AND (%(machine_id)s::integer IS NULL OR m.machine_id = %(machine_id)s))")
    return {
        "scope": SCOPE_TABLE,
        "totals": f"""
SELECT count(*),
  count(*) FILTER (WHERE archived_at IS NOT NULL),
  count(*) FILTER (WHERE archived_at IS NULL AND missing_since IS NOT NULL),
  count(*) FILTER (WHERE archived_at IS NULL AND missing_since IS NULL
                   AND source <> 'stage1_outputs'),
  count(*) FILTER (WHERE archived_at IS NULL AND missing_since IS NULL AND usage_count > 0),
  count(*) FILTER (WHERE archived_at IS NULL AND missing_since IS NULL
                   AND source = 'stage1_outputs' AND codex_usage_count > 0),
  coalesce(sum(codex_usage_count) FILTER (WHERE archived_at IS NULL AND codex_usage_count > 0),
           0),
  count(*) FILTER (WHERE archived_at IS NULL AND {scope} AND {column} < %(cut)s),
  coalesce(sum(usage_count) FILTER (WHERE usage_count > 0), 0)
FROM fleet_scope""",
        "dead": f"""
SELECT {USAGE}, {column}, {LABEL} FROM fleet_scope
WHERE archived_at IS NULL AND {scope} AND {column} < %(cut)s
ORDER BY {column}, thread_id {C}{limit_sql}""",
        "top": f"""
SELECT {USAGE}, {LABEL} FROM fleet_scope
WHERE {top_where} AND archived_at IS NULL AND {scope}
ORDER BY {top_order}, thread_id {C}{limit_sql}""",
        "unknown_ids": f"""
SELECT thread_id, n, count(*) OVER (), sum(n) OVER () FROM (
  SELECT c.thread_id, count(*) AS n FROM fleet_cited_ids c
  WHERE c.known = 0 AND c.counted = 1 AND {_log('c')} AND {known}
  GROUP BY c.thread_id) AS unknown
ORDER BY n DESC, thread_id {C}{limit_sql}""",
        "not_uuid_ids": f"""
SELECT rollout_id, n, count(*) OVER () FROM (
  SELECT c.rollout_id, count(*) AS n FROM fleet_cited_ids c
  WHERE c.thread_id IS NULL AND {_log('c')} GROUP BY c.rollout_id) AS odd
ORDER BY n DESC, rollout_id {C}{limit_sql}""",
        "counted": f"SELECT count(*) FROM fleet_cited_ids WHERE counted = 1 AND {_log()}",
        "replies": f"""
SELECT count(*), count(*) FILTER (WHERE recorded_at - replied_at > {LATE_HASH_SECONDS})
FROM fleet_replies WHERE {_log()}""",
        "checks": f"""
SELECT path, line_start, line_end, lines_sha256, outcome, moved_to, count(*)
FROM fleet_cited_entries WHERE {_log()}
GROUP BY path, line_start, line_end, lines_sha256, outcome, moved_to""",
        "files": f"""
SELECT file_key, count(*) AS n FROM fleet_cited_entries WHERE {_log()}
GROUP BY file_key ORDER BY n DESC, file_key {C}{limit_sql}""",
        "index_ranges": f"""
SELECT line_start, line_end, count(*) FROM fleet_cited_entries
WHERE file_key = 'MEMORY.md' AND {_log()} GROUP BY line_start, line_end""",
        "sections": """
SELECT title, path, level, line, end_line FROM fleet_sections
WHERE machine_id = (SELECT machine_id FROM fleet_sections
                    WHERE %(machine_id)s::integer IS NULL OR machine_id = %(machine_id)s
                    ORDER BY pushed_at DESC, machine_id DESC LIMIT 1)
ORDER BY position""",
        "weeks": f"""
SELECT (replied_at - {MONDAY_OFFSET}) / {WEEK} AS week, count(*) FROM fleet_cited_ids
WHERE counted = 1 AND replied_at >= %(low)s AND replied_at <= %(as_of)s AND {_log()}
GROUP BY week ORDER BY week""",
        "syncs": """
SELECT store, count(*) FROM fleet_syncs
WHERE %(machine_id)s::integer IS NULL OR machine_id = %(machine_id)s GROUP BY store""",
    }


class FleetScope(FrozenSlots):
    """Which part of the fleet a report covers."""

    __slots__ = ("machine", "project")
    _fields = _compared = __slots__

    def __init__(self, machine: str | None = None, project: str | None = None) -> None:
        object.__setattr__(self, "machine", machine)
        # "/" holds every project: no filter (its prefix test would match none)
        object.__setattr__(self, "project", (project.rstrip("/") or None) if project else None)


def machine_id_of(cur, machine: str | None) -> int | None:
    """The server's id of ``machine``; a ``LookupError`` when no machine of that name pushed."""
    if machine is None:
        return None
    row = cur.execute("SELECT id FROM fleet_machines WHERE name = %s", (machine,)).fetchone()
    if row is None:
        names = [r[0] for r in cur.execute("SELECT name FROM fleet_machines ORDER BY name"
                                           " LIMIT 20")]
        raise LookupError(f"no machine named {machine!r} pushed to this server"
                          f" (machines: {', '.join(names) or 'none yet'})")
    return row[0]


def query_parameters(machine_id: int | None, scope: FleetScope, *, as_of: int,
                     max_unused_days: int, since: int | None) -> dict:
    return {"machine_id": machine_id, "project": scope.project, "since": since,
            "cut": cutoff(as_of, max_unused_days), "as_of": as_of,
            "low": -1 if since is None else since}


def collect_fleet_stats(conn, *, scope: FleetScope, as_of: int, max_unused_days: int,
                        rule: str = "memcite", since: int | None = None,
                        limit: int = 20) -> StatsReport:
    """The report over the machines in ``scope`` (all of them by default)."""
    queries = fleet_queries(rule, limit)
    with conn.transaction():
        cur = conn.cursor()
        machine_id = machine_id_of(cur, scope.machine)
        params = query_parameters(machine_id, scope, as_of=as_of,
                                  max_unused_days=max_unused_days, since=since)

        def run(name: str):
            return cur.execute(queries[name], params).fetchall()

        cur.execute(queries["scope"], params)
        (everything, archived, gone, folder_only, cited_memcite, cited_codex, codex_citations,
         dead_count, usage_sum) = run("totals")[0]
        dead = [dead_entry(row, rule, as_of) for row in run("dead")]
        top = [top_entry(row, rule) for row in run("top")]
        unknown_rows = run("unknown_ids")
        not_uuid_rows = run("not_uuid_ids")
        counted = run("counted")[0][0]
        replies, late = run("replies")[0]
        checks = _checks(run("checks"), limit)
        files = [{"path": path, "citations": n} for path, n in run("files")]
        sections = [Section(*row) for row in run("sections")]
        count_section_citations(sections, run("index_ranges"))
        week_rows = run("weeks")
        stores = dict(run("syncs"))
        machines = [r[0] for r in cur.execute(
            "SELECT name FROM fleet_machines WHERE %(machine_id)s::integer IS NULL"
            " OR id = %(machine_id)s ORDER BY name", params)]
    unknown_count = unknown_rows[0][2] if unknown_rows else 0
    unknown_citations = int(unknown_rows[0][3]) if unknown_rows else 0
    memories = everything - archived - gone
    in_codex_table = everything - archived - gone - folder_only
    cited = cited_memcite if rule == "memcite" else cited_codex
    scope_total = memories if rule == "memcite" else in_codex_table
    no_filter = since is None and scope.project is None
    citations = int(usage_sum) + unknown_citations if no_filter else counted
    totals = {
        "memories": memories, "archived": archived, "gone_from_codex": gone,
        "in_codex_table": in_codex_table, "cited": cited, "never_cited": scope_total - cited,
        "cited_memcite": cited_memcite, "never_cited_memcite": memories - cited_memcite,
        "cited_codex": cited_codex, "never_cited_codex": in_codex_table - cited_codex,
        "codex_citations": int(codex_citations), "asked_to_forget": 0, "dead": dead_count,
        "citations": citations, "replies": replies, "replies_hashed_late": late,
        "unknown_ids": unknown_count,
        "not_uuid_ids": not_uuid_rows[0][2] if not_uuid_rows else 0,
    }
    first = None if since is None else (since - MONDAY_OFFSET) // WEEK
    weeks = [] if first is None and not week_rows else fill_weeks(
        week_rows, first=first, last=(as_of - MONDAY_OFFSET) // WEEK)
    report = StatsReport(as_of, rule, max_unused_days, since, "memcite", totals, dead,
                         dead_count, top,
                         [{"thread_id": t, "citations": n} for t, n, *_ in unknown_rows],
                         [{"rollout_id": r, "citations": n} for r, n, _ in not_uuid_rows],
                         checks, files, sections, weeks)
    report.fleet = {"machine": scope.machine, "project": scope.project, "machines": machines,
                    "stores": stores}
    return report


def _checks(rows, limit: int) -> CitationChecks:
    """The checks part from the server's groups, counted as ``check_citations`` counts."""
    checks = CitationChecks(memory_root=None)
    bad: dict[tuple, int] = {}
    moves: dict[tuple, tuple[int, int] | None] = {}
    for path, line_start, line_end, _digest, outcome, moved, count in rows:
        if outcome not in CHECK_OUTCOMES:
            continue  # pushed by a newer memcite: not counted under a name this one lacks
        checks.outcomes[outcome]["entries"] += 1
        checks.outcomes[outcome]["citations"] += count
        checks.entries += 1
        checks.citations += count
        if outcome not in ("ok", "unverified"):
            key = (path, line_start, line_end, outcome)
            bad[key] = bad.get(key, 0) + count
            if outcome == "moved" and moved:
                moves[key] = _moved_to(moved)
    checks.worst = rank_worst([CheckedEntry(*key, count, moves.get(key))
                               for key, count in bad.items()], limit)
    return checks


def _moved_to(moved: str) -> tuple | None:
    """Where a moved entry went, as another machine pushed it (untrusted: a value that is
    not a short JSON list is left out)."""
    try:
        value = loads_json(moved)
    except ValueError:
        return None
    return tuple(value) if isinstance(value, list) else None


def fleet_report(conninfo: str, *, as_of: int, max_unused_days: int, machine: str | None = None,
                 project: str | None = None, rule: str = "memcite", since: int | None = None,
                 limit: int = 20):
    """The fleet's ``StatsReport`` from the server ``conninfo``; every server problem a
    ``FleetError`` (password masked), a machine no one pushed as an ``InputError``."""
    from memcite.fleet.connection import FleetError, connect, server_error

    server = connect(conninfo, autocommit=True)
    try:
        return collect_fleet_stats(server, scope=FleetScope(machine, project), as_of=as_of,
                                   max_unused_days=max_unused_days, rule=rule, since=since,
                                   limit=limit)
    except LookupError as error:
        from memcite.errors import InputError

        raise InputError(str(error)) from None
    except FleetError:
        raise
    except Exception as error:
        import psycopg

        if isinstance(error, psycopg.errors.UndefinedTable):
            raise FleetError("the server has no fleet tables yet",
                             hint="run `memcite push --to URL` from a machine first") from None
        if isinstance(error, psycopg.Error):
            raise server_error(error, conninfo) from None
        raise
    finally:
        server.close()


def fleet_stats(where, *, now: int, machine: str | None = None, project: str | None = None,
                rule: str = "memcite", max_unused_days: int | None = None,
                since: int | None = None, limit: int = 20):
    """``memcite stats`` over the fleet server ``where.db`` (a ``memcite.paths.Locations``),
    judged at ``now``: a ``StatsReport``. No Codex home is looked for, except one a person
    named (its ``[memories]`` settings apply; one that is no folder is an error)."""
    import os

    from memcite.errors import InputError
    from memcite.retention.stats_report import fleet_settings

    if project is not None and not os.path.isabs(project):
        raise InputError(f"--project: {project!r} is not an absolute path",
                         hint="give the project's folder as its replies' cwd has it")
    settings = fleet_settings(where, rule=rule, max_unused_days=max_unused_days)
    return fleet_report(where.db_path, machine=machine, project=project, as_of=now,
                        max_unused_days=settings.max_unused_days, rule=rule, since=since,
                        limit=limit)
