"""Scope-aware ``memcite instructions`` speed: a cold process with a warm cache, 500 note entries
across the three scopes (session, project, global) and Codex's summary, vs ``python -c pass``
with the same interpreter, interleaved (target: at most 8x). The first (cache-filling) call,
which resolves the scopes and compacts the notes to the budget, is timed once too.

Run: ``.venv/bin/python benchmarks/bench_scopes.py [--runs N] [--entries N]``. Everything is
written under a temporary directory (Codex home and cache), removed at the end.
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
SESSION = "019c6e27-e55b-73d1-87d8-4e01f1f75043"
TIERS = ("CORE", "IMP", "SEC", "IRR", None)
HEADERS = {"session": ("# Session memory", f"Session: {SESSION}"),
           "global": ("# Global memory", "Scope: global")}


def note_text(scope: str, owner_line: str, title: str, count: int, offset: int) -> str:
    """A note of ``count`` entries with topics (some shared across scopes), tiers and dates."""
    lines = [title, "", owner_line, "Updated: 2026-11-30", "", "## Durable decisions"]
    for n in range(count):
        number = offset + n
        lines.append(f"- [{scope[0]}{number:04d}a] Keep src/{scope}/module_{number}.py in step "
                     f"with the schema: the migration m{number:03d} reads it at start-up")
        if n % 4 == 0:
            lines.append(f"  Topic: topic-{n}")
        lines.append(f"  Date: 2026-{1 + n % 11:02d}-{1 + n % 27:02d}")
        tier = TIERS[n % 5]
        if tier:
            lines.append(f"  Tier: {tier}")
        lines.append(f"  Source: review {number}, commit {number * 7919:08x}")
        lines.append("  Via: cli")
        lines.append("  Confirmed: " + ("yes (--yes by ana, 2026-11-01)" if n % 3 == 0
                                        else "no (automatic)"))
    return "\n".join(lines) + "\n"


def make_home(tmp: Path, entries: int) -> tuple[Path, Path]:
    sys.path.insert(0, str(REPO / "src"))
    from memcite.readpath.projects import find_project_root, project_slug

    home = tmp / "codex"
    shutil.copytree(REPO / "corpus" / "memory_home", home)
    project = tmp / "payments-api"
    (project / ".git").mkdir(parents=True)
    root = find_project_root(project)
    per_scope = {"session": entries // 5, "project": entries * 2 // 5}
    per_scope["global"] = entries - per_scope["session"] - per_scope["project"]
    offset = 0
    for scope, count in per_scope.items():
        if scope == "project":
            folder = home / "memory" / "projects" / project_slug(root)
            title, owner = "# Project memory", f"Project: {root}"
        elif scope == "global":
            folder = home / "memory" / "global"
            title, owner = HEADERS["global"]
        else:
            folder = home / "memory" / "sessions" / SESSION
            title, owner = HEADERS["session"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "memory.md").write_text(note_text(scope, owner, title, count, offset))
        offset += count
    return home, project


def _time_process(command: list[str], env: dict, cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs per measurement")
    parser.add_argument("--entries", type=int, default=500, help="note entries in all")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]} on {sys.platform}")
    with tempfile.TemporaryDirectory() as tmp:
        home, project = make_home(Path(tmp), args.entries)
        env = {**os.environ, "CODEX_HOME": str(home), "MEMCITE_SESSION": SESSION,
               "MEMCITE_CACHE_DIR": str(Path(tmp) / "cache"),
               "PYTHONPATH": str(REPO / "src")}
        env.pop("MEMCITE_NO_FASTPATH", None)
        memcite = [sys.executable, "-m", "memcite", "instructions"]
        explain = subprocess.run([*memcite, "--explain"], env=env, cwd=str(project),
                                 capture_output=True, text=True, check=True).stdout
        first = _time_process([*memcite, "--no-cache"], env, str(project))
        _time_process(memcite, env, str(project))  # fills the cache
        baseline = [sys.executable, "-c", "pass"]
        samples: dict[str, list[float]] = {"memcite": [], "baseline": []}
        for _ in range(args.runs):  # interleaved, so drift hits both alike
            samples["memcite"].append(_time_process(memcite, env, str(project)))
            samples["baseline"].append(_time_process(baseline, env, str(project)))
        warm = statistics.median(samples["memcite"])
        base = statistics.median(samples["baseline"])
        overrides = sum(line.startswith("override:") for line in explain.splitlines())
        compacted = sum(line.startswith("compacted:") for line in explain.splitlines())
        print(f"{args.entries} entries (session, project, global) + the corpus summary, "
              f"budget 2500: {overrides} overrides, {compacted} entries compacted")
        print(f"uncached `python -m memcite instructions` (resolve + compact): {first * 1000:.1f} ms")
        print(f"cold `python -m memcite instructions`, warm cache: {warm * 1000:.1f} ms")
        print(f"`{sys.executable} -c pass`: {base * 1000:.1f} ms")
        print(f"ratio: {warm / base:.1f}x (target <= 8x)")


if __name__ == "__main__":
    main()
