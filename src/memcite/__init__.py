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
    "codex_prune_selection",
    "collect_stats",
    "consolidation_selection",
    "dead_memories",
    "forget_memories",
    "restore_memories",
    "undo_requests",
    # project notes
    "EntryDraft",
    "NoteRefusal",
    "forget_note",
    "list_notes",
    "locate_note",
    "recall_note",
    "restore_note",
    "save_entries",
]

_HOME = {
    "Block": "citations.models",
    "Citation": "citations.models",
    "CitationEntry": "citations.models",
    "Diagnostic": "citations.models",
    "Reading": "citations.models",
    "CitationError": "errors",
    "InputError": "errors",
    "MemciteError": "errors",
    "normalize_thread_id": "citations.thread_ids",
    "parse_reply": "citations.reading",
    "render_citation": "citations.render",
    "ReplyInput": "ledger.recording",
    "record_reply": "ledger.recording",
    "record_replies": "ledger.recording",
    "rebuild": "ledger.recording",
    "open_store": "ledger.store",
    "sync_codex_home": "ledger.sync",
    "ingest_rollout": "ledger.ingest",
    "build_instructions": "readpath.instructions",
    "get_tokenizer": "readpath.tokens",
    "project_slug": "readpath.projects",
    "truncate_approx": "readpath.truncation",
    "truncate_to_budget": "readpath.truncation",
    "collect_stats": "retention.stats",
    "dead_memories": "retention.rules",
    "codex_prune_selection": "retention.rules",
    "consolidation_selection": "retention.rules",
    "forget_memories": "retention.forget",
    "undo_requests": "retention.forget",
    "restore_memories": "retention.archive",
    "EntryDraft": "notes.operations",
    "NoteRefusal": "notes.refusals",
    "forget_note": "notes.operations",
    "list_notes": "notes.operations",
    "locate_note": "notes.storage",
    "recall_note": "notes.operations",
    "restore_note": "notes.operations",
    "save_entries": "notes.operations",
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
