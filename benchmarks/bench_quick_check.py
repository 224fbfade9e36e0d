"""What ``PRAGMA quick_check`` costs a batch command (``open_store(..., quick_check=True)``).

    .venv/bin/python benchmarks/bench_quick_check.py                  # 100,000 and 1,000,000 memories
    .venv/bin/python benchmarks/bench_quick_check.py --memories 100000
    .venv/bin/python benchmarks/bench_quick_check.py --keep DIR       # build once in DIR, reuse it

The ledger is built as ``bench_stats.py`` builds it: ``--memories`` memories synced from
one Codex home, and the same citation log at each size (1,000,000 counted citations in
250,000 replies, 100,000 cited entries). For each size it prints, in seconds (the median
of ``--runs``):

- ``open``: ``open_store(path)``, what every command pays;
- ``open+check``: ``open_store(path, quick_check=True)``, what a batch writer pays the first
  time after a change of the file (the note of the last clean check removed first);
- ``open+check, unchanged since``: the same, the file as the last clean check noted it (what
  a batch command pays after another that changed nothing, or after its own writes);
- ``quick_check``, ``quick_check(1)`` on a read-only connection, the file in the OS page
  cache (warm) and dropped from it first (cold: ``posix_fadvise(DONTNEED)`` on the
  ledger's file only);
- ``quick_check(T)`` of each table alone (SQLite checks T and its indexes), warm.

``quick_check(N)`` only caps how many problems are listed: on an intact file it reads
every page either way, so it costs what ``quick_check`` costs.

Measured (SQLite 3.40.1, ``--keep DIR --runs 5``): 100,000 memories (222 MB) 0.25 s warm,
1.6-2.0 s cold; 1,000,000 memories (611 MB) 0.71 s warm, 5.0 s cold (reading the file
from disk). ``quick_check(1)`` costs the same; checking only the tables a command writes
saves little (``memories`` alone is 0.48 s of the 0.71 s at 1M, and ingest writes the
log's tables too), so the batch commands check the whole file, once per change of it: a
ledger unchanged since its last clean check is not checked again (``open+check, unchanged
since``: 0.012 s at 100,000 memories on a loaded machine where the check took 3.5 s).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
sys.path.insert(0, HERE)

from bench_stats import build_ledger  # noqa: E402

from memcite.ledger.store import CHECKED_SUFFIX, open_store  # noqa: E402

CITATIONS = 1_000_000
ENTRIES = 100_000


def _drop_from_page_cache(path: str) -> None:
    """Evict this one file (and its -wal) from the OS page cache, where the OS allows it."""
    if not hasattr(os, "posix_fadvise"):
        return
    for name in (path, path + "-wal"):
        try:
            fd = os.open(name, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _timed(run, runs: int, before=None) -> float:
    times = []
    for _ in range(runs):
        if before is not None:
            before()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _pragma(path: str, pragma: str):
    def run() -> None:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = conn.execute(pragma).fetchall()
        finally:
            conn.close()
        if rows != [("ok",)]:
            raise SystemExit(f"{pragma}: {rows[:3]}")
    return run


def _open(path: str, **options):
    def run() -> None:
        open_store(path, **options).close()
    return run


def measure(path: str, runs: int) -> list[tuple[str, float]]:
    cold = lambda: _drop_from_page_cache(path)  # noqa: E731

    def forget() -> None:  # the note of the last clean check: the next open checks again
        if os.path.exists(path + CHECKED_SUFFIX):
            os.remove(path + CHECKED_SUFFIX)

    conn = sqlite3.connect(path)
    tables = [row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " ORDER BY name")]
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    _pragma(path, "PRAGMA quick_check")()  # warm the page cache once
    figures = [
        ("size (MB)", pages * page_size / 1e6),
        ("open", _timed(_open(path), runs)),
        ("open+check", _timed(_open(path, quick_check=True), runs, forget)),
        ("open+check, unchanged since", _timed(_open(path, quick_check=True), runs)),
        ("quick_check warm", _timed(_pragma(path, "PRAGMA quick_check"), runs)),
        ("quick_check(1) warm", _timed(_pragma(path, "PRAGMA quick_check(1)"), runs)),
        ("quick_check cold", _timed(_pragma(path, "PRAGMA quick_check"), runs, cold)),
        ("open+check cold", _timed(_open(path, quick_check=True), runs,
                                   lambda: (forget(), cold()))),
    ]
    for table in tables:
        figures.append((f"quick_check({table})",
                        _timed(_pragma(path, f"PRAGMA quick_check({table})"), runs)))
    return figures


def ledger(folder: str, memories: int) -> str:
    """The ledger of ``memories`` memories in ``folder`` (built once, then reused)."""
    work = os.path.join(folder, f"m{memories}")
    db = os.path.join(work, "memcite.sqlite")
    if os.path.exists(db):
        return db
    shutil.rmtree(work, ignore_errors=True)
    root = os.path.join(work, "codex", "memories")
    os.makedirs(root)
    start = time.perf_counter()
    build_ledger(db + ".partial", root, memories=memories, citations=CITATIONS, entries=ENTRIES)
    os.replace(db + ".partial", db)
    print(f"built {memories:,} memories in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return db


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, action="append",
                        help="memories in the ledger (repeatable; default 100,000 and 1,000,000)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each (the median)")
    parser.add_argument("--keep", metavar="DIR", default=None,
                        help="build the ledgers in DIR and keep them for the next run")
    args = parser.parse_args()
    sizes = args.memories or [100_000, 1_000_000]
    folder = args.keep or tempfile.mkdtemp(prefix="memcite-bench-quick-check-")
    try:
        results = {size: measure(ledger(folder, size), args.runs) for size in sizes}
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"SQLite {sqlite3.sqlite_version}; seconds, median of {args.runs} runs")
    names = [name for name, _ in results[sizes[0]]]
    print(f"{'':34}" + "".join(f"{size:>14,}" for size in sizes))
    for index, name in enumerate(names):
        print(f"{name:34}" + "".join(f"{results[size][index][1]:>14.3f}" for size in sizes))


if __name__ == "__main__":
    main()
