"""The body of ``memcite hook stop``: what Codex's ``Stop`` and ``SubagentStop`` hooks run after every turn.

Codex passes the hook payload as JSON on stdin; its ``transcript_path`` is the
session file (``last_assistant_message`` has already lost its citation block,
so the file is the source). The replies added since the last run are recorded
(``memcite.ledger.session_offsets``), reading at most ``HOOK_READ_BUDGET`` bytes
so that a first run at the end of a huge session still ends in time (the next
turn reads on from there). Codex queues the final reply for the session file
before it runs the hook; when the end of ``last_assistant_message`` is not in
what was read, the hook waits up to ``FLUSH_WAIT_SECONDS`` for the file to grow
and reads once more (a reply still missing is read by the next turn's run).

A hook must never get in the agent's way: Codex would make the agent go on if
it exited 2 or printed a ``decision``. So whatever happens this exits 0 and
writes nothing to stdout or stderr; it waits for a busy database for at most
``HOOK_BUSY_TIMEOUT_MS`` and then gives up; and every run, with its counts or
its error, is a line in memcite's hook log (``memcite.ledger.hook_log``) that
``memcite doctor`` shows. Run on the fast path (``memcite.cli.gate_commands.hook_stop``
builds the locations): Typer is never imported.
"""

from __future__ import annotations

import os
import sys
import time

from memcite.untrusted import loads_json

# Another memcite writer (a detached quarantine, a `sync`) holds the ledger for milliseconds;
# on a loaded machine, longer. Wait this long, then log the run as ``busy``: the session
# file's offset did not move, so the next turn (or `memcite sync`) reads what this one missed.
HOOK_BUSY_TIMEOUT_MS = 5000
# Codex runs the Stop hook once the final reply is queued for the session file, which may
# not have reached the disk yet: when it is not there, wait this long for the file to grow.
FLUSH_WAIT_SECONDS = 1.5
REPLY_NEEDLE_CHARS = 24
# The hook gives up after this long, well inside the 30 s setup gives Codex as its timeout.
HOOK_DEADLINE_SECONDS = 20
HOOK_READ_BUDGET = 32 * 1024 * 1024
MAX_PAYLOAD_BYTES = 16 * 1024 * 1024


class _Skip(Exception):
    """Nothing to do for this payload (no session file): logged as ``skipped``."""


class _BadPayload(Exception):
    """The payload cannot be used: logged as an error."""


class _Deadline(Exception):
    """The run took longer than ``HOOK_DEADLINE_SECONDS``: it stops (the next turn goes on)."""


def _stop_at_deadline(signum, frame) -> None:
    raise _Deadline(f"gave up after {HOOK_DEADLINE_SECONDS} s (the next turn reads on)")


def _set_deadline(seconds: float) -> None:
    import signal

    if not hasattr(signal, "setitimer"):
        return  # Windows: Codex's own timeout is the limit
    try:
        if seconds:
            signal.signal(signal.SIGALRM, _stop_at_deadline)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    except ValueError:
        pass  # not the main thread (a library caller): no alarm


def codex_home_of(transcript_path: str) -> str | None:
    """The Codex home a session file lies in (``sessions/YYYY/MM/DD/`` or ``archived_sessions/``)."""
    folder = os.path.dirname(os.path.abspath(transcript_path))
    if os.path.basename(folder) == "archived_sessions":
        return os.path.dirname(folder)
    parts = []
    for _ in range(3):
        folder, part = os.path.split(folder)
        parts.append(part)
    if os.path.basename(folder) == "sessions" and all(part.isdigit() for part in parts):
        return os.path.dirname(folder)
    return None


def read_payload(stream, limit: int | None = None) -> dict:
    """The hook payload: one JSON object of at most ``limit`` bytes (``MAX_PAYLOAD_BYTES``)."""
    limit = MAX_PAYLOAD_BYTES if limit is None else limit

    if stream.isatty():
        raise _BadPayload("no payload on stdin (this command is run by Codex's Stop hook)")
    data = _read_object(stream, limit)
    if not data.strip():
        raise _BadPayload("the payload is empty")
    try:
        payload = loads_json(data)
    except ValueError as exc:
        raise _BadPayload(f"the payload is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise _BadPayload("the payload is not a JSON object")
    return payload


def _read_object(stream, limit: int) -> bytes:
    """The bytes on ``stream`` up to its end, or up to a complete JSON object (Codex closes
    stdin after the payload; this does not rely on it)."""
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, ValueError):
        descriptor = None
    if descriptor is None:
        data = stream.read(limit + 1)
    else:
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(descriptor, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if chunk.rstrip().endswith(b"}"):
                try:
                    loads_json(b"".join(chunks))
                except ValueError:
                    continue
                break
        data = b"".join(chunks)
    if len(data) > limit:
        raise _BadPayload(f"the payload is larger than {limit} bytes")
    return data


BUSY_REASON = ("memcite's database was busy with another writer; nothing was lost: the next "
               "turn, or `memcite sync`, reads what this turn added")


def ledger_busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's "locked" or "busy": another connection held the ledger past
    the hook's wait (nothing was written; the session file's offset is where it was)."""
    import sqlite3

    return isinstance(exc, sqlite3.OperationalError) and \
        exc.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def describe_error(exc: BaseException) -> str:
    import sqlite3

    from memcite.errors import MemciteError

    if isinstance(exc, MemciteError | _BadPayload | _Skip | _Deadline):
        return str(exc)
    if isinstance(exc, sqlite3.Error):
        return f"memcite's database: {exc}"
    if isinstance(exc, KeyboardInterrupt | SystemExit):
        return f"interrupted ({type(exc).__name__})"
    return f"{type(exc).__name__}: {exc}"


def _run_stop(entry: dict, where, codex_home: str | None, stdin) -> None:
    payload = read_payload(stdin)
    for key in ("session_id", "turn_id", "hook_event_name", "agent_id", "agent_type"):
        if isinstance(payload.get(key), str):
            entry[key] = payload[key]
    # A subagent's turn fires SubagentStop: its replies are in its own session file, and
    # ``transcript_path`` is the parent's. Either file's replies have the same keys however
    # they are read, so a reply read here and by a whole-home ingest is recorded once.
    field = "agent_transcript_path" if payload.get("hook_event_name") == "SubagentStop" \
        else "transcript_path"
    transcript = payload.get(field)
    if transcript is None or transcript == "":
        raise _Skip(f"the payload has no {field} (a session without a session file)")
    if not isinstance(transcript, str):
        raise _BadPayload(f"{field} is not a string")
    entry["transcript_path"] = transcript

    from memcite.ledger.session_offsets import ingest_session_file
    from memcite.ledger.store import open_store

    home = codex_home or codex_home_of(transcript) or where.codex_home_path
    folder = where.default_db_folder  # as memcite.ledger.database.open_ledger, without its imports
    if folder is not None and not os.path.isdir(folder):
        os.makedirs(folder, mode=0o700, exist_ok=True)
    from memcite.ledger.codex_home import codex_memory_folder

    root = codex_memory_folder(home)  # the store Codex reads: memories, or memories_v2
    conn = open_store(where.db_path, busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS)
    try:
        read = [ingest_session_file(conn, transcript, budget=HOOK_READ_BUDGET,
                                    memory_root=root, origin="hook")]
        message = payload.get("last_assistant_message")
        if read[-1].caught_up and isinstance(message, str) and \
                not reply_on_disk(transcript, read[-1].to_offset, message) and \
                wait_for_growth(transcript, read[-1].to_offset, FLUSH_WAIT_SECONDS):
            entry["waited_for_reply"] = True
            read.append(ingest_session_file(conn, transcript, budget=HOOK_READ_BUDGET,
                                            memory_root=root, origin="hook"))
        _quarantine(entry, conn, where, home, root)
        _snapshot(entry, where, home, root)
    finally:
        conn.close()
    reports = [r.report for r in read if r.report is not None]
    entry.update(
        status="ok",
        replies=sum(r.replies for r in reports),
        recorded=sum(r.recorded for r in reports),
        counted=sum(r.counted for r in reports),
        from_offset=read[0].from_offset,
        to_offset=read[-1].to_offset,
        reread=read[0].reread,
        caught_up=read[-1].caught_up,
    )
    if sum(r.bad_line_count for r in reports):
        entry["bad_lines"] = sum(r.bad_line_count for r in reports)


def _quarantine(entry: dict, conn, where, home: str, root: str) -> None:
    """When the memory folder changed since the last reply, quarantine its poisoned memories
    (``memcite.audit.memory_quarantine``); its errors are logged, the turn stays recorded."""
    from memcite.audit.memory_quarantine import check_after_reply

    try:
        done = check_after_reply(conn, where.db_path, home, root, now=int(time.time()),
                                 config_path=where.config.path, detach=True,
                                 hook_log=where.hook_log)
    except Exception as exc:  # noqa: BLE001 - logged; the reply is recorded all the same
        entry["quarantine_error"] = describe_error(exc)
        return
    if done is not None:
        entry["quarantine"] = done  # {"detached": pid}: its own line follows in the log


def _snapshot(entry: dict, where, home: str, root: str) -> None:
    """When the memory folder changed, keep a snapshot of it (``memcite.codex.snapshots``);
    its errors are logged, the turn stays recorded."""
    from memcite.audit.memory_quarantine import folder_stamp
    from memcite.ledger.snapshot_look import unchanged

    try:
        stamp = folder_stamp(root)
        if unchanged(where.db_path, root, stamp):
            return  # the common case: nothing more is imported or read
        from memcite.ledger.snapshots import after_reply

        done = after_reply(where.db_path, home, root, stamp, now=int(time.time()))
    except Exception as exc:  # noqa: BLE001 - logged; the reply is recorded all the same
        entry["snapshot_error"] = describe_error(exc)
        return
    if done is not None:
        entry["snapshot"] = done


def reply_on_disk(path: str, end: int, message: str) -> bool:
    """Whether the end of the turn's final reply (``last_assistant_message``, the reply before
    its citation block) is in the last MiB before ``end``; True when there is nothing to look for."""
    import json

    needle = message.strip()[-REPLY_NEEDLE_CHARS:]
    if not needle:
        return True
    from memcite.untrusted import open_regular

    escaped = json.dumps(needle, ensure_ascii=False)[1:-1].encode("utf-8", "replace")
    try:  # regular when it was read, but it may have been replaced since: never a hang
        with os.fdopen(open_regular(path), "rb") as handle:
            start = max(0, end - (1 << 20))
            handle.seek(start)
            return escaped in handle.read(end - start)
    except OSError:
        return True


def wait_for_growth(path: str, size: int, seconds: float) -> bool:
    """Whether the file grows past ``size`` within ``seconds`` (looked at every 50 ms); False
    at once when it is no longer a regular file (the read that would follow refuses it)."""
    import stat

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode):
                return False
            if info.st_size > size:
                time.sleep(0.05)  # the rest of the line
                return True
        except OSError:
            return False
    return False


def run_stop_hook(where, *, codex_home: str | None = None,
                  ignored_args: list[str] | None = None, stdin=None) -> int:
    """Record what the session file gained since the last turn; always 0, never a byte on stdout.

    ``where`` (a ``memcite.paths.Locations``, built by the command) says where memcite's
    database, config and hook log are; ``codex_home`` is ``--codex-home`` as given (else the
    session file's home, else ``where``'s).
    """
    from memcite.ledger.hook_log import append_entry, log_time

    clock = time.monotonic()
    entry: dict = {"event": "stop", **log_time(time.time())}
    if ignored_args:
        entry["ignored_args"] = " ".join(ignored_args)
    saved = sys.stdout, sys.stderr
    sink = None
    try:
        sink = open(os.devnull, "w")  # noqa: SIM115 - whatever a library prints goes nowhere
        sys.stdout = sys.stderr = sink
        _set_deadline(HOOK_DEADLINE_SECONDS)
        _run_stop(entry, where, codex_home, stdin if stdin is not None else sys.stdin.buffer)
    except _Skip as reason:
        entry.update(status="skipped", reason=str(reason))
    except Exception as exc:  # noqa: BLE001 - a hook never fails, whatever happened
        if ledger_busy(exc):
            entry.update(status="busy", reason=BUSY_REASON)
        else:
            entry.update(status="error", error=describe_error(exc))
    except BaseException as exc:  # noqa: BLE001 - a hook never fails, whatever happened
        entry.update(status="error", error=describe_error(exc))
    finally:
        try:
            _set_deadline(0)
        except BaseException:  # noqa: BLE001, S110 - a late alarm is not worth a failure
            pass
        sys.stdout, sys.stderr = saved
        if sink is not None:
            sink.close()
        entry["ms"] = round((time.monotonic() - clock) * 1000, 1)
        try:
            append_entry(where.hook_log, entry)
        except BaseException:  # noqa: BLE001, S110 - nowhere left to report it
            pass
    return 0
