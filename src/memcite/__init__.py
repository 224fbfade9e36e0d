"""memcite: read, record and audit the memory citations of coding agents.

The public names are loaded on first use, so that ``import memcite.<module>``
(every CLI command does) costs only what that module needs.
"""

from __future__ import annotations

from importlib import import_module

__version__ = "0.1.0"

__all__ = [
    # reading replies
    "Block",
    "Citation",
    "CitationEntry",
    "CitationError",
    "Diagnostic",
    "InputError",
    "MemciteError",
    "Reading",
    "normalize_thread_id",
    "parse_reply",
    "render_citation",
    # the usage ledger
    "ReplyInput",
    "ingest_rollout",
    "open_store",
    "rebuild",
    "record_replies",
    "record_reply",
    "sync_codex_home",
    # the read path
    "build_instructions",
    "get_tokenizer",
    "project_slug",
    "truncate_approx",
    "truncate_to_budget",
    # analytics and retention
    "archive_memories",
    "codex_prune_selection",
    "collect_stats",
    "consolidation_selection",
    "dead_memories",
    "restore_memories",
]

_HOME = {
    "Block": "models", "Citation": "models", "CitationEntry": "models", "Diagnostic": "models",
    "Reading": "models", "CitationError": "errors", "InputError": "errors",
    "MemciteError": "errors", "normalize_thread_id": "thread_ids", "parse_reply": "reading",
    "render_citation": "render", "ReplyInput": "ledger", "record_reply": "ledger",
    "record_replies": "ledger", "rebuild": "ledger", "open_store": "store",
    "sync_codex_home": "sync", "ingest_rollout": "ingest",
    "build_instructions": "instructions", "get_tokenizer": "tokens", "project_slug": "projects",
    "truncate_approx": "truncation", "truncate_to_budget": "truncation",
    "collect_stats": "stats", "dead_memories": "retention",
    "codex_prune_selection": "retention", "consolidation_selection": "retention",
    "archive_memories": "archive", "restore_memories": "archive",
}


def __getattr__(name: str):
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'memcite' has no attribute {name!r}")
    value = getattr(import_module(f"memcite.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
