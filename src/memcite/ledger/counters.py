"""Counters that ``stats`` reads instead of counting: kept by triggers, in the write's transaction.

Three tables, created and filled by the migration ``m010_stats_counters``:

- ``memory_totals`` (one row): what ``stats`` counts over the whole ``memories`` table
  (rows, archived, cited, Codex's cited count and sum, the rows outside the rules' scopes).
  Its ``exact`` flag says the row may be trusted. ``sync`` clears the flag in its first
  transaction (so that its million-row loads fire no per-row counting) and counts again,
  in one scan, in its last; an interrupted sync leaves the flag cleared, and ``stats``
  counts the table itself until the next sync or ``rebuild``.
- ``reply_totals`` (one row): replies, and replies recorded long after they were made
  (cited lines hashed from history), with the threshold counted against.
- ``citation_weeks``: counted citations per week of the reply's time.

Each trigger adds what the new row contributes and takes away what the old row did, so a
counter equals its plain ``count(*)`` after any write, or the write does not happen.
The counters are defined once here (``MEMORY_TOTALS``); changing them needs a new migration
that calls ``create_counters`` again.
"""

from __future__ import annotations

import sqlite3

from memcite.ledger.memory_files import LATE_HASH_SECONDS

WEEK_SECONDS = 7 * 86_400
MONDAY_OFFSET = 4 * 86_400  # 1970-01-01 was a Thursday: weeks start on Mondays
# A reply's week, as ``stats`` groups them (SQLite's integer division).
WEEK_OF = f"(({{r}}.replied_at - {MONDAY_OFFSET}) / {WEEK_SECONDS})"

# Each condition is written as the WHERE of a partial index of ``memories``, so that
# counting it afresh (``recount``) reads that index rather than the table.
_ACTIVE = "{r}.archived_at IS NULL"
_OUTSIDE = ("{r}.archived_at IS NULL AND ({r}.missing_since IS NOT NULL"
            " OR {r}.source != 'stage1_outputs')")  # memories_outside_codex
_GONE = _OUTSIDE + " AND {r}.missing_since IS NOT NULL"

# column -> (condition on a row of memories, what a row meeting it adds)
MEMORY_TOTALS: dict[str, tuple[str, str]] = {
    "memories": ("1", "1"),
    "archived": ("{r}.archived_at IS NOT NULL", "1"),
    "archived_cited": ("{r}.archived_at IS NOT NULL AND {r}.usage_count > 0", "1"),
    "cited": ("{r}.usage_count > 0", "1"),
    "citations": ("{r}.usage_count > 0", "{r}.usage_count"),
    "codex_cited": (_ACTIVE + " AND {r}.codex_usage_count > 0", "1"),
    "codex_citations": (_ACTIVE + " AND {r}.codex_usage_count > 0", "{r}.codex_usage_count"),
    "gone": (_GONE, "1"),
    "gone_cited": (_GONE + " AND {r}.usage_count > 0", "1"),
    "folder_only": (_OUTSIDE + " AND {r}.missing_since IS NULL", "1"),
    # "+": counted through memories_outside_codex (few rows), not memories_codex_cited
    "outside_codex_cited": (_OUTSIDE + " AND +{r}.codex_usage_count > 0", "1"),
}
# The columns of memories the conditions read: an update of any other changes no counter.
_MEMORY_COLUMNS = ("usage_count", "codex_usage_count", "archived_at", "missing_since", "source")


def _share(column: str, row: str) -> str:
    """What one row (``NEW`` or ``OLD``, or a table alias) adds to ``column``; never NULL."""
    condition, value = MEMORY_TOTALS[column]
    return (f"CASE WHEN {condition.format(r=row)} THEN coalesce({value.format(r=row)}, 0)"
            " ELSE 0 END")


def _late(row: str) -> str:
    return (f"CASE WHEN {row}.recorded_at - {row}.replied_at > late_after THEN 1 ELSE 0 END")




def _week_change_one(sign: str, row: str) -> str:
    """Add or take away one counted citation (``row``, NEW or OLD of ``cited_ids``)."""
    return (
        "INSERT INTO citation_weeks (week, citations)"
        f" SELECT {WEEK_OF.format(r='r')}, {sign}1 FROM replies r WHERE r.id = {row}.reply_id"
        f" AND {row}.counted = 1"
        " ON CONFLICT (week) DO UPDATE SET citations = citations + excluded.citations;"
    )


def _week_change_reply(sign: str, row: str) -> str:
    """Add or take away the counted citations of a reply (``row``, NEW or OLD of ``replies``)."""
    return (
        "INSERT INTO citation_weeks (week, citations)"
        f" SELECT {WEEK_OF.format(r=row)}, {sign}count(*) FROM cited_ids c"
        f" WHERE c.reply_id = {row}.id AND c.counted = 1"
        " ON CONFLICT (week) DO UPDATE SET citations = citations + excluded.citations;"
    )


def _memory_totals_change(*, add: str | None, take: str | None) -> str:
    sets = []
    for column in MEMORY_TOTALS:
        change = " ".join(part for part in (
            f"+ {_share(column, add)}" if add else "", f"- {_share(column, take)}" if take else "")
            if part)
        sets.append(f"{column} = {column} {change}")
    return f"UPDATE memory_totals SET {', '.join(sets)} WHERE id = 1;"


_COUNTING = "WHEN (SELECT exact FROM memory_totals WHERE id = 1) = 1"

DAY_SECONDS = 86_400
# The last-use columns bucketed by day (``last_used_days``): one per retention rule, with
# the partial index (active rows) that orders them.
LAST_USED_COLUMNS = {"memcite": "last_used", "codex": "codex_last_used"}
_LAST_USED_INDEXES = {"memcite": "memories_active_last_used", "codex": "memories_codex_last_used"}


def _day_change(sign: str, row: str) -> str:
    """Add (``sign`` '') or take away ('-') ``row``'s days of last use, if it is active."""
    return " ".join(
        "INSERT INTO last_used_days (rule, day, memories)"
        f" SELECT '{rule}', {row}.{column} / {DAY_SECONDS}, {sign}1"
        f" WHERE {row}.archived_at IS NULL AND {row}.{column} IS NOT NULL"
        " ON CONFLICT (rule, day) DO UPDATE SET memories = memories + excluded.memories;"
        for rule, column in LAST_USED_COLUMNS.items())


_DAY_MOVED = ("(OLD.last_used IS NOT NEW.last_used OR OLD.codex_last_used IS NOT"
              " NEW.codex_last_used OR (OLD.archived_at IS NULL) != (NEW.archived_at IS NULL))")

COUNTER_TRIGGERS: dict[str, str] = {
    "memories_count_insert": f"AFTER INSERT ON memories {_COUNTING} BEGIN "
                             + _memory_totals_change(add="NEW", take=None) + " END",
    "memories_count_delete": f"AFTER DELETE ON memories {_COUNTING} BEGIN "
                             + _memory_totals_change(add=None, take="OLD") + " END",
    "memories_count_update": f"AFTER UPDATE OF {', '.join(_MEMORY_COLUMNS)} ON memories"
                             f" {_COUNTING} BEGIN "
                             + _memory_totals_change(add="NEW", take="OLD") + " END",
    "memories_days_insert": f"AFTER INSERT ON memories {_COUNTING} BEGIN "
                            + _day_change("", "NEW") + " END",
    "memories_days_delete": f"AFTER DELETE ON memories {_COUNTING} BEGIN "
                            + _day_change("-", "OLD") + " END",
    "memories_days_update": "AFTER UPDATE OF last_usage, codex_last_usage, source_updated_at,"
                            f" archived_at ON memories {_COUNTING} AND {_DAY_MOVED} BEGIN "
                            + _day_change("-", "OLD") + " " + _day_change("", "NEW") + " END",
    "replies_count_insert": "AFTER INSERT ON replies BEGIN UPDATE reply_totals SET"
                            f" replies = replies + 1, late = late + {_late('NEW')} WHERE id = 1;"
                            " END",
    "replies_count_delete": "AFTER DELETE ON replies BEGIN UPDATE reply_totals SET"
                            f" replies = replies - 1, late = late - {_late('OLD')} WHERE id = 1; "
                            + _week_change_reply("-", "OLD") + " END",
    "replies_count_update": "AFTER UPDATE OF id, replied_at, recorded_at ON replies BEGIN"
                            " UPDATE reply_totals SET"
                            f" late = late + {_late('NEW')} - {_late('OLD')} WHERE id = 1; "
                            + _week_change_reply("-", "OLD") + " "
                            + _week_change_reply("+", "NEW") + " END",
    "cited_ids_count_insert": "AFTER INSERT ON cited_ids WHEN NEW.counted = 1 BEGIN "
                              + _week_change_one("+", "NEW") + " END",
    "cited_ids_count_delete": "AFTER DELETE ON cited_ids WHEN OLD.counted = 1 BEGIN "
                              + _week_change_one("-", "OLD") + " END",
    "cited_ids_count_update": "AFTER UPDATE OF reply_id, counted ON cited_ids BEGIN "
                              + _week_change_one("-", "OLD") + " "
                              + _week_change_one("+", "NEW") + " END",
}


def _count_memory_totals(conn: sqlite3.Connection) -> tuple[int, ...]:
    """``MEMORY_TOTALS`` counted afresh: one query per condition, each through the partial
    index whose WHERE it is (a million rows: a fraction of a second, not a scan per column)."""
    by_condition: dict[str, list[str]] = {}
    for column, (condition, _) in MEMORY_TOTALS.items():
        by_condition.setdefault(condition, []).append(column)
    counted: dict[str, int] = {}
    for condition, columns in by_condition.items():
        sums = ", ".join(f"coalesce(sum({MEMORY_TOTALS[c][1].format(r='m')}), 0)"
                         for c in columns)
        where = condition.format(r="m")
        row = None
        if condition.startswith(_OUTSIDE):
            # Through the index of the few rows outside Codex: left to itself, with no
            # statistics, SQLite may walk a million rows through another index instead
            # (2.5 s of a first sync of 1M rows). Without that index (an old schema), as it can.
            try:
                row = conn.execute(f"SELECT {sums} FROM memories m INDEXED BY"
                                   f" memories_outside_codex WHERE {where}").fetchone()
            except sqlite3.OperationalError:
                row = None
        if row is None:
            row = conn.execute(f"SELECT {sums} FROM memories m WHERE {where}").fetchone()
        counted.update(zip(columns, row, strict=True))
    return tuple(counted[column] for column in MEMORY_TOTALS)


def _count_days(conn: sqlite3.Connection) -> list[tuple[str, int, int]]:
    """``(rule, day, active memories)`` counted afresh, day by day through the index of each
    rule's last use (a seek to the day's first row, then a count of that day's range): no
    sort of a million rows. Days as SQLite divides (toward zero: day 0 holds (-1 day, 1 day))."""
    rows = []
    indexes = {row[0] for row in conn.execute(
        "SELECT name FROM main.sqlite_master WHERE type = 'index' AND tbl_name = 'memories'")}
    for rule, column in LAST_USED_COLUMNS.items():
        where = f"FROM memories WHERE archived_at IS NULL AND {column}"
        if _LAST_USED_INDEXES[rule] not in indexes:  # dropped by an interrupted large sync
            rows += [(rule, day, n) for day, n in conn.execute(
                f"SELECT {column} / {DAY_SECONDS} AS day, count(*) {where} IS NOT NULL"
                " GROUP BY day")]
            continue
        low = conn.execute(f"SELECT min({column}) {where} IS NOT NULL").fetchone()[0]
        while low is not None:
            # SQLite divides toward zero: day d >= 0 holds [d, d + 1) days (day 0 also the
            # negative times above -1 day), day d < 0 holds (d - 1, d] days.
            day = int(low // DAY_SECONDS if low >= 0 else -(-low // DAY_SECONDS))
            end = (day + 1) * DAY_SECONDS if day >= 0 else day * DAY_SECONDS + 1
            count = conn.execute(f"SELECT count(*) {where} >= ? AND {column} < ?",
                                 (low, end)).fetchone()[0]
            rows.append((rule, day, count))
            low = conn.execute(f"SELECT min({column}) {where} >= ?", (end,)).fetchone()[0]
    return rows


_COUNTED_WEEKS = (
    f"SELECT {WEEK_OF.format(r='r')} AS week, count(*) FROM cited_ids c"
    " JOIN replies r ON r.id = c.reply_id WHERE c.counted = 1 GROUP BY week"
)


def create_counters(conn: sqlite3.Connection) -> None:
    """Create the counter tables and triggers and fill them (inside the caller's transaction)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS memory_totals (id INTEGER PRIMARY KEY CHECK (id = 1),"
        " exact INTEGER NOT NULL, "
        + ", ".join(f"{column} INTEGER NOT NULL DEFAULT 0" for column in MEMORY_TOTALS) + ")")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS reply_totals (id INTEGER PRIMARY KEY CHECK (id = 1),"
        " replies INTEGER NOT NULL, late INTEGER NOT NULL,"
        " late_after INTEGER NOT NULL)")  # seconds: late is recorded_at - replied_at > this
    conn.execute("CREATE TABLE IF NOT EXISTS citation_weeks (week INTEGER PRIMARY KEY,"
                 " citations INTEGER NOT NULL)")
    # Active memories per day of last use (SQLite's division) under each rule.
    conn.execute("CREATE TABLE IF NOT EXISTS last_used_days (rule TEXT NOT NULL,"
                 " day INTEGER NOT NULL, memories INTEGER NOT NULL, PRIMARY KEY (rule, day))"
                 " WITHOUT ROWID")
    for name, body in COUNTER_TRIGGERS.items():
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
        conn.execute(f"CREATE TRIGGER {name} {body}")
    recount(conn)


def recount(conn: sqlite3.Connection, *, everything: bool = True) -> None:
    """Count the counters again from the tables, inside the caller's transaction: the
    memories' in one scan (``exact`` again), then (unless not ``everything``) the replies'
    and the citations per week."""
    counted = _count_memory_totals(conn)
    columns = ", ".join(MEMORY_TOTALS)
    conn.execute("DELETE FROM last_used_days")
    conn.executemany("INSERT INTO last_used_days (rule, day, memories) VALUES (?, ?, ?)",
                     _count_days(conn))
    conn.execute(f"INSERT OR REPLACE INTO memory_totals (id, exact, {columns})"
                 f" VALUES (1, 1, {', '.join('?' * len(counted))})", counted)
    if not everything:
        return
    conn.execute(
        "INSERT OR REPLACE INTO reply_totals (id, replies, late, late_after)"
        " SELECT 1, count(*), coalesce(sum(recorded_at - replied_at > ?), 0), ? FROM replies",
        (LATE_HASH_SECONDS, LATE_HASH_SECONDS))
    conn.execute("DELETE FROM citation_weeks")
    conn.execute(f"INSERT INTO citation_weeks (week, citations) {_COUNTED_WEEKS}")


def suspend_memory_totals(conn: sqlite3.Connection) -> None:
    """Stop counting the memories' writes (a large first sync; inside its transaction)."""
    conn.execute("UPDATE memory_totals SET exact = 0 WHERE id = 1")


def resume_memory_totals(conn: sqlite3.Connection) -> None:
    """Count the memories again if their counting was suspended (by this sync, or by one that
    was interrupted), inside the caller's transaction: one scan of ``memories``."""
    if conn.execute("SELECT exact FROM memory_totals WHERE id = 1").fetchone() != (1,):
        recount(conn, everything=False)


def memory_totals(conn: sqlite3.Connection) -> dict[str, int] | None:
    """The counters of ``memories``, or None when they cannot be trusted (or do not exist)."""
    try:
        row = conn.execute(f"SELECT exact, {', '.join(MEMORY_TOTALS)} FROM memory_totals"
                           " WHERE id = 1").fetchone()
    except sqlite3.OperationalError:  # an older schema, read without migrating
        return None
    if row is None or row[0] != 1:
        return None
    return dict(zip(MEMORY_TOTALS, row[1:], strict=True))


def reply_totals(conn: sqlite3.Connection) -> tuple[int, int] | None:
    """``(replies, recorded late)``, or None when there is no counter for today's threshold."""
    try:
        row = conn.execute("SELECT replies, late, late_after FROM reply_totals WHERE id = 1"
                           ).fetchone()
    except sqlite3.OperationalError:
        return None
    if row is None or row[2] != LATE_HASH_SECONDS:
        return None
    return row[0], row[1]


def week_counters(conn: sqlite3.Connection, first: int, last: int) -> dict[int, int] | None:
    """Counted citations per week number from ``first`` to ``last``, or None without counters."""
    try:
        return dict(conn.execute("SELECT week, citations FROM citation_weeks"
                                 " WHERE week >= ? AND week <= ?", (first, last)))
    except sqlite3.OperationalError:
        return None


def active_before_day(conn: sqlite3.Connection, rule: str, day: int) -> int | None:
    """Active memories whose last use under ``rule`` falls on a day before ``day`` (SQLite's
    division), or None when the counters cannot be trusted."""
    if memory_totals(conn) is None:
        return None
    try:
        return conn.execute("SELECT coalesce(sum(memories), 0) FROM last_used_days"
                            " WHERE rule = ? AND day < ?", (rule, day)).fetchone()[0]
    except sqlite3.OperationalError:
        return None


def counter_differences(conn: sqlite3.Connection) -> list[dict]:
    """Each counter that differs from the tables it counts (``rebuild --check``): name, what
    is stored, what the tables say. A suspended ``memory_totals`` (an interrupted sync) is
    reported as ``memory_totals.exact``."""
    try:
        stored = conn.execute(f"SELECT exact, {', '.join(MEMORY_TOTALS)} FROM memory_totals"
                              " WHERE id = 1").fetchone()
    except sqlite3.OperationalError:
        return []  # an older schema, checked read-only: no counters to check
    differences = []
    counted = _count_memory_totals(conn)
    if stored is None or stored[0] != 1:
        differences.append({"counter": "memory_totals.exact", "stored": None if stored is None
                            else stored[0], "counted": 1})
    elif tuple(stored[1:]) != tuple(counted):
        differences += [{"counter": f"memory_totals.{name}", "stored": have, "counted": want}
                        for name, have, want in zip(MEMORY_TOTALS, stored[1:], counted,
                                                    strict=True) if have != want]
    if stored is not None and stored[0] == 1:
        days = {row[:2]: row[2] for row in conn.execute(
            "SELECT rule, day, memories FROM last_used_days WHERE memories != 0")}
        counted_days = {row[:2]: row[2] for row in _count_days(conn)}
        differences += [{"counter": f"last_used_days.{rule}.{day}",
                         "stored": days.get((rule, day), 0),
                         "counted": counted_days.get((rule, day), 0)}
                        for rule, day in sorted(set(days) | set(counted_days))
                        if days.get((rule, day), 0) != counted_days.get((rule, day), 0)]
    replies = conn.execute("SELECT replies, late, late_after FROM reply_totals WHERE id = 1"
                           ).fetchone()
    late_after = LATE_HASH_SECONDS if replies is None else replies[2]
    want = conn.execute("SELECT count(*), coalesce(sum(recorded_at - replied_at > ?), 0)"
                        " FROM replies", (late_after,)).fetchone()
    for name, have, count in zip(("replies", "late"), replies or (None, None), want,
                                 strict=False):
        if have != count:
            differences.append({"counter": f"reply_totals.{name}", "stored": have,
                                "counted": count})
    weeks = dict(conn.execute("SELECT week, citations FROM citation_weeks WHERE citations != 0"))
    logged = dict(conn.execute(_COUNTED_WEEKS))
    for week in sorted(set(weeks) | set(logged)):
        if weeks.get(week, 0) != logged.get(week, 0):
            differences.append({"counter": f"citation_weeks.{week}",
                                "stored": weeks.get(week, 0), "counted": logged.get(week, 0)})
    return differences
