"""The Stop hook and whole-home ingest, as ratios to baselines measured in the same run.

    python benchmarks/bench_hook.py [--runs 15] [--large-mb 200] [--files 1000]

Targets (issue 14): `memcite hook stop` as a cold process, one turn after the end of
a 20 KB and of a 200 MB session file: at most 10x `python3 -c pass`, and the two
within 1.5x of each other (the cost follows what is new, not the file's size).
`memcite ingest --codex-home` over 1,000 session files, first run and second run
(the second records nothing); the explicit-file ingest of the same files, run a
second time, is shown beside it as what the offsets save.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from codex_sessions import (  # noqa: E402
    cited_reply,
    grow_to,
    memory_folder,
    session_id,
    session_meta,
    turn,
    write_session,
)
from memcite.ledger.session_offsets import ingest_session_file  # noqa: E402
from memcite.ledger.store import open_store  # noqa: E402

HOOK = [sys.executable, "-m", "memcite", "hook", "stop"]
PASS = [sys.executable, "-c", "pass"]


def _wall(command: list[str], env: dict, stdin: bytes = b"") -> float:
    start = time.perf_counter()
    subprocess.run(command, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=env, check=False)
    return time.perf_counter() - start


def _median(values: list[float]) -> float:
    values = sorted(values)
    return values[len(values) // 2]


def _payload(path: Path, number: int) -> bytes:
    """The Stop payload after turn ``number``: its final reply without the citation block."""
    message = cited_reply(number).split("<oai-mem-citation>")[0].rstrip()
    return json.dumps({"session_id": path.stem[-36:], "transcript_path": str(path),
                       "hook_event_name": "Stop", "last_assistant_message": message}).encode()


def bench_hook(work: Path, runs: int, large_mb: int, env: dict) -> None:
    home = work / "codex"
    memory_folder(home)
    small = write_session(home, session_id(1), 0)
    small.write_bytes(session_meta(session_id(1), instructions=8_000) + turn(1) * 3)
    large = write_session(home, session_id(2), 0)
    large.write_bytes(b"")
    grow_to(large, large_mb * 1024 * 1024, session_id(2))
    print(f"session files: {small.stat().st_size / 1024:.0f} KB and "
          f"{large.stat().st_size / 1024 / 1024:.0f} MB")
    conn = open_store(env["MEMCITE_DB"])
    for path in (small, large):  # the sessions so far are recorded: each hook run is a new turn
        ingest_session_file(conn, path)
    conn.close()
    _wall(HOOK, env, _payload(small, 1))  # warm-up: the bytecode caches are written
    _wall(PASS, env)
    times: dict[str, list[float]] = {"pass": [], "small": [], "large": []}
    log = Path(env["MEMCITE_HOME"]) / "logs" / "hooks.log"
    for number in range(runs):
        for path in (small, large):
            with open(path, "ab") as handle:
                handle.write(turn(1000 + number))
        order = [("pass", PASS, b""), ("small", HOOK, _payload(small, 1000 + number)),
                 ("large", HOOK, _payload(large, 1000 + number))]
        shift = number % 3  # rotate who goes first
        for name, command, stdin in order[shift:] + order[:shift]:
            times[name].append(_wall(command, env, stdin))
    entries = [json.loads(line) for line in log.read_text().splitlines()][-2 * runs:]
    assert all(e["status"] == "ok" and e["recorded"] == 2 and "waited_for_reply" not in e
               for e in entries), entries[-1]
    base, ours_small, ours_large = (_median(times[k]) for k in ("pass", "small", "large"))
    print(f"hook stop, median of {runs} cold runs (interleaved with python3 -c pass):")
    print(f"  python3 -c pass            {base * 1000:7.1f} ms")
    print(f"  end of a {small.stat().st_size // 1024:>3} KB session    {ours_small * 1000:7.1f} ms"
          f"  = {ours_small / base:4.1f}x   (target <= 10x)")
    print(f"  end of a {large.stat().st_size // 2**20:>3} MB session    {ours_large * 1000:7.1f} ms"
          f"  = {ours_large / base:4.1f}x   (target <= 10x)")
    print(f"  large / small              {ours_large / ours_small:7.2f}x    (target <= 1.5x)")
    large.unlink()


def bench_home(work: Path, files: int, env: dict) -> None:
    home = work / "home"
    memory_folder(home)
    paths = [write_session(home, session_id(10_000 + n), 3, day=1 + n % 28) for n in range(files)]
    for path in paths:  # shorter meta lines than Codex's, so the home stays small
        data = path.read_bytes()
        path.write_bytes(session_meta(path.stem[-36:], instructions=2_000) +
                         data[data.index(b"\n") + 1:])
    size = sum(p.stat().st_size for p in paths)
    print(f"\ningest --codex-home: {files} session files, {size / 2**20:.0f} MB, "
          f"{files * 6} replies")
    home_command = [sys.executable, "-m", "memcite", "ingest", "--codex-home", str(home)]
    files_command = [*home_command, *map(str, paths)]
    runs: dict[str, list[float]] = {"home": [], "home again": [], "files": [], "files again": []}
    for round_number in range(2):  # fresh databases each round; who goes first alternates
        home_env = {**env, "MEMCITE_DB": str(work / f"home{round_number}.sqlite")}
        files_env = {**env, "MEMCITE_DB": str(work / f"files{round_number}.sqlite")}
        pairs = [("home", home_command, home_env), ("files", files_command, files_env)]
        for name, command, run_env in pairs if round_number == 0 else pairs[::-1]:
            runs[name].append(_wall(command, run_env))
            runs[f"{name} again"].append(_wall(command, run_env))
    first, second = min(runs["home"]), min(runs["home again"])
    explicit_first, explicit_second = min(runs["files"]), min(runs["files again"])
    conn = open_store(home_env["MEMCITE_DB"])
    recorded = conn.execute("SELECT count(*) FROM replies").fetchone()[0]
    conn.close()
    assert recorded == files * 6, recorded
    print("  (best of 2 rounds, fresh databases, the order alternating)")
    print(f"  first run                  {first:7.2f} s")
    print(f"  second run                 {second:7.2f} s  = {second / first:.3f} of the first "
          "(records nothing)")
    print(f"  explicit files, 1st / 2nd  {explicit_first:7.2f} s / {explicit_second:.2f} s "
          "(no offsets: every file read again)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--large-mb", type=int, default=200)
    parser.add_argument("--files", type=int, default=1000)
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="memcite-bench-hook-"))
    env = {**os.environ, "MEMCITE_HOME": str(work / "memcite"),
           "MEMCITE_DB": str(work / "memcite.sqlite"),
           "MEMCITE_CACHE_DIR": str(work / "cache"), "CODEX_HOME": str(work / "codex")}
    env.pop("MEMCITE_NO_FASTPATH", None)
    # As an installed package is: compiled once (into a cache of this run), not at every start.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src" / "memcite")],
                   env=env, check=True)
    try:
        bench_hook(work, options.runs, options.large_mb, env)
        bench_home(work, options.files, env)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
