"""Two steps every durable write of a person's files shares: folders created private, and a
folder's entry synced after a rename (see docs/memory-layout.md on modes and atomic writes)."""

from __future__ import annotations

import os


def make_private_folders(folder: str) -> None:
    """``os.makedirs``, but every folder it creates is 0700 whatever the umask (``makedirs``
    gives only the last one the mode): these folders hold a person's memories."""
    if os.path.isdir(folder):
        return
    make_private_folders(os.path.dirname(folder))
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass


def fsync_folder(folder: str) -> None:
    """Sync a folder so that a rename in it survives a crash (best effort: some file systems
    refuse; the file's own data was synced before)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
