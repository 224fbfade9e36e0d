"""memcite's default locations: each resolved in this one place, and resolving creates nothing.

Light on purpose (no platformdirs import): the per-reply commands and the lark
reader use it. The folders are platformdirs' for an app named ``memcite`` with
no author (``tests/test_instructions.py`` and ``tests/test_cli_ledger.py``
compare them on Linux):

- cache: ``$MEMCITE_CACHE_DIR``, else ``$XDG_CACHE_HOME/memcite`` (an absolute
  path only) or ``~/.cache/memcite`` on Linux, ``~/Library/Caches/memcite`` on
  macOS, ``%LOCALAPPDATA%\\memcite\\Cache`` on Windows;
- data: ``$MEMCITE_HOME``, else ``$XDG_DATA_HOME/memcite`` (absolute only) or
  ``~/.local/share/memcite`` on Linux, ``~/Library/Application Support/memcite``
  on macOS, ``%LOCALAPPDATA%\\memcite`` on Windows;
- the database: ``--db``, else ``$MEMCITE_DB``, else ``memcite.sqlite`` in the data folder;
- the Codex home: ``--codex-home``, else ``$CODEX_HOME``, else ``~/.codex``;
- the hook log: ``logs/hooks.log`` in the data folder (created by the first hook run).

``~`` is expanded in every value, whether it came from an option or the environment.
"""

from __future__ import annotations

import os
import sys

DB_FILE_NAME = "memcite.sqlite"
HOOK_LOG_NAME = os.path.join("logs", "hooks.log")
APP_NAME = "memcite"


def _expand(path: str) -> str:
    return os.path.expanduser(path)


def _xdg(environ, name: str, default: str) -> str:
    """``$name`` when it is an absolute path (the XDG rule: a relative one is ignored), else ``~/default``."""
    value = environ.get(name, "")
    return value if os.path.isabs(value) else os.path.join(_expand("~"), default)


def _windows_local_appdata(environ) -> str:
    return environ.get("LOCALAPPDATA") or os.path.join(_expand("~"), "AppData", "Local")


def user_cache_dir(environ=os.environ) -> str:
    """The folder memcite may write caches to (created only when something is cached)."""
    override = environ.get("MEMCITE_CACHE_DIR")
    if override:
        return _expand(override)
    if sys.platform == "darwin":
        return os.path.join(_expand("~"), "Library", "Caches", APP_NAME)
    if os.name == "nt":
        return os.path.join(_windows_local_appdata(environ), APP_NAME, "Cache")
    return os.path.join(_xdg(environ, "XDG_CACHE_HOME", ".cache"), APP_NAME)


def user_data_dir(environ=os.environ) -> str:
    """The folder of memcite's default database (created only by a command that writes to it)."""
    override = environ.get("MEMCITE_HOME")
    if override:
        return _expand(override)
    if sys.platform == "darwin":
        return os.path.join(_expand("~"), "Library", "Application Support", APP_NAME)
    if os.name == "nt":
        return os.path.join(_windows_local_appdata(environ), APP_NAME)
    return os.path.join(_xdg(environ, "XDG_DATA_HOME", os.path.join(".local", "share")), APP_NAME)


def resolve_db_path(db: str | os.PathLike | None = None, environ=os.environ) -> str:
    """The database a command uses: ``db`` (``--db``), else ``$MEMCITE_DB``, else the data folder's."""
    if db:
        return _expand(os.fspath(db))
    if environ.get("MEMCITE_DB"):
        return _expand(environ["MEMCITE_DB"])
    return os.path.join(user_data_dir(environ), DB_FILE_NAME)


def default_db_folder(db: str | os.PathLike | None = None, environ=os.environ) -> str | None:
    """The data folder when the database is the default one in it (a writer may create it), else None.

    A database named with ``--db`` or ``$MEMCITE_DB`` is the user's choice: its
    folder must exist already, so that a typo is an error rather than a new tree.
    """
    if db or environ.get("MEMCITE_DB"):
        return None
    return user_data_dir(environ)


def resolve_codex_home(codex_home: str | os.PathLike | None = None, environ=os.environ) -> str:
    """Codex's home: ``codex_home`` (``--codex-home``), else ``$CODEX_HOME``, else ``~/.codex``."""
    if codex_home:
        return _expand(os.fspath(codex_home))
    if environ.get("CODEX_HOME"):
        return _expand(environ["CODEX_HOME"])
    return _expand(os.path.join("~", ".codex"))


def hook_log_path(environ=os.environ) -> str:
    """memcite's own log of its Codex hook runs (rotated, bounded), in the data folder."""
    return os.path.join(user_data_dir(environ), HOOK_LOG_NAME)
