"""``prune --rule tiered``: the entries the tier windows judge, and the request to Codex.

memcite never edits Codex's ``MEMORY.md``. For its entries, ``--apply`` writes one
ad-hoc note (Codex's sanctioned channel, ``extensions/ad_hoc/notes/``) asking the
consolidation agent to remove or review each entry, with its reason and evidence.
The request is journaled in ``entry_requests`` like ``prune --apply``'s
(``memcite.retention.forget``): the intent (``pending``) is committed, the note
written atomically, the rows marked ``done``; a run that died in between is settled
by the next one from what is there. An entry already asked for (same content, a
request ``done``) is not asked again. memcite's own notes are acted on by the
command (``memcite.notes.operations.forget_note``), not here.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import uuid
from dataclasses import dataclass, field

from memcite.display import count
from memcite.durable_files import LinkRefused
from memcite.ledger.adhoc_notes import NOTES_FOLDER, adhoc_note_name
from memcite.ledger.store import transaction
from memcite.retention.entry_report import FileEntries, created_of, entry_row
from memcite.retention.entry_usage import EntryUsage
from memcite.retention.forget import (
    ForgetError,
    ForgetRefused,
    journal_lock,
    write_new_file,
)
from memcite.retention.rules import format_day
from memcite.retention.tiers import DEFAULT, KEEP, PRUNE, TierWindows, Verdict, judge


@dataclass(frozen=True, slots=True)
class TieredEntry:
    """An entry with a tier and what the tiered rule says of it."""

    file: FileEntries
    usage: EntryUsage
    verdict: Verdict

    @property
    def content_sha256(self) -> str:
        """What tells this entry apart from another, whatever line it is on."""
        return hashlib.sha256(self.usage.entry.body.encode("utf-8", "surrogatepass")).hexdigest()

    def to_dict(self) -> dict:
        return {**entry_row(self.file, self.usage), "action": self.verdict.action,
                "reason": self.verdict.reason, "days_unused": self.verdict.days_unused}


def judge_entries(files: list[FileEntries], *, now: int, windows: TierWindows = DEFAULT,
                  last_consolidation: int | None = None) -> tuple[list[TieredEntry], int]:
    """``(every entry with a tier and its verdict, in file order; entries without a tier)``;
    ``last_consolidation``: when Codex's last consolidation succeeded (``last_consolidation``
    below), which resets or accelerates each entry's decay."""
    judged, untiered = [], 0
    for file in files:
        for usage in file.usage:
            if usage.tier is None:
                untiered += 1
                continue
            verdict = judge(usage.tier, last_cited=usage.last_cited,
                            created_at=created_of(file, usage), now=now, windows=windows,
                            last_consolidation=last_consolidation)
            judged.append(TieredEntry(file, usage, verdict))
    return judged, untiered


def to_act_on(judged: list[TieredEntry], kind: str) -> list[TieredEntry]:
    """The entries of one kind of file (``codex`` or ``note``) whose verdict is not keep."""
    return [item for item in judged if item.file.kind == kind and item.verdict.action != KEEP]


# --------------------------------------------------------------------------- the note


def request_text(entries: list[TieredEntry], *, at: int, batch: str) -> str:
    """The ad-hoc note asking Codex's consolidation agent to remove or review ``entries``."""
    remove = [item for item in entries if item.verdict.action == PRUNE]
    review = [item for item in entries if item.verdict.action != PRUNE]
    lines = [
        f"# Tiered retention: remove {len(remove)}, review {len(review)} MEMORY.md "
        f"entr{'y' if len(entries) == 1 else 'ies'}",
        "",
        "The user asked memcite (a tool that audits how memories are cited) to apply tiered",
        f"retention to MEMORY.md (as of {format_day(at)}). At the next consolidation, remove",
        "each entry listed under \"Remove\", and for each one under \"Review\" decide whether",
        "it still holds: if not, demote it one tier (CORE to IMP, IMP to SEC) or drop it.",
        "Find each entry by its text (its line numbers may have moved). Keep everything else",
        "as it is.",
        "",
        f"Request {batch}, made by `memcite prune --rule tiered --apply`.",
    ]
    for title, items in (("Remove", remove), ("Review (demote or drop)", review)):
        if not items:
            continue
        lines += ["", f"## {title}", ""]
        for item in items:
            entry, usage = item.usage.entry, item.usage
            last = format_day(usage.last_cited) if usage.last_cited else "never"
            span = (f"line {entry.line_start}" if entry.line_start == entry.line_end
                    else f"lines {entry.line_start}-{entry.line_end}")
            lines.append(f"- MEMORY.md {span}: [{usage.tier}] {entry.text}")
            lines.append(f"  - why: {item.verdict.reason}")
            lines.append(f"  - evidence: cited {count(usage.citations, 'time')} in the replies memcite "
                         f"recorded; last cited {last}")
    return "\n".join(lines) + "\n"


@dataclass
class EntryRequestResult:
    """What one ``prune --rule tiered --apply`` asked of Codex for ``MEMORY.md``."""

    batch: str
    note_path: str | None = None
    asked: list[dict] = field(default_factory=list)
    dropped: list[dict] = field(default_factory=list)  # not asked again, and why
    settled: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"batch": self.batch, "note_path": self.note_path, "asked": self.asked,
                "dropped": self.dropped, "settled": self.settled}


_INSERT = (
    "INSERT INTO entry_requests (batch, codex_home, path, line_start, line_end, entry_sha256,"
    " title, tier, action, reason, citations, last_cited, state, requested_at, note_path,"
    " note_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)")


def request_entries(conn: sqlite3.Connection, entries: list[TieredEntry], *, codex_home: str,
                    memory_folder: str, now: int, as_of: int | None = None,
                    checkpoint=None) -> EntryRequestResult:
    """Ask Codex's consolidation, with one ad-hoc note, to remove or review ``entries``
    (judged at ``as_of``, default ``now``; the note is named and journaled at ``now``)."""
    checkpoint = checkpoint or (lambda step: None)
    result = EntryRequestResult(uuid.uuid4().hex)
    if not os.path.isdir(memory_folder):
        raise ForgetRefused(f"{memory_folder}: no memory folder; no note written",
                            hint="is this the Codex home? pass it with --codex-home")
    folder = os.path.join(memory_folder, NOTES_FOLDER)
    with journal_lock(conn):
        result.settled = settle_entry_requests(conn, now=now)
        with transaction(conn):
            keep = []
            for item in entries:
                asked = conn.execute(
                    "SELECT note_path FROM entry_requests WHERE codex_home = ? AND entry_sha256"
                    " = ? AND state IN ('pending', 'done') LIMIT 1",
                    (codex_home, item.content_sha256)).fetchone()
                if asked:
                    result.dropped.append({**item.to_dict(), "why": "already asked in "
                                           f"{os.path.basename(asked[0])}"})
                else:
                    keep.append(item)
            if not keep:
                return result
            name = adhoc_note_name(now, f"memcite tiered retention {len(keep)} entries "
                                        f"{result.batch[:8]}")
            path = os.path.join(folder, name)
            data = request_text(keep, at=now if as_of is None else as_of,
                                batch=result.batch).encode("utf-8",
                                                                          "surrogateescape")
            digest = hashlib.sha256(data).hexdigest()
            for item in keep:
                entry, usage = item.usage.entry, item.usage
                conn.execute(_INSERT, (
                    result.batch, codex_home, item.file.path, entry.line_start, entry.line_end,
                    item.content_sha256, entry.title[:200], usage.tier, item.verdict.action,
                    item.verdict.reason, usage.citations, usage.last_cited, now, path, digest))
        checkpoint("intent_committed")
        try:
            write_new_file(path, data, root=memory_folder)
        except LinkRefused:
            _finish(conn, result.batch, "rolled_back", now, f"a link in the way of {path}")
            raise
        except OSError as exc:
            problem = f"could not write {path}: {exc.strerror or exc}"
            _finish(conn, result.batch, "rolled_back", now, problem)
            raise ForgetError(f"{problem}; nothing was asked (the request is rolled back)",
                              hint="check that the memory folder is writable") from None
        checkpoint("note_written")
        _finish(conn, result.batch, "done", now)
    result.note_path = path
    result.asked = [item.to_dict() for item in keep]
    return result


def _finish(conn: sqlite3.Connection, batch: str, state: str, now: int,
            problem: str | None = None) -> None:
    with transaction(conn):
        conn.execute("UPDATE entry_requests SET state = ?, completed_at = ?, problem = ?"
                     " WHERE batch = ? AND state = 'pending'", (state, now, problem, batch))


def settle_entry_requests(conn: sqlite3.Connection, *, now: int) -> list[dict]:
    """Finish or roll back requests a run that died left ``pending``: done when the note is
    there with the bytes memcite meant to write, else rolled back (a partial note removed)."""
    from memcite.retention.forget import read_note_bytes, temp_path

    rows = conn.execute("SELECT DISTINCT batch, note_path, note_sha256 FROM entry_requests"
                        " WHERE state = 'pending'").fetchall()
    settled = []
    for batch, note_path, digest in rows:
        data = read_note_bytes(note_path)
        done = data is not None and hashlib.sha256(data).hexdigest() == digest
        if not done and os.path.lexists(temp_path(note_path)):
            os.unlink(temp_path(note_path))
        _finish(conn, batch, "done" if done else "rolled_back", now,
                None if done else "memcite stopped before this was done")
        settled.append({"batch": batch, "note_path": note_path,
                        "state": "done" if done else "rolled_back"})
    return settled


__all__ = ["EntryRequestResult", "TieredEntry", "judge_entries",
           "request_entries",
           "request_text", "settle_entry_requests", "to_act_on"]
