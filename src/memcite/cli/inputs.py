"""Reading a reply from a file or stdin as bytes, with a size limit and exact UTF-8 errors."""

from __future__ import annotations

import os
import sys

from memcite.errors import InputError
from memcite.untrusted import ERROR_MODES, NotRegularFile, decode_utf8, open_regular

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
__all__ = ["DEFAULT_MAX_BYTES", "ERROR_MODES", "decode_utf8", "hint_if_terminal", "read_bytes",
           "read_text"]


def read_bytes(source: str | os.PathLike | None, *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """Read ``source`` (a path, or ``-``/None for stdin), refusing more than ``max_bytes``."""
    name = "<stdin>" if source in (None, "-") else os.fspath(source)
    try:
        if source in (None, "-"):
            hint_if_terminal()
            data = sys.stdin.buffer.read(max_bytes + 1)
        else:
            # A regular file only: a FIFO, a device or a folder named as FILE is refused at
            # once (``-`` is the way to read a pipe), never waited on or read without end.
            with os.fdopen(open_regular(source), "rb") as handle:
                data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except NotRegularFile as exc:
        raise InputError(f"{name}: {exc.strerror}", hint="give a file, or - to read stdin "
                         "(a pipe)") from None
    except OSError as exc:
        raise InputError(f"{name}: cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise InputError(
            f"{name}: larger than the limit of {max_bytes} bytes",
            hint="raise the limit with --max-bytes N",
        )
    return data


def hint_if_terminal(what: str = "the reply") -> None:
    """Say on stderr that stdin is being read, when it is a terminal (a pipe is expected)."""
    try:
        interactive = sys.stdin.isatty()
    except (AttributeError, ValueError):  # closed or replaced stdin
        interactive = False
    if interactive:
        sys.stderr.write(f"memcite: reading {what} from the terminal; end it with Ctrl-D "
                         "(or give a FILE, or pipe it in)\n")
        sys.stderr.flush()


def read_text(
    source: str | os.PathLike | None,
    *,
    errors: str = "strict",
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> str:
    """Read and decode one input (see ``read_bytes`` and ``decode_utf8``)."""
    name = "<stdin>" if source in (None, "-") else os.fspath(source)
    return decode_utf8(read_bytes(source, max_bytes=max_bytes), name=name, errors=errors)
