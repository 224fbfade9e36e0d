"""The quarantine: poisoned memories that reached Codex's memory folder without the gate.

The PreToolUse gate (``memory_gate``, in the Codex wing above this one) sees the writes of Codex's consolidation
agent. A write by another program, or by a Codex that runs no hook, it never sees. So the
Stop hook (after it recorded the turn) looks at the memory folder's *stamp*: the size and
modification time of the files a consolidation changes (``MEMORY.md``,
``memory_summary.md``, ``raw_memories.md``, ``phase2_workspace_diff.md``, the
``.codex-baseline`` and ``rollout_summaries`` folders). Unchanged since the last look (the
common case: a few ``stat`` calls and one small file read) it does nothing more. Changed, it
runs the audit (``memcite.audit.memory_audit``) and asks Codex to forget each memory the audit
finds poisoned by the narrow *certain* rule (``memcite.judgement.severity``: concealment, or a
credential sent away, placed in third-party content or a file outside the project), through
the forget path ``prune --apply`` uses (``memcite.retention.forget``, rule ``poisoned``): an
ad-hoc note for Codex's next consolidation, journaled in ``forget_requests``, which
``memcite restore`` withdraws. Every other poisoned memory is *proposed*: listed in the hook
log, forgotten only when the user asks (``memcite audit --quarantine --apply``). A memory the
user restored stays restored until its text changes (the hash of its text when memcite asked
is kept in the stamps file).

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
    _save_key(db_path, memory_folder, stamp)


def _save_key(db_path: str, key: str, value: object) -> None:
    from memcite.durable_files import open_folder, replace_file_at

    stamps = read_stamps(db_path)
    stamps[key] = value
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


def _memories_of(finding: dict) -> list[str]:
    found = finding.get("memories") or ([finding["memory"]] if finding.get("memory") else [])
    return [thread for thread in found if isinstance(thread, str)]


def _why(finding: dict) -> str:
    """Why a memory is asked for, in words that never repeat the injected text (the note is
    read by Codex's consolidation agent): the rule, where from, the kinds of effect and
    marker."""
    judged = finding.get("judgement") or {}
    origin = finding.get("origin") or {}
    kinds = sorted({effect.get("kind") for effect in judged.get("effects", [])
                    if isinstance(effect, dict) and isinstance(effect.get("kind"), str)})
    markers = [marker for marker in judged.get("markers", []) if isinstance(marker, str)]
    return (f"poisoned: {finding.get('rule') or 'an instruction'} from the {origin.get('kind') or '?'} "
            f"output of {origin.get('tool') or 'a tool'} (call {origin.get('call_id') or '?'})"
            + (f", {judged['trust']} content" if isinstance(judged.get("trust"), str) else "")
            + (f"; effects: {', '.join(kinds)}" if kinds else "")
            + (f"; markers: {', '.join(markers)}" if markers else ""))[:500]


def poisoned_memories(audit: dict) -> dict[str, str]:
    """Thread id -> why, of every memory the audit found poisoned (high): what the user may
    choose to forget (``memcite audit --quarantine``)."""
    found: dict[str, str] = {}
    for finding in audit.get("findings", []):
        if finding.get("kind") != "poisoned":
            continue
        for thread in _memories_of(finding):
            found.setdefault(thread, _why(finding))
    return found


def certain_memories(audit: dict) -> dict[str, str]:
    """Thread id -> why, of the memories found poisoned by the narrow rule memcite acts on
    alone (``certain``: concealment or a credential's exfiltration, placed in third-party
    content or a file outside the project; ``memcite.judgement.severity``)."""
    found: dict[str, str] = {}
    for finding in audit.get("findings", []):
        if finding.get("kind") == "poisoned" and finding.get("certain") is True:
            for thread in _memories_of(finding):
                found.setdefault(thread, _why(finding))
    return found


def _kept_decisions(conn, codex_home: str, db_path: str | None, audit: dict) -> set[str]:
    """The memories the user restored (or withdrew the request for) whose text has not
    changed since memcite last asked: the user's decision stands."""
    try:
        rows = conn.execute("SELECT DISTINCT thread_id FROM forget_requests WHERE codex_home = ?"
                            " AND state IN ('restored', 'withdrawn')", (codex_home,)).fetchall()
    except Exception:  # noqa: BLE001 - an older ledger: no decision to keep
        return set()
    asked = read_stamps(db_path).get(_ASKED_KEY, {}) if db_path else {}
    texts = audit.get("memory_texts") or {}
    kept = set()
    for (thread,) in rows:
        before = (asked.get(codex_home) or {}).get(thread) if isinstance(asked, dict) else None
        if before is None or before == texts.get(thread):
            kept.add(thread)
    return kept


_ASKED_KEY = "quarantine-asked"  # in the stamps file: home -> {thread id: its text's hash}


def _remember_asked(db_path: str | None, codex_home: str, audit: dict, threads: list[str]) -> None:
    if not db_path or not threads:
        return
    stamps = read_stamps(db_path)
    asked = stamps.get(_ASKED_KEY) if isinstance(stamps.get(_ASKED_KEY), dict) else {}
    home = asked.get(codex_home) if isinstance(asked.get(codex_home), dict) else {}
    texts = audit.get("memory_texts") or {}
    home.update({thread: texts.get(thread) for thread in threads})
    asked[codex_home] = home
    _save_key(db_path, _ASKED_KEY, asked)


def quarantine_poisoned(conn, codex_home: str, *, now: int, audit: dict | None = None,
                        everything: bool = False, db_path: str | None = None,
                        dry_run: bool = False) -> dict:
    """Ask Codex to forget the poisoned memories of ``codex_home`` (the note way): alone,
    only the *certain* ones; with ``everything`` (the user asked: ``memcite audit
    --quarantine --apply``), every memory found poisoned. A memory the user restored stays
    restored until its text changes. ``dry_run``: what would be asked, nothing written.
    Returns the counts, what was asked (or would be), what was proposed and left to the user."""
    from memcite.audit.memory_audit import audit_home
    from memcite.ledger.codex_home import locate_codex_home
    from memcite.retention.forget import RULE_POISONED, WAY_NOTE, ToForget, forget_memories

    audit = audit if audit is not None else audit_home(codex_home)
    poisoned = poisoned_memories(audit)
    found = poisoned if everything else certain_memories(audit)
    kept = _kept_decisions(conn, codex_home, db_path, audit) if found else set()
    chosen = {thread: why for thread, why in found.items() if thread not in kept}
    proposed = sorted(set(poisoned) - set(chosen) - kept)
    done = {"poisoned": len(poisoned), "certain": len(certain_memories(audit)),
            "proposed": proposed, "kept_by_user": sorted(kept & set(found)), "asked": [],
            "dropped": [], "note_path": None, "would_ask": sorted(chosen)}
    if not chosen or dry_run:
        return done
    locations = locate_codex_home(codex_home)
    result = forget_memories(conn, [ToForget(thread, None, why) for thread, why in chosen.items()],
                             locations=locations, way=WAY_NOTE, rule=RULE_POISONED,
                             max_unused_days=0, limit_time=now, now=now)
    asked = [m["thread_id"] for m in result.asked]
    _remember_asked(db_path, codex_home, audit, asked)
    done.update(asked=asked, dropped=result.dropped, note_path=result.note_path)
    return done


def quarantine_on_request(codex_home: str, open_ledger, *, apply: bool, now: int,
                          db_path: str | None, audit: dict) -> dict:
    """``memcite audit --quarantine``: what asking Codex to forget every memory ``audit`` found
    poisoned would ask (a preview), and with ``apply``, the request written (the note way,
    journaled; ``memcite restore`` undoes it). A memory the user restored is left alone until
    its text changes. ``open_ledger()`` opens memcite's ledger (a writer with ``apply``; may
    return None when there is none yet: nothing was decided)."""
    conn = open_ledger()
    try:
        if conn is None:
            found = poisoned_memories(audit)
            return {"poisoned": len(found), "certain": len(certain_memories(audit)), "proposed": [],
                    "kept_by_user": [], "asked": [], "dropped": [], "note_path": None,
                    "would_ask": sorted(found), "why": found, "applied": False}
        done = quarantine_poisoned(conn, codex_home, now=now, audit=audit, everything=True,
                                   db_path=db_path, dry_run=not apply)
    finally:
        if conn is not None:
            conn.close()
    done.update(why=poisoned_memories(audit), applied=apply)
    return done


def render_quarantine(done: dict) -> str:
    """What ``memcite audit --quarantine`` prints."""
    from memcite.display import count, shown

    lines = [f"memories found poisoned: {done['poisoned']} ({done['certain']} certain by the "
             "narrow rule the hooks act on alone)"]
    for thread in done["would_ask"][:50]:
        lines.append(f"  {thread}  {shown(done['why'].get(thread, ''))[:160]}")
    for thread in done["kept_by_user"]:
        lines.append(f"  {thread}  restored by you; left alone until its text changes")
    if done["applied"]:
        lines.append(f"asked Codex to forget {count(len(done['asked']), 'memory', 'memories')}"
                     + (f" (note {done['note_path']})" if done["note_path"] else "")
                     + "; `memcite restore ID` undoes it")
    elif done["would_ask"]:
        lines.append(f"would ask Codex to forget {count(len(done['would_ask']), 'memory', 'memories')}; "
                     "`memcite audit --quarantine --apply` writes the request")
    else:
        lines.append("nothing to forget")
    return "\n".join(lines) + "\n"


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
    from memcite.paths import hook_log_path, memcite_config_path
    from memcite.retention.rules import gate_setting

    save_stamp(db_path, memory_folder, stamp)
    if not gate_setting(config_path or memcite_config_path()):
        return None
    if detach:
        return {"detached": spawn_quarantine(db_path, codex_home, hook_log or hook_log_path())}
    return quarantine_poisoned(conn, codex_home, now=now, db_path=db_path)


DETACHED_DEADLINE_SECONDS = 900


def spawn_quarantine(db_path: str, codex_home: str, hook_log: str) -> int:
    """Start ``run_detached`` in a new session, its output nowhere; its process id."""
    import subprocess
    import sys

    child = subprocess.Popen(  # noqa: S603 - our own interpreter and module, no shell
        [sys.executable, "-m", "memcite.audit.memory_quarantine", db_path, codex_home, hook_log],
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
            done = quarantine_poisoned(conn, codex_home, now=int(time.time()), db_path=db_path)
        finally:
            conn.close()
        entry.update(status="ok", poisoned=done["poisoned"], certain=done["certain"],
                     asked=done["asked"][:50], proposed=done["proposed"][:50],
                     kept_by_user=done["kept_by_user"][:50], note=done["note_path"],
                     dropped=len(done["dropped"]))
        if done["proposed"]:
            entry["hint"] = ("found poisoned, not forgotten: `memcite audit --quarantine` "
                             "previews asking Codex to forget them")
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
