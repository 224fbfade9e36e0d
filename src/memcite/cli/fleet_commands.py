"""The body of ``memcite push`` (see ``memcite.fleet``): options checked, the library called,
the result printed. The fleet's report is ``memcite stats --db postgresql://…``, whose body is
``memcite.cli.retention_commands.fleet_stats``."""

from __future__ import annotations

import os
import socket
import sqlite3
import sys
import time

from memcite.cli.console import dump_json, note, report_error
from memcite.errors import EXIT_OK, InputError, MemciteError
from memcite.paths import Locations


def _fleet_config() -> dict:
    from memcite.retention.rules import load_fleet_config

    return load_fleet_config(Locations().config.path)


def _machine_name(given: str | None, config: dict) -> str:
    name = given or config.get("machine") or socket.gethostname()
    if not name or not name.strip() or len(name) > 200 or any(ord(c) < 32 for c in name):
        raise InputError(f"--machine: {name!r} is not a usable machine name",
                         hint="1 to 200 printable characters")
    return name.strip()


def push(to: str | None, db: str | None, codex_home: str | None, machine: str | None,
         since: str | None, dry_run: bool, full: bool, batch: int, json: bool) -> int:  # noqa: A002
    """Push this ledger to the fleet server (see ``memcite.fleet.push``)."""
    from memcite.fleet.connection import FleetError, connect, describe, server_error, server_from
    from memcite.ledger.codex_home import locate
    from memcite.retention.stats_report import as_time

    try:
        config = _fleet_config()
        conninfo, _source = server_from(to, config)
        name = _machine_name(machine, config)
        since_time = as_time(since, "--since", None)
        path = Locations(db=db).db_path
        if not os.path.isfile(path):
            raise InputError(f"no memcite database at {path}: nothing to push",
                             hint="record replies, or run `memcite sync`, first")
        from memcite.fleet.push import push_ledger
        from memcite.ledger.store import open_store
        from memcite.retention.checks import MemoryFolder
        from memcite.retention.stats import inventory_knew

        local = open_store(path, readonly=True)  # a damaged ledger is said before the home
        try:
            locations = locate(Locations(db=db, codex_home=codex_home))
            folder = MemoryFolder(locations.memory_folder,
                                  known_once=inventory_knew(local, locations.codex_home))
            server = connect(conninfo, autocommit=True)
            progress = None if json else _progress
            try:
                report = push_ledger(local, server, server_name=describe(conninfo), machine=name,
                                     ledger=os.path.realpath(path), folder=folder,
                                     now=int(time.time()), since=since_time, dry_run=dry_run,
                                     full=full, batch_replies=batch, progress=progress)
            except FleetError:
                raise
            except Exception as error:
                import psycopg

                if isinstance(error, psycopg.Error):
                    raise server_error(error, conninfo) from None
                raise
            finally:
                server.close()
                folder.close()
        finally:
            local.close()
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
        _print_push(report)
    return EXIT_OK


def _progress(report, last: int) -> None:
    if report.batches > 1 or report.to_reply - report.from_reply > 50_000:
        note(f"pushed {report.replies:,} replies ({report.citations:,} cited ids), up to "
             f"reply {report.to_reply:,}")


def _print_push(report) -> None:
    verb = "would push" if report.dry_run else "pushed"
    out = sys.stdout
    if report.up_to_date:
        out.write(f"Nothing new to push to {report.server} (machine {report.machine}): the "
                  f"server has this ledger up to reply {report.to_reply:,}.\n")
        return
    out.write(f"{verb.capitalize()} to {report.server} as machine {report.machine}:\n")
    out.write(f"  replies {report.replies:,}, cited ids {report.citations:,}, cited entries "
              f"{report.entries:,}, memory rows {report.memories:,}"
              f"{'' if report.dry_run else f' ({report.batches} batches, {report.seconds} s)'}\n")
    if report.reconciled:
        out.write("  the server's cursor did not match this ledger (rebuilt, or --full): every "
                  "reply was sent again and the ones the server had were skipped\n")
    if report.dry_run:
        out.write("  nothing was sent (--dry-run)\n")
