"""``memcite sync`` of a large Codex database, as ratios to a bare SQLite bulk copy in the same run.

    .venv/bin/python benchmarks/bench_sync.py                 # 1,000,000 stage1_outputs rows
    .venv/bin/python benchmarks/bench_sync.py --rows 100000   # smaller

Targets (issue 15), each round running the baseline and both syncs in turn (the order
turning round each round), the best round of each counting:
- the first ``memcite sync`` (a new database) within 2x the bare bulk copy: the same
  columns read from Codex's database in key order, inserted with ``executemany`` into
  memcite's ``memories`` table stripped of its secondary indexes, the indexes built
  after, a 256 MiB page cache, one transaction;
- a second sync, nothing changed, at least as fast as the first;
- peak resident memory of the first sync flat: within 64 MiB of the peak at a tenth
  of the rows;
- a ``memcite record`` started during a large first sync succeeds, within the busy
  timeout (the sync's write transactions stay short).

The Codex database (~1.1 KB of text per row, random UUIDs) is written in a temporary
folder that is removed at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "corpus"))

from build_codex_home import CODEX_SCHEMA  # noqa: E402

from memcite.ledger.store import BUSY_TIMEOUT_MS, open_store  # noqa: E402

_RSS_PROBE = """
import sys
from memcite.__main__ import main
sys.stdout = open("/dev/null", "w")
code = 0
try:
    main(sys.argv[1:])
except SystemExit as exit:
    code = exit.code or 0
status = open("/proc/self/status").read()  # VmHWM: this process's own peak resident memory
sys.stderr.write("\\nVmHWM " + status.split("VmHWM:")[1].split()[0] + f" {code}\\n")
"""

_SELECT = (
    "SELECT thread_id, source_updated_at, generated_at, rollout_slug, usage_count, last_usage,"
    " coalesce(selected_for_phase2, 0), selected_for_phase2_source_updated_at,"
    " length(trim(raw_memory, char(9, 10, 11, 12, 13, 32))) > 0,"
    " length(trim(rollout_summary, char(9, 10, 11, 12, 13, 32))) > 0"
    " FROM stage1_outputs ORDER BY thread_id"
)
_INSERT = (
    "INSERT INTO memories (thread_id, source_updated_at, generated_at, rollout_slug,"
    " codex_usage_count, codex_last_usage, selected_for_phase2,"
    " selected_for_phase2_source_updated_at, has_raw_memory, has_rollout_summary, source,"
    " codex_home, first_synced_at, synced_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
    " 'stage1_outputs', 'home', 1, 1)"
)


def write_codex_db(path: Path, rows: int) -> None:
    """A Codex ``memories_1.sqlite`` of ``rows`` rows with random v4-shaped thread ids."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(CODEX_SCHEMA)
    raw = "- Task: something useful.\n" * 20
    summary = "The user asked about something; the second approach worked.\n" * 8
    conn.execute(
        """
        WITH RECURSIVE c(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM c WHERE n + 1 < ?),
        u(n, h) AS (SELECT n, lower(hex(randomblob(16))) FROM c)
        INSERT INTO stage1_outputs
        SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' || substr(h, 14, 3) || '-8'
                   || substr(h, 18, 3) || '-' || substr(h, 21, 12),
               1700000000 + n, ? || n, ?, 'slug_' || n, 1700000600 + n,
               CASE WHEN n % 3 = 0 THEN n % 7 END, CASE WHEN n % 3 = 0 THEN 1700000000 + n END,
               n % 2, NULL FROM u
        """,
        (rows, raw, summary),
    )
    conn.commit()
    conn.close()


def _remove_db(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def bare_copy(codex_db: Path, target: Path) -> float:
    """The baseline: a plain bulk copy into memcite's table (see the module docstring)."""
    _remove_db(target)
    conn = open_store(target)  # the schema, made before the clock starts
    indexes = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index'"
                           " AND tbl_name = 'memories' AND sql IS NOT NULL").fetchall()
    conn.close()
    os.sync()
    start = time.perf_counter()
    conn = sqlite3.connect(target, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA cache_size = -262144")
    source = sqlite3.connect(f"file:{codex_db}?mode=ro", uri=True)
    conn.execute("BEGIN IMMEDIATE")
    for name, _ in indexes:
        conn.execute(f"DROP INDEX {name}")
    cursor = source.execute(_SELECT)
    while rows := cursor.fetchmany(5000):
        conn.executemany(_INSERT, rows)
    for _, sql in indexes:
        conn.execute(sql)
    conn.execute("COMMIT")
    conn.close()
    source.close()
    return time.perf_counter() - start


def memcite_sync(home: Path, db: Path, env: dict, *, fresh: bool) -> tuple[float, int]:
    """Wall time and peak resident memory (KiB) of ``memcite sync`` in a fresh process."""
    if fresh:
        _remove_db(db)
    os.sync()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _RSS_PROBE, "sync", "--codex-home", str(home),
                           "--db", str(db), "--json"], capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    last = done.stderr.strip().splitlines()[-1].split()
    if last[0] != "VmHWM" or last[2] != "0":
        raise SystemExit(f"memcite sync failed:\n{done.stderr}")
    return elapsed, int(last[1])


def record_during_sync(home: Path, db: Path, env: dict, folder: Path) -> tuple[int, float, int]:
    """Start a first sync, then record replies one after another until it ends: how many
    were recorded, the slowest one (s), how many failed."""
    _remove_db(db)
    open_store(db).close()  # created before the sync starts, so that record finds a database
    sync = subprocess.Popen([sys.executable, "-m", "memcite", "sync", "--codex-home", str(home),
                             "--db", str(db)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env)
    time.sleep(1.0)  # well into the copy
    recorded, failed, slowest, number = 0, 0, 0.0, 0
    while sync.poll() is None:
        reply = (f"reply {number}\n<oai-mem-citation>\n<rollout_ids>\n"
                 "019c6e27-e55b-73d1-87d8-4e01f1f75043\n</rollout_ids>\n</oai-mem-citation>")
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "memcite", "record", "-", "--db", str(db)],
                              input=reply.encode(), capture_output=True, env=env)
        elapsed = time.perf_counter() - start
        if sync.poll() is not None and number and elapsed < 0.5:
            break  # started after the sync ended: says nothing
        number += 1
        slowest = max(slowest, elapsed)
        if done.returncode == 0:
            recorded += 1
        else:
            failed += 1
            sys.stderr.write(done.stderr.decode())
        time.sleep(0.2)
    _, err = sync.communicate()
    if sync.returncode != 0:
        raise SystemExit(f"memcite sync failed:\n{err.decode()}")
    return recorded, slowest, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="stage1_outputs rows")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the three runs")
    args = parser.parse_args()
    rows: list[tuple[str, float, float | None, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="memcite-bench-sync-") as tmp:
        folder = Path(tmp)
        env = {**os.environ, "CODEX_HOME": str(folder / "none"),
               "MEMCITE_HOME": str(folder), "MEMCITE_CACHE_DIR": str(folder / "cache")}
        env.pop("MEMCITE_NO_FASTPATH", None)
        small, big = folder / "small", folder / "big"
        for home, count in ((small, max(1, args.rows // 10)), (big, args.rows)):
            home.mkdir()
            started = time.perf_counter()
            write_codex_db(home / "memories_1.sqlite", count)
            print(f"wrote a Codex database of {count:,} rows in "
                  f"{time.perf_counter() - started:.0f} s", flush=True)
        db = folder / "memcite.sqlite"

        times: dict[str, list[float]] = {"bare": [], "first": [], "again": []}
        peak = 0
        for round_ in range(args.rounds):
            for name in (["bare", "first"] if round_ % 2 == 0 else ["first", "bare"]):
                if name == "bare":
                    times["bare"].append(bare_copy(big / "memories_1.sqlite", folder / "bare.db"))
                    _remove_db(folder / "bare.db")
                else:
                    elapsed, peak_kib = memcite_sync(big, db, env, fresh=True)
                    times["first"].append(elapsed)
                    peak = max(peak, peak_kib)
                    times["again"].append(memcite_sync(big, db, env, fresh=False)[0])
            print(f"round {round_ + 1}: " + ", ".join(f"{name} {values[-1]:.1f} s"
                                                        for name, values in times.items()),
                  flush=True)
        bare, first, again = (min(times[name]) for name in ("bare", "first", "again"))
        rows.append((f"first sync of {args.rows:,} rows vs bare bulk copy", first / bare, 2, "<=",
                     f"{first:.1f} s vs {bare:.1f} s ({args.rows / first:,.0f} rows/s; "
                     f"best of {args.rounds})"))
        rows.append(("re-sync, nothing changed, vs first sync", again / first, 1, "<=",
                     f"{again:.1f} s ({args.rows / again:,.0f} rows/s)"))
        _, small_peak = memcite_sync(small, folder / "small.sqlite", env, fresh=True)
        rows.append((f"first sync peak RSS, {args.rows:,} vs {args.rows // 10:,} rows (MiB)",
                     (peak - small_peak) / 1024, 64, "<=",
                     f"{peak / 1024:.0f} MiB vs {small_peak / 1024:.0f} MiB"))
        recorded, slowest, failed = record_during_sync(big, db, env, folder)
        rows.append(("slowest `record` during a first sync (s)", slowest, BUSY_TIMEOUT_MS / 1000,
                     "<=", f"{recorded} recorded, {failed} failed"))
        if failed or not recorded:
            rows.append(("  every `record` during the sync succeeded", 0, 1, ">=", ""))
        shutil.rmtree(big)

    width = max(len(r[0]) for r in rows)
    failures = 0
    for name, value, target, sense, detail in rows:
        ok = value <= target if sense == "<=" else value >= target
        failures += not ok
        print(f"{name:<{width}}  {value:8.2f}  (target {sense} {target})  "
              f"{'ok  ' if ok else 'MISS'}  {detail}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
