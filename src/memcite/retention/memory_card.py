"""Everything memcite knows of one memory, for ``memcite show``.

Its label and place (cwd, branch, summary file), its times, Codex's and memcite's
counts side by side, whether Codex still has it (and any request to forget it),
its recent citations with the check of each cited entry, and the first lines of
its rollout summary, read inside the memory folder only.

A cited range is hashed when the reply is recorded; for a reply ingested long after
it was made (``ingest`` of an old session), as the memory folder's git history had
the file at the reply's time (``memcite.ledger.memory_history``), else not at all.
``show`` checks each entry as ``stats`` does, against the hash recorded, and says what
that hash was taken from; only for a reply ingested late it asks the history again (the
same hash, unless the reply was ingested before memcite hashed from the history).
"""

from __future__ import annotations

import os
import sqlite3

from memcite.citations.thread_ids import normalize_thread_id
from memcite.display import count
from memcite.errors import InputError
from memcite.ledger.codex_home import codex_memory_folder
from memcite.ledger.memory_files import LATE_HASH_SECONDS, MAX_FILE_BYTES, byte_lines
from memcite.ledger.memory_history import MemoryHistory
from memcite.retention.checks import MemoryFolder, check_entry, moved_to
from memcite.retention.labels import memory_label
from memcite.times import iso_utc as _iso

SUMMARY_LINES = 8
_READ_CAP = 64 * 1024


def _time(value: int | None) -> int | None:
    """Unix seconds, as every memcite JSON gives a time (``--json`` adds ``<key>_iso``)."""
    return None if value is None else int(value)


def memory_card(conn: sqlite3.Connection, thread_id: str, *, memory_root: str | None,
                limit: int = 10) -> dict:
    """The card of memory ``thread_id`` (an ``InputError`` when it is not known).

    Citations and the summary are read in the memory folder of the Codex home the memory
    was synced from, when it is there, else in ``memory_root``.
    """
    normalized = normalize_thread_id(thread_id.strip())
    if normalized is None:
        raise InputError(f"{thread_id!r} is not a thread id (a UUID)",
                         hint="`memcite stats` lists memories with their ids")
    row = conn.execute(
        "SELECT rollout_slug, rollout_summary_file, cwd, git_branch, codex_home, source,"
        " source_updated_at, generated_at, first_synced_at, missing_since, archived_at,"
        " usage_count, last_usage, codex_usage_count, codex_last_usage, rollout_path"
        " FROM memories WHERE thread_id = ?", (normalized,)).fetchone()
    if row is None:
        raise InputError(f"{normalized}: no such memory in memcite's database",
                         hint="run `memcite sync` if it is new")
    (slug, summary_file, cwd, branch, home, source, updated, generated, first_synced,
     missing, archived, uses, last, codex_uses, codex_last, rollout_path) = row
    own = codex_memory_folder(home) if home and os.path.isdir(home) else None
    if own and os.path.isdir(own):
        memory_root = own
    from memcite.retention.stats import inventory_knew

    folder = MemoryFolder(memory_root, known_once=inventory_knew(conn, home))
    requests = [dict(zip(("way", "state", "requested_at", "note_path"), r, strict=True))
                for r in conn.execute(
                    "SELECT way, state, requested_at, note_path FROM forget_requests"
                    " WHERE thread_id = ? ORDER BY id DESC", (normalized,))]
    citations, total = _citations(conn, normalized, folder, memory_root, limit)
    lines, problem = _summary_lines(folder, summary_file)
    return {
        "thread_id": normalized,
        "label": memory_label(slug, summary_file, cwd),
        "cwd": cwd, "git_branch": branch, "codex_home": home,
        "rollout_summary_file": summary_file, "rollout_path": rollout_path, "source": source,
        "times": {"source_updated_at": _time(updated), "generated_at": _time(generated),
                  "first_synced_at": _time(first_synced), "missing_since": _time(missing),
                  "archived_at": _time(archived)},
        "counts": {"memcite": {"usage_count": uses, "last_usage": _time(last)},
                   "codex": {"usage_count": codex_uses, "last_usage": _time(codex_last)}},
        "status": _status(source, missing, archived, requests),
        "forget_requests": requests,
        "citation_count": total,
        "citations": citations,
        "memory_root": folder.root,
        "summary_lines": lines,
        "summary_problem": problem,
    }



def memory_card_of(locations, thread_id: str, *, limit: int = 10) -> dict:
    """``memory_card`` from the run's ledger, read-only (``locations``, a
    ``memcite.paths.Locations``), its memory folder the Codex home's (a home that is not a
    folder is an error, saying how it was named)."""
    from memcite.ledger.codex_home import locate
    from memcite.ledger.database import ledger_opener

    memory_root = locate(locations).memory_folder
    conn = ledger_opener(locations, write=False)()
    try:
        return memory_card(conn, thread_id, memory_root=memory_root, limit=limit)
    finally:
        conn.close()

def _status(source: str, missing: int | None, archived: int | None, requests: list[dict]) -> str:
    if missing is not None:
        return f"gone from Codex (missing since {_iso(missing)})"
    if archived is not None:
        return "archived by an earlier memcite (summary file moved out)"
    asked = [r for r in requests if r["state"] == "done"]
    where = "in Codex's table" if source == "stage1_outputs" else "only in the memory folder"
    if asked:
        how = "an ad-hoc note" if asked[0]["way"] == "note" else "rows deleted from its table"
        return f"{where}; asked to forget ({how}), still in Codex"
    return where


def _citations(conn: sqlite3.Connection, thread_id: str, folder: MemoryFolder,
               memory_root: str | None, limit: int) -> tuple[list[dict], int]:
    """The latest replies citing ``thread_id`` (newest first) with their cited entries."""
    total = conn.execute("SELECT count(*) FROM cited_ids WHERE thread_id = ? AND counted = 1",
                         (thread_id,)).fetchone()[0]
    reply_ids = [r[0] for r in conn.execute(
        "SELECT DISTINCT reply_id FROM cited_ids WHERE thread_id = ? AND counted = 1"
        " ORDER BY reply_id DESC LIMIT ?", (thread_id, -1 if limit == 0 else limit))]
    history = MemoryHistory(memory_root)
    found = []
    for reply_id in reply_ids:
        replied_at, recorded_at, origin = conn.execute(
            "SELECT replied_at, recorded_at, origin FROM replies WHERE id = ?",
            (reply_id,)).fetchone()
        late = recorded_at - replied_at > LATE_HASH_SECONDS
        entries = []
        for path, start, end, digest in conn.execute(
                "SELECT path, line_start, line_end, lines_sha256 FROM cited_entries"
                " WHERE reply_id = ? ORDER BY position", (reply_id,)):
            entries.append(check_cited_entry(
                folder, history, path, start, end, digest, replied_at=replied_at,
                late=recorded_at - replied_at if late else 0, origin=origin))
        found.append({"reply_id": reply_id, "replied_at": _time(replied_at),
                      "recorded_at": _time(recorded_at), "origin": origin,
                      "hashed_seconds_after_reply": recorded_at - replied_at,
                      "entries": entries})
    return found, total


def check_cited_entry(folder: MemoryFolder, history: MemoryHistory, path: str, start: int,
                      end: int, digest: str | None, *, replied_at: int, late: int | bool,
                      origin: str | None = None) -> dict:
    """One cited entry checked against the folder now, as ``stats`` checks it: against the
    hash recorded with the reply, taken when it was recorded (``late``: that many seconds
    after the reply was made). For a reply ingested late (``origin`` ``ingest:...``) that
    hash is the file as the memory folder's git history had it at the reply's time, else
    none (``unverified``): the history is asked again (replies ingested before memcite hashed
    them so kept the file as it was when ingested)."""
    basis = "hash taken when the reply was recorded"
    if late and (origin or "").startswith("ingest:"):
        digest = history.lines_sha256_at(path, start, end, replied_at)
        basis = ("hash from the memory folder's git history at the reply's time"
                 if digest else "ingested long after the reply and no git history: unverified")
    elif late:
        basis += f", {_duration(int(late))} after it was made"
    outcome = check_entry(folder, path, start, end, digest)
    moved = moved_to(folder, path, start, end, digest) if outcome == "moved" else None
    return {"path": path, "line_start": start, "line_end": end, "outcome": outcome,
            "moved_to": list(moved) if moved else None, "basis": basis}


def _duration(seconds: int) -> str:
    """``seconds`` in the largest whole unit: days, else hours, else minutes."""
    for size, unit in ((86_400, "day"), (3_600, "hour"), (60, "minute")):
        if seconds >= size:
            return count(seconds // size, unit)
    return f"{seconds} seconds"


def _summary_lines(folder: MemoryFolder, summary_file: str | None) -> tuple[list[str], str | None]:
    """The first lines of the summary after its header, read inside the memory folder."""
    if not summary_file:
        return [], "no summary file known (run `memcite sync`)"
    if folder.root is None:
        return [], "no memory folder"
    outcome, real = folder.resolve(f"rollout_summaries/{summary_file}")
    if real is None:
        return [], f"rollout_summaries/{summary_file}: {outcome.replace('_', ' ')}"
    held = folder.lines(real)  # read when resolved, from the descriptor the check opened
    if held is None:
        return [], (f"rollout_summaries/{summary_file}: cannot read (unreadable, or larger"
                    f" than {MAX_FILE_BYTES // (1024 * 1024)} MiB)")
    lines = [line.decode("utf-8", "replace") for line in byte_lines(held.data[:_READ_CAP])]
    body_start = next((i + 1 for i, line in enumerate(lines) if not line.strip()), 0)
    body = lines[body_start:]
    while body and not body[0].strip():
        body.pop(0)
    return body[:SUMMARY_LINES], None


def render_text(card: dict) -> str:
    """The lines ``memcite show`` prints for ``memory_card``'s ``card``."""
    from memcite.retention.checks import OUTCOME_MEANING
    from memcite.retention.stats_text import day

    lines = []
    out = lines.append
    out(f"{card['thread_id']}  {card['label']}\n")
    for key, title in (("cwd", "cwd"), ("git_branch", "branch"), ("codex_home", "Codex home"),
                       ("rollout_summary_file", "summary file"), ("source", "found in")):
        if card.get(key):
            out(f"  {title + ':':<14}{card[key]}\n")
    for key, title in (("source_updated_at", "updated"), ("generated_at", "extracted"),
                       ("first_synced_at", "first synced"), ("missing_since", "gone since"),
                       ("archived_at", "archived")):
        if card["times"].get(key):
            out(f"  {title + ':':<14}{_iso_or_dash(card['times'][key])}\n")
    counts = card["counts"]
    out(f"  {'citations:':<14}memcite's log {counts['memcite']['usage_count']} (last "
        f"{_iso_or_dash(counts['memcite']['last_usage'])}), Codex's counters "
        f"{'-' if counts['codex']['usage_count'] is None else counts['codex']['usage_count']}"
        f" (last {_iso_or_dash(counts['codex']['last_usage'])})\n")
    out(f"  {'in Codex:':<14}{card['status']}\n")
    if card["forget_requests"]:
        out("  requests to forget:\n")
        for item in card["forget_requests"]:
            out(f"    {item['state']:<11} {day(item['requested_at'])}  way {item['way']}\n")
    out(f"\nRecent citations ({len(card['citations'])} of {card['citation_count']}), their line "
        "ranges checked in the memory folder now:\n")
    if not card["citations"]:
        out("  none recorded\n")
    seen: list[str] = []
    for item in card["citations"]:
        out(f"  {_iso_or_dash(item['replied_at'])}  {item['origin'] or '-'}\n")
        basis = None
        for entry in item["entries"]:
            if entry["basis"] != basis:  # said once for the entries that share it
                basis = entry["basis"]
                out(f"    against the {basis}\n" if basis.startswith("hash")
                    else f"    {basis}\n")
            out(f"      {entry['path']}:{entry['line_start']}-{entry['line_end']}  "
                f"{entry['outcome']}{_moved(entry)}\n")
            if entry["outcome"] not in seen:
                seen.append(entry["outcome"])
    for outcome in seen:
        out(f"  ({outcome}: {OUTCOME_MEANING[outcome]})\n")
    out("\nRollout summary:\n")
    if not card["summary_lines"]:
        out(f"  {card['summary_problem'] or 'no summary file'}\n")
    for line in card["summary_lines"]:
        out(f"  | {line}\n")
    return "".join(lines)


def _iso_or_dash(value: int | None) -> str:
    return "-" if value is None else (_iso(value) or str(value))


def _moved(entry: dict) -> str:
    moved = entry.get("moved_to")
    return f" (now at {moved[0]}-{moved[1]})" if moved else ""
