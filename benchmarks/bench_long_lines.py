"""The read path on one long line: time per byte from 10 KB to 1 MB, without spaces and with.

    .venv/bin/python benchmarks/bench_long_lines.py [--runs 5] [--sizes 10000,100000,1000000]
        [--rev REV [--rev-timeout 60]]

Each case is one ``build_instructions`` call (no cache; the tokenizer loaded beforehand,
as a warm process has it) on a Codex home whose project note holds the line as an entry
(with provenance lines), or whose ``memory_summary.md`` holds it: profile ``memcite`` with
tokenizers ``approx`` and ``o200k_base`` (note and summary), profile ``codex`` with both
(summary; it reads no note). Lines: ``letters`` (random a-z, no space: one piece for the
tokenizer), ``symbols`` (letters, digits and ``_-./~``, no space: what a digest's patterns
look at) and ``words`` (the same letters with spaces, for comparison). Printed per case:
the median seconds, microseconds per byte of the line, and how per-byte time grows from
the smallest size to the largest; the check is that it grows at most 3x. Beside it, the
growth of the tokenizer's own encoding of the line alone: tiktoken's BPE of one long piece
is itself slower per byte the longer the piece (the read path encodes the whole note a
few times to count its tokens exactly), so a case over 3x is reported as memcite's (MISS)
only when it grows more than 3x the encoding's own growth.

The measurements run in worker processes, one per source tree (this one, and with ``--rev
REV`` memcite's ``src`` at git revision REV, exported with ``git archive``), and the rounds
interleave every case of every tree, the order turning round each round. With ``--rev``,
the outputs of the two trees are compared (a hash of the instructions and the token
counts) and a case of the old tree taking longer than ``--rev-timeout`` seconds is stopped
there and its larger sizes skipped. Everything is written under a temporary folder.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import select
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GROWTH_LIMIT = 3.0
KINDS = ("letters", "symbols", "words")
CASES = [  # (profile, tokenizer, where)
    ("memcite", "approx", "note"),
    ("memcite", "o200k_base", "note"),
    ("memcite", "approx", "summary"),
    ("memcite", "o200k_base", "summary"),
    ("codex", "approx", "summary"),
    ("codex", "o200k_base", "summary"),
]


def make_line(kind: str, size: int) -> str:
    rng = random.Random(size)
    if kind == "letters":
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(size))
    if kind == "symbols":
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyzXYZ019_-./~") for _ in range(size))
    words, total = [], 0
    while total < size:
        word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
        words.append(word)
        total += len(word) + 1
    return " ".join(words)[:size]


def make_home(folder: Path, line: str, where: str) -> tuple[str, str]:
    """A Codex home and a project with ``line`` in the project note or in the summary."""
    sys.path.insert(0, str(ROOT / "src"))
    from memcite.readpath.projects import find_project_root, project_note_path, project_slug

    home, project = folder / "codex", folder / "project"
    (project / ".git").mkdir(parents=True)
    (home / "memories").mkdir(parents=True)
    summary = "v1\n\n## User Profile\n\nWorks on a payments API.\n"
    if where == "summary":
        summary += f"\n## Notes\n\n{line}\n"
    (home / "memories" / "memory_summary.md").write_text(summary, encoding="utf-8")
    canonical = find_project_root(str(project))
    note = Path(project_note_path(str(home), project_slug(canonical)))
    note.parent.mkdir(parents=True)
    entry = line if where == "note" else "Run make test before tagging."
    note.write_text(f"# Project memory\n\nProject: {canonical}\nUpdated: 2026-03-01\n\n"
                    f"## Durable decisions\n\n- [a1b2c3] {entry}\n  Topic: long\n  Date: 2026-03-01\n"
                    f"  Source: bench\n", encoding="utf-8")
    return str(home), str(project)


# --------------------------------------------------------------------------- the worker


def worker() -> None:
    """Answer one JSON line per request on stdin: a timed ``build_instructions`` or encode."""
    from memcite.readpath.instructions import build_instructions
    from memcite.readpath.tokens import get_tokenizer

    tokenizers = {name: get_tokenizer(name) for name in ("approx", "o200k_base")}
    for raw in sys.stdin:
        request = json.loads(raw)
        tokenizer = tokenizers[request["tokenizer"]]
        if request["op"] == "encode":
            text = Path(request["file"]).read_text(encoding="utf-8")
            start = time.perf_counter()
            tokenizer.count(text)
            answer = {"seconds": time.perf_counter() - start}
        else:
            start = time.perf_counter()
            result = build_instructions(
                os.path.join(request["home"], "memories"), profile=request["profile"],
                tokenizer_name=request["tokenizer"], load_tokenizer=lambda t=tokenizer: t,
                codex_home=request["home"], cwd=request["cwd"], today="2026-03-02")
            seconds = time.perf_counter() - start
            shown = (result.instructions or "").encode("utf-8", "surrogatepass")
            answer = {"seconds": seconds, "used": result.used, "truncated": result.truncated,
                      "output": hashlib.sha256(shown).hexdigest()[:16]}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


class Worker:
    """A worker process on one source tree; a request past ``timeout`` seconds stops it."""

    def __init__(self, source: str, timeout: float | None) -> None:
        self.source, self.timeout = source, timeout
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": self.source}
        self.process = subprocess.Popen([sys.executable, __file__, "--worker"], env=env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def ask(self, request: dict) -> dict | None:
        """The answer, or None when it took longer than the timeout (the worker is restarted)."""
        if self.process is None:
            self.start()
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], self.timeout)
        if not ready:
            self.stop()
            return None
        return json.loads(self.process.stdout.readline())

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


def export_revision(revision: str, folder: str) -> str:
    """memcite's ``src`` at ``revision``, unpacked under ``folder``; the folder to put on the path."""
    archive = os.path.join(folder, "rev.tar")
    subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "-o", archive, revision, "src"],
                   check=True)
    target = os.path.join(folder, "rev")
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    return os.path.join(target, "src")


# --------------------------------------------------------------------------- the report


def growth(per_byte: dict[int, float], sizes: list[int]) -> float | None:
    first, last = per_byte.get(sizes[0]), per_byte.get(sizes[-1])
    return last / first if first and last else None


def report(trees: list[str], sizes: list[int], times: dict, encodes: dict, outputs: dict,
           skipped: dict, runs: int) -> bool:
    ok = True
    print(f"medians of {runs} interleaved runs; seconds (microseconds per byte of the line)")
    header = "  ".join(f"{size // 1000:>7} KB{'':7}" for size in sizes)
    for tree in trees:
        print(f"\n== {tree}")
        print(f"  {'profile':<8} {'tokenizer':<11} {'line in':<8} {'line':<8} {header}  growth   encode alone")
        for profile, tokenizer, where in CASES:
            for kind in KINDS:
                key = (tree, profile, tokenizer, where, kind)
                cells, per_byte = [], {}
                for size in sizes:
                    samples = times.get((*key, size))
                    if samples:
                        seconds = statistics.median(samples)
                        per_byte[size] = seconds / size * 1e6
                        cells.append(f"{seconds:8.4f} ({per_byte[size]:5.3f})")
                    elif (*key, size) in skipped:
                        cells.append(f"{f'> {skipped[(*key, size)]:.0f} s, stopped':>16}")
                    else:
                        cells.append(f"{'-':>16}")
                rise = growth(per_byte, sizes)
                encode = {size: statistics.median(encodes[(tree, tokenizer, kind, size)]) / size * 1e6
                          for size in sizes if encodes.get((tree, tokenizer, kind, size))}
                floor = growth(encode, sizes) if tokenizer != "approx" else None
                verdict = ""
                if rise is not None and tree == trees[0]:
                    if rise <= GROWTH_LIMIT:
                        verdict = "ok"
                    elif floor is not None and rise <= GROWTH_LIMIT * max(floor, 1.0):
                        verdict = "over 3x, as the tokenizer's encoding is"
                    else:
                        verdict, ok = "MISS", False
                grown = f"{rise:5.2f}x" if rise is not None else "    -"
                alone = f"{floor:5.2f}x" if floor is not None else "    -"
                print(f"  {profile:<8} {tokenizer:<11} {where:<8} {kind:<8} {'  '.join(cells)}  {grown}   "
                      f"{alone}  {verdict}")
    if len(trees) > 1:
        same = differ = 0
        for (tree, *rest), answer in outputs.items():
            if tree != trees[0]:
                continue
            other = outputs.get((trees[1], *rest))
            if other is not None:
                if other == answer:
                    same += 1
                else:
                    differ += 1
                    print(f"  output differs: {rest}: {answer} vs {other}")
        print(f"\noutputs of both trees: {same} cases the same, {differ} different")
        ok = ok and differ == 0
    print(f"\nper-byte growth from {sizes[0] // 1000} KB to {sizes[-1] // 1000} KB within "
          f"{GROWTH_LIMIT:.0f}x: {'ok' if ok else 'MISS'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="rounds (each runs every case once)")
    parser.add_argument("--sizes", default="10000,100000,1000000", help="line sizes in bytes")
    parser.add_argument("--rev", metavar="REV", help="also measure memcite's source at this git revision")
    parser.add_argument("--rev-timeout", type=float, default=60.0,
                        help="seconds after which a case of --rev is stopped (its larger sizes skipped)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker()
        return 0
    sizes = sorted(int(size) for size in args.sizes.split(","))
    print(f"python {sys.version.split()[0]} on {sys.platform}")
    with tempfile.TemporaryDirectory(prefix="memcite-bench-long-lines-") as folder:
        workers = {"this tree": Worker(str(ROOT / "src"), None)}
        if args.rev:
            workers[f"@ {args.rev}"] = Worker(export_revision(args.rev, folder), args.rev_timeout)
        trees = list(workers)
        requests = []
        for kind in KINDS:
            for size in sizes:
                line = make_line(kind, size)
                line_file = Path(folder) / f"{kind}-{size}.txt"
                line_file.write_text(line, encoding="utf-8")
                for tokenizer in ("o200k_base",):
                    requests.append(({"op": "encode", "tokenizer": tokenizer, "file": str(line_file)},
                                     ("encode", tokenizer, kind, size)))
                for where in ("note", "summary"):
                    home, cwd = make_home(Path(folder) / f"{kind}-{size}-{where}", line, where)
                    for profile, tokenizer, case_where in CASES:
                        if case_where == where:
                            requests.append(({"op": "build", "home": home, "cwd": cwd, "profile": profile,
                                              "tokenizer": tokenizer},
                                             ("build", profile, tokenizer, where, kind, size)))
        times: dict = {}
        encodes: dict = {}
        outputs: dict = {}
        skipped: dict = {}
        for turn in range(args.runs):
            order = requests[turn % len(requests):] + requests[:turn % len(requests)]
            for request, (op, *key) in order:
                for tree in trees[turn % len(trees):] + trees[:turn % len(trees)]:
                    if op == "build" and any((tree, *key[:-1], size) in skipped
                                             for size in sizes if size <= key[-1]):
                        continue
                    answer = workers[tree].ask(request)
                    if answer is None:
                        skipped[(tree, *key)] = args.rev_timeout
                        continue
                    if op == "encode":
                        encodes.setdefault((tree, *key), []).append(answer["seconds"])
                    else:
                        times.setdefault((tree, *key), []).append(answer["seconds"])
                        outputs[(tree, *key)] = (answer["used"], answer["truncated"], answer["output"])
            print(f"round {turn + 1}/{args.runs} done", file=sys.stderr)
        for each in workers.values():
            each.stop()
    return 0 if report(trees, sizes, times, encodes, outputs, skipped, args.runs) else 1


if __name__ == "__main__":
    sys.exit(main())
