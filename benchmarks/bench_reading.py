"""Speed and memory of reading replies, as ratios to plain baselines measured in the same run.

    python benchmarks/bench_reading.py [--quick]

Targets (issue 2): typical reply <= 20x a plain str.find reading; 10 MB reply
with no block <= 3x one str.find of the open tag; 10,000 entries <= 25x the plain
reading and linear in size; cold `memcite strip` <= 8x `python3 -c pass`;
reading a 10 MB reply peaks at <= 4x the input size.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import timeit
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from memcite import parse_reply  # noqa: E402
from memcite.citations.reading import _parser  # noqa: E402
from plain_reader import plain_read  # noqa: E402

OPEN = "<oai-mem-citation>"
A, B = "019c6e27-e55b-73d1-87d8-4e01f1f75043", "019c7714-3b77-74d1-9866-e1f484aae2ab"
PROSE_LINE = "The weekly report now uses the layout you chose last time, with totals per team.\n"


def typical_reply() -> str:
    prose = PROSE_LINE * (4096 // len(PROSE_LINE))
    return (
        prose
        + f"\n{OPEN}\n<citation_entries>\n"
        + "MEMORY.md:234-236|note=[responsesapi citation extraction code pointer]\n"
        + "rollout_summaries/2026-02-17T21-23-02-LN3m-weekly_report.md:10-12|note=[weekly report format]\n"
        + "skills/report/SKILL.md:1-40|note=[report skill]\n"
        + f"</citation_entries>\n<rollout_ids>\n{A}\n{B}\n</rollout_ids>\n</oai-mem-citation>"
    )


def many_entries(count: int) -> str:
    lines = "\n".join(f"rollout_summaries/file-{i}.md:{i}-{i + 3}|note=[entry {i}]" for i in range(count))
    return f"Answer.\n{OPEN}\n<citation_entries>\n{lines}\n</citation_entries>\n<rollout_ids>\n{A}\n</rollout_ids>\n</oai-mem-citation>"


def best(function, number: int, repeat: int = 5) -> float:
    """Best time per call over ``repeat`` rounds of ``number`` calls."""
    return min(timeit.repeat(function, number=number, repeat=repeat)) / number


def _wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def cold_pair(command: list[str], baseline: list[str], runs: int) -> tuple[float, float]:
    """Median wall times of fresh processes of ``command`` and ``baseline``, run in turn
    (interleaved, so that a slow moment of the machine falls on both)."""
    ours, base = [], []
    for _ in range(runs):
        base.append(_wall(baseline))
        ours.append(_wall(command))
    ours.sort()
    base.sort()
    return ours[len(ours) // 2], base[len(base) // 2]


_RSS_PROBE = """
import sys
from memcite.__main__ import main
sys.stdout = open("/dev/null", "w")
try:
    main(["strip", sys.argv[1]])
except SystemExit:
    pass
# VmHWM is this process's own peak (ru_maxrss may carry the parent's peak over fork)
status = open("/proc/self/status").read()
sys.stderr.write(status.split("VmHWM:")[1].split()[0])
"""


def strip_rss_kib(path: Path) -> int:
    """Peak resident memory (KiB) of a process running `memcite strip PATH`."""
    done = subprocess.run([sys.executable, "-c", _RSS_PROBE, str(path)], capture_output=True, text=True, check=True)
    return int(done.stderr.strip().splitlines()[-1])


def peak_ratio(text: str) -> float:
    tracemalloc.start()
    tracemalloc.reset_peak()
    parse_reply(text)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / len(text.encode("utf-8"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    scale = 1 if args.quick else 3
    rows: list[tuple[str, float, float, str]] = []
    _parser()  # build once; cold start is measured separately

    text = typical_reply()
    assert parse_reply(text).citation is not None
    ours = best(lambda: parse_reply(text), 200 * scale)
    plain = best(lambda: plain_read(text), 200 * scale)
    rows.append(("typical 4 KB reply vs plain str.find reading", ours / plain, 20, f"{ours * 1e6:.0f} us vs {plain * 1e6:.1f} us"))

    big = ("x" * 99 + "\n") * 100_000  # 10 MB, no block
    ours = best(lambda: parse_reply(big), 3 * scale)
    find = best(lambda: big.find(OPEN), 3 * scale)
    rows.append(("10 MB, no block vs one str.find", ours / find, 3, f"{ours * 1e3:.2f} ms vs {find * 1e3:.2f} ms"))

    blocks = {n: many_entries(n) for n in (10_000, 20_000)}
    ours10 = best(lambda: parse_reply(blocks[10_000]), scale, repeat=3)
    plain10 = best(lambda: plain_read(blocks[10_000]), scale, repeat=3)
    ours20 = best(lambda: parse_reply(blocks[20_000]), scale, repeat=3)
    rows.append(("10,000 entries vs plain reading", ours10 / plain10, 25, f"{ours10 * 1e3:.0f} ms vs {plain10 * 1e3:.1f} ms"))
    rows.append(("20,000 / 10,000 entries (linear: ~2)", ours20 / ours10, 2.5, f"{ours20 * 1e3:.0f} ms"))

    memcite_bin = shutil.which("memcite", path=os.path.dirname(sys.executable)) or shutil.which("memcite")
    with tempfile.TemporaryDirectory() as folder:
        reply = Path(folder) / "reply.txt"
        reply.write_text(text, encoding="utf-8")
        command = [memcite_bin, "strip", str(reply)] if memcite_bin else [sys.executable, "-m", "memcite", "strip", str(reply)]
        subprocess.run(command, capture_output=True, check=True)  # warm the OS cache and lark's table cache
        ours, baseline = cold_pair(command, [sys.executable, "-c", "pass"], 15 * scale)
    rows.append(("cold `memcite strip` vs python3 -c pass", ours / baseline, 8, f"{ours * 1e3:.0f} ms vs {baseline * 1e3:.0f} ms"))

    with_block = big[: -len(text)] + text
    rows.append(("peak memory / input, 10 MB no block", peak_ratio(big), 4, ""))
    rows.append(("peak memory / input, 10 MB with a block", peak_ratio(with_block), 4, ""))

    if sys.platform.startswith("linux"):
        with tempfile.TemporaryDirectory() as folder:
            small, large = Path(folder) / "small.txt", Path(folder) / "large.txt"
            small.write_text(text, encoding="utf-8")
            large.write_text(with_block, encoding="utf-8")
            baseline, peak = strip_rss_kib(small), strip_rss_kib(large)
            size = large.stat().st_size
        rows.append(("`memcite strip` 10 MB: RSS above baseline / input", (peak - baseline) * 1024 / size, 4,
                     f"{baseline // 1024} MiB baseline, {peak // 1024} MiB peak"))

    width = max(len(r[0]) for r in rows)
    failed = 0
    for name, ratio, target, detail in rows:
        ok = ratio <= target
        failed += not ok
        print(f"{name:<{width}}  {ratio:7.2f}x  (target <= {target}x)  {'ok ' if ok else 'MISS'}  {detail}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
