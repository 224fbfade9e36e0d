"""What memcite's snapshots of a memory folder cost: time and disk, and judging one run.

    python benchmarks/bench_snapshots.py [--memory-kb 300] [--summaries 100] [--cited 300]

A generated memory folder (``MEMORY.md`` of ``--memory-kb`` KB of varied text in task
groups, a 9 KB summary, 300 KB of raw memories, ``--summaries`` rollout summaries of 5 KB):
the first snapshot (every file new), five later ones (one line of ``MEMORY.md`` changed
each time: only its new bytes are added), the Stop hook's look when nothing changed
(``folder_stamp`` and ``memcite.ledger.snapshot_look.unchanged``, what a turn pays), and
``judge_run`` of the last run with ``--cited`` cited lines. Wall times and bytes on disk;
the text is random words, which compress worse than real memory (a real 300 KB
``MEMORY.md`` compresses about four times).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from memcite.audit.memory_quarantine import folder_stamp  # noqa: E402
from memcite.codex.consolidation_history import view_of  # noqa: E402
from memcite.codex.consolidation_runs import Cited, judge_run  # noqa: E402
from memcite.ledger.memory_files import cited_lines_sha256  # noqa: E402
from memcite.ledger.snapshot_look import unchanged  # noqa: E402
from memcite.ledger.snapshots import SnapshotStore, after_reply, snapshot_folder  # noqa: E402


class Text:
    """Varied lines of random words, some with a command, a path or a number."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        letters = "abcdefghijklmnopqrstuvwxyz"
        self.vocab = ["".join(self.rng.choice(letters) for _ in range(self.rng.randint(3, 10)))
                      for _ in range(3000)]

    def line(self) -> str:
        rng, vocab = self.rng, self.vocab
        words = rng.sample(vocab, rng.randint(8, 20))
        if rng.random() < 0.3:
            words.append(f"`{rng.choice(vocab)} --{rng.choice(vocab)}`")
        if rng.random() < 0.3:
            words.append(f"src/{rng.choice(vocab)}/{rng.choice(vocab)}.py")
        if rng.random() < 0.3:
            words.append(str(rng.randint(10, 99_999)))
        return "- " + " ".join(words)

    def body(self, size: int) -> str:
        lines: list[str] = []
        total = 0
        while total < size:
            if len(lines) % 40 == 0:
                lines.append(f"# Task Group: {self.rng.choice(self.vocab)} {len(lines)}")
            lines.append(self.line())
            total += len(lines[-1]) + 1
        return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory-kb", type=int, default=300)
    parser.add_argument("--summaries", type=int, default=100)
    parser.add_argument("--cited", type=int, default=300)
    args = parser.parse_args()
    text = Text()
    work = tempfile.mkdtemp(prefix="memcite-bench-snapshots-")
    try:
        home = os.path.join(work, "codex")
        folder = os.path.join(home, "memories")
        os.makedirs(os.path.join(folder, "rollout_summaries"))
        memory = text.body(args.memory_kb * 1000)
        Path(folder, "MEMORY.md").write_text(memory)
        Path(folder, "memory_summary.md").write_text("v1\n" + text.body(9_000))
        Path(folder, "raw_memories.md").write_text(text.body(300_000))
        for n in range(args.summaries):
            Path(folder, "rollout_summaries", f"s{n:04}.md").write_text(text.body(5_000))
        db = os.path.join(work, "data", "memcite.sqlite")
        os.makedirs(os.path.dirname(db))
        store = SnapshotStore(snapshot_folder(db))
        clock = time.perf_counter()
        after_reply(db, home, folder, folder_stamp(folder), now=1)
        first = time.perf_counter() - clock
        print(f"memory folder: MEMORY.md {len(memory):,} B, {args.summaries} rollout summaries")
        print(f"first snapshot            {first * 1000:7.1f} ms   {store.disk_bytes():>9,} B on disk")
        costs = []
        for n in range(5):
            lines = memory.split("\n")
            lines[text.rng.randrange(len(lines) - 1)] = text.line()
            memory = "\n".join(lines)
            Path(folder, "MEMORY.md").write_text(memory)
            before = store.disk_bytes()
            clock = time.perf_counter()
            after_reply(db, home, folder, folder_stamp(folder), now=10 + n)
            costs.append((time.perf_counter() - clock, store.disk_bytes() - before))
        print(f"each later snapshot       {statistics.median(c for c, _ in costs) * 1000:7.1f} ms"
              f"   {statistics.median(b for _, b in costs):>9,.0f} B added (median of 5)")
        looks = []
        for _ in range(2000):
            clock = time.perf_counter()
            assert unchanged(db, folder, folder_stamp(folder))
            looks.append(time.perf_counter() - clock)
        print(f"the hook's look, unchanged {statistics.median(looks) * 1e6:6.0f} us (median of 2000)")
        snapshots = store.index()
        before, after = view_of(store, snapshots[-2]), view_of(store, snapshots[-1])
        data = before.memory.encode()
        count = len(before.memory.split("\n")) - 1
        cited = [Cited("MEMORY.md", k, k, cited_lines_sha256(data, k, k), 5, ())
                 for k in text.rng.sample(range(1, count), min(args.cited, count - 1))]
        clock = time.perf_counter()
        judge_run(before, after, cited, [], now=20, window_days=30, budget_tokens=2500)
        print(f"judging the last run      {(time.perf_counter() - clock) * 1000:7.1f} ms"
              f"   ({len(cited)} cited lines)")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
