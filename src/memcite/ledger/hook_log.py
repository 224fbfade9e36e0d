"""memcite's own log of its Codex hook runs: JSON Lines, rotated, bounded.

A hook must print nothing and never fail, so what it did (and what went wrong)
goes here, one line per run, and ``memcite doctor`` reads the last lines back.
The file is rotated once it passes ``MAX_LOG_BYTES`` (one older file is kept as
``.1``), so the two together never hold much more than twice that. Each line is
appended with one ``write`` on a file opened for appending, so concurrent hooks
do not interleave their lines. No reply text, payload or memory content is ever
logged: times, counts, paths and error messages only, each with secrets masked
(``memcite.secrets.mask_secrets``) and cut to a bounded length.
"""

from __future__ import annotations

import json
import os
import time

from memcite.durable_files import append_line
from memcite.untrusted import NotRegularFile, json_lines, open_regular

MAX_LOG_BYTES = 256 * 1024
MAX_FIELD_CHARS = 500
_TAIL_BYTES = 64 * 1024


def log_time(epoch: float) -> dict:
    """The ``at`` (ISO 8601 UTC) and ``at_epoch`` fields of an entry."""
    return {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch)), "at_epoch": int(epoch)}


def _bounded(value):
    """A string field with secrets masked (before it is cut, so no secret is cut in two), cut."""
    if not isinstance(value, str):
        return value
    from memcite.secrets import mask_secrets

    value = mask_secrets(value)
    if len(value) > MAX_FIELD_CHARS:
        return value[: MAX_FIELD_CHARS - 1] + "…"
    return value


def append_entry(path: str | os.PathLike, entry: dict) -> None:
    """Append one entry (a line of JSON), creating the folder (0700) and file (0600), rotating first."""
    path = os.fspath(path)
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        os.makedirs(folder, mode=0o700, exist_ok=True)
    try:
        if os.path.getsize(path) >= MAX_LOG_BYTES:
            os.replace(path, path + ".1")
    except FileNotFoundError:
        pass
    data = (json.dumps({key: _bounded(value) for key, value in entry.items()},
                       ensure_ascii=False) + "\n").encode("utf-8", "replace")
    # Never a hang: a FIFO planted as the log (a plain open for writing waits for a reader)
    # or a device is refused at once with a ``NotRegularFile``; the entry is then lost.
    # On a line of its own, even after a last line left unterminated.
    descriptor = open_regular(path, flags=os.O_RDWR | os.O_APPEND | os.O_CREAT, mode=0o600)
    try:
        append_line(descriptor, data)
    finally:
        os.close(descriptor)


def _tail_lines(path: str) -> list[bytes]:
    """The last lines of ``path``; none when it is missing or cannot be read, a
    ``NotRegularFile`` when it is a FIFO, a device or a folder (opened without blocking)."""
    try:
        with os.fdopen(open_regular(path), "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - _TAIL_BYTES))
            data = handle.read()
    except NotRegularFile:
        raise
    except OSError:
        return []
    lines = data.split(b"\n")
    if size > _TAIL_BYTES:
        lines = lines[1:]  # the first one is cut
    return [line for line in lines if line.strip()]


def read_entries(path: str | os.PathLike, limit: int = 20) -> list[dict]:
    """The last ``limit`` entries, oldest first (from the rotated file too); bad lines skipped.

    A log that is not a regular file (a FIFO, a device, a folder) raises ``NotRegularFile``
    (an ``OSError`` saying what it is, and where) rather than being read or waited on.
    """
    path = os.fspath(path)
    lines = _tail_lines(path)
    if len(lines) < limit:
        lines = _tail_lines(path + ".1") + lines
    entries = []
    for raw in lines[-limit:] if limit else []:
        for _number, entry, _why in json_lines(raw):
            if isinstance(entry, dict):
                entries.append(entry)
    return entries


# What wrote a line (its ``event``): the Stop hook (the default of lines older than the
# field), the pre-tool gate, and the quarantine the Stop hook starts as a detached process.
RUN_KINDS = {"stop": "Stop hook", "pre-tool": "pre-tool gate",
             "quarantine": "quarantine (the Stop hook's background work)"}


def run_kind(entry: dict) -> str:
    """What wrote ``entry``: ``stop``, ``pre-tool``, ``quarantine``, or another event name."""
    event = entry.get("event", "stop")
    return event if isinstance(event, str) and event else "stop"


def entries_by_kind(entries: list[dict]) -> dict[str, list[dict]]:
    """``entries`` grouped by what wrote them, each group oldest first: the last line of the
    log may be the Stop hook's background line, never to be read as a Stop-hook run."""
    grouped: dict[str, list[dict]] = {}
    for entry in entries:
        grouped.setdefault(run_kind(entry), []).append(entry)
    return grouped
