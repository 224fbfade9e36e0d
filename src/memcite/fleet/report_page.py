"""The HTML page of ``memcite report`` as one library function: ``write_report`` reads the
usage report as ``stats`` reads it (``memcite.retention.stats_report.build_page``, or
``memcite.fleet.report.fleet_stats`` over a fleet server, the page's parts that need one
machine's ledger or files left out), draws it (``memcite.retention.report_html``) and writes it
atomically (``write_page``: a temporary file beside it, renamed over it), never through a link,
never over anything but a regular file.

In the fleet wing because it reads a fleet server too. Where things are comes in as one
``memcite.paths.Locations``; the times as ``now`` and ``generated_at``. Light at import (no
pydantic, no Typer): the fast path runs it.
"""

from __future__ import annotations

import os
import stat

from memcite.errors import InputError

DEFAULT_FILE = "memcite-report.html"
_NEW_FILE_MODE = 0o600  # the page names a person's memories, paths and projects


def page_target(path: str) -> tuple[str, str, str]:
    """``(full path, folder, name)`` of the page to write; a folder or a path ending in ``/``
    is no file name (exit 2)."""
    full = os.path.abspath(path)
    folder, name = os.path.split(full)
    if path.endswith(("/", os.sep)) or not name or name in (".", ".."):
        raise InputError(f"--output {path}: not a file name", hint=f"name the page, e.g. "
                         f"--output {os.path.join(path, DEFAULT_FILE)}")
    return full, folder, name


def write_page(path: str, data: bytes) -> str:
    """Write ``data`` to ``path`` atomically (a temporary file in the same folder, synced,
    renamed over it, read back): never through a symbolic link, and never over anything but
    a regular file (exit 3, nothing written); a missing folder is exit 2. An existing page
    of the user's own keeps its permissions; a new one, or one another user owns, is written
    as a new private page (0600). Returns the full path."""
    from memcite.durable_files import LinkRefused, kept_mode, open_folder, replace_file_at

    full, folder, name = page_target(path)
    try:
        folder_fd = open_folder(folder)
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(f"--output {path}: no such folder {folder}; nothing was written") from None
    except OSError as exc:
        raise InputError(f"--output {path}: cannot open {folder} ({exc.strerror}); nothing was "
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
            raise InputError(f"--output {path}: cannot write ({exc.strerror}); nothing was "
                             "written") from None
    finally:
        os.close(folder_fd)
    return full


class WrittenReport:
    """The page written: its full path, its size in bytes, and the stats it shows."""

    def __init__(self, path: str, size: int, stats: dict) -> None:
        self.path, self.size, self.stats = path, size, stats


def write_report(where, target: str, *, now: int, since: int | None,
                 judge_without_usage: bool, generated_at: int, version: str) -> WrittenReport:
    """Read the report of ``where`` at ``now`` (cited since ``since``), draw it as one page
    stamped ``generated_at`` and ``version``, and write it to ``target`` (a bad file name is
    refused before anything is read)."""
    from memcite.retention.report_html import render_report

    page_target(target)
    stats, extras = collect_page(where, now=now, since=since,
                                 judge_without_usage=judge_without_usage)
    extras["generated_at"] = generated_at
    data = render_report(stats, extras, version=version).encode("utf-8")
    return WrittenReport(write_page(target, data), len(data), stats)


def collect_page(where, *, now: int, since: int | None, judge_without_usage: bool):
    """``(stats dict, extras)`` as ``memcite stats --json --limit ROWS`` reads them, and the
    report's extras; from the fleet server when ``where.db`` is one."""
    from memcite.retention.report_html import ROWS

    if where.db_is_server:
        from memcite.fleet.report import fleet_stats
        from memcite.retention.report_data import report_extras

        stats = fleet_stats(where, now=now, since=since, limit=ROWS).to_dict()
        return stats, report_extras(None, stats, codex_home=None, memory_folder=None)
    from memcite.retention.stats_report import build_page

    return build_page(where, now=now, limit=ROWS, since=since,
                      judge_without_usage=judge_without_usage)
