"""The last ``memcite audit``'s counts of a Codex home, kept in memcite's cache folder.

``stats`` and ``report`` show them without auditing again (an audit reads every session
file; ``stats`` must stay fast): ``audit-<home hash>.json`` holds when the audit ran, its
counts, the home it audited, and a stamp of what it read (each file of the memory folder
with its hash, Codex's databases with their WAL), so a later reader tells whether anything
changed since. The file is data an agent may have planted: read through the bounded JSON
parser, it counts only when its home is this one and every number is a whole count and a
time in range; else it reads as no audit. Written atomically through
``memcite.durable_files``, never through a link (a link at its name is refused and said).
"""

from __future__ import annotations

import hashlib
import os
import stat

from memcite.display import count
from memcite.durable_files import DIRECTORY, NOFOLLOW

KINDS = ("poisoned", "secret", "cross-project", "directive", "taint")
MAX_BYTES = 64 * 1024
VERSION = 2  # a file of another version (or none) reads as no audit
_STAMPED = ("MEMORY.md", "memory_summary.md", "raw_memories.md")
_SUMMARIES = "rollout_summaries"
_MAX_COUNT = 10**9  # more findings or memories than this is not a count an audit made
_HEADER = 100  # a SQLite file's header, a WAL's is 32: both hashed whole


def _name(codex_home: str) -> str:
    digest = hashlib.sha256(os.path.realpath(codex_home).encode("utf-8", "surrogateescape"))
    return f"audit-{digest.hexdigest()[:16]}.json"


def _file_part(folder_fd: int | None, name: str, *, whole: bool) -> str:
    """``name``'s size, times, inode and the SHA-256 of its bytes (``whole``) or of its first
    100 (a database's header, a WAL's salts); ``-`` when absent. A link or a non-regular file
    is stamped as such, never followed."""
    from memcite.untrusted import NONBLOCK

    try:
        fd = os.open(name, os.O_RDONLY | NOFOLLOW | NONBLOCK, dir_fd=folder_fd)
    except FileNotFoundError:
        return f"{name}=-"
    except OSError as exc:
        return f"{name}=!{exc.errno}"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return f"{name}=?{stat.S_IFMT(info.st_mode)}"
        digest = hashlib.sha256()
        left = info.st_size if whole else _HEADER
        while left > 0:
            chunk = os.read(fd, min(1 << 20, left))
            if not chunk:
                break
            digest.update(chunk)
            left -= len(chunk)
        return (f"{name}={info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}:"
                f"{digest.hexdigest()}")
    except OSError as exc:
        return f"{name}=!{exc.errno}"
    finally:
        os.close(fd)


def _stat_part(folder_fd: int, name: str) -> str:
    """``name``'s type, size, times and inode (a link's own, never followed).

    Every write changes a file's change time (``st_ctime``), which no process can set back
    (``touch`` sets the modification time only): a rollout summary rewritten in place with
    its old time still changes the stamp, without reading thousands of them at every
    ``stats`` (20,000 summaries hashed: a third of a second more; stated: 40 ms)."""
    try:
        info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except OSError as exc:
        return f"{name}=!{exc.errno}"
    return (f"{name}={stat.S_IFMT(info.st_mode)}:{info.st_size}:{info.st_mtime_ns}:"
            f"{info.st_ctime_ns}:{info.st_ino}")


def _folder_parts(folder: str) -> list[str]:
    """The stamp of each file an audit reads in the memory folder: the folder's own files
    hashed whole, each rollout summary by its size, times and inode (``_stat_part``)."""
    try:
        fd = os.open(folder, os.O_RDONLY | DIRECTORY)
    except (OSError, ValueError):
        return ["folder=-"]
    try:
        parts = [_file_part(fd, name, whole=True) for name in _STAMPED]
        try:
            sub = os.open(_SUMMARIES, os.O_RDONLY | DIRECTORY | NOFOLLOW, dir_fd=fd)
        except OSError as exc:
            return [*parts, f"{_SUMMARIES}=!{exc.errno}"]
        try:
            names = sorted(os.listdir(sub))
            parts += [f"{_SUMMARIES}/{_stat_part(sub, name)}" for name in names]
        finally:
            os.close(sub)
        return parts
    finally:
        os.close(fd)


def _database_parts(locations) -> list[str]:
    """Codex's databases an audit reads (``memories_1.sqlite`` and each ``state_N.sqlite``),
    each with its WAL: a row still in the WAL changes the WAL's size or header."""
    found = [locations.state_db]
    try:
        found += [os.path.join(locations.sqlite_home, name)
                  for name in sorted(os.listdir(locations.sqlite_home))
                  if name.startswith("state_") and name.endswith(".sqlite")]
    except (OSError, ValueError):
        pass
    parts = []
    for path in found:
        for name in (path, path + "-wal"):
            parts.append(_file_part(None, name, whole=False))
    return parts


def folder_stamp(locations) -> str:
    """A stamp of what an audit of ``locations`` (``CodexLocations``) reads: each file of the
    memory folder and Codex's databases with their WAL (``_file_part``). Any change to them,
    even a file rewritten in place with its old time, makes a later stamp differ."""
    parts = [f"home={os.path.realpath(locations.codex_home)}", *_folder_parts(locations.memory_folder),
             *_database_parts(locations)]
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def keep_audit_counts(cache_dir: str, locations, counts: dict, *, memories: int, high: int,
                      at: int, stamp: str | None = None) -> str | None:
    """Keep one audit's counts of ``locations``' home; None, or why they were not kept (a link
    at the file's name, a cache folder that cannot be written): the audit stands without."""
    import json

    from memcite.durable_files import open_own_folder, replace_file_at
    from memcite.errors import MemciteError

    codex_home = os.path.realpath(locations.codex_home)
    record = {"version": VERSION, "codex_home": codex_home, "at": int(at), "memories": memories,
              "high": high, "counts": {kind: int(counts.get(kind, 0)) for kind in KINDS},
              "stamp": stamp if stamp is not None else folder_stamp(locations)}
    name = _name(codex_home)
    path = os.path.join(cache_dir, name)
    try:
        fd = open_own_folder(cache_dir)
        try:
            replace_file_at(fd, name, json.dumps(record).encode(), path, 0o600)
        finally:
            os.close(fd)
    except MemciteError as exc:
        return f"the audit's counts were not kept: {exc.message}"
    except OSError as exc:
        return f"{cache_dir}: the audit's counts were not kept ({exc.strerror or exc})"
    return None


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a count")


def _whole(value, low: int, high: int) -> int:
    """``value`` when it is an integer (not a bool, not a float) from ``low`` to ``high``."""
    if type(value) is not int or not low <= value <= high:
        raise ValueError("not a count in range")
    return value


def last_audit_counts(cache_dir: str, codex_home: str, *, stamp) -> dict | None:
    """The last audit's counts of ``codex_home`` (``current``: nothing it read changed since
    ``stamp``, a ``folder_stamp`` or a function giving one, called only when there are
    counts to compare: a home never audited costs no stamp), or None when there is none,
    or what is kept cannot be trusted: a link or another kind of file at its name, another
    home's file, a number that is not a whole count in range, a time beyond the years
    1-9999."""
    from memcite.durable_files import open_own_folder, read_file_at
    from memcite.errors import MemciteError
    from memcite.times import in_range
    from memcite.untrusted import loads_json

    home = os.path.realpath(codex_home)
    name = _name(home)
    try:
        fd = open_own_folder(cache_dir, create=False)
    except (OSError, MemciteError):
        return None
    try:
        data = read_file_at(fd, name, os.path.join(cache_dir, name), MAX_BYTES)
        record = None if data is None else loads_json(data, parse_constant=_refuse_constant)
    except (OSError, MemciteError, ValueError):
        return None
    finally:
        os.close(fd)
    if not isinstance(record, dict) or not isinstance(record.get("counts"), dict) \
            or record.get("version") != VERSION or record.get("codex_home") != home \
            or not isinstance(record.get("stamp"), str):
        return None
    try:
        counts = {kind: _whole(record["counts"].get(kind, 0), 0, _MAX_COUNT) for kind in KINDS}
        out = {"at": _whole(record["at"], 0, 2**62), "memories": _whole(record["memories"], 0,
                                                                          _MAX_COUNT),
               "high": _whole(record["high"], 0, _MAX_COUNT)}
    except (KeyError, ValueError):
        return None
    if not in_range(out["at"]):
        return None
    if callable(stamp):
        stamp = stamp()
    return {**out, "counts": counts, "current": record["stamp"] == stamp,
            "command": "memcite audit"}


def audit_of(cache_dir: str, locations) -> dict:
    """What ``stats`` and ``report`` show of the home's last audit (``at`` null: none yet)."""
    found = last_audit_counts(cache_dir, locations.codex_home,
                              stamp=lambda: folder_stamp(locations))
    return found or {"at": None, "memories": None, "high": None, "counts": None,
                     "current": False, "command": "memcite audit"}


def audit_line(audit: dict | None) -> str:
    """One line for a report's reader: the counts and the command to see more."""
    if audit is None or audit.get("at") is None:
        return "memory audit: not run for this home yet (`memcite audit` checks every memory)"
    counts = audit["counts"]
    import time

    day = time.strftime("%Y-%m-%d", time.gmtime(audit["at"]))
    stale = "" if audit["current"] else "; the memory folder changed since, run it again"
    if counts["poisoned"]:
        stale += "; `memcite audit --quarantine` previews forgetting the poisoned"
    return (f"memory audit ({day}): {counts['poisoned']} poisoned, {count(counts['secret'], 'secret')}, "
            f"{counts['cross-project']} cross-project, {count(counts['directive'], 'directive')} in "
            f"{audit['memories']} memories (`memcite audit` lists each{stale})")
