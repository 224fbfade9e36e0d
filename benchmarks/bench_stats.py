"""Benchmark of ``memcite stats`` on a large ledger.

    .venv/bin/python benchmarks/bench_stats.py            # 200,000 memories, 1,000,000 citations
    .venv/bin/python benchmarks/bench_stats.py --quick    # a tenth of that
    .venv/bin/python benchmarks/bench_stats.py --memories 1000000   # the same log, 1M memories
    .venv/bin/python benchmarks/bench_stats.py --keep DIR   # build once in DIR, reuse it next time

1. A cold ``memcite stats --json --limit 50`` (a new process each run, median of
   several) against ``python -c pass`` with the same interpreter: target <= 8x. The
   two are run in turn, round after round (interleaved), so that a busy moment of the
   machine falls on both: timed in separate blocks, the ratio swung from 2.8x to 10.3x.
2. The same with ``--no-cache`` (every cited entry checked again), on its own line
   interleaved with ``python -c pass``.
3. Citation checks over 100,000 cited entries (in the same database): each memory file
   (all are cited) is opened exactly once for the whole report, counted by inode through
   a wrapped ``os.open`` (how memory files are opened, relative to the folder's handle).

``--src DIR`` runs the ``memcite`` commands from another source tree (before/after).

The database is written with plain SQL (what ``record`` would store), in a
temporary folder that is removed at the end (``--keep DIR``: in DIR, kept with a copy
as built, which a later run with the same sizes puts back and migrates instead of
building again; at 1,000,000 memories the build takes minutes).
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import shutil
import sqlite3
import stat
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

from memcite.ledger.memory_files import cited_lines_sha256  # noqa: E402
from memcite.ledger.store import open_store, transaction  # noqa: E402
from memcite.retention.checks import MemoryFolder  # noqa: E402
from memcite.retention.stats import collect_stats  # noqa: E402

NOW = 1_800_000_000
DAY = 86_400
CODEX_SCHEMA = """
CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY, source_updated_at INTEGER NOT NULL,
    raw_memory TEXT NOT NULL, rollout_summary TEXT NOT NULL, rollout_slug TEXT,
    generated_at INTEGER NOT NULL, usage_count INTEGER, last_usage INTEGER,
    selected_for_phase2 INTEGER NOT NULL DEFAULT 0, selected_for_phase2_source_updated_at INTEGER);
"""
FILES = 400
LINES_PER_FILE = 200


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def build_memory_folder(root: str) -> list[tuple[str, bytes]]:
    """``FILES`` markdown files of ``LINES_PER_FILE`` lines under ``root``."""
    files = []
    os.makedirs(os.path.join(root, "rollout_summaries"), exist_ok=True)
    with open(os.path.join(root, "MEMORY.md"), "w") as handle:
        for group in range(20):
            handle.write(f"# Task Group {group}\n\n")
            for section in range(5):
                handle.write(f"## Section {group}.{section}\n- a rule\n- another rule\n\n")
    with open(os.path.join(root, "MEMORY.md"), "rb") as handle:
        files.append(("MEMORY.md", handle.read()))
    for number in range(FILES - 1):
        name = f"rollout_summaries/2026-01-01T00-00-00-{number:04d}-topic_{number}.md"
        data = "".join(f"line {i} of file {number}\n" for i in range(LINES_PER_FILE)).encode()
        with open(os.path.join(root, name), "wb") as handle:
            handle.write(data)
        files.append((name, data))
    return files


def build_ledger(db: str, root: str, *, memories: int, citations: int, entries: int,
                 seed: int = 7) -> None:
    """A ledger of ``memories`` memories and ``citations`` counted citations in replies of
    four ids each; ``entries`` cited entries spread over the memory folder."""
    rng = random.Random(seed)
    files = build_memory_folder(root)
    home = os.path.realpath(os.path.dirname(root))
    # Codex's memories database (its table, empty here): the home has usage data.
    codex = sqlite3.connect(os.path.join(home, "memories_1.sqlite"))
    codex.executescript(CODEX_SCHEMA)
    codex.close()
    conn = open_store(db)
    ids = [_uuid(rng) for _ in range(memories)]
    with transaction(conn):
        sync_id = conn.execute(
            "INSERT INTO syncs (codex_home, started_at, finished_at, stage1_rows) VALUES"
            " (?, ?, ?, ?)", (home, NOW, NOW, memories)).lastrowid
        conn.executemany(
            "INSERT INTO memories (thread_id, source_updated_at, generated_at, codex_usage_count,"
            " codex_last_usage, selected_for_phase2, has_raw_memory, has_rollout_summary, source,"
            " codex_home, first_synced_at, synced_at, last_sync_id) VALUES (?, ?, ?, ?, ?, ?,"
            " 1, 1, 'stage1_outputs', ?, ?, ?, ?)",
            [(tid, NOW - rng.randrange(400) * DAY, NOW, rng.choice((None, 0, 1, 3)),
              rng.choice((None, NOW - rng.randrange(200) * DAY)), rng.random() < 0.1, home,
              NOW, NOW, sync_id) for tid in ids])
    replies = citations // 4
    per_reply_entries = max(1, entries // replies) if replies else 0
    entry_budget = entries
    usage: dict[str, list[int]] = {}
    batch = 20_000
    for start in range(0, replies, batch):
        reply_rows, id_rows, entry_rows = [], [], []
        for reply in range(start, min(replies, start + batch)):
            at = NOW - rng.randrange(180 * DAY)
            reply_rows.append((reply + 1, f"key-{reply}", "id", "0" * 64, at, at, None, None,
                               "codex", "default", "record", root, 1, 0, 0))
            for position in range(4):
                roll = rng.random()
                if roll < 0.01:
                    id_rows.append((reply + 1, position, "not-a-uuid", None, 1, 0, 0))
                    continue
                if roll < 0.02:
                    tid = _uuid(rng)
                    id_rows.append((reply + 1, position, tid, tid, 1, 1, 0))
                    continue
                tid = ids[int(rng.paretovariate(1.2)) % memories]
                id_rows.append((reply + 1, position, tid, tid, 1, 1, 1))
                counts = usage.setdefault(tid, [0, 0])
                counts[0] += 1
                counts[1] = max(counts[1], at)
            for position in range(per_reply_entries if entry_budget > 0 else 0):
                entry_budget -= 1
                name, data = files[rng.randrange(len(files))]
                line_start = rng.randrange(1, LINES_PER_FILE - 3)
                line_end = line_start + rng.randrange(3)
                digest = cited_lines_sha256(data, line_start, line_end)
                if rng.random() < 0.02:
                    name, digest = "../outside.md", None
                elif rng.random() < 0.02:
                    digest = "0" * 64
                entry_rows.append((reply + 1, position, name, line_start, line_end, "note", 5, 1,
                                   digest))
        with transaction(conn):
            conn.executemany("INSERT INTO replies VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                             " ?, ?, ?)", reply_rows)
            conn.executemany("INSERT INTO cited_ids VALUES (?, ?, ?, ?, ?, ?, ?)", id_rows)
            conn.executemany("INSERT INTO cited_entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             entry_rows)
    with transaction(conn):
        conn.executemany("UPDATE memories SET usage_count = ?, last_usage = ? WHERE thread_id = ?",
                         [(n, last, tid) for tid, (n, last) in usage.items()])
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("ANALYZE")
    conn.close()


def _run(args: list[str], env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run(args, env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr.decode()}")
    return elapsed


def _median_run(args: list[str], env: dict, runs: int) -> float:
    return statistics.median(_run(args, env) for _ in range(runs))


def _interleaved(commands: dict[str, list[str]], env: dict, runs: int) -> dict[str, float]:
    """Median times of ``commands``, run in turn each round (the order turning round each
    round), so that a slow moment of the machine falls on the baseline as on the others."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    names = list(commands)
    for round_ in range(runs):
        turn = round_ % len(names)
        for name in names[turn:] + names[:turn]:
            times[name].append(_run(commands[name], env))
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the size")
    parser.add_argument("--runs", type=int, default=15, help="cold runs per command")
    parser.add_argument("--memories", type=int, default=None,
                        help="memories in the ledger (default 200,000; the citations stay)")
    parser.add_argument("--src", default=None,
                        help="run the memcite commands from this source tree (its src/)")
    parser.add_argument("--keep", metavar="DIR", default=None,
                        help="build the ledger in DIR and keep it; a later run with the same DIR"
                             " and sizes reuses it (the build takes minutes at 1M memories)")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    memories, citations, entries = 200_000 // scale, 1_000_000 // scale, 100_000 // scale
    memories = args.memories or memories

    sizes = f"{memories}-{citations}-{entries}"
    if args.keep:
        folder = os.path.abspath(args.keep)
        os.makedirs(folder, exist_ok=True)
    else:
        folder = tempfile.mkdtemp(prefix="memcite-bench-stats-")
    try:
        home = os.path.join(folder, "codex_home")
        root = os.path.join(home, "memories")
        db = os.path.join(folder, "memcite.sqlite")
        built = os.path.join(folder, "built")
        if args.keep and os.path.exists(built) and open(built).read() == sizes:
            _reset_kept(db, folder)
            print(f"reusing the ledger kept in {folder} ({sizes.replace('-', ', ')})")
        else:
            for stale in (db, built, os.path.join(home, "memories_1.sqlite")):
                if os.path.exists(stale):
                    os.remove(stale)
            started = time.perf_counter()
            build_ledger(db, root, memories=memories, citations=citations, entries=entries)
            print(f"built {memories:,} memories, {citations:,} citations, {entries:,} cited"
                  f" entries in {time.perf_counter() - started:.1f} s")
            if args.keep:
                shutil.copyfile(db, db + ".built")
                with open(built, "w") as handle:
                    handle.write(sizes)

        env = {**os.environ, "MEMCITE_DB": db, "CODEX_HOME": home,
               "MEMCITE_HOME": folder, "MEMCITE_CACHE_DIR": os.path.join(folder, "cache")}
        env.pop("MEMCITE_NO_FASTPATH", None)
        if args.src:
            env["PYTHONPATH"] = os.path.abspath(args.src)
        # As an installed memcite runs: bytecode cached (here, inside the temporary folder).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(folder, "pycache")
        command = [sys.executable, "-m", "memcite", "stats", "--json", "--limit", "50",
                   "--as-of", str(NOW)]
        _median_run(command, env, 2)  # warm the OS page cache, as a user's second run
        python = [sys.executable, "-c", "pass"]
        medians = _interleaved({"pass": python, "stats": command}, env, args.runs)
        baseline, stats_time = medians["pass"], medians["stats"]
        ratio = stats_time / baseline
        print(f"python -c pass:                    {baseline * 1000:7.1f} ms (median of "
              f"{args.runs}, interleaved with each command below)")
        print(f"memcite stats --json --limit 50:   {stats_time * 1000:7.1f} ms  "
              f"= {ratio:.1f}x  (target <= 8x) {'OK' if ratio <= 8 else 'OVER'}"
              "  [citation checks reused from the cache: no reply recorded, no file changed]")
        after_reply, after_pass = [], []
        for number in range(args.runs):  # a new reply before each run: the cached tally grows
            reply = ("ok\n<oai-mem-citation>\n<citation_entries>\n"
                     f"MEMORY.md:{1 + number % 5}-{2 + number % 5}|note=[bench]\n"
                     "../outside.md:1-1|note=[bench]\n</citation_entries>\n<rollout_ids>\n"
                     f"{_uuid(random.Random(number))}\n</rollout_ids>\n</oai-mem-citation>")
            subprocess.run([sys.executable, "-m", "memcite", "record", "-", "--id",
                            f"bench-{number}", "--at", str(NOW)], input=reply.encode(), env=env,
                           capture_output=True, check=True)
            after_reply.append(_run(command, env))
            after_pass.append(_run(python, env))
        incremental = statistics.median(after_reply) / statistics.median(after_pass)
        print(f"  after one new reply each run:     {statistics.median(after_reply) * 1000:7.1f} ms  "
              f"= {incremental:.1f}x  (target <= 8x) "
              f"{'OK' if incremental <= 8 else 'OVER'}"
              "  [only the new replies' entries checked]")
        # Its own interleaved line: every cited entry checked again (the first run, or after a
        # cited file changed), against a baseline timed in the same rounds.
        medians = _interleaved({"pass": python, "uncached": [*command, "--no-cache"]}, env,
                               args.runs)
        uncached = medians["uncached"]
        print(f"python -c pass:                    {medians['pass'] * 1000:7.1f} ms (median of "
              f"{args.runs}, interleaved with the line below)")
        print(f"memcite stats ... --no-cache:      {uncached * 1000:7.1f} ms  "
              f"= {uncached / medians['pass']:.1f}x  [every cited entry checked again: the first"
              " run, or after a cited file changed]")

        # Memory files are opened with os.open (relative to a folder's fd): count the regular
        # files opened, by inode, so "each file read once" can fail.
        opened: list[tuple[int, int]] = []
        real_open = os.open

        def counting_open(path, flags, mode=0o777, *, dir_fd=None):
            fd = real_open(path, flags, mode, dir_fd=dir_fd)
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode):
                opened.append((info.st_dev, info.st_ino))
            return fd

        conn = open_store(db, readonly=True)  # before counting: the ledger is no memory file
        os.open = counting_open
        try:
            started = time.perf_counter()
            report = collect_stats(conn, memory_root=root, as_of=NOW, max_unused_days=30,
                                   limit=50, folder=MemoryFolder(root))
            elapsed = time.perf_counter() - started
        finally:
            conn.close()
            os.open = real_open
        checks = report.citation_checks
        opens = collections.Counter(opened)
        twice = sum(1 for n in opens.values() if n > 1)
        once = len(opened) == len(opens) == FILES
        print(f"citation checks: {checks.citations:,} cited entries ({checks.entries:,} distinct)"
              f" checked in {elapsed * 1000:.0f} ms (whole report); {len(opened)} opens of"
              f" {len(opens)} files ({FILES} in the folder, {twice} opened more than once) -> "
              f"{'OK' if once else 'FAIL'} (target: each file opened exactly once)")
        print("outcomes: " + ", ".join(f"{k} {v['citations']:,}"
                                       for k, v in checks.outcomes.items() if v["citations"]))
        if ratio > 8 or incremental > 8 or not once:
            sys.exit(1)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


def _reset_kept(db: str, folder: str) -> None:
    """Put back the ledger as built (the replies a run records are gone), empty the cache;
    the copy is migrated when this memcite's schema is newer."""
    for suffix in ("-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    shutil.copyfile(db + ".built", db)
    shutil.rmtree(os.path.join(folder, "cache"), ignore_errors=True)
    open_store(db).close()


if __name__ == "__main__":
    main()
