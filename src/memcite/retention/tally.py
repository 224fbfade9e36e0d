"""The citation log's tally behind ``memcite stats``: citation checks, citations per file
and per ``MEMORY.md`` section, unknown ids and ids that are not UUIDs.

The log is append-only, so a tally kept in a cache (``log_tally`` with a cache folder)
is brought up to date by adding only the replies recorded since; a change to any cited
file (seen by ``stat``) means a full check.
"""

from __future__ import annotations

import os
import sqlite3

from memcite.ledger.memory_files import split_cited_path
from memcite.retention.checks import (
    MEMORY_INDEX,
    CheckedEntry,
    CitationChecks,
    MemoryFolder,
    Section,
    check_citations,
    check_entry,
    count_section_citations,
    markdown_sections,
    moved_to,
    rank_worst,
)
from memcite.untrusted import loads_json
from memcite.value_classes import FrozenSlots, Slots


class LogTally(Slots):
    """What the citation log adds up to for the replies up to ``last_reply`` (the log is
    append-only, so later replies can be added): citation checks, citations per file and
    per MEMORY.md section, unknown ids (known ones taken out as of sync ``last_sync``)
    and ids that are not UUIDs."""

    __slots__ = ("checks", "per_file", "sections", "unknown", "not_uuid", "last_reply",
                 "last_sync")
    _fields = __slots__

    def __init__(self, checks: CitationChecks, per_file: dict[str, int], sections: list[Section],
                 unknown: dict[str, int], not_uuid: dict[str, int], last_reply: int,
                 last_sync: int) -> None:
        self.checks = checks
        self.per_file = per_file
        self.sections = sections
        self.unknown = unknown
        self.not_uuid = not_uuid
        self.last_reply = last_reply
        self.last_sync = last_sync

_MAX_CACHE_BYTES = 64 * 1024 * 1024  # a kept tally larger than this is rebuilt


def _last_reply(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT coalesce(max(id), 0) FROM replies").fetchone()[0]


def _last_sync(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT coalesce(max(id), 0) FROM syncs").fetchone()[0]


def _id_counts(conn: sqlite3.Connection, scope: ReplyScope, after_reply: int,
               up_to: int) -> tuple[dict[str, int], dict[str, int]]:
    """Counted ids that were no known memory when recorded (and still are not), and ids
    that are not UUIDs, in replies ``after_reply < id <= up_to`` (partial indexes)."""
    since_sql, since_args = scope.filter("c.")
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


def _entry_rows(conn: sqlite3.Connection, scope: ReplyScope, after_reply: int, up_to: int):
    """Distinct cited entries of replies ``after_reply < id <= up_to``, with citation counts."""
    since_sql, since_args = scope.filter()
    # From the start, one walk of the index cited_entries_check, already in groups and
    # covering every column; for a few new replies, the primary key's range is far smaller
    # ("+" keeps SQLite off the primary key, which would group in a temporary tree).
    flag = "+" if not after_reply else ""
    return conn.execute(
        "SELECT path, line_start, line_end, lines_sha256, count(*) FROM cited_entries"
        f" WHERE {flag}reply_id > ? AND {flag}reply_id <= ?" + since_sql +
        " GROUP BY path, line_start, line_end, lines_sha256",
        (after_reply, up_to, *since_args)).fetchall()


def _full_tally(conn: sqlite3.Connection, folder: MemoryFolder, scope: ReplyScope,
                limit: int) -> LogTally:
    last_reply, last_sync = _last_reply(conn), _last_sync(conn)
    rows = _entry_rows(conn, scope, 0, last_reply)
    checks = check_citations(rows, folder, limit=limit)
    per_file: dict[str, int] = {}
    sections = _memory_index_sections(folder)
    _add_to_places(rows, folder, per_file, sections)
    unknown, not_uuid = _id_counts(conn, scope, 0, last_reply)
    return LogTally(checks, per_file, sections, unknown, not_uuid, last_reply, last_sync)


def _bring_up_to_date(conn: sqlite3.Connection, folder: MemoryFolder, tally: LogTally,
                      scope: ReplyScope, limit: int) -> bool:
    """Add the replies recorded after ``tally.last_reply`` and take out the ids synced since
    ``tally.last_sync``; False when nothing changed."""
    last_sync = _last_sync(conn)
    synced = last_sync != tally.last_sync
    if synced:
        tally.unknown = _still_unknown(conn, tally.unknown)
        tally.last_sync = last_sync
    return _add_new_replies(conn, folder, tally, scope, limit) or synced


def _add_new_replies(conn: sqlite3.Connection, folder: MemoryFolder, tally: LogTally,
                     scope: ReplyScope, limit: int) -> bool:
    """Add the replies recorded after ``tally.last_reply``; False when there were none."""
    last_reply = _last_reply(conn)
    if last_reply == tally.last_reply:
        return False
    unknown, not_uuid = _id_counts(conn, scope, tally.last_reply, last_reply)
    _add_counts(tally.unknown, unknown)
    _add_counts(tally.not_uuid, not_uuid)
    rows = _entry_rows(conn, scope, tally.last_reply, last_reply)
    since_sql, since_args = scope.filter()
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
                path, line_start, line_end, outcome, place_total,
                moved_to(folder, path, line_start, line_end, digest)
                if outcome == "moved" else None)
    checks.worst = rank_worst(list(worst.values()), limit)
    _add_to_places(rows, folder, tally.per_file, tally.sections)
    tally.last_reply = last_reply
    return True


def _memory_index_sections(folder: MemoryFolder) -> list[Section]:
    """The sections of MEMORY.md as it is now (none when it is missing)."""
    if folder.root is None:
        return []
    real = folder.resolve(MEMORY_INDEX)[1]
    lines = folder.lines(real) if real is not None else None
    if lines is None and MEMORY_INDEX in folder.skipped:  # too large to hold: streamed
        return folder.streamed_sections(real) or []
    return markdown_sections(lines) if lines is not None else []


def _add_to_places(entry_rows, folder: MemoryFolder, per_file: dict[str, int],
                   sections: list[Section]) -> None:
    """Add the rows' citations to the files they name and to the MEMORY.md sections."""
    per_path: dict[str, int] = {}
    for path, _line_start, _line_end, _digest, count in entry_rows:
        per_path[path] = per_path.get(path, 0) + count
    # Each path spelled in the log is resolved once, whatever the rows citing it.
    index_real = folder.resolve(MEMORY_INDEX)[1] if folder.root is not None else None
    index_paths = set()
    for path, count in per_path.items():
        real = folder.resolve(path)[1]
        key = os.path.relpath(real, folder.root) if real is not None else path
        per_file[key] = per_file.get(key, 0) + count
        if index_real is not None and real == index_real:
            index_paths.add(path)
    if index_paths:
        count_section_citations(sections, [(line_start, line_end, count) for path, line_start,
                                           line_end, _digest, count in entry_rows
                                           if path in index_paths])


def since_filter(since: int | None, alias: str = "", memory_root: str | None = None
                 ) -> tuple[str, tuple]:
    """SQL (and its arguments) keeping the rows of replies made at or after ``since`` and,
    given ``memory_root``, recorded against that memory folder."""
    parts, args = [], []
    if since is not None:
        parts.append("replied_at >= ?")
        args.append(since)
    if memory_root is not None:
        parts.append("memory_root = ?")
        args.append(memory_root)
    if not parts:
        return "", ()
    return (f" AND {alias}reply_id IN (SELECT id FROM replies WHERE {' AND '.join(parts)})",
            tuple(args))


class ReplyScope(FrozenSlots):
    """Which replies a tally counts: made at or after ``since`` (None: all), and recorded
    against the memory folder ``memory_root`` (None: whichever)."""

    __slots__ = ("since", "memory_root")
    _fields = _compared = __slots__

    def __init__(self, since: int | None = None, memory_root: str | None = None) -> None:
        object.__setattr__(self, "since", since)
        object.__setattr__(self, "memory_root", memory_root)

    def filter(self, alias: str = "") -> tuple[str, tuple]:
        return since_filter(self.since, alias, self.memory_root)


# --------------------------------------------------------------------------- the tally's cache

# 6: the outcomes not_to_cite and removed; 5: written from a ledger whose notes, paths and
# ids are masked
_CACHE_VERSION = 6


def _path_stamp(folder: MemoryFolder, path: str) -> list | None:
    """What tells that a cited path now resolves or reads differently (opened, never read)."""
    if split_cited_path(path) is None:
        return None  # outside by its spelling alone: nothing to look at
    return folder.stamp(path)


def log_tally(conn: sqlite3.Connection, folder: MemoryFolder, since: int | None,
               limit: int, cache_dir: str | os.PathLike | None,
               memory_root: str | None = None) -> LogTally:
    """The log's tally, from the cache when no cited file changed, brought up to date.

    Checking a million citations takes a while; after the first run only the
    replies recorded since are checked. Any change to a cited file (``stat``)
    means a full check. ``memory_root`` keeps to the replies recorded against that folder.
    """
    scope = ReplyScope(since, memory_root)
    if cache_dir is None or folder.root is None:
        return _full_tally(conn, folder, scope, limit)
    import json
    import zlib

    # As bytes: the database's file name may not be UTF-8 (SQLite cannot decode it as text).
    db_file = (conn.execute("SELECT CAST(file AS BLOB) FROM pragma_database_list"
                            " WHERE name = 'main'").fetchone() or (b"",))[0]
    db_file = (db_file or b"").decode("utf-8", "backslashreplace")
    key = json.dumps([_CACHE_VERSION, db_file, folder.root, since, memory_root, limit])
    path = os.path.join(os.fspath(cache_dir), f"stats-{zlib.crc32(key.encode()):08x}.json")
    tally, stamps = _cache_read(path, folder, key)
    if tally is None:
        tally = _full_tally(conn, folder, scope, limit)
    elif not _bring_up_to_date(conn, folder, tally, scope, limit):
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

    from memcite.durable_files import open_own_folder, read_file_at
    from memcite.errors import MemciteError

    try:
        # memcite's own folder, a regular file only, opened without following a link or
        # blocking (a FIFO planted here must not hang stats).
        fd = open_own_folder(os.path.dirname(path), create=False)
        try:
            raw = read_file_at(fd, os.path.basename(path), path, _MAX_CACHE_BYTES)
        finally:
            os.close(fd)
        if raw is None:
            return None, {}
        data = loads_json(raw.decode("utf-8"))
        if data["key"] != key or any(_path_stamp(folder, name) != stamp
                                     for name, stamp in data["stamps"].items()):
            return None, {}
        checks = data["checks"]
        tally = LogTally(
            checks=CitationChecks(
                entries=checks["entries"], citations=checks["citations"],
                outcomes=checks["outcomes"], files_read=0, memory_root=checks["memory_root"],
                worst=[CheckedEntry(e["path"], e["line_start"], e["line_end"], e["outcome"],
                                    e["citations"],
                                    tuple(e["moved_to"]) if e.get("moved_to") else None)
                       for e in checks["worst"]]),
            per_file=data["per_file"],
            sections=[Section(s["title"], s["path"], s["level"], s["line"], s["end_line"],
                              s["citations"]) for s in data["sections"]],
            unknown=data["unknown"], not_uuid=data["not_uuid"],
            last_reply=data["last_reply"], last_sync=data["last_sync"])
        return tally, data["stamps"]
    except (OSError, MemciteError, ValueError, KeyError, TypeError):
        return None, {}


def _cache_write(path: str, data: dict) -> None:
    import json

    from memcite.durable_files import open_own_folder, replace_file_at
    from memcite.errors import MemciteError

    try:
        fd = open_own_folder(os.path.dirname(path))  # never a link, never another user's
        try:
            # 0600 whatever the umask: the tally names cited paths and notes' places.
            replace_file_at(fd, os.path.basename(path), json.dumps(data).encode("utf-8"), path,
                            0o600)
        finally:
            os.close(fd)
    except (OSError, MemciteError):
        pass  # a cache that cannot be written only costs time (a planted link is refused)
