"""The body of ``memcite thread``: one thread's memory report, or what memory costs (``--cost``).

Typer-free like the other ``*_commands`` modules (``memcite.cli.thread_app`` declares the
options); returns the exit code: 0 done, 2 bad input or no such thread.
"""

from __future__ import annotations

import os
import sys
import time

from memcite.cli.console import dump_json, report_error
from memcite.codex.thread_text import render_cost, render_thread
from memcite.errors import InputError, MemciteError


def _since(value: str | None) -> int | None:
    if value is None:
        return None
    if value.strip().isdigit():
        return int(value)
    from memcite.ledger.recording import parse_time

    return parse_time(value, what="--since")


def thread(
    thread_id: str | None = None,
    last: bool = False,
    cost: bool = False,
    since: str | None = None,
    codex_home: str | None = None,
    db: str | None = None,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
    cwd: str | None = None,
    now: int | None = None,
    anywhere: bool = False,
) -> int:
    """Print one thread's memory report (``thread_id``, or ``last``: in this project, else,
    outside a git project or with ``anywhere``, the home's newest), or with ``cost`` what
    memory cost across the home's threads."""
    now = int(time.time()) if now is None else now
    cwd = cwd or os.getcwd()
    try:
        chosen = sum(bool(x) for x in (thread_id, last, cost))
        if chosen != 1:
            raise InputError("give one of: a thread ID, --last, or --cost",
                             hint="`memcite thread --last` reports the newest thread of this "
                                  "project")
        if since is not None and not cost:
            raise InputError("--since goes with --cost")
        if anywhere and not last:
            raise InputError("--anywhere goes with --last")
        from memcite.paths import Locations

        located = Locations(db=db, codex_home=codex_home)
        home = located.codex_home_path
        env_sqlite = located.codex_sqlite_home_env
        if cost:
            from memcite.codex.memory_cost import memory_cost
            from memcite.ledger.codex_home import locate_codex_home

            where = locate_codex_home(home, env_sqlite_home=env_sqlite, cwd=cwd)
            report = memory_cost(where.codex_home, since=_since(since), now=now,
                                 sqlite_home=where.sqlite_home)
            if json:
                dump_json(report)
            else:
                sys.stdout.write(render_cost(report))
            return 0
        from memcite.codex.thread import thread_report
        from memcite.readpath.projects import find_project_root

        root = find_project_root(cwd) if last else None
        outside = root is not None and not os.path.lexists(os.path.join(root, ".git"))
        report = thread_report(home, thread_id, last_in=root, db_path=located.db_path,
                               env_sqlite_home=env_sqlite, cwd=cwd, now=now,
                               anywhere=last and (anywhere or outside))
        if outside and not anywhere:
            report.setdefault("warnings", []).insert(
                0, f"{cwd} is in no git project: the newest thread of the whole Codex home "
                "(`--anywhere` asks for it anywhere)")
    except MemciteError as error:
        return report_error(error)
    except OSError as exc:
        return report_error(MemciteError(f"{exc.filename or 'thread'}: {exc.strerror or exc}"))
    if json:
        dump_json(report)
    else:
        sys.stdout.write(render_thread(report))
    return 0
