"""Untrusted values made safe to store and print: text SQLite and UTF-8 can hold, JSON that
cannot exhaust the stack.

Everything a reply, a session file, an option or an environment variable gives memcite
is untrusted. Two things in such values crash naive code:

- a *lone surrogate*: a JSON escape such as ``"\\ud800"`` decodes to one, and Python
  turns each non-UTF-8 byte of a command-line value, a file name or an environment
  value into one (``\\udcff`` for byte ``0xff``). UTF-8 cannot encode them, so SQLite
  and the terminal refuse them. memcite stores and prints each as its escape, the six
  characters ``\\ud800``; every other character is kept as it is.
- JSON or TOML nested thousands deep: Python's parsers recurse and raise
  ``RecursionError``. ``loads_json``, ``json_lines`` and ``loads_toml`` (the one way memcite
  parses JSON or TOML it does not control: files, session lines, hook input, MCP messages,
  program output) turn that into the ``ValueError`` every other bad line gives.

A path is untrusted too: ``open_regular`` opens a file only if it is a regular one, and
never blocks on a FIFO planted in its place; ``check_regular`` checks one that another
library (SQLite) is about to open itself.

A path or word from a reply, a note or a session file reaches another program's arguments
only through ``program_arguments``, which refuses what the OS cannot pass on (a NUL byte,
a lone surrogate): one hostile reply cannot make every later command end in a traceback.
"""

from __future__ import annotations

import errno
import os
import stat

from memcite.errors import InputError

CLOEXEC = getattr(os, "O_CLOEXEC", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
BINARY = getattr(os, "O_BINARY", 0)


def storable(text: str) -> str:
    """``text`` with each lone surrogate replaced by its escape (``\\udcff``); else unchanged."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def storable_or_none(text: str | None) -> str | None:
    """``storable`` of a value that may be None."""
    return None if text is None else storable(text)


def os_safe(value: str) -> bool:
    """Whether ``value`` can be handed to the OS as a path or an argument: it encodes to
    bytes (``surrogateescape``, as Python does for file names) and holds no NUL byte."""
    if not isinstance(value, str):
        return False
    try:
        encoded = os.fsencode(value)
    except (UnicodeEncodeError, ValueError):
        return False
    return b"\0" not in encoded


def program_arguments(args) -> list[str] | None:
    """``args`` as a list for ``subprocess``, or None when one of them is not ``os_safe``
    (the caller then does without the program, as when it is not installed)."""
    checked = [os.fspath(arg) for arg in args]
    return checked if all(os_safe(arg) for arg in checked) else None


def loads_json(data: str | bytes, **options):
    """``json.loads`` (``options`` passed on), with JSON nested too deeply for the parser a
    ``ValueError`` too."""
    import json  # not on the per-reply path, which stores but parses no JSON

    try:
        return json.loads(data, **options)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def loads_toml(text: str) -> dict:
    """``tomllib.loads``, with TOML nested too deeply for the parser (arrays or inline tables
    thousands deep) a ``tomllib.TOMLDecodeError`` (a ``ValueError``) too."""
    import tomllib  # it imports typing: only where a TOML file is read

    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("nested too deeply") from None


def json_lines(data: str | bytes, *, first: int = 1):
    """The JSON Lines in ``data``, blank lines left out: ``(number, value, None)`` for a line
    that parses, ``(number, None, why)`` for one that does not (bad JSON, nested too deeply,
    not UTF-8), so one bad line is reported or skipped and the others still count. ``first``
    is the number of the first line. The one reader of JSON Lines memcite does not control
    (event logs, note imports, corpora, logs)."""
    newline = b"\n" if isinstance(data, bytes) else "\n"
    for number, line in enumerate(data.split(newline), first):
        if not line.strip():
            continue
        try:
            yield number, loads_json(line), None
        except UnicodeDecodeError:
            yield number, None, "not UTF-8"
        except ValueError as exc:
            yield number, None, f"not JSON ({exc})"


def bounded_lines(handle, limit: int):
    """The lines of a binary file, line ends kept; None for a line longer than ``limit``,
    skipped without ever being held whole."""
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = handle.readline(1 << 20)
            yield None
        else:
            yield line


class NotRegularFile(OSError):
    """What ``open_regular`` raises for anything but a regular file: an ``OSError`` with
    ``errno.EINVAL``, whose ``strerror`` ("a FIFO (named pipe), not a regular file") and
    ``kind`` ("a FIFO (named pipe)") say what it is, and ``filename`` where."""

    def __init__(self, kind: str, filename: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file", filename)
        self.kind = kind


def open_regular(path: str | os.PathLike, *, flags: int = 0, mode: int = 0o777) -> int:
    """Open ``path`` only if it is a regular file; never blocks on a FIFO.

    For reading, unless ``flags`` add ``os.O_WRONLY`` or ``os.O_RDWR`` (with ``os.O_CREAT``,
    a missing file is created with ``mode``, less the umask). ``O_NONBLOCK`` keeps a FIFO
    without a writer (or, opened for writing, without a reader) from hanging the open;
    ``fstat`` then refuses anything that is not a regular file (``/dev/zero``, a FIFO, a
    socket, a folder) with a ``NotRegularFile`` (an ``OSError``) whose ``strerror`` says
    what it is. A FIFO opened for writing with no reader fails at once too (``ENXIO``).
    """
    try:
        fd = os.open(path, os.O_RDONLY | CLOEXEC | NONBLOCK | BINARY | flags, mode)
    except OSError as exc:
        # A socket cannot be opened at all, nor a FIFO for writing without a reader (ENXIO):
        # said as what it is, as for the others.
        kind = _kind_of(path) if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP) else None
        if kind is not None:
            raise NotRegularFile(kind, os.fspath(path)) from None
        raise
    try:
        kind = not_regular(os.fstat(fd).st_mode)
        if kind is not None:
            raise NotRegularFile(kind, os.fspath(path))
        clear_nonblock(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_small_text(path: str | os.PathLike, limit: int) -> str | None:
    """The first ``limit`` bytes of a regular file that is not a link, as UTF-8 with
    replacement; None when it is missing, a link or not a regular file."""
    try:
        if os.path.islink(path):
            return None
        with os.fdopen(open_regular(path), "rb") as handle:
            return handle.read(limit).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None


def check_regular(path: str | os.PathLike) -> None:
    """Raise ``NotRegularFile`` unless ``path`` (followed if a link) is a regular file, or
    ``FileNotFoundError`` (an ``OSError``) when it is missing; nothing is opened.

    For a path another library opens itself (SQLite): a FIFO there would block its open.
    """
    kind = not_regular(os.stat(path).st_mode)
    if kind is not None:
        raise NotRegularFile(kind, os.fspath(path))


def _kind_of(path: str | os.PathLike) -> str | None:
    try:
        return not_regular(os.stat(path).st_mode)
    except (OSError, ValueError):
        return None


def clear_nonblock(fd: int) -> None:
    if NONBLOCK and hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)


def not_regular(mode: int) -> str | None:
    """None for a regular file, else what it is, in words."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


ERROR_MODES = ("strict", "replace")


def decode_utf8(data: bytes, *, name: str = "<input>", errors: str = "strict") -> str:
    """Decode UTF-8; with ``errors="strict"`` a bad byte is an error naming its offset."""
    if errors not in ERROR_MODES:
        raise InputError(f"unknown --errors mode {errors!r}: use one of {', '.join(ERROR_MODES)}")
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{name}: invalid UTF-8 at byte offset {exc.start} ({exc.reason})",
            hint="pass --errors replace to read it with U+FFFD in place of the bad bytes",
        ) from None
