"""The values a reading produces: blocks, entries, citations, diagnostics.

Plain immutable classes with ``__slots__``: reading a reply (once per agent reply,
in a new process) should not pay for building dataclasses at start-up. They
behave as frozen dataclasses would: compared and printed by their fields,
hashable when their fields are, and read-only. Each has ``to_dict()`` giving the
JSON shape that ``memcite parse --json`` prints.
"""

from __future__ import annotations

from memcite.value_classes import FrozenSlots

_set = object.__setattr__  # a frozen value's fields are set once, in __init__

SEVERITIES = ("info", "warning", "error")


class CitationEntry(FrozenSlots):
    """One accepted line of a ``<citation_entries>`` section, as Codex keeps it."""

    __slots__ = ("path", "line_start", "line_end", "note", "line", "column")
    _fields = __slots__
    # ``line`` and ``column`` say where the entry's line starts in the reply (1-based), for
    # diagnostics and for the ledger; they are not part of what Codex keeps (nor of ==).
    _compared = ("path", "line_start", "line_end", "note")

    def __init__(self, path: str, line_start: int, line_end: int, note: str,
                 line: int = 0, column: int = 0) -> None:
        _set(self, "path", path)
        _set(self, "line_start", line_start)
        _set(self, "line_end", line_end)
        _set(self, "note", note)
        _set(self, "line", line)
        _set(self, "column", column)

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "note": self.note,
        }


class Citation(FrozenSlots):
    """What Codex's reader yields for a reply: entries and ids, in order."""

    __slots__ = ("entries", "rollout_ids")
    _fields = _compared = __slots__

    def __init__(self, entries: list[CitationEntry], rollout_ids: list[str]) -> None:
        _set(self, "entries", entries)
        _set(self, "rollout_ids", rollout_ids)

    def to_dict(self) -> dict:
        return {
            "entries": [entry.to_dict() for entry in self.entries],
            "rollout_ids": list(self.rollout_ids),
        }


class Diagnostic(FrozenSlots):
    """Something Codex passes over silently, with where it is in the reply."""

    __slots__ = ("severity", "code", "message", "line", "column")
    _fields = _compared = __slots__

    def __init__(self, severity: str, code: str, message: str, line: int, column: int) -> None:
        _set(self, "severity", severity)  # "info" | "warning" | "error"
        _set(self, "code", code)  # stable, kebab-case, e.g. "entry-no-note"
        _set(self, "message", message)
        _set(self, "line", line)  # 1-based line in the reply
        _set(self, "column", column)  # 1-based column (in characters) in the reply

    def to_dict(self) -> dict:
        return {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "line": self.line,
            "column": self.column,
        }

    def __str__(self) -> str:
        return f"{self.line}:{self.column}: {self.severity}: {self.message} [{self.code}]"


class Block(FrozenSlots):
    """Where one ``<oai-mem-citation>`` block sits in the reply (character offsets)."""

    __slots__ = ("start", "body_start", "body_end", "end", "terminated")
    _fields = _compared = __slots__

    def __init__(self, start: int, body_start: int, body_end: int, end: int,
                 terminated: bool) -> None:
        _set(self, "start", start)  # offset of the open tag
        _set(self, "body_start", body_start)  # first character after the open tag
        _set(self, "body_end", body_end)  # offset of the close tag, or len(text) if never closed
        _set(self, "end", end)  # first character after the close tag (== body_end if unclosed)
        _set(self, "terminated", terminated)

    def to_dict(self) -> dict:
        return {
            "start": self.start,
            "body_start": self.body_start,
            "body_end": self.body_end,
            "end": self.end,
            "terminated": self.terminated,
        }


class Reading(FrozenSlots):
    """Everything memcite reads from one agent reply."""

    __slots__ = ("visible", "citation", "thread_ids", "diagnostics", "blocks", "profile")
    _fields = _compared = __slots__

    def __init__(self, visible: str, citation: Citation | None, thread_ids: list[str],
                 diagnostics: list[Diagnostic], blocks: tuple[Block, ...] = (),
                 profile: str = "codex") -> None:
        _set(self, "visible", visible)
        _set(self, "citation", citation)
        _set(self, "thread_ids", thread_ids)
        _set(self, "diagnostics", diagnostics)
        _set(self, "blocks", blocks)
        _set(self, "profile", profile)

    @property
    def has_warnings(self) -> bool:
        """True when any diagnostic is a warning or an error."""
        return any(d.severity != "info" for d in self.diagnostics)

    def to_dict(self) -> dict:
        return {
            "visible": self.visible,
            "citation": None if self.citation is None else self.citation.to_dict(),
            "thread_ids": list(self.thread_ids),
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }
