"""Coverage-guided fuzzing of cited-path resolution (the memory root) with atheris.

Each input is a cited path (UTF-8, bad bytes kept as surrogates: what a reply or an
ingest can carry, NUL bytes included), resolved in a memory folder whose links lead
inside and out. The harness fails on any exception, on an ``ok`` that names a file
outside the folder, and on any read of the planted outside file.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile

import atheris

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _harness import main  # noqa: E402

with atheris.instrument_imports():
    from memcite.ledger.memory_files import OUTSIDE, locate
    from memcite.ledger.recording import MemoryFiles
    from memcite.retention.checks import MemoryFolder, check_entry

WORK = tempfile.mkdtemp(prefix="memcite-fuzz-paths-")
ROOT = os.path.join(WORK, "memories")
SECRET = b"SECRET planted outside\n"


def _build_tree() -> None:
    os.makedirs(os.path.join(ROOT, "sub", "deep"))
    os.makedirs(os.path.join(WORK, "outside", "sub"))
    for name, data in (("MEMORY.md", b"# M\none\n"), ("sub/n.md", b"inside\n"),
                       ("sub/deep/x.md", b"x\n")):
        with open(os.path.join(ROOT, name), "wb") as handle:
            handle.write(data)
    for name in ("outside/secret.md", "outside/sub/n.md"):
        with open(os.path.join(WORK, name), "wb") as handle:
            handle.write(SECRET)
    links = {"in.md": "MEMORY.md", "up.md": "sub/../MEMORY.md", "sub/back": "..",
             "abs.md": os.path.join(ROOT, "MEMORY.md"), "out.md": "../outside/secret.md",
             "outdir": os.path.join(WORK, "outside", "sub"), "loop": "loop",
             "sub/deep/esc": "../../../outside"}
    for name, target in links.items():
        os.symlink(target, os.path.join(ROOT, name))
    os.mkfifo(os.path.join(ROOT, "fifo.md"))


_build_tree()
REAL_ROOT = os.path.realpath(ROOT)
SECRET_HASH = hashlib.sha256(SECRET.rstrip(b"\n")).hexdigest()
FOLDER = MemoryFolder(ROOT)
FILES = MemoryFiles(ROOT)


def check_one_input(data: bytes) -> None:
    path = data.decode("utf-8", "surrogateescape")
    outcome, real = locate(REAL_ROOT, path)
    assert outcome in ("ok", OUTSIDE, "missing"), outcome
    if real is not None:
        assert real.startswith(REAL_ROOT + os.sep), f"ok outside the root: {real}"
    assert FILES.lines_sha256(path, 1, 1) != SECRET_HASH, "the outside file was read"
    assert check_entry(FOLDER, path, 1, 1, SECRET_HASH) != "ok", "the outside file was read"


SEEDS = [b"MEMORY.md", b"in.md", b"up.md", b"sub/back/MEMORY.md", b"abs.md", b"out.md",
         b"outdir/n.md", b"loop", b"sub/deep/esc/secret.md", b"fifo.md", b"../x", b"/etc/passwd",
         b"C:\\x.md", b"MEM\x00ORY.md", b"sub/./n.md", b"sub\\n.md", b"\xff\xfe.md"]

if __name__ == "__main__":
    main(__file__, check_one_input, SEEDS, "Fuzz memcite's cited-path resolution with atheris.")
