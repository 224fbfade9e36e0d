"""What ``prune`` selects, and undoing what an earlier memcite's ``prune --apply`` archived.

``prune_candidates`` is the selection (Codex's start-up pruning, or memcite's rule).
How memcite now asks Codex to forget is ``memcite.retention.forget``. Earlier
versions archived instead: they marked the inventory row ``archived_at`` and moved
the rollout summary file into ``$CODEX_HOME/memcite_archive``; ``restore_memories``
still moves such files back (never over an existing file) and clears the mark,
logging it in ``archive_log``.

Memories gone from Codex (marked missing by sync) are never candidates: Codex
no longer has them, so there is nothing left to forget; ``prune`` counts them
apart. ``--rule codex`` only looks at rows of Codex's table, as Codex does.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from memcite.errors import MemciteError
from memcite.ledger.store import transaction

ARCHIVE_FOLDER = "memcite_archive"


class ArchiveError(MemciteError):
    """Archiving or restoring could not be done as asked (exit 2)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A memory to archive, with why (from the prune selection)."""

    thread_id: str
    last_used: int | None = None
    reason: str | None = None
    label: str = "-"


@dataclass(frozen=True, slots=True)
class Moved:
    """What happened to one memory."""

    thread_id: str
    action: str  # archive | restore
    file_from: str | None = None
    file_to: str | None = None
    problem: str | None = None
    done: bool = True  # False: skipped (not active / not archived)
    codex_home: str | None = None  # archive: the home whose memory folder was used

    def to_dict(self) -> dict:
        return {"thread_id": self.thread_id, "action": self.action, "done": self.done,
                "file_from": self.file_from, "file_to": self.file_to, "problem": self.problem,
                "codex_home": self.codex_home}


def restore_memories(
    conn: sqlite3.Connection,
    *,
    thread_ids: Iterable[str] = (),
    all_archived: bool = False,
    since: int | None = None,
    now: int,
    missing_ok: bool = False,
) -> list[Moved]:
    """Undo an earlier memcite's archiving for the given ids, all archived memories, or those
    archived at or after ``since``: move each summary file back (never over an existing
    file) and clear the mark. ``missing_ok`` leaves out ids that are not archived."""
    from memcite.citations.thread_ids import normalize_thread_id

    wanted: list[str] = []
    if all_archived or since is not None:
        query = "SELECT thread_id FROM memories WHERE archived_at IS NOT NULL"
        args: tuple = ()
        if since is not None:
            query += " AND archived_at >= ?"
            args = (since,)
        wanted = [row[0] for row in conn.execute(query + " ORDER BY archived_at, thread_id", args)]
    for given in thread_ids:
        normalized = normalize_thread_id(given.strip())
        if normalized is None:
            raise ArchiveError(f"{given!r} is not a thread id (a UUID)",
                               hint="see `memcite prune --json` or the archive log for ids")
        if normalized not in wanted:
            wanted.append(normalized)
    results = []
    for thread_id in wanted:
        row = conn.execute("SELECT archived_at FROM memories WHERE thread_id = ?",
                           (thread_id,)).fetchone()
        if row is None or row[0] is None:
            if missing_ok:
                continue
            results.append(Moved(thread_id, "restore", done=False,
                                 problem="not archived" if row else "no such memory"))
            continue
        logged = conn.execute(
            "SELECT file_from, file_to FROM archive_log WHERE thread_id = ? AND action = 'archive'"
            " ORDER BY id DESC LIMIT 1", (thread_id,)).fetchone()
        back = moved_from = problem = None
        lost = False
        if logged and logged[1]:
            original, archived = logged
            if not os.path.exists(archived) and os.path.lexists(original):
                problem = f"{original} was already back in place"
            elif not os.path.exists(archived):
                problem = (f"the summary file is neither in the archive ({archived}) nor in "
                           "place: not restored (the mark is cleared)")
                lost = True
            elif os.path.lexists(original):
                problem = f"{original} exists again (kept both; the archived copy stays in place)"
            else:
                os.makedirs(os.path.dirname(original), exist_ok=True)
                shutil.move(archived, original)
                back, moved_from = original, archived
        try:
            with transaction(conn):
                conn.execute("UPDATE memories SET archived_at = NULL WHERE thread_id = ?",
                             (thread_id,))
                conn.execute(
                    "INSERT INTO archive_log (action, thread_id, at, file_from, file_to, problem)"
                    " VALUES ('restore', ?, ?, ?, ?, ?)",
                    (thread_id, now, moved_from, back, problem))
        except BaseException:
            if back is not None:
                shutil.move(back, moved_from)
            raise
        results.append(Moved(thread_id, "restore", moved_from, back, problem, done=not lost))
    return results


def archive_log(conn: sqlite3.Connection, *, limit: int = 50) -> list[dict]:
    """The latest archive and restore entries, newest first."""
    rows = conn.execute(
        "SELECT id, action, thread_id, at, rule, reason, last_used, file_from, file_to, problem"
        " FROM archive_log ORDER BY id DESC LIMIT ?", (-1 if limit == 0 else limit,))
    keys = ("id", "action", "thread_id", "at", "rule", "reason", "last_used", "file_from",
            "file_to", "problem")
    return [dict(zip(keys, row, strict=True)) for row in rows]


def prune_candidates(conn: sqlite3.Connection, *, as_of: int, max_unused_days: int,
                     rule: str, limit: int, codex_home: str | None = None) -> list[Candidate]:
    """The active memories ``prune`` would archive, oldest first, at most ``limit`` (0: all).

    ``codex``: exactly Codex's start-up pruning (rows of Codex's table at the last sync, not
    selected for consolidation, Codex's ``COALESCE(last_usage, source_updated_at)`` before
    the cutoff, ordered by it, then ``source_updated_at``, then thread id). ``memcite``: the
    dead memories by memcite's rule, stalest first, also sparing the ones in the last
    consolidation's input. Memories gone from Codex, and memories memcite already asked
    Codex to forget, are never candidates. ``codex_home`` (a real path) keeps to one home.
    """
    from memcite.retention.labels import LABEL_COLUMNS, memory_label
    from memcite.retention.rules import check_rule, cutoff, dead_reason
    from memcite.retention.stats import RULE_LAST_USED, RULE_SCOPE, USAGE_COLUMNS, usage_from_row

    check_rule(rule)
    column = RULE_LAST_USED[rule]
    order = ("codex_last_used, source_updated_at, thread_id" if rule == "codex"
             else "last_used, thread_id")
    rows = conn.execute(
        f"SELECT {USAGE_COLUMNS}, {column}, {LABEL_COLUMNS} FROM memories m"
        f" WHERE archived_at IS NULL AND selected_for_phase2 = 0 AND {RULE_SCOPE[rule]}"
        f" AND {column} < ? AND (? IS NULL OR codex_home = ?) AND NOT EXISTS (SELECT 1"
        " FROM forget_requests f WHERE f.codex_home = m.codex_home AND f.thread_id ="
        " m.thread_id AND f.state IN ('pending', 'done'))"
        f" ORDER BY {order} LIMIT ?",
        (cutoff(as_of, max_unused_days), codex_home, codex_home, -1 if limit == 0 else limit))
    return [Candidate(row[0], row[6], dead_reason(usage_from_row(row), rule),
                      memory_label(*row[7:10])) for row in rows]
