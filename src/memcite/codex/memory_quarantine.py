"""The quarantine: poisoned memories that reached Codex's memory folder without the gate.

The PreToolUse gate (``memcite.codex.memory_gate``) sees the writes of Codex's consolidation
agent. A write by another program, or by a Codex that runs no hook, it never sees. So the
Stop hook (after it recorded the turn) looks at the memory folder's *stamp*: the size and
modification time of the files a consolidation changes (``MEMORY.md``,
``memory_summary.md``, ``raw_memories.md``, ``phase2_workspace_diff.md``, the
``.codex-baseline`` and ``rollout_summaries`` folders). Unchanged since the last look (the
common case: a few ``stat`` calls and one small file read) it does nothing more. Changed, it
runs the audit (``memcite.codex.memory_audit``) and asks Codex to forget each memory the audit
finds *poisoned*, through the forget path ``prune --apply`` uses (``memcite.retention.forget``,
rule ``poisoned``): an ad-hoc note for Codex's next consolidation, journaled in
``forget_requests``, which ``memcite restore`` withdraws.

That note is also the way out when a poisoned line keeps coming back: a consolidation agent
that will not drop a denied line fails its run (``failed_invalid_artifacts``), and the retry
reads the same raw memories; the note in the workspace diff tells it to drop that memory.

The stamps are kept in ``memory-folder-stamps.json`` beside memcite's database, saved before
the audit starts. The Stop hook does not wait for the audit (5,000 memories took 25 s on a
loaded machine): it starts it as a process of its own, in a new session, which writes the note
and one ``quarantine`` line in the hook log. ``[gate] memory_writes = false`` in memcite's
config turns the quarantine off with the gate.
"""

from __future__ import annotations

import json
import os

STAMP_FILE = "memory-folder-stamps.json"
STAMPED = ("MEMORY.md", "memory_summary.md", "raw_memories.md", "phase2_workspace_diff.md",
           ".codex-baseline", "rollout_summaries")
MAX_STAMP_FILE_BYTES = 256 * 1024


def folder_stamp(memory_folder: str) -> str:
    """What a consolidation changes in ``memory_folder``, as one string (links not followed)."""
    parts = []
    for name in STAMPED:
        try:
            info = os.lstat(os.path.join(memory_folder, name))
        except OSError:
            parts.append(f"{name}:-")
            continue
        parts.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
    return "|".join(parts)


def _stamps_path(db_path: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(db_path)), STAMP_FILE)


def read_stamps(db_path: str) -> dict:
    """The stamps saved so far ({} when none, or when the file is not memcite's)."""
    from memcite.untrusted import loads_json, open_regular

    try:
        fd = open_regular(_stamps_path(db_path))
    except OSError:
        return {}
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_STAMP_FILE_BYTES + 1)
    try:
        stamps = loads_json(data) if len(data) <= MAX_STAMP_FILE_BYTES else {}
    except ValueError:
        return {}
    return stamps if isinstance(stamps, dict) else {}


def save_stamp(db_path: str, memory_folder: str, stamp: str) -> None:
    """Keep ``stamp`` for ``memory_folder`` (atomically, no link followed)."""
    from memcite.durable_files import open_folder, replace_file_at

    stamps = read_stamps(db_path)
    stamps[memory_folder] = stamp
    folder = os.path.dirname(_stamps_path(db_path))
    fd = open_folder(folder, create=True)
    try:
        replace_file_at(fd, STAMP_FILE, json.dumps(stamps, sort_keys=True).encode(),
                        _stamps_path(db_path), 0o600)
    finally:
        os.close(fd)


def changed_folder(db_path: str, memory_folder: str) -> str | None:
    """The folder's new stamp when it changed since the last look (or was never looked at),
    else None."""
    if not os.path.isdir(memory_folder):
        return None
    stamp = folder_stamp(memory_folder)
    return None if read_stamps(db_path).get(memory_folder) == stamp else stamp


def poisoned_memories(audit: dict) -> dict[str, str]:
    """Thread id -> why, of every memory the audit found poisoned."""
    found: dict[str, str] = {}
    for finding in audit.get("findings", []):
        if finding.get("kind") != "poisoned" or not finding.get("memory"):
            continue
        origin = finding.get("origin") or {}
        why = (f"poisoned: a directive ({finding.get('rule')}) from the {origin.get('kind')} "
               f"output of {origin.get('tool') or 'a tool'} (call {origin.get('call_id') or '?'})")
        found.setdefault(finding["memory"], why)
    return found


def quarantine_poisoned(conn, codex_home: str, *, now: int, audit: dict | None = None) -> dict:
    """Ask Codex to forget every poisoned memory of ``codex_home`` (the note way); what was
    asked, what was dropped (already asked...), and the note."""
    from memcite.codex.memory_audit import audit_home
    from memcite.ledger.codex_home import locate_codex_home
    from memcite.retention.forget import RULE_POISONED, WAY_NOTE, ToForget, forget_memories

    audit = audit if audit is not None else audit_home(codex_home)
    found = poisoned_memories(audit)
    if not found:
        return {"poisoned": 0, "asked": [], "dropped": [], "note_path": None}
    locations = locate_codex_home(codex_home)
    result = forget_memories(conn, [ToForget(thread, None, why) for thread, why in found.items()],
                             locations=locations, way=WAY_NOTE, rule=RULE_POISONED,
                             max_unused_days=0, limit_time=now, now=now)
    return {"poisoned": len(found), "asked": [m["thread_id"] for m in result.asked],
            "dropped": result.dropped, "note_path": result.note_path}


def check_after_reply(conn, db_path: str, codex_home: str, memory_folder: str, *, now: int,
                      config_path: str | None = None, detach: bool = False,
                      hook_log: str | None = None) -> dict | None:
    """The Stop hook's look at the memory folder: None when unchanged (or the quarantine is
    off). Changed: what the quarantine did, or, with ``detach``, ``{"detached": PID}``: the
    audit runs in a process of its own (``run_detached``, which logs to ``hook_log``), so the
    turn does not wait for it (an audit of a large home takes seconds to minutes).

    ``config_path`` and ``hook_log`` come from the caller's ``memcite.paths.Locations``
    (the Stop hook passes both); without them, the ones the environment names.
    """
    stamp = changed_folder(db_path, memory_folder)
    if stamp is None:
        return None
    from memcite.codex.memory_gate import gate_setting
    from memcite.paths import hook_log_path, memcite_config_path

    save_stamp(db_path, memory_folder, stamp)
    if not gate_setting(config_path or memcite_config_path()):
        return None
    if detach:
        return {"detached": spawn_quarantine(db_path, codex_home, hook_log or hook_log_path())}
    return quarantine_poisoned(conn, codex_home, now=now)


DETACHED_DEADLINE_SECONDS = 900


def spawn_quarantine(db_path: str, codex_home: str, hook_log: str) -> int:
    """Start ``run_detached`` in a new session, its output nowhere; its process id."""
    import subprocess
    import sys

    child = subprocess.Popen(  # noqa: S603 - our own interpreter and module, no shell
        [sys.executable, "-m", "memcite.codex.memory_quarantine", db_path, codex_home, hook_log],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True)
    return child.pid


def run_detached(db_path: str, codex_home: str, hook_log: str) -> int:
    """The quarantine as its own process: audit, note, and one line in the hook log
    ``hook_log`` (``event`` ``quarantine``); always 0."""
    import signal
    import time

    from memcite.ledger.hook_log import append_entry, log_time

    clock = time.monotonic()
    entry: dict = {"event": "quarantine", "codex_home": codex_home}
    if hasattr(signal, "alarm"):
        signal.alarm(DETACHED_DEADLINE_SECONDS)
    try:
        from memcite.ledger.store import open_store

        conn = open_store(db_path)
        try:
            done = quarantine_poisoned(conn, codex_home, now=int(time.time()))
        finally:
            conn.close()
        entry.update(status="ok", poisoned=done["poisoned"], asked=done["asked"][:50],
                     note=done["note_path"], dropped=len(done["dropped"]))
    except BaseException as exc:  # noqa: BLE001 - logged; nothing is waiting for it
        entry.update(status="error", error=f"{type(exc).__name__}: {exc}"[:500])
    entry["ms"] = round((time.monotonic() - clock) * 1000, 1)
    try:
        entry.update(log_time(time.time()))
        append_entry(hook_log, entry)
    except BaseException:  # noqa: BLE001, S110 - nowhere left to report it
        pass
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(run_detached(*sys.argv[1:]) if len(sys.argv) == 4 else 2)
