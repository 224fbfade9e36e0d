"""Benchmark of ``memcite search``: 10,000 note entries and 10,000 events in the project,
and a 10,000-entry MEMORY.md in Codex's memory folder.

    .venv/bin/python benchmarks/bench_search.py            # 10k entries, 10k events, 10k lines
    .venv/bin/python benchmarks/bench_search.py --quick    # a tenth of that

Reported: the first query (the index built from nothing: every file read, masked and
inserted), a warm query (the stamps checked, nothing re-read), a query after one file
changed (that file alone re-indexed), and the database's size. In-process, through the
library the command calls (``memcite.notes.search.run_search``). Everything is written
in a temporary folder that is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

WORDS = ("sqlite", "migration", "ledger", "citation", "rollout", "summary", "deploy", "flaky",
         "timeout", "cache", "index", "schema", "parser", "token", "budget", "hook", "session",
         "gate", "retention", "archive", "consolidation", "snapshot", "lock", "checkpoint")


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + f" item{rng.randrange(100000)}"


def build(root: str, entries: int, events: int, memory_lines: int) -> tuple[str, str]:
    from memcite.notes.storage import locate_note

    rng = random.Random(7)
    project = os.path.join(root, "proj")
    os.makedirs(os.path.join(project, ".git"))
    home = os.path.join(root, "home")
    location = locate_note(project, home)
    os.makedirs(location.project_dir)
    with open(location.note_file, "w", encoding="utf-8") as f:
        f.write(f"# Project memory\n\nProject: {location.project}\n\n## Decisions\n\n")
        for i in range(entries):
            f.write(f"- [e{i:05d}] {_sentence(rng, 10)}\n")
    with open(os.path.join(location.project_dir, "events.jsonl"), "w", encoding="utf-8") as f:
        for i in range(events):
            f.write(json.dumps({"id": f"ev-{i:08d}", "time": "2026-01-01T00:00:00Z",
                                "epoch": 1_767_225_600 + i, "kind": "failure",
                                "text": _sentence(rng, 12), "files": ["src/x.py"]}) + "\n")
    memory = os.path.join(home, "memories")
    os.makedirs(os.path.join(memory, "rollout_summaries"))
    with open(os.path.join(memory, "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write("# Memory\n\n")
        for _ in range(memory_lines):
            f.write(f"- {_sentence(rng, 14)}\n")
    return project, home


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    n = 1000 if args.quick else 10_000
    from memcite.notes.search import KINDS, run_search
    from memcite.paths import Locations

    root = tempfile.mkdtemp(prefix="memcite-bench-search-")
    try:
        project, home = build(root, n, n, n)
        db = os.path.join(root, "memcite.sqlite")

        def once(query: str) -> tuple[float, dict]:
            start = time.perf_counter()
            result = run_search(Locations(db=db, codex_home=home), query, cwd=project,
                                kinds=KINDS, scopes=("project", "global"), session=None, limit=20)
            return (time.perf_counter() - start) * 1000, result

        cold, result = once("sqlite timeout")
        rows = result["refresh"]["rows_written"]
        warm = [once(q)[0] for q in ("sqlite timeout", "flaky deploy", "checkpoint", "item42")
                for _ in range(max(1, args.rounds // 4 + 1))]
        note = os.path.join(home, "memory", "projects")
        note = os.path.join(note, os.listdir(note)[0], "memory.md")
        with open(note, "a", encoding="utf-8") as f:
            f.write("- [zzzzzz] a brand new entry about zeppelins\n")
        changed, result2 = once("zeppelins")
        size = os.path.getsize(db) + (os.path.getsize(db + "-wal")
                                      if os.path.exists(db + "-wal") else 0)
        print(f"corpus: {n} note entries, {n} events, {n}-entry MEMORY.md "
              f"({rows} rows indexed)")
        print(f"first query (index built):      {cold:8.1f} ms")
        print(f"warm query (median of {len(warm):2d}):      {statistics.median(warm):8.1f} ms "
              f"(max {max(warm):.1f})")
        print(f"after one note changed:         {changed:8.1f} ms "
              f"({result2['refresh']['rows_written']} rows re-indexed, "
              f"{result2['count']} hit)")
        print(f"database size:                  {size / 1e6:8.1f} MB")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
