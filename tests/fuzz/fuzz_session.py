"""Coverage-guided fuzzing of Codex session lines (``memcite ingest``) with atheris.

Each input is the content of a rollout file, ingested into a scratch ledger. The
harness fails on any exception other than memcite's own ``InputError`` (a file that
cannot be read at all): bad lines are counted and skipped.
"""

from __future__ import annotations

import glob
import os
import sys
import tempfile

import atheris

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _harness import main  # noqa: E402

with atheris.instrument_imports():
    from memcite.errors import InputError
    from memcite.ledger.ingest import ingest_rollout
    from memcite.ledger.store import open_store

WORK = tempfile.mkdtemp(prefix="memcite-fuzz-session-")
CONN = open_store(os.path.join(WORK, "m.sqlite"))
ROLLOUT = os.path.join(WORK, "rollout-2026-01-20T10-00-00-019bdb5e-1c40-7a21-9c3e-5f0d2b7a4e11.jsonl")


def check_one_input(data: bytes) -> None:
    with open(ROLLOUT, "wb") as handle:
        handle.write(data)
    try:
        report = ingest_rollout(CONN, ROLLOUT, memory_root=WORK, max_bytes=1 << 16)
    except InputError:
        return
    assert report.replies == report.recorded + report.duplicates + report.rejected
    report.to_dict()


def _seeds() -> list[bytes]:
    corpus = os.path.join(HERE, os.pardir, os.pardir, "corpus", "codex_home", "sessions")
    seeds = []
    for path in sorted(glob.glob(os.path.join(corpus, "**", "*.jsonl"), recursive=True))[:5]:
        with open(path, "rb") as handle:
            seeds.append(handle.read())
    return seeds + [b'{"type":"session_meta","payload":{"id":"\\ud800","cwd":5}}\n',
                    b'{"type":"response_item","payload":{"role":"assistant","type":"message",'
                    b'"content":[{"type":"output_text","text":"x"}]}}\n']


if __name__ == "__main__":
    main(__file__, check_one_input, _seeds(), "Fuzz Codex session lines (ingest) with atheris.")
