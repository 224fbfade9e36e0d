"""Ingesting one rollout file, then ingesting it again (nothing new), as a ratio.

    python benchmarks/bench_ingest.py [--turns 1500] [--rounds 5]

Target (issue 15): re-ingesting a file whose replies are all recorded costs at most
1/4 of the first ingest. Each round takes a fresh database and ingests the same
rollout (two replies a turn, one of them citing a memory) twice, first and again,
so the two kinds of run interleave; their medians are compared.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from codex_sessions import memory_folder, session_id, write_session  # noqa: E402
from memcite.ledger.ingest import ingest_rollout  # noqa: E402
from memcite.ledger.store import open_store  # noqa: E402


def _median(values: list[float]) -> float:
    values = sorted(values)
    return values[len(values) // 2]


def _timed(conn, path: Path, root: Path):
    start = time.perf_counter()
    report = ingest_rollout(conn, path, memory_root=root)
    return time.perf_counter() - start, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="memcite-bench-ingest-"))
    try:
        home = work / "codex"
        root = memory_folder(home)
        path = write_session(home, session_id(1), options.turns)
        first_times: list[float] = []
        again_times: list[float] = []
        replies = None
        for number in range(options.rounds + 1):  # round 0 warms the caches, not counted
            conn = open_store(work / f"ledger{number}.sqlite")
            first, report = _timed(conn, path, root)
            again, repeat = _timed(conn, path, root)
            conn.close()
            replies = report.replies
            assert report.recorded == replies and repeat.duplicates == replies \
                and repeat.recorded == 0, (report.to_dict(), repeat.to_dict())
            if number:
                first_times.append(first)
                again_times.append(again)
        first, again = _median(first_times), _median(again_times)
        print(f"rollout: {path.stat().st_size / 2**20:.1f} MB, {replies} replies; "
              f"median of {options.rounds} rounds, fresh databases")
        print(f"  first ingest     {first * 1000:8.1f} ms")
        print(f"  re-ingest        {again * 1000:8.1f} ms  = {again / first:.3f} of the first"
              "   (target <= 0.25)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
