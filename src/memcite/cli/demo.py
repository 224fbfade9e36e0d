"""The body of ``memcite demo``: the folder to run in (a new temporary one, or ``--keep``'s),
the loop (``memcite.demo.loop.run_demo``), and the closing lines; returns the exit code."""

from __future__ import annotations

import shutil
import sys
import tempfile

from memcite.demo.loop import closing_text, kept_folder, run_demo, wait_for_background_work
from memcite.errors import MemciteError


def demo_command(keep: str | None = None, *, now: int | None = None) -> int:
    """``memcite demo``: run the loop in a temporary folder (or ``keep``) and print it."""
    import time

    now = int(time.time()) if now is None else now
    try:
        folder = kept_folder(keep) if keep is not None else tempfile.mkdtemp(prefix="memcite-demo-")
        try:
            run_demo(folder, now=now)
        finally:
            wait_for_background_work()  # an interrupted run's hook step may have left one
            if keep is None:
                shutil.rmtree(folder, ignore_errors=True)
    except MemciteError as error:
        sys.stderr.write(f"memcite: error: {error}\n")
        return error.exit_code
    sys.stdout.write(closing_text(folder, kept=keep is not None))
    return 0
