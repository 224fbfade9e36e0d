"""Coverage-guided fuzzing of memcite's config file (``[retention]``) with atheris.

Each input is a config file, loaded and resolved into settings as ``memcite stats``
does, both as memcite's config and as Codex's ``config.toml``. The harness fails on any exception other than memcite's own errors (a clear
message for a bad file).
"""

from __future__ import annotations

import os
import sys
import tempfile

import atheris

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _harness import main  # noqa: E402

with atheris.instrument_imports():
    from memcite.errors import MemciteError
    from memcite.retention.rules import (
        load_codex_memories_config,
        load_memcite_config,
        resolve_settings,
    )

WORK = tempfile.mkdtemp(prefix="memcite-fuzz-config-")
CONFIG = os.path.join(WORK, "config.toml")


def check_one_input(data: bytes) -> None:
    with open(CONFIG, "wb") as handle:
        handle.write(data)
    for rule in ("memcite", "codex"):
        try:  # as memcite's config, then as Codex's config.toml (the same file name)
            resolve_settings(None, load_memcite_config(CONFIG), {}, rule=rule)
        except MemciteError:
            pass
        try:
            resolve_settings(None, {}, load_codex_memories_config(WORK), rule=rule)
        except MemciteError:
            pass


SEEDS = [b"[retention]\nmax_unused_days = 30\n", b"[retention]\nmax_unused_days = -1\n",
         b"[retention]\nmax_unused_days = 'x'\n", b"retention = 5\n", b"a = [[[[[[1]]]]]]\n",
         b"[retention]\nmax_unused_days = 1e400\n", b"\xff\xfe"]

if __name__ == "__main__":
    main(__file__, check_one_input, SEEDS, "Fuzz memcite's config file with atheris.")
