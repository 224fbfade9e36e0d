"""``memcite record --jsonl``: a batch of replies read from JSON Lines and recorded.

Each line is an object with ``"text"`` and, if known, ``"id"``, ``"at"``, ``"thread_id"``
and ``"cwd"``. A bad line is reported (through ``on_problem``) and skipped, the rest
recorded in batches (``memcite.ledger.recording.record_replies``); a result is handed to
``on_result`` once its batch is committed. Not on the per-reply path: ``record`` of one
reply never imports this module.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator

from memcite.display import count
from memcite.errors import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK, InputError
from memcite.untrusted import bounded_lines, decode_utf8, loads_json

__all__ = ["BatchTotals", "is_regular_file", "jsonl_replies", "open_jsonl", "record_jsonl",
           "reply_from_object"]


def open_jsonl(path: str, name: str):
    """The binary handle of a JSON Lines file named ``name``; a clear error if it cannot be read."""
    from memcite.ledger.memory_files import open_regular

    try:
        return os.fdopen(open_regular(path), "rb")  # a FIFO or a device: refused, never a hang
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{name}: is a directory, not a JSON Lines file") from None
    except ValueError:
        raise InputError(f"{name!r}: not a usable file name (it holds a NUL byte)") from None
    except OSError as exc:
        raise InputError(f"{name}: cannot read: {exc.strerror or exc}",
                         hint="to read from a pipe, pass --jsonl - and pipe into stdin") from None


def reply_from_object(item: object, where: str):
    """The ``ReplyInput`` one JSON Lines object describes; an ``InputError`` if it is not one."""
    from memcite.ledger.recording import ReplyInput, parse_time

    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        raise InputError(f'{where}: expected an object with a "text" string')
    if not item["text"].strip():
        raise InputError(f'{where}: "text" is empty')
    fields = {}
    for name in ("id", "thread_id", "cwd"):
        value = item.get(name)
        if value is not None and not isinstance(value, str):
            raise InputError(f'{where}: "{name}" must be a string')
        fields[name] = value or None
    at = item.get("at")
    if at is not None:
        at = parse_time(at, what=f'{where}: "at"')
    return ReplyInput(text=item["text"], at=at, where=where, **fields)


def jsonl_replies(handle, name: str, max_bytes: int, errors: str,
                  on_problem: Callable[[str], None]) -> Iterator:
    """Yield ``ReplyInput``s from a JSON Lines handle; a bad line goes to ``on_problem``."""
    for number, raw in enumerate(bounded_lines(handle, max_bytes), start=1):
        where = f"{name}:{number}"
        if raw is None:
            on_problem(f"{where}: longer than the limit of {max_bytes} bytes (skipped)")
            continue
        if not raw.strip():
            continue
        try:
            item = loads_json(decode_utf8(raw, name=where, errors=errors))
        except InputError as error:
            on_problem(f"{error} (skipped)")
            continue
        except ValueError as exc:
            on_problem(f"{where}: not JSON ({exc}) (skipped)")
            continue
        try:
            yield reply_from_object(item, where)
        except InputError as error:
            on_problem(f"{error} (skipped)")


def is_regular_file(handle) -> bool:
    """Whether ``handle`` reads a file (read through at once), not a pipe or a terminal."""
    try:
        return stat.S_ISREG(os.fstat(handle.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False


class BatchTotals:
    """What a batch did: replies by status, lines skipped, citations counted, ids seen."""

    __slots__ = ("counted", "not_uuid", "skipped", "statuses", "unknown")

    def __init__(self) -> None:
        self.statuses = {"recorded": 0, "duplicate": 0, "rejected": 0}
        self.skipped = 0
        self.counted = 0
        self.unknown: set[str] = set()
        self.not_uuid: set[str] = set()

    def summary(self) -> str:
        """The one line ``record --jsonl`` ends with."""
        recorded = self.statuses["recorded"]
        return (
            f"recorded {count(recorded, 'reply', 'replies')}"
            f" ({self.statuses['duplicate']} already recorded, {self.statuses['rejected']}"
            f" rejected, {count(self.skipped, 'line')} skipped): {count(self.counted, 'citation')}"
            f" counted, {count(len(self.unknown), 'id')} not in the inventory,"
            f" {count(len(self.not_uuid), 'id')} not UUIDs"
        )

    def exit_code(self) -> int:
        """2 when a line was skipped, 1 when a reply was rejected, else 0."""
        if self.skipped:
            return EXIT_BAD_INPUT
        return EXIT_FINDINGS if self.statuses["rejected"] else EXIT_OK


def record_jsonl(conn, handle, name: str, *, policy: str, profile: str, errors: str,
                 max_bytes: int, memory_root: str | None,
                 on_result: Callable[[object], None],
                 on_problem: Callable[[str], None]) -> BatchTotals:
    """Record every reply of the JSON Lines ``handle`` in ``conn``; ``BatchTotals`` of the run.

    A file is committed about ``BATCH_REPLIES`` replies at a time; a live pipe each reply
    on its own (``is_regular_file``).
    """
    from memcite.ledger.recording import BATCH_REPLIES, record_replies

    totals = BatchTotals()

    def problem(message: str) -> None:
        totals.skipped += 1
        on_problem(message)

    replies = jsonl_replies(handle, name, max_bytes, errors, problem)
    batch = BATCH_REPLIES if is_regular_file(handle) else 1  # a live pipe: each reply
    for result in record_replies(conn, replies, profile=profile, policy=policy,
                                 memory_root=memory_root, batch_replies=batch):
        totals.statuses[result.status] += 1
        totals.counted += len(result.counted)
        totals.unknown.update(result.unknown)
        totals.not_uuid.update(result.not_uuid)
        on_result(result)
    return totals
