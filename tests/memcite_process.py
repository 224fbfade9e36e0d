"""``python -m memcite`` as a real process, for the tests where the CLI itself is under test
(exit codes, stdout/stderr bytes, signals, the fast path, start-up).

The environment is the test's own world (``os.environ`` as ``isolated_world`` left it) with
``env`` laid over it, so a run never sees the developer's HOME, ~/.codex or MEMCITE_* values.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import NamedTuple


class Ran(NamedTuple):
    """What one run gave back: exit code, stdout bytes, stderr text."""

    code: int
    stdout: bytes
    stderr: str


def run_memcite(args, env: dict | None = None, stdin: bytes = b"", timeout: float = 60,
                **popen) -> Ran:
    """Run ``python -m memcite ARGS`` with the test's environment plus ``env``."""
    done = subprocess.run([sys.executable, "-m", "memcite", *args], input=stdin,
                          capture_output=True, env={**os.environ, **(env or {})},
                          timeout=timeout, **popen)
    return Ran(done.returncode, done.stdout, done.stderr.decode("utf-8", "replace"))
