"""Coverage-guided fuzzing of one ``record --jsonl`` line with atheris.

Each input is a JSON Lines batch (a line or a few), read as ``memcite record --jsonl``
reads it and recorded in a scratch ledger. The harness fails on any exception: a bad
line must be reported and skipped, never crash the batch.
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile

import atheris

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _harness import main  # noqa: E402

with atheris.instrument_imports():
    from memcite.ledger.jsonl_batch import jsonl_replies
    from memcite.ledger.recording import record_replies
    from memcite.ledger.store import open_store

WORK = tempfile.mkdtemp(prefix="memcite-fuzz-jsonl-")
CONN = open_store(os.path.join(WORK, "m.sqlite"))
os.makedirs(os.path.join(WORK, "memories"))
with open(os.path.join(WORK, "memories", "MEMORY.md"), "wb") as _handle:
    _handle.write(b"# M\none\ntwo\n")


def check_one_input(data: bytes) -> None:
    problems: list[str] = []
    replies = jsonl_replies(io.BytesIO(data), "<fuzz>", 4096, "replace", problems.append)
    for result in record_replies(CONN, replies, memory_root=os.path.join(WORK, "memories")):
        assert result.status in ("recorded", "duplicate", "rejected")
        json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")  # printable
    for problem in problems:
        problem.encode("utf-8", "backslashreplace")


BLOCK = ("Done.\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:1-2|note=[n]\n"
         "</citation_entries>\n<rollout_ids>\n019b7635-7fb3-7cf8-8f11-6f64065672e0\n"
         "</rollout_ids>\n</oai-mem-citation>")
SEEDS = [json.dumps({"text": BLOCK, "id": "a", "at": 1, "thread_id": "t", "cwd": "/w"}).encode(),
         json.dumps({"text": "plain"}).encode(), b'{"text": "\\ud800", "id": "\\udc00"}',
         b'{"text": 5}', b"[[[[[[", b"not json", b'{"text": "x", "at": "2026-01-20T10:00:00Z"}',
         json.dumps({"text": BLOCK.replace("MEMORY.md", "MEM\u0000ORY.md")}).encode()]

if __name__ == "__main__":
    main(__file__, check_one_input, SEEDS, "Fuzz one record --jsonl line with atheris.")
