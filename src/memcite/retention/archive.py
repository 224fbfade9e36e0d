"""Forgetting safely: ``prune --apply`` archives memories, ``restore`` undoes it.

Archiving a memory marks its inventory row ``archived_at``, moves its rollout
summary file out of the memory folder into an archive folder (never deleting
anything), and writes an ``archive_log`` row; restoring moves the file back,
clears the mark and logs that too. Codex's database is never written. The
memory folder is the one of the Codex home the row was synced from (the
inventory can hold several homes), else the one of the home given.

Memories gone from Codex (marked missing by sync) are never candidates: Codex
no longer has them, so there is nothing left to archive; ``prune`` counts them
apart. ``--rule codex`` only looks at rows of Codex's table, as Codex does.

Each memory is one transaction; its file is moved first and moved back if the
transaction fails, so a crash leaves at worst a file in the archive whose row
is still active (``restore`` puts such files back too).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from memcite.errors import MemciteError
from memcite.ledger.codex_home import ROLLOUT_SUMMARIES, iter_rollout_summaries, memory_folder
from memcite.ledger.store import transaction

ARCHIVE_FOLDER = "memcite_archive"


class ArchiveError(MemciteError):
    """Archiving or restoring could not be done as asked (exit 2)."""


def default_archive_dir(codex_home: str | os.PathLike) -> str:
    """Where archived summaries go: ``$CODEX_HOME/memcite_archive`` (beside, not inside,
    the memory folder, so Codex never reads them)."""
    return os.path.join(os.fspath(codex_home), ARCHIVE_FOLDER)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A memory to archive, with why (from the prune selection)."""

    thread_id: str
    last_used: int | None = None
    reason: str | None = None


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


def _free_name(path: str) -> str:
    """``path``, or ``path.1``, ``path.2``… so that nothing is ever overwritten."""
    candidate, number = path, 0
    while os.path.lexists(candidate):
        number += 1
        candidate = f"{path}.{number}"
    return candidate


def _private_folders(folder: str) -> None:
    """``os.makedirs``, every folder it creates 0700 (``makedirs`` gives only the last one
    the mode): the archive holds a person's memories."""
    if os.path.isdir(folder):
        return
    _private_folders(os.path.dirname(folder))
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass


def _move(source: str, target: str) -> str:
    _private_folders(os.path.dirname(target))
    target = _free_name(target)
    shutil.move(source, target)  # a rename on one file system; copy then remove across
    return target


class _SummaryFiles:
    """Finds a memory's summary file: the name the inventory holds, else by header (read once)."""

    def __init__(self, summaries: str) -> None:
        self.summaries = summaries
        self._by_thread: dict[str, str] | None = None

    def find(self, thread_id: str, name: str | None) -> str | None:
        if name and os.path.basename(name) == name:
            path = os.path.join(self.summaries, name)
            if os.path.isfile(path):
                return path
        if self._by_thread is None:
            self._by_thread = {}
            if os.path.isdir(self.summaries):
                for found in iter_rollout_summaries(self.summaries):
                    self._by_thread.setdefault(found.thread_id, found.where)
        path = self._by_thread.get(thread_id)
        return path if path and os.path.isfile(path) else None


class _Home:
    """One Codex home's memory folder, its summary files and where they are archived."""

    def __init__(self, codex_home: str, archive_dir: str | os.PathLike | None) -> None:
        self.codex_home = codex_home
        memory_root = os.path.realpath(memory_folder(codex_home))
        archive = os.path.realpath(os.fspath(archive_dir or default_archive_dir(codex_home)))
        # Both real paths: a symlinked home or archive must not get the archive inside.
        if archive == memory_root or archive.startswith(memory_root.rstrip(os.sep) + os.sep):
            raise ArchiveError(f"{archive}: the archive folder must not be inside the memory "
                               f"folder {memory_root}", hint="choose another --archive-dir")
        self.files = _SummaryFiles(os.path.join(memory_root, ROLLOUT_SUMMARIES))
        self.target_folder = os.path.join(archive, ROLLOUT_SUMMARIES)


def archive_memories(
    conn: sqlite3.Connection,
    candidates: Iterable[Candidate],
    *,
    codex_home: str | os.PathLike,
    now: int,
    rule: str,
    archive_dir: str | os.PathLike | None = None,
) -> list[Moved]:
    """Archive each active candidate: move its summary file, mark the row, log it.

    The file is looked for in the memory folder of the Codex home the row was
    synced from, else of ``codex_home``; it goes to ``archive_dir``, else to
    ``memcite_archive`` beside that home's memory folder. Every home is checked
    before anything is moved.
    """
    fallback = os.fspath(codex_home)
    rows = []
    for candidate in candidates:
        row = conn.execute(
            "SELECT rollout_summary_file, codex_home FROM memories"
            " WHERE thread_id = ? AND archived_at IS NULL", (candidate.thread_id,)).fetchone()
        rows.append((candidate, row))
    homes = {home: _Home(home, archive_dir)
             for home in dict.fromkeys(row[1] or fallback for _, row in rows if row)}
    results = []
    for candidate, row in rows:
        if row is None:
            results.append(Moved(candidate.thread_id, "archive", done=False,
                                 problem="not an active memory"))
            continue
        home = homes[row[1] or fallback]
        source = home.files.find(candidate.thread_id, row[0])
        target = problem = None
        if source is not None:
            try:
                target = _move(source, os.path.join(home.target_folder,
                                                    os.path.basename(source)))
            except OSError as exc:
                problem = f"could not move {source}: {exc.strerror or exc}"
                source = None
        try:
            with transaction(conn):
                conn.execute("UPDATE memories SET archived_at = ? WHERE thread_id = ?",
                             (now, candidate.thread_id))
                conn.execute(
                    "INSERT INTO archive_log (action, thread_id, at, rule, reason, last_used,"
                    " file_from, file_to, problem) VALUES ('archive', ?, ?, ?, ?, ?, ?, ?, ?)",
                    (candidate.thread_id, now, rule, candidate.reason, candidate.last_used,
                     source, target, problem))
        except BaseException:
            if target is not None and source is not None:
                shutil.move(target, source)
            raise
        results.append(Moved(candidate.thread_id, "archive", source, target, problem,
                             codex_home=home.codex_home))
    return results


def restore_memories(
    conn: sqlite3.Connection,
    *,
    thread_ids: Iterable[str] = (),
    all_archived: bool = False,
    since: int | None = None,
    now: int,
) -> list[Moved]:
    """Undo archiving for the given ids, all archived memories, or those archived at or after
    ``since``: move each summary file back (never over an existing file) and clear the mark."""
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
            results.append(Moved(thread_id, "restore", done=False,
                                 problem="not archived" if row else "no such memory"))
            continue
        logged = conn.execute(
            "SELECT file_from, file_to FROM archive_log WHERE thread_id = ? AND action = 'archive'"
            " ORDER BY id DESC LIMIT 1", (thread_id,)).fetchone()
        back = moved_from = problem = None
        if logged and logged[1]:
            original, archived = logged
            if not os.path.exists(archived):
                problem = f"{archived} is no longer in the archive"
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
        results.append(Moved(thread_id, "restore", moved_from, back, problem))
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
                     rule: str, limit: int) -> list[Candidate]:
    """The active memories ``prune`` would archive, oldest first, at most ``limit`` (0: all).

    ``codex``: exactly Codex's start-up pruning (rows of Codex's table at the last sync, not
    selected for consolidation, Codex's ``COALESCE(last_usage, source_updated_at)`` before
    the cutoff, ordered by it, then ``source_updated_at``, then thread id). ``memcite``: the
    dead memories by memcite's rule, stalest first, also sparing the ones in the last
    consolidation's input. Memories gone from Codex are never candidates.
    """
    from memcite.retention.rules import check_rule, cutoff, dead_reason
    from memcite.retention.stats import RULE_LAST_USED, RULE_SCOPE, USAGE_COLUMNS, usage_from_row

    check_rule(rule)
    column = RULE_LAST_USED[rule]
    order = ("codex_last_used, source_updated_at, thread_id" if rule == "codex"
             else "last_used, thread_id")
    rows = conn.execute(
        f"SELECT {USAGE_COLUMNS}, {column} FROM memories WHERE archived_at IS NULL"
        f" AND selected_for_phase2 = 0 AND {RULE_SCOPE[rule]} AND {column} < ?"
        f" ORDER BY {order} LIMIT ?",
        (cutoff(as_of, max_unused_days), -1 if limit == 0 else limit))
    return [Candidate(row[0], row[6], dead_reason(usage_from_row(row), rule)) for row in rows]
