"""The Stop hook's look at the memory folder, before any snapshot is taken: kept apart from
``memcite.ledger.snapshots`` so that a turn whose folder did not change imports this small
module only (one small file read; the stamp itself is the caller's few ``lstat`` calls)."""

from __future__ import annotations

import os

STAMP_FILE = "snapshot-stamps.json"  # the Stop hook's last look, per memory folder
MAX_STAMP_BYTES = 256 * 1024


def stamps_path(db_path: str) -> str:
    """Where the looks of the ledger ``db_path`` are kept (beside it)."""
    return os.path.join(os.path.dirname(os.path.abspath(db_path)), STAMP_FILE)


def read_stamps(path: str) -> dict:
    """A small JSON object memcite keeps ({} when none, too large, or not an object)."""
    from memcite.untrusted import loads_json, open_regular

    try:
        fd = open_regular(path)
    except OSError:
        return {}
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_STAMP_BYTES + 1)
    try:
        found = loads_json(data) if len(data) <= MAX_STAMP_BYTES else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def unchanged(db_path: str, memory_folder: str, stamp: str) -> bool:
    """Whether ``stamp`` is the one the folder had at the last look (nothing to do)."""
    return read_stamps(stamps_path(db_path)).get(memory_folder) == stamp


__all__ = ["STAMP_FILE", "read_stamps", "stamps_path", "unchanged"]
