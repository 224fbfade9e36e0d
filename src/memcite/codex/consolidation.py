"""Codex's memory consolidation as Codex records it, read-only: ``memcite consolidation``.

Codex makes memories in two phases, each a row of the ``jobs`` table of the store's
database (``memories_1.sqlite``, or ``memories_v2_1.sqlite``):

- phase 1, extraction: one row per thread, kind ``memory_stage1``, key the thread id;
  its output is the thread's ``stage1_outputs`` row;
- phase 2, consolidation: one row, kind ``memory_consolidate_global``, key ``global``.
  Before a run Codex makes the memory folder a git repository (its *baseline*), writes
  ``phase2_workspace_diff.md`` (what changed since the baseline, new ad-hoc notes
  included) and starts its consolidation agent; after a success it makes the baseline
  again (one commit, "Initialize Codex git baseline") and removes the diff file.

A row keeps its last run only: ``status`` (pending, running, done, error), times,
``retry_at`` (a back-off of one hour after a failure), ``retry_remaining``,
``last_error`` (a short code such as ``failed_agent``, nothing more) and the lease of a
running job. What 0.171 was seen doing is in docs/commands-codex.md
(``memcite consolidation``). Everything here takes ``now`` from its caller, opens
Codex's databases read-only (``open_codex_db``) and runs only ``git ls-tree`` and
``git log`` in the memory folder, hooks off; nothing of Codex's is written.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import subprocess
import time
from dataclasses import dataclass, field

from memcite.display import count
from memcite.errors import MemciteError
from memcite.ledger.adhoc_notes import NOTES_FOLDER, is_adhoc_note_name
from memcite.ledger.codex_home import (
    MEMORY_STORES,
    ROLLOUT_SUMMARIES,
    CodexLocations,
    locate,
    memory_folder,
    open_codex_db,
    state_db_path,
)

HOUR = 3_600
DAY = 86_400
PHASE1_KIND = "memory_stage1"
PHASE2_KIND = "memory_consolidate_global"
PHASE2_KEY = "global"
# Codex 0.171, seen run: a failed job is retried after an hour (retry_at); a consolidation
# that succeeded is not claimed again for six hours (not 5 h 58 min after, yes 6 h after).
RETRY_DELAY_SECONDS = HOUR
SUCCESS_COOLDOWN_SECONDS = 6 * HOUR
DEFAULT_STALE_HOURS = 48
WORKSPACE_DIFF = "phase2_workspace_diff.md"
MAX_DIFF_BYTES = 4 * 1024 * 1024  # Codex caps the file at 4 MiB
MAX_NOTE_BYTES = 16 * 1024 * 1024
MAX_NOTES = 10_000
MAX_LISTED = 20  # thread ids and failures listed per kind (the counts are whole)
_GIT_TIMEOUT = 20

STORE_NAMES = tuple(MEMORY_STORES)  # ("v1", "v2")

# What Codex's short error codes of a consolidation mean (0.171's names).
ERROR_MEANINGS = {
    "failed_agent": "the consolidation agent did not finish: the model or one of its tools "
                    "failed, or the Codex process that ran it exited first (`codex exec` "
                    "does not wait for it)",
    "failed_invalid_artifacts": "the agent finished, but left MEMORY.md or memory_summary.md "
                                "(v2: its summary) missing or invalid",
    "failed_prepare_workspace": "Codex could not make the memory folder its git baseline",
    "failed_sandbox_policy": "Codex could not set up the agent's sandbox",
    "failed_load_stage1_outputs": "Codex could not read its stage1_outputs",
    "failed_sync_workspace_inputs": "Codex could not write raw_memories.md or "
                                    "rollout_summaries/",
    "failed_workspace_status": "git could not compare the memory folder with its baseline",
    "failed_workspace_diff_file": "Codex could not write phase2_workspace_diff.md",
    "failed_spawn_agent": "Codex could not start the consolidation agent",
    "failed_confirm_ownership": "Codex could not confirm it still held the job after the run",
    "failed_workspace_commit": "Codex could not reset the git baseline after the run",
}
NO_MORE_DETAIL = (
    "Codex records no more than this code. More may be in Codex's log database "
    "(logs_2.sqlite in its SQLite home {sqlite_home}, rows of target codex_memories_write, "
    "when Codex logs there) and in the output of the session that ran it ({worker}); the "
    "consolidation agent's own thread is ephemeral: it leaves no session file")
RUN_NOW = (
    "memcite never starts a consolidation. Codex starts one itself when a session starts "
    "(a new `codex exec`, or an interactive session), with [features] memories = true, "
    "once no back-off is in force, six hours after its last success and when no other "
    "Codex holds the job; keep that session open until the run ends (`codex exec` does "
    "not wait for it; a run cut short fails as failed_agent)")


class ConsolidationError(MemciteError):
    """Codex's records could not be read (exit 2)."""


# --------------------------------------------------------------------------- small helpers


def when(seconds: int | None) -> str:
    """A Unix time as ``YYYY-MM-DD HH:MM UTC`` ('-' for None)."""
    if seconds is None:
        return "-"
    try:
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds))
    except (OverflowError, OSError, ValueError):
        return str(seconds)


def iso(seconds: int | None) -> str | None:
    """A Unix time as ISO 8601 UTC, as memcite's --json writes it (None stays None)."""
    if seconds is None:
        return None
    try:
        moment = time.gmtime(seconds)
    except (OverflowError, OSError, ValueError):
        return None
    if not 1 <= moment.tm_year <= 9999:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", moment)


def span(seconds: int) -> str:
    """A duration in words: ``45 min``, ``3 h``, ``2 days``."""
    seconds = max(0, int(seconds))
    if seconds < HOUR:
        return f"{max(1, seconds // 60)} min"
    if seconds < 2 * DAY:
        return f"{seconds // HOUR} h"
    return f"{seconds // DAY} days"


def _timed(out: dict, name: str, seconds: int | None) -> None:
    out[name] = seconds
    out[f"{name}_iso"] = iso(seconds)


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value) -> str | None:
    return value if isinstance(value, str) else None


# --------------------------------------------------------------------------- the jobs table


@dataclass(frozen=True)
class Job:
    """One row of Codex's ``jobs`` table."""

    kind: str
    job_key: str
    status: str | None
    worker_id: str | None = None
    started_at: int | None = None
    finished_at: int | None = None
    lease_until: int | None = None
    retry_at: int | None = None
    retry_remaining: int | None = None
    last_error: str | None = None
    input_watermark: int | None = None
    last_success_watermark: int | None = None


JOB_COLUMNS = ("kind", "job_key", "status", "worker_id", "started_at", "finished_at",
               "lease_until", "retry_at", "retry_remaining", "last_error", "input_watermark",
               "last_success_watermark")


def read_jobs(conn: sqlite3.Connection) -> list[Job] | None:
    """The memory jobs of one store's database (None when it has no ``jobs`` table); a
    column an older Codex lacks reads as NULL."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(jobs)")}
    if "kind" not in columns or "job_key" not in columns:
        return None
    picked = ", ".join(name if name in columns else "NULL" for name in JOB_COLUMNS)
    rows = conn.execute(f"SELECT {picked} FROM jobs WHERE kind IN (?, ?) ORDER BY kind, job_key",
                        (PHASE1_KIND, PHASE2_KIND)).fetchall()
    jobs = []
    for row in rows:
        kind, key, status, worker = (_text(v) for v in row[:4])
        numbers = [_int(v) for v in row[4:9]]
        jobs.append(Job(kind or "", key or "", status, worker, *numbers, _text(row[9]),
                        _int(row[10]), _int(row[11])))
    return jobs


def error_meaning(code: str | None) -> str | None:
    """What a consolidation's ``last_error`` code means, when memcite knows it."""
    return ERROR_MEANINGS.get(code or "")


def consolidation_state(job: Job | None, *, now: int, baseline_at: int | None = None) -> dict:
    """Phase 2 as its job row tells it, at ``now``: ``state`` (never, pending, running,
    stuck, failed, succeeded), the last success when known, a back-off or cool-down in
    force, and when Codex will take the job again at the earliest.

    ``baseline_at`` is the time of the memory folder's git baseline (Codex makes it again
    after every success): the last success when the row no longer says it."""
    out: dict = {"present": job is not None}
    if job is None:
        out.update(state="never", status=None)
        for name in ("started", "finished", "lease_until", "retry_after"):
            _timed(out, name, None)
        out.update(retries_left=None, error=None, error_meaning=None, worker=None,
                   input_watermark=None, success_watermark=None)
        _timed(out, "succeeded", None)
        out["succeeded_from"] = None
        _timed(out, "next_run", None)
        out["next_run_why"] = "no consolidation recorded yet: the next Codex start may run one"
        out["backoff"] = out["cooldown"] = False
        return out
    status = job.status
    running = status == "running"
    stuck = running and (job.lease_until is None or job.lease_until < now)
    # The last run succeeded: a done row, or a pending one (new input queued after a run)
    # whose last run left no error.
    last_ok = status == "done" or (status == "pending" and job.last_error is None
                                   and job.finished_at is not None)
    state = {"done": "succeeded", "error": "failed", "pending": "pending"}.get(
        status or "", "stuck" if stuck else "running" if running else status or "unknown")
    out.update(state=state, status=status)
    _timed(out, "started", job.started_at)
    _timed(out, "finished", job.finished_at)
    _timed(out, "lease_until", job.lease_until)
    _timed(out, "retry_after", job.retry_at)
    out["retries_left"] = job.retry_remaining
    out["error"] = job.last_error
    out["error_meaning"] = error_meaning(job.last_error) if job.last_error else None
    out["worker"] = job.worker_id
    out["input_watermark"] = job.input_watermark
    out["success_watermark"] = job.last_success_watermark
    if last_ok:
        succeeded, source = job.finished_at, "job"
    elif baseline_at is not None and not (status == "error" and job.started_at is not None
                                          and baseline_at >= job.started_at):
        succeeded, source = baseline_at, "baseline"  # not the baseline a failed run made
    else:
        succeeded, source = None, None
    _timed(out, "succeeded", succeeded)
    out["succeeded_from"] = source
    backoff = job.retry_at is not None and job.retry_at > now and status != "running"
    cooldown_end = job.finished_at + SUCCESS_COOLDOWN_SECONDS \
        if last_ok and job.finished_at is not None else None
    cooldown = cooldown_end is not None and cooldown_end > now
    out["backoff"], out["cooldown"] = backoff, cooldown
    candidates = []
    if backoff:
        candidates.append((job.retry_at, f"a back-off after the failure ({job.last_error or '?'}) "
                                         f"lasts until {when(job.retry_at)}"))
    if cooldown:
        candidates.append((cooldown_end, "Codex waits six hours after a success (until "
                                         f"{when(cooldown_end)})"))
    if running and not stuck:
        candidates.append((job.lease_until, f"a run holds the job (lease until "
                                            f"{when(job.lease_until)})"))
    if candidates:
        next_run, why = max(candidates, key=lambda c: c[0] or 0)
    else:
        next_run = now
        why = ("the lease of the stuck run has expired: the next Codex start takes the job over"
               if stuck else "nothing holds it back: the next Codex start runs it")
    _timed(out, "next_run", next_run)
    out["next_run_why"] = why
    return out


def extraction_state(jobs: list[Job], *, now: int, limit: int = MAX_LISTED) -> dict:
    """Phase 1 from its job rows (one per thread), at ``now``: counts by status, the
    failures (newest first, at most ``limit``), back-offs, stuck leases, and threads whose
    retries are spent."""
    by_status: dict[str, int] = {}
    failures, stuck = [], []
    backing_off = spent = 0
    succeeded = None
    for job in jobs:
        by_status[job.status or "unknown"] = by_status.get(job.status or "unknown", 0) + 1
        if job.status == "done" and job.finished_at is not None:
            succeeded = max(succeeded or job.finished_at, job.finished_at)
        if job.status == "running" and (job.lease_until is None or job.lease_until < now):
            stuck.append(job)
        if job.status == "error":
            if job.retry_at is not None and job.retry_at > now:
                backing_off += 1
            if (job.retry_remaining or 0) <= 0:
                spent += 1
            failures.append(job)
    failures.sort(key=lambda j: (j.finished_at or 0, j.job_key), reverse=True)
    out: dict = {"jobs": len(jobs), "by_status": dict(sorted(by_status.items()))}
    _timed(out, "succeeded", succeeded)
    out.update(failed=len(failures), backing_off=backing_off, retries_spent=spent,
               stuck=len(stuck))
    listed = []
    for job in failures[:limit]:
        item = {"thread_id": job.job_key, "error": job.last_error}
        _timed(item, "finished", job.finished_at)
        _timed(item, "retry_after", job.retry_at)
        item["retries_left"] = job.retry_remaining
        listed.append(item)
    out["failures"] = listed
    out["stuck_threads"] = [job.job_key for job in stuck[:limit]]
    return out


# --------------------------------------------------------------------------- phase-2 inputs


def enabled_threads(sqlite_home: str) -> set[str] | None:
    """The thread ids Codex lets memories be made from (``threads.memory_mode =
    'enabled'`` in its newest ``state_N.sqlite``), or None when that is unknown."""
    from memcite.ledger.codex_home import newest_state_db

    newest = newest_state_db(sqlite_home)
    if newest is None:
        return None
    path = newest
    try:
        conn = open_codex_db(path)
    except MemciteError:
        return None
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(threads)")}
        if not {"id", "memory_mode"} <= columns:
            return None
        return {row[0] for row in conn.execute(
            "SELECT id FROM threads WHERE memory_mode = 'enabled'") if isinstance(row[0], str)}
    except sqlite3.Error:
        return None
    finally:
        conn.close()


_ELIGIBLE_SQL = """
SELECT thread_id, source_updated_at, selected_for_phase2, selected_for_phase2_source_updated_at
FROM stage1_outputs
WHERE (length(trim(raw_memory)) > 0 OR length(trim(rollout_summary)) > 0)
  AND ((last_usage IS NOT NULL AND last_usage >= ?)
       OR (last_usage IS NULL AND source_updated_at >= ?))
ORDER BY COALESCE(usage_count, 0) DESC, COALESCE(last_usage, source_updated_at) DESC,
         source_updated_at DESC, thread_id DESC
"""


def phase2_inputs(conn: sqlite3.Connection, *, now: int, max_unused_days: int, n: int,
                  enabled: set[str] | None, limit: int = MAX_LISTED) -> dict:
    """What the next consolidation would take, as Codex 0.171 selects it (rows with text,
    used, or if never used updated, within ``max_unused_days``; ranked by use and recency;
    the first ``n`` whose thread has memory_mode 'enabled'), against what the last one
    took (``selected_for_phase2``): inputs new to it, changed since it took them
    (``selected_for_phase2_source_updated_at``), and taken then but not now."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(stage1_outputs)")}
    needed = {"thread_id", "source_updated_at", "raw_memory", "rollout_summary", "usage_count",
              "last_usage", "selected_for_phase2", "selected_for_phase2_source_updated_at"}
    out: dict = {"rows": conn.execute("SELECT count(*) FROM stage1_outputs").fetchone()[0]}
    if not needed <= columns:
        out.update(known=False, selected=None, next=None, new=None, changed=None, dropped=None,
                   not_enabled=None, threads_known=enabled is not None, new_threads=[],
                   changed_threads=[], dropped_threads=[])
        return out
    selected = {row[0]: row[1] for row in conn.execute(
        "SELECT thread_id, selected_for_phase2_source_updated_at FROM stage1_outputs"
        " WHERE selected_for_phase2 != 0")}
    limit_time = now - max_unused_days * DAY
    chosen: list[tuple[str, int | None]] = []
    not_enabled = 0
    for thread_id, updated, _was, _was_at in conn.execute(_ELIGIBLE_SQL, (limit_time, limit_time)):
        if len(chosen) >= max(0, n):
            break
        if enabled is not None and thread_id not in enabled:
            not_enabled += 1
            continue
        chosen.append((thread_id, updated))
    next_ids = {thread for thread, _ in chosen}
    new = [t for t, _ in chosen if t not in selected]
    changed = [t for t, updated in chosen if t in selected and selected[t] != updated]
    dropped = sorted(t for t in selected if t not in next_ids)
    out.update(known=True, selected=len(selected), next=len(chosen), new=len(new),
               changed=len(changed), dropped=len(dropped), not_enabled=not_enabled,
               threads_known=enabled is not None, new_threads=sorted(new)[:limit],
               changed_threads=sorted(changed)[:limit], dropped_threads=dropped[:limit])
    return out


# --------------------------------------------------------------------------- the memory folder


def _git(folder: str, *args: str) -> bytes | None:
    """``git`` in ``folder`` (read-only commands only), hooks, pagers, prompts and optional
    locks off; None when git is missing or fails."""
    from memcite.untrusted import program_arguments

    argv = program_arguments(["git", "-C", folder, "-c", "core.hooksPath=/dev/null", *args])
    if argv is None:
        return None
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(argv, capture_output=True, timeout=_GIT_TIMEOUT, env=env, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


@dataclass
class Baseline:
    """The memory folder's git baseline: its HEAD commit and the notes in it."""

    present: bool
    commit: str | None = None
    committed: int | None = None
    notes: dict[str, str] = field(default_factory=dict)  # note name -> blob id
    problem: str | None = None

    def to_dict(self) -> dict:
        out = {"present": self.present, "commit": self.commit}
        _timed(out, "committed", self.committed)
        out["problem"] = self.problem
        return out


def read_baseline(folder: str) -> Baseline:
    """The baseline Codex keeps in ``folder`` (a git repository it makes before its first
    consolidation, and again after each success): HEAD's commit, its time, and the blob of
    each ad-hoc note in it."""
    if not os.path.isdir(os.path.join(folder, ".git")):
        return Baseline(False)
    head = _git(folder, "log", "-1", "--format=%H %ct", "HEAD")
    if head is None:
        return Baseline(True, problem="git could not read the baseline (no commit, or git "
                                      "is not installed)")
    parts = head.decode("ascii", "replace").split()
    commit = parts[0] if parts else None
    committed = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    listing = _git(folder, "ls-tree", "-z", "HEAD", "--", NOTES_FOLDER.replace(os.sep, "/") + "/")
    notes: dict[str, str] = {}
    for entry in (listing or b"").split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == b"blob":
            notes[os.path.basename(path.decode("utf-8", "surrogateescape"))] = \
                fields[2].decode("ascii", "replace")
    return Baseline(True, commit, committed, notes)


@dataclass
class WorkspaceDiff:
    """``phase2_workspace_diff.md``: written before a run, removed by its success."""

    present: bool
    written: int | None = None
    paths: set[str] = field(default_factory=set)

    def to_dict(self) -> dict:
        out: dict = {"present": self.present}
        _timed(out, "written", self.written)
        out["paths"] = len(self.paths)
        return out


_STATUS_LINE = re.compile(r"^- [A-Z?!]{1,2}\s+(.+?)\s*$")


def read_workspace_diff(folder: str) -> WorkspaceDiff:
    """The paths the ``## Status`` section of ``phase2_workspace_diff.md`` lists (the file
    is there while a run has not succeeded; its time is the run's start)."""
    path = os.path.join(folder, WORKSPACE_DIFF)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return WorkspaceDiff(False)
    try:
        info = os.fstat(fd)
        import stat

        if not stat.S_ISREG(info.st_mode):
            return WorkspaceDiff(False)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_DIFF_BYTES + 1)
    except OSError:
        return WorkspaceDiff(False)
    finally:
        os.close(fd)
    paths: set[str] = set()
    in_status = False
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("## "):
            in_status = line.strip() == "## Status"
            continue
        if in_status:
            match = _STATUS_LINE.match(line)
            if match:
                for part in match.group(1).split(" -> "):
                    paths.add(part.strip().strip('"'))
    return WorkspaceDiff(True, int(info.st_mtime), paths)


def git_blob_id(data: bytes) -> str:
    """The id git gives a blob of ``data`` (SHA-1 of its header and bytes)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _read_small(path: str, limit: int = MAX_NOTE_BYTES) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return None if len(data) > limit else data


def note_seen(name: str, data: bytes | None, baseline: Baseline, diff: WorkspaceDiff
              ) -> tuple[str | None, int | None, bool]:
    """``(seen_by, when, changed_since)`` for the note ``name`` whose bytes are ``data``
    (None: gone or unreadable): ``baseline`` when the last successful consolidation left it
    in the baseline, ``workspace_diff`` when a run that has not succeeded (failed, or still
    running) listed it; ``changed_since`` when the note now differs from the baseline's."""
    relative = NOTES_FOLDER.replace(os.sep, "/") + "/" + name
    in_baseline = baseline.notes.get(name)
    same = data is not None and in_baseline is not None and git_blob_id(data) == in_baseline
    if in_baseline is not None and (same or data is None):
        return "baseline", baseline.committed, False
    if diff.present and relative in diff.paths:
        return "workspace_diff", diff.written, in_baseline is not None
    return None, None, in_baseline is not None


def list_notes(folder: str, baseline: Baseline, diff: WorkspaceDiff,
               limit: int = MAX_NOTES) -> list[dict]:
    """Every note in ``folder``'s ``extensions/ad_hoc/notes/`` (memcite's and others'), and
    whether a consolidation saw it."""
    notes_folder = os.path.join(folder, NOTES_FOLDER)
    try:
        names = sorted(entry.name for entry in os.scandir(notes_folder)
                       if entry.name.endswith(".md") and entry.is_file(follow_symlinks=False))
    except OSError:
        names = []
    found = []
    for name in names[:limit]:
        data = _read_small(os.path.join(notes_folder, name))
        seen_by, seen, changed = note_seen(name, data, baseline, diff)
        item = {"name": name, "path": os.path.join(notes_folder, name),
                "by_memcite": name[20:].startswith("memcite-"),
                "valid_name": is_adhoc_note_name(name), "seen_by": seen_by}
        _timed(item, "seen", seen)
        item["changed_since_seen"] = changed
        found.append(item)
    return found


# --------------------------------------------------------------------------- one store


def _store_of_folder(folder: str) -> str | None:
    name = os.path.basename(os.path.normpath(folder))
    return next((store for store, (folder_name, _db) in MEMORY_STORES.items()
                 if folder_name == name), None)


def _read_db(path: str, run):
    """``run(conn)`` on a read-only connection; a ``ConsolidationError`` when it fails."""
    try:
        conn = open_codex_db(path)
    except MemciteError as error:
        raise ConsolidationError(error.message, hint=error.hint) from None
    try:
        return run(conn)
    except sqlite3.Error as exc:
        raise ConsolidationError(f"{path}: cannot read Codex's memory jobs ({exc})",
                                 hint="retry when Codex is idle; check the file with "
                                      "`sqlite3 FILE 'PRAGMA quick_check'`") from None
    finally:
        conn.close()


@dataclass
class StoreReport:
    """One memory store of the home: its jobs, inputs, baseline and notes."""

    store: str
    read: bool
    consolidated: bool
    folder: str
    db: str
    db_present: bool
    folder_present: bool
    consolidation: dict | None = None
    extraction: dict | None = None
    inputs: dict | None = None
    baseline: Baseline | None = None
    diff: WorkspaceDiff | None = None
    notes: list[dict] = field(default_factory=list)
    problems: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"store": self.store, "read_by_codex": self.read,
                "consolidated_by_codex": self.consolidated, "memory_folder": self.folder,
                "db": self.db, "db_present": self.db_present,
                "folder_present": self.folder_present, "consolidation": self.consolidation,
                "extraction": self.extraction, "inputs": self.inputs,
                "baseline": self.baseline.to_dict() if self.baseline else None,
                "workspace_diff": self.diff.to_dict() if self.diff else None,
                "notes": self.notes, "problems": self.problems}


def _problem(kind: str, store: str, message: str, fix: str | None,
             detail: str | None = None) -> dict:
    return {"kind": kind, "store": store, "message": message, "detail": detail, "fix": fix}


def read_store(locations: CodexLocations, store: str, *, now: int, max_unused_days: int, n: int,
               stale_hours: int, enabled: set[str] | None = None) -> StoreReport:
    """Everything Codex records of one store's consolidation, judged at ``now``."""
    folder = memory_folder(locations.codex_home, store)
    db = state_db_path(locations.codex_home, locations.sqlite_home, store)
    read = store == locations.store
    report = StoreReport(store, read, read or locations.dual_write, folder, db,
                         os.path.isfile(db), os.path.isdir(folder))
    report.baseline = read_baseline(folder) if report.folder_present else Baseline(False)
    report.diff = read_workspace_diff(folder) if report.folder_present else WorkspaceDiff(False)
    if report.db_present:
        def gather(conn):
            jobs = read_jobs(conn)
            has_stage1 = bool(conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'"
                                           " AND name = 'stage1_outputs'").fetchone())
            inputs = phase2_inputs(conn, now=now, max_unused_days=max_unused_days, n=n,
                                   enabled=enabled) if has_stage1 else None
            return jobs, inputs

        jobs, report.inputs = _read_db(db, gather)
    else:
        jobs = None
    phase2 = next((job for job in jobs or () if job.kind == PHASE2_KIND
                   and job.job_key == PHASE2_KEY), None)
    report.consolidation = consolidation_state(phase2, now=now,
                                               baseline_at=report.baseline.committed)
    report.extraction = extraction_state([job for job in jobs or () if job.kind == PHASE1_KIND],
                                         now=now)
    if report.consolidation["error"]:
        report.consolidation["error_detail"] = NO_MORE_DETAIL.format(
            sqlite_home=locations.sqlite_home,
            worker=f"session {phase2.worker_id}" if phase2 and phase2.worker_id
            else "the session is not recorded")
    else:
        report.consolidation["error_detail"] = None
    report.notes = list_notes(folder, report.baseline, report.diff) \
        if report.folder_present else []
    if report.consolidated:
        report.problems = judge_store(report, now=now, stale_hours=stale_hours)
    return report


def waiting(report: StoreReport) -> list[str]:
    """What the next consolidation of a store has to take: inputs and notes it has not seen."""
    found = []
    inputs = report.inputs or {}
    if inputs.get("known"):
        for key, word in (("new", "new"), ("changed", "changed"), ("dropped", "to drop")):
            if inputs.get(key):
                found.append(f"{count(inputs[key], 'input')} {word}")
    unseen = [note for note in report.notes if note["seen_by"] != "baseline"]
    if unseen:
        found.append(f"{count(len(unseen), 'ad-hoc note')} not in its "
                     "baseline")
    return found


START_CODEX = ("start Codex (a new `codex exec` or session, memories on) and keep it open "
               "until the run ends")


def judge_store(report: StoreReport, *, now: int, stale_hours: int) -> list[dict]:
    """The warnings of a store Codex consolidates: a failed or stuck run, failed
    extractions, and a consolidation that has not succeeded for over ``stale_hours``
    while something waits for it. Each is one sentence, its detail, and its fix."""
    state = report.consolidation or {}
    store = report.store
    problems = []
    if state.get("state") == "failed":
        meaning = state.get("error_meaning") or "a code memcite does not know"
        fix = (f"none needed: Codex retries it at the first session start after "
               f"{when(state['next_run'])}; to have it then, {START_CODEX}"
               if state.get("backoff") else START_CODEX)
        problems.append(_problem(
            "failed", store, f"the last consolidation of store {store} failed at "
            f"{when(state.get('finished'))}: {state.get('error') or '?'} ({meaning})", fix,
            state.get("error_detail")))
    elif state.get("state") == "stuck":
        problems.append(_problem(
            "stuck", store, f"a consolidation of store {store} started at "
            f"{when(state.get('started'))} still holds the job, its lease ended at "
            f"{when(state.get('lease_until'))} (the Codex that ran it stopped mid-run?)",
            f"{START_CODEX}: the next start takes the expired lease over"))
    extraction = report.extraction or {}
    if extraction.get("failed") or extraction.get("stuck"):
        latest = (extraction.get("failures") or [{}])[0]
        parts = []
        if extraction.get("failed"):
            failed = extraction["failed"]
            parts.append(f"{count(failed, 'extraction job')} failed (latest: thread "
                         f"{latest.get('thread_id')} at {when(latest.get('finished'))}: "
                         f"{latest.get('error') or '?'})")
        if extraction.get("stuck"):
            parts.append(f"{extraction['stuck']} hold{'s' if extraction['stuck'] == 1 else ''} a lease past "
                         "its time")
        spent = extraction.get("retries_spent") or 0
        problems.append(_problem(
            "extraction", store, f"store {store}: " + "; ".join(parts)
            + (f"; {spent} have no retries left (Codex tries them again only once the thread "
               "changes)" if spent else ""),
            "none needed for one failure: Codex retries an extraction an hour later, at a "
            "session start, up to 3 times; the thread's own session file shows what it held"))
    succeeded = state.get("succeeded")
    pending = waiting(report)
    if state.get("state") not in ("failed", "stuck"):
        limit = stale_hours * HOUR
        if succeeded is not None and now - succeeded > limit and pending:
            problems.append(_problem(
                "stale", store, f"store {store}: no consolidation succeeded for "
                f"{span(now - succeeded)} (since {when(succeeded)}; more than {stale_hours} h) "
                f"while {', '.join(pending)} wait for one",
                f"{START_CODEX} (next run possible: {when(state.get('next_run'))})"))
        elif succeeded is None and state.get("state") == "never" and pending:
            problems.append(_problem(
                "stale", store, f"store {store}: Codex has never consolidated it, and "
                f"{', '.join(pending)} wait for it", START_CODEX))
    return problems


# --------------------------------------------------------------------------- the whole home


@dataclass
class ConsolidationReport:
    """``memcite consolidation``: every store of one Codex home."""

    locations: CodexLocations
    checked_at: int
    stale_hours: int
    stale_hours_from: str
    settings: dict
    stores: list[StoreReport]
    memory_runs: list[dict] = field(default_factory=list)  # consolidation_history, per store
    v2_readiness: dict | None = None
    history: bool = False
    v2_switch: dict | None = None  # memcite.codex.v2_switch, when there is a v2 store

    @property
    def run_findings(self) -> int:
        """The findings of each store's last judged run (``consolidation_runs``)."""
        return sum(item["runs"][0]["findings"] for item in self.memory_runs if item["runs"])

    @property
    def problems(self) -> list[dict]:
        return [problem for store in self.stores for problem in store.problems]

    def to_dict(self) -> dict:
        problems = self.problems
        return {"codex_home": self.locations.codex_home,
                "sqlite_home": self.locations.sqlite_home,
                "checked_at": self.checked_at,  # dump_json adds checked_at_iso
                "store": self.locations.store, "store_from": self.locations.store_from,
                "dual_write": self.locations.dual_write,
                "stale_hours": self.stale_hours, "stale_hours_from": self.stale_hours_from,
                "settings": self.settings,
                "ok": not problems, "problems": problems,
                "stores": [store.to_dict() for store in self.stores],
                "history": self.history, "memory_runs": self.memory_runs,
                "v2_readiness": self.v2_readiness, "v2_switch": self.v2_switch,
                "run_now": RUN_NOW}


def stores_present(locations: CodexLocations) -> list[str]:
    """The stores of a home: the one Codex reads, and each other one whose folder or
    database is there."""
    found = []
    for store in STORE_NAMES:
        if store == locations.store or locations.dual_write \
                or os.path.isdir(memory_folder(locations.codex_home, store)) \
                or os.path.isfile(state_db_path(locations.codex_home, locations.sqlite_home,
                                                store)):
            found.append(store)
    return found


def consolidation_report(locations: CodexLocations, *, now: int, max_unused_days: int, n: int,
                         stale_hours: int = DEFAULT_STALE_HOURS,
                         stale_hours_from: str = "default") -> ConsolidationReport:
    """What Codex records of its memory consolidation in one home, store by store."""
    enabled = enabled_threads(locations.sqlite_home)
    stores = [read_store(locations, store, now=now, max_unused_days=max_unused_days, n=n,
                         stale_hours=stale_hours, enabled=enabled)
              for store in stores_present(locations)]
    settings = {"max_unused_days": max_unused_days, "max_raw_memories_for_consolidation": n}
    return ConsolidationReport(locations, now, stale_hours, stale_hours_from, settings, stores)


def stale_hours_setting(config_path: str | None) -> tuple[int, str]:
    """``[consolidation] stale_hours`` of memcite's config file ``config_path`` (checked as
    the whole file is), else the default: ``(hours, where it came from)``."""
    from memcite.retention.rules import (
        check_memcite_config,
        load_toml,
    )

    path = config_path
    data = load_toml(path) if path else None
    if not data:
        return DEFAULT_STALE_HOURS, "default"
    check_memcite_config(data, path)
    value = (data.get("consolidation") or {}).get("stale_hours")
    if value is None:
        return DEFAULT_STALE_HOURS, "default"
    return value, f"[consolidation] stale_hours in {path}"



def consolidation_of(where, *, now: int, history: bool = False) -> ConsolidationReport:
    """``memcite consolidation``'s records of Codex: the report of the run's Codex home
    (``where``, a ``memcite.paths.Locations``; a home that is not a folder is an error), with
    the settings Codex's config gives (``max_unused_days``, the number a consolidation takes)
    and ``stale_hours`` from memcite's config. What the runs did to the memories in use is
    added by ``memcite.codex.consolidation_history.consolidation_with_runs``."""
    from memcite.retention.rules import load_codex_memories_config, resolve_settings

    locations = locate(where)
    stale_hours, stale_from = stale_hours_setting(where.config.path)
    settings = resolve_settings(None, None, load_codex_memories_config(locations.codex_home),
                                rule="codex")
    report = consolidation_report(locations, now=now, max_unused_days=settings.max_unused_days,
                                  n=settings.max_raw_memories_for_consolidation,
                                  stale_hours=stale_hours, stale_hours_from=stale_from)
    report.history = history
    return report


# --------------------------------------------------------------------------- forget requests


class StoreView:
    """What one store's memory folder and database say of memcite's forget requests, each
    read once: the baseline's notes, the workspace diff, the last success, which of the
    asked threads still have a row and a rollout summary."""

    def __init__(self, codex_home: str, store: str, sqlite_home: str, *, now: int) -> None:
        self.store = store
        self.folder = memory_folder(codex_home, store)
        self.db = state_db_path(codex_home, sqlite_home, store)
        self.baseline = read_baseline(self.folder) if os.path.isdir(self.folder) \
            else Baseline(False)
        self.diff = read_workspace_diff(self.folder) if os.path.isdir(self.folder) \
            else WorkspaceDiff(False)
        self.problem: str | None = None
        self.job: Job | None = None
        self._rows: dict[str, bool] = {}
        self._summaries: set[str] | None = None
        self.now = now
        if os.path.isfile(self.db):
            try:
                jobs = _read_db(self.db, read_jobs) or []
            except ConsolidationError as error:
                self.problem = error.message
                jobs = []
            self.job = next((j for j in jobs if j.kind == PHASE2_KIND), None)
        self.state = consolidation_state(self.job, now=now, baseline_at=self.baseline.committed)

    def rows_present(self, thread_ids: list[str]) -> dict[str, bool] | None:
        """Which of ``thread_ids`` still have a ``stage1_outputs`` row (None: unknown)."""
        wanted = [t for t in thread_ids if t not in self._rows]
        if wanted:
            if not os.path.isfile(self.db):
                return None
            import json

            def query(conn):
                return {row[0] for row in conn.execute(
                    "SELECT thread_id FROM stage1_outputs WHERE thread_id IN"
                    " (SELECT value FROM json_each(?))", (json.dumps(wanted),))}

            try:
                present = _read_db(self.db, query)
            except ConsolidationError as error:
                self.problem = error.message
                return None
            self._rows.update({t: t in present for t in wanted})
        return {t: self._rows[t] for t in thread_ids}

    def summary_left(self, thread_id: str, summary_file: str | None) -> bool:
        """Whether the memory's rollout summary is still in ``rollout_summaries/``."""
        folder = os.path.join(self.folder, ROLLOUT_SUMMARIES)
        if summary_file:
            return os.path.lexists(os.path.join(folder, os.path.basename(summary_file)))
        if self._summaries is None:
            from memcite.ledger.codex_home import CodexHomeError, iter_rollout_summaries

            try:
                self._summaries = {m.thread_id for m in iter_rollout_summaries(folder)} \
                    if os.path.isdir(folder) else set()
            except CodexHomeError:
                self._summaries = set()
        return thread_id in self._summaries


def request_store(request: dict) -> str | None:
    """The store a forget request asked: the folder of its note, or its database's name."""
    if request.get("note_path"):
        notes = os.path.dirname(request["note_path"])
        if notes.endswith(NOTES_FOLDER):
            return _store_of_folder(notes[: -len(NOTES_FOLDER)].rstrip(os.sep))
    if request.get("codex_db"):
        name = os.path.basename(request["codex_db"])
        return next((store for store, (_f, db) in MEMORY_STORES.items() if db == name), None)
    return None


def request_outcome(request: dict, view: StoreView | None) -> dict | None:
    """Whether what a forget request asked (``forget_requests`` row as ``list_requests``
    gives it) is done, by what Codex records: ``asked`` (no consolidation read the note),
    ``seen`` (a run that has not succeeded read it), ``not_done`` (a successful
    consolidation took it, and the memory is still there), ``done`` (its row is gone from
    ``stage1_outputs`` and no rollout summary is left), or ``unknown``. None for a request
    that asks nothing now (withdrawn, restored, rolled back, pending)."""
    if request.get("state") not in ("done", "forgotten"):
        return None
    out: dict = {"store": view.store if view else request_store(request)}
    if view is None:
        out.update(outcome="unknown", text="unknown: the Codex home or its memory store is "
                   "not there any more", seen_by=None)
        _timed(out, "seen", None)
        out.update(consolidations_since=0, row_in_codex=None, summary_left=None)
        return out
    thread = request["thread_id"]
    rows = view.rows_present([thread])
    row = None if rows is None else rows[thread]
    summary = view.summary_left(thread, request.get("summary_file"))
    asked_at = request.get("completed_at") or request.get("requested_at") or 0
    seen_by, seen = None, None
    if request.get("way") == "note" and request.get("note_path"):
        name = os.path.basename(request["note_path"])
        data = _read_small(request["note_path"])
        seen_by, seen, _changed = note_seen(name, data, view.baseline, view.diff)
    else:  # rows deleted from Codex's table: any success since counts as the one that saw it
        succeeded = view.state.get("succeeded")
        if succeeded is not None and succeeded >= asked_at:
            seen_by, seen = "consolidation", succeeded
        elif view.diff.present and view.diff.written and view.diff.written >= asked_at:
            seen_by, seen = "workspace_diff", view.diff.written
    successes = 1 if seen_by in ("baseline", "consolidation") else 0
    out.update(seen_by=seen_by)
    _timed(out, "seen", seen)
    out.update(consolidations_since=successes, row_in_codex=row, summary_left=summary)
    left = []
    if row:
        left.append("its row is still in Codex's stage1_outputs (Codex removes a row only by "
                    "its own retention, once it is unused for max_unused_days)")
    if summary:
        left.append("its rollout summary is still in rollout_summaries/")
    if row is None:
        out.update(outcome="unknown", text=f"unknown: {view.problem or view.db + ' is not there'}"
                   + (f"; seen by the consolidation of {when(seen)}" if successes else ""))
    elif not left:
        tail = (f" (taken in by the consolidation of {when(seen)})" if successes else
                f" (read by a run of {when(seen)} that has not succeeded)" if seen else "")
        out.update(outcome="done", text="done: its row is gone from Codex's stage1_outputs and "
                   "no rollout summary is left" + tail)
    elif successes:
        out.update(outcome="not_done", text=f"not done after {successes} consolidation (the "
                   f"last, {when(seen)}; Codex keeps no record of earlier ones): "
                   + "; ".join(left))
    elif seen_by == "workspace_diff":
        state = view.state
        how = f"it failed: {state.get('error')}" if state.get("state") == "failed" \
            else "it has not finished"
        out.update(outcome="seen", text=f"seen by consolidation on {when(seen)} ({how}); "
                   + "; ".join(left))
    else:
        out.update(outcome="asked", text="asked: no consolidation has read it yet (next "
                   f"possible: {when(view.state.get('next_run'))})")
    return out


def request_outcomes(requests: list[dict], *, sqlite_homes: dict[str, str | None] | None = None,
                     now: int) -> dict[int, dict | None]:
    """``request_outcome`` of each request by its id, each store read once. ``sqlite_homes``
    gives each Codex home's SQLite home (default: the home itself)."""
    views: dict[tuple[str, str], StoreView | None] = {}
    outcomes: dict[int, dict | None] = {}
    for request in requests:
        if request.get("state") not in ("done", "forgotten"):
            outcomes[request["id"]] = None
            continue
        home = request["codex_home"]
        store = request_store(request) or "v1"
        key = (home, store)
        if key not in views:
            sqlite_home = (sqlite_homes or {}).get(home) or home
            views[key] = StoreView(home, store, sqlite_home, now=now) \
                if os.path.isdir(home) else None
        outcomes[request["id"]] = request_outcome(request, views[key])
    return outcomes


__all__ = [
    "DEFAULT_STALE_HOURS", "ERROR_MEANINGS", "RUN_NOW", "ConsolidationError",
    "ConsolidationReport", "Job", "StoreView", "consolidation_of", "consolidation_report",
    "consolidation_state", "extraction_state", "last_consolidation", "list_notes", "note_seen",
    "phase2_inputs", "read_baseline",
    "read_jobs", "read_workspace_diff", "request_outcome", "request_outcomes",
    "stale_hours_setting", "when",
]


def last_consolidation(state_db: str) -> int | None:
    """When Codex's last consolidation succeeded, as its ``jobs`` table records it (the row of
    kind ``memory_consolidate_global``: its ``finished_at`` when that run succeeded, a ``done``
    row or a ``pending`` one without an error); None when no success is recorded or the
    database is not there. The memory folder's git baseline is not used: a failed run makes
    one too."""
    if not os.path.isfile(state_db):
        return None
    try:
        conn = sqlite3.connect(f"file:{state_db}?mode=ro", uri=True)
        try:
            jobs = read_jobs(conn) or []
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    times = [job.finished_at for job in jobs if job.kind == PHASE2_KIND
             and job.finished_at is not None and (job.status == "done" or (
                 job.status == "pending" and job.last_error is None))]
    return max(times) if times else None
