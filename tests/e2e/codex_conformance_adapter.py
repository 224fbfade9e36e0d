"""The real Codex as an implementation under conformance: a reply played as the mock model's
answer in a real ``codex exec`` turn, and what Codex did with it, in the reading JSON shape.

What Codex reveals of a reply, and where this adapter reads it:

- ``visible``: the text of the turn's ``AgentMessage`` item in the session file (an
  ``item_completed`` event), the reply with the blocks Codex hid taken out;
- ``citation``: the ``memory_citation`` of that item (entries and rollout ids, as Codex parsed
  them; none: null);
- ``thread_ids``: the threads whose ``usage_count`` Codex raised in ``memories_1.sqlite``, once
  per increment. A count says nothing of order, so they are sorted; and Codex can only raise
  the count of a row that exists: before the turn, a row is added for every UUID-looking run
  of hex digits in the reply (a plain pattern, not memcite's reader).

As a library (tests/e2e/test_e2e_conformance.py): ``CodexReader(world).read(reply)``. As a
COMMAND for ``memcite conformance check``, slow (a fresh Codex home and two turns a case)::

    memcite conformance check --timeout 120 -- python tests/e2e/codex_conformance_adapter.py
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# Any 32 hex digits, hyphens allowed between them, in any case: wide on purpose.
_UUID_LIKE = re.compile(r"(?<![0-9a-fA-F])(?:[0-9a-fA-F]-?){31}[0-9a-fA-F](?![0-9a-fA-F])")
PINNED_CODEX = Path("/root/.cache/memcite-e2e/codex-0.171.0/node_modules/.bin/codex")


def uuid_like(reply: str) -> list[str]:
    """The lowercase hyphenated form of every UUID-looking run of hex digits in ``reply``."""
    found = []
    for match in _UUID_LIKE.finditer(reply):
        digits = match.group().replace("-", "").lower()
        found.append(f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}")
    return sorted(set(found))


def _entry(item: dict) -> dict:
    return {"path": item.get("path"),
            "line_start": item.get("lineStart", item.get("line_start")),
            "line_end": item.get("lineEnd", item.get("line_end")),
            "note": item.get("note")}


def agent_message(session_files: list[Path]) -> dict | None:
    """The last ``AgentMessage`` item Codex completed in these session files."""
    found = None
    for path in session_files:
        for line in path.read_text(encoding="utf-8").split("\n"):  # not splitlines: U+2028 is no line end in JSON Lines
            try:
                record = json.loads(line)
            except ValueError:
                continue
            payload = record.get("payload") or {}
            item = payload.get("item") or {}
            if record.get("type") == "event_msg" and payload.get("type") == "item_completed" \
                    and item.get("type") == "AgentMessage":
                found = item
    return found


class CodexReader:
    """Plays replies through one Codex home, a turn each; ``read`` gives Codex's reading."""

    def __init__(self, world) -> None:
        self.world = world
        done = world.exec("hello")
        if done.returncode != 0:
            raise RuntimeError(f"codex exec exited {done.returncode}: {done.stderr[-2000:]}")

    def _sessions(self) -> set[Path]:
        return set((self.world.codex_home / "sessions").rglob("rollout-*.jsonl"))

    def read(self, reply: str) -> dict:
        world = self.world
        with sqlite3.connect(world.memories_db()) as db:
            db.execute("UPDATE stage1_outputs SET usage_count = NULL, last_usage = NULL")
            known = {row[0] for row in db.execute("SELECT thread_id FROM stage1_outputs")}
        db.close()
        world.add_stage1_rows([t for t in uuid_like(reply) if t not in known])
        before = self._sessions()
        world.model.reply(reply)
        done = world.exec("use memory")
        if done.returncode != 0:
            raise RuntimeError(f"codex exec exited {done.returncode}: {done.stderr[-2000:]}")
        counted = sorted(thread for thread, (count, _) in world.usage().items()
                         for _ in range(count or 0))
        item = agent_message(sorted(self._sessions() - before))
        if item is None:
            return {"visible": None, "citation": None, "thread_ids": counted,
                    "observed": "no AgentMessage item in the session file"}
        visible = "".join(part.get("text", "") for part in item.get("content") or []
                          if part.get("type") == "Text")
        citation = item.get("memory_citation")
        if citation is not None:
            citation = {"entries": [_entry(e) for e in citation.get("entries") or []],
                        "rollout_ids": list(citation.get("rolloutIds",
                                                         citation.get("rollout_ids")) or [])}
        return {"visible": visible, "citation": citation, "thread_ids": counted}


def main() -> int:
    """One reply on stdin, Codex's reading on stdout (a fresh Codex home in a temporary folder)."""
    import os

    from mock_model import MockModel

    from conftest import CodexWorld, _consolidation_answer

    reply = sys.stdin.buffer.read().decode("utf-8")
    codex = os.environ.get("MEMCITE_CODEX_BIN") or str(PINNED_CODEX)
    with tempfile.TemporaryDirectory() as root, MockModel(responder=_consolidation_answer) as model:
        reader = CodexReader(CodexWorld(Path(root), codex, model))
        reading = reader.read(reply)
    sys.stdout.write(json.dumps(reading) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
