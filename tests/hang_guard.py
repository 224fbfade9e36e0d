"""``no_hang``: a guard for the tests of linear-time fixes, shared by them (imported by name,
as tests/plain_reader.py is). A guard against a hang, not a speed target: speed lives in
benchmarks/."""

from __future__ import annotations

import contextlib
import signal

HANG_SECONDS = 20


@contextlib.contextmanager
def no_hang(seconds: int = HANG_SECONDS):
    """Fail (instead of waiting for ever) when the body takes more than ``seconds``."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def stop(signum, frame):
        raise TimeoutError(f"still running after {seconds} s: quadratic again?")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
