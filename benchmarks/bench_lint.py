"""``memcite lint`` speed, measured side by side in one run.

1. Linting a ``MEMORY.md`` of 10,000 entries (tiers, provenance lines, supersession
   chains, decisions, pointers): in process (reading alone, then every check), and
   as a cold ``memcite lint PATH`` process.
2. ``memcite lint --hook`` as a cold process, with a payload that touches a memory
   file and one that does not (the common case: most tool calls are not memory
   edits), against ``python -c pass`` with the same interpreter, interleaved.

Run: ``.venv/bin/python benchmarks/bench_lint.py [--runs N] [--entries N]``. Files are
written under a temporary directory, removed at the end.
"""

from __future__ import annotations

import argparse
import json
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

from memcite.lint.run import lint_paths  # noqa: E402
from memcite.retention.entries import read_entries  # noqa: E402

TIERS = ["CORE", "IMP", "SEC", "IRR", None]


def make_memory(entries: int) -> str:
    """A MEMORY.md of ``entries`` entries in task groups of 50, a tenth of them in supersession chains."""
    lines = []
    for number in range(entries):
        if number % 50 == 0:
            lines += [f"# Task Group: group {number // 50}", f"applies_to: cwd=/home/dev/p{number // 50}", "",
                      "## Decisions"]
        tier = TIERS[number % 5] if number % 100 else "CORE"
        if number % 10 == 9:
            lines.append(f"- [IRR] Decision: approach {number} for module {number // 10}")
            lines.append(f"  superseded_by: Decision: approach {number + 1} for module {(number + 1) // 10}")
            continue
        prefix = f"[{tier}] " if tier else ""
        lines.append(f"- {prefix}Decision: approach {number} for module {number // 10} — see MEMORY.md:1-2")
        if tier in ("CORE", "IMP"):
            lines += [f"  Source: session {number:08d}", "  Evidence: the test suite", "  Confidence: HIGH"]
    return "\n".join(lines) + "\n"


def median_time(function, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _time_process(command: list[str], env: dict, stdin: bytes | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def bench_large_memory(tmp: Path, entries: int, runs: int, env: dict) -> None:
    folder = tmp / "big" / "memories"
    folder.mkdir(parents=True)
    text = make_memory(entries)
    (folder / "MEMORY.md").write_text(text, encoding="utf-8")
    (folder / "memory_summary.md").write_text("v1\n", encoding="utf-8")
    count = len(read_entries(text))
    report = lint_paths([str(folder)])
    reading = median_time(lambda: read_entries(text), runs)
    linting = median_time(lambda: lint_paths([str(folder)]), runs)
    cold = statistics.median(
        _time_process([sys.executable, "-m", "memcite", "lint", str(folder)], env) for _ in range(max(3, runs // 2)))
    print(f"MEMORY.md of {count} entries, {len(text.encode()) // 1024} KiB, {len(report.findings)} findings")
    print(f"  reading the entries: {reading * 1000:.0f} ms")
    print(f"  lint in process (read + every check): {linting * 1000:.0f} ms "
          f"({count / linting:,.0f} entries/s)")
    print(f"  cold `memcite lint DIR` process: {cold * 1000:.0f} ms")


def bench_hook(tmp: Path, runs: int, env: dict) -> None:
    home = tmp / "home"
    shutil.copytree(REPO / "corpus" / "lint" / "clean_home", home)
    hook_env = {**env, "CODEX_HOME": str(home)}
    touching = json.dumps({"hook_event_name": "PostToolUse", "cwd": str(home), "tool_name": "apply_patch",
                           "tool_input": {"input": "*** Begin Patch\n*** Update File: memories/MEMORY.md\n"}}).encode()
    other = json.dumps({"hook_event_name": "PostToolUse", "cwd": str(home), "tool_name": "shell",
                        "tool_input": {"command": ["bash", "-lc", "pytest -q tests/"]}}).encode()
    hook = [sys.executable, "-m", "memcite", "lint", "--hook"]
    baseline = [sys.executable, "-c", "pass"]
    samples: dict[str, list[float]] = {"touching": [], "other": [], "baseline": []}
    _time_process(hook, hook_env, touching)  # warm the page cache alike for all
    for _ in range(runs):  # interleaved, so drift hits all alike
        samples["touching"].append(_time_process(hook, hook_env, touching))
        samples["other"].append(_time_process(hook, hook_env, other))
        samples["baseline"].append(_time_process(baseline, hook_env))
    base = statistics.median(samples["baseline"])
    print(f"`{sys.executable} -c pass`: {base * 1000:.1f} ms")
    for name, label in (("touching", "payload touching MEMORY.md (lints the folder)"),
                        ("other", "payload touching no memory file")):
        value = statistics.median(samples[name])
        print(f"cold `memcite lint --hook`, {label}: {value * 1000:.1f} ms ({value / base:.1f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs per measurement")
    parser.add_argument("--entries", type=int, default=10_000, help="entries in the large MEMORY.md")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]} on {sys.platform}")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    env.pop("MEMCITE_NO_FASTPATH", None)
    with tempfile.TemporaryDirectory() as tmp:
        bench_large_memory(Path(tmp), args.entries, args.runs, env)
        bench_hook(Path(tmp), args.runs, env)


if __name__ == "__main__":
    main()
