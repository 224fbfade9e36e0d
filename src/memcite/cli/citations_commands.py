"""The bodies of ``memcite parse`` and ``memcite strip``: read input, read the reply, print.

The reading is ``memcite.citations.reading.parse_reply``; its text for a person is
``memcite.citations.summary``'s.

Shared by the Typer commands and the fast path; each returns the exit code.
"""

from __future__ import annotations

import sys

from memcite.cli.console import check_choice, dump_json, report_error, source_name
from memcite.cli.inputs import DEFAULT_MAX_BYTES, read_text
from memcite.errors import CitationError, MemciteError

PROFILE_CHOICES = ("codex", "strict")
ERROR_CHOICES = ("strict", "replace")

__all__ = ["parse", "report_error", "report_strict_failure", "strip", "write_visible"]


def report_strict_failure(error: CitationError, name: str) -> int:
    """Print every strict-mode problem with its place, then a one-line summary; exit code 1."""
    _print_diagnostics(error, name)
    count = len(error.diagnostics)
    sys.stderr.write(
        f"memcite: error: {name}: {count} problem{'s' if count != 1 else ''} in a strict reading;"
        " fix them or read with --profile codex\n"
    )
    return error.exit_code


def _print_diagnostics(reading_or_error, name: str) -> None:
    if not reading_or_error.diagnostics:  # the usual reply: strip imports no more than it needs
        return
    from memcite.citations.summary import problem_lines

    for line in problem_lines(reading_or_error.diagnostics, name):
        sys.stderr.write(line + "\n")


def _read(source, profile, errors, max_bytes):
    from memcite.citations.reading import parse_reply

    check_choice(profile, PROFILE_CHOICES, "--profile")
    check_choice(errors, ERROR_CHOICES, "--errors")
    text = read_text(source, errors=errors, max_bytes=max_bytes)
    return parse_reply(text, profile=profile)


def strip(
    source: str | None = None,
    profile: str = "codex",
    errors: str = "strict",
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> int:
    """Write the visible reply byte for byte to stdout; diagnostics go to stderr."""
    name = source_name(source)
    try:
        reading = _read(source, profile, errors, max_bytes)
    except CitationError as error:  # the pipeline still gets the reply; the exit code says 1
        write_visible(error.visible)
        return report_strict_failure(error, name)
    except MemciteError as error:
        return report_error(error)
    _print_diagnostics(reading, name)
    write_visible(reading.visible)
    return 0


def write_visible(visible: str | None) -> None:
    """Write the visible reply to stdout byte for byte (nothing when there is none)."""
    if visible is None:
        return
    out = sys.stdout.buffer
    out.write(visible.encode("utf-8", "surrogatepass"))
    out.flush()


def parse(
    source: str | None = None,
    profile: str = "codex",
    errors: str = "strict",
    max_bytes: int = DEFAULT_MAX_BYTES,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
) -> int:
    """Print the reading of one reply, as JSON or as a readable summary."""
    name = source_name(source)
    try:
        reading = _read(source, profile, errors, max_bytes)
    except CitationError as error:
        if json:
            dump_json({"error": error.located(name),
                       "diagnostics": [d.to_dict() for d in error.diagnostics]})
            return error.exit_code
        return report_strict_failure(error, name)
    except MemciteError as error:
        return report_error(error)
    if json:
        dump_json(reading.to_dict())
    else:
        from memcite.citations.summary import format_reading

        sys.stdout.write(format_reading(reading, name))
    return 0
