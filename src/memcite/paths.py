"""memcite's documented default locations, resolved without importing platformdirs (hot path).

Cache: ``$MEMCITE_CACHE_DIR``, else the platform's user cache folder
(``$XDG_CACHE_HOME/memcite`` or ``~/.cache/memcite`` on Linux,
``~/Library/Caches/memcite`` on macOS, ``%LOCALAPPDATA%\\memcite\\Cache`` on Windows),
the same folders platformdirs would give.
"""

from __future__ import annotations

import os
import sys


def user_cache_dir() -> str:
    """The folder memcite may write caches to (it is created only when something is cached)."""
    override = os.environ.get("MEMCITE_CACHE_DIR")
    if override:
        return override
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~"), "Library", "Caches", "memcite")
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~")
        return os.path.join(base, "memcite", "Cache")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memcite")
