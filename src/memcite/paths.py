"""memcite's default locations: each resolved in this one place, and resolving creates nothing.

Light on purpose (no platformdirs import): the per-reply commands and the lark
reader use it. The folders are platformdirs' for an app named ``memcite`` with
no author (``tests/readpath/test_instructions.py`` and ``tests/ledger/test_cli_ledger.py``
compare them on Linux):

- cache: ``$MEMCITE_CACHE_DIR``, else ``$XDG_CACHE_HOME/memcite`` (an absolute
  path only) or ``~/.cache/memcite`` on Linux, ``~/Library/Caches/memcite`` on
  macOS, ``%LOCALAPPDATA%\\memcite\\Cache`` on Windows;
- data: ``$MEMCITE_HOME``, else ``$XDG_DATA_HOME/memcite`` (absolute only) or
  ``~/.local/share/memcite`` on Linux, ``~/Library/Application Support/memcite``
  on macOS, ``%LOCALAPPDATA%\\memcite`` on Windows;
- the database: ``--db``, else ``$MEMCITE_DB``, else ``memcite.sqlite`` in the data folder;
- the Codex home: ``--codex-home``, else ``$CODEX_HOME``, else ``~/.codex``;
- memcite's config: ``$MEMCITE_CONFIG``, else ``config.toml`` in ``$MEMCITE_HOME``, else
  ``$XDG_CONFIG_HOME/memcite/config.toml`` or ``~/.config/memcite/config.toml``;
- Codex's SQLite home as the environment names it: ``$CODEX_SQLITE_HOME`` (Codex's
  ``sqlite_home`` in its config.toml comes first; ``memcite.ledger.codex_home`` reads it);
- the hook log: ``logs/hooks.log`` in the data folder (created by the first hook run).

``~`` is expanded in every value, whether it came from an option or the environment.

``Locations`` is the one value a command is given: built once at the command line's
boundary from the flags and the environment, it resolves each location when first asked
(so a command that needs no Codex home never looks for one) and knows where each came
from (an option, a variable or the default), so that a message can say so truthfully.
This module is the only code of memcite that reads these environment variables.
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


def memcite_config_path(environ=os.environ) -> str:
    """memcite's config file: ``$MEMCITE_CONFIG``, else ``config.toml`` in ``$MEMCITE_HOME``,
    else in the user config folder (``$XDG_CONFIG_HOME/memcite`` or ``~/.config/memcite``)."""
    if environ.get("MEMCITE_CONFIG"):
        return _expand(environ["MEMCITE_CONFIG"])
    if environ.get("MEMCITE_HOME"):
        return os.path.join(_expand(environ["MEMCITE_HOME"]), "config.toml")
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(_expand("~"), ".config")
    return os.path.join(base, APP_NAME, "config.toml")


def resolve_codex_home(codex_home: str | os.PathLike | None = None, environ=os.environ) -> str:
    """Codex's home: ``codex_home`` (``--codex-home``), else ``$CODEX_HOME``, else ``~/.codex``."""
    if codex_home:
        return _expand(os.fspath(codex_home))
    if environ.get("CODEX_HOME"):
        return _expand(environ["CODEX_HOME"])
    return _expand(os.path.join("~", ".codex"))


def codex_sqlite_home_env(environ=os.environ) -> str | None:
    """``$CODEX_SQLITE_HOME`` as set (Codex's config.toml ``sqlite_home`` comes first)."""
    return environ.get(SQLITE_HOME_VARIABLE) or None


def hook_log_path(environ=os.environ) -> str:
    """memcite's own log of its Codex hook runs (rotated, bounded), in the data folder."""
    return os.path.join(user_data_dir(environ), HOOK_LOG_NAME)


SERVER_SCHEMES = ("postgresql://", "postgres://")
SQLITE_HOME_VARIABLE = "CODEX_SQLITE_HOME"
_unset = object()


def is_server_url(db: str | None) -> bool:
    """True when ``db`` names a fleet server (a PostgreSQL URL) rather than a SQLite file."""
    return bool(db) and db.lower().startswith(SERVER_SCHEMES)


class Located:
    """A location and where it came from: ``origin`` is the option (``--codex-home``), the
    environment variable (``CODEX_HOME``) or ``"default"``."""

    __slots__ = ("path", "origin")

    def __init__(self, path: str, origin: str) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "origin", origin)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Located) and (self.path, self.origin) == (other.path, other.origin))

    def __hash__(self) -> int:
        return hash((self.path, self.origin))

    def __repr__(self) -> str:
        return f"Located({self.path!r}, {self.origin!r})"

    @property
    def given(self) -> bool:
        """True when a person named it (an option or a variable), False for the default."""
        return self.origin != "default"

    @property
    def from_option(self) -> bool:
        return self.origin.startswith("--")

    def describe(self) -> str:
        """Where it came from, for a message: ``given with --codex-home``, ``named by
        CODEX_HOME``, ``the default``."""
        if self.from_option:
            return f"given with {self.origin}"
        if self.given:
            return f"named by {self.origin}"
        return "the default"


class Locations:
    """Where things are for one run: memcite's database, data folder, config and cache, and
    Codex's home and SQLite home as the flags and the environment name them.

    Read-only; each value is resolved when first asked for and then kept. The environment
    is copied when the value is built, so a run sees one world however long it lasts.
    """

    __slots__ = ("_db", "_codex_home", "_environ", "_resolved")

    def __init__(self, db: str | os.PathLike | None = None,
                 codex_home: str | os.PathLike | None = None, environ=None) -> None:
        object.__setattr__(self, "_db", os.fspath(db) if db else None)
        object.__setattr__(self, "_codex_home", os.fspath(codex_home) if codex_home else None)
        object.__setattr__(self, "_environ", dict(os.environ if environ is None else environ))
        object.__setattr__(self, "_resolved", {})

    def __setattr__(self, name, value):
        raise AttributeError("Locations is read-only")

    def __repr__(self) -> str:
        return f"Locations(db={self._db!r}, codex_home={self._codex_home!r})"

    def _once(self, name: str, build):
        found = self._resolved.get(name, _unset)
        if found is _unset:
            found = self._resolved[name] = build()
        return found

    @property
    def environ(self) -> dict:
        """The environment as it was when this value was built (a copy)."""
        return dict(self._environ)

    # ------------------------------------------------------------------ memcite's own

    @property
    def db(self) -> Located:
        """memcite's database: ``--db``, else ``$MEMCITE_DB``, else the data folder's."""
        def build() -> Located:
            if self._db:
                return Located(self._db if is_server_url(self._db) else _expand(self._db), "--db")
            value = self._environ.get("MEMCITE_DB")
            if value:
                return Located(value if is_server_url(value) else _expand(value), "MEMCITE_DB")
            return Located(resolve_db_path(None, self._environ), "default")
        return self._once("db", build)

    @property
    def db_path(self) -> str:
        return self.db.path

    @property
    def db_given(self) -> str | None:
        """The database as named (``--db`` or ``$MEMCITE_DB``), or None for the default."""
        return self.db.path if self.db.given else None

    @property
    def db_is_server(self) -> bool:
        """True when the database is a fleet server (``--db`` or ``$MEMCITE_DB`` a PostgreSQL URL)."""
        return is_server_url(self.db.path)

    @property
    def default_db_folder(self) -> str | None:
        """The data folder when the database is the default one in it (a writer may create it)."""
        return None if self.db.given else self.data_home

    @property
    def data_home(self) -> str:
        return self._once("data_home", lambda: user_data_dir(self._environ))

    @property
    def cache_dir(self) -> str:
        return self._once("cache_dir", lambda: user_cache_dir(self._environ))

    @property
    def config(self) -> Located:
        """memcite's config file (it may not exist)."""
        def build() -> Located:
            origin = ("MEMCITE_CONFIG" if self._environ.get("MEMCITE_CONFIG") else
                      "MEMCITE_HOME" if self._environ.get("MEMCITE_HOME") else "default")
            return Located(memcite_config_path(self._environ), origin)
        return self._once("config", build)

    @property
    def hook_log(self) -> str:
        return os.path.join(self.data_home, HOOK_LOG_NAME)

    # ------------------------------------------------------------------ Codex's

    @property
    def codex_home(self) -> Located:
        """Codex's home: ``--codex-home``, else ``$CODEX_HOME``, else ``~/.codex`` (never
        checked here: ``memcite.ledger.codex_home.locate`` says whether it is a folder)."""
        def build() -> Located:
            if self._codex_home:
                return Located(_expand(self._codex_home), "--codex-home")
            if self._environ.get("CODEX_HOME"):
                return Located(_expand(self._environ["CODEX_HOME"]), "CODEX_HOME")
            return Located(resolve_codex_home(None, {}), "default")
        return self._once("codex_home", build)

    @property
    def codex_home_named(self) -> bool:
        """True when an option or ``$CODEX_HOME`` names a Codex home (nothing is resolved)."""
        return bool(self._codex_home or self._environ.get("CODEX_HOME"))

    @property
    def codex_home_path(self) -> str:
        return self.codex_home.path

    @property
    def codex_home_given(self) -> str | None:
        """The Codex home as a person named it (option or variable), else None (no default)."""
        return self.codex_home.path if self.codex_home.given else None

    @property
    def codex_sqlite_home_env(self) -> str | None:
        """``$CODEX_SQLITE_HOME`` as set (Codex's config.toml ``sqlite_home`` comes first)."""
        return codex_sqlite_home_env(self._environ)

    @property
    def codex_config(self) -> str:
        """Codex's config.toml in its home (it may not exist)."""
        return os.path.join(self.codex_home.path, "config.toml")

    def variables_set(self, names) -> dict[str, str]:
        """Those of the location variables ``names`` that are set, each as an absolute path
        (``memcite setup codex`` writes them into the MCP server's entry)."""
        return {name: os.path.abspath(_expand(self._environ[name]))
                for name in names if self._environ.get(name)}

    def options_given(self) -> dict[str, str]:
        """The location options given on the command line (``--db``, ``--codex-home``), as a
        report repeats them in its next step; a variable's value is not an option."""
        given = {}
        if self._db:
            given["--db"] = self._db
        if self._codex_home:
            given["--codex-home"] = self._codex_home
        return given


def locations(db: str | os.PathLike | None = None, codex_home: str | os.PathLike | None = None,
              environ=None) -> Locations:
    """This run's ``Locations`` from its ``--db`` and ``--codex-home`` (None when not given)."""
    return Locations(db, codex_home, environ)
