"""``memcite restore`` as a library function: undo ``prune --apply`` for the given thread
ids, every request, those since a time or of one batch: requests withdrawn, rows put back
into Codex's table, files an older memcite moved put back. The caller opens the ledger
for writing and passes the time.
"""

from __future__ import annotations

from memcite.errors import InputError
from memcite.value_classes import Slots

_OPEN = ("SELECT id, thread_id FROM forget_requests WHERE state IN ('done', 'forgotten', "
         "'pending')")


class Restored(Slots):
    """What was undone: requests (``undone``), files an older memcite archived (``legacy``),
    and the ids asked for that had nothing to undo (``unknown``)."""

    __slots__ = ("undone", "legacy", "unknown")
    _fields = __slots__

    def __init__(self, undone: list, legacy: list, unknown: list[str]) -> None:
        self.undone = undone
        self.legacy = legacy
        self.unknown = unknown

    @property
    def done(self) -> list:
        return [u for u in self.undone if u.done] + [r for r in self.legacy if r.done]

    def to_dict(self) -> dict:
        """``memcite restore --json``."""
        return {"restored": [u.to_dict() for u in self.undone],
                "legacy_archive": [r.to_dict() for r in self.legacy],
                "not_found": self.unknown}


def thread_ids_to_restore(given: list[str]) -> list[str]:
    """The ids as memcite keeps them; one that is no thread id (a UUID) is an ``InputError``."""
    from memcite.citations.thread_ids import normalize_thread_id

    wanted = []
    for text in given:
        normalized = normalize_thread_id(text.strip())
        if normalized is None:
            raise InputError(f"{text!r} is not a thread id (a UUID)",
                             hint="`memcite archived` lists the ids")
        wanted.append(normalized)
    return wanted


def restore(conn, *, thread_ids: list[str], every: bool = False, since: int | None = None,
            batch: str | None = None, now: int) -> Restored:
    """Undo the requests to forget of ``thread_ids`` (normalized), of ``every`` one, those
    made since ``since``, or of the batch whose id starts with ``batch``."""
    from memcite.retention.archive import restore_memories
    from memcite.retention.forget import undo_requests

    rows = conn.execute(_OPEN).fetchall()
    picked = [rid for rid, thread in rows if every or thread in thread_ids]
    if since is not None:
        picked += [r[0] for r in conn.execute(_OPEN + " AND requested_at >= ?", (since,))]
    if batch is not None:
        picked += [r[0] for r in conn.execute(_OPEN + " AND batch LIKE ?",
                                              (batch.strip() + "%",))]
    undone = undo_requests(conn, picked, now=now)
    found = {u.thread_id for u in undone}
    legacy = restore_memories(conn, thread_ids=[t for t in thread_ids if t not in found],
                              all_archived=every, since=since, now=now, missing_ok=True)
    unknown = [t for t in thread_ids
               if t not in found and not any(r.thread_id == t for r in legacy)]
    return Restored(undone, legacy, unknown)
