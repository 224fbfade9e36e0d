"""The body of ``memcite report`` (declared in ``memcite.cli.report_app``): the usage report of
``memcite stats`` as one self-contained HTML page (``memcite.fleet.report_page.write_report``);
returns the exit code. Like the other command bodies it imports neither Typer nor pydantic,
so that it can run from the fast path (``memcite.cli.fastpath``).
"""

from __future__ import annotations

import sqlite3
import sys
import time

from memcite.errors import MemciteError
from memcite.fleet.report_page import DEFAULT_FILE

__all__ = ["DEFAULT_FILE", "report"]


def report(output: str | None = None, open: bool = False,  # noqa: A002 - mirrors --open
           codex_home: str | None = None, db: str | None = None, as_of: str | None = None,
           since: str | None = None, judge_without_usage: bool = False) -> int:
    """Write the page (to ``output``, else ``DEFAULT_FILE`` in memcite's data folder, never
    the current folder: usually someone's repository); print where, and how large; open it
    when asked. Returns the exit code."""
    from memcite import __version__
    from memcite.cli.retention_commands import report_read_failure
    from memcite.fleet.report_page import write_report
    from memcite.paths import Locations
    from memcite.retention.stats_report import as_time

    started = time.perf_counter()
    import os

    where = Locations(db=db, codex_home=codex_home)
    try:
        if output is None:
            os.makedirs(where.data_home, mode=0o700, exist_ok=True)
        written = write_report(where, output or os.path.join(where.data_home, DEFAULT_FILE),
                               now=as_time(as_of, "--as-of", int(time.time())),
                               since=as_time(since, "--since", None),
                               judge_without_usage=judge_without_usage,
                               generated_at=int(time.time()), version=__version__)
    except (MemciteError, sqlite3.Error) as error:
        return report_read_failure(where.db_given, error)
    except OSError as exc:  # memcite's data folder cannot be made
        return report_read_failure(where.db_given, MemciteError(
            f"{exc.filename or where.data_home}: cannot be created ({exc.strerror or exc})",
            hint="give the page's place with --output FILE"))
    took = time.perf_counter() - started
    totals = written.stats["totals"]
    sys.stdout.write(f"wrote {written.path} ({written.size:,} bytes in {took:.2f} s): "
                     f"{totals['memories']:,} memories, {totals['dead']:,} dead\n")
    if written.stats.get("audit") is not None:
        from memcite.retention.audit_counts import audit_line

        sys.stdout.write(audit_line(written.stats["audit"]) + "\n")
    if open:
        import webbrowser

        from memcite.retention.report_html import file_url

        if not webbrowser.open(file_url(written.path) or "file://" + written.path):
            sys.stderr.write(f"memcite: no browser could be opened; open {written.path} "
                             "by hand\n")
    else:
        sys.stdout.write(f"open it: memcite report --open (or open {written.path})\n")
    return 0
