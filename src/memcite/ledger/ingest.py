"""Reading assistant replies out of Codex session files (``memcite ingest``), streaming.

Only files given explicitly are read; nothing is searched for. A rollout is
JSON Lines: a ``session_meta`` line (``payload.id``, ``payload.cwd``) and
``response_item`` lines; an assistant reply is a ``message`` item with role
``assistant`` whose ``output_text`` parts, concatenated, are the reply text
(block included). Other lines are skipped, most of them without being parsed.
``.jsonl.zst`` files are decompressed on the fly.

Each reply is keyed by its place, ``<session id>:<line number>`` (the file's
absolute path when there is no ``session_meta``): rollout files are only
appended to, so ingesting a file again counts nothing twice, while two turns
that happen to say the same thing count twice, as Codex counts them.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from memcite.citations.thread_ids import normalize_thread_id
from memcite.errors import InputError, MemciteError
from memcite.ledger.recording import ReplyInput, parse_time, record_replies


@dataclass
class RolloutScan:
    """Counts kept while a rollout file is read."""

    path: str
    lines: int = 0
    session_id: str | None = None
    cwd: str | None = None
    replies: int = 0
    bad_lines: list[int] = field(default_factory=list)  # not JSON (first few kept)
    bad_line_count: int = 0
    offset: int = 0  # bytes read so far (of the decompressed text for .zst)


# ``progress(scan)`` is called every this many lines while a rollout is read.
PROGRESS_EVERY_LINES = 4096


def check_rollout(path: str | os.PathLike) -> None:
    """Raise ``InputError`` if ``path`` cannot be opened as a rollout file (nothing is read)."""
    _open_lines(os.fspath(path)).close()


def reply_id(session_id: str | None, path: str, line_number: int) -> str:
    """The stable key of the reply on ``line_number``: its session and line, else its file and line."""
    return f"{session_id or os.path.abspath(path)}:{line_number}"


def _open_lines(path: str):
    """A binary line iterator over ``path``, decompressing ``.zst``."""
    try:
        raw = open(path, "rb")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory; give rollout files explicitly") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if path.endswith(".zst"):
        import zstandard

        reader = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return io.BufferedReader(reader, buffer_size=1 << 20)
    return raw


_HEAD_BYTES = 64 * 1024


def _is_candidate(head: bytes) -> bool:
    """Whether a line (judged by its start) may be a session_meta or an assistant reply."""
    return b'"session_meta"' in head or (b'"response_item"' in head and b'"assistant"' in head)


def _candidate_lines(handle) -> Iterator[tuple[int, bytes | None]]:
    """``(line number, line)`` for lines that may matter, ``None`` for the others.

    The type and role come first in Codex's lines, so a long line (a tool's
    output) is judged by its first 64 KiB and skipped without being held whole.
    """
    number = 0
    while True:
        head = handle.readline(_HEAD_BYTES)
        if not head:
            return
        number += 1
        complete = head.endswith(b"\n")
        if not _is_candidate(head):
            while not complete:
                rest = handle.readline(1 << 20)
                complete = not rest or rest.endswith(b"\n")
            yield number, None
            continue
        if complete:
            yield number, head
            continue
        parts = [head]
        while True:
            rest = handle.readline(1 << 20)
            parts.append(rest)
            if not rest or rest.endswith(b"\n"):
                break
        yield number, b"".join(parts)


def _assistant_text(payload: dict) -> str | None:
    if payload.get("type") != "message" or payload.get("role") != "assistant":
        return None
    content = payload.get("content")
    if not isinstance(content, list):
        return None
    return "".join(
        part["text"] for part in content
        if isinstance(part, dict) and part.get("type") == "output_text"
        and isinstance(part.get("text"), str)
    )


def iter_rollout_replies(path: str | os.PathLike, scan: RolloutScan | None = None,
                         progress: Callable[[RolloutScan], None] | None = None, *,
                         handle=None, first_line: int = 0) -> Iterator[ReplyInput]:
    """Yield each assistant reply of one rollout file, with the session's thread id and cwd;
    ``progress(scan)``, if given, is called now and then as lines are read.

    ``handle`` (closed at the end) reads from a later point of the file, whose first line is
    line ``first_line + 1``; ``scan`` then carries the session id and cwd read before it
    (see ``memcite.ledger.session_offsets``).
    """
    path = os.fspath(path)
    scan = scan if scan is not None else RolloutScan(path)
    origin = f"ingest:{os.path.abspath(path)}"
    handle = _open_lines(path) if handle is None else handle
    try:
        for number, line in _candidate_lines(handle):
            number += first_line
            scan.lines = number
            if progress is not None and number % PROGRESS_EVERY_LINES == 0:
                scan.offset = handle.tell()
                progress(scan)
            # A cheap look before parsing: most lines (tool output, reasoning) are not replies.
            if line is None:
                continue
            try:
                item = json.loads(line)
            except ValueError:
                scan.bad_line_count += 1
                if len(scan.bad_lines) < 10:
                    scan.bad_lines.append(number)
                continue
            if not isinstance(item, dict) or not isinstance(item.get("payload"), dict):
                continue
            payload = item["payload"]
            kind = item.get("type")
            if kind == "session_meta":
                session = payload.get("id")
                if isinstance(session, str):
                    scan.session_id = normalize_thread_id(session) or session
                cwd = payload.get("cwd")
                scan.cwd = cwd if isinstance(cwd, str) else scan.cwd
                continue
            if kind != "response_item":
                continue
            text = _assistant_text(payload)
            if text is None:
                continue
            at = None
            if item.get("timestamp") is not None:
                try:
                    at = parse_time(item["timestamp"], what=f"{path}:{number}: timestamp")
                except InputError:
                    at = None
            scan.replies += 1
            yield ReplyInput(text=text, id=reply_id(scan.session_id, path, number), at=at,
                             thread_id=scan.session_id, cwd=scan.cwd, origin=origin,
                             where=f"{path}:{number}")
    except (OSError, MemciteError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None
    except Exception as exc:  # zstandard.ZstdError and friends: a damaged file
        if type(exc).__module__.startswith("zstandard"):
            raise InputError(f"{path}: not a readable zstd file ({exc})") from None
        raise
    finally:
        handle.close()


@dataclass
class IngestReport:
    """What ingesting one rollout file recorded."""

    path: str
    session_id: str | None
    replies: int = 0
    recorded: int = 0
    duplicates: int = 0
    rejected: int = 0
    counted: int = 0
    unknown_ids: set[str] = field(default_factory=set)
    not_uuid_ids: set[str] = field(default_factory=set)
    bad_lines: list[int] = field(default_factory=list)
    bad_line_count: int = 0

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "session_id": self.session_id,
            "replies": self.replies,
            "recorded": self.recorded,
            "duplicates": self.duplicates,
            "rejected": self.rejected,
            "counted": self.counted,
            "unknown_ids": sorted(self.unknown_ids),
            "not_uuid_ids": sorted(self.not_uuid_ids),
            "bad_lines": self.bad_lines,
            "bad_line_count": self.bad_line_count,
        }


def ingest_rollout(
    conn: sqlite3.Connection,
    path: str | os.PathLike,
    *,
    profile: str = "codex",
    policy: str = "default",
    memory_root: str | os.PathLike | None = None,
    now: int | None = None,
    progress: Callable[[RolloutScan], None] | None = None,
    scan: RolloutScan | None = None,
    handle=None,
    first_line: int = 0,
) -> IngestReport:
    """Record every assistant reply of one rollout file (one transaction per reply).

    A file read from its start with neither a ``session_meta`` line nor an assistant
    reply is not a Codex session file: ``InputError`` (nothing was recorded).
    ``scan``, ``handle`` and ``first_line`` read from a later point (see ``iter_rollout_replies``).
    """
    path = os.fspath(path)
    scan = scan if scan is not None else RolloutScan(path)
    report = IngestReport(path, None)
    replies = iter_rollout_replies(path, scan, progress, handle=handle, first_line=first_line)
    results = record_replies(conn, replies, profile=profile,
                             policy=policy, memory_root=memory_root, now=now)
    for result in results:
        report.replies += 1
        if result.status == "recorded":
            report.recorded += 1
            report.counted += len(result.counted)
            report.unknown_ids.update(result.unknown)
            report.not_uuid_ids.update(result.not_uuid)
        elif result.status == "duplicate":
            report.duplicates += 1
        else:
            report.rejected += 1
    if first_line == 0 and scan.session_id is None and not report.replies:
        raise InputError(
            f"{path}: not a Codex session file: no session_meta line and no assistant reply"
            f" in {scan.lines} line(s)",
            hint="give the rollout-*.jsonl files of $CODEX_HOME/sessions")
    report.session_id = scan.session_id
    report.bad_lines = scan.bad_lines
    report.bad_line_count = scan.bad_line_count
    return report
