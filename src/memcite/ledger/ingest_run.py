"""``memcite ingest``'s work: named session files, or every session file of a Codex home.

The command resolves its options and prints; this module reads the files and records
their replies (``memcite.ledger.ingest`` for one file, ``memcite.ledger.session_offsets``
for a home), and renders each file's report as the lines the command prints. Every
input is checked before the ledger is opened (``open_ledger`` is called only then), so
bad inputs alone create nothing.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable

from memcite.display import count
from memcite.errors import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK, InputError, MemciteError

__all__ = ["FileInterrupted", "home_exit_code", "home_summary_line", "ingest_files",
           "ingest_home_sessions", "report_line", "report_notes"]


class FileInterrupted(Exception):  # noqa: N818 - a signal: the database failed mid-file
    """The ledger failed while a file was being read (``error``: the ``sqlite3.Error``)."""

    def __init__(self, error: sqlite3.Error) -> None:
        super().__init__(str(error))
        self.error = error


def ingest_files(paths: list[str], open_ledger: Callable[[], sqlite3.Connection], *,
                 codex_home: str, policy: str, profile: str, max_bytes: int,
                 progress=None,
                 on_report: Callable[[str, object], None],
                 on_error: Callable[[MemciteError], None]) -> int:
    """Record the replies of the session files ``paths``; the exit code of the run.

    A file that cannot be read is handed to ``on_error`` (its exit code counts) and the
    others go on; each file read is handed to ``on_report`` with its ``IngestReport``.
    ``progress`` (a callable with ``done()``) is shown while a file is read. Raises a
    ``MemciteError`` or ``sqlite3.Error`` before anything is read, ``FileInterrupted``
    when the database fails during a file.
    """
    from memcite.ledger.codex_home import codex_memory_folder
    from memcite.ledger.ingest import check_rollout, ingest_rollout

    code = EXIT_OK
    root = codex_memory_folder(codex_home)
    readable = []
    for path in paths:  # before the database: bad inputs alone create nothing
        try:
            check_rollout(path)
        except MemciteError as error:
            on_error(error)
            code = max(code, error.exit_code)
            continue
        readable.append(path)
    if not readable:
        return code
    conn = open_ledger()
    try:
        for path in readable:
            try:
                report = ingest_rollout(conn, path, profile=profile, policy=policy,
                                        memory_root=root, progress=progress,
                                        max_bytes=max_bytes)
            except MemciteError as error:
                on_error(error)
                code = max(code, error.exit_code)
                continue
            finally:
                if progress is not None:
                    progress.done()
            on_report(path, report)
            if report.rejected:
                code = max(code, EXIT_FINDINGS)
            if report.problems:
                code = max(code, EXIT_BAD_INPUT)
    except sqlite3.Error as exc:
        raise FileInterrupted(exc) from exc
    finally:
        conn.close()
    return code


def ingest_home_sessions(codex_home: str, open_ledger: Callable[[], sqlite3.Connection], *,
                         since: int | None, policy: str, profile: str, progress=None,
                         on_file: Callable[[object], None] | None = None):
    """Bring every session file of ``codex_home`` up to date, from the stored offsets; the
    ``HomeIngest`` summary (``memcite.ledger.session_offsets.ingest_codex_home``)."""
    from memcite.ledger.codex_home import codex_memory_folder
    from memcite.ledger.session_offsets import SESSION_FOLDERS, ingest_codex_home

    if not any(os.path.isdir(os.path.join(codex_home, f)) for f in SESSION_FOLDERS):
        raise InputError(f"{codex_home}: no sessions/ or archived_sessions/ folder, no session "
                         "to ingest", hint="pass Codex's home with --codex-home DIR, or "
                         "name session files")
    conn = open_ledger()
    try:
        return ingest_codex_home(conn, codex_home, since=since, progress=progress,
                                 on_file=on_file, profile=profile, policy=policy,
                                 memory_root=codex_memory_folder(codex_home))
    finally:
        conn.close()


def report_notes(path: str, report, max_bytes: int) -> list[str]:
    """The notes (stderr lines, without ``memcite: ``) about one file's skipped lines."""
    notes = []
    if report.bad_line_count:
        lines = ", ".join(str(n) for n in report.bad_lines)
        more = "…" if report.bad_line_count > len(report.bad_lines) else ""
        notes.append(f"{path}: {count(report.bad_line_count, 'line')} not JSON or nested too "
                     f"deeply (lines {lines}{more}); skipped")
    if report.long_line_count:
        lines = ", ".join(str(n) for n in report.long_lines)
        more = "…" if report.long_line_count > len(report.long_lines) else ""
        notes.append(f"{path}: {count(report.long_line_count, 'reply line')} longer than the limit of "
                     f"{max_bytes} bytes (lines {lines}{more}); skipped without being read "
                     "whole (raise it with --max-bytes)")
    if report.session_id is None and report.replies:
        notes.append(f"{path}: no session_meta line; replies recorded without a thread id")
    return notes


def report_line(path: str, report) -> str:
    """The line ``ingest`` prints for one file read (with its newline)."""
    return (
        f"{path}: {count(report.replies, 'reply', 'replies')},"
        f" {report.recorded} recorded, {report.duplicates} already recorded,"
        f" {count(report.counted, 'citation')} counted"
        + (f", {count(len(report.unknown_ids), 'id')} not in the inventory"
           if report.unknown_ids else "")
        + (f", {count(len(report.not_uuid_ids), 'id')} not UUIDs"
           if report.not_uuid_ids else "")
        + "\n"
    )


def home_summary_line(summary) -> str:
    """The line ``ingest`` with no files ends with (with its newline)."""
    return (
        f"{summary.codex_home}: {count(summary.files, 'session file')}, {summary.read} read "
        f"({summary.reread} again from the start), {summary.unchanged} unchanged; "
        f"{count(summary.replies, 'reply', 'replies')}, {summary.recorded} "
        f"recorded, {summary.duplicates} already recorded, {count(summary.counted, 'citation')} "
        "counted\n")


def home_exit_code(summary) -> int:
    """2 when a file could not be read (the others were), 1 when replies were rejected."""
    if summary.failed:
        return EXIT_BAD_INPUT  # done with problems: the other files were read
    return EXIT_FINDINGS if summary.rejected else EXIT_OK
