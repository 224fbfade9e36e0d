"""``memcite push``'s work: this machine's ledger sent to the fleet's PostgreSQL server.

``push_home`` takes the run's ``memcite.paths.Locations`` (memcite's config, database and
Codex's home), the options, and ``now``; it returns ``memcite.fleet.push``'s report, which
``render_text`` turns into what the command prints. The engine is ``push_ledger``.
"""

from __future__ import annotations

import os
import socket

from memcite.errors import InputError

__all__ = ["machine_name", "push_home", "render_text"]


def machine_name(given: str | None, config: dict) -> str:
    """The machine's name on the server: ``--machine``, else the config's, else the host's."""
    name = given or config.get("machine") or socket.gethostname()
    if not name or not name.strip() or len(name) > 200 or any(ord(c) < 32 for c in name):
        raise InputError(f"--machine: {name!r} is not a usable machine name",
                         hint="1 to 200 printable characters")
    return name.strip()


def push_home(where, *, to: str | None, machine: str | None, since: str | None,
              dry_run: bool, full: bool, batch: int, now: int, progress=None):
    """Push the ledger ``where`` names to the fleet server (``to``, else memcite's config);
    a ``PushReport``. Raises a ``MemciteError`` (a server's error included) or
    ``sqlite3.Error`` (the ledger cannot be read)."""
    from memcite.fleet.connection import FleetError, connect, describe, server_error, server_from
    from memcite.ledger.codex_home import locate
    from memcite.retention.rules import load_fleet_config
    from memcite.retention.stats_report import as_time

    config = load_fleet_config(where.config.path)
    conninfo, _source = server_from(to, config)
    name = machine_name(machine, config)
    since_time = as_time(since, "--since", None)
    path = where.db_path
    if not os.path.isfile(path):
        raise InputError(f"no memcite database at {path}: nothing to push",
                         hint="record replies, or run `memcite sync`, first")
    from memcite.fleet.push import push_ledger
    from memcite.ledger.store import open_store
    from memcite.retention.checks import MemoryFolder
    from memcite.retention.stats import inventory_knew

    local = open_store(path, readonly=True)  # a damaged ledger is said before the home
    try:
        locations = locate(where)
        folder = MemoryFolder(locations.memory_folder,
                              known_once=inventory_knew(local, locations.codex_home))
        server = connect(conninfo, autocommit=True)
        try:
            return push_ledger(local, server, server_name=describe(conninfo), machine=name,
                               ledger=os.path.realpath(path), folder=folder,
                               now=now, since=since_time, dry_run=dry_run,
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


def render_text(report) -> str:
    """What ``memcite push`` prints of its ``PushReport``."""
    parts: list[str] = []
    verb = "would push" if report.dry_run else "pushed"
    if report.up_to_date:
        parts.append(f"Nothing new to push to {report.server} (machine {report.machine}): the "
                     f"server has this ledger up to reply {report.to_reply:,}.\n")
        return "".join(parts)
    parts.append(f"{verb.capitalize()} to {report.server} as machine {report.machine}:\n")
    parts.append(f"  replies {report.replies:,}, cited ids {report.citations:,}, cited entries "
                 f"{report.entries:,}, memory rows {report.memories:,}"
                 f"{'' if report.dry_run else f' ({report.batches} batches, {report.seconds} s)'}\n")
    if report.reconciled:
        parts.append("  the server's cursor did not match this ledger (rebuilt, or --full): every "
                 "reply was sent again and the ones the server had were skipped\n")
    if report.dry_run:
        parts.append("  nothing was sent (--dry-run)\n")
    return "".join(parts)
