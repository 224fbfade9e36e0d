"""The body of ``memcite push`` (see ``memcite.fleet``): the locations resolved, the library
called (``memcite.fleet.push_run.push_home``), the result printed. The fleet's report is
``memcite stats --db postgresql://…``, whose body is
``memcite.cli.retention_commands.fleet_stats``."""

from __future__ import annotations

import sqlite3
import sys
import time

from memcite.cli.console import dump_json, note, report_error
from memcite.errors import EXIT_OK, MemciteError
from memcite.paths import Locations


def push(to: str | None, db: str | None, codex_home: str | None, machine: str | None,
         since: str | None, dry_run: bool, full: bool, batch: int, json: bool) -> int:  # noqa: A002
    """Push this ledger to the fleet server (see ``memcite.fleet.push``)."""
    from memcite.fleet.push_run import push_home, render_text

    try:
        report = push_home(Locations(db=db, codex_home=codex_home), to=to, machine=machine,
                           since=since, dry_run=dry_run, full=full, batch=batch,
                           now=int(time.time()), progress=None if json else _progress)
    except sqlite3.Error as error:
        from memcite.cli.retention_commands import report_read_failure

        return report_read_failure(db, error)
    except KeyboardInterrupt:
        note("interrupted: the batches already sent stay on the server; "
             "run `memcite push` again to go on from there")
        return 130
    except MemciteError as error:
        return report_error(error)
    if json:
        dump_json(report.to_dict())
    else:
        sys.stdout.write(render_text(report))
    return EXIT_OK


def _progress(report, last: int) -> None:
    if report.batches > 1 or report.to_reply - report.from_reply > 50_000:
        note(f"pushed {report.replies:,} replies ({report.citations:,} cited ids), up to "
             f"reply {report.to_reply:,}")
