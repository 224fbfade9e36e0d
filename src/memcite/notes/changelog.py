"""The change log of project notes, in memcite's database: what changed, never the content.

One row per change: when, the command, the project and slug, the entry id (None
for the whole note), the content hashes before and after, how it was confirmed
and by which user, and the archive file involved.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from memcite.ledger.store import transaction

ACTIONS = ("save", "update", "forget", "restore", "purge", "adopt", "hand-edit", "archive",
           "move-in", "move-out", "end-session")


@dataclass
class Change:
    """One change to a note, as the command saw it."""

    action: str
    entry_id: str | None
    hash_before: str | None
    hash_after: str | None
    file: str | None = None


def current_user() -> str:
    try:
        import getpass

        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name on this system
        return "unknown"


def _stored(text: str | None) -> str | None:
    """As the change log keeps a path or a name: any byte an odd file name holds escaped,
    secrets masked (a log line outlives the note)."""
    from memcite.secrets import mask_secrets
    from memcite.untrusted import storable

    return None if text is None else mask_secrets(storable(text))


def log_changes(conn: sqlite3.Connection, *, project: str, slug: str, command: str,
                confirmed_by: str, changes: list[Change], at: int | None = None) -> None:
    """Append ``changes`` in one transaction."""
    when = int(time.time()) if at is None else at
    user = current_user()
    with transaction(conn):
        conn.executemany(
            "INSERT INTO note_log (at, command, action, project, slug, entry_id, hash_before,"
            " hash_after, confirmed_by, user, file) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(when, command, change.action, _stored(project), _stored(slug), change.entry_id,
              change.hash_before, change.hash_after, confirmed_by, _stored(user),
              _stored(change.file)) for change in changes],
        )


def read_log(conn: sqlite3.Connection, *, slug: str | list[str], entry_id: str | None = None,
             limit: int = 0) -> list[dict]:
    """The log of one note (of several, by their log slugs: an entry's history across the
    scopes it moved through), one entry's when ``entry_id``, oldest first."""
    slugs = [slug] if isinstance(slug, str) else list(slug)
    query = ("SELECT id, at, command, action, project, slug, entry_id, hash_before, hash_after,"
             f" confirmed_by, user, file FROM note_log WHERE slug IN ({','.join('?' * len(slugs))})")
    params: list = list(slugs)
    if entry_id is not None:
        query += " AND entry_id = ?"
        params.append(entry_id)
    query += " ORDER BY id"
    rows = conn.execute(query, params).fetchall()
    if limit:
        rows = rows[-limit:]
    names = ("id", "at", "command", "action", "project", "slug", "entry_id", "hash_before",
             "hash_after", "confirmed_by", "user", "file")
    return [dict(zip(names, row, strict=True)) for row in rows]


def last_hashes(conn: sqlite3.Connection, slug: str) -> dict[str, str | None]:
    """Each entry id's content hash after its last logged change (None: forgotten)."""
    rows = conn.execute(
        "SELECT entry_id, hash_after FROM note_log WHERE slug = ? AND entry_id IS NOT NULL"
        " ORDER BY id", (slug,))
    return {entry_id: hash_after for entry_id, hash_after in rows}
