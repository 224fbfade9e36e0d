"""Reading a Codex home, read-only and streaming: ``memories_1.sqlite`` and the memory folder.

Codex's database is opened with ``mode=ro`` (and ``immutable=1`` when it is a
WAL database with no ``-wal`` file, so that not even ``-shm``/``-wal`` files are
created beside it); nothing here ever writes to a Codex home. ``immutable``
tells SQLite the file cannot change, so a read made that way is checked: if
the file changed while it was read (Codex wrote), the read is refused. Rows and
headers are yielded one at a time, so a home of any size is read in constant memory.
See docs/usage-and-retention.md and docs/memory-layout.md §1.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable, Iterator

from memcite.citations.thread_ids import normalize_thread_id
from memcite.display import count
from memcite.errors import MemciteError
from memcite.ledger.memory_files import OUTSIDE, MemoryRoot, open_regular
from memcite.rust_text import RUST_WHITESPACE, rust_trim
from memcite.untrusted import NotRegularFile, bounded_lines, loads_toml
from memcite.value_classes import FrozenSlots

TYPE_CHECKING = False  # ``typing`` is for type checkers only: importing it costs start-up
if TYPE_CHECKING:
    from typing import BinaryIO, TypeVar

    T = TypeVar("T")

STATE_DB = "memories_1.sqlite"
MEMORY_FOLDER = "memories"
# Codex's two memory stores: (memory folder, database in the SQLite home). Codex reads and
# counts one of them, chosen by ``[memories] version`` in config.toml (see memory_store).
MEMORY_STORES = {"v1": (MEMORY_FOLDER, STATE_DB), "v2": ("memories_v2", "memories_v2_1.sqlite")}
DEFAULT_STORE = "v1"  # Codex 0.169 and 0.171 without [memories] version (seen run)
RAW_MEMORIES = "raw_memories.md"
ROLLOUT_SUMMARIES = "rollout_summaries"
MAX_LINE_BYTES = 64 * 1024  # a heading or header line is never longer; longer lines are body

# The stage1_outputs columns memcite reads; a column an older Codex lacks reads as NULL.
STAGE1_COLUMNS = (
    "thread_id",
    "source_updated_at",
    "generated_at",
    "rollout_slug",
    "usage_count",
    "last_usage",
    "selected_for_phase2",
    "selected_for_phase2_source_updated_at",
)
# What Codex's phase-2 selection strips before it calls a text blank: SQLite's trim() with no
# second argument, spaces only (a raw memory of "  \n" is an input; Codex 0.171, checked in
# tests/e2e/test_e2e_blank_inputs.py). Only that selection reads the has_* flags.
_BLANK = "' '"

_STATE_DB = re.compile(r"^state_(\d{1,4})\.sqlite$")
_THREAD_HEADING = re.compile(r"^## Thread `([^`]*)`\s*$")
_HEADER_LINE = re.compile(r"^([a-z_][a-z0-9_]*):[ \t]*(.*?)\s*$")
_SUMMARY_STEM = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-[0-9A-Za-z]{4}(?:-(?P<slug>[A-Za-z0-9_]+))?$"
)


class CodexHomeError(MemciteError):
    """A Codex home, or part of one, could not be read (exit 2)."""


_set = object.__setattr__  # how the frozen values below set their fields in __init__


class FolderMemory(FrozenSlots):
    """A thread as the memory folder describes it (a ``raw_memories.md`` section or a summary)."""

    __slots__ = ("thread_id", "source", "updated_at", "cwd", "rollout_path",
                 "rollout_summary_file", "git_branch", "rollout_slug", "has_text", "where")
    _fields = _compared = __slots__

    def __init__(self, thread_id: str, source: str, updated_at: int | None = None,
                 cwd: str | None = None, rollout_path: str | None = None,
                 rollout_summary_file: str | None = None, git_branch: str | None = None,
                 rollout_slug: str | None = None, has_text: bool = False,
                 where: str = "") -> None:
        _set(self, "thread_id", thread_id)
        _set(self, "source", source)  # raw_memories | rollout_summary
        _set(self, "updated_at", updated_at)
        _set(self, "cwd", cwd)
        _set(self, "rollout_path", rollout_path)
        _set(self, "rollout_summary_file", rollout_summary_file)
        _set(self, "git_branch", git_branch)
        _set(self, "rollout_slug", rollout_slug)
        _set(self, "has_text", has_text)  # the section or summary has a non-blank body
        _set(self, "where", where)  # file:line


def state_db_path(codex_home: str | os.PathLike, sqlite_home: str | os.PathLike | None = None,
                  store: str = DEFAULT_STORE) -> str:
    """Where Codex keeps ``stage1_outputs`` of ``store``: in its SQLite home
    (``sqlite_home``), which is the Codex home itself unless configured otherwise (see
    ``locate_codex_home``)."""
    return os.path.join(os.fspath(sqlite_home or codex_home), MEMORY_STORES[store][1])


def newest_state_db(sqlite_home: str | os.PathLike) -> str | None:
    """Codex's newest thread database in ``sqlite_home`` (``state_N.sqlite``, the highest
    ``N``), or None when there is none."""
    import glob

    found = []
    for path in glob.glob(os.path.join(glob.escape(os.fspath(sqlite_home)), "state_*.sqlite")):
        match = re.fullmatch(r"state_(\d+)\.sqlite", os.path.basename(path))
        if match:
            found.append((int(match.group(1)), path))
    return max(found)[1] if found else None


def state_database(sqlite_home: str) -> str | None:
    """Codex's state database in its SQLite home (``state_5.sqlite`` for 0.171; the highest
    numbered ``state_N.sqlite`` there), or None."""
    try:
        names = os.listdir(sqlite_home)
    except OSError:
        return None
    numbered = [(int(found.group(1)), name) for name in names
                if (found := _STATE_DB.match(name))]
    if not numbered:
        return None
    return os.path.join(sqlite_home, max(numbered)[1])


def memory_folder(codex_home: str | os.PathLike, store: str = DEFAULT_STORE) -> str:
    """Codex's memory folder of ``store`` (``$CODEX_HOME/memories``, or ``memories_v2``)."""
    return os.path.join(os.fspath(codex_home), MEMORY_STORES[store][0])


# --------------------------------------------------------------------------- where Codex keeps things

SQLITE_HOME_KEY = "sqlite_home"  # top-level key of $CODEX_HOME/config.toml
SQLITE_HOME_ENV = "CODEX_SQLITE_HOME"
STORE_FROM_DEFAULT = "Codex's default: no [memories] version in config.toml"
MAX_CONFIG_BYTES = 4 * 1024 * 1024


class CodexConfig(FrozenSlots):
    """What memcite reads of ``$CODEX_HOME/config.toml``: where the databases are and which
    memory store Codex reads (``[memories] version``, ``dual_write``)."""

    __slots__ = ("sqlite_home", "memory_version", "dual_write", "path", "raw", "data")
    _fields = _compared = __slots__[:3]

    def __init__(self, sqlite_home: str | None = None, memory_version: str | None = None,
                 dual_write: bool | None = None, *, path: str | None = None,
                 raw: bytes | None = None, data: dict | None = None) -> None:
        _set(self, "sqlite_home", sqlite_home)  # as written, or None
        _set(self, "memory_version", memory_version)  # "v1" | "v2" as written, or None
        _set(self, "dual_write", dual_write)  # as written, or None
        # The file as read once, so that its other tables ([memories]) need no second read:
        _set(self, "path", path)  # the file read (None: not looked for)
        _set(self, "raw", raw)  # its bytes (None: no file)
        _set(self, "data", data)  # parsed (None: not parsed, nothing memcite follows here)


def read_codex_config(codex_home: str | os.PathLike) -> CodexConfig:
    """The parts of ``$CODEX_HOME/config.toml`` memcite follows (none when there is no file)."""
    path = os.path.join(os.fspath(codex_home), "config.toml")
    try:
        handle = os.fdopen(open_regular(path), "rb")  # a FIFO: refused, never a hang
    except FileNotFoundError:
        return CodexConfig(path=path)
    except NotRegularFile as exc:
        raise CodexHomeError(f"{path}: {exc.strerror}; Codex's config cannot be read",
                             hint=f"remove {path} or put Codex's config.toml there") from None
    except OSError as exc:
        raise CodexHomeError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        with handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise CodexHomeError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise CodexHomeError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes; not read",
                             hint="Codex's config.toml is a few kilobytes")
    if SQLITE_HOME_KEY.encode() not in raw and b"version" not in raw \
            and b"dual_write" not in raw:
        return CodexConfig(path=path, raw=raw)  # nothing memcite follows: not parsed (start-up)
    import tomllib  # it imports typing (start-up)

    try:
        data = loads_toml(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CodexHomeError(f"{path}: not UTF-8 (byte {exc.start})",
                             hint="Codex cannot read it either; fix the file") from None
    except tomllib.TOMLDecodeError as exc:
        raise CodexHomeError(f"{path}: not valid TOML ({exc})",
                             hint="Codex cannot read it either; fix the file") from None
    value = data.get(SQLITE_HOME_KEY)
    if value is not None and not isinstance(value, str):
        raise CodexHomeError(f"{path}: {SQLITE_HOME_KEY} must be a path (a string)")
    memories = data.get("memories")
    version = dual_write = None
    if isinstance(memories, dict):
        version, dual_write = memories.get("version"), memories.get("dual_write")
        if version is not None and version not in MEMORY_STORES:
            raise CodexHomeError(
                f"{path}: [memories] version = {str(version)[:40]!r} is not one of "
                f"{', '.join(map(repr, MEMORY_STORES))}",
                hint="Codex reads \"v1\" (memories/) or \"v2\" (memories_v2/); fix the file")
        if dual_write is not None and not isinstance(dual_write, bool):
            raise CodexHomeError(f"{path}: [memories] dual_write must be true or false")
    return CodexConfig((value.strip() or None) if value else None, version, dual_write,
                       path=path, raw=raw, data=data)


def codex_memory_folder(codex_home: str | os.PathLike) -> str:
    """The memory folder of the store Codex reads in ``codex_home`` (``memories`` unless
    config.toml says ``[memories] version = "v2"``)."""
    return memory_folder(codex_home, memory_store(read_codex_config(codex_home))[0])


def memory_store(config: CodexConfig) -> tuple[str, str]:
    """``(store, why)``: the memory store Codex reads and counts in, as it decides it:
    ``[memories] version``, else its default (v1). ``dual_write`` makes Codex consolidate
    the other store too, never read it."""
    if config.memory_version:
        return config.memory_version, f"[memories] version = \"{config.memory_version}\" in config.toml"
    return DEFAULT_STORE, STORE_FROM_DEFAULT


class CodexLocations(FrozenSlots):
    """One Codex home, the memory store Codex reads there, and where its databases are (its
    SQLite home), and why there."""

    __slots__ = ("codex_home", "sqlite_home", "sqlite_home_from", "store", "store_from",
                 "dual_write", "codex_home_from", "config")
    _fields = __slots__[:-1]
    _compared = __slots__[:-2]  # how the home was named does not make it another home

    def __init__(self, codex_home: str, sqlite_home: str, sqlite_home_from: str,
                 store: str = DEFAULT_STORE, store_from: str = STORE_FROM_DEFAULT,
                 dual_write: bool = False, codex_home_from: str | None = None,
                 config: CodexConfig | None = None) -> None:
        _set(self, "codex_home", codex_home)  # the real path
        _set(self, "sqlite_home", sqlite_home)
        _set(self, "sqlite_home_from", sqlite_home_from)  # config.toml | CODEX_SQLITE_HOME | CODEX_HOME
        _set(self, "store", store)  # v1 | v2: the store Codex reads and counts in
        _set(self, "store_from", store_from)  # why that one
        _set(self, "dual_write", dual_write)  # Codex also consolidates the other store
        _set(self, "codex_home_from", codex_home_from)  # --codex-home | CODEX_HOME | default | None
        _set(self, "config", config)  # config.toml as read when the home was located, or None

    def describe_sqlite_home(self) -> str:
        """Where Codex's SQLite home came from, truthfully: config.toml, ``CODEX_SQLITE_HOME``,
        or the Codex home itself (and then how that home was named)."""
        if self.sqlite_home_from != "CODEX_HOME":
            return f"from {self.sqlite_home_from}"
        if self.codex_home_from is None:
            return "the Codex home itself"
        if self.codex_home_from.startswith("--"):
            return f"the Codex home itself, given with {self.codex_home_from}"
        if self.codex_home_from == "default":
            return "the Codex home itself, the default ~/.codex"
        return f"the Codex home itself, named by {self.codex_home_from}"

    @property
    def state_db(self) -> str:
        return state_db_path(self.codex_home, self.sqlite_home, self.store)

    @property
    def memory_folder(self) -> str:
        return memory_folder(self.codex_home, self.store)

    @property
    def has_usage_data(self) -> bool:
        """Whether Codex's table (and so its usage counters) is where Codex keeps it."""
        return os.path.isfile(self.state_db)

    def describe_store(self) -> str:
        """One line naming the store read, for reports."""
        other = "v2" if self.store == "v1" else "v1"
        also = f"; dual_write: Codex also consolidates {other}, but reads {self.store}" \
            if self.dual_write else ""
        return f"memory store {self.store} ({self.memory_folder}; {self.store_from}){also}"

    def to_dict(self) -> dict:
        return {"codex_home": self.codex_home, "sqlite_home": self.sqlite_home,
                "sqlite_home_from": self.sqlite_home_from, "state_db": self.state_db,
                "usage_data": self.has_usage_data, "store": self.store,
                "store_from": self.store_from, "memory_folder": self.memory_folder,
                "dual_write": self.dual_write}


def resolve_sqlite_home(codex_home: str, configured: str | None, env_value: str | None,
                        cwd: str) -> tuple[str, str]:
    """``(SQLite home, where it came from)`` as Codex chooses it: ``sqlite_home`` in
    config.toml (relative to the Codex home), else ``$CODEX_SQLITE_HOME`` (relative to the
    working directory), else the Codex home itself."""
    if configured:
        path = os.path.expanduser(configured)
        return os.path.join(codex_home, path), f"{SQLITE_HOME_KEY} in config.toml"
    if env_value and env_value.strip():
        return os.path.join(cwd, os.path.expanduser(env_value.strip())), SQLITE_HOME_ENV
    return codex_home, "CODEX_HOME"


def no_codex_home_hint(origin: str | None, path: str | None = None) -> str:
    """What to do about a Codex home that is no folder, by how it was named (and, given
    ``path``, whether something that is no folder is there)."""
    what = "is not a folder" if path is not None and os.path.lexists(path) else "does not exist"
    if origin and origin.startswith("--"):
        return (f"the path given with {origin} {what}: give Codex's home folder (it holds "
                "config.toml and memories/, ~/.codex by default)")
    if origin and origin != "default":
        return f"{origin} names it: fix or unset {origin}, or pass the Codex home with --codex-home"
    if what == "does not exist":  # the default ~/.codex is not there: Codex never ran here
        return ("Codex is not installed here, or has never run: install it with `npm install -g "
                "@openai/codex` and run `codex` once, or pass the Codex home with --codex-home "
                "or CODEX_HOME")
    return "pass the Codex home with --codex-home or CODEX_HOME"


def no_codex_home_message(path: str) -> str:
    """``path`` is no Codex home: a file (or a link, a device) there, or nothing at all."""
    return f"{path}: not a folder, so no Codex home" if os.path.lexists(path) else \
        f"{path}: no such Codex home (no such folder)"


def locate(locations, *, cwd: str | None = None, store: str | None = None) -> CodexLocations:
    """``locate_codex_home`` for this run's ``memcite.paths.Locations``: its Codex home and
    ``$CODEX_SQLITE_HOME``, and how the home was named (for truthful messages)."""
    found = locations.codex_home
    return locate_codex_home(found.path, env_sqlite_home=locations.codex_sqlite_home_env,
                             cwd=cwd, store=store, origin=found.origin)


def locate_codex_home(codex_home: str | os.PathLike, *, env_sqlite_home: str | None = None,
                      cwd: str | None = None, store: str | None = None,
                      origin: str | None = None) -> CodexLocations:
    """Where ``codex_home`` keeps its databases and which memory store Codex reads there; a
    ``CodexHomeError`` when it is no folder.

    ``env_sqlite_home`` is ``$CODEX_SQLITE_HOME`` as the caller read it (the library
    reads no environment); ``store`` ("v1" or "v2") reads that store instead of Codex's;
    ``origin`` says how the home was named (``--codex-home``, ``CODEX_HOME``, ``default``).
    """
    given = os.fspath(codex_home)
    real = os.path.realpath(given)
    if not os.path.isdir(real):
        raise CodexHomeError(no_codex_home_message(given), hint=no_codex_home_hint(origin, given))
    config = read_codex_config(real)
    sqlite_home, source = resolve_sqlite_home(real, config.sqlite_home, env_sqlite_home,
                                              cwd or os.getcwd())
    chosen, why = memory_store(config)
    if store is not None and store != chosen:
        chosen, why = store, f"asked for with --store (Codex reads {chosen}: {why})"
    return CodexLocations(real, os.path.realpath(sqlite_home), source, chosen, why,
                          bool(config.dual_write), origin, config)


# --------------------------------------------------------------------------- memories_1.sqlite


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def _open(path: str) -> tuple[sqlite3.Connection, tuple[int, int, int] | None]:
    """A read-only connection and, when it is opened ``immutable``, the file's stamp before."""
    try:
        fd = open_regular(path)  # a FIFO or a device: refused, never a hang
        try:
            header = os.read(fd, 100)
        finally:
            os.close(fd)
    except NotRegularFile as exc:
        raise CodexHomeError(f"{path}: {exc.strerror}; not read") from None
    except OSError as exc:
        raise CodexHomeError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not header.startswith(b"SQLite format 3\x00"):
        raise CodexHomeError(f"{path}: not an SQLite database")
    wal_mode = len(header) > 19 and header[18] == 2
    immutable = wal_mode and not os.path.exists(path + "-wal")
    stamp = _stamp(path) if immutable else None
    quoted = path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    uri = f"file:{quoted}?mode=ro" + ("&immutable=1" if immutable else "")
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=15)
        conn.execute("PRAGMA query_only = 1")
        # Codex's text is untrusted too: a value that is not UTF-8 reads with U+FFFD.
        conn.text_factory = _lenient_text
    except sqlite3.Error as exc:
        raise CodexHomeError(f"{path}: cannot open read-only ({exc})") from None
    return conn, stamp


def _lenient_text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def open_codex_db(path: str | os.PathLike) -> sqlite3.Connection:
    """Open Codex's database read-only, creating no file beside it.

    The caller reads at its own risk if Codex writes meanwhile; ``count_stage1_outputs``
    and ``iter_stage1_outputs`` check for that.
    """
    return _open(os.path.abspath(os.fspath(path)))[0]


def _check_unchanged(path: str, stamp: tuple[int, int, int] | None, command: str | None) -> None:
    """Refuse a read made ``immutable`` if Codex wrote to the file meanwhile."""
    if stamp is not None and _stamp(path) != stamp:
        during, again = (f"the {command}", f"memcite {command}") if command \
            else ("the read", "the command")
        raise CodexHomeError(
            f"{path}: Codex wrote to its database during {during}; run {again} again",
            hint="what was read may be inconsistent; re-running is cheap (rows are updated "
                 "in place)",
        )


def _stage1_columns(conn: sqlite3.Connection, path: str) -> set[str]:
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(stage1_outputs)")}
    except sqlite3.Error as exc:
        raise CodexHomeError(f"{path}: cannot read ({exc})") from None
    if "thread_id" not in columns:
        raise CodexHomeError(
            f"{path}: no stage1_outputs table with a thread_id column",
            hint="is this a Codex memories database? pass the Codex home with --codex-home",
        )
    return columns


def _stage1_select(conn: sqlite3.Connection, path: str) -> str:
    columns = _stage1_columns(conn, path)
    picked = [name if name in columns else "NULL" for name in STAGE1_COLUMNS]
    for text_column in ("raw_memory", "rollout_summary"):
        if text_column in columns:
            picked.append(f"length(trim(coalesce({text_column}, ''), {_BLANK})) > 0")
        else:
            picked.append("0")
    return f"SELECT {', '.join(picked)} FROM stage1_outputs"


def count_stage1_outputs(path: str | os.PathLike, *, command: str | None = None) -> int:
    """How many rows ``stage1_outputs`` holds (for progress); ``command`` names the caller in errors."""
    return query_stage1_outputs(
        path, lambda conn, table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0],
        command=command)


def query_stage1_outputs(path: str | os.PathLike, run: Callable[[sqlite3.Connection, str], T],
                         *, command: str | None = None) -> T:
    """``run(conn, table)`` on a read-only connection to Codex's database, where ``table`` is
    a subquery giving ``stage1_outputs`` under the ``STAGE1_COLUMNS`` names (a column Codex's
    table lacks reads as NULL): counting and ranking stay in SQL, nothing is loaded per row.
    Checked as ``iter_stage1_outputs`` is (a write by Codex during an ``immutable`` read)."""
    path = os.path.abspath(os.fspath(path))
    conn, stamp = _open(path)
    try:
        columns = _stage1_columns(conn, path)
        picked = [(name if name in columns else "NULL") + f" AS {name}" for name in STAGE1_COLUMNS]
        result = run(conn, f"(SELECT {', '.join(picked)} FROM stage1_outputs)")
    except sqlite3.Error as exc:
        _check_unchanged(path, stamp, command)
        raise CodexHomeError(f"{path}: cannot read stage1_outputs ({exc})") from None
    finally:
        conn.close()
    _check_unchanged(path, stamp, command)
    return result


def iter_stage1_outputs(path: str | os.PathLike, *, batch_size: int = 2000,
                        command: str | None = None) -> Iterator[tuple]:
    """Yield ``stage1_outputs`` rows as tuples in ``STAGE1_COLUMNS`` order plus
    ``has_raw_memory`` and ``has_rollout_summary``, streaming from a read-only connection.

    Large texts are never loaded into Python: only whether they are blank. When
    Codex wrote to an ``immutable`` file during the read, a ``CodexHomeError``
    (naming ``command``, e.g. ``"sync"``, if given) follows the last row.
    """
    path = os.path.abspath(os.fspath(path))
    conn, stamp = _open(path)
    try:
        cursor = conn.execute(_stage1_select(conn, path))
        while True:
            rows = cursor.fetchmany(batch_size)
            if not rows:
                break
            yield from rows
    except sqlite3.Error as exc:
        _check_unchanged(path, stamp, command)
        raise CodexHomeError(f"{path}: cannot read stage1_outputs ({exc})") from None
    finally:
        conn.close()
    _check_unchanged(path, stamp, command)


# --------------------------------------------------------------------------- the memory folder


def rfc3339_seconds(value: str) -> int | None:
    """Unix seconds of an RFC 3339 time as Codex writes it, or None if it is not one."""
    from datetime import UTC, datetime

    text = value.strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return int(moment.timestamp())
    except (OverflowError, OSError, ValueError):  # a year no clock reaches
        return None


def slug_of_summary_file(name: str) -> str | None:
    """The slug part of a summary file name (``{time}-{hash4}-{slug}.md``), or None."""
    stem = name[:-3] if name.endswith(".md") else name
    match = _SUMMARY_STEM.match(stem)
    return match.group("slug") if match else None


def _folder_memory(thread_id: str, source: str, fields: dict[str, str], has_text: bool,
                   where: str) -> FolderMemory | None:
    normalized = normalize_thread_id(thread_id.strip())
    if normalized is None:
        return None
    summary_file = fields.get("rollout_summary_file") or None
    return FolderMemory(
        thread_id=normalized,
        source=source,
        updated_at=rfc3339_seconds(fields.get("updated_at", "")),
        cwd=fields.get("cwd") or None,
        rollout_path=fields.get("rollout_path") or None,
        rollout_summary_file=summary_file,
        git_branch=fields.get("git_branch") or None,
        rollout_slug=slug_of_summary_file(summary_file) if summary_file else None,
        has_text=has_text,
        where=where,
    )


def _open_in_folder(root: str, inside: str, skipped: list[str] | None) -> BinaryIO | None:
    """Open ``inside`` (a path in the memory folder ``root``) from the folder's handle: a
    regular file, never through a symlink leading out (``MemoryRoot``). None, with a line
    in ``skipped``, when it cannot be opened that way."""
    with MemoryRoot(root) as folder:
        outcome, fd, _parts = folder.open(inside)
    if fd is not None:
        return os.fdopen(fd, "rb")
    if skipped is not None:
        path = os.path.join(root, inside)
        skipped.append(f"{path}: a symlink leading outside the memory folder; not read"
                       if outcome == OUTSIDE else f"{path}: not a regular file; not read")
    return None


def _bounded_lines(handle: BinaryIO) -> Iterator[str | None]:
    """The lines of a binary file decoded as UTF-8 (bad bytes as U+FFFD), line ends kept;
    None for a line longer than ``MAX_LINE_BYTES``, skipped without being held."""
    for line in bounded_lines(handle, MAX_LINE_BYTES):
        yield None if line is None else line.decode("utf-8", "replace")


def iter_raw_memories(path: str | os.PathLike, skipped: list[str] | None = None
                      ) -> Iterator[FolderMemory]:
    """Yield one ``FolderMemory`` per ``## Thread `<id>``` section of ``raw_memories.md``, streaming.

    A section whose id is not a UUID is skipped. The file is opened from its folder's
    handle (never through a symlink leading out) and read line by line, a line longer
    than ``MAX_LINE_BYTES`` counting as text without being held.
    """
    path = os.fspath(path)
    current: tuple[str, int] | None = None
    fields: dict[str, str] = {}
    in_header = False
    has_text = False
    try:
        handle = _open_in_folder(os.path.dirname(path) or ".", os.path.basename(path), skipped)
    except OSError as exc:
        raise CodexHomeError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if handle is None:
        return
    long_lines = 0
    with handle:
        for number, raw in enumerate(_bounded_lines(handle), start=1):
            if raw is None:  # too long for a heading or a header: body text
                long_lines += 1
                in_header = False
                has_text = has_text or current is not None
                continue
            line = raw.rstrip("\r\n")
            heading = _THREAD_HEADING.match(line)
            if heading:
                if current is not None:
                    found = _folder_memory(current[0], "raw_memories", fields, has_text,
                                           f"{path}:{current[1]}")
                    if found:
                        yield found
                current, fields, in_header, has_text = (heading.group(1), number), {}, True, False
                continue
            if current is None:
                continue
            if in_header:
                header = _HEADER_LINE.match(line)
                if header:
                    fields.setdefault(header.group(1), header.group(2))
                    continue
                in_header = False
            if not has_text and line.strip(RUST_WHITESPACE):
                has_text = True
        if current is not None:
            found = _folder_memory(current[0], "raw_memories", fields, has_text,
                                   f"{path}:{current[1]}")
            if found:
                yield found
    if long_lines and skipped is not None:
        skipped.append(f"{path}: {count(long_lines, 'line')} longer than {MAX_LINE_BYTES} bytes taken "
                       "as section text without being read whole")


def read_rollout_summary_header(path: str | os.PathLike, root: str | os.PathLike | None = None,
                                skipped: list[str] | None = None) -> FolderMemory | None:
    """The header of one rollout summary file (``thread_id:`` … then a blank line), or None.

    Reads only the header and the first line of the summary, opened from the handle of
    ``root`` (the memory folder; by default the file's own folder).
    """
    path = os.fspath(path)
    root = os.fspath(root) if root is not None else os.path.dirname(path) or "."
    fields: dict[str, str] = {}
    has_text = False
    try:
        handle = _open_in_folder(root, os.path.relpath(path, root), skipped)
        if handle is None:
            return None
        with handle:
            lines = _bounded_lines(handle)
            for raw in lines:
                if raw is None:
                    has_text = True
                    break
                line = raw.rstrip("\r\n")
                if not line.strip():
                    if fields:
                        break
                    continue
                header = _HEADER_LINE.match(line)
                if header is None:
                    has_text = True
                    break
                fields.setdefault(header.group(1), header.group(2))
            if not has_text:
                for raw in lines:
                    if raw is None or rust_trim(raw):
                        has_text = True
                        break
    except OSError as exc:
        raise CodexHomeError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if "thread_id" not in fields:
        return None
    fields.setdefault("rollout_summary_file", os.path.basename(path))
    return _folder_memory(fields["thread_id"], "rollout_summary", fields, has_text, path)


def iter_rollout_summaries(folder: str | os.PathLike, skipped: list[str] | None = None
                           ) -> Iterator[FolderMemory]:
    """Yield the header of every ``*.md`` in ``rollout_summaries/`` (sorted by name), streaming.

    Each file is opened from the memory folder's handle: a symlink leading out of the
    memory folder is listed in ``skipped``, never read.
    """
    folder = os.fspath(folder)
    root = os.path.dirname(os.path.abspath(folder))
    try:
        names = sorted(
            entry.name for entry in os.scandir(folder)
            if entry.name.endswith(".md") and (entry.is_symlink() or entry.is_file())
        )
    except OSError as exc:
        raise CodexHomeError(f"{folder}: cannot list: {exc.strerror or exc}") from None
    for name in names:
        path = os.path.join(os.path.abspath(folder), name)
        found = read_rollout_summary_header(path, root, skipped)
        if found is not None:
            yield found
