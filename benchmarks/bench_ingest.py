"""Ingesting one rollout file, then ingesting it again (nothing new), as a ratio.

    python benchmarks/bench_ingest.py [--turns 1500] [--rounds 5] [--form legacy|paginated|both]
        [--cli [--no-fastpath]]

Target (issue 15, issue 32): re-ingesting a file whose replies are all recorded costs at
most 1/4 of the first ingest, in both of Codex's forms: the legacy one (a recorded key is
skipped unparsed) and the paginated one (Codex 0.169 on: ``codex migrate-rollouts`` output
here, where each recorded reply's text used to be parsed and hashed again on every read).
Each round takes a fresh database and ingests the same rollout (two replies a turn, one
of them citing a memory) twice, first and again, so the two kinds of run interleave;
their medians (and the best of each) are compared. The file is written, then left
``SETTLED_NS`` (2 s) before the first round, as a finished session file is: a file
changed just before a read is never noted as read (``memcite.ledger.ingest_checks``).

``--cli`` times the command a person runs instead, ``python -m memcite ingest FILE`` as a
real process (start-up included; ``ingest`` is on the fast path), first and again per round,
interleaved the same way; ``--no-fastpath`` sends it through Typer (``MEMCITE_NO_FASTPATH``).
"""

from __future__ import annotations

import argparse
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
    memory_folder,
    paginate,
    session_bytes,
    session_id,
    session_path,
    write_session,
)
from memcite.ledger.ingest import ingest_rollout  # noqa: E402

try:  # PYTHONPATH=OTHER/src runs an older memcite, for a before/after comparison
    from memcite.ledger.ingest_checks import SETTLED_NS
except ImportError:
    SETTLED_NS = 0
from memcite.ledger.store import open_store  # noqa: E402


def _median(values: list[float]) -> float:
    values = sorted(values)
    return values[len(values) // 2]


def _timed(conn, path: Path, root: Path):
    start = time.perf_counter()
    report = ingest_rollout(conn, path, memory_root=root)
    return time.perf_counter() - start, report


def _timed_cli(db: Path, path: Path, home: Path, fastpath: bool):
    env = {**os.environ, "MEMCITE_DB": str(db), "CODEX_HOME": str(home),
           "MEMCITE_NO_FASTPATH": "" if fastpath else "1"}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "memcite", "ingest", str(path)],
                          capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    assert done.returncode == 0, done.stderr.decode()
    return elapsed, done.stdout.decode()


def _measure(work: Path, path: Path, root: Path, rounds: int, form: str,
             cli: bool = False, fastpath: bool = True) -> None:
    first_times: list[float] = []
    again_times: list[float] = []
    replies = None
    for number in range(rounds + 1):  # round 0 warms the caches, not counted
        if cli:
            db = work / f"ledger-cli-{form}{number}.sqlite"
            first, said = _timed_cli(db, path, root.parent, fastpath)
            again, said_again = _timed_cli(db, path, root.parent, fastpath)
            replies = said.split(": ", 1)[1].split(" ", 1)[0]
            assert f"0 recorded, {replies} already recorded" in said_again, said_again
        else:
            conn = open_store(work / f"ledger-{form}{number}.sqlite")
            first, report = _timed(conn, path, root)
            again, repeat = _timed(conn, path, root)
            conn.close()
            replies = report.replies
            assert report.recorded == replies and repeat.duplicates == replies \
                and repeat.recorded == 0, (report.to_dict(), repeat.to_dict())
        if number:
            first_times.append(first)
            again_times.append(again)
    first, again = _median(first_times), _median(again_times)
    how = (f"`python -m memcite ingest FILE`, {'fast path' if fastpath else 'through Typer'}"
           if cli else "the library")
    print(f"{form} rollout: {path.stat().st_size / 2**20:.1f} MB, {replies} replies; "
          f"median of {rounds} rounds, fresh databases, {how}")
    print(f"  first ingest     {first * 1000:8.1f} ms")
    print(f"  re-ingest        {again * 1000:8.1f} ms  = {again / first:.3f} of the first"
          f" (best {min(again_times) / min(first_times):.3f})   (target <= 0.25)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--form", choices=("legacy", "paginated", "both"), default="both")
    parser.add_argument("--cli", action="store_true",
                        help="time `python -m memcite ingest FILE` as a real process")
    parser.add_argument("--no-fastpath", action="store_true",
                        help="with --cli: through Typer (MEMCITE_NO_FASTPATH=1)")
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="memcite-bench-ingest-"))
    try:
        home = work / "codex"
        root = memory_folder(home)
        files = {}
        if options.form in ("legacy", "both"):
            files["legacy"] = write_session(home, session_id(1), options.turns)
        if options.form in ("paginated", "both"):
            path = session_path(home, session_id(2), day=21)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(paginate(session_bytes(session_id(2), options.turns)))
            files["paginated"] = path
        time.sleep(SETTLED_NS / 1e9 + 0.1)
        for form, path in files.items():
            _measure(work, path, root, options.rounds, form, cli=options.cli,
                     fastpath=not options.no_fastpath)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
