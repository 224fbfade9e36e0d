"""What each consolidation left: compact snapshots of Codex's memory folder, kept by memcite.

Codex resets its memory folder's git history to one baseline commit after every
consolidation, so nobody can see afterwards what a run changed. memcite keeps, each time it
sees the folder change (the Stop hook's stamp, ``memcite sync``, ``memcite consolidation``),
a *snapshot*: ``MEMORY.md``, ``memory_summary.md``, ``raw_memories.md``, the rollout
summaries (names and content), the ad-hoc notes present, and the consolidation's job row
from Codex's ``jobs`` table (with the extraction jobs' health).

Where: ``consolidation-snapshots/`` beside memcite's database (never in the memory folder):
``index.json`` lists the snapshots, oldest first; ``objects/<sha256>.z`` holds each file's
bytes once, compressed with zlib, named by the SHA-256 of the bytes (a file that did not
change costs nothing more). The folder is kept under ``MAX_SNAPSHOT_BYTES``: past it the
oldest snapshots are dropped (the last two of each memory folder are kept) and objects no
snapshot names any more are removed; only memcite's own names are ever removed, never
through a link. A folder's first snapshot is its *baseline*: its history starts there, and
what came before is unknown (said as such).

A snapshot is taken only when the folder's content changed since that folder's last
snapshot, and not while a consolidation holds the job (the folder is half-written): the
next look takes it. The Stop hook's look costs six ``lstat`` calls and one small file read
when nothing changed (``after_reply``); ``memcite sync`` looks too (``snapshot_home``).
"""

from __future__ import annotations

import os
import re

from memcite.ledger.snapshot_look import STAMP_FILE, read_stamps
from memcite.ledger.snapshot_look import stamps_path as look_path

SNAPSHOT_FOLDER = "consolidation-snapshots"
INDEX_FILE = "index.json"
OBJECTS = "objects"
LAST_RUNS_FILE = "judged-runs.json"  # the counts of each folder's judged runs (for stats)
MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024  # the objects' total size on disk
MAX_SNAPSHOTS = 2_000
KEEP_PER_FOLDER = 2  # never pruned: each folder's last two (the last run's before and after)
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_FILES = 10_000  # rollout summaries or notes kept per snapshot
MAX_TREE = 5_000  # file names of the memory folder kept per snapshot
MAX_INDEX_BYTES = 64 * 1024 * 1024
GC_GRACE_SECONDS = 60  # an object younger than this may belong to a snapshot being written
_OBJECT_NAME = re.compile(r"\A[0-9a-f]{64}\.z\Z")
TOP_FILES = ("MEMORY.md", "memory_summary.md", "raw_memories.md")
# Codex's jobs table (memcite.codex.consolidation reads it whole; this module is below it)
PHASE1_KIND = "memory_stage1"
PHASE2_KIND = "memory_consolidate_global"
JOB_FIELDS = ("job_key", "status", "worker_id", "started_at", "finished_at", "lease_until",
              "retry_at", "retry_remaining", "last_error", "input_watermark",
              "last_success_watermark")


def snapshot_folder(db_path: str) -> str:
    """Where the snapshots of the ledger ``db_path`` are kept (beside it)."""
    return os.path.join(os.path.dirname(os.path.abspath(db_path)), SNAPSHOT_FOLDER)


# --------------------------------------------------------------------------- reading Codex's


def _read_regular(folder_fd: int, name: str, limit: int = MAX_FILE_BYTES) -> bytes | None:
    """A regular file's bytes read from its folder without following a link (None: absent,
    a link, not regular, or too large)."""
    from memcite.durable_files import read_file_at
    from memcite.errors import MemciteError

    try:
        return read_file_at(folder_fd, name, name, limit)
    except (OSError, MemciteError):
        return None


def _read_folder(root_fd: int, parts: tuple[str, ...]) -> dict[str, bytes]:
    """The ``*.md`` files of a folder under the memory folder (no link followed)."""
    fd = _open_parts(root_fd, parts)
    if fd is None:
        return {}
    try:
        names = sorted(name for name in os.listdir(fd) if name.endswith(".md"))[:MAX_FILES]
        out = {}
        for name in names:
            data = _read_regular(fd, name)
            if data is not None:
                out[name] = data
        return out
    except OSError:
        return {}
    finally:
        os.close(fd)


def _open_parts(root_fd: int, parts: tuple[str, ...]) -> int | None:
    from memcite.durable_files import DIRECTORY, NOFOLLOW

    fd = os.dup(root_fd)
    try:
        for part in parts:
            child = os.open(part, os.O_RDONLY | DIRECTORY | NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = child
    except OSError:
        os.close(fd)
        return None
    return fd


def read_memory_files(memory_folder: str) -> dict | None:
    """What a snapshot keeps of ``memory_folder``'s files: ``{"top": {name: bytes},
    "rollout_summaries": {name: bytes}, "notes": {name: bytes}}`` (None: no folder)."""
    from memcite.durable_files import DIRECTORY
    from memcite.ledger.adhoc_notes import NOTES_FOLDER
    from memcite.ledger.codex_home import ROLLOUT_SUMMARIES

    try:
        root = os.open(memory_folder, os.O_RDONLY | DIRECTORY)
    except OSError:
        return None
    try:
        top = {}
        for name in TOP_FILES:
            data = _read_regular(root, name)
            if data is not None:
                top[name] = data
        return {"top": top,
                "rollout_summaries": _read_folder(root, (ROLLOUT_SUMMARIES,)),
                "notes": _read_folder(root, tuple(NOTES_FOLDER.split(os.sep))),
                "tree": folder_tree(memory_folder)}
    finally:
        os.close(root)


def folder_tree(memory_folder: str, limit: int = MAX_TREE) -> list[str]:
    """The relative paths of the files in the memory folder (``.git`` left out, no link
    followed, at most ``limit``): files the agent could read, so a line naming one is not
    unsupported."""
    found: list[str] = []
    for folder, folders, files in os.walk(memory_folder, followlinks=False):
        folders[:] = sorted(f for f in folders if f != ".git")
        relative = os.path.relpath(folder, memory_folder)
        for name in sorted(files):
            found.append(name if relative == "." else os.path.join(relative, name))
            if len(found) >= limit:
                return found
    return found


def job_health(state_db: str) -> dict | None:
    """The consolidation's job row and the extraction jobs' health from Codex's ``jobs``
    table (read-only; None when the database is not there or cannot be read)."""
    import sqlite3

    from memcite.errors import MemciteError
    from memcite.ledger.codex_home import open_codex_db

    if not os.path.isfile(state_db):
        return None
    try:
        conn = open_codex_db(state_db)
    except MemciteError:
        return None
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(jobs)")}
        if not {"kind", "job_key", "status"} <= columns:
            return None
        picked = ", ".join(name if name in columns else "NULL" for name in JOB_FIELDS)
        rows = conn.execute(f"SELECT kind, {picked} FROM jobs WHERE kind IN (?, ?)"  # noqa: S608
                            " ORDER BY kind, job_key", (PHASE1_KIND, PHASE2_KIND)).fetchall()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    row = None
    by_status: dict[str, int] = {}
    dead: dict[str, int] = {}
    retrying = 0
    for kind, *values in rows:
        job = dict(zip(JOB_FIELDS, values, strict=True))
        if kind == PHASE2_KIND:
            row = {k: v for k, v in job.items() if k != "job_key"}
            continue
        status = job["status"] if isinstance(job["status"], str) else "unknown"
        by_status[status] = by_status.get(status, 0) + 1
        if status == "error":
            error = job["last_error"] if isinstance(job["last_error"], str) else "unknown"
            if not isinstance(job["retry_remaining"], int) or job["retry_remaining"] <= 0:
                dead[error] = dead.get(error, 0) + 1
            else:
                retrying += 1
    return {"consolidation": row,
            "extraction": {"by_status": dict(sorted(by_status.items())),
                           "retrying": retrying, "dead": dict(sorted(dead.items()))}}


def consolidation_running(health: dict | None, now: int) -> bool:
    """Whether a consolidation holds the job at ``now`` (its lease not yet ended)."""
    row = (health or {}).get("consolidation") or {}
    return row.get("status") == "running" and (row.get("lease_until") or 0) >= now


# --------------------------------------------------------------------------- the store


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


class SnapshotStore:
    """memcite's snapshots beside one ledger: the index and the objects."""

    def __init__(self, folder: str, *, max_bytes: int = MAX_SNAPSHOT_BYTES) -> None:
        self.folder = folder
        self.max_bytes = max_bytes

    # reading -------------------------------------------------------------

    def index(self) -> list[dict]:
        """Every snapshot, oldest first ([] when none, or the index is not memcite's)."""
        from memcite.durable_files import DIRECTORY
        from memcite.untrusted import loads_json

        try:
            fd = os.open(self.folder, os.O_RDONLY | DIRECTORY)
        except OSError:
            return []
        try:
            data = _read_regular(fd, INDEX_FILE, MAX_INDEX_BYTES)
        finally:
            os.close(fd)
        if not data:
            return []
        try:
            found = loads_json(data)
        except ValueError:
            return []
        snapshots = found.get("snapshots") if isinstance(found, dict) else None
        return [s for s in snapshots if isinstance(s, dict)] if isinstance(snapshots, list) else []

    def blob(self, digest: str | None) -> bytes | None:
        """The bytes of an object (None: no such object, or it does not match its name)."""
        from memcite.durable_files import open_folder

        if not digest or not re.fullmatch(r"[0-9a-f]{64}", digest):
            return None
        try:
            fd = open_folder(self.folder, (OBJECTS,))
        except (OSError, ValueError):
            return None
        except Exception:  # noqa: BLE001 - a link refused: no object
            return None
        try:
            packed = _read_regular(fd, f"{digest}.z", MAX_FILE_BYTES + 1024)
        finally:
            os.close(fd)
        if packed is None:
            return None
        import zlib

        try:
            data = zlib.decompress(packed)
        except zlib.error:
            return None
        return data if _sha(data) == digest else None

    def text(self, digest: str | None) -> str | None:
        data = self.blob(digest)
        return None if data is None else data.decode("utf-8", errors="replace")

    def for_folder(self, memory_folder: str) -> list[dict]:
        """The snapshots of one memory folder, oldest first."""
        return [s for s in self.index() if s.get("memory_folder") == memory_folder]

    def disk_bytes(self) -> int:
        total = 0
        try:
            with os.scandir(os.path.join(self.folder, OBJECTS)) as entries:
                for entry in entries:
                    if _OBJECT_NAME.match(entry.name) and entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_size
        except OSError:
            return 0
        return total

    # writing -------------------------------------------------------------

    def _put(self, objects_fd: int, data: bytes) -> str:
        import zlib

        from memcite.durable_files import create_file_at, unique_name

        digest = _sha(data)
        name = f"{digest}.z"
        try:
            os.stat(name, dir_fd=objects_fd, follow_symlinks=False)
            return digest  # content-addressed: already kept
        except FileNotFoundError:
            pass
        temporary = unique_name(f".{name}.memcite-", ".tmp")
        create_file_at(objects_fd, temporary, zlib.compress(data, 6), 0o600)
        try:
            os.replace(temporary, name, src_dir_fd=objects_fd, dst_dir_fd=objects_fd)
        except BaseException:
            try:
                os.unlink(temporary, dir_fd=objects_fd)
            except OSError:
                pass
            raise
        return digest

    def _save_index(self, folder_fd: int, snapshots: list[dict]) -> None:
        import json

        from memcite.durable_files import replace_file_at

        data = json.dumps({"format": "memcite-consolidation-snapshots", "version": 1,
                           "snapshots": snapshots}, sort_keys=True).encode()
        replace_file_at(folder_fd, INDEX_FILE, data, os.path.join(self.folder, INDEX_FILE),
                        0o600)

    def add(self, memory_folder: str, store: str, files: dict, health: dict | None, *,
            now: int, reason: str) -> dict | None:
        """Keep a snapshot of ``files`` (``read_memory_files``) unless it holds what the
        folder's last snapshot holds; the new index entry, or None."""
        from memcite.durable_files import open_folder

        fingerprint = {
            "files": {name: _sha(data) for name, data in files["top"].items()},
            "rollout_summaries": {n: _sha(d) for n, d in files["rollout_summaries"].items()},
            "notes": {n: _sha(d) for n, d in files["notes"].items()},
        }
        snapshots = self.index()
        earlier = [s for s in snapshots if s.get("memory_folder") == memory_folder]
        if earlier and all(earlier[-1].get(key) == value for key, value in fingerprint.items()):
            return None
        os.makedirs(os.path.dirname(self.folder) or ".", mode=0o700, exist_ok=True)
        folder_fd = open_folder(os.path.dirname(self.folder) or ".",
                                (os.path.basename(self.folder),), create=True)
        try:
            objects_fd = open_folder(self.folder, (OBJECTS,), create=True)
            try:
                sizes = {}
                for name, data in files["top"].items():
                    self._put(objects_fd, data)
                    sizes[name] = len(data)
                for group in ("rollout_summaries", "notes"):
                    for data in files[group].values():
                        self._put(objects_fd, data)
                tree = self._put(objects_fd, "\n".join(files.get("tree") or []).encode())
            finally:
                os.close(objects_fd)
            entry = {"id": max((s.get("id", 0) for s in snapshots if isinstance(s.get("id"), int)),
                               default=0) + 1,
                     "taken_at": now, "memory_folder": memory_folder, "store": store,
                     "reason": reason, "baseline": not earlier, "sizes": sizes,
                     **fingerprint, "tree": tree, "jobs": health}
            snapshots.append(entry)
            snapshots = self._pruned(snapshots)
            self._save_index(folder_fd, snapshots)
            self._collect(snapshots, now)
        finally:
            os.close(folder_fd)
        return entry

    def _pruned(self, snapshots: list[dict]) -> list[dict]:
        """Drop the oldest snapshots while the objects exceed the limit (or there are too
        many), never a folder's last ``KEEP_PER_FOLDER``."""
        sizes = self._object_sizes()
        while True:
            named = _named(snapshots)
            total = sum(size for digest, size in sizes.items() if digest in named)
            if total <= self.max_bytes and len(snapshots) <= MAX_SNAPSHOTS:
                return snapshots
            counts: dict[str, int] = {}
            for s in snapshots:
                counts[s.get("memory_folder")] = counts.get(s.get("memory_folder"), 0) + 1
            victim = next((i for i, s in enumerate(snapshots)
                           if counts[s.get("memory_folder")] > KEEP_PER_FOLDER), None)
            if victim is None:
                return snapshots
            del snapshots[victim]

    def _object_sizes(self) -> dict[str, int]:
        sizes = {}
        try:
            with os.scandir(os.path.join(self.folder, OBJECTS)) as entries:
                for entry in entries:
                    if _OBJECT_NAME.match(entry.name) and entry.is_file(follow_symlinks=False):
                        sizes[entry.name[:-2]] = entry.stat(follow_symlinks=False).st_size
        except OSError:
            pass
        return sizes

    def _collect(self, snapshots: list[dict], now: int) -> None:
        """Remove the objects no snapshot names (memcite's names only, no link followed)."""
        import stat as stat_module
        import time

        from memcite.durable_files import open_folder

        named = _named(snapshots)
        try:
            fd = open_folder(self.folder, (OBJECTS,))
        except Exception:  # noqa: BLE001 - nothing to collect
            return
        try:
            for name in os.listdir(fd):
                if not _OBJECT_NAME.match(name) or name[:-2] in named:
                    continue
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if not stat_module.S_ISREG(info.st_mode) or \
                        info.st_mtime > time.time() - GC_GRACE_SECONDS and \
                        info.st_mtime <= time.time():
                    continue
                os.unlink(name, dir_fd=fd)
        except OSError:
            pass
        finally:
            os.close(fd)


def _named(snapshots: list[dict]) -> set[str]:
    named = {s["tree"] for s in snapshots if isinstance(s.get("tree"), str)}
    for s in snapshots:
        for key in ("files", "rollout_summaries", "notes"):
            value = s.get(key)
            if isinstance(value, dict):
                named.update(v for v in value.values() if isinstance(v, str))
    return named


# --------------------------------------------------------------------------- taking one


def take_snapshot(db_path: str, codex_home: str, store: str, memory_folder: str,
                  state_db: str, *, now: int, reason: str,
                  max_bytes: int = MAX_SNAPSHOT_BYTES) -> dict:
    """Look at ``memory_folder`` and keep a snapshot when it changed: ``{"taken": entry or
    None, "why": ...}`` (never raises for Codex's files; memcite's folder errors do)."""
    memory_folder = os.path.realpath(memory_folder)
    files = read_memory_files(memory_folder)
    if files is None:
        return {"taken": None, "why": "no memory folder"}
    health = job_health(state_db)
    if consolidation_running(health, now):
        return {"taken": None, "why": "a consolidation holds the job: the folder is half-written"}
    entry = SnapshotStore(snapshot_folder(db_path), max_bytes=max_bytes).add(
        memory_folder, store, files, health, now=now, reason=reason)
    return {"taken": entry, "why": "changed" if entry else "unchanged since the last snapshot"}


def snapshot_home(db_path: str, codex_locations, *, now: int, reason: str) -> list[dict]:
    """``take_snapshot`` of each store of a Codex home (``CodexLocations``) whose folder is
    there; what each look did."""
    from memcite.ledger.codex_home import MEMORY_STORES, memory_folder, state_db_path

    done = []
    for store in MEMORY_STORES:
        folder = memory_folder(codex_locations.codex_home, store)
        if not os.path.isdir(folder):
            continue
        db = state_db_path(codex_locations.codex_home, codex_locations.sqlite_home, store)
        look = take_snapshot(db_path, codex_locations.codex_home, store, folder, db, now=now,
                             reason=reason)
        done.append({"store": store, **look})
    return done


# --------------------------------------------------------------------------- the Stop hook's look


def after_reply(db_path: str, codex_home: str, memory_folder: str, stamp: str, *,
                now: int) -> dict | None:
    """The Stop hook's look: None when the folder's ``stamp`` (the caller's
    ``memcite.audit.memory_quarantine.folder_stamp``: a few ``lstat`` calls) is the one of its
    last look (then one small file is read, nothing more); else the snapshot taken
    (``take_snapshot``), the stamp kept unless a run holds the job."""
    if not os.path.isdir(memory_folder):
        return None
    stamps_path = look_path(db_path)
    stamps = read_stamps(stamps_path)
    if stamps.get(memory_folder) == stamp:
        return None
    import json

    from memcite.durable_files import open_folder, replace_file_at
    from memcite.ledger.codex_home import MEMORY_STORES, locate_codex_home, state_db_path

    store = next((name for name, (folder, _db) in MEMORY_STORES.items()
                  if os.path.basename(os.path.normpath(memory_folder)) == folder), "v1")
    locations = locate_codex_home(codex_home)
    look = take_snapshot(db_path, codex_home, store, memory_folder,
                         state_db_path(codex_home, locations.sqlite_home, store),
                         now=now, reason="hook")
    if look["why"].startswith("a consolidation holds"):
        return {"taken": None, "why": look["why"]}
    stamps[memory_folder] = stamp
    fd = open_folder(os.path.dirname(stamps_path))
    try:
        replace_file_at(fd, STAMP_FILE, json.dumps(stamps, sort_keys=True).encode(),
                        stamps_path, 0o600)
    finally:
        os.close(fd)
    entry = look["taken"]
    return {"taken": entry["id"] if entry else None, "why": look["why"]}


# --------------------------------------------------------------------------- the last run's counts


MAX_JUDGED_RUNS = 200  # judged runs kept per folder (the newest)
RUNS_SHOWN = 20  # runs ``stats`` lists, newest first


def save_judged_runs(db_path: str, memory_folder: str, runs: list[dict], *, now: int) -> None:
    """Keep the counts of each run ``memcite consolidation`` judged (by the id of the
    snapshot after it), so that ``stats`` and the report show them without judging again."""
    import json

    from memcite.durable_files import open_folder, replace_file_at

    folder = snapshot_folder(db_path)
    path = os.path.join(folder, LAST_RUNS_FILE)
    kept = read_stamps(path)
    mine = kept.get(memory_folder) if isinstance(kept.get(memory_folder), dict) else {}
    for run in runs:
        mine[str(run.get("after_snapshot"))] = {
            "judged_at": now, "after_snapshot": run.get("after_snapshot"),
            "after_taken_at": run.get("after_taken_at"), "findings": run.get("findings"),
            "counts": run.get("counts")}
    newest = sorted(mine.values(), key=lambda r: r.get("after_snapshot") or 0)[-MAX_JUDGED_RUNS:]
    kept[memory_folder] = {str(r.get("after_snapshot")): r for r in newest}
    fd = open_folder(folder)
    try:
        replace_file_at(fd, LAST_RUNS_FILE, json.dumps(kept, sort_keys=True).encode(), path,
                        0o600)
    finally:
        os.close(fd)


def consolidation_summary(db_path: str, memory_folder: str) -> dict:
    """What ``stats`` shows of a memory folder's consolidations: memcite's snapshots of it,
    and the runs ``memcite consolidation`` judged, newest first (``latest_run``: the newest;
    null: none judged)."""
    folder = os.path.realpath(memory_folder)
    store = SnapshotStore(snapshot_folder(db_path))
    snapshots = store.for_folder(folder)
    kept = read_stamps(os.path.join(snapshot_folder(db_path), LAST_RUNS_FILE)).get(folder)
    runs = [r for r in (kept.values() if isinstance(kept, dict) else ())
            if isinstance(r, dict) and isinstance(r.get("counts"), dict)]
    runs.sort(key=lambda r: r.get("after_snapshot") or 0, reverse=True)
    return {"snapshots": len(snapshots),
            "last_snapshot_at": snapshots[-1].get("taken_at") if snapshots else None,
            "latest_run": runs[0] if runs else None, "runs": runs[:RUNS_SHOWN],
            "command": "memcite consolidation"}


__all__ = ["MAX_SNAPSHOT_BYTES", "SNAPSHOT_FOLDER", "SnapshotStore", "after_reply",
           "consolidation_running", "consolidation_summary", "job_health", "read_memory_files",
           "save_judged_runs", "snapshot_folder", "snapshot_home", "take_snapshot"]
