"""Finding Codex's session files and reading the lines ``memcite thread`` needs, streaming.

A Codex home keeps one session file per thread: ``sessions/YYYY/MM/DD/rollout-<time>-<thread
id>.jsonl`` (archived ones flat in ``archived_sessions/``; ``.jsonl.zst`` when compressed, a
reverted thread's ``..._<rollout id>.jsonl``). Each line is ``{timestamp, [ordinal,] type,
payload}``. What is read here, by the start of each line (the type and role come first in
Codex's lines), so that the rest is skipped without being parsed nor held:

- the first ``session_meta``: the thread's id, cwd, source, memory_mode, times;
- ``response_item`` developer messages: the memory message (``## Memory``...) is one of
  their ``input_text`` spans, possibly cut over several (``memory_message``);
- ``response_item`` assistant messages (the reply, citation block included);
- ``item_completed`` AgentMessage events (Codex's own reading of the citation, 0.169 on);
- ``token_count`` events: one per model response (``memory_cost`` counts them).

Every line is untrusted: one longer than its limit is skipped without being held, one that
is not JSON is counted; a file is read at most ``max_bytes`` (then ``partial``). Only regular
files are opened (``open_regular``: a FIFO never hangs the read). Nothing is written.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator

from memcite.citations.thread_ids import normalize_thread_id
from memcite.untrusted import loads_json, open_regular, storable

SESSIONS = "sessions"
ARCHIVED = "archived_sessions"
HEAD_BYTES = 64 * 1024  # a line is judged by its first 64 KiB
MAX_META_BYTES = 16 * 1024 * 1024  # session_meta holds the base instructions: tens of KB
MAX_ITEM_BYTES = 16 * 1024 * 1024  # a developer message or a reply longer than this is skipped
DEFAULT_MAX_FILE_BYTES = 1024 * 1024 * 1024  # read at most this much of one file (decompressed)

# The memory message Codex injects (seen with Codex 0.171, store v1 and v2).
MEMORY_HEADING = "## Memory"
SUMMARY_BEGIN = "========= MEMORY_SUMMARY BEGINS ========="
SUMMARY_END = "========= MEMORY_SUMMARY ENDS ========="
# What follows the summary's end marker in store v1's message (Codex 0.171's read_path.md).
V1_TRAILER = ("\n\nWhen memory is likely relevant, start with the quick memory pass above before"
              "\ndeep repo exploration.\n")
# Codex's sources whose threads it extracts memories from (codex-rs/rollout/src/lib.rs,
# INTERACTIVE_SESSION_SOURCES): cli, vscode and the custom atlas and chatgpt.
INTERACTIVE_SOURCES = ("cli", "vscode", "custom:atlas", "custom:chatgpt")

_ROLLOUT_NAME = re.compile(
    r"^rollout-(?P<time>.*?)-(?P<id>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}"
    r"-[0-9a-fA-F]{12})(?:_[^.]+)?\.jsonl(?:\.zst)?$")


class SessionFileError(OSError):
    """A session file could not be opened or read (its message says why)."""


def rollout_thread_id(name: str) -> str | None:
    """The thread id a session file's name carries (lowercase), or None for another name."""
    match = _ROLLOUT_NAME.match(name)
    return match.group("id").lower() if match else None


def iter_session_files(codex_home: str | os.PathLike) -> Iterator[tuple[str, os.stat_result, bool]]:
    """``(path, stat, archived)`` of every session file of the home (``sessions/`` walked,
    ``archived_sessions/`` flat), a plain ``.jsonl`` preferred over the ``.jsonl.zst`` of the
    same name; symlinks and other kinds of files are left out. Unordered."""
    home = os.fspath(codex_home)
    for top, archived in ((os.path.join(home, SESSIONS), False),
                          (os.path.join(home, ARCHIVED), True)):
        folders = [top]
        while folders:
            folder = folders.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            names = {entry.name for entry in entries}
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if not archived:
                            folders.append(entry.path)
                        continue
                    if not entry.is_file(follow_symlinks=False):
                        continue
                except OSError:
                    continue
                if rollout_thread_id(entry.name) is None:
                    continue
                if entry.name.endswith(".zst") and entry.name[:-4] in names:
                    continue  # the plain file wins, as in Codex
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                yield entry.path, info, archived


def find_session_file(codex_home: str | os.PathLike, thread_id: str) -> tuple[str, bool] | None:
    """``(path, archived)`` of the session file of ``thread_id`` (normalised), or None.

    A file named with the id and no rollout suffix is preferred (a reverted thread's
    ``_<rollout id>`` files come after), then the newest."""
    wanted = normalize_thread_id(thread_id)
    if wanted is None:
        return None
    found = [(path, info, archived) for path, info, archived in iter_session_files(codex_home)
             if rollout_thread_id(os.path.basename(path)) == wanted]
    if not found:
        return None

    def rank(item):
        path, info, archived = item
        variant = "_" in os.path.basename(path).rsplit(wanted, 1)[-1].split(".", 1)[0]
        return (variant, archived, -info.st_mtime_ns)

    path, _info, archived = min(found, key=rank)
    return path, archived


def open_session(path: str):
    """A binary reader of ``path`` (decompressing ``.zst``); only a regular file."""
    try:
        raw = os.fdopen(open_regular(path), "rb")
    except FileNotFoundError:
        raise SessionFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise SessionFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError:
        raise SessionFileError(f"{path!r}: not a usable file name") from None
    if path.endswith(".zst"):
        import zstandard

        reader = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return io.BufferedReader(reader, buffer_size=1 << 20)
    return raw


class ScanCounts:
    """What reading one session file skipped."""

    __slots__ = ("lines", "bad_lines", "long_lines", "bytes_read", "partial")

    def __init__(self) -> None:
        self.lines = 0
        self.bad_lines = 0  # candidate lines that were not JSON objects
        self.long_lines = 0  # candidate lines over their limit: skipped unread
        self.bytes_read = 0
        self.partial = False  # stopped at max_bytes


def _kind(head: bytes) -> str | None:
    """Which of the lines read here ``head`` (a line's start) may be, else None."""
    if b'"session_meta"' in head:
        return "meta"
    if b'"response_item"' in head:
        if b'"developer"' in head:
            return "developer"
        if b'"assistant"' in head:
            return "assistant"
        return "response"  # any other response item (user messages, tool calls and outputs)
    if b'"event_msg"' in head:
        if b'"token_count"' in head:
            return "token_count"
        if b'"item_completed"' in head and b'"AgentMessage"' in head:
            return "agent_item"
    return None


def _skip_rest(handle, counts: ScanCounts) -> None:
    while True:
        rest = handle.readline(1 << 20)
        counts.bytes_read += len(rest)
        if not rest or rest.endswith(b"\n"):
            return


def scan_lines(handle, counts: ScanCounts, *, kinds: frozenset[str],
               max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Iterator[tuple[int, str, dict, object]]:
    """``(line number, kind, payload, timestamp)`` for each line of ``kinds`` (``meta``,
    ``developer``, ``assistant``, ``agent_item``, ``token_count``) in the session file open as
    ``handle``; the others are skipped by their start, a long one without being held.
    ``response`` is any other ``response_item`` (a user message, a tool call or its output).
    ``token_count`` lines are not parsed (their payload is ``{}``): only the timestamp is
    taken from their start. Stops once ``max_bytes`` were read (``counts.partial``)."""
    number = 0
    while True:
        if counts.bytes_read >= max_bytes:
            if handle.read(1):
                counts.partial = True
            return
        head = handle.readline(HEAD_BYTES)
        if not head:
            return
        counts.bytes_read += len(head)
        number += 1
        counts.lines = number
        complete = head.endswith(b"\n")
        kind = _kind(head)
        if kind is None or kind not in kinds:
            if not complete:
                _skip_rest(handle, counts)
            continue
        if kind == "token_count":
            if not complete:
                _skip_rest(handle, counts)
            yield number, kind, {}, _timestamp_of_head(head)
            continue
        limit = MAX_META_BYTES if kind == "meta" else MAX_ITEM_BYTES
        line = head
        if not complete:
            parts = [head]
            size = len(head)
            while True:
                rest = handle.readline(min(1 << 20, limit + 2 - size))
                counts.bytes_read += len(rest)
                parts.append(rest)
                size += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
                if size > limit:
                    parts = None
                    _skip_rest(handle, counts)
                    break
            if parts is None:
                counts.long_lines += 1
                continue
            line = b"".join(parts)
        try:
            item = loads_json(line)
        except ValueError:
            counts.bad_lines += 1
            continue
        if not isinstance(item, dict) or not isinstance(item.get("payload"), dict):
            counts.bad_lines += 1
            continue
        expected = {"meta": "session_meta", "developer": "response_item",
                    "assistant": "response_item", "response": "response_item",
                    "agent_item": "event_msg"}[kind]
        if item.get("type") != expected:
            continue
        yield number, kind, item["payload"], item.get("timestamp")


_HEAD_TIMESTAMP = re.compile(rb'"timestamp"\s*:\s*"([^"]{1,64})"')


def _timestamp_of_head(head: bytes) -> str | None:
    found = _HEAD_TIMESTAMP.search(head)
    return found.group(1).decode("ascii", "replace") if found else None


def seconds_of(stamp: object) -> int | None:
    """Unix seconds of a line's ``timestamp`` (RFC 3339, UTC), or None."""
    if not isinstance(stamp, str) or not stamp:
        return None
    from memcite.ledger.codex_home import rfc3339_seconds

    return rfc3339_seconds(stamp)


# --------------------------------------------------------------------------- session_meta


def source_kind(source: object) -> str:
    """A session's ``source`` as one word: ``cli``, ``exec``, ``vscode``, ``mcp``,
    ``subagent``, ``custom:<name>``, or ``unknown``."""
    if isinstance(source, str):
        text = source.strip()
        if text.startswith("{"):  # the state database keeps a structured source as JSON
            try:
                return source_kind(loads_json(text))
            except ValueError:
                return "unknown"
        return storable(text.lower()) or "unknown"
    if isinstance(source, dict):
        if "subagent" in source:
            return "subagent"
        custom = source.get("custom")
        if isinstance(custom, str):
            return f"custom:{storable(custom)}"
    return "unknown"


def parent_thread_id(source: object) -> str | None:
    """The parent's thread id of a subagent's source (``{"subagent": {"thread_spawn":
    {"parent_thread_id": ...}}}``), or None."""
    if not isinstance(source, dict):
        return None
    sub = source.get("subagent")
    if isinstance(sub, dict):
        for value in sub.values():
            if isinstance(value, dict) and isinstance(value.get("parent_thread_id"), str):
                return normalize_thread_id(value["parent_thread_id"])
    return None


def text_of(value: object) -> str | None:
    """A string field of a payload, safe to store and print, or None."""
    return storable(value) if isinstance(value, str) else None


# --------------------------------------------------------------------------- the memory message


class MemoryMessage:
    """The memory message found in one developer message: its text, and what it holds."""

    __slots__ = ("text", "summary", "store", "spans", "line", "at")

    def __init__(self, text: str, summary: str | None, store: str, spans: int, line: int,
                 at: int | None) -> None:
        self.text = text
        self.summary = summary  # between the markers (one newline each side taken off)
        self.store = store  # v1 | v2, from the message's shape and paths
        self.spans = spans  # how many input_text spans it came in
        self.line = line
        self.at = at


def memory_message(payload: dict, line: int = 0, at: int | None = None) -> MemoryMessage | None:
    """The memory message of a developer ``message`` payload, or None.

    Codex sends a long developer message as several ``input_text`` spans: the spans from the
    one beginning ``## Memory`` are joined up to the one holding the summary's end marker,
    then (store v1) the spans that continue its fixed closing paragraph."""
    if payload.get("type") != "message" or payload.get("role") != "developer":
        return None
    content = payload.get("content")
    if not isinstance(content, list):
        return None
    spans = [part["text"] for part in content
             if isinstance(part, dict) and part.get("type") == "input_text"
             and isinstance(part.get("text"), str)]
    for index, text in enumerate(spans):
        if not text.startswith(MEMORY_HEADING):
            continue
        joined, used = text, 1
        rest = spans[index + 1:]
        while rest and SUMMARY_END not in joined:
            joined += rest.pop(0)
            used += 1
        if SUMMARY_END in joined:
            tail = joined[joined.index(SUMMARY_END) + len(SUMMARY_END):]
            while rest and len(tail) < len(V1_TRAILER) and V1_TRAILER.startswith(tail + rest[0]):
                tail += rest[0]
                joined += rest.pop(0)
                used += 1
        summary = None
        begin = joined.find(SUMMARY_BEGIN)
        end = joined.find(SUMMARY_END, begin + 1) if begin >= 0 else -1
        if begin >= 0 and end > begin:
            summary = joined[begin + len(SUMMARY_BEGIN):end]
            summary = summary.removeprefix("\n").removesuffix("\n")
        store = "v2" if "/memories_v2/" in joined or "\\memories_v2\\" in joined else "v1"
        return MemoryMessage(storable(joined), storable(summary) if summary is not None
                             else None, store, used, line, at)
    return None


_TRUNCATED = re.compile(r"…(\d{1,12}) tokens truncated…")


def truncated_tokens(summary: str | None) -> int | None:
    """How many tokens Codex's 4-bytes rule cut out of ``summary`` (its ``…N tokens
    truncated…`` marker), or None when it was not cut."""
    if not summary:
        return None
    found = _TRUNCATED.search(summary)
    return int(found.group(1)) if found else None
