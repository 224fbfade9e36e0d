"""Read-path speed, as ratios measured side by side in one run.

1. Truncating a 1 MB summary to 2,500 tokens vs encoding the whole file
   (same loaded tokenizer; target: at most 1/20).
2. A cold ``memcite instructions`` process with a warm cache vs ``python -c pass``
   with the same interpreter (target: at most 8x); ``python3 -c pass`` as found
   on PATH is printed too, since a version-manager shim can make it far slower.

Run: ``.venv/bin/python benchmarks/bench_readpath.py [--runs N]``. Everything is
written under a temporary directory (Codex home and cache), removed at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from memcite.readpath.tokens import get_tokenizer  # noqa: E402
from memcite.readpath.truncation import truncate_to_budget  # noqa: E402


def make_summary(size: int) -> str:
    """A memory_summary.md-like text of about ``size`` bytes."""
    parts = ["v1\n\n## User Profile\n\nThe user works on a payments API and a reports CLI.\n"]
    section = 0
    total = len(parts[0])
    while total < size:
        chunk = [f"\n## Topic {section}: release and review notes\n\n"]
        for line in range(12):
            chunk.append(
                f"- [{section}.{line}] Run `make test-all` before tagging; the flaky "
                f"`TestSettlementRetry` needs one rerun (see rollout_summaries/{section:04d}.md).\n"
            )
        text = "".join(chunk)
        parts.append(text)
        total += len(text.encode())
        section += 1
    return "".join(parts)


def best_of(function, runs: int) -> float:
    """The median wall time of ``runs`` calls, in seconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_truncation(runs: int) -> None:
    start = time.perf_counter()
    tokenizer = get_tokenizer("o200k_base")
    load = time.perf_counter() - start
    text = make_summary(1024 * 1024)
    result = truncate_to_budget(text, 2500, tokenizer)
    cut = best_of(lambda: truncate_to_budget(text, 2500, tokenizer), runs)
    whole = best_of(lambda: tokenizer.count(text), max(3, runs // 4))
    print(f"tokenizer load (o200k_base, offline): {load * 1000:.0f} ms")
    print(
        f"1 MB summary ({len(text.encode())} bytes) to 2,500 tokens: {cut * 1000:.2f} ms "
        f"(result {result.tokens} tokens, cut at a {result.cut})"
    )
    print(f"encoding the whole file: {whole * 1000:.1f} ms")
    print(f"ratio truncate/encode-whole: 1/{whole / cut:.0f} (target <= 1/20)")


def _time_process(command: list[str], env: dict, cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def bench_cold_instructions(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "codex"
        shutil.copytree(REPO / "corpus" / "memory_home", home)
        project = Path(tmp) / "project"
        (project / ".git").mkdir(parents=True)
        env = {
            **os.environ,
            "CODEX_HOME": str(home),
            "MEMCITE_CACHE_DIR": str(Path(tmp) / "cache"),
            "PYTHONPATH": str(REPO / "src"),
        }
        env.pop("MEMCITE_NO_FASTPATH", None)
        memcite = [sys.executable, "-m", "memcite", "instructions"]
        _time_process(memcite, env, str(project))  # fills the cache
        baseline = [sys.executable, "-c", "pass"]
        python3 = shutil.which("python3")
        samples: dict[str, list[float]] = {"memcite": [], "baseline": [], "python3": []}
        for _ in range(runs):  # interleaved, so drift hits all alike
            samples["memcite"].append(_time_process(memcite, env, str(project)))
            samples["baseline"].append(_time_process(baseline, env, str(project)))
            if python3:
                samples["python3"].append(
                    _time_process([python3, "-c", "pass"], env, str(project))
                )
        warm = statistics.median(samples["memcite"])
        base = statistics.median(samples["baseline"])
        print(f"cold `python -m memcite instructions`, warm cache: {warm * 1000:.1f} ms")
        print(f"`{sys.executable} -c pass`: {base * 1000:.1f} ms")
        print(f"ratio: {warm / base:.1f}x (target <= 8x)")
        if samples["python3"]:
            other = statistics.median(samples["python3"])
            print(
                f"`python3 -c pass` on PATH ({python3}): {other * 1000:.1f} ms "
                f"(ratio against it: {warm / other:.1f}x)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs per measurement")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]} on {sys.platform}")
    bench_truncation(args.runs)
    bench_cold_instructions(args.runs)


if __name__ == "__main__":
    main()
