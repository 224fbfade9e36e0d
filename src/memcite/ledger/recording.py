"""Recording replies in memcite's usage ledger, and rebuilding the counts from it.

Each reply is one ``BEGIN IMMEDIATE`` transaction: a ``replies`` row keyed by a
stable reply key (so a reply recorded twice counts once), one ``cited_ids`` row
per id as written, one ``cited_entries`` row per entry, and atomic SQL
increments of ``memories.usage_count``. No reply text is stored; every text that is
stored passes through ``memcite.untrusted.storable`` (a lone surrogate, from a JSON
escape or a non-UTF-8 byte in an option, is stored as its escape ``\\ud800``). Notes, cited
paths and ids that are not UUIDs are stored with secrets masked (``_stored``); the reply key
and the counts come from the raw reply, and a masked path is never opened (no hash).

``usage_count`` of a memory is, at every commit, the number of counted
``cited_ids`` rows for its thread (whenever they were logged, even before the
memory was synced); ``last_usage`` is the latest ``replied_at`` among them.
``rebuild`` recomputes both from the log.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from functools import lru_cache

from memcite.citations.models import Reading
from memcite.citations.thread_ids import normalize_thread_id
from memcite.display import count
from memcite.errors import CitationError, InputError
from memcite.ledger.memory_files import (
    LATE_HASH_SECONDS,
    MAX_FILE_BYTES,
    FileLines,
    MemoryRoot,
    lines_sha256,
    read_capped,
)
from memcite.ledger.store import read_snapshot, transaction
from memcite.secrets import is_masked, mask_secrets
from memcite.untrusted import storable, storable_or_none
from memcite.value_classes import FrozenSlots

POLICIES = ("default", "codex")
MAX_CITED_FILE_BYTES = MAX_FILE_BYTES

_set = object.__setattr__  # how the frozen values below set their fields in __init__


# --------------------------------------------------------------------------- inputs


class ReplyInput(FrozenSlots):
    """One reply to record, with what the caller knows about it."""

    __slots__ = ("text", "id", "at", "thread_id", "cwd", "origin", "where")
    _fields = _compared = __slots__

    def __init__(
        self,
        text: str,
        id: str | None = None,  # noqa: A002 - the caller's stable id; else the text's SHA-256
        at: int | None = None,  # when the reply was made (Unix seconds); else now
        thread_id: str | None = None,  # the replying thread
        cwd: str | None = None,
        origin: str = "record",  # record | ingest:<file> | hook:<file>
        where: str | None = None,  # for messages: "file:line"
    ) -> None:
        _set(self, "text", text)
        _set(self, "id", id)
        _set(self, "at", at)
        _set(self, "thread_id", thread_id)
        _set(self, "cwd", cwd)
        _set(self, "origin", origin)
        _set(self, "where", where)


def parse_time(value: object, *, what: str = "time") -> int:
    """Unix seconds from epoch seconds (int, float or digits) or an ISO 8601 string (UTC if naive)."""
    if isinstance(value, bool):
        raise InputError(f"{what}: expected epoch seconds or ISO 8601, got {value!r}")
    if isinstance(value, int | float):
        return _whole_seconds(value, value, what)
    if isinstance(value, str):
        text = value.strip()
        try:
            number = float(text)
        except ValueError:
            pass
        else:
            return _whole_seconds(number, value, what)
        from datetime import UTC, datetime

        try:
            moment = datetime.fromisoformat(text.replace("z", "Z"))
        except ValueError:
            raise InputError(
                f"{what}: {value!r} is neither epoch seconds nor an ISO 8601 time"
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return _whole_seconds(moment.timestamp(), value, what)
    raise InputError(f"{what}: expected epoch seconds or ISO 8601, got {type(value).__name__}")


def _whole_seconds(number: int | float, value: object, what: str) -> int:
    """``int(number)``, refusing what cannot be written as a time (NaN, infinities, beyond the
    years 1-9999, ``memcite.times.in_range``)."""
    from memcite.times import in_range

    try:
        seconds = int(number)
    except (OverflowError, ValueError):
        seconds = None
    if seconds is None or not in_range(seconds):
        raise InputError(f"{what}: {value!r} is not a usable number of epoch seconds (years "
                         "1 to 9999)")
    return seconds


def text_sha256(text: str) -> str:
    """The SHA-256 (hex) of a reply's UTF-8 bytes: its key when the caller gives no id."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# --------------------------------------------------------------------------- the policy (pure)


class CitedId(FrozenSlots):
    """One id as written in a reply, and what recording it did."""

    __slots__ = ("rollout_id", "thread_id", "terminated", "counted", "known")
    _fields = _compared = __slots__

    def __init__(self, rollout_id: str, thread_id: str | None, terminated: bool, counted: bool,
                 known: bool = False) -> None:
        _set(self, "rollout_id", rollout_id)
        _set(self, "thread_id", thread_id)  # normalised; None when not a UUID Codex accepts
        _set(self, "terminated", terminated)  # False when from a block that was never closed
        _set(self, "counted", counted)  # added to usage_count under the policy
        _set(self, "known", known)  # a memory in the inventory when recorded

    def to_dict(self) -> dict:
        return {
            "rollout_id": self.rollout_id,
            "thread_id": self.thread_id,
            "terminated": self.terminated,
            "counted": self.counted,
            "known": self.known,
        }


def terminated_counts(text: str, reading: Reading) -> tuple[int, int]:
    """How many of the reading's (entries, ids) come from closed blocks.

    Only the last block can be unclosed (it runs to the end of the text), and
    the text before it reads to exactly the earlier blocks, whose entries and
    ids are the leading ones of the whole reading.
    """
    citation = reading.citation
    if citation is None:
        return 0, 0
    if not reading.blocks or reading.blocks[-1].terminated:
        return len(citation.entries), len(citation.rollout_ids)
    from memcite.citations.reading import parse_reply

    before = parse_reply(text[: reading.blocks[-1].start], profile="codex").citation
    if before is None:
        return 0, 0
    return len(before.entries), len(before.rollout_ids)


def plan_ids(rollout_ids: Iterable[str], terminated_ids: int, policy: str) -> list[CitedId]:
    """Which ids a policy counts (``known`` left False).

    ``codex``: every id that is a UUID, as Codex does (docs/citation-format.md §5-6), unclosed blocks
    included and spelling variants of one UUID counted separately. ``default``: each
    distinct thread once per reply, from closed blocks only.
    """
    if policy not in POLICIES:
        raise InputError(f"unknown policy {policy!r}: use one of {', '.join(POLICIES)}")
    return [CitedId(*planned) for planned in _plan(rollout_ids, terminated_ids, policy)]


# A reply cites a few of the same memories again and again: normalise each spelling once.
_normalized = lru_cache(maxsize=2048)(normalize_thread_id)


def _plan(rollout_ids: Iterable[str], terminated_ids: int,
          policy: str) -> list[tuple[str, str | None, bool, bool]]:
    """``plan_ids`` as (rollout_id, thread_id, terminated, counted) tuples, policy checked by the caller."""
    planned = []
    seen: set[str] = set()
    codex = policy == "codex"
    for position, rollout_id in enumerate(rollout_ids):
        thread_id = _normalized(rollout_id)
        terminated = position < terminated_ids
        if thread_id is None:
            counted = False
        elif codex:
            counted = True
        else:
            counted = terminated and thread_id not in seen
            if counted:
                seen.add(thread_id)
        planned.append((rollout_id, thread_id, terminated, counted))
    return planned


# --------------------------------------------------------------------------- cited lines


class MemoryFiles:
    """The cited files of one memory folder, each read at most once per batch (by its stamp).

    A file is opened (safely: ``MemoryRoot``, never outside the folder) once per reply;
    the hash of a cited range is computed once per version of the file. A file larger
    than ``MAX_CITED_FILE_BYTES`` is not read: its ranges get no hash.
    """

    def __init__(self, root: str | os.PathLike | None) -> None:
        self._root = MemoryRoot(root)
        self.root = self._root.real
        # (dev, inode) -> ((dev, inode, size, mtime_ns), lines or None, {(start, end): hash})
        self._files: dict[tuple[int, int], tuple[tuple, FileLines | None, dict]] = {}
        self._history = None

    def hashes_at(self, cited: Iterable[tuple[str, int, int]], at: int) -> list[str | None]:
        """The hash of each cited range as the memory folder's git history held it at ``at``
        (None where it has no such version: no repository, no commit by then)."""
        if self._history is None:
            from memcite.ledger.memory_history import MemoryHistory

            self._history = MemoryHistory(self.root)
        return [self._history.lines_sha256_at(path, start, end, at)
                for path, start, end in cited]

    def lines_sha256(self, path: str, line_start: int, line_end: int) -> str | None:
        """The hash of the cited lines as they are now, or None (unresolved, out of range)."""
        return self.entry_hashes([(path, line_start, line_end)])[0]

    def entry_hashes(self, cited: Iterable[tuple[str, int, int]]) -> list[str | None]:
        """``lines_sha256`` of each (path, line_start, line_end), each file opened once."""
        if self.root is None:
            return [None for _ in cited]
        current: dict[str, tuple[FileLines, dict] | None] = {}  # cited path -> file, this call
        hashes = []
        for path, line_start, line_end in cited:
            try:
                state = current[path]
            except KeyError:
                state = current[path] = self._ranges(path)
            if state is None:
                hashes.append(None)
                continue
            lines, ranges = state
            span = (line_start, line_end)
            try:
                hashes.append(ranges[span])
            except KeyError:
                digest = ranges[span] = lines_sha256(lines, line_start, line_end)
                hashes.append(digest)
        return hashes

    def _ranges(self, path: str) -> tuple[FileLines, dict] | None:
        """The file's lines and range-hash cache as it is now (re-read if it changed), or None."""
        if is_masked(path):
            return None  # a secret was masked out of it: it names no file (stats: unverified)
        _outcome, fd, _parts = self._root.open(path)
        if fd is None:
            return None
        try:
            st = os.fstat(fd)
            stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            cached = self._files.get(stamp[:2])
            if cached is None or cached[0] != stamp:
                lines = None
                if st.st_size <= MAX_CITED_FILE_BYTES:
                    read = read_capped(fd, MAX_CITED_FILE_BYTES)
                    lines = None if read.too_large else FileLines(read.data)
                cached = self._files[stamp[:2]] = (stamp, lines, {})
        except OSError:
            return None
        finally:
            os.close(fd)
        return None if cached[1] is None else (cached[1], cached[2])


# --------------------------------------------------------------------------- recording


class RecordResult(FrozenSlots):
    """What recording one reply did: ``recorded``, ``duplicate`` (nothing written) or ``rejected``."""

    __slots__ = ("status", "reply_key", "key_kind", "replied_at", "reading", "ids", "entries",
                 "entries_hashed", "error", "where", "reply_id")
    _fields = _compared = __slots__

    def __init__(self, status: str, reply_key: str, key_kind: str, replied_at: int,
                 reading: Reading | None, ids: tuple[CitedId, ...] = (), entries: int = 0,
                 entries_hashed: int = 0, error: str | None = None, where: str | None = None,
                 reply_id: int | None = None) -> None:
        _set(self, "status", status)
        _set(self, "reply_key", reply_key)
        _set(self, "key_kind", key_kind)  # id | sha256
        _set(self, "replied_at", replied_at)
        _set(self, "reading", reading)
        _set(self, "ids", ids)
        _set(self, "entries", entries)
        _set(self, "entries_hashed", entries_hashed)
        _set(self, "error", error)
        _set(self, "where", where)
        _set(self, "reply_id", reply_id)

    @property
    def counted(self) -> list[str]:
        """The thread ids whose usage_count went up (once per increment)."""
        return [cited.thread_id for cited in self.ids if cited.counted and cited.thread_id]

    @property
    def unknown(self) -> list[str]:
        """UUIDs cited that are not memories in the inventory (logged all the same)."""
        seen: dict[str, None] = {}
        for cited in self.ids:
            if cited.thread_id and not cited.known:
                seen.setdefault(cited.thread_id)
        return list(seen)

    @property
    def not_uuid(self) -> list[str]:
        """Ids as written that are not UUIDs (logged, never counted)."""
        return [cited.rollout_id for cited in self.ids if cited.thread_id is None]

    def to_dict(self) -> dict:
        result = {
            "status": self.status,
            "key": self.reply_key,
            "key_kind": self.key_kind,
            "replied_at": self.replied_at,
            "counted": self.counted,
            "unknown_ids": self.unknown,
            "not_uuid_ids": self.not_uuid,
            "ids": [cited.to_dict() for cited in self.ids],
            "entries": self.entries,
            "entries_hashed": self.entries_hashed,
        }
        if self.error is not None:
            result["error"] = self.error
        if self.where is not None:
            result["where"] = self.where
        return result


# Constant statements, so sqlite3's statement cache prepares each once per connection;
# rows go through executemany (one prepared INSERT stepped per row: cheaper than a
# multi-row VALUES, whose text would vary with the number of rows).
_INSERT_REPLY = (
    "INSERT INTO replies (reply_key, key_kind, text_sha256, replied_at, recorded_at, thread_id,"
    " cwd, profile, policy, origin, memory_root, blocks, unterminated, diagnostics)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (reply_key) DO NOTHING"
)
# One statement per thread: an ``IN (...)`` list of threads costs more than the
# statements it saves (SQLite collects the rows first, then updates them).
_INCREMENT = (
    "UPDATE memories SET usage_count = usage_count + ?,"
    " last_usage = max(coalesce(last_usage, ?), ?) WHERE thread_id = ?"
)
_IS_KNOWN = "SELECT 1 FROM memories WHERE thread_id = ?"
_INSERT_ID = (
    "INSERT INTO cited_ids (reply_id, position, rollout_id, thread_id, terminated, counted, known)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_ENTRY = (
    "INSERT INTO cited_entries (reply_id, position, path, line_start, line_end, note, line,"
    " terminated, lines_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _increment(conn: sqlite3.Connection, increments: dict[str, int], at: int) -> dict[str, bool]:
    """Add each thread's count to usage_count; return which threads are known memories.

    The increment is atomic in SQL (never read, then written, in Python), so concurrent
    recorders never lose a count.
    """
    counted = [(count, at, at, thread_id) for thread_id, count in increments.items() if count]
    changed = conn.executemany(_INCREMENT, counted).rowcount if counted else 0
    # executemany sums the rows changed: all or none tells each thread's answer.
    known: dict[str, bool] = {}
    if changed == len(counted) or changed == 0:
        known = {row[3]: changed > 0 for row in counted}
    for thread_id in increments:
        if thread_id not in known:  # not counted, or some of the counted were unknown
            known[thread_id] = conn.execute(_IS_KNOWN, (thread_id,)).fetchone() is not None
    return known


def _stored(text: str) -> str:
    """What the ledger keeps of a note, a cited path or an id: secrets masked, surrogates escaped."""
    return mask_secrets(storable(text))


def record_reply(
    conn: sqlite3.Connection,
    reply: ReplyInput | str,
    *,
    profile: str = "codex",
    policy: str = "default",
    memory_root: str | os.PathLike | None = None,
    files: MemoryFiles | None = None,
    now: int | None = None,
    reading: Reading | None = None,
) -> RecordResult:
    """Read one reply and record it in one transaction; a reply already recorded counts nothing.

    ``reading``: the caller's reading of ``reply.text`` with ``profile``, when it already
    has one (``memcite record`` prints the reply first), so the reply is read once.
    Raises ``CitationError`` when ``profile="strict"`` finds problems (nothing recorded).
    """
    from memcite.citations.reading import parse_reply

    if isinstance(reply, str):
        reply = ReplyInput(reply)
    if policy not in POLICIES:
        raise InputError(f"unknown policy {policy!r}: use one of {', '.join(POLICIES)}")
    if files is None:
        files = MemoryFiles(memory_root)
    if reading is None:
        reading = parse_reply(reply.text, profile=profile)
    planned = _prepare(reply, reading, profile, policy, files, now)
    with transaction(conn):
        return _write(conn, planned)


# --------------------------------------------------------------------------- memcite record's one reply


def reply_to_record(text: str, *, where: str, id: str | None = None,  # noqa: A002 - --id
                    at: str | None = None, thread_id: str | None = None,
                    cwd: str | None = None) -> ReplyInput:
    """The reply ``memcite record`` was given (``where``: its name for messages), with its
    ``--id``, ``--at``, ``--thread-id`` and ``--cwd``; an empty reply is refused."""
    if not text.strip():
        raise InputError(f"{where}: the reply is empty; nothing recorded",
                         hint="pass the agent's reply as FILE or on stdin")
    return ReplyInput(text=text, id=id or None,
                      at=None if at is None else parse_time(at, what="--at"),
                      thread_id=thread_id or None, cwd=cwd or None, where=where)


def record_in_ledger(locations, reply: ReplyInput, reading: Reading, *, profile: str,
                     policy: str, memory_root: str | os.PathLike | None,
                     named: str | None = None) -> RecordResult:
    """``record_reply`` of a reply already read, in the run's ledger (``locations``, a
    ``memcite.paths.Locations``); a database problem is a ``MemciteError`` naming the
    database as ``named`` (the ``--db`` given, or None: the default)."""
    from memcite.ledger.database import database_error, open_ledger

    try:
        conn = open_ledger(locations)
        try:
            return record_reply(conn, reply, profile=profile, policy=policy,
                                memory_root=memory_root, reading=reading)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise database_error(named, exc) from None


def result_notes(result: RecordResult) -> list[str]:
    """What ``memcite record`` says on stderr of a reply it recorded (the reply itself went
    to stdout): what was counted, a duplicate, the ids that are not memories."""
    lines = []
    if result.status == "recorded":
        counted = result.counted
        lines.append(f"recorded 1 reply (key {result.reply_key[:16]}): "
                     f"{count(len(result.ids), 'memory id')} cited, "
                     f"{count(len(counted), 'citation')} counted for "
                     f"{count(len(set(counted)), 'memory', 'memories')}, "
                     f"{count(result.entries, 'cited line range')}")
    if result.status == "duplicate":
        lines.append(f"note: this reply was already recorded (key {result.reply_key[:16]}); "
                     "nothing counted again")
    for thread_id in result.unknown:
        lines.append(f"note: {thread_id} is not a memory in the inventory; logged "
                     "(run `memcite sync` if it is new)")
    return lines


class _Planned:
    """One read reply, ready to write: its row, its ids and entries, the cited lines' hashes."""

    __slots__ = ("reply", "reading", "key", "key_kind", "replied_at", "reply_row", "planned",
                 "increments", "entries", "terminated_entries", "hashes", "stored")


def _prepare(reply: ReplyInput, reading: Reading, profile: str, policy: str,
             files: MemoryFiles, now: int | None) -> _Planned:
    """Everything that reads files or hashes, done before the write lock is taken."""
    recorded_at = int(time.time()) if now is None else now
    replied_at = recorded_at if reply.at is None else reply.at
    sha = text_sha256(reply.text)
    key, key_kind = (storable(reply.id), "id") if reply.id else (sha, "sha256")

    citation = reading.citation
    entries = citation.entries if citation is not None else ()
    terminated_entries, terminated_ids = terminated_counts(reply.text, reading)
    planned = _plan(citation.rollout_ids if citation else (), terminated_ids, policy)
    # Everything that reads files or hashes happens before the write lock is taken.
    stored = [(_stored(e.path), _stored(e.note)) for e in entries]  # secrets masked
    cited = [(path, e.line_start, e.line_end) for (path, _), e in zip(stored, entries, strict=True)]
    if entries and (reply.origin or "").startswith("ingest:") \
            and recorded_at - replied_at > LATE_HASH_SECONDS:
        # An old session ingested: the file now says nothing of what was cited; hash it as
        # the folder's git history had it at the reply's time, else not at all.
        hashes = files.hashes_at(cited, replied_at)
    else:
        hashes = files.entry_hashes(cited)
    increments: dict[str, int] = {}
    for _, thread_id, _, counted in planned:
        if thread_id is not None:
            increments[thread_id] = increments.get(thread_id, 0) + counted
    blocks = reading.blocks
    ready = _Planned()
    ready.reply, ready.reading, ready.key, ready.key_kind = reply, reading, key, key_kind
    ready.replied_at, ready.planned, ready.increments = replied_at, planned, increments
    ready.entries, ready.terminated_entries, ready.hashes = entries, terminated_entries, hashes
    ready.stored = stored  # (path, note) of each entry, secrets masked
    ready.reply_row = (
        key, key_kind, sha, replied_at, recorded_at, storable_or_none(reply.thread_id),
        storable_or_none(reply.cwd), profile, policy, storable_or_none(reply.origin),
        storable_or_none(files.root), len(blocks),
        int(bool(blocks) and not blocks[-1].terminated), len(reading.diagnostics),
    )
    return ready


def _write(conn: sqlite3.Connection, ready: _Planned) -> RecordResult:
    """Write one prepared reply inside the caller's write transaction."""
    reply, reading, key, key_kind = ready.reply, ready.reading, ready.key, ready.key_kind
    replied_at = ready.replied_at
    cursor = conn.execute(_INSERT_REPLY, ready.reply_row)
    if cursor.rowcount != 1:
        return RecordResult("duplicate", key, key_kind, replied_at, reading, where=reply.where)
    reply_id = cursor.lastrowid
    known = _increment(conn, ready.increments, replied_at) if ready.increments else {}
    cited_ids = tuple(
        CitedId(storable(rollout_id) if thread_id else _stored(rollout_id), thread_id,
                terminated, counted, known[thread_id] if thread_id is not None else False)
        for rollout_id, thread_id, terminated, counted in ready.planned
    )
    if cited_ids:
        conn.executemany(_INSERT_ID, [
            (reply_id, position, c.rollout_id, c.thread_id, c.terminated, c.counted, c.known)
            for position, c in enumerate(cited_ids)
        ])
    entries, hashes, terminated_entries = ready.entries, ready.hashes, ready.terminated_entries
    if entries:
        conn.executemany(_INSERT_ENTRY, [
            (reply_id, position, path, e.line_start, e.line_end, note, e.line,
             position < terminated_entries, digest)
            for position, (e, (path, note), digest)
            in enumerate(zip(entries, ready.stored, hashes, strict=True))
        ])
    hashed = sum(digest is not None for digest in hashes)
    return RecordResult("recorded", key, key_kind, replied_at, reading, cited_ids, len(entries),
                        hashed, where=reply.where, reply_id=reply_id)


BATCH_REPLIES = 100
BATCH_SECONDS = 0.05


def record_replies(
    conn: sqlite3.Connection,
    replies: Iterable[ReplyInput],
    *,
    profile: str = "codex",
    policy: str = "default",
    memory_root: str | os.PathLike | None = None,
    now: int | None = None,
    batch_replies: int = 1,
    batch_seconds: float = BATCH_SECONDS,
) -> Iterator[RecordResult]:
    """Record replies in batches, streaming; a rejected reply does not stop the rest.

    Replies are read (and their cited lines hashed) outside any transaction, then
    written in one transaction per batch: ``batch_replies`` replies, or fewer once
    ``batch_seconds`` have passed since the batch's first reply was read (checked as
    each reply comes), or the end of ``replies``. A result is yielded once its batch
    is committed. The default, ``batch_replies=1``, commits each reply on its own (a live
    stream, where the next reply may be long in coming); a file read through is better
    served by ``BATCH_REPLIES`` (one commit per ~100 replies).

    Each reply is keyed, so re-running a batch after a crash records exactly the
    replies that were missing.
    """
    from memcite.citations.reading import parse_reply

    if policy not in POLICIES:
        raise InputError(f"unknown policy {policy!r}: use one of {', '.join(POLICIES)}")
    files = MemoryFiles(memory_root)
    pending: list[_Planned | RecordResult] = []  # in input order; results are rejections
    started = 0.0
    for reply in replies:
        try:
            reading = parse_reply(reply.text, profile=profile)
            item: _Planned | RecordResult = _prepare(reply, reading, profile, policy, files, now)
        except CitationError as error:
            key, kind = ((storable(reply.id), "id") if reply.id
                         else (text_sha256(reply.text), "sha256"))
            at = reply.at if reply.at is not None else int(time.time()) if now is None else now
            item = RecordResult("rejected", key, kind, at, None, error=str(error),
                                where=reply.where)
        if not pending:
            started = time.monotonic()
        pending.append(item)
        if len(pending) >= batch_replies or time.monotonic() - started >= batch_seconds:
            yield from _commit_batch(conn, pending)
            pending = []
    if pending:
        yield from _commit_batch(conn, pending)


def _commit_batch(conn: sqlite3.Connection, pending: list) -> list[RecordResult]:
    """Write the prepared replies of ``pending`` in one transaction; the results, in order."""
    if not any(isinstance(item, _Planned) for item in pending):
        return pending
    with transaction(conn):
        return [_write(conn, item) if isinstance(item, _Planned) else item for item in pending]


# --------------------------------------------------------------------------- rebuild


class UsageDifference(FrozenSlots):
    """A memory whose stored counts disagreed with the log."""

    __slots__ = ("thread_id", "usage_count", "last_usage", "logged_usage_count",
                 "logged_last_usage")
    _fields = _compared = __slots__

    def __init__(self, thread_id: str, usage_count: int, last_usage: int | None,
                 logged_usage_count: int, logged_last_usage: int | None) -> None:
        _set(self, "thread_id", thread_id)
        _set(self, "usage_count", usage_count)
        _set(self, "last_usage", last_usage)
        _set(self, "logged_usage_count", logged_usage_count)
        _set(self, "logged_last_usage", logged_last_usage)

    def to_dict(self) -> dict:
        return {
            "thread_id": self.thread_id,
            "usage_count": self.usage_count,
            "last_usage": self.last_usage,
            "logged_usage_count": self.logged_usage_count,
            "logged_last_usage": self.logged_last_usage,
        }


class RebuildReport(FrozenSlots):
    """What ``rebuild`` found: how many memories it checked, which ones differed, and which of
    the counters ``stats`` reads (``memcite.ledger.counters``) differed from a fresh count."""

    __slots__ = ("memories", "differences", "applied", "counters")
    _fields = _compared = __slots__

    def __init__(self, memories: int, differences: tuple[UsageDifference, ...] = (),
                 applied: bool = False, counters: tuple[dict, ...] = ()) -> None:
        _set(self, "memories", memories)
        _set(self, "differences", differences)
        _set(self, "applied", applied)
        _set(self, "counters", counters)

    def to_dict(self) -> dict:
        return {
            "memories": self.memories,
            "differences": [d.to_dict() for d in self.differences],
            "applied": self.applied,
            "counters": [dict(c) for c in self.counters],
        }

    def render_text(self) -> str:
        """What ``memcite rebuild`` prints about this report."""
        if not self.differences:
            text = f"checked {self.memories} memories: the counts match the log\n"
        else:
            verb = "fixed" if self.applied else "differ"
            text = f"checked {self.memories} memories: {len(self.differences)} {verb}\n"
            for d in self.differences:
                text += (f"  {d.thread_id}: usage_count {d.usage_count} -> "
                         f"{d.logged_usage_count}, last_usage {d.last_usage} -> "
                         f"{d.logged_last_usage}\n")
        if self.counters:
            verb = "recounted" if self.applied else "differ from a fresh count"
            text += f"{count(len(self.counters), 'counter')} kept for stats {verb}\n"
            for c in self.counters:
                text += f"  {c['counter']}: {c['stored']} -> {c['counted']}\n"
        return text


_LOGGED_USAGE = """
    WITH logged AS (
        SELECT c.thread_id, count(*) AS n, max(r.replied_at) AS last
        FROM cited_ids c JOIN replies r ON r.id = c.reply_id
        WHERE c.counted = 1 AND c.thread_id IS NOT NULL
        GROUP BY c.thread_id
    )
    SELECT m.thread_id, m.usage_count, m.last_usage, coalesce(l.n, 0), l.last
    FROM memories m LEFT JOIN logged l ON l.thread_id = m.thread_id
    WHERE m.usage_count != coalesce(l.n, 0) OR m.last_usage IS NOT l.last
    ORDER BY m.thread_id
"""


def rebuild(conn: sqlite3.Connection, *, apply: bool = True) -> RebuildReport:
    """Recompute every memory's usage_count and last_usage from the log, and the counters
    ``stats`` reads from the tables; report what differed.

    With ``apply=False`` nothing is written: the comparison runs in a read
    transaction, so it works on a read-only connection.
    """
    from memcite.ledger.counters import counter_differences, recount

    with transaction(conn) if apply else read_snapshot(conn):
        memories = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        differences = tuple(UsageDifference(*row) for row in conn.execute(_LOGGED_USAGE))
        if apply and differences:
            conn.executemany(
                "UPDATE memories SET usage_count = ?, last_usage = ? WHERE thread_id = ?",
                [(d.logged_usage_count, d.logged_last_usage, d.thread_id) for d in differences],
            )
        counters = tuple(counter_differences(conn))
        if apply and counters:
            recount(conn)
    return RebuildReport(memories, differences, apply and bool(differences or counters),
                         counters)


def backfill_usage(conn: sqlite3.Connection) -> int:
    """Give memories that were cited before they were synced their logged counts; return how many.

    One pass over the log, inside the caller's transaction.
    """
    return conn.execute(
        """
        UPDATE memories SET usage_count = logged.n, last_usage = logged.last
        FROM (
            SELECT c.thread_id, count(*) AS n, max(r.replied_at) AS last
            FROM cited_ids c JOIN replies r ON r.id = c.reply_id
            WHERE c.counted = 1 AND c.thread_id IN (
                SELECT thread_id FROM cited_ids WHERE known = 0 AND counted = 1)
            GROUP BY c.thread_id
        ) AS logged
        WHERE memories.thread_id = logged.thread_id
          AND (memories.usage_count != logged.n OR memories.last_usage IS NOT logged.last)
        """
    ).rowcount
