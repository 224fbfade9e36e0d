"""Start-up of the per-reply commands, as ratios to ``python -c pass`` measured in the same run.

    .venv/bin/python benchmarks/bench_startup.py [--runs N] [--no-fastpath]

``--no-fastpath`` runs every memcite command through Typer (``MEMCITE_NO_FASTPATH=1``):
what dropping the fast path would cost. ``hook stop`` is Codex's Stop hook given an empty
payload (``{}``: nothing to record), its start-up alone.

Targets (issue 32): a cold ``memcite strip FILE`` within 3x ``python -c pass``, a
cold ``memcite record FILE`` and the Stop hook within 4x (issue 15's were 5x and 6x). Each round runs the three commands in
turn (the order turning round each round), so a busy moment of the machine
falls on all of them; the medians count. The commands run as an installed
memcite does: the console script, bytecode cached (here, in the temporary
folder), the grammar's parse tables cached (the first run exports them).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

A, B = "019c6e27-e55b-73d1-87d8-4e01f1f75043", "019c7714-3b77-74d1-9866-e1f484aae2ab"
PROSE_LINE = "The weekly report now uses the layout you chose last time, with totals per team.\n"


def typical_reply(n: int) -> str:
    """A ~4 KB reply with three entries and two ids, made unique by ``n``."""
    return (
        f"Reply {n}.\n" + PROSE_LINE * (4096 // len(PROSE_LINE))
        + "\n<oai-mem-citation>\n<citation_entries>\n"
        + "MEMORY.md:234-236|note=[responsesapi citation extraction code pointer]\n"
        + "rollout_summaries/2026-02-17T21-23-02-LN3m-weekly_report.md:10-12|note=[format]\n"
        + "skills/report/SKILL.md:1-40|note=[report skill]\n"
        + f"</citation_entries>\n<rollout_ids>\n{A}\n{B}\n</rollout_ids>\n</oai-mem-citation>"
    )


def memcite_command() -> list[str]:
    binary = shutil.which("memcite", path=os.path.dirname(sys.executable))
    return [binary] if binary else [sys.executable, "-m", "memcite"]


def run(args: list[str], env: dict, stdin: bytes | None = None) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, env=env, input=stdin, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=31, help="rounds (each runs every command)")
    parser.add_argument("--no-fastpath", action="store_true",
                        help="run memcite through Typer (MEMCITE_NO_FASTPATH=1)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memcite-bench-startup-") as folder:
        env = {**os.environ, "MEMCITE_HOME": folder, "MEMCITE_DB": os.path.join(folder, "db"),
               "MEMCITE_CACHE_DIR": os.path.join(folder, "cache"),
               "CODEX_HOME": os.path.join(folder, "codex"),
               "PYTHONPYCACHEPREFIX": os.path.join(folder, "pycache")}
        env.pop("MEMCITE_NO_FASTPATH", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if args.no_fastpath:
            env["MEMCITE_NO_FASTPATH"] = "1"
        replies = []
        for n in range(args.runs + 1):
            path = os.path.join(folder, f"reply{n}.txt")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(typical_reply(n))
            replies.append(path)
        memcite = memcite_command()
        commands = {
            "pass": lambda n: [sys.executable, "-c", "pass"],
            "strip": lambda n: [*memcite, "strip", replies[0]],
            "record": lambda n: [*memcite, "record", replies[n]],
            "hook stop": lambda n: [*memcite, "hook", "stop"],
        }
        stdin = {"hook stop": b"{}"}
        for name in ("strip", "record", "hook stop"):  # bytecode, tables, the database: all made
            run(commands[name](args.runs), env, stdin.get(name))
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        names = list(commands)
        for n in range(args.runs):
            turn = n % len(names)
            for name in names[turn:] + names[:turn]:
                elapsed, cpu = run(commands[name](n), env, stdin.get(name))
                walls[name].append(elapsed)
                cpus[name].append(cpu)
    wall = {name: statistics.median(values) for name, values in walls.items()}
    cpu = {name: statistics.median(values) for name, values in cpus.items()}
    print(f"python -c pass           wall {wall['pass'] * 1e3:6.1f} ms, cpu {cpu['pass'] * 1e3:6.1f} ms"
          f"  (medians of {args.runs}, interleaved)")
    failed = 0
    for name, target in (("strip", 3), ("record", 4), ("hook stop", 4)):
        ratio = wall[name] / wall["pass"]
        ok = ratio <= target
        failed += not ok
        print(f"cold `memcite {name:<9}`  wall {wall[name] * 1e3:6.1f} ms = {ratio:4.2f}x"
              f"  (target <= {target}x)  {'ok  ' if ok else 'MISS'}"
              f"  cpu {cpu[name] * 1e3:6.1f} ms = {cpu[name] / cpu['pass']:4.2f}x")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
