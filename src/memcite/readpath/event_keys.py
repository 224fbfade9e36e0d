"""Names shared by the event log and the pre-action gate, light enough for the gate's
fast path (``memcite.codex.pre_tool_gate``): where the log and its gate index lie."""

from __future__ import annotations

import hashlib

EVENTS_FILE = "events.jsonl"
GATE_DIR = "gate"
APPROACHES_FILE = "approaches.json"


def shard_name(path: str) -> str:
    """The gate index file holding ``path``'s history (project-relative, POSIX)."""
    return hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:2] + ".json"
