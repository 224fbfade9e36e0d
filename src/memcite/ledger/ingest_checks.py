"""Reading a session file again when nothing changed: one look-up, not a read.

``memcite ingest FILE`` reads the file from its start, and a paginated file has each
recorded reply's text hashed and compared (see ``memcite.ledger.ingest``). Once a whole
read is done, table ``ingest_checks`` keeps, under the file's real path:

- the file's stamp: device, inode, size, modification and change times (a write moves
  the change time, which no one can set back), with the read's options (``max_bytes``,
  ``settle``) that shape what it finds;
- a digest of the replies recorded under its keys (each key and its text's SHA-256);
- what the read reported (replies, bad and long lines, parents, pending).

A file changed less than two seconds before the read is not noted (see ``SETTLED_NS``).
A later read of the file finds both unchanged and reports the same, every reply a
duplicate, without reading a line: a read could find nothing else, since what it finds
depends only on the file's bytes and the recorded rows of its keys. A file whose stamp
changed (appended to, rewritten by ``codex migrate-rollouts``, touched) or whose recorded
replies changed (rekeyed, forgotten, rebuilt) is read and hashed whole again.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time

from memcite.ledger.store import transaction

_FORMAT = "ingest-check 1"
# What a read reports besides its counts of replies; kept as found.
SUMMARY_FIELDS = ("replies", "lines", "session_id", "bad_lines", "bad_line_count",
                  "long_lines", "long_line_count", "parent_ids", "pending")


# A file changed this little before a read began is never noted: a file system keeps its
# times at a granularity (a clock tick; two seconds on FAT), and a change within the same
# tick as the read would leave the times as noted (git's "racily clean" entries).
SETTLED_NS = 2_000_000_000


def file_stamp(fd: int, *, max_bytes: int, settle: int, before_ns: int | None = None) -> str | None:
    """The stamp of the open file ``fd`` as a read with these options sees it; with
    ``before_ns`` (when the read began), None for a file changed less than ``SETTLED_NS``
    before it."""
    info = os.fstat(fd)
    if before_ns is not None and max(info.st_mtime_ns, info.st_ctime_ns) > before_ns - SETTLED_NS:
        return None
    return (f"{_FORMAT} {info.st_dev} {info.st_ino} {info.st_size} {info.st_mtime_ns} "
            f"{info.st_ctime_ns} max_bytes={max_bytes} settle={settle}")


def rows_digest(conn: sqlite3.Connection, prefixes: list[str]) -> str:
    """SHA-256 of the recorded replies whose keys start with one of ``prefixes``, in key order."""
    digest = hashlib.sha256()
    for prefix in sorted(set(prefixes)):
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)  # the prefix ends with ':'
        digest.update(f"{len(prefix)}:{prefix}\n".encode())
        for key, sha in conn.execute(
                "SELECT reply_key, text_sha256 FROM replies WHERE reply_key >= ? AND reply_key < ?"
                " ORDER BY reply_key", (prefix, end)):
            digest.update(f"{key}\t{sha}\n".encode())
    return digest.hexdigest()


def load_check(conn: sqlite3.Connection, path: str) -> tuple[str, str, dict] | None:
    """``(file_stamp, rows_digest, summary)`` of the last whole read of ``path``, or None
    (never read whole, or a row that does not parse: read again)."""
    from memcite.untrusted import loads_json

    try:
        row = conn.execute("SELECT file_stamp, rows_digest, report FROM ingest_checks"
                           " WHERE path = ?", (path,)).fetchone()
    except sqlite3.OperationalError:
        return None  # an older schema, read only: no table yet
    if row is None:
        return None
    try:
        summary = loads_json(row[2])
    except ValueError:
        return None
    if not isinstance(summary, dict) or set(summary) != set(SUMMARY_FIELDS):
        return None
    return row[0], row[1], summary


def save_check(conn: sqlite3.Connection, path: str, stamp: str, prefixes: list[str],
               summary: dict, *, now: int | None = None) -> None:
    """Note a whole read of ``path`` (its digest taken under the write lock, one transaction)."""
    import json

    with transaction(conn):
        conn.execute(
            "INSERT INTO ingest_checks (path, file_stamp, rows_digest, report, checked_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET"
            " file_stamp = excluded.file_stamp, rows_digest = excluded.rows_digest,"
            " report = excluded.report, checked_at = excluded.checked_at",
            (path, stamp, rows_digest(conn, prefixes),
             json.dumps({name: summary[name] for name in SUMMARY_FIELDS}),
             int(time.time()) if now is None else now))
