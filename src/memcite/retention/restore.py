"""``memcite restore`` as a library function: undo ``prune --apply`` for the given thread
ids, every request, those since a time or of one batch: requests withdrawn, rows put back
into Codex's table, files an older memcite moved put back. The caller opens the ledger
for writing and passes the time.
"""

from __future__ import annotations

from memcite.display import count
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



def restore_in_ledger(locations, *, thread_ids: list[str], every: bool = False,
                      since: int | None = None, batch: str | None = None, now: int) -> Restored:
    """``restore`` in the run's ledger (``locations``, a ``memcite.paths.Locations``): a
    missing database is an error (not created), a damaged one refused (a batch write)."""
    from memcite.ledger.database import open_ledger
    from memcite.ledger.store import open_store

    open_store(locations.db_path, readonly=True).close()
    conn = open_ledger(locations, quick_check=True)
    try:
        return restore(conn, thread_ids=thread_ids, every=every, since=since, batch=batch,
                       now=now)
    finally:
        conn.close()


def restore_exit_code(restored: Restored, named_ids: bool) -> int:
    """An id named that had nothing to undo is a bad input item: the others are restored,
    exit 2; else 0."""
    from memcite.errors import EXIT_BAD_INPUT, EXIT_OK

    failed = restored.unknown or len(restored.done) < len(restored.undone) + len(restored.legacy)
    return EXIT_BAD_INPUT if failed and named_ids else EXIT_OK

def render_text(restored: Restored) -> str:
    """The lines ``memcite restore`` prints for ``restored``."""
    undone, legacy, unknown, done = (restored.undone, restored.legacy, restored.unknown,
                                     restored.done)
    lines = []
    out = lines.append
    out(f"restored {count(len(done), 'memory', 'memories')}\n")
    by_what: dict[str, list] = {}  # one note withdraws many requests: said once, not per line
    for item in undone:
        by_what.setdefault(item.what, []).append(item)
    for what, items in by_what.items():
        if len(items) > 1:
            out(f"  {what}:\n")
        for item in items:
            way = "note" if item.way == "note" else "Codex's database"
            state = "" if item.done else "  (nothing done)"
            tail = "" if len(items) > 1 else f"  {what}"
            out(f"{'    ' if len(items) > 1 else '  '}{item.thread_id}  {item.label or '-'}"
                f"  [{way}]{tail}{state}\n")
    for item in legacy:
        line = f"  {item.thread_id}  [file archived by an earlier memcite]"
        if item.file_to:
            line += f"  {item.file_from} -> {item.file_to}"
        if item.problem:
            line += f"  ({item.problem})"
        out(line + "\n")
    for thread in unknown:
        out(f"  {thread}  not found: no request to forget and nothing archived (skipped)\n")
    ways = {item.way for item in undone if item.done}
    if "codex_db" in ways:
        out("what Codex sees now: the rows put back are in its table again, as they were; "
            "its next consolidation may take them\n")
    if "note" in ways:
        out("what Codex sees now: its table never lost these memories; the withdrawal note "
            "asks its next consolidation to keep them\n")
    return "".join(lines)
