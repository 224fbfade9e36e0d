"""Project-note speed, as ratios measured side by side in one run.

1. Cold ``memcite note recall`` and ``memcite note save`` processes on a note of
   200 entries, against ``python -c pass`` with the same interpreter, interleaved
   round by round (the order rotating), medians compared. The Typer path
   (``MEMCITE_NO_FASTPATH=1``) is timed alongside, to show what the fast path saves.
2. The secret scan: the pre-filter on an ordinary entry and on a 4 KB reply, a
   full scan of an entry that holds a key (detect-secrets loaded), and the one-off
   cost of loading detect-secrets in a fresh process.

Run: ``.venv/bin/python benchmarks/bench_notes.py [--runs N]``. Everything is
written under a temporary directory, removed at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from memcite.notes.model import Entry, new_note, render_note  # noqa: E402
from memcite.notes.storage import locate_note  # noqa: E402
from memcite.secrets import may_hold_secret, scan  # noqa: E402

SECTIONS = ("decisions", "state", "risks")


def build_note(project: str, home: str, entries: int) -> str:
    """Write a note of ``entries`` entries (ids, provenance) for ``project``; its path."""
    location = locate_note(project, home)
    note = new_note(location.project, "2026-11-30")
    for number in range(entries):
        section = note.section(SECTIONS[number % 3])
        entry = Entry(f"Decision {number}: run `make test-{number}` before tagging; the flaky "
                      f"TestSettlementRetry needs one rerun (see src/pkg/mod_{number}.py)",
                      id=f"b{number:05d}"[:6])
        entry.body = [f"  Topic: topic-{number}", "  Date: 2026-11-01",
                      f"  Source: commit {number:040x}"[:60], "  Confidence: HIGH"]
        section.add(entry)
    os.makedirs(location.project_dir, mode=0o700, exist_ok=True)
    os.chmod(os.path.join(home, "memory"), 0o700)
    os.chmod(os.path.dirname(location.project_dir), 0o700)
    with open(location.note_file, "w", encoding="utf-8") as handle:
        handle.write(render_note(note))
    os.chmod(location.note_file, 0o600)
    return location.note_file


def run_once(argv: list[str], env: dict, cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return time.perf_counter() - start


def per_call(function, *args, repeat: int = 200) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        function(*args)
    return (time.perf_counter() - start) / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="memcite-bench-notes-")
    try:
        project = os.path.join(root, "payments-api")
        os.makedirs(os.path.join(project, ".git"))
        home = os.path.join(root, "codex-home")
        os.makedirs(os.path.join(home, "memory"))
        note_file = build_note(project, home, 200)
        env = {**os.environ, "CODEX_HOME": home, "MEMCITE_DB": os.path.join(root, "db.sqlite"),
               "MEMCITE_CACHE_DIR": os.path.join(root, "cache")}
        env.pop("MEMCITE_NO_FASTPATH", None)
        # byte code cached as an installed memcite has it (in the temporary folder)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(root, "pycache")
        typer_env = {**env, "MEMCITE_NO_FASTPATH": "1"}
        memcite = [sys.executable, "-m", "memcite", "note"]
        counter = iter(range(10**6))
        commands = {
            "python -c pass": lambda: run_once([sys.executable, "-c", "pass"], env, project),
            "note recall": lambda: run_once([*memcite, "recall"], env, project),
            "note save": lambda: run_once(
                [*memcite, "save", f"Verified outcome {next(counter)}: tests pass",
                 "--section", "state"], env, project),
            "note recall (Typer)": lambda: run_once([*memcite, "recall"], typer_env, project),
            "note save (Typer)": lambda: run_once(
                [*memcite, "save", f"Verified outcome {next(counter)}: tests pass",
                 "--section", "state"], typer_env, project),
        }
        for command in commands.values():  # warm the file cache and byte-code once
            command()
        times: dict[str, list[float]] = {name: [] for name in commands}
        names = list(commands)
        for round_number in range(args.runs):
            shift = round_number % len(names)
            for name in names[shift:] + names[:shift]:
                times[name].append(commands[name]())
        base = statistics.median(times["python -c pass"])
        entries = sum(1 for line in open(note_file, encoding="utf-8") if line.startswith("- ["))
        print(f"cold processes, median of {args.runs} interleaved rounds "
              f"(note of 200 entries, {entries} at the end):")
        for name in names:
            median = statistics.median(times[name])
            print(f"  {name:<22} {median * 1000:8.1f} ms   {median / base:5.1f}x python -c pass")

        ordinary = ("Use WAL with synchronous=NORMAL — durability vs speed — thread "
                    "019c6e27-e55b-73d1-87d8-4e01f1f75043, commit 3a5b724e9f1c2d3b4a5f6e7d8c9b0a1f")
        secret = "deploy key AKIAIOSFODNN7EXAMPLE for the staging bucket"
        reply = (ordinary + "\n") * 30
        scan(secret)  # load detect-secrets once
        print("secret scan, in process:")
        print(f"  pre-filter, one entry     {per_call(may_hold_secret, ordinary) * 1e6:8.1f} µs")
        print(f"  pre-filter, 4 KB reply    {per_call(may_hold_secret, reply) * 1e6:8.1f} µs")
        print(f"  scan, ordinary entry      {per_call(scan, ordinary) * 1e6:8.1f} µs "
              "(detect-secrets not consulted)")
        print(f"  scan, entry with a key    {per_call(scan, secret, repeat=50) * 1e6:8.1f} µs "
              "(detect-secrets plugins)")
        cold_plain = statistics.median(run_once(
            [sys.executable, "-c", "from memcite.secrets import scan; scan('plain words')"],
            env, root) for _ in range(5))
        cold_key = statistics.median(run_once(
            [sys.executable, "-c", f"from memcite.secrets import scan; scan({secret!r})"],
            env, root) for _ in range(5))
        print(f"  loading detect-secrets    {(cold_key - cold_plain) * 1000:8.1f} ms once per "
              "process (only when the pre-filter lets a text through)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
