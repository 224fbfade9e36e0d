"""The last ``memcite audit``'s counts of a Codex home, kept in memcite's cache folder.

``stats`` and ``report`` show them without auditing again (an audit reads every session
file; ``stats`` must stay fast): ``audit-<home hash>.json`` holds when the audit ran, its
counts, and a stamp of what it read (the memory folder's files and Codex's database), so a
later reader tells whether the folder changed since. A damaged or hostile file reads as no
audit. Written atomically through ``memcite.durable_files``, never through a link.
"""

from __future__ import annotations

import hashlib
import os

from memcite.display import count

KINDS = ("poisoned", "secret", "cross-project", "directive", "taint")
MAX_BYTES = 64 * 1024
_STAMPED = ("MEMORY.md", "memory_summary.md", "raw_memories.md", "rollout_summaries")


def _name(codex_home: str) -> str:
    digest = hashlib.sha256(os.path.realpath(codex_home).encode("utf-8", "surrogateescape"))
    return f"audit-{digest.hexdigest()[:16]}.json"


def folder_stamp(memory_folder: str, state_db: str | None) -> str:
    """A stamp of what an audit reads (sizes and modification times), compared later."""
    parts = []
    for path in [os.path.join(memory_folder, name) for name in _STAMPED] + [state_db or ""]:
        try:
            info = os.stat(path, follow_symlinks=False)
        except (OSError, ValueError):
            parts.append("-")
            continue
        parts.append(f"{info.st_size}:{info.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:32]


def save_audit_counts(cache_dir: str, codex_home: str, counts: dict, *, memories: int,
                      high: int, at: int, stamp: str) -> str:
    """Keep one audit's counts; the file's path."""
    import json

    from memcite.durable_files import make_private_folders, open_folder, replace_file_at

    make_private_folders(cache_dir)
    record = {"codex_home": os.path.realpath(codex_home), "at": int(at), "memories": memories,
              "high": high, "counts": {kind: int(counts.get(kind, 0)) for kind in KINDS},
              "stamp": stamp}
    name = _name(codex_home)
    path = os.path.join(cache_dir, name)
    fd = open_folder(cache_dir)
    try:
        replace_file_at(fd, name, json.dumps(record).encode(), path, 0o600)
    finally:
        os.close(fd)
    return path


def last_audit_counts(cache_dir: str, codex_home: str, *, stamp: str) -> dict | None:
    """The last audit's counts of ``codex_home`` (``current``: nothing it read changed since),
    or None when there is none (or it cannot be read)."""
    from memcite.untrusted import loads_json, open_regular

    path = os.path.join(cache_dir, _name(codex_home))
    try:
        with os.fdopen(open_regular(path), "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
        record = loads_json(data) if len(data) <= MAX_BYTES else None
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("counts"), dict):
        return None
    try:
        counts = {kind: int(record["counts"].get(kind, 0)) for kind in KINDS}
        out = {"at": int(record["at"]), "memories": int(record["memories"]),
               "high": int(record["high"])}
    except (KeyError, TypeError, ValueError):
        return None
    return {**out, "counts": counts, "current": record.get("stamp") == stamp,
            "command": "memcite audit"}


def audit_of(cache_dir: str, locations) -> dict:
    """What ``stats`` and ``report`` show of the home's last audit (``at`` null: none yet)."""
    found = last_audit_counts(cache_dir, locations.codex_home,
                              stamp=folder_stamp(locations.memory_folder, locations.state_db))
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
