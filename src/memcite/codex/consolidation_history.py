"""``memcite consolidation``'s runs: each consolidation judged from memcite's snapshots.

``runs_of`` pairs the snapshots of one memory folder into runs (a run ends where
``MEMORY.md`` or ``memory_summary.md`` changed; the snapshots in between, a note added say,
only add to the sources the run had); ``judge_runs`` reads the ledger's citations and
forget requests once and judges each run (``memcite.codex.consolidation_runs.judge_run``).
``store_history`` is what ``consolidation`` shows for one store: it first looks at the
folder (a snapshot when it changed), then judges the last run, or each with ``history``.
"""

from __future__ import annotations

import os
import sqlite3

from memcite.codex.consolidation_runs import (
    Cited,
    Forget,
    View,
    finding_count,
    growth_of,
    judge_run,
)
from memcite.ledger.snapshots import (
    SnapshotStore,
    save_judged_runs,
    snapshot_folder,
    take_snapshot,
)
from memcite.ledger.v2_status import MIN_CONSOLIDATED_THREADS, v2_readiness

MEMORY_PATHS = ("MEMORY.md", "memory_summary.md")
MAX_RUNS = 200


def view_of(store: SnapshotStore, snapshot: dict, extra: list[dict] = ()) -> View:
    """A snapshot's texts, with the notes and rollout summaries of ``extra`` snapshots (those
    between the run's ends) added."""
    files = snapshot.get("files") or {}
    summaries: dict[str, str] = {}
    notes: dict[str, str] = {}
    for item in [*extra, snapshot]:
        for name, digest in (item.get("rollout_summaries") or {}).items():
            summaries[name] = store.text(digest) or ""
        for name, digest in (item.get("notes") or {}).items():
            notes[name] = store.text(digest) or ""
    return View(snapshot_id=snapshot.get("id"), taken_at=int(snapshot.get("taken_at") or 0),
                memory=store.text(files.get("MEMORY.md")),
                summary=store.text(files.get("memory_summary.md")),
                raw=store.text(files.get("raw_memories.md")), rollout_summaries=summaries,
                notes=notes, jobs=snapshot.get("jobs"), baseline=bool(snapshot.get("baseline")),
                tree=(store.text(snapshot.get("tree")) or "").split("\n"))


def runs_of(snapshots: list[dict]) -> list[tuple[dict, dict, list[dict]]]:
    """``(before, after, between)`` for each run of one folder's snapshots (oldest first)."""
    def memory(s: dict) -> tuple:
        files = s.get("files") or {}
        return files.get("MEMORY.md"), files.get("memory_summary.md")

    runs = []
    start = 0
    for index in range(1, len(snapshots)):
        if memory(snapshots[index]) != memory(snapshots[start]):
            runs.append((snapshots[start], snapshots[index], snapshots[start + 1:index]))
            start = index
    return runs


def ledger_citations(db_path: str, *, since: int) -> list[Cited]:
    """The citations of MEMORY.md and the summary since ``since``, each range once with its
    latest time and the memories its replies cited."""
    from memcite.ledger.store import open_store

    if not os.path.isfile(db_path):
        return []
    conn = open_store(db_path)
    try:
        rows = conn.execute(
            "SELECT e.path, e.line_start, e.line_end, e.lines_sha256, max(r.replied_at),"
            " group_concat(DISTINCT i.thread_id)"
            " FROM cited_entries e JOIN replies r ON r.id = e.reply_id"
            " LEFT JOIN cited_ids i ON i.reply_id = e.reply_id AND i.thread_id IS NOT NULL"
            " WHERE r.replied_at >= ? AND e.path IN (?, ?, ?, ?)"
            " GROUP BY e.path, e.line_start, e.line_end, e.lines_sha256",
            (since, *MEMORY_PATHS, *(f"./{p}" for p in MEMORY_PATHS))).fetchall()
    except sqlite3.Error:
        return []
    finally:
        conn.close()
    return [Cited(path, start, end, digest, int(at), (threads or "").split(",") if threads else ())
            for path, start, end, digest, at, threads in rows]


def ledger_forgets(db_path: str, codex_home: str) -> list[Forget]:
    """memcite's requests to forget memories of ``codex_home`` that stand (done, forgotten)."""
    from memcite.ledger.store import open_store

    if not os.path.isfile(db_path):
        return []
    conn = open_store(db_path)
    try:
        rows = conn.execute(
            "SELECT thread_id, coalesce(completed_at, requested_at), note_path FROM forget_requests"
            " WHERE codex_home = ? AND state IN ('done', 'forgotten')",
            (os.path.realpath(codex_home),)).fetchall()
    except sqlite3.Error:
        return []
    finally:
        conn.close()
    return [Forget(thread, int(at or 0), os.path.basename(note) if note else None)
            for thread, at, note in rows]


def _masked(judged: dict) -> dict:
    """The run's memory text with its secrets masked (``memcite.secrets.mask_secrets``):
    the text and --json never show one."""
    from memcite.secrets import mask_secrets

    for kind in ("lost", "rewritten", "unsupported", "came_back"):
        for item in judged[kind]:
            for key in ("text", "now_text"):
                if key in item:
                    item[key] = mask_secrets(item[key])
            for key in ("facts", "facts_gone", "facts_new"):
                if key in item:
                    item[key] = [mask_secrets(f) for f in item[key]]
    return judged


def run_summary(before: dict, after: dict, judged: dict) -> dict:
    """One run as ``consolidation --json`` shows it (secrets masked)."""
    judged = _masked(judged)
    lost = judged["lost"]
    return {"before_snapshot": before.get("id"), "after_snapshot": after.get("id"),
            "before_taken_at": before.get("taken_at"), "after_taken_at": after.get("taken_at"),
            "from_baseline": bool(before.get("baseline")),
            "findings": finding_count(judged),
            "counts": {"lost": len(lost),
                       "lost_unexpected": sum(1 for x in lost if not x["expected"]),
                       "rewritten": len(judged["rewritten"]),
                       "unsupported": len(judged["unsupported"]),
                       "came_back": len(judged["came_back"]),
                       "notes_absorbed": sum(1 for n in judged["notes"] if n["absorbed"]),
                       "notes_not_absorbed": sum(1 for n in judged["notes"] if not n["absorbed"])},
            **judged}


def judge_runs(store: SnapshotStore, snapshots: list[dict], *, db_path: str, codex_home: str,
               now: int, window_days: int, budget_tokens: int, last_only: bool) -> list[dict]:
    """Each run of one folder's snapshots judged, newest first (the last one only, with
    ``last_only``)."""
    runs = runs_of(snapshots)[-(1 if last_only else MAX_RUNS):]
    if not runs:
        return []
    cited = ledger_citations(db_path, since=now - window_days * 86_400)
    forgets = ledger_forgets(db_path, codex_home)
    out = []
    for before, after, between in reversed(runs):
        judged = judge_run(view_of(store, before), view_of(store, after, between), cited,
                           forgets, now=now, window_days=window_days,
                           budget_tokens=budget_tokens)
        out.append(run_summary(before, after, judged))
    return out


def store_history(db_path: str, codex_home: str, store: str, memory_folder: str, state_db: str,
                  *, now: int, window_days: int, budget_tokens: int, history: bool,
                  look: bool = True) -> dict:
    """``consolidation``'s part for one store: the look at the folder (a snapshot when it
    changed), the snapshots kept, and the last run judged (every run with ``history``)."""
    folder = os.path.realpath(memory_folder)
    taken = None
    problem = None
    if look and os.path.isdir(folder):
        try:
            taken = take_snapshot(db_path, codex_home, store, folder, state_db, now=now,
                                  reason="consolidation")
        except OSError as exc:
            problem = f"{snapshot_folder(db_path)}: cannot keep a snapshot ({exc.strerror or exc})"
        except Exception as exc:  # noqa: BLE001 - a refused link: said, nothing written
            problem = str(exc)
    snapshots_store = SnapshotStore(snapshot_folder(db_path))
    snapshots = snapshots_store.for_folder(folder)
    runs = judge_runs(snapshots_store, snapshots, db_path=db_path, codex_home=codex_home,
                      now=now, window_days=window_days, budget_tokens=budget_tokens,
                      last_only=not history) if snapshots else []
    first = snapshots[0] if snapshots else None
    latest = snapshots[-1] if snapshots else None
    current = None
    if latest is not None:
        view = view_of(snapshots_store, latest)
        current = growth_of(view.memory, view.summary, budget_tokens)
    note = None
    if first is not None and first.get("baseline"):
        note = ("memcite's history of this folder starts at its snapshot of "
                f"{_when(first.get('taken_at'))} (the baseline): what earlier runs did is unknown")
    return {"folder": folder, "snapshots": len(snapshots),
            "snapshot_taken": bool(taken and taken.get("taken")),
            "baseline_at": first.get("taken_at") if first else None,
            "history_note": note, "problem": problem, "growth_now": current,
            "runs": runs}


def _when(seconds) -> str:
    import time

    if not isinstance(seconds, int):
        return "-"
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds))


def consolidation_with_runs(where, *, now: int, history: bool = False, cwd: str | None = None):
    """``memcite consolidation``: ``consolidation_of`` (what Codex records), with what the
    last run (every run, ``history``) did to the memories in use, from memcite's snapshots
    beside its ledger (a look at each store's folder first: a snapshot when it changed), and
    memory store v2's readiness, and, when there is a v2 store, what switching the project of
    ``cwd`` (default: the working directory) to it would change (``memcite.codex.v2_switch``)."""
    from memcite.codex.consolidation import consolidation_of
    from memcite.readpath.instruction_values import DEFAULT_BUDGET

    report = consolidation_of(where, now=now, history=history)
    locations = report.locations
    report.v2_readiness = v2_readiness(locations)
    from memcite.codex import v2_switch

    if v2_switch.wanted(locations):
        try:
            here = os.getcwd() if cwd is None else cwd
        except OSError:  # a working directory removed meanwhile: no project to tell of
            here = None
        if here is not None:
            report.v2_switch = v2_switch.v2_switch_of(locations, here)
    window = report.settings["max_unused_days"]
    if not where.db_is_server:
        for store in report.stores:
            item = store_history(where.db_path, locations.codex_home, store.store, store.folder,
                                 store.db, now=now, window_days=window,
                                 budget_tokens=DEFAULT_BUDGET, history=history)
            report.memory_runs.append({"store": store.store, **item})
            if item["runs"] and not item["problem"]:
                save_judged_runs(where.db_path, item["folder"], item["runs"], now=now)
    return report


__all__ = ["MIN_CONSOLIDATED_THREADS", "consolidation_with_runs", "judge_runs",
           "ledger_citations", "ledger_forgets", "run_summary", "runs_of", "store_history",
           "v2_readiness", "view_of"]
