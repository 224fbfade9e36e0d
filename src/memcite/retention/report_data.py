"""What ``memcite report`` shows beyond ``memcite stats --json``: the memories by age of last use,
where each listed memory's rollout summary (or ``MEMORY.md`` line) is, and memcite's notes per
scope (counts and dates only).

Computed for the report only, so ``stats`` never pays for it. The ages are counted from the
same counters and indexes as ``stats``' dead count (``memcite.retention.stats``), so that the
dead memories of the chart add up to ``totals.dead`` and all of them to the memories judged;
everything here is read-only, and files are read through ``MemoryRoot`` (inside their folder,
regular files, capped).
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat

from memcite.retention.rules import check_rule, cutoff
from memcite.untrusted import storable_or_none

# Edges of the age chart, in days unused; the report's --max-unused-days is added, so that
# each bar is wholly alive or wholly dead.
AGE_EDGES = (7, 14, 30, 60, 90, 180, 365)
MAX_NOTES = 1000  # note files read per scope folder
_CHUNK = 500  # ids per ``IN (...)`` query


# --------------------------------------------------------------------------- ages


def age_edges(max_unused_days: int) -> list[int]:
    """The chart's edges in days: ``AGE_EDGES`` and the dead limit, sorted."""
    return sorted(set(AGE_EDGES) | {max_unused_days})


def _buckets(edges: list[int], max_unused_days: int) -> list[dict]:
    """Empty buckets: the first holds ``up_to_days`` days unused at most, the last more than
    ``more_than_days``; ``dead``: every memory in it is dead (unused for more than the limit)."""
    limit_at = edges.index(max_unused_days)
    bounds = [(None, edges[0])] + list(zip(edges[:-1], edges[1:], strict=True)) + [(edges[-1], None)]
    return [{"more_than_days": low, "up_to_days": high, "dead": index > limit_at,
             "memories": 0, "asked": 0} for index, (low, high) in enumerate(bounds)]


def ages_part(conn: sqlite3.Connection, stats: dict, *, codex_home: str | None) -> dict:
    """The memories ``stats`` judged (``stats``: ``StatsReport.to_dict()``) by days since their
    last use under its rule, in buckets (``age_edges``): per bucket how many memories, and how
    many of them were asked to forget (Codex still has them). ``unknown``: memories with no
    last use at all (Codex's rule only: its NULL)."""
    from memcite.retention.stats import (
        RULE_LAST_USED,
        RULE_SCOPE,
        asked_to_forget,
        count_before,
        memories_of,
        out_of_scope,
    )

    rule, as_of, days = stats["rule"], stats["as_of"], stats["max_unused_days"]
    check_rule(rule)
    totals = stats["totals"]
    column = RULE_LAST_USED[rule]
    table = memories_of(conn, codex_home)
    judged = totals["memories"] if rule == "memcite" else totals["in_codex_table"]
    active = totals["memories"] + totals["gone_from_codex"]  # rows not archived
    # Rows outside a rule's scope exist only when some are gone or only in the folder.
    outside = bool(totals["gone_from_codex"]) or totals["memories"] != totals["in_codex_table"]
    edges = age_edges(days)

    def before(time: int) -> int:  # judged memories last used before ``time``, as stats counts
        count = count_before(conn, column, time, active, table, rule=rule)
        if outside:
            count -= out_of_scope(conn, limit_time=time, table=table).dead[rule]
        return count

    unknown = 0
    if rule == "codex":
        unknown = conn.execute(
            f"SELECT count(*) FROM {table} WHERE archived_at IS NULL AND {RULE_SCOPE[rule]}"
            f" AND {column} IS NULL").fetchone()[0]
    known = judged - unknown
    counts = [before(cutoff(as_of, edge)) for edge in edges]  # older than each edge
    buckets = _buckets(edges, days)
    buckets[0]["memories"] = known - counts[0]
    for index in range(1, len(edges)):
        buckets[index]["memories"] = counts[index - 1] - counts[index]
    buckets[-1]["memories"] = counts[-1]
    asked_ids = sorted({item["thread_id"] for item in asked_to_forget(conn, codex_home)})
    for last in _asked_last_used(conn, table, column, RULE_SCOPE[rule], asked_ids):
        buckets[_bucket_of(last, as_of, edges)]["asked"] += 1
    return {"rule": rule, "as_of": as_of, "max_unused_days": days, "edges": edges,
            "judged": judged, "unknown": unknown, "buckets": buckets}


def _bucket_of(last: int, as_of: int, edges: list[int]) -> int:
    for index, edge in enumerate(edges):
        if last >= cutoff(as_of, edge):
            return index
    return len(edges)


def _asked_last_used(conn: sqlite3.Connection, table: str, column: str, scope: str,
                     thread_ids: list[str]) -> list[int]:
    """The last use of each memory of ``thread_ids`` that the rule judges (active, in scope)."""
    found: list[int] = []
    for start in range(0, len(thread_ids), _CHUNK):
        chunk = thread_ids[start:start + _CHUNK]
        found += [row[0] for row in conn.execute(
            f"SELECT {column} FROM {table} WHERE thread_id IN ({', '.join('?' * len(chunk))})"
            f" AND archived_at IS NULL AND {scope} AND {column} IS NOT NULL", chunk)]
    return found


def codex_ages_part(codex_db: str | os.PathLike, stats: dict) -> dict:
    """``ages_part`` for a report read from Codex's ``memories_1.sqlite`` alone (one scan of
    its table, grouped in SQL; nobody was asked to forget anything)."""
    from memcite.ledger.codex_home import query_stage1_outputs
    from memcite.retention.stats import CODEX_LAST_USED

    rule, as_of, days = stats["rule"], stats["as_of"], stats["max_unused_days"]
    check_rule(rule)
    edges = age_edges(days)
    last = CODEX_LAST_USED[rule]
    cases = " ".join(f"WHEN used >= {int(cutoff(as_of, edge))} THEN {index}"
                     for index, edge in enumerate(edges))
    rows = query_stage1_outputs(codex_db, lambda conn, table: conn.execute(
        f"SELECT CASE WHEN used IS NULL THEN -1 {cases} ELSE {len(edges)} END AS bucket,"
        f" count(*) FROM (SELECT {last} AS used FROM {table}) GROUP BY bucket").fetchall())
    buckets = _buckets(edges, days)
    unknown = 0
    for bucket, count in rows:
        if bucket < 0:
            unknown = count
        else:
            buckets[bucket]["memories"] = count
    return {"rule": rule, "as_of": as_of, "max_unused_days": days, "edges": edges,
            "judged": stats["totals"]["memories"], "unknown": unknown, "buckets": buckets}


# --------------------------------------------------------------------------- links


_SUMMARY_MENTION = re.compile(r"rollout_summaries/([^\s:`)\]|]+)")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def _summary_files(conn: sqlite3.Connection | None, thread_ids: list[str]) -> dict[str, str]:
    """``thread id -> rollout summary file name`` from memcite's inventory."""
    if conn is None:
        return {}
    found: dict[str, str] = {}
    for start in range(0, len(thread_ids), _CHUNK):
        chunk = thread_ids[start:start + _CHUNK]
        for thread_id, name in conn.execute(
                "SELECT thread_id, rollout_summary_file FROM memories WHERE thread_id IN"
                f" ({', '.join('?' * len(chunk))}) AND rollout_summary_file IS NOT NULL", chunk):
            found.setdefault(thread_id, name)
    return found


def _memory_md_lines(memory_folder: str) -> tuple[dict[str, int], dict[str, int]]:
    """The first line of ``MEMORY.md`` naming each rollout summary file, and each thread id."""
    from memcite.ledger.memory_files import MAX_FILE_BYTES, MemoryRoot

    with MemoryRoot(memory_folder) as root:
        _outcome, read, _stamp = root.read("MEMORY.md", MAX_FILE_BYTES)
    if read is None or read.too_large:
        return {}, {}
    summaries: dict[str, int] = {}
    threads: dict[str, int] = {}
    for number, line in enumerate(read.data.decode("utf-8", errors="replace").split("\n"), 1):
        if "rollout_summaries/" in line:
            for name in _SUMMARY_MENTION.findall(line):
                summaries.setdefault(name, number)
        if "-" in line:
            for thread_id in _UUID.findall(line):
                threads.setdefault(thread_id.lower(), number)
    return summaries, threads


def _plain_name(name: str) -> bool:
    return bool(name) and "/" not in name and "\\" not in name and name not in (".", "..") \
        and "\x00" not in name


def _regular_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def links_part(conn: sqlite3.Connection | None, thread_ids: list[str],
               memory_folder: str | None) -> dict[str, dict]:
    """Where to read each memory of ``thread_ids``: ``{"kind": "summary", "path"}`` (its rollout
    summary, when that file is in the memory folder), else ``{"kind": "memory_md", "path",
    "line"}`` (the first line of ``MEMORY.md`` naming its summary file or its id); memories
    with neither are left out."""
    if not memory_folder or not thread_ids:
        return {}
    ids = sorted(set(thread_ids))
    names = _summary_files(conn, ids)
    links: dict[str, dict] = {}
    lines: tuple[dict[str, int], dict[str, int]] | None = None
    for thread_id in ids:
        name = names.get(thread_id)
        if name and _plain_name(name):
            path = os.path.join(memory_folder, "rollout_summaries", name)
            if _regular_file(path):
                links[thread_id] = {"kind": "summary", "path": path}
                continue
        if lines is None:
            lines = _memory_md_lines(memory_folder)
        by_summary, by_thread = lines
        line = (by_summary.get(name) if name else None) or by_thread.get(thread_id.lower())
        if line is not None:
            links[thread_id] = {"kind": "memory_md",
                                "path": os.path.join(memory_folder, "MEMORY.md"), "line": line}
    return links


def listed_thread_ids(stats: dict) -> list[str]:
    """The memories the report lists (dead, most cited, asked to forget)."""
    return [item["thread_id"] for key in ("dead", "top", "asked_to_forget")
            for item in stats.get(key) or ()]


# --------------------------------------------------------------------------- notes


# A global or session note's header line (``Scope: global``, ``Session: ID``), which the entry
# reader takes for a paragraph: it says whose note it is, it is no entry.
_OWNER_LINE = re.compile(r"(?:scope|session)[ \t]*:", re.IGNORECASE)


def notes_part(codex_home: str | None) -> list[dict]:
    """memcite's notes in ``codex_home`` (``memory/global``, ``memory/projects/<slug>``,
    ``memory/sessions/<id>``): per note its scope, name, entries, tiers, the dates of its
    oldest and newest entry (their ``Date:`` lines) and when the file was written. Never an
    entry's text: the report is of the whole home, and a note belongs to one project."""
    if codex_home is None:
        return []
    from memcite.ledger.memory_files import MAX_FILE_BYTES, MemoryRoot
    from memcite.retention.entries import TIERS, read_entries
    from memcite.retention.entry_report import NOTE_FILE, NOTES_FOLDER, entry_date

    folder = os.path.join(codex_home, NOTES_FOLDER)
    places: list[tuple[str, str, str]] = [("global", "global", f"global/{NOTE_FILE}")]
    for scope, sub in (("project", "projects"), ("session", "sessions")):
        try:
            names = sorted(os.listdir(os.path.join(folder, sub)))[:MAX_NOTES]
        except OSError:
            continue
        places += [(scope, name, f"{sub}/{name}/{NOTE_FILE}") for name in names
                   if _plain_name(name)]
    found = []
    with MemoryRoot(folder) as root:
        for scope, name, inside in places:
            outcome, read, stamp = root.read(inside, MAX_FILE_BYTES)
            if read is None:
                if outcome != "missing":
                    found.append(_note(scope, name, folder, inside, problem=outcome))
                continue
            modified = stamp[3] // 1_000_000_000 if stamp else None
            if read.too_large:
                found.append(_note(scope, name, folder, inside, modified=modified,
                                   problem=f"larger than {MAX_FILE_BYTES} bytes"))
                continue
            entries = [entry for entry in read_entries(read.data.decode("utf-8",
                                                                         errors="replace"))
                       if not _OWNER_LINE.match(entry.text)]
            tiers = {tier: 0 for tier in TIERS} | {"none": 0}
            dates = []
            for entry in entries:
                tiers[entry.tier or "none"] += 1
                day = entry_date(entry)
                if day is not None:
                    dates.append(day)
            found.append(_note(scope, name, folder, inside, entries=len(entries), tiers=tiers,
                               oldest=min(dates, default=None), newest=max(dates, default=None),
                               modified=modified))
    return found


def _note(scope: str, name: str, folder: str, inside: str, *, entries: int = 0,
          tiers: dict | None = None, oldest: int | None = None, newest: int | None = None,
          modified: int | None = None, problem: str | None = None) -> dict:
    return {"scope": scope, "name": storable_or_none(name) or name,
            "path": os.path.join(folder, inside), "entries": entries, "tiers": tiers or {},
            "oldest_entry": oldest, "newest_entry": newest, "modified": modified,
            "problem": problem}


# --------------------------------------------------------------------------- all of it


def report_extras(conn: sqlite3.Connection | None, stats: dict, *, codex_home: str | None,
                  memory_folder: str | None, codex_db: str | None = None) -> dict:
    """Everything the report adds to ``stats`` (``StatsReport.to_dict()``): ``ages``,
    ``links``, ``notes``. ``conn``: memcite's ledger, else None (a report from Codex's
    ``codex_db`` alone)."""
    if conn is not None:
        ages = ages_part(conn, stats, codex_home=codex_home)
    elif codex_db is not None:
        ages = codex_ages_part(codex_db, stats)
    else:
        ages = None
    return {"ages": ages,
            "links": links_part(conn, listed_thread_ids(stats), memory_folder),
            "notes": notes_part(codex_home)}


__all__ = ["AGE_EDGES", "age_edges", "ages_part", "codex_ages_part", "links_part",
           "listed_thread_ids", "notes_part", "report_extras"]
