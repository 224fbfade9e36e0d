"""The body of ``memcite report`` (declared in ``memcite.cli.report_app``): the usage report of
``memcite stats`` as one self-contained HTML page; returns the exit code.

The data is read exactly as ``stats`` reads it (the same checks, the same library calls,
``--limit`` at ``memcite.retention.report_html.ROWS``), plus the report's extras
(``memcite.retention.report_data``); the page is drawn by
``memcite.retention.report_html`` and written atomically (a temporary file beside it,
renamed over it), never through a link, never over anything but a regular file. Like the
other command bodies it imports neither Typer nor pydantic, so that it can run from the
fast path (``memcite.cli.fastpath``).
"""

from __future__ import annotations

import os
import sqlite3
import stat
import sys
import time

from memcite.errors import InputError, MemciteError

DEFAULT_FILE = "memcite-report.html"
_NEW_FILE_MODE = 0o600  # the page names a person's memories, paths and projects


def _target(path: str) -> tuple[str, str, str]:
    """``(full path, folder, name)`` of the page to write; a folder or a path ending in ``/``
    is no file name (exit 2)."""
    full = os.path.abspath(path)
    folder, name = os.path.split(full)
    if path.endswith(("/", os.sep)) or not name or name in (".", ".."):
        raise InputError(f"--html {path}: not a file name", hint=f"name the page, e.g. "
                         f"--html {os.path.join(path, DEFAULT_FILE)}")
    return full, folder, name


def write_page(path: str, data: bytes) -> str:
    """Write ``data`` to ``path`` atomically (a temporary file in the same folder, synced,
    renamed over it, read back): never through a symbolic link, and never over anything but
    a regular file (exit 3, nothing written); a missing folder is exit 2. An existing page
    of the user's own keeps its permissions; a new one, or one another user owns, is written
    as a new private page (0600). Returns the full path."""
    from memcite.durable_files import LinkRefused, kept_mode, open_folder, replace_file_at

    full, folder, name = _target(path)
    try:
        folder_fd = open_folder(folder)
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(f"--html {path}: no such folder {folder}; nothing was written") from None
    except OSError as exc:
        raise InputError(f"--html {path}: cannot open {folder} ({exc.strerror}); nothing was "
                         "written") from None
    try:
        try:
            found = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        except FileNotFoundError:
            found = None
        mode = _NEW_FILE_MODE
        if found is not None:
            if stat.S_ISLNK(found.st_mode):
                raise LinkRefused(
                    f"{full} is a symbolic link; memcite does not write through links, so "
                    "nothing was written", hint="remove the link, or name another file")
            if not stat.S_ISREG(found.st_mode):
                from memcite.untrusted import not_regular

                kind = not_regular(found.st_mode) or "not a regular file"
                raise LinkRefused(f"{full} is {kind}, not a regular file; nothing was written",
                                  hint="name another file")
            mode = kept_mode(folder_fd, name, _NEW_FILE_MODE)  # never another user's 0666
        try:
            replace_file_at(folder_fd, name, data, full, mode)
        except OSError as exc:
            raise InputError(f"--html {path}: cannot write ({exc.strerror}); nothing was "
                             "written") from None
    finally:
        os.close(folder_fd)
    return full


def _collect(where, as_of: str | None, since: str | None, judge_without_usage: bool):
    """``(stats dict, extras)`` as ``memcite stats --json --limit ROWS`` reads them, and the
    report's extras."""
    from memcite.retention.report_html import ROWS
    from memcite.retention.stats_report import as_time

    now = as_time(as_of, "--as-of", int(time.time()))
    since_time = as_time(since, "--since", None)
    if where.db_is_server:
        return _fleet_collect(where, now, since_time)
    from memcite.retention.stats_report import build_page

    return build_page(where, now=now, limit=ROWS, since=since_time,
                      judge_without_usage=judge_without_usage)


def _fleet_collect(where, now: int, since: int | None):
    """The page's data from a fleet server (``memcite stats --db postgresql://…``): the
    report's parts that need one machine's ledger or files (ages, links, notes) are left out."""
    from memcite.fleet.report import fleet_stats
    from memcite.retention.report_data import report_extras
    from memcite.retention.report_html import ROWS

    stats = fleet_stats(where, now=now, since=since, limit=ROWS).to_dict()
    return stats, report_extras(None, stats, codex_home=None, memory_folder=None)


def report(html: str | None = None, open: bool = False,  # noqa: A002 - mirrors --open
           codex_home: str | None = None, db: str | None = None, as_of: str | None = None,
           since: str | None = None, judge_without_usage: bool = False) -> int:
    """Write the page; print where, and how large; open it when asked. Returns the exit code."""
    from memcite import __version__
    from memcite.cli.retention_commands import report_read_failure
    from memcite.paths import Locations

    started = time.perf_counter()
    target = html or DEFAULT_FILE
    where = Locations(db=db, codex_home=codex_home)
    try:
        _target(target)  # a bad name is refused before anything is read
        stats, extras = _collect(where, as_of, since, judge_without_usage)
        from memcite.retention.report_html import render_report

        extras["generated_at"] = int(time.time())
        data = render_report(stats, extras, version=__version__).encode("utf-8")
        full = write_page(target, data)
    except (MemciteError, sqlite3.Error) as error:
        return report_read_failure(where.db_given, error)
    took = time.perf_counter() - started
    totals = stats["totals"]
    sys.stdout.write(f"wrote {full} ({len(data):,} bytes in {took:.2f} s): "
                     f"{totals['memories']:,} memories, {totals['dead']:,} dead\n")
    if stats.get("audit") is not None:
        from memcite.retention.audit_counts import audit_line

        sys.stdout.write(audit_line(stats["audit"]) + "\n")
    if open:
        import webbrowser

        from memcite.retention.report_html import file_url

        if not webbrowser.open(file_url(full) or "file://" + full):
            sys.stderr.write("memcite: no browser could be opened; open the file by hand\n")
    return 0
