"""The values a reading produces: blocks, entries, citations, diagnostics.

Plain frozen dataclasses, so that reading a reply imports nothing heavy; each
has ``to_dict()`` giving the JSON shape that ``memcite parse --json`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SEVERITIES = ("info", "warning", "error")


@dataclass(frozen=True)
class CitationEntry:
    """One accepted line of a ``<citation_entries>`` section, as Codex keeps it."""

    path: str
    line_start: int
    line_end: int
    note: str
    # Where the entry's line starts in the reply (1-based), for diagnostics and
    # for the ledger; not part of what Codex keeps.
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "note": self.note,
        }


@dataclass(frozen=True)
class Citation:
    """What Codex's reader yields for a reply: entries and ids, in order."""

    entries: list[CitationEntry]
    rollout_ids: list[str]

    def to_dict(self) -> dict:
        return {
            "entries": [entry.to_dict() for entry in self.entries],
            "rollout_ids": list(self.rollout_ids),
        }


@dataclass(frozen=True)
class Diagnostic:
    """Something Codex passes over silently, with where it is in the reply."""

    severity: str  # "info" | "warning" | "error"
    code: str  # stable, kebab-case, e.g. "entry-no-note"
    message: str
    line: int  # 1-based line in the reply
    column: int  # 1-based column (in characters) in the reply

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


@dataclass(frozen=True)
class Block:
    """Where one ``<oai-mem-citation>`` block sits in the reply (character offsets)."""

    start: int  # offset of the open tag
    body_start: int  # first character after the open tag
    body_end: int  # offset of the close tag, or len(text) when never closed
    end: int  # first character after the close tag (== body_end when never closed)
    terminated: bool

    def to_dict(self) -> dict:
        return {
            "start": self.start,
            "body_start": self.body_start,
            "body_end": self.body_end,
            "end": self.end,
            "terminated": self.terminated,
        }


@dataclass(frozen=True)
class Reading:
    """Everything memcite reads from one agent reply."""

    visible: str
    citation: Citation | None
    thread_ids: list[str]
    diagnostics: list[Diagnostic]
    blocks: tuple[Block, ...] = ()
    profile: str = "codex"

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
