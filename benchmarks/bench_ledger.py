"""Speed and memory of the usage ledger, as ratios to baselines measured in the same run.

    python benchmarks/bench_ledger.py [--quick]

Targets (issue 3):
- `memcite record --jsonl` of 4,000 typical replies into a 2,000-memory inventory:
  <= 5x a bare baseline (a plain str.find reading of the whole reply, as
  tests/plain_reader.py reads it: blocks, entries and ids; plus one SQLite
  transaction of increments per reply, same database settings: WAL,
  synchronous=NORMAL). The ratio to the earlier, thinner baseline (the ids section
  only) is printed alongside for comparison;
- `memcite record -` for one reply as a cold process: <= 10x `python3 -c pass`;
- `memcite sync` of 200,000 Codex rows: >= 20,000 rows/s;
- recording cost per reply with 1,000,000 memories vs 1,000: <= 1.5x;
- peak resident memory of `sync` (200,000 rows) and `ingest` (a 500 MB rollout) < 150 MB.

``--quick`` uses smaller sizes (1,000 replies, 50,000 rows, 100,000 memories, a
50 MB rollout) and fewer runs; the ratios are still measured side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "corpus"))
sys.path.insert(0, str(ROOT / "tests"))

from build_codex_home import CODEX_SCHEMA, build_codex_home  # noqa: E402

from memcite.ledger.recording import ReplyInput, record_replies  # noqa: E402
from memcite.ledger.store import open_store, transaction  # noqa: E402
from plain_reader import plain_read  # noqa: E402

OPEN, CLOSE = "<oai-mem-citation>", "</oai-mem-citation>"
PROSE_LINE = "The weekly report now uses the layout you chose last time, with totals per team.\n"
PROSE = PROSE_LINE * (4096 // len(PROSE_LINE))


def thread(n: int) -> str:
    return f"{n:08x}-0000-7000-8000-{n:012x}"


def typical_reply(n: int, ids: list[str]) -> str:
    """A ~4 KB reply with three entries and its ids, made unique by ``n``."""
    entries = (
        f"MEMORY.md:{9 + n % 3}-{11 + n % 3}|note=[ledger transaction rules]\n"
        "MEMORY.md:42-43|note=[weekly report format]\n"
        "rollout_summaries/2026-02-17T21-23-02-LN3m-weekly_report.md:10-12|note=[format]\n"
    )
    return (f"Reply {n}.\n{PROSE}\n{OPEN}\n<citation_entries>\n{entries}</citation_entries>\n"
            f"<rollout_ids>\n" + "".join(i + "\n" for i in ids) + f"</rollout_ids>\n{CLOSE}")


def fill_inventory(conn: sqlite3.Connection, count: int) -> None:
    """``count`` memories, inserted in SQL (thread ids from ``thread(n)``)."""
    with transaction(conn):
        conn.execute(
            """
            WITH RECURSIVE c(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM c WHERE n + 1 < ?)
            INSERT INTO memories (thread_id, source_updated_at, generated_at, source,
                                  first_synced_at, synced_at)
            SELECT printf('%08x-0000-7000-8000-%012x', n, n), 1700000000 + n, 1700000000 + n,
                   'stage1_outputs', 1, 1 FROM c
            """,
            (count,),
        )


def make_batch(path: Path, replies: int, inventory: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as handle:
        for n in range(replies):
            ids = [thread(rng.randrange(inventory)) for _ in range(2)]
            handle.write(json.dumps({"text": typical_reply(n, ids), "at": 1_760_000_000 + n})
                         + "\n")


_BASELINE_INCREMENT = ("UPDATE memories SET usage_count = usage_count + 1, last_usage = ?"
                       " WHERE thread_id = ?")


def _ids_only(text: str) -> list[str]:
    """The earlier baseline's reading: only the lines of the first ids section."""
    begin = text.find("<rollout_ids>")
    end = text.find("</rollout_ids>", begin)
    return [i.strip() for i in text[begin + 13:end].split("\n") if i.strip()]


def _plain_counted(text: str) -> list[str]:
    """A plain reading of the whole reply (blocks, entries, ids), its counted threads once each."""
    return list(dict.fromkeys(plain_read(text)["thread_ids"]))


def baseline_record(path: Path, db: Path, read=_plain_counted, timed_close: bool = True) -> float:
    """The bare baseline: a str.find reading, then one transaction of increments per reply.

    The close (its last checkpoint) is timed, as the memcite process does it before it
    exits; the earlier baseline (``_ids_only``, ``timed_close=False``) left it out.
    """
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    start = time.perf_counter()
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            text, at = item["text"], item["at"]
            ids = read(text)
            conn.execute("BEGIN IMMEDIATE")
            for thread_id in ids:
                conn.execute(_BASELINE_INCREMENT, (at, thread_id))
            conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return time.perf_counter() - start if timed_close else elapsed


def memcite_command() -> list[str]:
    binary = shutil.which("memcite", path=os.path.dirname(sys.executable))
    return [binary] if binary else [sys.executable, "-m", "memcite"]


_RSS_PROBE = """
import sys
from memcite.__main__ import main
sys.stdout = open("/dev/null", "w")
code = 0
try:
    main(sys.argv[1:])
except SystemExit as exit:
    code = exit.code or 0
# VmHWM is this process's own peak resident memory
status = open("/proc/self/status").read()
sys.stderr.write("\\nVmHWM " + status.split("VmHWM:")[1].split()[0] + f" {code}\\n")
"""


def run_with_peak(args: list[str], env: dict) -> tuple[float, int]:
    """Wall time and peak resident memory (KiB) of ``memcite ARGS`` in a fresh process."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _RSS_PROBE, *args], capture_output=True,
                          text=True, env=env)
    elapsed = time.perf_counter() - start
    last = done.stderr.strip().splitlines()[-1].split()
    if last[0] != "VmHWM" or last[2] != "0":
        raise SystemExit(f"memcite {' '.join(args)} failed:\n{done.stderr}")
    return elapsed, int(last[1])


def write_codex_db(path: Path, rows: int) -> None:
    """A Codex ``memories_1.sqlite`` with ``rows`` rows of ~1 KB of text each."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(CODEX_SCHEMA)
    raw = "- Task: something useful.\n" * 20
    summary = "The user asked about something; the second approach worked.\n" * 8
    conn.execute(
        """
        WITH RECURSIVE c(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM c WHERE n + 1 < ?)
        INSERT INTO stage1_outputs
        SELECT printf('%08x-0000-7000-8000-%012x', n, n), 1700000000 + n, ? || n, ?,
               'slug_' || n, 1700000600 + n, CASE WHEN n % 3 = 0 THEN n % 7 END,
               CASE WHEN n % 3 = 0 THEN 1700000000 + n END, n % 2, NULL FROM c
        """,
        (rows, raw, summary),
    )
    conn.commit()
    conn.close()


def write_rollout(path: Path, size: int) -> int:
    """A Codex session file of about ``size`` bytes; returns how many assistant replies it has."""
    tool_output = json.dumps({"timestamp": "2026-01-20T10:00:05.000Z", "type": "response_item",
                              "payload": {"type": "function_call_output", "call_id": "c",
                                          "output": "x" * 8000}})
    reasoning = json.dumps({"timestamp": "2026-01-20T10:00:04.000Z", "type": "response_item",
                            "payload": {"type": "reasoning", "summary": [
                                {"type": "summary_text", "text": "thinking " * 100}]}})
    user = json.dumps({"timestamp": "2026-01-20T10:00:02.000Z", "type": "response_item",
                       "payload": {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": "Go on."}]}})
    replies = 0
    written = 0
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"timestamp": "2026-01-20T10:00:00.000Z", "type": "session_meta",
                                 "payload": {"id": thread(999_999_999), "cwd": "/w"}}) + "\n")
        while written < size:
            text = typical_reply(replies, [thread(replies % 2000), thread(7)])
            reply = json.dumps({"timestamp": "2026-01-20T10:00:06.000Z", "type": "response_item",
                                "payload": {"type": "message", "role": "assistant",
                                            "content": [{"type": "output_text", "text": text}]}})
            chunk = "\n".join([user, reasoning] + [tool_output] * 20 + [reply]) + "\n"
            handle.write(chunk)
            written += len(chunk)
            replies += 1
    return replies


def per_reply_costs(folder: Path, inventories: tuple[int, ...], rounds: int,
                    chunk: int = 250) -> dict[int, float]:
    """Seconds per reply recorded in-process, for each inventory size.

    Chunks of replies go to each inventory in turn; the best chunk counts, so a
    busy moment on the machine does not land on one side only.
    """
    conns = {}
    for size in inventories:
        conn = open_store(folder / f"inv{size}.sqlite")
        fill_inventory(conn, size)
        conns[size] = conn
    root = folder / "codex" / "memories"
    rng = random.Random(7)
    best = {size: float("inf") for size in inventories}
    serial = 0
    for _ in range(rounds):
        for size, conn in conns.items():
            batch = []
            for _ in range(chunk):
                ids = [thread(rng.randrange(size)) for _ in range(2)]
                batch.append(ReplyInput(typical_reply(serial, ids), at=1_760_000_000 + serial))
                serial += 1
            start = time.perf_counter()
            for result in record_replies(conn, batch, memory_root=root):
                assert result.status == "recorded"
            best[size] = min(best[size], (time.perf_counter() - start) / chunk)
    for conn in conns.values():
        conn.close()
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer runs")
    args = parser.parse_args()
    quick = args.quick
    n_replies = 1000 if quick else 4000
    n_stage1 = 50_000 if quick else 200_000
    big_inventory = 100_000 if quick else 1_000_000
    rollout_bytes = (50 if quick else 500) * 1024 * 1024
    cold_runs = 7 if quick else 15
    rounds = 2 if quick else 5
    # name, value, target (None: for information), "<="/">=", detail
    rows: list[tuple[str, float, float | None, str, str]] = []

    with tempfile.TemporaryDirectory(prefix="memcite-bench-") as tmp:
        folder = Path(tmp)
        codex = Path(build_codex_home(str(folder / "codex")))
        env = {**os.environ, "CODEX_HOME": str(codex), "MEMCITE_NO_FASTPATH": "",
               "MEMCITE_DB": str(folder / "unused.sqlite")}

        # 1. A batch of typical replies, CLI vs the bare baseline (and the earlier ids-only
        # baseline), same inventory and settings; the best round of each counts (the
        # machine may be busy).
        batch = folder / "replies.jsonl"
        make_batch(batch, n_replies, 2000)
        template = folder / "inventory.sqlite"
        conn = open_store(template)
        fill_inventory(conn, 2000)
        conn.close()
        command = memcite_command()

        def run_ours(db: Path) -> float:
            start = time.perf_counter()
            done = subprocess.run([*command, "record", "--jsonl", str(batch), "--db", str(db)],
                                  capture_output=True, text=True, env=env)
            elapsed = time.perf_counter() - start
            if done.returncode != 0 or not done.stdout.startswith(f"recorded {n_replies} "):
                raise SystemExit(f"record --jsonl failed: {done.stdout}{done.stderr}")
            return elapsed

        runs = {"ours": run_ours, "base": lambda db: baseline_record(batch, db),
                "thin": lambda db: baseline_record(batch, db, read=_ids_only, timed_close=False)}
        times: dict[str, list[float]] = {name: [] for name in runs}
        for round_ in range(rounds):
            # Each run starts with nothing left to write back from the one before, and the
            # order turns round each round, so neither side inherits the other's I/O.
            names = list(runs)[round_ % len(runs):] + list(runs)[:round_ % len(runs)]
            for name in names:
                db = folder / f"{name}{round_}.sqlite"
                shutil.copy(template, db)
                os.sync()
                times[name].append(runs[name](db))
        ours_times, base_times, thin_times = times["ours"], times["base"], times["thin"]
        ours, base, thin = min(ours_times), min(base_times), min(thin_times)
        rows.append((f"`record --jsonl` {n_replies:,} replies vs bare baseline", ours / base, 5,
                     "<=", f"{ours:.2f} s vs {base:.2f} s ({n_replies / ours:,.0f} replies/s,"
                     f" best of {rounds})"))
        rows.append(("  the same vs the ids-only baseline (before)", ours / thin, None, "",
                     f"{ours:.2f} s vs {thin:.2f} s"))

        # 2. One reply, cold process, vs python -c pass.
        cold_db = folder / "cold.sqlite"
        cold_env = {**env, "MEMCITE_DB": str(cold_db)}
        subprocess.run([*command, "record", "-"], input=b"warm up", capture_output=True,
                       env=cold_env, check=True)
        ids = [thread(1), thread(2)]
        times, pass_times = [], []
        for n in range(cold_runs):
            reply = typical_reply(n, ids).encode()
            start = time.perf_counter()
            subprocess.run([*command, "record", "-"], input=reply, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=cold_env, check=True)
            times.append(time.perf_counter() - start)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            pass_times.append(time.perf_counter() - start)
        cold, bare = sorted(times)[cold_runs // 2], sorted(pass_times)[cold_runs // 2]
        rows.append(("cold `memcite record -` vs python3 -c pass", cold / bare, 10, "<=",
                     f"{cold * 1e3:.0f} ms vs {bare * 1e3:.0f} ms (medians of {cold_runs})"))

        # 3. sync of a large Codex database: rows/s and peak memory.
        big_home = folder / "big_codex"
        big_home.mkdir()
        write_codex_db(big_home / "memories_1.sqlite", n_stage1)
        elapsed, peak = run_with_peak(["sync", "--codex-home", str(big_home), "--db",
                                       str(folder / "sync.sqlite"), "--json"], env)
        rows.append((f"`sync` of {n_stage1:,} Codex rows (rows/s)", n_stage1 / elapsed, 20_000,
                     ">=", f"{elapsed:.2f} s"))
        rows.append((f"`sync` of {n_stage1:,} rows: peak RSS (MiB)", peak / 1024, 150, "<=", ""))
        elapsed, _ = run_with_peak(["sync", "--codex-home", str(big_home), "--db",
                                    str(folder / "sync.sqlite"), "--json"], env)
        rows.append((f"`sync` again, {n_stage1:,} rows in place (rows/s)", n_stage1 / elapsed,
                     20_000, ">=", f"{elapsed:.2f} s"))
        shutil.rmtree(big_home)

        # 4. Recording cost does not grow with the inventory.
        costs = per_reply_costs(folder, (1000, big_inventory), rounds=3 if quick else 6)
        small, large = costs[1000], costs[big_inventory]
        rows.append((f"per reply, {big_inventory:,} vs 1,000 memories", large / small, 1.5, "<=",
                     f"{large * 1e6:.0f} us vs {small * 1e6:.0f} us (best chunks)"))

        # 5. ingest of a large rollout: peak memory.
        rollout = folder / "rollout.jsonl"
        replies = write_rollout(rollout, rollout_bytes)
        size = rollout.stat().st_size
        elapsed, peak = run_with_peak(["ingest", str(rollout), "--db",
                                       str(folder / "ingest.sqlite"), "--json"], env)
        rows.append((f"`ingest` of a {size / 2**20:.0f} MB rollout: peak RSS (MiB)", peak / 1024,
                     150, "<=", f"{elapsed:.1f} s, {size / 2**20 / elapsed:.0f} MB/s, "
                     f"{replies:,} replies"))

    width = max(len(r[0]) for r in rows)
    failed = 0
    for name, value, target, sense, detail in rows:
        shown = f"{value:9.2f}" if value < 1000 else f"{value:9,.0f}"
        if target is None:
            print(f"{name:<{width}}  {shown}  (no target)      info {detail}")
            continue
        ok = value <= target if sense == "<=" else value >= target
        failed += not ok
        print(f"{name:<{width}}  {shown}  (target {sense} {target:,})  "
              f"{'ok ' if ok else 'MISS'}  {detail}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
