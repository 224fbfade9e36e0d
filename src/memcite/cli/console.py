"""What every command body prints besides its result: errors, notes, warnings, JSON; and option checks.

Shared by the command bodies (``*_commands``) so that the fast path and Typer
print the same words; imports nothing beyond the standard library and
``memcite.errors`` (and ``memcite.display`` when a message is printed: secrets masked,
control characters escaped).
"""

from __future__ import annotations

import os
import sys

from memcite.errors import InputError, MemciteError
from memcite.times import iso_utc, with_iso_times  # noqa: F401 - iso_utc: for the command bodies


def masked(message: object) -> str:
    """A message as memcite shows it, secrets masked and control characters escaped: errors and
    diagnostics quote replies' paths, notes and ids (``memcite.display.shown``; ordinary text
    costs microseconds)."""
    from memcite.display import shown

    return shown(message)


_errors_as_json = False  # set once per run by ``errors_as_json``: the run asked for --json


def errors_as_json(args: list[str]) -> None:
    """Print this run's errors as a JSON object when its arguments ask for ``--json``
    (before a ``--``): a program reading the output gets no plain text to parse."""
    global _errors_as_json
    words = args[:args.index("--")] if "--" in args else args
    _errors_as_json = "--json" in words


def json_errors() -> bool:
    """Whether this run prints its errors as JSON (``errors_as_json``)."""
    return _errors_as_json


def error_json(message: str, hint: str | None, exit_code: int) -> str:
    """An error as one JSON object on one line: ``{"error", "hint", "exit_code"}``."""
    import json

    return json.dumps({"error": masked(message), "hint": None if hint is None else masked(hint),
                       "exit_code": exit_code}, ensure_ascii=False)


def report_error(error: MemciteError) -> int:
    """Print a memcite error to stderr (one JSON object under --json) and return its exit
    code: the one place the command bodies print their errors. A ``NothingYet`` (exit 0) is no
    error: its message and next step go to stdout (under --json as ``{"nothing_yet", "next"}``)."""
    if error.exit_code == 0:
        if _errors_as_json:
            import json

            sys.stdout.write(json.dumps({"nothing_yet": masked(error.message), "next": None
                                         if error.hint is None else masked(error.hint)},
                                        ensure_ascii=False) + "\n")
        else:
            sys.stdout.write("".join(f"{masked(line)}\n" for line in error.message.splitlines())
                             + (f"next: {masked(error.hint)}\n" if error.hint else ""))
        return 0
    if _errors_as_json:
        sys.stderr.write(error_json(error.message, error.hint, error.exit_code) + "\n")
    else:
        sys.stderr.write(f"memcite: error: {masked(error)}\n")
    return error.exit_code


def note(message: str) -> None:
    """Print an informational line to stderr."""
    sys.stderr.write(f"memcite: {masked(message)}\n")


def warn(message: str) -> None:
    """Print a warning to stderr."""
    sys.stderr.write(f"memcite: warning: {masked(message)}\n")


def dump_json(obj, untimed: tuple[str, ...] = ()) -> None:
    """Print one JSON object on its own line, each time in it also as ISO 8601 UTC
    (``untimed``: keys whose values hold no time, not walked: ``with_iso_times``)."""
    import json  # only --json needs it

    # the newline apart: the display stream (``memcite.display``) then tells the JSON holds no
    # control character in one pass of C, where a newline at its end took a copy and a second
    sys.stdout.write(json.dumps(with_iso_times(obj, untimed), ensure_ascii=False))
    sys.stdout.write("\n")


def check_choice(value: str, choices: tuple[str, ...], option: str) -> None:
    """Refuse an option value that is not one of ``choices`` (exit 2, as a bad usage)."""
    if value not in choices:
        raise InputError(f"{option}: {value!r} is not one of {', '.join(choices)}")


def source_name(source: str | os.PathLike | None) -> str:
    """How messages name an input: its path, or ``<stdin>``."""
    return "<stdin>" if source in (None, "-") else os.fspath(source)


DISTRIBUTION = "codex-memcite"  # the name memcite is published under (the command stays memcite)


def memcite_version() -> str:
    """memcite's version, from the installed package's metadata."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # run from a source tree that was never installed
        from memcite import __version__

        return __version__
