"""``memcite sync`` of a large Codex database, as ratios to a bare SQLite bulk copy in the same run.

    .venv/bin/python benchmarks/bench_sync.py                 # 1,000,000 stage1_outputs rows
    .venv/bin/python benchmarks/bench_sync.py --rows 100000   # smaller
    .venv/bin/python benchmarks/bench_sync.py --src ../main --ratios-only   # before/after

Each run also prints the CPU seconds (user and system) of the bulk copy and of each sync,
best of the rounds and round by round: on a machine shared with other work the wall times
swing by 2x from one run to the next and the CPU times far less. ``--src DIR`` runs the
first sync of another source tree (``DIR/src``) in the same rounds, turn about with the
other runs; ``--ratios-only`` leaves out the peak memory and the recorders.

Targets (issue 15), each round running the baseline and both syncs in turn (the order
turning round each round), the best round of each counting:
- the first ``memcite sync`` (a new database) within 2x the bare bulk copy, pure SQL:
  Codex's database attached read-only and the same columns copied in key order by one
  ``INSERT INTO memories ... SELECT ... FROM codex.stage1_outputs`` into memcite's
  ``memories`` table stripped of its secondary indexes, the indexes built after, a
  256 MiB page cache, one transaction (no row passes through Python);
- a second sync, nothing changed, at least as fast as the first;
- peak resident memory of the first sync flat: within 64 MiB of the peak at a tenth
  of the rows;
- a ``memcite record`` started during a large first sync waits at most ~1 s for the
  sync (its run time less its run time alone), and none fails; a probe taking the write
  lock every 50 ms, as a recorder does, says how long the longest wait was.

The Codex database (~1.1 KB of text per row, random UUIDs) is written in a temporary
folder that is removed at the end (``--codex-dir DIR`` keeps it there for the next run).
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

# The baseline's one statement: what the first sync writes of each row (blank as Codex's
# phase-2 selection judges it, SQLite's trim(): spaces only), in key order.
_BULK_COPY = (
    "INSERT INTO memories (thread_id, source_updated_at, generated_at, rollout_slug,"
    " codex_usage_count, codex_last_usage, selected_for_phase2,"
    " selected_for_phase2_source_updated_at, has_raw_memory, has_rollout_summary, source,"
    " codex_home, first_synced_at, synced_at)"
    " SELECT thread_id, source_updated_at, generated_at, rollout_slug, usage_count, last_usage,"
    " coalesce(selected_for_phase2, 0), selected_for_phase2_source_updated_at,"
    " length(trim(raw_memory)) > 0, length(trim(rollout_summary)) > 0,"
    " 'stage1_outputs', 'home', 1, 1"
    " FROM codex.stage1_outputs ORDER BY thread_id"
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
    start, cpu = time.perf_counter(), time.process_time()
    conn = sqlite3.connect(f"file:{target}", uri=True, isolation_level=None)  # URIs in ATTACH
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA cache_size = -262144")
    conn.execute("ATTACH DATABASE ? AS codex", (f"file:{codex_db}?mode=ro",))
    conn.execute("BEGIN IMMEDIATE")
    for name, _ in indexes:
        conn.execute(f"DROP INDEX {name}")
    conn.execute(_BULK_COPY)
    for _, sql in indexes:
        conn.execute(sql)
    conn.execute("COMMIT")
    conn.close()
    CPU["bare"].append(time.process_time() - cpu)
    return time.perf_counter() - start


# CPU seconds (user and system) of each run, beside its wall time: on a machine shared with
# other work the wall times swing by 2x from one run to the next, the CPU times far less.
CPU: dict[str, list[float]] = {"bare": [], "first": [], "again": [], "before": []}


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def memcite_sync(home: Path, db: Path, env: dict, *, fresh: bool,
                 cpu: str | None = None) -> tuple[float, int]:
    """Wall time and peak resident memory (KiB) of ``memcite sync`` in a fresh process
    (its CPU time noted under ``cpu``)."""
    if fresh:
        _remove_db(db)
    os.sync()
    start, used = time.perf_counter(), _children_cpu()
    done = subprocess.run([sys.executable, "-c", _RSS_PROBE, "sync", "--codex-home", str(home),
                           "--db", str(db), "--json"], capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if cpu is not None:
        CPU[cpu].append(_children_cpu() - used)
    last = done.stderr.strip().splitlines()[-1].split()
    if last[0] != "VmHWM" or last[2] != "0":
        raise SystemExit(f"memcite sync failed:\n{done.stderr}")
    return elapsed, int(last[1])


# Waits for memcite's write lock the way a recorder does (BEGIN IMMEDIATE under SQLite's busy
# handler, memcite's busy timeout), every 50 ms until stdin closes; prints each wait (s) or
# "failed".
_LOCK_PROBE = """
import sqlite3, sys, time, threading
db, timeout = sys.argv[1], float(sys.argv[2])
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
conn = sqlite3.connect(db, timeout=timeout, isolation_level=None)
while not stop.is_set():
    start = time.perf_counter()
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        print(f"{time.perf_counter() - start:.4f}", flush=True)
    except sqlite3.OperationalError:
        print("failed", flush=True)
    time.sleep(0.05)
"""


def _record(db: Path, env: dict, number: int) -> tuple[float, bool, str]:
    reply = (f"reply {number}\n<oai-mem-citation>\n<rollout_ids>\n"
             "019c6e27-e55b-73d1-87d8-4e01f1f75043\n</rollout_ids>\n</oai-mem-citation>")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "memcite", "record", "-", "--db", str(db)],
                          input=reply.encode(), capture_output=True, env=env)
    return time.perf_counter() - start, done.returncode == 0, done.stderr.decode()


def record_during_sync(home: Path, db: Path, env: dict) -> dict:
    """Start a first sync; meanwhile record replies one after another with ``memcite record``
    and take memcite's write lock every 50 ms as a recorder does. A recorder's wait is its run
    time less the median run time of ``memcite record`` before the sync."""
    _remove_db(db)
    open_store(db).close()  # created before the sync starts, so that record finds a database
    alone = sorted(_record(db, env, -n)[0] for n in range(1, 6))[2]
    probe = subprocess.Popen([sys.executable, "-c", _LOCK_PROBE, str(db),
                              str(BUSY_TIMEOUT_MS / 1000)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    sync = subprocess.Popen([sys.executable, "-m", "memcite", "sync", "--codex-home", str(home),
                             "--db", str(db)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env)
    recorded, failed, slowest, number = 0, 0, 0.0, 0
    while sync.poll() is None:
        elapsed, ok, err = _record(db, env, number)
        if sync.poll() is not None and number and elapsed < alone + 0.5:
            break  # started after the sync ended: says nothing
        number += 1
        slowest = max(slowest, elapsed)
        if ok:
            recorded += 1
        else:
            failed += 1
            sys.stderr.write(err)
        time.sleep(0.1)
    _, err = sync.communicate()
    probed, _ = probe.communicate("")
    if sync.returncode != 0:
        raise SystemExit(f"memcite sync failed:\n{err.decode()}")
    waits = [float(line) for line in probed.split() if line != "failed"]
    return {"alone": alone, "recorded": recorded, "record_failed": failed, "slowest": slowest,
            "probes": len(waits), "probe_failed": probed.split().count("failed"),
            "probe_worst": max(waits, default=0.0),
            "probe_over_1s": sum(wait > 1.0 for wait in waits)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="stage1_outputs rows")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the three runs")
    parser.add_argument("--codex-dir", type=Path, default=None,
                        help="keep the Codex databases in this folder and use them again "
                             "(written if missing) rather than write them in each run")
    parser.add_argument("--src", type=Path, default=None,
                        help="also run the first sync of another source tree (its src/) in each"
                             " round, for a before/after comparison in one run")
    parser.add_argument("--ratios-only", action="store_true",
                        help="leave out the peak memory and the recorders during a sync")
    args = parser.parse_args()
    rows: list[tuple[str, float, float | None, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="memcite-bench-sync-") as tmp:
        folder = Path(tmp)
        env = {**os.environ, "CODEX_HOME": str(folder / "none"),
               "MEMCITE_HOME": str(folder), "MEMCITE_CACHE_DIR": str(folder / "cache")}
        env.pop("MEMCITE_NO_FASTPATH", None)
        kept = args.codex_dir / f"rows-{args.rows}" if args.codex_dir else folder
        small, big = kept / "small", kept / "big"
        for home, count in ((small, max(1, args.rows // 10)), (big, args.rows)):
            if (home / "memories_1.sqlite").exists():
                continue  # kept from an earlier run (--codex-dir)
            home.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            write_codex_db(home / "memories_1.sqlite", count)
            print(f"wrote a Codex database of {count:,} rows in "
                  f"{time.perf_counter() - started:.0f} s", flush=True)
        db = folder / "memcite.sqlite"

        times: dict[str, list[float]] = {"bare": [], "first": [], "again": []}
        names = ["bare", "first"]
        if args.src:
            times["before"] = []
            names.append("before")
            before_env = {**env, "PYTHONPATH": str(args.src.resolve() / "src")}
        peak = 0
        for round_ in range(args.rounds):
            turn = round_ % len(names)
            for name in names[turn:] + names[:turn]:
                if name == "bare":
                    times["bare"].append(bare_copy(big / "memories_1.sqlite", folder / "bare.db"))
                    _remove_db(folder / "bare.db")
                elif name == "before":
                    times["before"].append(memcite_sync(big, folder / "before.sqlite",
                                                        before_env, fresh=True, cpu="before")[0])
                    _remove_db(folder / "before.sqlite")
                else:
                    elapsed, peak_kib = memcite_sync(big, db, env, fresh=True, cpu="first")
                    times["first"].append(elapsed)
                    peak = max(peak, peak_kib)
                    times["again"].append(memcite_sync(big, db, env, fresh=False, cpu="again")[0])
            print(f"round {round_ + 1}: " + ", ".join(f"{name} {values[-1]:.1f} s"
                                                        for name, values in times.items()),
                  flush=True)
        bare, first, again = (min(times[name]) for name in ("bare", "first", "again"))
        rows.append((f"first sync of {args.rows:,} rows vs bare bulk copy", first / bare, 2, "<=",
                     f"{first:.1f} s vs {bare:.1f} s ({args.rows / first:,.0f} rows/s; "
                     f"best of {args.rounds})"))
        cpu_bare, cpu_first = min(CPU["bare"]), min(CPU["first"])
        print(f"CPU seconds, best of {args.rounds}: bare {cpu_bare:.1f}, first {cpu_first:.1f}"
              f" = {cpu_first / cpu_bare:.2f}x" + "".join(
                  f"; {name} {min(CPU[name]):.1f} = {min(CPU[name]) / cpu_bare:.2f}x"
                  for name in ("before",) if CPU[name]), flush=True)
        for number in range(args.rounds):
            print(f"  round {number + 1}: first/bare wall {times['first'][number] / times['bare'][number]:.2f}x,"
                  f" CPU {CPU['first'][number] / CPU['bare'][number]:.2f}x" + (
                      f"; before/bare wall {times['before'][number] / times['bare'][number]:.2f}x,"
                      f" CPU {CPU['before'][number] / CPU['bare'][number]:.2f}x"
                      if args.src else ""))
        if args.src:
            before = min(times["before"])
            rows.append((f"first sync of {args.rows:,} rows by --src vs bare bulk copy",
                         before / bare, 2, "<=", f"{before:.1f} s (best of {args.rounds})"))
        rows.append(("re-sync, nothing changed, vs first sync", again / first, 1, "<=",
                     f"{again:.1f} s ({args.rows / again:,.0f} rows/s)"))
        if args.ratios_only:
            if not args.codex_dir:
                shutil.rmtree(big)
            return _print_rows(rows)
        _, small_peak = memcite_sync(small, folder / "small.sqlite", env, fresh=True)
        rows.append((f"first sync peak RSS, {args.rows:,} vs {args.rows // 10:,} rows (MiB)",
                     (peak - small_peak) / 1024, 64, "<=",
                     f"{peak / 1024:.0f} MiB vs {small_peak / 1024:.0f} MiB"))
        during = record_during_sync(big, db, env)
        rows.append(("worst wait of a `memcite record` during a first sync (s)",
                     during["slowest"] - during["alone"], 1, "<=",
                     f"slowest run {during['slowest']:.2f} s, alone {during['alone']:.2f} s; "
                     f"{during['recorded']} recorded, {during['record_failed']} failed"))
        rows.append(("worst wait for the write lock, probed every 50 ms (s)",
                     during["probe_worst"], 1, "<=",
                     f"{during['probes']} waits, {during['probe_over_1s']} over 1 s, "
                     f"{during['probe_failed']} failed"))
        rows.append(("  recorders and probes that failed (busy timeout or any error, printed above)",
                     during["record_failed"] + during["probe_failed"], 0, "<=", ""))
        if not args.codex_dir:
            shutil.rmtree(big)
    return _print_rows(rows)


def _print_rows(rows: list[tuple[str, float, float, str, str]]) -> int:
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
