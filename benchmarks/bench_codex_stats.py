"""Benchmark of ``memcite stats --codex-home`` before any sync (straight from Codex's database).

    .venv/bin/python benchmarks/bench_codex_stats.py            # 1,000,000 rows of stage1_outputs
    .venv/bin/python benchmarks/bench_codex_stats.py --quick    # a tenth of that

A cold ``memcite stats --codex-home H --json --limit 20`` (no memcite database: the report
comes from Codex's ``memories_1.sqlite`` alone) against a plain ``sqlite3`` script answering
the same question (the counts and the 20 stalest dead rows): target <= 2x. The two run in
turn, round after round (interleaved), and each one's peak memory (max RSS) is read from
``wait4``: it must stay flat as the table grows.

``--src DIR`` runs memcite from another source tree (e.g. ``/work/main/src``) for a before
and after. Everything is written in a temporary folder that is removed at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

NOW = 1_800_000_000
DAY = 86_400
CODEX_SCHEMA = """
CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY, source_updated_at INTEGER NOT NULL,
    raw_memory TEXT NOT NULL, rollout_summary TEXT NOT NULL, rollout_slug TEXT,
    generated_at INTEGER NOT NULL, usage_count INTEGER, last_usage INTEGER,
    selected_for_phase2 INTEGER NOT NULL DEFAULT 0, selected_for_phase2_source_updated_at INTEGER);
"""
# The plain script: what a user would write with nothing but sqlite3 (memcite's rule, 30 days).
PLAIN = f"""
import sqlite3, sys
conn = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
cut = {NOW} - 30 * 86400
last = "max(coalesce(last_usage, 0), source_updated_at)"
counts = conn.execute(f"SELECT count(*), sum(usage_count != 0), sum(usage_count),"
                      f" sum({{last}} < ?) FROM stage1_outputs", (cut,)).fetchone()
dead = conn.execute(f"SELECT thread_id, rollout_slug, {{last}} AS used, usage_count, last_usage"
                    " FROM stage1_outputs WHERE used < ? ORDER BY used, thread_id LIMIT 20",
                    (cut,)).fetchall()
print(counts, dead)
"""


def build_codex_db(path: str, rows: int) -> None:
    """``rows`` rows of Codex's table in SQL: most never cited and stale (dead), some cited."""
    conn = sqlite3.connect(path)
    conn.executescript(CODEX_SCHEMA)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
        " INSERT INTO stage1_outputs SELECT printf('%08x-%04x-4%03x-8%03x-%012x',"
        " (i * 2654435761) % 4294967296, i % 65536, i % 4096, (i / 7) % 4096, i),"
        " ? - (abs(random()) % 400) * 86400, 'a memory', 'a summary', 'slug-' || (i % 5000),"
        " ?, CASE WHEN i % 8 = 0 THEN 1 + abs(random()) % 30 WHEN i % 8 = 1 THEN 0 END,"
        " CASE WHEN i % 8 = 0 THEN ? - (abs(random()) % 60) * 86400 END, 0, NULL FROM n",
        (rows, NOW, NOW, NOW))
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _run(args: list[str], env: dict) -> tuple[float, int]:
    """Wall time and peak RSS (KiB) of one run."""
    start = time.perf_counter()
    child = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    error = child.stderr.read()
    child.stderr.close()
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({child.returncode}):\n{error.decode()}")
    return elapsed, usage.ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the size")
    parser.add_argument("--runs", type=int, default=7, help="cold runs per command")
    parser.add_argument("--rows", type=int, default=None, help="rows of Codex's table")
    parser.add_argument("--src", default=None, help="run memcite from this source tree")
    args = parser.parse_args()
    rows = args.rows or (100_000 if args.quick else 1_000_000)

    folder = tempfile.mkdtemp(prefix="memcite-bench-codex-stats-")
    try:
        home = os.path.join(folder, "codex_home")
        os.makedirs(os.path.join(home, "memories"))
        codex_db = os.path.join(home, "memories_1.sqlite")
        started = time.perf_counter()
        build_codex_db(codex_db, rows)
        print(f"built {rows:,} rows of stage1_outputs in {time.perf_counter() - started:.1f} s")
        script = os.path.join(folder, "plain.py")
        with open(script, "w") as handle:
            handle.write(PLAIN)

        env = {**os.environ, "MEMCITE_HOME": os.path.join(folder, "memcite"),
               "MEMCITE_CACHE_DIR": os.path.join(folder, "cache")}
        for name in ("MEMCITE_DB", "MEMCITE_NO_FASTPATH", "CODEX_HOME", "PYTHONDONTWRITEBYTECODE"):
            env.pop(name, None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(folder, "pycache")
        if args.src:
            env["PYTHONPATH"] = os.path.abspath(args.src)
        commands = {
            "plain": [sys.executable, script, codex_db],
            "stats": [sys.executable, "-m", "memcite", "stats", "--codex-home", home, "--json",
                      "--limit", "20", "--as-of", str(NOW)],
        }
        for argv in commands.values():  # warm the OS page cache and the bytecode cache
            _run(argv, env)
        times: dict[str, list[float]] = {name: [] for name in commands}
        peaks: dict[str, int] = dict.fromkeys(commands, 0)
        names = list(commands)
        for round_ in range(args.runs):
            turn = round_ % len(names)
            for name in names[turn:] + names[:turn]:
                elapsed, peak = _run(commands[name], env)
                times[name].append(elapsed)
                peaks[name] = max(peaks[name], peak)
        plain, stats = (statistics.median(times[name]) for name in ("plain", "stats"))
        ratio = stats / plain
        print(f"plain sqlite3 script:                       {plain * 1000:7.0f} ms"
              f"  peak {peaks['plain'] / 1024:6.1f} MiB  (median of {args.runs}, interleaved)")
        print(f"memcite stats --codex-home --json --limit 20: {stats * 1000:7.0f} ms"
              f"  peak {peaks['stats'] / 1024:6.1f} MiB  = {ratio:.1f}x (target <= 2x) "
              f"{'OK' if ratio <= 2 else 'OVER'}")
        if ratio > 2:
            sys.exit(1)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
