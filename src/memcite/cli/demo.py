"""The body of ``memcite demo``: the folder to run in (a new temporary one, or ``--keep``'s),
the loop (``memcite.demo.loop.run_demo``), and the closing lines; returns the exit code."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

from memcite.demo.loop import demo_paths, demo_projects, kept_folder, run_demo, wait_for_background_work
from memcite.errors import MemciteError


def demo_command(keep: str | None = None, *, now: int | None = None) -> int:
    """``memcite demo``: run the loop in a temporary folder (or ``keep``) and print it."""
    import shlex
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
    if keep is None:
        sys.stdout.write("\ndone (the temporary folder was removed).\n")
        return 0
    exports = " ".join(f"{name}={shlex.quote(path)}" for name, path in demo_paths(folder).items())
    project = os.path.join(demo_projects(folder), "infra")  # where the newest session ran
    sys.stdout.write(f"\ndone (kept in {folder}). To point later commands at the demo's "
                     f"Codex home, database, cache and data folder:\n\n  export {exports}\n\n"
                     "then go into the project folder the newest session ran in, and ask what "
                     "memory did there and whether Codex consolidates:\n\n"
                     f"  cd {shlex.quote(project)}\n  memcite thread --last\n"
                     "  memcite consolidation\n"
                     "  memcite report   (the whole report as one HTML page)\n\n"
                     "or: memcite stats; memcite select; memcite prune\n")
    return 0
