"""The usage report behind ``memcite stats``: dead memories, most cited, unknown ids,
citation checks against the memory folder, where citations land, citations per week.

Everything is read with plain ``sqlite3`` through indexes that cover the queries
(see ``memcite.ledger.store``), so the report stays fast on large ledgers; the one scan
(``out_of_scope``) counts the memories a rule leaves out. Memories gone from
Codex (marked missing by sync) are counted apart (``gone_from_codex``), never as
memories, dead or alive; Codex's rule only judges the rows of Codex's table. Citation
checks group the logged entries by (path, range, hash) and read each memory file
at most once; nothing outside the memory root is ever opened (``..``, absolute
paths and symlinks leading out are reported, not followed).
"""

from __future__ import annotations

import bisect
import os
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from memcite.ledger.memory_files import byte_lines, lines_sha256, locate
from memcite.retention.rules import (
    DAY,
    MemoryUsage,
    check_rule,
    cutoff,
    days_unused,
    dead_memories,
    dead_reason,
    last_used,
)
from memcite.rust_text import RUST_WHITESPACE

WEEK = 7 * DAY
_MONDAY_OFFSET = 4 * DAY  # 1970-01-01 was a Thursday
MEMORY_INDEX = "MEMORY.md"

# Outcomes of a citation check, from worst to best.
CHECK_OUTCOMES = ("outside_root", "missing", "out_of_range", "blank", "changed", "unverified",
                  "ok")
_OUTCOME_TEXT = {
    "outside_root": "points outside the memory folder (not read)",
    "missing": "no such file in the memory folder",
    "out_of_range": "line range out of bounds",
    "blank": "the cited lines are blank",
    "changed": "the lines changed since they were cited",
    "unverified": "no hash was recorded when cited",
    "ok": "unchanged",
}
_HEADING = re.compile(rb"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(rb"^[ \t]{0,3}(```|~~~)")


# --------------------------------------------------------------------------- the memory folder


class MemoryFolder:
    """The files of one memory folder, each read at most once; ``files_read`` counts opens."""

    def __init__(self, root: str | os.PathLike | None) -> None:
        self.root = None
        if root is not None and os.path.isdir(root):
            self.root = os.path.realpath(os.fspath(root))
        self.files_read = 0
        self._resolved: dict[str, tuple[str, str | None]] = {}
        self._lines: dict[str, list[bytes] | None] = {}
        self.ranges: dict[tuple[str, int, int], tuple[str | None, str | None]] = {}

    def resolve(self, path: str) -> tuple[str, str | None]:
        """``(outcome, real path)``: ``ok`` with the file's real path, or ``outside_root`` /
        ``missing`` with None. Only the file system's names are looked at, never contents."""
        cached = self._resolved.get(path)
        if cached is None:
            cached = self._resolved[path] = self._resolve(path)
        return cached

    def _resolve(self, path: str) -> tuple[str, str | None]:
        if self.root is None:
            return "missing", None
        return locate(self.root, path)

    def lines(self, real: str) -> list[bytes] | None:
        """The lines of a file inside the root (Rust's ``lines``), read once and kept."""
        if real in self._lines:
            return self._lines[real]
        lines = None
        try:
            with open(real, "rb") as handle:
                self.files_read += 1
                lines = byte_lines(handle.read())
        except OSError:
            lines = None
        self._lines[real] = lines
        return lines


@dataclass(frozen=True, slots=True)
class CheckedEntry:
    """One distinct cited entry (path, range, hash at citation time) and what it is now."""

    path: str
    line_start: int
    line_end: int
    outcome: str
    citations: int

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "outcome": self.outcome,
            "problem": _OUTCOME_TEXT[self.outcome],
            "citations": self.citations,
        }


def check_entry(folder: MemoryFolder, path: str, line_start: int, line_end: int,
                recorded_sha256: str | None) -> str:
    """The outcome of checking one cited entry against the folder as it is now."""
    outcome, real = folder.resolve(path)
    if real is None:
        return outcome
    key = (real, line_start, line_end)
    state = folder.ranges.get(key)
    if state is None:
        state = folder.ranges[key] = _range_state(folder.lines(real), line_start, line_end)
    outcome, current = state
    if outcome is not None:
        return outcome
    if recorded_sha256 is None:
        return "unverified"
    return "ok" if current == recorded_sha256 else "changed"


_ASCII_SPACE = b" \t\n\x0b\x0c\r"


def _is_blank(line: bytes) -> bool:
    stripped = line.strip(_ASCII_SPACE)
    if not stripped:
        return True
    if stripped.isascii():
        return False
    return not stripped.decode("utf-8", "replace").strip(RUST_WHITESPACE)


def _range_state(lines: list[bytes] | None, line_start: int, line_end: int
                 ) -> tuple[str | None, str | None]:
    """``(outcome, None)`` when the range is unusable, else ``(None, its hash now)``."""
    if lines is None:
        return "missing", None
    if not 1 <= line_start <= line_end <= len(lines):
        return "out_of_range", None
    if all(_is_blank(line) for line in lines[line_start - 1 : line_end]):
        return "blank", None
    return None, lines_sha256(lines, line_start, line_end)  # as recorded at citation time


@dataclass
class CitationChecks:
    """Counts per outcome (distinct entries and citations) and the worst offenders."""

    entries: int = 0
    citations: int = 0
    outcomes: dict[str, dict[str, int]] = field(
        default_factory=lambda: {o: {"entries": 0, "citations": 0} for o in CHECK_OUTCOMES})
    worst: list[CheckedEntry] = field(default_factory=list)
    files_read: int = 0
    memory_root: str | None = None

    @property
    def broken(self) -> int:
        """Citations whose entry is not ``ok`` or ``unverified``."""
        return sum(v["citations"] for k, v in self.outcomes.items()
                   if k not in ("ok", "unverified"))

    def to_dict(self) -> dict:
        return {
            "memory_root": self.memory_root,
            "entries": self.entries,
            "citations": self.citations,
            "broken": self.broken,
            "outcomes": {k: dict(v) for k, v in self.outcomes.items()},
            "worst": [entry.to_dict() for entry in self.worst],
            "files_read": self.files_read,
        }


def check_citations(rows: Iterable[tuple[str, int, int, str | None, int]],
                    folder: MemoryFolder, *, limit: int | None = 20) -> CitationChecks:
    """Check ``(path, line_start, line_end, lines_sha256, citations)`` rows against ``folder``.

    Counts are per distinct entry (hash included); the worst offenders are listed per
    place and outcome (entries cited with different hashes that fail alike are one row).
    """
    checks = CitationChecks(memory_root=folder.root)
    bad: dict[tuple[str, int, int, str], int] = {}
    for path, line_start, line_end, digest, count in rows:
        outcome = check_entry(folder, path, line_start, line_end, digest)
        checks.entries += 1
        checks.citations += count
        checks.outcomes[outcome]["entries"] += 1
        checks.outcomes[outcome]["citations"] += count
        if outcome not in ("ok", "unverified"):
            key = (path, line_start, line_end, outcome)
            bad[key] = bad.get(key, 0) + count
    checks.worst = _rank_worst([CheckedEntry(*key, count) for key, count in bad.items()], limit)
    checks.files_read = folder.files_read
    return checks


# --------------------------------------------------------------------------- MEMORY.md sections


@dataclass
class Section:
    """One markdown heading of ``MEMORY.md`` and the citations landing in it."""

    title: str
    path: str  # parent headings and this one, joined by " > "
    level: int
    line: int
    end_line: int
    citations: int = 0

    def to_dict(self) -> dict:
        return {"title": self.title, "path": self.path, "level": self.level, "line": self.line,
                "end_line": self.end_line, "citations": self.citations}


def markdown_sections(lines: list[bytes]) -> list[Section]:
    """The ATX headings of a markdown file (fenced code skipped), each running to the next."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(lines, start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match is None:
            continue
        level = len(match.group(1))
        title = match.group(2).decode("utf-8", "replace")
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        sections.append(Section(title, " > ".join(t for _, t in stack), level, number, number))
    for index, section in enumerate(sections):
        section.end_line = sections[index + 1].line - 1 if index + 1 < len(sections) else len(lines)
    return sections


def count_section_citations(sections: list[Section],
                            ranges: Iterable[tuple[int, int, int]]) -> None:
    """Add ``citations`` for each ``(line_start, line_end, count)`` to every section it overlaps
    (a heading's section ends where the next heading starts)."""
    starts = [section.line for section in sections]
    for line_start, line_end, count in ranges:
        low, high = min(line_start, line_end), max(line_start, line_end)
        first = max(0, bisect.bisect_right(starts, low) - 1)
        for section in sections[first:]:
            if section.line > high:
                break
            if section.end_line >= low:
                section.citations += count


# --------------------------------------------------------------------------- the report


@dataclass
class StatsReport:
    """Everything ``memcite stats`` prints."""

    as_of: int
    rule: str
    max_unused_days: int
    since: int | None
    source: str  # memcite | codex
    totals: dict[str, int]
    dead: list[dict]
    dead_count: int
    top: list[dict]
    unknown_ids: list[dict]
    not_uuid_ids: list[dict]
    citation_checks: CitationChecks
    files: list[dict]
    sections: list[Section]
    weeks: list[dict] | None = None
    citation_log: bool = True  # False: straight from Codex's database, nothing recorded

    def to_dict(self) -> dict:
        result = {
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
        }
        if self.weeks is not None:
            result["weeks"] = self.weeks
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


@dataclass(frozen=True, slots=True)
class OutOfScope:
    """Active (not archived) memories that some rule leaves out, and what they would count."""

    limit_time: int  # the cutoff the ``dead`` counts are for
    gone: int  # gone from Codex (marked missing by sync): no rule judges them
    folder_only: int  # still in the memory folder, not in Codex's table: only memcite's rule
    gone_cited: int  # of ``gone``: cited in memcite's log
    dead: dict[str, int]  # per rule: rows outside its scope that its column calls dead
    codex_cited: int  # rows outside Codex's scope with a Codex usage count

    @property
    def not_in_codex_table(self) -> int:
        return self.gone + self.folder_only


def out_of_scope(conn: sqlite3.Connection, *, limit_time: int) -> OutOfScope:
    """Count the active memories outside the rules' scopes (one scan of ``memories``)."""
    row = conn.execute(
        "SELECT coalesce(sum(missing_since IS NOT NULL), 0), coalesce(sum(missing_since IS NULL),"
        " 0), coalesce(sum(missing_since IS NOT NULL AND usage_count > 0), 0),"
        " coalesce(sum(missing_since IS NOT NULL AND last_used < :cut), 0),"
        " coalesce(sum(codex_last_used < :cut), 0), coalesce(sum(codex_usage_count > 0), 0)"
        f" FROM memories WHERE {_OUT_OF_SCOPE}", {"cut": limit_time}).fetchone()
    gone, folder_only, gone_cited, gone_dead, outside_codex_dead, codex_cited = row
    return OutOfScope(limit_time, gone, folder_only, gone_cited,
                      {"memcite": gone_dead, "codex": outside_codex_dead}, codex_cited)


def dead_from_store(conn: sqlite3.Connection, *, as_of: int, max_unused_days: int, rule: str,
                    limit: int, outside: OutOfScope | None = None,
                    active: int | None = None) -> tuple[int, list[dict]]:
    """``(how many, the stalest ones)`` among the active memories ``rule`` judges.

    Counted through the covering index, less the rows outside the rule's scope
    (``outside``, counted here when not given for this cutoff). Given ``active``
    (rows not archived), the smaller side of the cutoff is the one counted.
    """
    check_rule(rule)
    column = RULE_LAST_USED[rule]
    limit_time = cutoff(as_of, max_unused_days)
    if outside is None or outside.limit_time != limit_time:
        outside = out_of_scope(conn, limit_time=limit_time)
    count = _count_before(conn, column, limit_time, active) - outside.dead[rule]
    rows = conn.execute(
        f"SELECT {USAGE_COLUMNS}, {column} FROM memories WHERE archived_at IS NULL"
        f" AND {RULE_SCOPE[rule]} AND {column} < ? ORDER BY {column}, thread_id LIMIT ?",
        (limit_time, _limit(limit))).fetchall()
    dead = []
    for row in rows:
        memory = usage_from_row(row)
        last = row[6] or 0
        dead.append({"thread_id": memory.thread_id, "last_used": last,
                     "days_unused": days_unused(last, as_of),
                     "reason": dead_reason(memory, rule)})
    return count, dead


def _count_before(conn: sqlite3.Connection, column: str, limit_time: int,
                  active: int | None) -> int:
    """Active rows with ``column < limit_time``. An index range is counted row by row, so
    when most rows are stale, count the recent ones (at most half) and subtract."""
    where = f"FROM memories WHERE archived_at IS NULL AND {column}"
    if active is not None:
        half = active // 2 + 1
        recent = conn.execute(f"SELECT count(*) FROM (SELECT 1 {where} >= ? LIMIT ?)",
                              (limit_time, half)).fetchone()[0]
        if recent < half:
            unknown = conn.execute(f"SELECT count(*) {where} IS NULL").fetchone()[0]
            return active - recent - unknown
    return conn.execute(f"SELECT count(*) {where} < ?", (limit_time,)).fetchone()[0]


def _top_entry(row, rule: str) -> dict:
    memory = usage_from_row(row)
    return {"thread_id": memory.thread_id, "usage_count": memory.usage_count,
            "codex_usage_count": memory.codex_usage_count, "last_usage": memory.last_usage,
            "codex_last_usage": memory.codex_last_usage, "last_used": last_used(memory, rule)}


def _since_filter(since: int | None, alias: str = "") -> tuple[str, tuple]:
    if since is None:
        return "", ()
    return (f" AND {alias}reply_id IN (SELECT id FROM replies WHERE replied_at >= ?)", (since,))


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
) -> StatsReport:
    """The report from memcite's database; ``limit`` 0 lists everything.

    Dead and top use the counters; the citation log parts (checks, files, sections,
    unknown ids, weeks, citations) only count replies made at or after ``since``.
    With ``cache_dir``, the citation-check tally is kept there: later runs check
    only the entries of replies recorded since, and check everything again when a
    cited file changed (seen by ``stat``).
    """
    check_rule(rule)
    folder = folder if folder is not None else MemoryFolder(memory_root)
    # Counted through covering indexes, less the rows outside the rule's scope.
    outside = out_of_scope(conn, limit_time=cutoff(as_of, max_unused_days))
    everything = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    archived, archived_cited = conn.execute(
        "SELECT count(*), coalesce(sum(usage_count > 0), 0) FROM memories"
        " WHERE archived_at IS NOT NULL").fetchone()
    memories = everything - archived - outside.gone
    in_codex_table = everything - archived - outside.not_in_codex_table
    if rule == "memcite":  # cited in memcite's own log
        cited = conn.execute("SELECT count(*) FROM memories WHERE usage_count > 0"
                             ).fetchone()[0] - archived_cited - outside.gone_cited
    else:
        cited = conn.execute("SELECT count(*) FROM memories WHERE archived_at IS NULL"
                             " AND codex_usage_count > 0").fetchone()[0] - outside.codex_cited
    dead_count, dead = dead_from_store(conn, as_of=as_of, max_unused_days=max_unused_days,
                                       rule=rule, limit=limit, outside=outside,
                                       active=everything - archived)
    order = ("usage_count DESC, last_usage DESC" if rule == "memcite"
             else "codex_usage_count DESC, codex_last_usage DESC")
    where = "usage_count > 0" if rule == "memcite" else "codex_usage_count > 0"
    top = [_top_entry(row, rule) for row in conn.execute(
        f"SELECT {USAGE_COLUMNS} FROM memories WHERE {where} AND archived_at IS NULL"
        f" AND {RULE_SCOPE[rule]} ORDER BY {order}, thread_id LIMIT ?", (_limit(limit),))]

    since_sql, since_args = _since_filter(since)
    log = _log_parts(conn, folder, since, limit, cache_dir)
    if since is None:
        # Every counted citation is in a memory's usage_count, or cites an unknown id.
        citations = conn.execute(
            "SELECT coalesce(sum(usage_count), 0) FROM memories WHERE usage_count > 0"
        ).fetchone()[0] + log["unknown_citations"]
        replies = conn.execute("SELECT count(*) FROM replies").fetchone()[0]
    else:
        citations = conn.execute(
            "SELECT count(*) FROM cited_ids WHERE counted = 1" + since_sql, since_args
        ).fetchone()[0]
        replies = conn.execute(
            "SELECT count(*) FROM replies WHERE replied_at >= ?", (since,)).fetchone()[0]
    totals = {
        "memories": memories,
        "archived": archived,
        "gone_from_codex": outside.gone,
        "in_codex_table": in_codex_table,
        "cited": cited,
        "never_cited": (memories if rule == "memcite" else in_codex_table) - cited,
        "dead": dead_count,
        "citations": citations,
        "replies": replies,
        "unknown_ids": log["unknown_count"],
        "not_uuid_ids": log["not_uuid_count"],
    }
    week_rows = _weeks(conn, since=since, until=as_of) if weeks else None
    return StatsReport(as_of, rule, max_unused_days, since, "memcite", totals, dead, dead_count,
                       top, log["unknown_ids"], log["not_uuid_ids"], log["checks"], log["files"],
                       log["sections"], week_rows)


def _log_parts(conn: sqlite3.Connection, folder: MemoryFolder, since: int | None,
               limit: int, cache_dir: str | os.PathLike | None = None) -> dict:
    """What the citation log says: unknown and non-UUID ids, checks, files, sections.

    Read in one snapshot of the database (a read transaction), so that a reply
    recorded meanwhile is either wholly in the report or wholly out of it.
    """
    began = not conn.in_transaction
    if began:
        conn.execute("BEGIN")
    try:
        tally = _log_tally(conn, folder, since, limit, cache_dir)
    finally:
        if began:
            conn.execute("COMMIT")
    tally.checks.files_read = folder.files_read
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
    """Most first, then by name; ``limit`` 0 keeps all."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:limit] if limit else ranked


# --------------------------------------------------------------------------- the entry tally


@dataclass
class LogTally:
    """What the citation log adds up to for the replies up to ``last_reply`` (the log is
    append-only, so later replies can be added): citation checks, citations per file and
    per MEMORY.md section, unknown ids (known ones taken out as of sync ``last_sync``)
    and ids that are not UUIDs."""

    checks: CitationChecks
    per_file: dict[str, int]
    sections: list[Section]
    unknown: dict[str, int]
    not_uuid: dict[str, int]
    last_reply: int
    last_sync: int


def _last_reply(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT coalesce(max(id), 0) FROM replies").fetchone()[0]


def _last_sync(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT coalesce(max(id), 0) FROM syncs").fetchone()[0]


def _id_counts(conn: sqlite3.Connection, since: int | None, after_reply: int,
               up_to: int) -> tuple[dict[str, int], dict[str, int]]:
    """Counted ids that were no known memory when recorded (and still are not), and ids
    that are not UUIDs, in replies ``after_reply < id <= up_to`` (partial indexes)."""
    since_sql, since_args = _since_filter(since, "c.")
    window = (after_reply, up_to, *since_args)
    # From the start, the partial indexes hold exactly these rows; for a few new replies,
    # the primary key's range is far smaller ("+" keeps SQLite off the partial indexes).
    flag = "+c." if after_reply else "c."
    unknown = dict(conn.execute(
        f"SELECT c.thread_id, count(*) FROM cited_ids c WHERE {flag}known = 0 AND c.counted = 1"
        " AND c.reply_id > ? AND c.reply_id <= ?" + since_sql +
        " AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.thread_id = c.thread_id)"
        " GROUP BY c.thread_id", window))
    not_uuid = dict(conn.execute(
        f"SELECT c.rollout_id, count(*) FROM cited_ids c WHERE {flag}thread_id IS NULL"
        " AND c.reply_id > ? AND c.reply_id <= ?" + since_sql + " GROUP BY c.rollout_id",
        window))
    return unknown, not_uuid


def _add_counts(into: dict[str, int], more: dict[str, int]) -> None:
    for key, count in more.items():
        into[key] = into.get(key, 0) + count


def _still_unknown(conn: sqlite3.Connection, unknown: dict[str, int]) -> dict[str, int]:
    """``unknown`` without the ids a later sync made known memories."""
    known = set()
    ids = list(unknown)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        known.update(row[0] for row in conn.execute(
            "SELECT thread_id FROM memories WHERE thread_id IN"
            f" ({', '.join('?' * len(chunk))})", chunk))
    return {thread_id: n for thread_id, n in unknown.items() if thread_id not in known}


def _entry_rows(conn: sqlite3.Connection, since: int | None, after_reply: int, up_to: int):
    """Distinct cited entries of replies ``after_reply < id <= up_to``, with citation counts."""
    since_sql, since_args = _since_filter(since)
    return conn.execute(
        "SELECT path, line_start, line_end, lines_sha256, count(*) FROM cited_entries"
        " WHERE reply_id > ? AND reply_id <= ?" + since_sql +
        " GROUP BY path, line_start, line_end, lines_sha256",
        (after_reply, up_to, *since_args)).fetchall()


def _full_tally(conn: sqlite3.Connection, folder: MemoryFolder, since: int | None,
                limit: int) -> LogTally:
    last_reply, last_sync = _last_reply(conn), _last_sync(conn)
    rows = _entry_rows(conn, since, 0, last_reply)
    checks = check_citations(rows, folder, limit=limit)
    per_file: dict[str, int] = {}
    sections = _memory_index_sections(folder)
    _add_to_places(rows, folder, per_file, sections)
    unknown, not_uuid = _id_counts(conn, since, 0, last_reply)
    return LogTally(checks, per_file, sections, unknown, not_uuid, last_reply, last_sync)


def _bring_up_to_date(conn: sqlite3.Connection, folder: MemoryFolder, tally: LogTally,
                      since: int | None, limit: int) -> bool:
    """Add the replies recorded after ``tally.last_reply`` and take out the ids synced since
    ``tally.last_sync``; False when nothing changed."""
    last_sync = _last_sync(conn)
    synced = last_sync != tally.last_sync
    if synced:
        tally.unknown = _still_unknown(conn, tally.unknown)
        tally.last_sync = last_sync
    return _add_new_replies(conn, folder, tally, since, limit) or synced


def _add_new_replies(conn: sqlite3.Connection, folder: MemoryFolder, tally: LogTally,
                     since: int | None, limit: int) -> bool:
    """Add the replies recorded after ``tally.last_reply``; False when there were none."""
    last_reply = _last_reply(conn)
    if last_reply == tally.last_reply:
        return False
    unknown, not_uuid = _id_counts(conn, since, tally.last_reply, last_reply)
    _add_counts(tally.unknown, unknown)
    _add_counts(tally.not_uuid, not_uuid)
    rows = _entry_rows(conn, since, tally.last_reply, last_reply)
    since_sql, since_args = _since_filter(since)
    checks = tally.checks
    worst = {(e.path, e.line_start, e.line_end, e.outcome): e for e in checks.worst}
    for path, line_start, line_end, digest, count in rows:
        # Every hash this place was cited with so far, new citations included (through the
        # cited_entries_check index): tells whether the entry is new, and the place's total.
        per_digest = conn.execute(
            "SELECT lines_sha256, count(*) FROM cited_entries WHERE path = ? AND line_start = ?"
            " AND line_end = ? AND reply_id <= ?" + since_sql + " GROUP BY lines_sha256",
            (path, line_start, line_end, last_reply, *since_args)).fetchall()
        outcome = check_entry(folder, path, line_start, line_end, digest)
        is_new = dict(per_digest).get(digest) == count
        checks.entries += is_new
        checks.citations += count
        checks.outcomes[outcome]["entries"] += is_new
        checks.outcomes[outcome]["citations"] += count
        if outcome not in ("ok", "unverified"):
            place_total = sum(n for other, n in per_digest
                              if check_entry(folder, path, line_start, line_end, other) == outcome)
            worst[(path, line_start, line_end, outcome)] = CheckedEntry(
                path, line_start, line_end, outcome, place_total)
    checks.worst = _rank_worst(list(worst.values()), limit)
    _add_to_places(rows, folder, tally.per_file, tally.sections)
    tally.last_reply = last_reply
    return True


def _rank_worst(bad: list[CheckedEntry], limit: int | None) -> list[CheckedEntry]:
    rank = {outcome: index for index, outcome in enumerate(CHECK_OUTCOMES)}
    bad.sort(key=lambda e: (-e.citations, rank[e.outcome], e.path, e.line_start, e.line_end))
    return bad if not limit else bad[:limit]


def _memory_index_sections(folder: MemoryFolder) -> list[Section]:
    """The sections of MEMORY.md as it is now (none when it is missing)."""
    if folder.root is None:
        return []
    real = folder.resolve(MEMORY_INDEX)[1]
    lines = folder.lines(real) if real is not None else None
    return markdown_sections(lines) if lines is not None else []


def _add_to_places(entry_rows, folder: MemoryFolder, per_file: dict[str, int],
                   sections: list[Section]) -> None:
    """Add the rows' citations to the files they name and to the MEMORY.md sections."""
    index_real = folder.resolve(MEMORY_INDEX)[1] if folder.root is not None else None
    index_ranges: list[tuple[int, int, int]] = []
    for path, line_start, line_end, _digest, count in entry_rows:
        real = folder.resolve(path)[1]
        key = os.path.relpath(real, folder.root) if real is not None else path
        per_file[key] = per_file.get(key, 0) + count
        if index_real is not None and real == index_real:
            index_ranges.append((line_start, line_end, count))
    count_section_citations(sections, index_ranges)


# --------------------------------------------------------------------------- the tally's cache

_CACHE_VERSION = 3


def _path_stamp(folder: MemoryFolder, path: str) -> list | None:
    """What tells that a cited path now resolves or reads differently (``lstat``/``stat`` only)."""
    outcome, real = folder.resolve(path)
    if outcome == "outside_root" and real is None and folder.root is not None:
        parts = path.replace("\\", "/").split("/")
        if not path or os.path.isabs(path) or path.startswith(("/", "\\")) or ".." in parts \
                or (len(parts[0]) >= 2 and parts[0][1] == ":"):
            return None  # outside by its spelling alone: nothing to look at
    stamps = []
    for name, follow in ((os.path.join(folder.root or "", path), False), (real, True)):
        if name is None:
            stamps.append(None)
            continue
        try:
            st = os.stat(name) if follow else os.lstat(name)
            stamps.append([st.st_mtime_ns, st.st_size, st.st_ino])
        except OSError:
            stamps.append(None)
    return stamps


def _log_tally(conn: sqlite3.Connection, folder: MemoryFolder, since: int | None,
               limit: int, cache_dir: str | os.PathLike | None) -> LogTally:
    """The log's tally, from the cache when no cited file changed, brought up to date.

    Checking a million citations takes a while; after the first run only the
    replies recorded since are checked. Any change to a cited file (``stat``)
    means a full check.
    """
    if cache_dir is None or folder.root is None:
        return _full_tally(conn, folder, since, limit)
    import json
    import zlib

    db_file = next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"),
                   "")
    key = json.dumps([_CACHE_VERSION, db_file, folder.root, since, limit])
    path = os.path.join(os.fspath(cache_dir), f"stats-{zlib.crc32(key.encode()):08x}.json")
    tally, stamps = _cache_read(path, folder, key)
    if tally is None:
        tally = _full_tally(conn, folder, since, limit)
    elif not _bring_up_to_date(conn, folder, tally, since, limit):
        return tally
    for name in (*folder._resolved, MEMORY_INDEX):  # stamps already checked are kept
        if name not in stamps:
            stamps[name] = _path_stamp(folder, name)
    _cache_write(path, {"key": key, "stamps": stamps, "last_reply": tally.last_reply,
                        "last_sync": tally.last_sync, "checks": tally.checks.to_dict(),
                        "per_file": tally.per_file, "unknown": tally.unknown,
                        "not_uuid": tally.not_uuid,
                        "sections": [section.to_dict() for section in tally.sections]})
    return tally


def _cache_read(path: str, folder: MemoryFolder, key: str
                ) -> tuple[LogTally | None, dict[str, list | None]]:
    """The cached tally and its file stamps, or ``(None, {})`` when any cited file changed."""
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        if data["key"] != key or any(_path_stamp(folder, name) != stamp
                                     for name, stamp in data["stamps"].items()):
            return None, {}
        checks = data["checks"]
        tally = LogTally(
            checks=CitationChecks(
                entries=checks["entries"], citations=checks["citations"],
                outcomes=checks["outcomes"], files_read=0, memory_root=checks["memory_root"],
                worst=[CheckedEntry(e["path"], e["line_start"], e["line_end"], e["outcome"],
                                    e["citations"]) for e in checks["worst"]]),
            per_file=data["per_file"],
            sections=[Section(s["title"], s["path"], s["level"], s["line"], s["end_line"],
                              s["citations"]) for s in data["sections"]],
            unknown=data["unknown"], not_uuid=data["not_uuid"],
            last_reply=data["last_reply"], last_sync=data["last_sync"])
        return tally, data["stamps"]
    except (OSError, ValueError, KeyError, TypeError):
        return None, {}


def _cache_write(path: str, data: dict) -> None:
    import json

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data))  # dumps uses the C encoder; dump does not
        os.replace(temporary, path)
    except OSError:
        pass  # a cache that cannot be written only costs time


def _weeks(conn: sqlite3.Connection, *, since: int | None, until: int) -> list[dict]:
    """Citations per week of the replies made from ``since`` to ``until`` (both included):
    every week from ``since``'s (else the first citation's) to ``until``'s."""
    rows = conn.execute(
        "SELECT (r.replied_at - ?) / ? AS week, count(*) FROM cited_ids c"
        " JOIN replies r ON r.id = c.reply_id WHERE c.counted = 1"
        " AND r.replied_at >= ? AND r.replied_at <= ? GROUP BY week ORDER BY week",
        (_MONDAY_OFFSET, WEEK, -1 if since is None else since, until)).fetchall()
    first = None if since is None else _week_number(since)
    if first is None and not rows:
        return []
    return fill_weeks(rows, first=first, last=_week_number(until))


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
) -> StatsReport:
    """The same report from Codex's ``memories_1.sqlite`` alone (opened read-only).

    There is no citation log (``citation_log`` False): checks, files, sections and
    unknown ids are empty rather than claiming that nothing was ever cited; the
    counts are Codex's own.
    """
    from memcite.ledger.codex_home import iter_stage1_outputs

    check_rule(rule)
    memories = []
    for row in iter_stage1_outputs(codex_db):
        thread_id, updated, _generated, _slug, uses, last, selected, _sel_at, raw, summary = row
        memories.append(MemoryUsage(thread_id=thread_id, source_updated_at=updated,
                                    codex_last_usage=last, codex_usage_count=uses,
                                    selected_for_phase2=bool(selected), has_text=bool(raw or summary)))
    dead_all = dead_memories(memories, as_of=as_of, max_unused_days=max_unused_days, rule=rule)
    dead = [d.to_dict() for d in (dead_all if not limit else dead_all[:limit])]
    cited = [m for m in memories if m.codex_usage_count]
    cited.sort(key=lambda m: (-(m.codex_usage_count or 0), -(m.codex_last_usage or 0), m.thread_id))
    top = [{"thread_id": m.thread_id, "usage_count": 0, "codex_usage_count": m.codex_usage_count,
            "last_usage": None, "codex_last_usage": m.codex_last_usage,
            "last_used": last_used(m, rule)} for m in (cited if not limit else cited[:limit])]
    totals = {
        "memories": len(memories),
        "archived": 0,
        "gone_from_codex": 0,
        "in_codex_table": len(memories),
        "cited": len(cited),
        "never_cited": len(memories) - len(cited),
        "dead": len(dead_all),
        "citations": sum(m.codex_usage_count or 0 for m in memories),
        "replies": 0,
        "unknown_ids": 0,
        "not_uuid_ids": 0,
    }
    return StatsReport(as_of, rule, max_unused_days, None, "codex", totals, dead, len(dead_all),
                       top, [], [], CitationChecks(memory_root=MemoryFolder(memory_root).root),
                       [], [], None, citation_log=False)
