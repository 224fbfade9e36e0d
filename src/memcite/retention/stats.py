"""The usage report behind ``memcite stats``: dead memories, most cited, unknown ids,
citation checks against the memory folder, where citations land, citations per week.

Everything is read with plain ``sqlite3`` through indexes that cover the queries
(see ``memcite.ledger.store``), so the report stays fast on large ledgers; the one scan
(``out_of_scope``) counts the memories a rule leaves out. Memories gone from
Codex (marked missing by sync) are counted apart (``gone_from_codex``), never as
memories, dead or alive; Codex's rule only judges the rows of Codex's table. The
citation log's part (checks, files, sections, unknown ids) is tallied in
``memcite.retention.tally``, the checks themselves in ``memcite.retention.checks``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable

from memcite.ledger.counters import (
    active_before_day,
    memory_totals,
    reply_totals,
    week_counters,
)
from memcite.ledger.memory_files import LATE_HASH_SECONDS
from memcite.retention.checks import CitationChecks, MemoryFolder, Section
from memcite.retention.labels import LABEL_COLUMNS, memory_label
from memcite.retention.rules import (
    DAY,
    MemoryUsage,
    check_rule,
    cutoff,
    days_unused,
    dead_reason,
    last_used,
)
from memcite.retention.tally import log_tally, since_filter
from memcite.untrusted import storable_or_none
from memcite.value_classes import FrozenSlots, Slots

WEEK = 7 * DAY

_MONDAY_OFFSET = 4 * DAY  # 1970-01-01 was a Thursday


# --------------------------------------------------------------------------- the report


class StatsReport(Slots):
    """Everything ``memcite stats`` prints."""

    __slots__ = ("as_of", "rule", "max_unused_days", "since", "source", "totals", "dead",
                 "dead_count", "top", "unknown_ids", "not_uuid_ids", "citation_checks", "files",
                 "sections", "weeks", "citation_log", "codex_home", "state_db", "other_homes",
                 "log_scope", "asked_to_forget", "entries", "relevance", "last_sync", "store",
                 "fleet", "audit", "consolidation")
    _fields = __slots__

    def __init__(self, as_of: int, rule: str, max_unused_days: int, since: int | None,
                 source: str, totals: dict[str, int], dead: list[dict], dead_count: int,
                 top: list[dict], unknown_ids: list[dict], not_uuid_ids: list[dict],
                 citation_checks: CitationChecks, files: list[dict], sections: list[Section],
                 weeks: list[dict] | None = None, citation_log: bool = True,
                 codex_home: str | None = None, state_db: str | None = None,
                 other_homes: list[str] | None = None, log_scope: str | None = None,
                 asked_to_forget: list[dict] | None = None, entries: dict | None = None) -> None:
        self.as_of = as_of
        self.rule = rule
        self.max_unused_days = max_unused_days
        self.since = since
        self.source = source  # memcite | codex
        self.totals = totals
        self.dead = dead
        self.dead_count = dead_count
        self.top = top
        self.unknown_ids = unknown_ids
        self.not_uuid_ids = not_uuid_ids
        self.citation_checks = citation_checks
        self.files = files
        self.sections = sections
        self.weeks = weeks
        self.citation_log = citation_log  # False: straight from Codex's database, nothing recorded
        self.codex_home = codex_home  # the one home reported on (real path)
        self.state_db = state_db  # where its usage data (Codex's table) is
        self.other_homes = [] if other_homes is None else other_homes  # in the database only
        self.log_scope = log_scope  # the log parts keep to replies recorded against this folder
        self.asked_to_forget = [] if asked_to_forget is None else asked_to_forget
        self.entries = entries  # usage per entry (``memcite.retention.entry_report``)
        # For the text only (not in ``to_dict``): the cited entries, most and least relevant
        # apart (``relevance_split``), and when memcite's last sync of the home finished.
        self.relevance: tuple[list[dict], list[dict]] = ([], [])
        self.last_sync: int | None = None
        # The Codex memory store read ({"store", "store_from", "memory_folder", "dual_write"}),
        # set by the command from where Codex reads.
        self.store: dict | None = None
        # A report over a fleet server (``memcite.fleet.report``): the machines it covers.
        self.fleet: dict | None = None
        # The home's last ``memcite audit`` (``memcite.retention.audit_counts.audit_of``),
        # set by the command; None: not looked at.
        self.audit: dict | None = None
        # The home's consolidations as memcite's snapshots show them, and memory store v2's
        # readiness (``memcite.ledger.snapshots.consolidation_summary``); None: not looked at.
        self.consolidation: dict | None = None

    def to_dict(self) -> dict:
        result = {
            "codex_home": self.codex_home,
            "state_db": self.state_db,
            "other_homes": self.other_homes,
            "log_scope": self.log_scope,
            "source": self.source,
            "citation_log": self.citation_log,
            "as_of": self.as_of,
            "rule": self.rule,
            "max_unused_days": self.max_unused_days,
            "since": self.since,
            "memories": self.totals["memories"],
            "totals": dict(self.totals),
            "dead_count": self.dead_count,
            "dead": self.dead,
            "top": self.top,
            "unknown_ids": self.unknown_ids,
            "not_uuid_ids": self.not_uuid_ids,
            "citation_checks": self.citation_checks.to_dict(),
            "files": self.files,
            "sections": [section.to_dict() for section in self.sections],
            "asked_to_forget": self.asked_to_forget,
        }
        if self.store is not None:
            result["store"] = self.store
        if self.weeks is not None:
            result["weeks"] = self.weeks
        if self.entries is not None:
            result["entries"] = self.entries
        if self.fleet is not None:
            result["fleet"] = self.fleet
        if self.audit is not None:
            result["audit"] = self.audit
        if self.consolidation is not None:
            result["consolidation"] = self.consolidation
        return result


def _limit(limit: int) -> int:
    return -1 if limit == 0 else limit  # SQLite: LIMIT -1 is no limit


# --------------------------------------------------------------------------- rules in SQL

# The columns ``usage_from_row`` reads, in its order (``SELECT {USAGE_COLUMNS} FROM memories``).
USAGE_COLUMNS = ("thread_id, source_updated_at, last_usage, codex_last_usage, usage_count,"
                 " codex_usage_count")
# Each rule's last use: a generated, indexed column of ``memories``.
RULE_LAST_USED = {"memcite": "last_used", "codex": "codex_last_used"}
# The rows each rule judges (``memcite.retention.rules.in_scope``), as a condition on ``memories``:
# sync sets ``source`` to 'stage1_outputs' for a row of Codex's table (a row also found in the
# folder keeps it) and ``missing_since`` for a row it no longer found anywhere.
RULE_SCOPE = {
    "memcite": "missing_since IS NULL",
    "codex": "missing_since IS NULL AND source = 'stage1_outputs'",
}
# Active rows outside some rule's scope, counted in one scan and subtracted from the counts
# the indexes cover (filtering those counts would cost a table lookup per dead row, ten
# times the scan). No index covers missing_since or source yet: the scan costs ~20 ms at
# 200,000 memories; a partial index whose WHERE is exactly this text would make it free.
_OUT_OF_SCOPE = ("archived_at IS NULL AND (missing_since IS NOT NULL"
                 " OR source != 'stage1_outputs')")


def usage_from_row(row) -> MemoryUsage:
    """A ``MemoryUsage`` from a row whose first columns are ``USAGE_COLUMNS``."""
    return MemoryUsage(thread_id=row[0], source_updated_at=row[1], last_usage=row[2],
                       codex_last_usage=row[3], usage_count=row[4] or 0,
                       codex_usage_count=row[5])


class OutOfScope(FrozenSlots):
    """Active (not archived) memories that some rule leaves out, and what they would count."""

    __slots__ = ("limit_time", "gone", "folder_only", "gone_cited", "dead", "codex_cited")
    _fields = _compared = __slots__

    def __init__(self, limit_time: int, gone: int, folder_only: int, gone_cited: int,
                 dead: dict[str, int], codex_cited: int) -> None:
        set_ = object.__setattr__
        set_(self, "limit_time", limit_time)  # the cutoff the ``dead`` counts are for
        set_(self, "gone", gone)  # gone from Codex (marked missing by sync): no rule judges them
        # still in the memory folder, not in Codex's table: only memcite's rule
        set_(self, "folder_only", folder_only)
        set_(self, "gone_cited", gone_cited)  # of ``gone``: cited in memcite's log
        set_(self, "dead", dead)  # per rule: rows outside its scope that its column calls dead
        set_(self, "codex_cited", codex_cited)  # rows outside Codex's scope with a Codex usage count

    @property
    def not_in_codex_table(self) -> int:
        return self.gone + self.folder_only


def memories_of(conn: sqlite3.Connection, codex_home: str | None) -> str:
    """What to read ``FROM`` for the memories of one Codex home (its real path): the table
    itself while it holds no other home (so that its indexes serve), else those rows."""
    codex_home = storable_or_none(codex_home)  # as sync stored it
    if codex_home is None:
        return "memories"
    homes = [row[0] for row in conn.execute(
        "SELECT DISTINCT codex_home FROM memories LIMIT 2")]
    if homes == [codex_home] or not homes:  # no other home to keep apart
        return "memories"
    quoted = codex_home.replace("'", "''")
    return f"(SELECT * FROM memories WHERE codex_home = '{quoted}')"


def synced_usage(conn: sqlite3.Connection, codex_home: str) -> bool:
    """Whether memcite's inventory holds usage data for ``codex_home``: its last finished sync
    read rows of Codex's table (or the home has no memories in the inventory yet)."""
    codex_home = storable_or_none(codex_home)  # as sync stored it
    last = conn.execute(
        "SELECT stage1_rows FROM syncs WHERE codex_home = ? AND finished_at IS NOT NULL"
        " ORDER BY id DESC LIMIT 1", (codex_home,)).fetchone()
    if last is None:
        return conn.execute("SELECT 1 FROM memories WHERE codex_home = ? LIMIT 1",
                            (codex_home,)).fetchone() is None
    return last[0] > 0


def inventory_knew(conn: sqlite3.Connection, codex_home: str | None):
    """A test of whether a cited ``rollout_summaries/<file>`` was the summary of a memory
    memcite's inventory holds (of ``codex_home``): a file missing now that was there once."""
    home = storable_or_none(codex_home) if codex_home else None

    def knew(path: str) -> bool:
        name = path.removeprefix("./")
        if not name.startswith("rollout_summaries/") or name.count("/") != 1:
            return False
        sql = "SELECT 1 FROM memories WHERE rollout_summary_file = ?"
        args: list = [name.split("/", 1)[1]]
        if home is not None:
            sql += " AND codex_home = ?"
            args.append(home)
        try:
            return conn.execute(sql + " LIMIT 1", args).fetchone() is not None
        except sqlite3.Error:
            return False

    return knew


def last_synced_store(conn: sqlite3.Connection, codex_home: str) -> str | None:
    """The memory store (v1 | v2) memcite's last finished sync of ``codex_home`` read."""
    found = conn.execute(
        "SELECT store FROM syncs WHERE codex_home = ? AND finished_at IS NOT NULL"
        " ORDER BY id DESC LIMIT 1", (storable_or_none(codex_home),)).fetchone()
    return found[0] if found else None


def never_synced(conn: sqlite3.Connection, codex_home: str) -> bool:
    """Whether no sync of ``codex_home`` ever finished (the ledger was made by the hook,
    ``record`` or ``rebuild`` first)."""
    return conn.execute("SELECT 1 FROM syncs WHERE codex_home = ? AND finished_at IS NOT NULL"
                        " LIMIT 1", (storable_or_none(codex_home),)).fetchone() is None


def other_homes(conn: sqlite3.Connection, codex_home: str | None) -> list[str]:
    """The other Codex homes memcite's database holds memories of."""
    codex_home = storable_or_none(codex_home)  # as sync stored it
    # One index seek per home (``memories_codex_home_sync``), not a read of every row.
    homes = []
    home = conn.execute("SELECT min(codex_home) FROM memories").fetchone()[0]
    while home is not None:
        if home != codex_home:
            homes.append(home)
        home = conn.execute("SELECT min(codex_home) FROM memories WHERE codex_home > ?",
                            (home,)).fetchone()[0]
    return homes


def out_of_scope(conn: sqlite3.Connection, *, limit_time: int,
                 table: str = "memories") -> OutOfScope:
    """Count the active memories outside the rules' scopes (one scan of ``memories``)."""
    row = conn.execute(
        "SELECT coalesce(sum(missing_since IS NOT NULL), 0), coalesce(sum(missing_since IS NULL),"
        " 0), coalesce(sum(missing_since IS NOT NULL AND usage_count > 0), 0),"
        " coalesce(sum(missing_since IS NOT NULL AND last_used < :cut), 0),"
        " coalesce(sum(codex_last_used < :cut), 0), coalesce(sum(codex_usage_count > 0), 0)"
        f" FROM {table} WHERE {_OUT_OF_SCOPE}", {"cut": limit_time}).fetchone()
    gone, folder_only, gone_cited, gone_dead, outside_codex_dead, codex_cited = row
    return OutOfScope(limit_time, gone, folder_only, gone_cited,
                      {"memcite": gone_dead, "codex": outside_codex_dead}, codex_cited)


def _outside_from_totals(conn: sqlite3.Connection, kept: dict[str, int],
                         limit_time: int) -> OutOfScope:
    """``out_of_scope`` from the kept counters; only its dead counts, which depend on the
    cutoff, are counted (through ``memories_outside_codex``), and only when there are such rows."""
    gone_dead = outside_dead = 0
    if kept["gone"] or kept["folder_only"]:
        gone_dead, outside_dead = conn.execute(
            "SELECT coalesce(sum(missing_since IS NOT NULL AND last_used < :cut), 0),"
            f" coalesce(sum(codex_last_used < :cut), 0) FROM memories WHERE {_OUT_OF_SCOPE}",
            {"cut": limit_time}).fetchone()
    return OutOfScope(limit_time, kept["gone"], kept["folder_only"], kept["gone_cited"],
                      {"memcite": gone_dead, "codex": outside_dead}, kept["outside_codex_cited"])


def dead_from_store(conn: sqlite3.Connection, *, as_of: int, max_unused_days: int, rule: str,
                    limit: int, outside: OutOfScope | None = None,
                    active: int | None = None, table: str = "memories",
                    asked: set[str] | None = None) -> tuple[int, list[dict]]:
    """``(how many, the stalest ones)`` among the active memories ``rule`` judges.

    Counted through the covering index, less the rows outside the rule's scope
    (``outside``, counted here when not given for this cutoff). Given ``active``
    (rows not archived), the smaller side of the cutoff is the one counted.
    """
    check_rule(rule)
    column = RULE_LAST_USED[rule]
    limit_time = cutoff(as_of, max_unused_days)
    if outside is None or outside.limit_time != limit_time:
        outside = out_of_scope(conn, limit_time=limit_time, table=table)
    count = count_before(conn, column, limit_time, active, table,
                          rule=rule) - outside.dead[rule]
    rows = conn.execute(
        f"SELECT {USAGE_COLUMNS}, {column}, {LABEL_COLUMNS} FROM {table} WHERE"
        f" archived_at IS NULL AND {RULE_SCOPE[rule]} AND {column} < ?"
        f" ORDER BY {column}, thread_id LIMIT ?", (limit_time, _limit(limit))).fetchall()
    return count, [dead_entry(row, rule, as_of, asked or ()) for row in rows]


def dead_entry(row, rule: str, as_of: int, asked=()) -> dict:
    """One dead memory as the report lists it, from a row of ``USAGE_COLUMNS``, the rule's
    last use and ``LABEL_COLUMNS``."""
    memory = usage_from_row(row)
    last = row[6] or 0
    return {"thread_id": memory.thread_id, "label": memory_label(*row[7:10]),
            "last_used": last, "days_unused": days_unused(last, as_of),
            "reason": dead_reason(memory, rule), "usage_count": memory.usage_count,
            "codex_usage_count": memory.codex_usage_count,
            "asked_to_forget": memory.thread_id in asked}


def count_before(conn: sqlite3.Connection, column: str, limit_time: int,
                  active: int | None, table: str = "memories", *, rule: str | None = None) -> int:
    """Active rows with ``column < limit_time``: the kept counts per day of last use for the
    days before the cutoff's, and the cutoff's day counted in the index. Without them (several
    homes, an interrupted sync): an index range is counted row by row, so when most rows are
    stale, count the recent ones (at most half) and subtract."""
    where = f"FROM {table} WHERE archived_at IS NULL AND {column}"
    day = limit_time // DAY
    if table == "memories" and rule is not None and day >= 1:
        # Whole days from day 1 on are the same under SQLite's division (toward zero).
        before = active_before_day(conn, rule, day)
        if before is not None:
            return before + conn.execute(f"SELECT count(*) {where} >= ? AND {column} < ?",
                                         (day * DAY, limit_time)).fetchone()[0]
    if active is not None:
        half = active // 2 + 1
        recent = conn.execute(f"SELECT count(*) FROM (SELECT 1 {where} >= ? LIMIT ?)",
                              (limit_time, half)).fetchone()[0]
        if recent < half:
            unknown = conn.execute(f"SELECT count(*) {where} IS NULL").fetchone()[0]
            return active - recent - unknown
    return conn.execute(f"SELECT count(*) {where} < ?", (limit_time,)).fetchone()[0]


def top_entry(row, rule: str) -> dict:
    memory = usage_from_row(row)
    return {"thread_id": memory.thread_id, "label": memory_label(*row[6:9]),
            "usage_count": memory.usage_count,
            "codex_usage_count": memory.codex_usage_count, "last_usage": memory.last_usage,
            "codex_last_usage": memory.codex_last_usage, "last_used": last_used(memory, rule)}


def collect_stats(
    conn: sqlite3.Connection,
    *,
    memory_root: str | os.PathLike | None,
    as_of: int,
    max_unused_days: int,
    rule: str = "memcite",
    since: int | None = None,
    limit: int = 20,
    weeks: bool = False,
    folder: MemoryFolder | None = None,
    cache_dir: str | os.PathLike | None = None,
    codex_home: str | None = None,
) -> StatsReport:
    """The report from memcite's database; ``limit`` 0 lists everything.

    With ``codex_home`` (a real path) only that home's memories are counted and listed.
    Dead and top use the counters; the citation log parts (checks, files, sections,
    unknown ids, weeks, citations) only count replies made at or after ``since``.
    With ``cache_dir``, the citation-check tally is kept there: later runs check
    only the entries of replies recorded since, and check everything again when a
    cited file changed (seen by ``stat``).
    """
    check_rule(rule)
    folder = folder if folder is not None else MemoryFolder(memory_root)
    if folder.known_once is None:
        folder.known_once = inventory_knew(conn, codex_home)
    table = memories_of(conn, codex_home)
    limit_time = cutoff(as_of, max_unused_days)
    # The whole table's counters (kept by the writes), when they answer for this home.
    kept = memory_totals(conn) if table == "memories" else None
    if kept is not None:
        everything, archived, archived_cited = (kept["memories"], kept["archived"],
                                                kept["archived_cited"])
        outside = _outside_from_totals(conn, kept, limit_time)
        cited_memcite = kept["cited"] - archived_cited - outside.gone_cited
        cited_codex, codex_citations = kept["codex_cited"], kept["codex_citations"]
    else:
        # Counted through covering indexes, less the rows outside the rule's scope.
        outside = out_of_scope(conn, limit_time=limit_time, table=table)
        everything = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        archived, archived_cited = conn.execute(
            f"SELECT count(*), coalesce(sum(usage_count > 0), 0) FROM {table}"
            " WHERE archived_at IS NOT NULL").fetchone()
        # Cited in memcite's own log, and by Codex's counters, side by side.
        cited_memcite = conn.execute(f"SELECT count(*) FROM {table} WHERE usage_count > 0"
                                     ).fetchone()[0] - archived_cited - outside.gone_cited
        # Counted and summed in one walk of the index that covers them (``memories_codex_cited``).
        cited_codex, codex_citations = conn.execute(
            f"SELECT count(*), coalesce(sum(codex_usage_count), 0) FROM {table}"
            " WHERE archived_at IS NULL AND codex_usage_count > 0").fetchone()
    memories = everything - archived - outside.gone
    in_codex_table = everything - archived - outside.not_in_codex_table
    cited_codex -= outside.codex_cited
    cited = cited_memcite if rule == "memcite" else cited_codex
    asked = asked_to_forget(conn, codex_home)
    dead_count, dead = dead_from_store(conn, as_of=as_of, max_unused_days=max_unused_days,
                                       rule=rule, limit=limit, outside=outside,
                                       active=everything - archived, table=table,
                                       asked={item["thread_id"] for item in asked})
    # Most cited by whichever count saw more: after a sync memcite's log may be empty
    # while Codex's counters are not, and the other way round.
    if rule == "memcite":
        order, where = ("max(usage_count, coalesce(codex_usage_count, 0)) DESC,"
                        " max(coalesce(last_usage, 0), coalesce(codex_last_usage, 0)) DESC",
                        "(usage_count > 0 OR codex_usage_count > 0)")
    else:
        order, where = ("codex_usage_count DESC, codex_last_usage DESC", "codex_usage_count > 0")
    top = [top_entry(row, rule) for row in conn.execute(
        f"SELECT {USAGE_COLUMNS}, {LABEL_COLUMNS} FROM {table} WHERE {where}"
        f" AND archived_at IS NULL AND {RULE_SCOPE[rule]} ORDER BY {order}, thread_id LIMIT ?",
        (_limit(limit),))]

    # With several homes in the database, the log too keeps to the replies recorded
    # against this home's memory folder.
    # as the ledger stored it (a non-UTF-8 byte as its escape)
    log_root = storable_or_none(folder.root) if table != "memories" else None
    since_sql, since_args = since_filter(since, memory_root=log_root)
    log = _log_parts(conn, folder, since, limit, cache_dir, log_root)
    reply_where, reply_args = ["1"], []
    if since is not None:
        reply_where.append("replied_at >= ?")
        reply_args.append(since)
    if log_root is not None:
        reply_where.append("memory_root = ?")
        reply_args.append(log_root)
    replies_sql = " AND ".join(reply_where)
    replies_kept = reply_totals(conn) if since is None and log_root is None else None
    if since is None and log_root is None:
        # Every counted citation is in a memory's usage_count, or cites an unknown id.
        citations = (kept["citations"] if kept is not None else conn.execute(
            "SELECT coalesce(sum(usage_count), 0) FROM memories WHERE usage_count > 0"
        ).fetchone()[0]) + log["unknown_citations"]
    else:
        citations = conn.execute(
            "SELECT count(*) FROM cited_ids WHERE counted = 1" + since_sql, since_args
        ).fetchone()[0]
    if replies_kept is not None:
        replies, late = replies_kept
    else:
        replies = conn.execute(f"SELECT count(*) FROM replies WHERE {replies_sql}",
                               reply_args).fetchone()[0]
        late = conn.execute(
            f"SELECT count(*) FROM replies WHERE recorded_at - replied_at > ? AND {replies_sql}",
            (LATE_HASH_SECONDS, *reply_args)).fetchone()[0]
    scope_total = memories if rule == "memcite" else in_codex_table
    totals = {
        "memories": memories,
        "archived": archived,
        "gone_from_codex": outside.gone,
        "in_codex_table": in_codex_table,
        "cited": cited,
        "never_cited": scope_total - cited,
        "cited_memcite": cited_memcite,
        "never_cited_memcite": memories - cited_memcite,
        "cited_codex": cited_codex,
        "never_cited_codex": in_codex_table - cited_codex,
        "codex_citations": codex_citations,
        "asked_to_forget": len(asked),
        "dead": dead_count,
        "citations": citations,
        "replies": replies,
        "replies_hashed_late": late,
        "unknown_ids": log["unknown_count"],
        "not_uuid_ids": log["not_uuid_count"],
    }
    week_rows = _weeks(conn, since=since, until=as_of) if weeks else None
    report = StatsReport(as_of, rule, max_unused_days, since, "memcite", totals, dead,
                         dead_count, top, log["unknown_ids"], log["not_uuid_ids"],
                         log["checks"], log["files"], log["sections"], week_rows)
    report.codex_home = codex_home
    report.other_homes = other_homes(conn, codex_home) if codex_home else []
    report.log_scope = log_root
    report.asked_to_forget = asked[:limit] if limit else asked
    _add_entry_usage(report, conn, folder.root, codex_home, now=as_of, limit=limit,
                     log_root=log_root, folder=folder)
    if codex_home is not None:
        last_sync = conn.execute(
            "SELECT finished_at FROM syncs WHERE codex_home = ? AND finished_at IS NOT NULL"
            " ORDER BY id DESC LIMIT 1", (storable_or_none(codex_home),)).fetchone()
        report.last_sync = last_sync[0] if last_sync else None
    return report


def _entry_files(conn: sqlite3.Connection | None, memory_folder: str | None,
                 codex_home: str | None, *, now: int, log_root: str | None = None,
                 folder: MemoryFolder | None = None) -> list:
    """The entries of ``MEMORY.md`` (read through ``folder`` when given: opened once for the
    whole report) and of memcite's notes, with their usage."""
    from memcite.retention.entry_report import (
        is_v2_folder,
        memory_citations,
        memory_entries,
        note_entries,
    )

    citations = memory_citations(conn, log_root, v2=is_v2_folder(memory_folder)) \
        if conn is not None else []
    files = [f for f in [memory_entries(memory_folder, citations, now=now, folder=folder)]
             if f is not None]
    return files + note_entries(codex_home, now=now)


def entry_usage_part(conn: sqlite3.Connection | None, memory_folder: str | None,
                     codex_home: str | None, *, now: int, limit: int,
                     log_root: str | None = None, folder: MemoryFolder | None = None) -> dict:
    """The ``entries`` part: usage per entry of ``MEMORY.md`` and of memcite's notes."""
    from memcite.retention.entry_report import entries_report

    return entries_report(_entry_files(conn, memory_folder, codex_home, now=now,
                                       log_root=log_root, folder=folder), limit=limit)


def _add_entry_usage(report: StatsReport, conn: sqlite3.Connection | None,
                     memory_folder: str | None, codex_home: str | None, *, now: int, limit: int,
                     log_root: str | None = None, folder: MemoryFolder | None = None) -> None:
    """Set ``report.entries`` (``entry_usage_part``) and ``report.relevance``, from one read."""
    from memcite.retention.entry_report import entries_report, relevance_split

    files = _entry_files(conn, memory_folder, codex_home, now=now, log_root=log_root,
                         folder=folder)
    report.entries = entries_report(files, limit=limit)
    report.relevance = relevance_split(files, limit=limit)


def asked_to_forget(conn: sqlite3.Connection, codex_home: str | None) -> list[dict]:
    """Memories memcite asked Codex to forget that Codex still has (no sync saw them gone)."""
    codex_home = storable_or_none(codex_home)  # as sync stored it
    rows = conn.execute(
        "SELECT thread_id, way, requested_at, label, note_path, codex_db FROM forget_requests"
        " WHERE state = 'done' AND (? IS NULL OR codex_home = ?) ORDER BY requested_at, id",
        (codex_home, codex_home)).fetchall()
    return [{"thread_id": t, "way": way, "requested_at": at, "label": label,
             "note_path": note, "codex_db": db} for t, way, at, label, note, db in rows]


def _log_parts(conn: sqlite3.Connection, folder: MemoryFolder, since: int | None,
               limit: int, cache_dir: str | os.PathLike | None = None,
               memory_root: str | None = None) -> dict:
    """What the citation log says: unknown and non-UUID ids, checks, files, sections.

    Read in one snapshot of the database (a read transaction), so that a reply
    recorded meanwhile is either wholly in the report or wholly out of it.
    """
    began = not conn.in_transaction
    if began:
        conn.execute("BEGIN")
    try:
        tally = log_tally(conn, folder, since, limit, cache_dir, memory_root)
    finally:
        if began:
            conn.execute("COMMIT")
    tally.checks.files_read = folder.files_read
    tally.checks.skipped = {**tally.checks.skipped, **folder.skipped}  # MEMORY.md's sections too
    unknown = _ranked(tally.unknown, limit)
    not_uuid = _ranked(tally.not_uuid, limit)
    return {
        "unknown_count": len(tally.unknown), "unknown_citations": sum(tally.unknown.values()),
        "unknown_ids": [{"thread_id": t, "citations": n} for t, n in unknown],
        "not_uuid_count": len(tally.not_uuid),
        "not_uuid_ids": [{"rollout_id": r, "citations": n} for r, n in not_uuid],
        "checks": tally.checks, "files": [{"path": p, "citations": n}
                                          for p, n in _ranked(tally.per_file, limit)],
        "sections": tally.sections,
    }


def _ranked(counts: dict[str, int], limit: int) -> list[tuple[str, int]]:
    """Most first, then by name; ``limit`` 0 keeps all (the first ``limit`` picked, not all
    sorted: thousands of unknown ids for fifty shown)."""
    if limit and limit < len(counts):
        from heapq import nsmallest

        # The count of the last one shown; those above it ranked, then the first names of
        # those at it (most ids are cited once or twice: no key function per id).
        cut = sorted(counts.values(), reverse=True)[limit - 1]
        above = sorted(((name, count) for name, count in counts.items() if count > cut),
                       key=_most_first)
        tied = nsmallest(limit - len(above),
                         (name for name, count in counts.items() if count == cut))
        return above + [(name, cut) for name in tied]
    return sorted(counts.items(), key=_most_first)


def _most_first(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


def _weeks(conn: sqlite3.Connection, *, since: int | None, until: int) -> list[dict]:
    """Citations per week of the replies made from ``since`` to ``until`` (both included):
    every week from ``since``'s (else the first citation's) to ``until``'s."""
    rows = _week_counts(conn, -1 if since is None else since, until)
    first = None if since is None else _week_number(since)
    if first is None and not rows:
        return []
    return fill_weeks(rows, first=first, last=_week_number(until))


def _logged_weeks(conn: sqlite3.Connection, low: int, high: int) -> dict[int, int]:
    """Counted citations per week of the replies made from ``low`` to ``high``, from the log."""
    return dict(conn.execute(
        "SELECT (r.replied_at - ?) / ? AS week, count(*) FROM cited_ids c"
        " JOIN replies r ON r.id = c.reply_id WHERE c.counted = 1"
        " AND r.replied_at >= ? AND r.replied_at <= ? GROUP BY week",
        (_MONDAY_OFFSET, WEEK, low, high)))


def _week_counts(conn: sqlite3.Connection, low: int, high: int) -> list[tuple[int, int]]:
    """``(week number, citations)`` of the replies made from ``low`` to ``high``, the weeks
    with citations only. The weeks' counters (``citation_weeks``) answer for whole weeks;
    the part of the first and last week outside ``low..high`` is counted in the log and taken
    away (a range of ``replies_replied_at``: usually nothing after ``high``, at most a week
    before ``low``), as is everything before the first whole week after 1970 (counted in the
    log, where SQLite's division rounds toward zero)."""
    start = max(low, _MONDAY_OFFSET + WEEK)  # weeks from 1 on: whole weeks, in order
    first, last = _week_number(start), _week_number(high)
    counts = week_counters(conn, first, last) if first <= last else None
    if counts is None:
        return sorted(_logged_weeks(conn, low, high).items())
    counts = dict(counts)
    outside = [(first * WEEK + _MONDAY_OFFSET, start - 1),
               (high + 1, (last + 1) * WEEK + _MONDAY_OFFSET - 1)]
    for out_low, out_high in outside:
        if out_low <= out_high:
            for week, n in _logged_weeks(conn, out_low, out_high).items():
                counts[week] = counts.get(week, 0) - n
    if low < start:
        for week, n in _logged_weeks(conn, low, start - 1).items():
            counts[week] = counts.get(week, 0) + n
    return sorted((week, n) for week, n in counts.items() if n > 0)


def _week_number(seconds: int) -> int:
    return (seconds - _MONDAY_OFFSET) // WEEK


def fill_weeks(rows: Iterable[tuple[int, int]], *, first: int | None = None,
               last: int | None = None) -> list[dict]:
    """``(week number, citations)`` rows as a list of weeks from ``first`` (default: the first
    row's) to ``last`` (default: the last row's), gaps as 0; each week's Monday as an ISO
    8601 day and in epoch seconds."""
    counts = dict(rows)
    if not counts and (first is None or last is None):
        return []
    from memcite.retention.rules import format_day

    first = min(counts) if first is None else first
    last = max(counts) if last is None else last
    return [{"week_start": format_day(week * WEEK + _MONDAY_OFFSET),
             "week_start_epoch": week * WEEK + _MONDAY_OFFSET,
             "citations": counts.get(week, 0)}
            for week in range(first, last + 1)]


# --------------------------------------------------------------------------- straight from Codex


def collect_codex_stats(
    codex_db: str | os.PathLike,
    *,
    memory_root: str | os.PathLike | None,
    as_of: int,
    max_unused_days: int,
    rule: str = "memcite",
    limit: int = 20,
    codex_home: str | None = None,
) -> StatsReport:
    """The same report from Codex's ``memories_1.sqlite`` alone (opened read-only).

    There is no citation log (``citation_log`` False): checks, files, sections and
    unknown ids are empty rather than claiming that nothing was ever cited; the
    counts are Codex's own.
    """
    from memcite.ledger.codex_home import query_stage1_outputs

    check_rule(rule)
    limit_time = cutoff(as_of, max_unused_days)
    counts, dead_rows, top_rows = query_stage1_outputs(
        codex_db, lambda conn, table: _codex_parts(conn, table, rule, limit_time, limit))
    everything, cited_count, citations, dead_count = counts
    dead = []
    for row in dead_rows:  # described one by one: only the rows shown
        memory = _codex_usage(row)
        last = row[4]
        dead.append({"thread_id": memory.thread_id, "last_used": last,
                     "days_unused": days_unused(last, as_of),
                     "reason": dead_reason(memory, rule), "label": memory_label(row[3], None, None),
                     "usage_count": 0, "codex_usage_count": memory.codex_usage_count,
                     "asked_to_forget": False})
    top = []
    for row in top_rows:
        memory = _codex_usage(row)
        top.append({"thread_id": memory.thread_id, "label": memory_label(row[3], None, None),
                    "usage_count": 0, "codex_usage_count": memory.codex_usage_count,
                    "last_usage": None, "codex_last_usage": memory.codex_last_usage,
                    "last_used": last_used(memory, rule)})
    totals = {
        "memories": everything,
        "archived": 0,
        "gone_from_codex": 0,
        "in_codex_table": everything,
        "cited": cited_count,
        "never_cited": everything - cited_count,
        "cited_memcite": 0,
        "never_cited_memcite": everything,
        "cited_codex": cited_count,
        "never_cited_codex": everything - cited_count,
        "codex_citations": citations,
        "asked_to_forget": 0,
        "dead": dead_count,
        "citations": citations,
        "replies": 0,
        "unknown_ids": 0,
        "not_uuid_ids": 0,
    }
    folder = MemoryFolder(memory_root).root
    report = StatsReport(as_of, rule, max_unused_days, None, "codex", totals, dead, dead_count,
                         top, [], [], CitationChecks(memory_root=folder), [], [], None,
                         citation_log=False)
    _add_entry_usage(report, None, folder, codex_home, now=as_of, limit=limit)
    return report


# A row's last use under each rule (``memcite.retention.rules.last_used``) on Codex's table,
# where memcite's own counters are empty: memcite's gives 0 when nothing is known, Codex's NULL.
CODEX_LAST_USED = {
    "memcite": "max(coalesce(last_usage, 0), coalesce(source_updated_at, 0))",
    "codex": "coalesce(last_usage, source_updated_at)",
}
# ``usage_count`` as Python tests it (``if memory.codex_usage_count``): neither NULL nor 0.
_CODEX_CITED = "(usage_count IS NOT NULL AND usage_count != 0)"


def _codex_parts(conn: sqlite3.Connection, table: str, rule: str, limit_time: int,
                 limit: int) -> tuple[tuple[int, int, int, int], list, list]:
    """Counts (rows, cited, citations, dead), the stalest dead rows and the most cited rows of
    Codex's table, each counted or ranked in SQL (a top-N sort: memory stays flat)."""
    last = CODEX_LAST_USED[rule]
    counts = conn.execute(
        f"SELECT count(*), coalesce(sum({_CODEX_CITED}), 0), coalesce(sum(usage_count), 0),"
        f" coalesce(sum({last} < :cut), 0) FROM {table}", {"cut": limit_time}).fetchone()
    columns = "thread_id, source_updated_at, usage_count, rollout_slug"
    dead = conn.execute(
        f"SELECT {columns}, {last} AS used, last_usage FROM {table} WHERE used < :cut"
        " ORDER BY used, thread_id LIMIT :limit",
        {"cut": limit_time, "limit": _limit(limit)}).fetchall()
    top = conn.execute(
        f"SELECT {columns}, NULL, last_usage FROM {table} WHERE {_CODEX_CITED}"
        " ORDER BY usage_count DESC, coalesce(last_usage, 0) DESC, thread_id LIMIT ?",
        (_limit(limit),)).fetchall()
    return tuple(counts), dead, top


def _codex_usage(row) -> MemoryUsage:
    """A row of ``_codex_parts``'s lists as the rules see it."""
    return MemoryUsage(thread_id=row[0], source_updated_at=row[1], codex_usage_count=row[2],
                       codex_last_usage=row[5])
