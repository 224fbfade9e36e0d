"""Benchmark of ``memcite audit`` against ``memcite stats`` on the same generated home.

    .venv/bin/python benchmarks/bench_audit.py                    # 5,000 and 100,000 memories
    .venv/bin/python benchmarks/bench_audit.py --sizes 1000 --runs 3
    .venv/bin/python benchmarks/bench_audit.py --keep DIR         # build once in DIR, reuse it
    .venv/bin/python benchmarks/bench_audit.py --sizes 5000 --memory-md 1250 2500 5000
    .venv/bin/python benchmarks/bench_audit.py --sizes --memory-md 5000 --peers-bin /tmp/peers/bin

The home is ``tests/poisoned_home.py``'s: per memory a session file (the user's message, an
``exec_command`` call and its output, the reply), a rollout summary, a ``threads`` row, a
``stage1_outputs`` row, and a line of ``memory_summary.md``; 15% of the memories carry a
directive injected through the tool output, 15% a directive the user typed, the rest facts.
Each size: a cold ``memcite audit --json`` and a cold ``memcite stats --json`` (a new process
each, straight from Codex's database: no memcite ledger), run in turn round after round
(interleaved, so that a busy moment of the machine falls on both); medians and their
ratio, and the CPU seconds of each (the wall time of a shared machine swings). The
audit's JSON is scored against what was planted: poisoned memories caught, and
memories flagged poisoned that were not (false positives).

The audit keeps its verdict per memory in memcite's cache folder (``audit-verdicts-*``):
each round times a *first* audit (that file removed), ``stats``, and a *re-audit* after a
consolidation that touched 20 memories (a line added to 20 rollout summaries and to
``memory_summary.md``), which reads only those 20 sessions, and that re-audit once more with
nothing changed since (the 20 summaries, written within 2 s, are read again then, not judged). ``--memory-md N`` times a first
audit of a home of 50 memories whose ``MEMORY.md`` has N lines and no task-group headings
(one block: the case that was quadratic). ``--peers-bin DIR``: also time the memory scanners
installed there (``memwall scan``, ``memsentry``, ``bastionmemory scan``: ``pip install memwall
memsentry bastionmemory`` into a venv of their own) on the same home's memory folder, in turn
with memcite's audit, round after round; the ratio is memcite's CPU seconds to the fastest
peer's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from poisoned_home import build_home, score  # noqa: E402


def _run(args: list[str], env: dict) -> tuple[float, float, str, int]:
    """Wall seconds, CPU seconds (user + system of the child), its stdout and exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "memcite", *args], env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout, done.returncode


def bench(size: int, runs: int, folder: Path) -> dict:
    home = folder / f"home-{size}"
    planted_file = folder / f"planted-{size}.json"
    if not planted_file.is_file():
        shutil.rmtree(home, ignore_errors=True)
        started = time.perf_counter()
        planted = build_home(home, size)
        planted_file.write_text(json.dumps(planted))
        print(f"  built {size:,} memories in {time.perf_counter() - started:.1f} s", flush=True)
    planted = json.loads(planted_file.read_text())
    env = {**os.environ, "CODEX_HOME": str(home), "MEMCITE_HOME": str(folder / "memcite"),
           "MEMCITE_CACHE_DIR": str(folder / "cache")}
    env.pop("MEMCITE_DB", None)
    audit_times, stats_times, audit_cpu, stats_cpu, figures = [], [], [], [], None
    again_times, again_cpu, same_cpu = [], [], []
    for round_number in range(runs):
        _forget_verdicts(folder / "cache")
        took, cpu, out, code = _run(["audit", "--json"], env)
        assert code in (0, 1), out[-500:]
        audit_times.append(took)
        audit_cpu.append(cpu)
        figures = score(json.loads(out), planted)
        took, cpu, out, code = _run(["stats", "--json", "--limit", "20"], env)
        assert code == 0, out[-500:]
        stats_times.append(took)
        stats_cpu.append(cpu)
        _consolidate(home, 20, round_number)
        took, cpu, out, code = _run(["audit", "--json"], env)
        assert code in (0, 1), out[-500:]
        again_times.append(took)
        again_cpu.append(cpu)
        _took, cpu, out, code = _run(["audit", "--json"], env)  # nothing changed since
        assert code in (0, 1), out[-500:]
        same_cpu.append(cpu)
    audit, stats = statistics.median(audit_times), statistics.median(stats_times)
    again = statistics.median(again_times)
    cpu = {name: statistics.median(values) for name, values in
           (("audit", audit_cpu), ("stats", stats_cpu), ("again", again_cpu), ("same", same_cpu))}
    return {"memories": size, "audit_s": round(audit, 2), "stats_s": round(stats, 2),
            "ratio": round(audit / stats, 1), "audit_cpu_s": round(cpu["audit"], 2),
            "stats_cpu_s": round(cpu["stats"], 3),
            "reaudit_s": round(again, 2), "reaudit_cpu_s": round(cpu["again"], 3),
            "reaudit_ratio": round(again / stats, 1),
            "reaudit_cpu_ratio": round(cpu["again"] / cpu["stats"], 1),
            "unchanged_reaudit_cpu_s": round(cpu["same"], 3),
            "unchanged_reaudit_cpu_ratio": round(cpu["same"] / cpu["stats"], 1),
            "runs": runs, **figures}


def _forget_verdicts(cache: Path) -> None:
    for path in cache.glob("audit-verdicts-*.json") if cache.is_dir() else ():
        path.unlink()


def _consolidate(home: Path, touched: int, round_number: int) -> None:
    """What a consolidation that touched ``touched`` memories changes: their rollout
    summaries (a line each) and the summary Codex injects."""
    summaries = sorted((home / "memories" / "rollout_summaries").iterdir())
    step = max(1, len(summaries) // touched)
    for path in summaries[::step][:touched]:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"- Round {round_number}: the cache now expires after an hour.\n")
    with open(home / "memories" / "memory_summary.md", "a", encoding="utf-8") as handle:
        handle.write(f"- Round {round_number}: caches expire hourly.\n")


PEERS = {"memwall": ["scan", "-q"], "memsentry": [], "bastionmemory": ["scan"]}


def _run_peer(command: list[str]) -> tuple[float, int]:
    """CPU seconds of one peer's scan (its exit code says what it found, not whether it ran)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.returncode


def bench_memory_md(lines: int, runs: int, folder: Path, peers_bin: Path | None = None) -> dict:
    home = folder / f"memory-md-{lines}"
    if not home.is_dir():
        build_home(home, 50)
        rows = [f"- note {n}: the widget cache of service {n % 97} expires after {n % 60} minutes"
                for n in range(lines)]
        (home / "memories" / "MEMORY.md").write_text("\n".join(rows) + "\n")
    env = {**os.environ, "CODEX_HOME": str(home), "MEMCITE_HOME": str(folder / "memcite"),
           "MEMCITE_CACHE_DIR": str(folder / "cache-md")}
    env.pop("MEMCITE_DB", None)
    peers = {name: [str(peers_bin / name), *args, str(home / "memories")]
             for name, args in PEERS.items() if peers_bin and (peers_bin / name).is_file()}
    times, cpus = [], []
    peer_cpus: dict[str, list[float]] = {name: [] for name in peers}
    for _ in range(runs):
        _forget_verdicts(folder / "cache-md")
        took, cpu, out, code = _run(["audit", "--json"], env)
        assert code in (0, 1), out[-500:]
        times.append(took)
        cpus.append(cpu)
        for name, command in peers.items():
            peer_cpu, _code = _run_peer(command)
            peer_cpus[name].append(peer_cpu)
    result = {"memory_md_lines": lines, "audit_s": round(statistics.median(times), 2),
              "audit_cpu_s": round(statistics.median(cpus), 2), "runs": runs}
    if peers:
        result["peers_cpu_s"] = {name: round(statistics.median(values), 2)
                                 for name, values in peer_cpus.items()}
        result["vs_fastest_peer"] = round(statistics.median(cpus) / min(
            statistics.median(values) for values in peer_cpus.values()), 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[5000, 100_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--memory-md", type=int, nargs="*", default=[],
                        help="also time a MEMORY.md of these many lines, without headings")
    parser.add_argument("--peers-bin", type=Path, default=None, metavar="DIR",
                        help="the bin folder of a venv holding memwall, memsentry, bastionmemory")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="memcite-bench-audit-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        for size in args.sizes:
            result = bench(size, args.runs, folder)
            print(json.dumps(result), flush=True)
            print(f"{size:>7,} memories: audit {result['audit_s']:.2f} s (CPU "
                  f"{result['audit_cpu_s']:.2f} s), stats {result['stats_s']:.2f} s (CPU "
                  f"{result['stats_cpu_s']:.2f} s), {result['ratio']}x; poisoned caught "
                  f"{result['poisoned_caught']}/{result['planted']['poisoned']}, false "
                  f"positives {result['poisoned_false_positives']}; re-audit after 20 touched "
                  f"{result['reaudit_s']:.2f} s (CPU {result['reaudit_cpu_s']:.2f} s, "
                  f"{result['reaudit_cpu_ratio']}x stats' CPU), again with nothing changed CPU "
                  f"{result['unchanged_reaudit_cpu_s']:.2f} s "
                  f"({result['unchanged_reaudit_cpu_ratio']}x)", flush=True)
        for lines in args.memory_md:
            result = bench_memory_md(lines, args.runs, folder, args.peers_bin)
            print(json.dumps(result), flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
