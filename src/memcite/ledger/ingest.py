"""Reading assistant replies out of Codex session files (``memcite ingest``), streaming.

Only files given explicitly are read; nothing is searched for. A rollout is
JSON Lines: a ``session_meta`` line (``payload.id``, ``payload.cwd``) and
``response_item`` lines; an assistant reply is a ``message`` item with role
``assistant`` whose ``output_text`` parts, concatenated, are the reply text
(block included). A ``response_item`` of type ``agent_message`` is a message between
agents, never a reply. Other lines are skipped, most of them without being parsed.
``.jsonl.zst`` files are decompressed on the fly.

Both of Codex's forms are read: the legacy one (lines ``{timestamp, type, payload}``) and
the paginated one (Codex 0.169 on; each line also has an ``ordinal``). A paginated file
writes each reply twice: first an ``event_msg`` ``item_completed`` whose ``AgentMessage``
item has the text without its citation block and the block parsed (``memory_citation``:
``entries`` and ``rolloutIds``), then the assistant ``response_item`` with the same item
id and the whole text. The ``response_item`` is the reply (it is exact). An
``AgentMessage`` with a ``memory_citation`` whose ``response_item`` never comes is
recorded from the parsed citation (the block rebuilt from its entries and ids, keyed by
the ``item_completed`` line), and only once its turn is over: a later ``task_complete``
or ``turn_aborted`` line for its ``turn_id`` shows that no ``response_item`` will follow.
Until then it is *pending*; so is it at the end of a read that stopped before its
turn's end: it is not recorded, ``scan.pending_line`` says where it is, and a read that
resumes (``memcite.ledger.session_offsets``) starts again at that line, so it is neither
lost nor counted twice however the reads are cut. A file that is complete (``.jsonl.zst``
or under ``archived_sessions/``) records what is still pending at its end. (Codex writes
the ``item_completed`` before the ``response_item``; the other order is paired within
one read.)

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

One rewrite moves lines: ``codex migrate-rollouts --apply`` turns a legacy file into a
paginated one, and for files older than Codex's ``task_started`` events it adds those
lines (and drops lines it cannot read), so a reply's line number changes. Its session,
time and text do not. So a paginated file read from its start, when replies of its
thread are already recorded, has each recorded key checked against the text's SHA-256
(``text_sha256``); a key that names another text, or a new key whose text and time are
those of a recorded reply, means the file was rewritten: the recorded replies are
matched to the file's replies by text and time, moved to their new keys
(``rekey_moved_replies``, one transaction), and the file is read again. A legacy file is
never rewritten in place, so its recorded keys are trusted without a look.

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
import sys
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field

from memcite.citations.thread_ids import normalize_thread_id
from memcite.display import count
from memcite.errors import InputError, MemciteError
from memcite.ledger.ingest_checks import (
    SUMMARY_FIELDS,
    file_stamp,
    load_check,
    rows_digest,
    save_check,
)
from memcite.ledger.memory_files import open_regular
from memcite.ledger.recording import (
    BATCH_REPLIES,
    ReplyInput,
    parse_time,
    record_replies,
    text_sha256,
)
from memcite.ledger.store import transaction
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
    paginated: bool = False  # the first session_meta line has an ``ordinal``: Codex's paginated form
    pending: int = 0  # item_completed-only replies whose turn had not ended when the read did
    pending_line: int | None = None  # the first of them (its line number)
    pending_offset: int | None = None  # where its line starts, in bytes from the read's start

    def restart(self) -> None:
        """Forget what a read from the start counted (it is about to be read again)."""
        fresh = RolloutScan(self.path)
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(fresh, name))


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
    """Whether a line (judged by its start) may be a session_meta, an assistant reply, or a
    paginated file's ``item_completed`` copy of one."""
    return b'"session_meta"' in head or (b'"response_item"' in head and b'"assistant"' in head) \
        or (b'"item_completed"' in head and b'"AgentMessage"' in head)


def _is_turn_end(head: bytes) -> bool:
    """Whether a line (judged by its start) may be a ``task_complete`` or ``turn_aborted`` event."""
    return b'"event_msg"' in head and (b'"task_complete"' in head or b'"turn_aborted"' in head)


def _worth_parsing(line: bytes, turn_ends: bool) -> bool:
    """Whether a candidate line can matter: a session_meta or response_item line, an
    ``item_completed`` with a ``memory_citation`` (one without it is a copy of a reply
    whose ``response_item`` is the reply), or, while replies are pending, a turn's end.
    (Inside a JSON string every quote is escaped, so these quoted names are keys or values.)"""
    return b'"response_item"' in line or b'"session_meta"' in line \
        or b'"memory_citation"' in line or (turn_ends and _is_turn_end(line))


TOO_LONG = b""  # what ``_candidate_lines`` yields for a candidate longer than the limit


def key_prefix(session_id: str | None, path: str) -> str:
    """What every key of a reply of ``path`` starts with (``reply_id`` without its line)."""
    return reply_id(session_id, path, 0)[:-1]


def recorded_keys(conn: sqlite3.Connection, prefix: str) -> set[str]:
    """The reply keys already recorded that start with ``prefix`` (one range of the key index;
    as keys are stored: a byte of a file name that is not UTF-8 as its escape)."""
    prefix = storable(prefix)
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)  # the prefix ends with ':'
    return {row[0] for row in conn.execute(
        "SELECT reply_key FROM replies WHERE reply_key >= ? AND reply_key < ?", (prefix, end))}


def recorded_rows(conn: sqlite3.Connection, prefix: str) -> dict[str, tuple[str, int]]:
    """``recorded_keys`` with each reply's ``text_sha256`` and ``replied_at``."""
    prefix = storable(prefix)
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    return {row[0]: (row[1], row[2]) for row in conn.execute(
        "SELECT reply_key, text_sha256, replied_at FROM replies"
        " WHERE reply_key >= ? AND reply_key < ?", (prefix, end))}


_NOBODY = object()


def _may_be_known_reply(line: bytes) -> bool:
    """Whether a candidate line may be skipped when its key is recorded: a message, and
    never a session_meta (which says whose replies follow) nor a message between agents."""
    return b'"message"' in line and b'"session_meta"' not in line \
        and b'"agent_message"' not in line


def _skip_rest(handle) -> int:
    """Read to the end of the current line without keeping it; how many bytes that was."""
    skipped = 0
    while True:
        rest = handle.readline(1 << 20)
        skipped += len(rest)
        if not rest or rest.endswith(b"\n"):
            return skipped


def _candidate_lines(handle, max_bytes: int = DEFAULT_MAX_REPLY_BYTES,
                     wanted: Callable[[bytes], bool] = _is_candidate,
                     ) -> Iterator[tuple[int, bytes | None, int]]:
    """``(line number, line, start)`` for lines that may matter (``wanted``, judged by the
    line's start), ``None`` for the others, and ``TOO_LONG`` for a candidate longer than
    ``max_bytes``; ``start`` is where the line begins, in bytes read from ``handle``.

    The type and role come first in Codex's lines, so a long line (a tool's
    output) is judged by its first 64 KiB and skipped without being held whole; a
    candidate is held only up to ``max_bytes``.
    """
    number = 0
    position = 0
    while True:
        start = position
        head = handle.readline(_HEAD_BYTES)
        if not head:
            return
        number += 1
        position += len(head)
        complete = head.endswith(b"\n")
        if not wanted(head):
            if not complete:
                position += _skip_rest(handle)
            yield number, None, start
            continue
        if complete:
            yield number, head if len(head) <= max_bytes + 1 else TOO_LONG, start
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
                size += _skip_rest(handle)
                break
        position = start + size
        yield number, TOO_LONG if parts is None else b"".join(parts), start


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


def _one_line(value: object) -> bool:
    return isinstance(value, str) and "\n" not in value and "\r" not in value


def _line_number(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 63


def rebuild_block(memory_citation: object) -> str | None:
    """The ``<oai-mem-citation>`` block of a paginated file's parsed ``memory_citation``
    (``{"entries": [{"path", "lineStart", "lineEnd", "note"}], "rolloutIds": [...]}``), one
    entry and one id a line as the model writes them; None when it is not that shape. An
    entry or id that could not be written on one line is left out (untrusted input)."""
    from memcite.citations.models import Citation, CitationEntry
    from memcite.citations.render import render_citation

    if not isinstance(memory_citation, dict):
        return None
    entries, ids = memory_citation.get("entries", []), memory_citation.get("rolloutIds", [])
    if not isinstance(entries, list) or not isinstance(ids, list):
        return None
    kept = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        path, start, end = entry.get("path"), entry.get("lineStart"), entry.get("lineEnd")
        note = entry.get("note", "")
        if _one_line(path) and _one_line(note) and _line_number(start) and _line_number(end):
            kept.append(CitationEntry(path, start, end, note))
    return render_citation(Citation(kept, [i for i in ids if _one_line(i) and i.strip()]))


def _agent_message(payload: dict) -> dict | None:
    """The ``AgentMessage`` item of an ``item_completed`` event with a ``memory_citation``."""
    if payload.get("type") != "item_completed":
        return None
    item = payload.get("item")
    if not isinstance(item, dict) or item.get("type") != "AgentMessage" \
            or "memory_citation" not in item or not isinstance(item.get("id"), str) \
            or not isinstance(item.get("content"), list):
        return None
    return item


def agent_message_text(item: dict) -> str | None:
    """The reply an ``AgentMessage`` item stands for: its text parts, then the block
    rebuilt from its ``memory_citation``; None when that is not a citation."""
    block = rebuild_block(item.get("memory_citation"))
    content = item.get("content")
    if block is None or not isinstance(content, list):
        return None
    text = "".join(part["text"] for part in content if isinstance(part, dict)
                   and part.get("type") in ("Text", "text", "output_text")
                   and isinstance(part.get("text"), str))
    if text and not text.endswith("\n"):
        text += "\n"
    return text + block


@dataclass
class _Pending:
    """An item_completed-only reply waiting for its ``response_item`` or its turn's end."""

    item: dict  # the AgentMessage (its text and block are built only if it is recorded)
    line: int
    start: int  # where its line starts, in bytes from the read's start
    turn: str | None
    stamp: object  # its line's timestamp, as written
    session_id: str | None
    cwd: str | None


# At most this many replies wait at once; beyond it the oldest is recorded from its citation.
MAX_PENDING = 1000
SETTLE_ALL = sys.maxsize  # ``settle``: every reply still pending at the end is recorded


class RewrittenFile(Exception):  # noqa: N818 - a signal, caught by ``ingest_rollout``
    """A paginated file read from its start names recorded replies at other lines than
    they were recorded at: it was rewritten (``codex migrate-rollouts``)."""

    def __init__(self, where: str) -> None:
        super().__init__(f"{where}: a recorded reply is no longer on the line it was read from")
        self.where = where


class _Check:
    """A paginated file's recorded keys, checked against the texts the file now holds."""

    def __init__(self, rows: Mapping[str, tuple[str, int]], raise_on_rewrite: bool) -> None:
        self.rows = rows
        self.raise_on_rewrite = raise_on_rewrite
        self.content = Counter(rows.values())
        self.texts = Counter(sha for sha, _ in rows.values())
        self.claimed: Counter = Counter()
        self.claimed_texts: Counter = Counter()

    def known(self, key: str, text: str, at: int | None, where: str) -> bool:
        """True when ``key`` is recorded for this text (skip it); False for a new reply.
        ``RewrittenFile`` when the file no longer matches the recorded keys."""
        if not self.rows:
            return False
        sha = text_sha256(text)
        row = self.rows.get(key)
        if row is not None:
            if row[0] != sha and self.raise_on_rewrite:
                raise RewrittenFile(where)
            self.claimed[row] += 1
            self.claimed_texts[row[0]] += 1
            return True
        if self.raise_on_rewrite:
            if at is None:
                moved = self.texts[sha] > self.claimed_texts[sha]
            else:
                moved = self.content[(sha, at)] > self.claimed[(sha, at)]
            if moved:  # a recorded reply's text and time on a line with no key recorded
                raise RewrittenFile(where)
        return False


def iter_rollout_replies(path: str | os.PathLike, scan: RolloutScan | None = None,
                         progress: Callable[[RolloutScan], None] | None = None, *,
                         handle=None, first_line: int = 0,
                         max_bytes: int = DEFAULT_MAX_REPLY_BYTES,
                         known: Callable[[str], Collection[str]] | None = None,
                         recorded: Callable[[str], Mapping[str, tuple[str, int]]] | None = None,
                         raise_on_rewrite: bool = True,
                         settle: int = 0,
                         origin: str = "ingest",
                         ) -> Iterator[ReplyInput]:
    """Yield each assistant reply of one rollout file, with the session's thread id and cwd;
    ``progress(scan)``, if given, is called now and then as lines are read.

    ``known(prefix)``, if given, names the keys starting with ``prefix`` (see ``key_prefix``)
    that are already recorded: in a legacy file, a reply line with such a key is counted
    (``scan.known``) and skipped before it is parsed, since recording it again would change
    nothing. In a paginated file ``recorded(prefix)`` (``recorded_rows``) is used instead:
    a recorded key is skipped only when it names the same text; otherwise, with
    ``raise_on_rewrite``, ``RewrittenFile`` is raised before anything of it is yielded.

    ``settle``: item_completed-only replies still pending at the end of the read whose line
    is at most ``settle`` are yielded (``SETTLE_ALL``: every one; 0: none); the others are
    left for a later read (``scan.pending_line``, ``scan.pending_offset``).

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
    checked_session: object = _NOBODY  # whose rows ``check`` holds
    check = _Check({}, raise_on_rewrite)
    pending: dict[str, _Pending] = {}  # item id -> reply, in line order
    answered: set[str] = set()  # item ids of the assistant response_items read

    def wanted(head: bytes) -> bool:
        return _is_candidate(head) or (bool(pending) and _is_turn_end(head))

    def checked(key: str, text: str, at: int | None, number: int) -> bool:
        """Whether this reply is recorded already (a paginated file checked by its rows)."""
        nonlocal checked_session, check
        if recorded is None or not scan.paginated:
            return False
        if checked_session is not scan.session_id:
            checked_session = scan.session_id
            check = _Check(recorded(key_prefix(scan.session_id, path)), raise_on_rewrite)
        if check.known(storable(key), text, at, f"{path}:{number}"):
            scan.replies += 1
            scan.known += 1
            return True
        return False

    def line_time(stamp: object, number: int) -> int | None:
        if stamp is None:
            return None
        try:
            return parse_time(stamp, what=f"{path}:{number}: timestamp")
        except InputError:
            return None

    def settled(waiting: list[_Pending]) -> Iterator[ReplyInput]:
        for entry in waiting:
            del pending[entry.item["id"]]
            text = agent_message_text(entry.item)
            if text is None:
                continue
            text, key = storable(text), reply_id(entry.session_id, path, entry.line)
            at = line_time(entry.stamp, entry.line)
            if not checked(key, text, at, entry.line):
                scan.replies += 1
                yield ReplyInput(text=text, id=key, at=at, thread_id=entry.session_id,
                                 cwd=entry.cwd, origin=origin, where=f"{path}:{entry.line}")

    try:
        for number, line, start in _candidate_lines(handle, max_bytes, wanted):
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
            if known is not None and not scan.paginated and _may_be_known_reply(line):
                if keyed_session is not scan.session_id:
                    keyed_session = scan.session_id
                    prefix = storable(key_prefix(scan.session_id, path))  # as stored
                    known_keys = known(prefix)
                if known_keys and f"{prefix}{number}" in known_keys:
                    scan.replies += 1
                    scan.known += 1
                    continue
            if not _worth_parsing(line, bool(pending)):
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
                scan.paginated = "ordinal" in item
                cwd = payload.get("cwd")
                scan.cwd = storable(cwd) if isinstance(cwd, str) else None
                continue
            if kind == "event_msg":
                message = _agent_message(payload)
                if message is not None:
                    item_id, turn = message["id"], payload.get("turn_id")
                    if item_id in answered or item_id in pending:
                        continue  # its response_item came first: that is the reply
                    pending[item_id] = _Pending(message, number, start,
                                                turn if isinstance(turn, str) else None,
                                                item.get("timestamp"), scan.session_id,
                                                scan.cwd)
                    if len(pending) > MAX_PENDING:  # the oldest has waited long enough
                        yield from settled([next(iter(pending.values()))])
                elif pending and payload.get("type") in ("task_complete", "turn_aborted"):
                    turn = payload.get("turn_id")
                    yield from settled([entry for entry in pending.values()
                                        if entry.turn is not None and entry.turn == turn])
                continue
            if kind != "response_item":
                continue
            text = _assistant_text(payload)
            if text is None:
                continue
            item_id = payload.get("id")
            if isinstance(item_id, str):
                answered.add(item_id)
                pending.pop(item_id, None)  # the exact reply: its item_completed copy is not
            text, key = storable(text), reply_id(scan.session_id, path, number)
            at = line_time(item.get("timestamp"), number)
            if checked(key, text, at, number):
                continue
            scan.replies += 1
            yield ReplyInput(text=text, id=key, at=at, thread_id=scan.session_id, cwd=scan.cwd,
                             origin=origin, where=f"{path}:{number}")
        yield from settled([entry for entry in pending.values() if entry.line <= settle])
        if pending:
            first = min(pending.values(), key=lambda entry: entry.line)
            scan.pending, scan.pending_line, scan.pending_offset = \
                len(pending), first.line, first.start
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
    pending: int = 0  # item_completed-only replies left for their turn's end
    rekeyed: int = 0  # recorded replies moved to the keys of their new lines (a rewrite)
    set_aside: int = 0  # recorded replies found on no line of the rewritten file

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
            "pending": self.pending,
            "rekeyed": self.rekeyed,
            "set_aside": self.set_aside,
        }


def is_complete_file(path: str) -> bool:
    """Whether Codex is done writing ``path``: compressed, or moved to ``archived_sessions/``."""
    return path.endswith(".zst") or \
        os.path.basename(os.path.dirname(os.path.abspath(path))) == "archived_sessions"


def rekey_moved_replies(conn: sqlite3.Connection, path: str | os.PathLike, *,
                        settle: int | None = None) -> tuple[int, int]:
    """Give the recorded replies of a rewritten file the keys of the lines they are on now.

    The file's replies are read (nothing is recorded); the recorded ones of its thread are
    matched to them, first by key and text (unmoved), then by text and time, in order
    (moved: the row takes the line's key). A recorded reply matched to no line is set aside
    under ``<key>~<row id>``, a key no line has, so that the reply a line of the file holds
    now, or will hold once Codex appends to it, is recorded under its own key (a reply set
    aside that a file shows again is matched by text and time, and moved back, by the next
    read from the start). One write transaction; ``(moved, set aside)``.
    """
    path = os.fspath(path)
    settle = (SETTLE_ALL if is_complete_file(path) else 0) if settle is None else settle
    found: dict[str, list[tuple[str, str, int | None]]] = {}  # prefix -> (key, sha, at)
    for reply in iter_rollout_replies(path, settle=settle):
        found.setdefault(reply.id[:reply.id.rindex(":") + 1], []).append(
            (reply.id, text_sha256(reply.text), reply.at))
    moved = set_aside = 0
    with transaction(conn):  # read under the write lock: no reply is recorded meanwhile
        for prefix, replies in found.items():
            end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
            rows = conn.execute(
                "SELECT id, reply_key, text_sha256, replied_at FROM replies"
                " WHERE reply_key >= ? AND reply_key < ? ORDER BY id", (prefix, end)).fetchall()
            by_key = {row[1]: row for row in rows}
            claimed: set[int] = set()
            unmatched = []
            for key, sha, at in replies:
                row = by_key.get(key)
                if row is not None and row[2] == sha and row[0] not in claimed:
                    claimed.add(row[0])
                else:
                    unmatched.append((key, sha, at))
            pool: dict[tuple, list] = {}
            for row in rows:
                if row[0] not in claimed:
                    pool.setdefault((row[2], row[3]), []).append(row)
                    pool.setdefault((row[2], None), []).append(row)
            new_keys: dict[int, str] = {}
            for key, sha, at in unmatched:
                for row in pool.get((sha, at), ()):
                    if row[0] not in claimed:
                        claimed.add(row[0])
                        new_keys[row[0]] = key
                        moved += 1
                        break
            for row in rows:  # on no line now; a line key that a later line may take
                if row[0] not in claimed and row[1][len(prefix):].isdigit():
                    new_keys[row[0]] = f"{row[1]}~{row[0]}"
                    set_aside += 1
            # Two steps, so that keys passed from one row to another never clash.
            conn.executemany("UPDATE replies SET reply_key = ? WHERE id = ?",
                             [(f"~rekey~{row_id}", row_id) for row_id in new_keys])
            conn.executemany("UPDATE replies SET reply_key = ? WHERE id = ?",
                             [(key, row_id) for row_id, key in new_keys.items()])
    return moved, set_aside


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
    settle: int | None = None,
    reopen: Callable[[], object] | None = None,
) -> IngestReport:
    """Record every assistant reply of one rollout file, ~100 replies per transaction.

    Read from the start, a reply whose key is already recorded is counted a duplicate
    without being parsed (except with ``profile="strict"``, which rejects a reply with problems even when it
    was recorded before). A crash loses at most the batch in progress; ingesting the file
    again records exactly what is missing. In a paginated file each recorded key is checked
    against its text; when the file turns out rewritten (``RewrittenFile``), the recorded
    replies are moved to their new keys (``rekey_moved_replies``) and the file is read
    again from its start (``reopen()``, else the file opened anew): ``report.rekeyed``.

    ``settle``: see ``iter_rollout_replies``; by default every pending reply of a complete
    file (``is_complete_file``), none of another (``report.pending`` says how many wait).

    A file read from its start with neither a ``session_meta`` line nor an assistant
    reply is not a Codex session file: ``InputError`` (nothing was recorded).
    ``scan``, ``handle`` and ``first_line`` read from a later point (see ``iter_rollout_replies``).
    """
    path = os.fspath(path)
    scan = scan if scan is not None else RolloutScan(path)
    settle = (SETTLE_ALL if is_complete_file(path) else 0) if settle is None else settle
    report = IngestReport(path, None)
    # A read resumed at a stored offset (``first_line``) holds new lines: not worth a look-up.
    look_up = profile != "strict" and first_line == 0
    options = dict(first_line=first_line, max_bytes=max_bytes, origin=origin, settle=settle,
                   known=(lambda prefix: recorded_keys(conn, prefix)) if look_up else None,
                   recorded=(lambda prefix: recorded_rows(conn, prefix)) if look_up else None)
    stamp = None
    if look_up and handle is None and not path.endswith(".zst"):
        # Read whole before, and neither the file nor its recorded replies changed since?
        began = time.time_ns()
        handle = _open_lines(path)
        stamp = file_stamp(handle.fileno(), max_bytes=max_bytes, settle=settle)
        found = load_check(conn, _check_key(path))
        if found is not None and found[0] == stamp and \
                rows_digest(conn, _prefixes(found[2]["session_id"], path)) == found[1]:
            handle.close()
            return _unchanged_report(path, found[2], scan)
    try:
        _record(conn, report, iter_rollout_replies(path, scan, progress, handle=handle,
                                                   **options),
                profile=profile, policy=policy, memory_root=memory_root, now=now)
    except RewrittenFile:
        first = report
        report = IngestReport(path, None)
        report.rekeyed, report.set_aside = rekey_moved_replies(conn, path, settle=settle)
        scan.restart()
        _record(conn, report, iter_rollout_replies(
            path, scan, progress, handle=reopen() if reopen is not None else None,
            raise_on_rewrite=False, **options),
            profile=profile, policy=policy, memory_root=memory_root, now=now)
        # What the first read recorded before it stopped is counted once, as recorded.
        report.recorded += first.recorded
        report.duplicates -= first.recorded
        report.counted += first.counted
        report.unknown_ids |= first.unknown_ids
        report.not_uuid_ids |= first.not_uuid_ids
    report.replies += scan.known
    report.duplicates += scan.known
    if first_line == 0 and scan.session_id is None and not report.replies:
        raise InputError(
            f"{path}: not a Codex session file: no session_meta line and no assistant reply"
            f" in {count(scan.lines, 'line')}",
            hint="give the rollout-*.jsonl files of $CODEX_HOME/sessions")
    report.session_id = scan.session_id
    report.bad_lines = scan.bad_lines
    report.bad_line_count = scan.bad_line_count
    report.long_lines = scan.long_lines
    report.long_line_count = scan.long_line_count
    report.parent_ids = scan.parent_ids
    report.pending = scan.pending
    if stamp is not None and not report.rejected:
        _note_whole_read(conn, path, stamp, report, scan, max_bytes=max_bytes, settle=settle,
                         began=began, now=now)
    return report


def _prefixes(session_id: str | None, path: str) -> list[str]:
    """The key prefixes of a file's replies as stored: its session's, and its path's (before
    any session_meta; a byte of the name that is not UTF-8 as its escape)."""
    return [storable(key_prefix(session_id, path)), storable(key_prefix(None, path))]


def _check_key(path: str) -> str:
    """The name a file's whole read is noted under: its real path, as stored."""
    return storable(os.path.realpath(path))


def _unchanged_report(path: str, summary: dict, scan: RolloutScan) -> IngestReport:
    """What a read of a file unchanged since its last whole read reports: every reply a
    duplicate, its lines as they were found."""
    report = IngestReport(path, summary["session_id"], replies=summary["replies"],
                          duplicates=summary["replies"])
    for name in ("bad_lines", "bad_line_count", "long_lines", "long_line_count",
                 "parent_ids", "pending"):
        setattr(report, name, summary[name])
    scan.session_id, scan.lines, scan.replies = summary["session_id"], summary["lines"], \
        summary["replies"]
    scan.known, scan.pending = summary["replies"], summary["pending"]
    return report


def _note_whole_read(conn: sqlite3.Connection, path: str, stamp: str, report: IngestReport,
                     scan: RolloutScan, *, max_bytes: int, settle: int, began: int,
                     now: int | None) -> None:
    """Note what a whole read found, unless the file changed while it was read or just
    before (``memcite.ledger.ingest_checks.SETTLED_NS``)."""
    try:
        fd = open_regular(path)
    except OSError:
        return
    try:
        if file_stamp(fd, max_bytes=max_bytes, settle=settle, before_ns=began) != stamp:
            return
    finally:
        os.close(fd)
    summary = {name: getattr(report, name) for name in SUMMARY_FIELDS if name != "lines"}
    summary["lines"] = scan.lines
    save_check(conn, _check_key(path), stamp, _prefixes(scan.session_id, path), summary,
               now=now)


def _record(conn: sqlite3.Connection, report: IngestReport, replies: Iterator[ReplyInput],
            **options) -> None:
    """Record ``replies`` in batches, counting each result in ``report`` as it comes."""
    for result in record_replies(conn, replies, batch_replies=BATCH_REPLIES, **options):
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
