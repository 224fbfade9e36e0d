"""One temporary folder per test run, shared by every process of the run (pytest-xdist's
workers inherit it from the process that started them), and a lock to take in it.

The first process of a run (the controller, or pytest alone) makes the folder and names it in
``MEMCITE_TEST_RUN_DIR``; the workers it starts inherit the variable and find the same folder.
What is started once per run lives here (the fleet tests' PostgreSQL, the note that the Codex
CLI was checked), and so do the per-process caches: the process that made the folder stops
what is left running and removes it at the end (``conftest.py``'s ``pytest_unconfigure``).
"""

from __future__ import annotations

import contextlib
import os
import tempfile

_VARIABLE = "MEMCITE_TEST_RUN_DIR"

OWNER = not os.environ.get(_VARIABLE)
if OWNER:
    os.environ[_VARIABLE] = tempfile.mkdtemp(prefix="memcite-test-run-")
    # Traversable by the PostgreSQL server's own user (pg_server.py runs it as postgres).
    os.chmod(os.environ[_VARIABLE], 0o711)
RUN_DIR = os.environ[_VARIABLE]


@contextlib.contextmanager
def locked(path: str):
    """Hold an exclusive lock on the file ``path`` (made if missing) across processes."""
    import fcntl

    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
