"""Reading assistant replies out of Codex session files (``memcite ingest``), streaming.

Only files given explicitly are read; nothing is searched for. A rollout is
JSON Lines: a ``session_meta`` line (``payload.id``, ``payload.cwd``) and
``response_item`` lines; an assistant reply is a ``message`` item with role
``assistant`` whose ``output_text`` parts, concatenated, are the reply text
(block included). Other lines are skipped, most of them without being parsed.
``.jsonl.zst`` files are decompressed on the fly.

The thread is the one the *first* ``session_meta`` names, as Codex reads it: a
forked or subagent session file carries copies of its parent's ``session_meta``
after its own, and these never change whose replies follow.

Each reply is keyed by its place, ``<session id>:<line number>`` (the file's
absolute path when there is no ``session_meta``; ``<session id>_<rollout id>``
for a file Codex names ``rollout-<time>-<thread id>_<rollout id>.jsonl``, a
reverted thread): rollout files are only appended to, so ingesting a file again
counts nothing twice, the same file moved to ``archived_sessions/`` or compressed
keeps its keys, two files of different threads never share a key, and two turns
that happen to say the same thing count twice, as Codex counts them.

Every line is untrusted: a line that is not JSON (or nested too deeply to parse), a
reply longer than ``max_bytes`` (skipped without being held), a non-UTF-8 or NUL
value: each is counted, reported with its line, and skipped; the file goes on. Only
regular files are opened, checked without blocking (a FIFO or ``/dev/zero`` is an
error, never a hang).
"""

from __future__ import annotations

import errno
import io
import os
import re
import sqlite3
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field

from memcite.citations.thread_ids import normalize_thread_id
from memcite.errors import InputError, MemciteError
from memcite.ledger.memory_files import open_regular
from memcite.ledger.recording import BATCH_REPLIES, ReplyInput, parse_time, record_replies
from memcite.untrusted import loads_json, storable

DEFAULT_MAX_REPLY_BYTES = 64 * 1024 * 1024  # as ``record --max-bytes``


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
    long_lines: list[int] = field(default_factory=list)  # replies over max_bytes (first few)
    long_line_count: int = 0
    parent_ids: list[str] = field(default_factory=list)  # later session_meta ids (a fork's)
    known: int = 0  # replies whose key was already recorded: skipped unparsed (in ``replies``)


# ``progress(scan)`` is called every this many lines while a rollout is read.
PROGRESS_EVERY_LINES = 4096


def check_rollout(path: str | os.PathLike) -> None:
    """Raise ``InputError`` if ``path`` cannot be opened as a rollout file (nothing is read)."""
    _open_lines(os.fspath(path)).close()


# rollout-<time>-<thread id>_<rollout id>.jsonl: a reverted thread's file.
_VARIANT = re.compile(
    r"^rollout-.*[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"_(?P<variant>[^.]+)\.jsonl(?:\.zst)?$")


def reply_id(session_id: str | None, path: str, line_number: int) -> str:
    """The stable key of the reply on ``line_number``: its session (and the rollout id a
    reverted thread's file name adds) and line, else its file and line."""
    if session_id is None:
        return f"{os.path.abspath(path)}:{line_number}"
    variant = _VARIANT.match(os.path.basename(path))
    if variant is not None:
        return f"{session_id}_{variant.group('variant')}:{line_number}"
    return f"{session_id}:{line_number}"


def _open_lines(path: str):
    """A binary line iterator over ``path``, decompressing ``.zst``; only a regular file."""
    try:
        raw = os.fdopen(open_regular(path), "rb")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory; give rollout files explicitly") from None
    except OSError as exc:
        if exc.errno == errno.EINVAL and "not a regular file" in str(exc.strerror):
            what = "is a directory; give rollout files explicitly" \
                if exc.strerror.startswith("a directory") else f"is {exc.strerror}"
            raise InputError(f"{path}: {what}; not read") from None
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError:  # a NUL byte in the name
        raise InputError(f"{path!r}: not a usable file name (it holds a NUL byte)") from None
    if path.endswith(".zst"):
        import zstandard

        reader = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return io.BufferedReader(reader, buffer_size=1 << 20)
    return raw


_HEAD_BYTES = 64 * 1024


def _is_candidate(head: bytes) -> bool:
    """Whether a line (judged by its start) may be a session_meta or an assistant reply."""
    return b'"session_meta"' in head or (b'"response_item"' in head and b'"assistant"' in head)


TOO_LONG = b""  # what ``_candidate_lines`` yields for a candidate longer than the limit


def _skip_rest(handle) -> None:
    """Read to the end of the current line without keeping it."""
    while True:
        rest = handle.readline(1 << 20)
        if not rest or rest.endswith(b"\n"):
            return


def key_prefix(session_id: str | None, path: str) -> str:
    """What every key of a reply of ``path`` starts with (``reply_id`` without its line)."""
    return reply_id(session_id, path, 0)[:-1]


def recorded_keys(conn: sqlite3.Connection, prefix: str) -> set[str]:
    """The reply keys already recorded that start with ``prefix`` (one range of the key index)."""
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)  # the prefix ends with ':'
    return {row[0] for row in conn.execute(
        "SELECT reply_key FROM replies WHERE reply_key >= ? AND reply_key < ?", (prefix, end))}


_NOBODY = object()


def _may_be_known_reply(line: bytes) -> bool:
    """Whether a candidate line may be skipped when its key is recorded: a message, and
    never a session_meta (which says whose replies follow)."""
    return b'"message"' in line and b'"session_meta"' not in line


def _candidate_lines(handle, max_bytes: int = DEFAULT_MAX_REPLY_BYTES
                     ) -> Iterator[tuple[int, bytes | None]]:
    """``(line number, line)`` for lines that may matter, ``None`` for the others, and
    ``TOO_LONG`` for a candidate longer than ``max_bytes``.

    The type and role come first in Codex's lines, so a long line (a tool's
    output) is judged by its first 64 KiB and skipped without being held whole; a
    candidate is held only up to ``max_bytes``.
    """
    number = 0
    while True:
        head = handle.readline(_HEAD_BYTES)
        if not head:
            return
        number += 1
        complete = head.endswith(b"\n")
        if not _is_candidate(head):
            if not complete:
                _skip_rest(handle)
            yield number, None
            continue
        if complete:
            yield number, head if len(head) <= max_bytes + 1 else TOO_LONG
            continue
        parts = [head]
        size = len(head)
        while True:
            rest = handle.readline(min(1 << 20, max_bytes + 2 - size))
            parts.append(rest)
            size += len(rest)
            if not rest or rest.endswith(b"\n"):
                break
            if size > max_bytes + 1:
                parts = None
                _skip_rest(handle)
                break
        yield number, TOO_LONG if parts is None else b"".join(parts)


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
                         handle=None, first_line: int = 0,
                         max_bytes: int = DEFAULT_MAX_REPLY_BYTES,
                         known: Callable[[str], Collection[str]] | None = None,
                         origin: str = "ingest",
                         ) -> Iterator[ReplyInput]:
    """Yield each assistant reply of one rollout file, with the session's thread id and cwd;
    ``progress(scan)``, if given, is called now and then as lines are read.

    ``known(prefix)``, if given, names the keys starting with ``prefix`` (see ``key_prefix``)
    that are already recorded: a reply line with such a key is counted (``scan.known``)
    and skipped before it is parsed, since recording it again would change nothing.

    A line longer than ``max_bytes`` is skipped without being held (``scan.long_lines``).
    ``handle`` (closed at the end) reads from a later point of the file, whose first line is
    line ``first_line + 1``; ``scan`` then carries the session id and cwd read before it
    (see ``memcite.ledger.session_offsets``).
    """
    path = os.fspath(path)
    scan = scan if scan is not None else RolloutScan(path)
    origin = f"{origin}:{os.path.abspath(path)}"  # ingest:<file>, or hook:<file>
    handle = _open_lines(path) if handle is None else handle
    # Resumed after the first session_meta: the thread is known; later ones are a parent's.
    seen_meta = first_line > 0 and scan.session_id is not None
    keyed_session: object = _NOBODY  # whose keys ``known_keys`` holds
    prefix, known_keys = "", ()
    try:
        for number, line in _candidate_lines(handle, max_bytes):
            number += first_line
            scan.lines = number
            if progress is not None and number % PROGRESS_EVERY_LINES == 0:
                scan.offset = handle.tell()
                progress(scan)
            # A cheap look before parsing: most lines (tool output, reasoning) are not replies.
            if line is None:
                continue
            if line is TOO_LONG:
                scan.long_line_count += 1
                if len(scan.long_lines) < 10:
                    scan.long_lines.append(number)
                continue
            if known is not None and _may_be_known_reply(line):
                if keyed_session is not scan.session_id:
                    keyed_session = scan.session_id
                    prefix = key_prefix(scan.session_id, path)
                    known_keys = known(prefix)
                if known_keys and f"{prefix}{number}" in known_keys:
                    scan.replies += 1
                    scan.known += 1
                    continue
            try:
                item = loads_json(line)
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
                session = storable(normalize_thread_id(session) or session) \
                    if isinstance(session, str) else None
                if seen_meta:  # a parent's, copied into a fork: not this thread
                    if session is not None and session not in scan.parent_ids:
                        scan.parent_ids.append(session)
                    continue
                seen_meta = True
                scan.session_id = session
                cwd = payload.get("cwd")
                scan.cwd = storable(cwd) if isinstance(cwd, str) else None
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
            yield ReplyInput(text=storable(text), id=reply_id(scan.session_id, path, number),
                             at=at, thread_id=scan.session_id, cwd=scan.cwd, origin=origin,
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
    long_lines: list[int] = field(default_factory=list)
    long_line_count: int = 0
    parent_ids: list[str] = field(default_factory=list)

    @property
    def problems(self) -> int:
        """Lines skipped as bad input (not JSON, too long)."""
        return self.bad_line_count + self.long_line_count

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
            "long_lines": self.long_lines,
            "long_line_count": self.long_line_count,
            "parent_ids": self.parent_ids,
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
    max_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    origin: str = "ingest",
) -> IngestReport:
    """Record every assistant reply of one rollout file, ~100 replies per transaction.

    Read from the start, a reply whose key is already recorded is counted a duplicate
    without being parsed (except with ``profile="strict"``, which rejects a reply with problems even when it
    was recorded before). A crash loses at most the batch in progress; ingesting the file
    again records exactly what is missing.

    A file read from its start with neither a ``session_meta`` line nor an assistant
    reply is not a Codex session file: ``InputError`` (nothing was recorded).
    ``scan``, ``handle`` and ``first_line`` read from a later point (see ``iter_rollout_replies``).
    """
    path = os.fspath(path)
    scan = scan if scan is not None else RolloutScan(path)
    report = IngestReport(path, None)
    # A read resumed at a stored offset (``first_line``) holds new lines: not worth a look-up.
    known = None if profile == "strict" or first_line > 0 \
        else (lambda prefix: recorded_keys(conn, prefix))
    replies = iter_rollout_replies(path, scan, progress, handle=handle, first_line=first_line,
                                   max_bytes=max_bytes, known=known, origin=origin)
    results = record_replies(conn, replies, profile=profile, policy=policy,
                             memory_root=memory_root, now=now, batch_replies=BATCH_REPLIES)
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
    report.replies += scan.known
    report.duplicates += scan.known
    if first_line == 0 and scan.session_id is None and not report.replies:
        raise InputError(
            f"{path}: not a Codex session file: no session_meta line and no assistant reply"
            f" in {scan.lines} line(s)",
            hint="give the rollout-*.jsonl files of $CODEX_HOME/sessions")
    report.session_id = scan.session_id
    report.bad_lines = scan.bad_lines
    report.bad_line_count = scan.bad_line_count
    report.long_lines = scan.long_lines
    report.long_line_count = scan.long_line_count
    report.parent_ids = scan.parent_ids
    return report
