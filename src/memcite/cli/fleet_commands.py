"""The bodies of ``memcite push`` and of ``memcite stats --db postgresql://…`` (see
``memcite.fleet``): options checked, the library called, the result printed."""

from __future__ import annotations

import os
import socket
import sys
import time

from memcite.cli.console import dump_json, note, report_error
from memcite.errors import EXIT_OK, InputError, MemciteError


def _fleet_config() -> dict:
    from memcite.retention.rules import default_memcite_config_path, load_fleet_config

    return load_fleet_config(default_memcite_config_path())


def _machine_name(given: str | None, config: dict) -> str:
    name = given or config.get("machine") or socket.gethostname()
    if not name or not name.strip() or len(name) > 200 or any(ord(c) < 32 for c in name):
        raise InputError(f"--machine: {name!r} is not a usable machine name",
                         hint="1 to 200 printable characters")
    return name.strip()


def push(to: str | None, db: str | None, codex_home: str | None, machine: str | None,
         since: str | None, dry_run: bool, full: bool, batch: int, json: bool) -> int:  # noqa: A002
    """Push this ledger to the fleet server (see ``memcite.fleet.push``)."""
    from memcite.cli.retention_commands import _time, locate_home
    from memcite.fleet.connection import FleetError, connect, describe, server_error, server_from
    from memcite.paths import resolve_db_path

    try:
        config = _fleet_config()
        conninfo, _source = server_from(to, config)
        name = _machine_name(machine, config)
        since_time = _time(since, "--since", None)
        path = resolve_db_path(db)
        if not os.path.isfile(path):
            raise InputError(f"no memcite database at {path}: nothing to push",
                             hint="record replies, or run `memcite sync`, first")
        locations = locate_home(codex_home)
        from memcite.fleet.push import push_ledger
        from memcite.ledger.store import open_store
        from memcite.retention.checks import MemoryFolder
        from memcite.retention.stats import inventory_knew

        local = open_store(path, readonly=True)
        try:
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


def fleet_stats(db: str, *, machine: str | None, project: str | None, max_unused_days,
                rule: str, as_of: str | None, since: str | None, limit: int, json: bool) -> int:  # noqa: A002
    """``memcite stats`` over a fleet server."""
    from memcite.cli.retention_commands import _inputs, _time, print_stats

    try:
        _locations, settings, now = _inputs(None, rule=rule, max_unused_days=max_unused_days,
                                            as_of=as_of, limit=limit)
        since_time = _time(since, "--since", None)
        if project is not None and not os.path.isabs(project):
            raise InputError(f"--project: {project!r} is not an absolute path",
                             hint="give the project's folder as its replies' cwd has it")
        report = fleet_report(db, machine=machine, project=project, as_of=now,
                              max_unused_days=settings.max_unused_days, rule=rule,
                              since=since_time, limit=limit)
    except MemciteError as error:
        return report_error(error)
    if json:
        dump_json(report.to_dict())
    else:
        from memcite.fleet.connection import describe

        print_stats(report, where={"--db": describe(db)})
    return EXIT_OK


def fleet_report(db: str, *, as_of: int, max_unused_days: int, machine: str | None = None,
                 project: str | None = None, rule: str = "memcite", since: int | None = None,
                 limit: int = 20):
    """The fleet's ``StatsReport``; every server problem a ``FleetError`` (password masked)."""
    from memcite.fleet.connection import FleetError, connect, server_error
    from memcite.fleet.report import FleetScope, collect_fleet_stats

    server = connect(db, autocommit=True)
    try:
        return collect_fleet_stats(server, scope=FleetScope(machine, project), as_of=as_of,
                                   max_unused_days=max_unused_days, rule=rule, since=since,
                                   limit=limit)
    except LookupError as error:
        raise InputError(str(error)) from None
    except FleetError:
        raise
    except Exception as error:
        import psycopg

        if isinstance(error, psycopg.errors.UndefinedTable):
            raise FleetError("the server has no fleet tables yet",
                             hint="run `memcite push --to URL` from a machine first") from None
        if isinstance(error, psycopg.Error):
            raise server_error(error, db) from None
        raise
    finally:
        server.close()
