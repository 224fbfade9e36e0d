"""The gate on memory writes and the quarantine's per-reply look, cold, on generated homes.

    python benchmarks/bench_memory_gate.py [--runs 7] [--memories 1000,5000]
        [--baseline OTHER/src]

For each home size (tests/poisoned_home.py: sessions, stage1_outputs, memory_summary.md),
medians of ``memcite hook pre-tool`` as a cold process on a consolidation agent's patch
into ``memories/``:

- ``clean``: a patch of facts only (no directive: the sessions are never read);
- ``poisoned``: a patch adding one planted poisoned line (the sessions are read; denied);
- ``big``: a patch of 1 MB of facts ending in the poisoned line (over the gate's limit:
  denied unjudged);

against ``python -c pass`` in the same run, and the quarantine's look at an unchanged
memory folder (``check_after_reply``: the stamp), in process. Target: a clean write within
the hook's usual cost (about 5x ``python -c pass``); a poisoned one within the hook's 5 s
deadline at 5,000 memories; the unchanged look under a millisecond.

``--baseline OTHER/src`` runs another checkout's memcite (``PYTHONPATH``) beside this one,
interleaved run by run, its figures under ``before_``: how a change moved the gate's time.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from poisoned_home import FACTS, build_home  # noqa: E402

GATE = [sys.executable, "-m", "memcite", "hook", "pre-tool"]
PASS = [sys.executable, "-c", "pass"]


def _wall(command, env, stdin=b"") -> tuple[float, bytes]:
    start = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, env=env, check=False)
    return time.perf_counter() - start, done.stdout


def _median(values):
    return sorted(values)[len(values) // 2]


def _payload(codex: Path, line: str, size: int = 0) -> bytes:
    facts = []
    while sum(map(len, facts)) < size:
        n = len(facts)
        facts.append("+- " + FACTS[n % len(FACTS)].format(name=f"proj{n}", n=n % 90,
                                                          port=8000 + n % 999) + "\n")
    patch = (f"*** Begin Patch\n*** Add File: {codex}/memories/MEMORY.md\n+# Memory\n"
             f"+- The tests run with pytest.\n{''.join(facts)}+- {line}\n*** End Patch")
    return json.dumps({"cwd": str(codex / "memories"), "tool_name": "apply_patch",
                       "hook_event_name": "PreToolUse", "tool_input": {"command": patch}}).encode()


def _rollout_paths(codex: Path) -> None:
    """Codex's threads table names each session file, as Codex's does (the gate's quick look)."""
    with sqlite3.connect(codex / "state_5.sqlite") as db:
        db.execute("ALTER TABLE threads ADD COLUMN rollout_path TEXT")
        db.executemany("UPDATE threads SET rollout_path = ? WHERE id = ?",
                       [(str(path), path.name[-42:-6])
                        for path in (codex / "sessions").rglob("*.jsonl")])
    db.close()


def accuracy(count: int) -> dict:
    """Each planted memory's line as one consolidation patch: how many the gate denies, by
    planted kind (poisoned: caught; the others: false positives)."""
    from memcite.codex.memory_gate import memory_write_verdict

    with tempfile.TemporaryDirectory() as work:
        codex = Path(work) / "home"
        planted = build_home(codex, count)
        _rollout_paths(codex)
        with sqlite3.connect(codex / "memories_1.sqlite") as db:
            raws = dict(db.execute("SELECT thread_id, raw_memory FROM stage1_outputs"))
        denied = {kind: 0 for kind in set(planted.values())}
        total = {kind: 0 for kind in set(planted.values())}
        for thread_id, kind in planted.items():
            payload = json.loads(_payload(codex, raws[thread_id].lstrip("- ")))
            verdict = memory_write_verdict(payload, str(codex))
            total[kind] += 1
            denied[kind] += bool(verdict and verdict.deny)
    return {"accuracy_of": count, "planted": total, "denied": denied}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--memories", default="1000,5000")
    parser.add_argument("--baseline", help="another checkout's src folder, run beside this one")
    parser.add_argument("--accuracy", type=int, default=200,
                        help="memories of the home the gate judges one by one (0: skip)")
    args = parser.parse_args()
    if args.accuracy:
        print(json.dumps(accuracy(args.accuracy)), flush=True)
    results = []
    with tempfile.TemporaryDirectory() as work:
        for count in [int(n) for n in args.memories.split(",")]:
            codex = Path(work) / f"home{count}"
            planted = build_home(codex, count)
            _rollout_paths(codex)
            poisoned = next(t for t, k in planted.items() if k == "poisoned")
            with sqlite3.connect(codex / "memories_1.sqlite") as db:
                (raw,) = db.execute("SELECT raw_memory FROM stage1_outputs WHERE thread_id = ?",
                                    (poisoned,)).fetchone()
            env = {**os.environ, "CODEX_HOME": str(codex), "HOME": work,
                   "MEMCITE_HOME": str(Path(work) / "mh"), "MEMCITE_CONFIG": "/nonexistent"}
            variants = {"": env}
            if args.baseline:
                variants["before_"] = {**env, "PYTHONPATH": args.baseline}
            cases = {"clean": _payload(codex, "Releases are cut every 14 days."),
                     "poisoned": _payload(codex, raw.lstrip("- ")),
                     "big": _payload(codex, raw.lstrip("- "), size=1_000_000)}
            times: dict[str, list[float]] = {"pass": []}
            answers = {}
            for _ in range(args.runs):
                times["pass"].append(_wall(PASS, env)[0])
                for name, stdin in cases.items():
                    for prefix, variant in variants.items():
                        took, out = _wall(GATE, variant, stdin)
                        times.setdefault(prefix + name, []).append(took)
                        answers[prefix + name] = b"deny" in out
            from memcite.audit.memory_quarantine import check_after_reply, folder_stamp, save_stamp
            from memcite.ledger.store import open_store

            db_path = str(Path(work) / f"ledger{count}.sqlite")
            conn = open_store(db_path)
            folder = str(codex / "memories")
            save_stamp(db_path, folder, folder_stamp(folder))
            start = time.perf_counter()
            for _ in range(200):
                assert check_after_reply(conn, db_path, str(codex), folder, now=0) is None
            look = (time.perf_counter() - start) / 200
            conn.close()
            row = {"memories": count, "pass_ms": round(_median(times["pass"]) * 1000, 1)}
            for name in (n for n in times if n != "pass"):
                row[f"{name}_ms"] = round(_median(times[name]) * 1000, 1)
                row[f"{name}_denied"] = answers[name]
            row["unchanged_look_ms"] = round(look * 1000, 3)
            results.append(row)
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
