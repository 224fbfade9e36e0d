"""``memcite consolidation``: Codex's memory consolidation as Codex records it, read-only.

The Typer wrapper declares the options; ``consolidation`` is the body (it returns the
exit code). The library is ``memcite.codex.consolidation_history`` (``consolidation_with_runs``), the text
``memcite.codex.consolidation_text``'s.
"""

from __future__ import annotations

import sys
import time
from typing import Annotated

import typer

from memcite.cli.options import COMMAND, CodexHomeOpt, DbOpt, JsonOpt, exit_with
from memcite.errors import EXIT_FINDINGS, EXIT_OK, MemciteError


def consolidation(codex_home: str | None = None, json: bool = False,  # noqa: A002
                  now: int | None = None, history: bool = False, db: str | None = None) -> int:
    """Print what Codex records of its consolidation in one home, and what the last run (each
    run, ``history``) did to the memories in use; 1 when a run failed, is stuck, none
    succeeded for too long while something waits, or the last run has findings."""
    from memcite.cli.console import dump_json, report_error
    from memcite.codex.consolidation_history import consolidation_with_runs
    from memcite.codex.consolidation_text import render_text
    from memcite.paths import Locations

    try:
        report = consolidation_with_runs(Locations(db=db, codex_home=codex_home),
                                  now=int(time.time()) if now is None else now, history=history)
    except MemciteError as error:
        return report_error(error)
    if json:
        dump_json(report.to_dict())
    else:
        sys.stdout.write(render_text(report))
    return EXIT_FINDINGS if report.problems or report.run_findings else EXIT_OK


def consolidation_command(
    codex_home: CodexHomeOpt = None,
    json: JsonOpt = False,
    history: Annotated[bool, typer.Option(
        "--history", help="What each consolidation memcite has snapshots of did, newest first "
        "(default: the last one).")] = False,
    db: DbOpt = None,
) -> None:
    """Show Codex's consolidations: what each run did, failures.

    For each memory store of the Codex home (v1, v2): the consolidation and extraction
    jobs as Codex records them (status, last success, the error of a failed run, a
    back-off in force, a lease held past its time), what the next consolidation would
    take, and whether each ad-hoc note was taken in. Read-only; memcite never starts a
    consolidation. What the last run did to the memories in use (--history: each run),
    from the snapshots memcite keeps beside its ledger: cited lines lost or rewritten,
    unsupported new lines, forgotten lines come back, ad-hoc notes absorbed, growth,
    job health; memory store v2's readiness, and (with a v2 store) what switching the
    working directory's project from v1 to v2 would change. Exit 1 when a run failed or is stuck,
    none succeeded for longer than [consolidation] stale_hours while something waits, or
    the last run has findings.

    Examples:

    \b
        memcite consolidation
        memcite consolidation --codex-home ~/.codex --json
        memcite consolidation --history
    """
    exit_with(consolidation(codex_home=codex_home, json=json, history=history, db=db))


def register(app) -> None:
    """Add ``memcite consolidation`` to ``app``."""
    app.command("consolidation", **COMMAND)(consolidation_command)
