"""``memcite consolidation``: Codex's memory consolidation as Codex records it, read-only.

The Typer wrapper declares the options; ``consolidation`` is the body (it returns the
exit code). The library is ``memcite.codex.consolidation`` (``consolidation_of``), the text
``memcite.codex.consolidation_text``'s.
"""

from __future__ import annotations

import sys
import time

from memcite.cli.options import COMMAND, CodexHomeOpt, JsonOpt, exit_with
from memcite.errors import EXIT_FINDINGS, EXIT_OK, MemciteError


def consolidation(codex_home: str | None = None, json: bool = False,  # noqa: A002
                  now: int | None = None) -> int:
    """Print what Codex records of its consolidation in one home; 1 when a run failed, is
    stuck, or none succeeded for too long while something waits."""
    from memcite.cli.console import dump_json, report_error
    from memcite.codex.consolidation import consolidation_of
    from memcite.codex.consolidation_text import render_text
    from memcite.paths import Locations

    try:
        report = consolidation_of(Locations(codex_home=codex_home),
                                  now=int(time.time()) if now is None else now)
    except MemciteError as error:
        return report_error(error)
    if json:
        dump_json(report.to_dict())
    else:
        sys.stdout.write(render_text(report))
    return EXIT_FINDINGS if report.problems else EXIT_OK


def consolidation_command(
    codex_home: CodexHomeOpt = None,
    json: JsonOpt = False,
) -> None:
    """Show Codex's memory consolidation: last run, failures, notes.

    For each memory store of the Codex home (v1, v2): the consolidation and extraction
    jobs as Codex records them (status, last success, the error of a failed run, a
    back-off in force, a lease held past its time), what the next consolidation would
    take, and whether each ad-hoc note was taken in. Read-only; memcite never starts a
    consolidation. Exit 1 when a run failed or is stuck, or none succeeded for longer
    than [consolidation] stale_hours while something waits.

    Examples:

    \b
        memcite consolidation
        memcite consolidation --codex-home ~/.codex --json
    """
    exit_with(consolidation(codex_home=codex_home, json=json))


def register(app) -> None:
    """Add ``memcite consolidation`` to ``app``."""
    app.command("consolidation", **COMMAND)(consolidation_command)
