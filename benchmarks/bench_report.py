"""Benchmark of ``memcite report``: the page's size and the time to write it, against
``memcite stats --json`` on the same ledger.

    .venv/bin/python benchmarks/bench_report.py                 # 200,000 then 1,000,000 memories
    .venv/bin/python benchmarks/bench_report.py --quick         # 20,000 and 100,000
    .venv/bin/python benchmarks/bench_report.py --memories 200000 --keep DIR   # build once, reuse

The ledgers are ``bench_stats``'s (``build_ledger``: the memories, 1,000,000 counted
citations in replies of four ids each, 100,000 cited entries over a 400-file memory folder;
the citations stay the same whatever the memories), one per size. At each size, cold runs
(a new process each) of ``memcite stats --json`` and ``memcite report --html FILE`` are made
in turn, round after round, the order turning each round (interleaved, as in
``bench_stats``: a busy moment of the machine falls on both), after two warm-up runs of each
(the OS page cache and the citation-check cache warm, as a person's second run). Medians;
targets: the page under 2 MB, the report under 2x ``stats --json``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_stats import NOW, _interleaved, _reset_kept, _run, build_ledger  # noqa: E402

PAGE_LIMIT = 2 * 1024 * 1024
TIME_LIMIT = 2.0


def _ledger(folder: str, memories: int, citations: int, entries: int, keep: bool) -> dict:
    """Build (or, kept, reuse) the ledger of ``memories`` in ``folder``; the environment that
    points memcite at it."""
    home = os.path.join(folder, "codex_home")
    root = os.path.join(home, "memories")
    db = os.path.join(folder, "memcite.sqlite")
    built = os.path.join(folder, "built")
    sizes = f"{memories}-{citations}-{entries}"
    if keep and os.path.exists(built) and open(built).read() == sizes:
        _reset_kept(db, folder)
        print(f"  reusing the ledger kept in {folder}")
    else:
        for stale in (db, built, os.path.join(home, "memories_1.sqlite")):
            if os.path.exists(stale):
                os.remove(stale)
        started = time.perf_counter()
        build_ledger(db, root, memories=memories, citations=citations, entries=entries)
        print(f"  built in {time.perf_counter() - started:.1f} s")
        if keep:
            shutil.copyfile(db, db + ".built")
            with open(built, "w") as handle:
                handle.write(sizes)
    env = {**os.environ, "MEMCITE_DB": db, "CODEX_HOME": home, "MEMCITE_HOME": folder,
           "MEMCITE_CACHE_DIR": os.path.join(folder, "cache")}
    env.pop("MEMCITE_NO_FASTPATH", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed memcite runs: bytecode cached
    env["PYTHONPYCACHEPREFIX"] = os.path.join(folder, "pycache")
    return env


def bench_size(folder: str, memories: int, citations: int, entries: int, runs: int,
               keep: bool) -> tuple[int, float, float, float]:
    """``(page bytes, stats median, report median, ratio)`` at ``memories``."""
    print(f"{memories:,} memories, {citations:,} citations, {entries:,} cited entries:")
    env = _ledger(folder, memories, citations, entries, keep)
    page = os.path.join(folder, "memcite-report.html")
    stats = [sys.executable, "-m", "memcite", "stats", "--json", "--as-of", str(NOW)]
    report = [sys.executable, "-m", "memcite", "report", "--html", page, "--as-of", str(NOW)]
    for _ in range(2):  # warm: the page cache, the citation-check cache, the bytecode
        _run(stats, env)
        _run(report, env)
    # The command's body called as the fast path calls a command (no Typer): what a
    # ``memcite.cli.fastpath`` entry for report would cost.
    body = [sys.executable, "-c", "import sys; from memcite.cli.report_commands import report; "
            f"sys.exit(report(html={page!r}, as_of={str(NOW)!r}))"]
    _run(body, env)
    medians = _interleaved({"stats": stats, "report": report, "body": body}, env, runs)
    size = os.path.getsize(page)
    ratio = medians["report"] / medians["stats"]
    body_ratio = medians["body"] / medians["stats"]
    size_ok = size < PAGE_LIMIT
    time_ok = ratio < TIME_LIMIT
    print(f"  memcite stats --json:        {medians['stats'] * 1000:8.1f} ms (median of {runs}, "
          "interleaved)")
    print(f"  memcite report --html FILE:  {medians['report'] * 1000:8.1f} ms  = {ratio:.2f}x "
          f"stats --json  (target < {TIME_LIMIT:g}x) {'OK' if time_ok else 'OVER'}")
    print(f"  its body without Typer:      {medians['body'] * 1000:8.1f} ms  = {body_ratio:.2f}x "
          "stats --json  [as on the fast path]")
    print(f"  page: {size:,} bytes ({size / 1024:.0f} KiB; target < 2 MiB) "
          f"{'OK' if size_ok else 'OVER'}")
    return size, medians["stats"], medians["report"], ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the sizes")
    parser.add_argument("--runs", type=int, default=9, help="cold runs per command and size")
    parser.add_argument("--memories", type=int, action="append", default=None,
                        help="memories in a ledger (repeatable; default 200,000 and 1,000,000)")
    parser.add_argument("--keep", metavar="DIR", default=None,
                        help="build each ledger in DIR/<size> and keep it; a later run reuses it")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    sizes = args.memories or [200_000 // scale, 1_000_000 // scale]
    citations, entries = 1_000_000 // scale, 100_000 // scale
    failed = False
    for memories in sizes:
        if args.keep:
            folder = os.path.join(os.path.abspath(args.keep), str(memories))
            os.makedirs(folder, exist_ok=True)
        else:
            folder = tempfile.mkdtemp(prefix="memcite-bench-report-")
        try:
            size, _stats, _report, ratio = bench_size(folder, memories, citations, entries,
                                                      args.runs, bool(args.keep))
            failed |= size >= PAGE_LIMIT or ratio >= TIME_LIMIT
        finally:
            if not args.keep:
                shutil.rmtree(folder, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
