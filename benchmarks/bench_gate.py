"""`memcite hook pre-tool` cold, as a ratio to `python -c pass` measured in the same run.

    python benchmarks/bench_gate.py [--runs 21] [--events 100000]

Target (issue "Memory as governance"): the gate as a cold process within 5x
`python -c pass`, and independent of the log's size: measured with a log of 10 events
and of ``--events`` events (interleaved runs, medians), on a patch touching a file with
recorded failures (the gate answers) and on a shell command it knows nothing of.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GATE = [sys.executable, "-m", "memcite", "hook", "pre-tool"]
PASS = [sys.executable, "-c", "pass"]


def _wall(command: list[str], env: dict, stdin: bytes = b"") -> tuple[float, bytes]:
    start = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, env=env, check=False)
    return time.perf_counter() - start, done.stdout


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def _project(work: Path, name: str, count: int, env: dict) -> Path:
    """A project whose log holds ``count`` events (written directly, then indexed once)."""
    from memcite.notes import events
    from memcite.notes.storage import locate_note

    repo = work / name
    (repo / "src").mkdir(parents=True)
    (repo / ".git").mkdir()
    location = locate_note(str(repo), env["CODEX_HOME"])
    os.makedirs(location.project_dir, mode=0o700, exist_ok=True)
    lines = []
    for number in range(count):
        kind = ("failure", "fix", "decision", "note", "issue")[number % 5]
        lines.append(json.dumps(events.Event(
            f"ev-{number:08d}", "2027-01-01T00:00:00Z", 1_800_000_000 + number, kind,
            f"`make target{number % 997}` event {number}", [f"src/m{number % 1000}.py"],
            provenance={"who": "bench", "via": "cli", "confirmed": False,
                        "confirmation": None}).to_json()))
    path = events.events_path(location)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    os.chmod(path, 0o600)
    events.add_event(location, kind="failure", text="`pytest -n 8` deadlocks",
                     files=["src/sync.py"], now=1_900_000_000)  # writes the gate index
    return repo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--events", type=int, default=100_000)
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="memcite-bench-gate-"))
    env = {**os.environ, "MEMCITE_HOME": str(work / "memcite"), "CODEX_HOME": str(work / "codex")}
    env.pop("MEMCITE_NO_FASTPATH", None)
    os.environ.update(CODEX_HOME=env["CODEX_HOME"], MEMCITE_HOME=env["MEMCITE_HOME"])
    small = _project(work, "small", 10, env)
    large = _project(work, "large", options.events, env)
    patch = ("*** Begin Patch\n*** Update File: src/sync.py\n@@\n-a\n+b\n*** End Patch\n")

    def payload(repo: Path, tool: str) -> bytes:
        tool_input = {"command": patch} if tool == "apply_patch" else {"command": "ls -la"}
        return json.dumps({"cwd": str(repo), "tool_name": tool, "tool_input": tool_input,
                           "hook_event_name": "PreToolUse"}).encode()

    cases = [("pass", PASS, b""),
             ("small patch", GATE, payload(small, "apply_patch")),
             ("large patch", GATE, payload(large, "apply_patch")),
             ("large shell", GATE, payload(large, "Bash"))]
    for _, command, stdin in cases:  # warm-up: bytecode caches written
        _wall(command, env, stdin)
    _, answer = _wall(GATE, env, payload(large, "apply_patch"))
    assert b"additionalContext" in answer, answer
    times: dict[str, list[float]] = {name: [] for name, _, _ in cases}
    for number in range(options.runs):
        shift = number % len(cases)
        for name, command, stdin in cases[shift:] + cases[:shift]:
            times[name].append(_wall(command, env, stdin)[0])
    base = _median(times["pass"])
    print(f"hook pre-tool, median of {options.runs} cold runs (interleaved with python -c pass):")
    print(f"  python -c pass                      {base * 1000:7.1f} ms")
    for name in ("small patch", "large patch", "large shell"):
        value = _median(times[name])
        size = 10 if name.startswith("small") else options.events
        print(f"  {name:<12} (log of {size:>6} events) {value * 1000:7.1f} ms  = "
              f"{value / base:4.1f}x   (target <= 5x)")
    ratio = _median(times["large patch"]) / _median(times["small patch"])
    print(f"  large / small                       {ratio:7.2f}x")


if __name__ == "__main__":
    main()
