"""Reading Codex session files from where the last read stopped: per-file offsets and fingerprints.

Codex only appends to a live session file, line by line. For each file memcite
keeps (table ``session_offsets``) the byte offset of the end of the last whole
line it read, how many lines that was, the session id and cwd of its
``session_meta`` line, and a fingerprint of the bytes before the offset (the
first and last 4 KiB before it, and the offset itself). A later read checks the
fingerprint and starts at the offset, so its cost follows what is new, not the
size of the file. A file that shrank or whose fingerprint changed (rewritten,
replaced) is read again from the start: replies are keyed by their place
(``<session id>:<line>``, see ``memcite.ledger.ingest``), so a reread counts
nothing twice, and neither do two readers (the Stop hook and a whole-home
ingest) working on one file at the same time. A file ``codex migrate-rollouts``
rewrote (legacy to paginated, lines moved) is found out by that reread, its recorded
replies are moved to their new lines' keys, and it is read again (``ingest_rollout``).

A line still being written (no newline yet) is left for the next read. So is a
paginated file's reply known only from its ``item_completed`` line (no ``response_item``
yet) while its turn has not ended: the offset is stored at the start of that line, not
at the end of the read, and the next read (the next turn's Stop hook, or ``ingest``)
starts there, pairs it with its ``response_item`` or sees its turn end, and records it
once. (Codex's Stop hook runs before the turn's ``task_complete`` is written.) A read cut
by the budget records such a reply at once when it is the read's first line, so that
reads always move on; a complete file (``archived_sessions/``, ``.zst``) records it at
its end. A
``.jsonl.zst`` file cannot be read from the middle: it is read whole when its
size, time or fingerprint changed, and skipped otherwise.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat as stat_module
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from memcite.errors import InputError
from memcite.ledger.ingest import (
    SETTLE_ALL,
    IngestReport,
    RolloutScan,
    ingest_rollout,
    is_complete_file,
)
from memcite.ledger.store import transaction
from memcite.untrusted import NotRegularFile, open_regular

FINGERPRINT_WINDOW = 4096
_SEARCH_CHUNK = 64 * 1024
SESSION_FOLDERS = ("sessions", "archived_sessions")


@dataclass(frozen=True, slots=True)
class SessionOffset:
    """How far one session file was read, as stored."""

    path: str
    session_id: str | None
    cwd: str | None
    byte_offset: int
    lines_read: int
    fingerprint: str
    size: int
    mtime_ns: int


@dataclass
class SessionRead:
    """What bringing one session file up to date did."""

    path: str
    status: str  # read | unchanged
    from_offset: int = 0
    to_offset: int = 0
    size: int = 0
    reread: bool = False  # the file shrank or changed: read again from the start
    caught_up: bool = True  # False: a byte budget stopped the read before the end
    report: IngestReport | None = None
    session_id: str | None = None

    def to_dict(self) -> dict:
        report = (self.report or IngestReport(self.path, self.session_id)).to_dict()
        return {**report, "status": self.status, "from_offset": self.from_offset,
                "to_offset": self.to_offset, "size": self.size, "reread": self.reread,
                "caught_up": self.caught_up}


# --------------------------------------------------------------------------- stored offsets


def session_key(path: str | os.PathLike) -> str:
    """The name a session file's offset is stored under: its real path."""
    return os.path.realpath(os.fspath(path))


def load_offset(conn: sqlite3.Connection, path: str | os.PathLike) -> SessionOffset | None:
    """The stored offset of ``path``, or None when it was never read."""
    return _load(conn, session_key(path))


def _load(conn: sqlite3.Connection, key: str) -> SessionOffset | None:
    row = conn.execute(
        "SELECT path, session_id, cwd, byte_offset, lines_read, fingerprint, size, mtime_ns"
        " FROM session_offsets WHERE path = ?", (key,)).fetchone()
    return SessionOffset(*row) if row else None


def save_offset(conn: sqlite3.Connection, offset: SessionOffset, *, now: int | None = None) -> None:
    """Store (replace) the offset of one file, in its own transaction."""
    with transaction(conn):
        conn.execute(
            "INSERT INTO session_offsets (path, session_id, cwd, byte_offset, lines_read,"
            " fingerprint, size, mtime_ns, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (path) DO UPDATE SET session_id = excluded.session_id,"
            " cwd = excluded.cwd, byte_offset = excluded.byte_offset,"
            " lines_read = excluded.lines_read, fingerprint = excluded.fingerprint,"
            " size = excluded.size, mtime_ns = excluded.mtime_ns,"
            " updated_at = excluded.updated_at",
            (offset.path, offset.session_id, offset.cwd, offset.byte_offset, offset.lines_read,
             offset.fingerprint, offset.size, offset.mtime_ns,
             int(time.time()) if now is None else now))


# --------------------------------------------------------------------------- bytes


def fingerprint(handle, offset: int) -> str:
    """A digest of the bytes before ``offset``: the first and the last 4 KiB of them, and ``offset``."""
    digest = hashlib.sha256(str(offset).encode())
    handle.seek(0)
    digest.update(handle.read(min(offset, FINGERPRINT_WINDOW)))
    tail = max(0, offset - FINGERPRINT_WINDOW)
    handle.seek(tail)
    digest.update(handle.read(offset - tail))
    return digest.hexdigest()[:32]


def whole_lines_end(handle, start: int, size: int, budget: int | None = None) -> int:
    """Where the whole lines after ``start`` end: just after the last newline before ``size``.

    With a ``budget`` of bytes, the last newline at most ``budget`` bytes after ``start``
    (or, when a single line is longer, the end of that line). ``start`` when no line is whole.
    """
    limit = size if budget is None else min(size, start + budget)
    position = limit
    while position > start:  # backwards from the limit
        begin = max(start, position - _SEARCH_CHUNK)
        handle.seek(begin)
        found = handle.read(position - begin).rfind(b"\n")
        if found >= 0:
            return begin + found + 1
        position = begin
    position = limit
    while position < size:  # one line longer than the budget: forwards to its end
        handle.seek(position)
        chunk = handle.read(min(_SEARCH_CHUNK, size - position))
        found = chunk.find(b"\n")
        if found >= 0:
            return position + found + 1
        position += len(chunk)
    return start


class _Window:
    """A binary reader over ``[start, end)`` of an open file (read, readline, close)."""

    def __init__(self, handle, start: int, end: int) -> None:
        self._handle = handle
        self._left = end - start
        handle.seek(start)

    def readline(self, limit: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        size = self._left if limit is None or limit < 0 else min(limit, self._left)
        line = self._handle.readline(size)
        self._left -= len(line)
        return line

    def read(self, size: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        data = self._handle.read(self._left if size is None or size < 0 else min(size, self._left))
        self._left -= len(data)
        return data

    def close(self) -> None:
        self._handle.close()


# --------------------------------------------------------------------------- reading one file


def _open_regular(path: str):
    """The open file and its stat; a clear ``InputError`` for anything but a readable regular file.

    Opened without blocking (``open_regular``): a FIFO, a socket or a device planted where
    a session file should be (the Stop hook is given its path by the payload) is refused at
    once, never waited on.
    """
    try:
        handle = os.fdopen(open_regular(path), "rb")
    except FileNotFoundError:
        raise InputError(f"{path}: no such session file") from None
    except NotRegularFile as exc:
        what = "is a directory" if exc.kind == "a directory" else f"is {exc.kind}"
        raise InputError(f"{path}: {what}, not a session file; not read") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a session file; not read") from None
    except ValueError:  # a NUL byte in the name
        raise InputError(f"{path!r}: not a usable file name (it holds a NUL byte)") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return handle, os.fstat(handle.fileno())


def ingest_session_file(
    conn: sqlite3.Connection,
    path: str | os.PathLike,
    *,
    budget: int | None = None,
    profile: str = "codex",
    policy: str = "default",
    memory_root: str | os.PathLike | None = None,
    now: int | None = None,
    origin: str = "ingest",
) -> SessionRead:
    """Record the replies added to one session file since it was last read, and store the new offset.

    ``origin`` says who read it (``ingest``, or ``hook`` for Codex's Stop hook); the
    replies' keys do not depend on it, so whichever reads a reply first records it.

    ``budget`` caps the bytes read this time (the rest waits for the next call). The
    offset is stored only after everything read was recorded (the last batch of its
    replies committed), so a failure (a locked database, a killed process) leaves it
    where it was and the next read starts there again, recording what is missing.
    """
    path = os.fspath(path)
    key = session_key(path)
    stored = _load(conn, key)
    if stored is not None and stored.byte_offset == stored.size:
        try:  # read to its end last time, and not touched since: one stat
            info = os.stat(path)
        except OSError:
            info = None
        if info is not None and stat_module.S_ISREG(info.st_mode) and \
                (info.st_size, info.st_mtime_ns) == (stored.size, stored.mtime_ns):
            return SessionRead(path, "unchanged", stored.size, stored.size, stored.size,
                               session_id=stored.session_id)
    handle, info = _open_regular(path)
    size, mtime_ns = info.st_size, info.st_mtime_ns
    if path.endswith(".zst"):
        return _ingest_compressed(conn, path, key, handle, size, mtime_ns, stored,
                                  profile=profile, policy=policy, memory_root=memory_root, now=now,
                                  origin=origin)
    try:
        start, first_line, reread = 0, 0, stored is not None
        scan = RolloutScan(path)
        if stored is not None:
            if stored.byte_offset <= size and fingerprint(handle, stored.byte_offset) == \
                    stored.fingerprint:
                start, first_line, reread = stored.byte_offset, stored.lines_read, False
                scan.session_id, scan.cwd = stored.session_id, stored.cwd
        end = whole_lines_end(handle, start, size, budget)
        mark = fingerprint(handle, end)
    except OSError as exc:
        handle.close()
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if end == start and not reread and stored is not None:
        handle.close()
        return SessionRead(path, "unchanged", start, start, size, caught_up=end == size,
                           session_id=stored.session_id)
    scan.lines = first_line
    cut = end < size  # by the budget
    # A reply waiting for its turn's end is recorded at the end of a complete file; and,
    # so that a read cut by the budget always moves on, when it is the read's first line.
    settle = SETTLE_ALL if is_complete_file(path) and not cut else first_line + 1 if cut else 0

    def reopen() -> _Window:  # the same bytes again, after a rewrite was found
        return _Window(_open_regular(path)[0], start, end)

    report = ingest_rollout(conn, path, profile=profile, policy=policy, memory_root=memory_root,
                            now=now, scan=scan, handle=_Window(handle, start, end),
                            first_line=first_line, origin=origin, settle=settle,
                            reopen=reopen)  # closes the handle
    stop, lines = end, scan.lines
    if scan.pending_offset is not None:  # the next read starts again at the waiting reply
        stop, lines = start + scan.pending_offset, scan.pending_line - 1
        again, _ = _open_regular(path)
        try:
            mark = fingerprint(again, stop)
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
        finally:
            again.close()
    save_offset(conn, SessionOffset(key, scan.session_id, scan.cwd, stop, lines, mark, size,
                                    mtime_ns), now=now)
    return SessionRead(path, "read", start, end, size, reread=reread, caught_up=end == size,
                       report=report, session_id=scan.session_id)


def _ingest_compressed(conn, path, key, handle, size, mtime_ns, stored, **options) -> SessionRead:
    """A ``.jsonl.zst`` file: read whole when it changed (its size, time or fingerprint)."""
    try:
        mark = fingerprint(handle, size)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        handle.close()
    if stored is not None and (stored.size, stored.mtime_ns, stored.fingerprint) == \
            (size, mtime_ns, mark):
        return SessionRead(path, "unchanged", size, size, size, session_id=stored.session_id)
    scan = RolloutScan(path)
    report = ingest_rollout(conn, path, scan=scan, **options)
    save_offset(conn, SessionOffset(key, scan.session_id, scan.cwd, size, scan.lines, mark, size,
                                    mtime_ns), now=options.get("now"))
    return SessionRead(path, "read", 0, size, size, reread=stored is not None, report=report,
                       session_id=scan.session_id)


# --------------------------------------------------------------------------- a whole Codex home


def _is_session_name(name: str) -> bool:
    return name.startswith("rollout-") and (name.endswith(".jsonl") or name.endswith(".jsonl.zst"))


def _walk(folder: str) -> Iterator[str]:
    """Session files under ``folder``, depth first, symbolic links not followed."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return
    names = {entry.name for entry in entries}
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                yield from _walk(entry.path)
            elif entry.is_file(follow_symlinks=False) and _is_session_name(entry.name):
                # Both forms of one thread: the plain file is the live one.
                if entry.name.endswith(".zst") and entry.name[:-4] in names:
                    continue
                yield entry.path
        except OSError:
            continue


def iter_session_files(codex_home: str | os.PathLike, *, since: int | None = None) -> Iterator[str]:
    """Every session file of a Codex home (``sessions/`` and ``archived_sessions/``), sorted.

    ``since`` (Unix seconds) keeps only the files modified at or after it.
    """
    for folder in SESSION_FOLDERS:
        for path in _walk(os.path.join(os.fspath(codex_home), folder)):
            if since is not None:
                try:
                    if os.stat(path).st_mtime < since:
                        continue
                except OSError:
                    continue
            yield path


@dataclass
class HomeIngest:
    """What bringing a whole Codex home up to date did."""

    codex_home: str
    files: int = 0
    unchanged: int = 0
    read: int = 0
    reread: int = 0
    replies: int = 0
    recorded: int = 0
    duplicates: int = 0
    rejected: int = 0
    counted: int = 0
    failed: list[str] = field(default_factory=list)  # "path: why"

    def add(self, result: SessionRead) -> None:
        self.files += 1
        if result.status == "unchanged":
            self.unchanged += 1
            return
        self.read += 1
        self.reread += result.reread
        report = result.report
        if report is not None:
            self.replies += report.replies
            self.recorded += report.recorded
            self.duplicates += report.duplicates
            self.rejected += report.rejected
            self.counted += report.counted

    def to_dict(self) -> dict:
        return {"codex_home": self.codex_home, "files": self.files, "unchanged": self.unchanged,
                "read": self.read, "reread": self.reread, "replies": self.replies,
                "recorded": self.recorded, "duplicates": self.duplicates,
                "rejected": self.rejected, "counted": self.counted, "failed": self.failed}


def ingest_codex_home(
    conn: sqlite3.Connection,
    codex_home: str | os.PathLike,
    *,
    since: int | None = None,
    progress: Callable[[str, int, int | None], None] | None = None,
    on_file: Callable[[SessionRead], None] | None = None,
    **options,
) -> HomeIngest:
    """Bring every session file of a Codex home up to date (see ``ingest_session_file``).

    A file that cannot be read is noted in ``failed`` and the others go on;
    ``on_file`` sees each file's result, ``progress`` gets ``("sessions", done, total)``.
    """
    home = os.fspath(codex_home)
    paths = list(iter_session_files(home, since=since))
    summary = HomeIngest(home)
    for done, path in enumerate(paths, start=1):
        try:
            result = ingest_session_file(conn, path, **options)
        except InputError as error:
            summary.failed.append(str(error))
        else:
            summary.add(result)
            if on_file is not None:
                on_file(result)
        if progress is not None:
            progress("sessions", done, len(paths))
    return summary
