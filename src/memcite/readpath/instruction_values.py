"""What a read path builds: the instructions and how much of each memory file went in.

Plain values with no behaviour of their own, in a module of their own so that the
profiles (``codex_profile``, ``memcite_profile``), the template and the cache use them
without importing ``instructions``, which chooses among them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_BUDGET = 2500
SUMMARY_FILE = "memory_summary.md"
TEMPLATE_VERSION = "3"  # 3: the summary markers taken out of the memory text


@dataclass(frozen=True)
class SourceUse:
    """How much of one memory file went into the instructions."""

    scope: str  # "session" | "project" | "global"
    path: str
    tokens: int
    truncated: bool
    omitted_bytes: int = 0
    omitted_tokens: int = 0
    omitted_exact: bool = True

    def to_dict(self) -> dict:
        return {
            "scope": self.scope,
            "path": self.path,
            "tokens": self.tokens,
            "truncated": self.truncated,
            "omitted_bytes": self.omitted_bytes,
            "omitted_tokens": self.omitted_tokens,
            "omitted_exact": self.omitted_exact,
        }

    @classmethod
    def from_dict(cls, data: dict) -> SourceUse:
        return cls(**data)


@dataclass(frozen=True)
class Instructions:
    """What goes into the model's context, and where the budget went."""

    instructions: str | None
    summary: str | None  # the text between the markers (codex: Codex's truncated summary)
    truncated: bool
    budget: int
    used: int  # tokens of ``summary``
    sources: tuple[SourceUse, ...] = ()
    profile: str = "memcite"
    tokenizer: str = "o200k_base"
    template_tokens: int = 0  # tokens of the instructions outside the budgeted summary
    warnings: tuple[str, ...] = ()
    cached: bool = field(default=False, compare=False)
    # memcite profile: topics where one scope's entry was left out for another's (see scopes)
    overrides: tuple[dict, ...] = ()
    # memcite profile: entries shortened or left out for the budget, lowest relevance first
    compacted: tuple[dict, ...] = ()
    store: str = "v1"  # the Codex memory store the summary was read from (v1 | v2)

    def to_dict(self) -> dict:
        """The ``memcite instructions --json`` shape."""
        return {
            "instructions": self.instructions,
            "summary": self.summary,
            "truncated": self.truncated,
            "tokens": {"budget": self.budget, "used": self.used},
            "sources": [source.to_dict() for source in self.sources],
            "profile": self.profile,
            "tokenizer": self.tokenizer,
            "warnings": list(self.warnings),
            "overrides": list(self.overrides),
            "compacted": list(self.compacted),
            "store": self.store,
        }


@dataclass(frozen=True)
class ScopeNote:
    """One scope's note as read for the instructions: where, its bytes (None: no note), and what
    its owner line must say (the project's path, ``global``, the session id)."""

    scope: str
    path: str
    data: bytes | None
    owner: str
    slug: str = ""
