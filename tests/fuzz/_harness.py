"""What every memcite atheris harness shares: run libFuzzer in a child on a temporary corpus
seeded from the harness's seeds, or replay given inputs; new inputs never go to corpus/.

    python tests/fuzz/fuzz_X.py --seconds 10      # fuzz for ten seconds
    python tests/fuzz/fuzz_X.py crash-<hash>      # replay one input
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable

import atheris


def main(script: str, check_one_input: Callable[[bytes], None], seeds: Iterable[bytes],
         description: str) -> None:
    """Fuzz ``check_one_input`` (any exception is a finding), seeded with ``seeds``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seconds", type=int, default=0,
                        help="fuzz for this long (0: until stopped)")
    args, libfuzzer_args = parser.parse_known_args()
    paths = [a for a in libfuzzer_args if not a.startswith("-")]
    if paths:  # the child fuzzing a corpus folder ("-" marks it), or a replay of given inputs
        atheris.Setup([sys.argv[0], *(a for a in libfuzzer_args if a != "-")], check_one_input)
        atheris.Fuzz()
        return
    # libFuzzer ends the process when it is done, so it runs in a child and this
    # process removes the temporary corpus afterwards.
    work = tempfile.mkdtemp(prefix="memcite-fuzz-")
    try:
        for number, seed in enumerate(seeds):
            with open(os.path.join(work, f"seed-{number}"), "wb") as handle:
                handle.write(seed)
        options = [f"-max_total_time={args.seconds}"] if args.seconds else []
        done = subprocess.run([sys.executable, script, *options, *libfuzzer_args, "-", work])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(done.returncode)
