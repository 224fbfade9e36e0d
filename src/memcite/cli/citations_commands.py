"""The bodies of ``memcite parse`` and ``memcite strip``: read input, read the reply, print.

Shared by the Typer commands and the fast path; each returns the exit code.
"""

from __future__ import annotations

import sys

from memcite.citations.models import Reading
from memcite.cli.console import check_choice, dump_json, masked, report_error, source_name
from memcite.cli.inputs import DEFAULT_MAX_BYTES, read_text
from memcite.errors import CitationError, MemciteError

PROFILE_CHOICES = ("codex", "strict")
ERROR_CHOICES = ("strict", "replace")

__all__ = ["format_reading", "parse", "report_error", "report_strict_failure", "strip", "write_visible"]


def report_strict_failure(error: CitationError, name: str) -> int:
    """Print every strict-mode problem with its place, then a one-line summary; exit code 1."""
    _print_diagnostics(error, name)
    count = len(error.diagnostics)
    sys.stderr.write(
        f"memcite: error: {name}: {count} problem{'s' if count != 1 else ''} in a strict reading;"
        " fix them or read with --profile codex\n"
    )
    return error.exit_code


MAX_PROBLEMS_SHOWN = 50  # in text; --json lists every one


def _problem_lines(diagnostics, name: str) -> list[str]:
    """One line per problem, the first ``MAX_PROBLEMS_SHOWN``, then a count of the rest."""
    lines = [f"{name}:{masked(diagnostic)}" for diagnostic in diagnostics[:MAX_PROBLEMS_SHOWN]]
    rest = len(diagnostics) - MAX_PROBLEMS_SHOWN
    if rest > 0:
        lines.append(f"{name}: … and {rest} more problem{'s' if rest != 1 else ''} "
                     "(--json lists every one)")
    return lines


def _more(count: int, stem: str, one: str, many: str) -> list[str]:
    rest = count - MAX_PROBLEMS_SHOWN
    return [f"  … and {rest} more {stem}{one if rest == 1 else many} (--json lists every one)"] \
        if rest > 0 else []


def _print_diagnostics(reading_or_error, name: str) -> None:
    for line in _problem_lines(reading_or_error.diagnostics, name):
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


def format_reading(reading: Reading, name: str) -> str:
    """A readable summary of a reading, for people at a terminal."""
    lines: list[str] = []
    citation = reading.citation
    if citation is None:
        lines.append(f"{name}: no citation ({len(reading.blocks)} block(s))")
    else:
        lines.append(
            f"{name}: {len(citation.entries)} entr{'y' if len(citation.entries) == 1 else 'ies'},"
            f" {len(citation.rollout_ids)} rollout id(s), {len(reading.thread_ids)} counted"
            f" ({len(reading.blocks)} block(s))"
        )
        for entry in citation.entries[:MAX_PROBLEMS_SHOWN]:
            lines.append(f"  {entry.path}:{entry.line_start}-{entry.line_end}  {entry.note}")
        lines.extend(_more(len(citation.entries), "entr", "y", "ies"))
        for rollout_id in citation.rollout_ids[:MAX_PROBLEMS_SHOWN]:
            lines.append(f"  id {rollout_id}")
        lines.extend(_more(len(citation.rollout_ids), "id", "", "s"))
    if reading.thread_ids:
        shown = ", ".join(reading.thread_ids[:MAX_PROBLEMS_SHOWN])
        rest = len(reading.thread_ids) - MAX_PROBLEMS_SHOWN
        lines.append("counted: " + shown + (f", … and {rest} more" if rest > 0 else ""))
    lines.extend(_problem_lines(reading.diagnostics, name))
    return "\n".join(lines) + "\n"


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
        sys.stdout.write(format_reading(reading, name))
    return 0
