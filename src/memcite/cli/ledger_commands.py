"""The bodies of ``memcite record``, ``sync``, ``ingest`` and ``rebuild``; each returns the exit code.

Shared by the Typer commands (``memcite.cli.ledger_app``) and, for ``record`` and
``ingest``, the fast path: this module imports neither Typer, rich (but for a progress
bar on a terminal) nor sqlite-utils. Default locations come from ``memcite.paths``;
resolving them creates nothing: the default data folder is created only by a command
about to write to its database, and every input (a reply, a Codex home, a rollout or JSON
Lines file) is checked before the database is opened. The work is in the ledger wing
(``memcite.ledger.jsonl_batch``, ``ingest_run``, ``sync.sync_home``, ``recording``).
"""

from __future__ import annotations

import os
import sys

from memcite.cli.citations_commands import report_strict_failure, write_visible
from memcite.cli.console import check_choice, dump_json, masked, note, report_error, source_name
from memcite.cli.inputs import DEFAULT_MAX_BYTES, decode_utf8, hint_if_terminal, read_bytes
from memcite.display import count
from memcite.errors import (
    EXIT_FINDINGS,
    EXIT_OK,
    CitationError,
    InputError,
    MemciteError,
)
from memcite.ledger.database import database_error, open_ledger
from memcite.paths import Locations, resolve_codex_home, resolve_db_path

# resolve_* and report_error are also used by memcite.cli.retention_commands.
__all__ = ["ingest", "ingest_home", "rebuild", "record", "report_error", "resolve_codex_home",
           "resolve_db_path", "sync"]

PROFILE_CHOICES = ("codex", "strict")
POLICY_CHOICES = ("default", "codex")  # memcite.ledger.recording.POLICIES (not imported here)
ERROR_CHOICES = ("strict", "replace")


# --------------------------------------------------------------------------- record


def record(
    source: str | None = None,
    db: str | None = None,
    codex_home: str | None = None,
    jsonl: str | None = None,
    policy: str = "default",
    profile: str = "codex",
    errors: str = "strict",
    max_bytes: int = DEFAULT_MAX_BYTES,
    id: str | None = None,  # noqa: A002 - mirrors the --id option
    at: str | None = None,
    thread_id: str | None = None,
    cwd: str | None = None,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
) -> int:
    """Record one reply (printing the visible reply) or, with ``jsonl``, a batch of replies."""
    import sqlite3

    from memcite.ledger.recording import POLICIES

    try:
        check_choice(policy, POLICIES, "--policy")
        check_choice(profile, PROFILE_CHOICES, "--profile")
        check_choice(errors, ERROR_CHOICES, "--errors")
        if jsonl is not None and source is not None:
            raise InputError("give either a reply (FILE or -) or --jsonl FILE, not both")
        if jsonl is not None and (id or at or thread_id or cwd):
            raise InputError("--id, --at, --thread-id and --cwd describe one reply; "
                             'with --jsonl put them in each line ("id", "at", ...)')
        if max_bytes < 1:
            raise InputError(f"--max-bytes: {max_bytes} is not a positive number of bytes")
        from memcite.ledger.codex_home import codex_memory_folder

        where = Locations(db=db, codex_home=codex_home)
        # The folder of the store Codex reads ($CODEX_HOME/memories, or memories_v2).
        root = codex_memory_folder(where.codex_home_path)
        if jsonl is not None:
            return _record_batch(jsonl, where, root, policy, profile, errors, max_bytes, json)
        return _record_one(source, where, db, root, policy, profile, errors, max_bytes, json,
                           id, at, thread_id, cwd)
    except CitationError as error:  # strict: the reply is passed through, not recorded
        if not json:
            write_visible(error.visible)
        code = report_strict_failure(error, source_name(source))
        note("note: the reply was not recorded")
        return code
    except MemciteError as error:
        return report_error(error)
    except sqlite3.Error as exc:
        return report_error(database_error(db, exc))


def _record_one(source, where, db, root, policy, profile, errors, max_bytes, json, id, at,
                thread_id, cwd) -> int:
    """Read the reply, print it, then record it: a database problem never costs the reply."""
    from memcite.citations.reading import parse_reply
    from memcite.ledger.recording import record_in_ledger, reply_to_record, result_notes

    name = source_name(source)
    text = decode_utf8(read_bytes(source, max_bytes=max_bytes), name=name, errors=errors)
    reply = reply_to_record(text, where=name, id=id, at=at, thread_id=thread_id, cwd=cwd)
    reading = parse_reply(text, profile=profile)  # strict: CitationError, nothing printed
    closed = None  # a reader that went away does not cost the recording
    if not json:
        for diagnostic in reading.diagnostics:
            sys.stderr.write(f"{name}:{masked(diagnostic)}\n")
        try:
            write_visible(reading.visible)
        except BrokenPipeError as exc:
            closed = exc
    try:
        result = record_in_ledger(where, reply, reading, profile=profile, policy=policy,
                                  memory_root=root, named=db)
    except MemciteError as error:
        return _not_recorded(error, reading, json)
    if json:
        dump_json({"reading": reading.to_dict(), "recorded": result.to_dict()})
    else:
        for line in result_notes(result):
            note(line)
    if closed is not None:
        raise closed  # exit 141 (memcite.__main__), once the reply is recorded
    return EXIT_OK


def _not_recorded(error: MemciteError, reading, json: bool) -> int:
    """Report a reply that was read (and printed) but could not be recorded."""
    if json:
        dump_json({"reading": reading.to_dict(), "recorded": None, "error": str(error)})
    code = report_error(error)
    if not json:
        note("note: the visible reply was written, but it was not recorded")
    return code


def _record_batch(jsonl, where, root, policy, profile, errors, max_bytes, json) -> int:
    from memcite.ledger.jsonl_batch import open_jsonl, record_jsonl

    name = source_name(jsonl)
    if jsonl == "-":
        hint_if_terminal("JSON Lines")
        handle = sys.stdin.buffer
    else:
        handle = open_jsonl(jsonl, name)  # before the database: a bad input creates nothing

    def show(result) -> None:
        if json:
            dump_json(result.to_dict())
        elif result.status == "rejected":
            note(f"{result.where}: {result.error} (not recorded)")

    try:
        conn = open_ledger(where)
        try:
            totals = record_jsonl(conn, handle, name, policy=policy, profile=profile,
                                  errors=errors, max_bytes=max_bytes, memory_root=root,
                                  on_result=show, on_problem=note)
        finally:
            conn.close()
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()
    (sys.stderr if json else sys.stdout).write(totals.summary() + "\n")
    return totals.exit_code()


# --------------------------------------------------------------------------- sync, ingest, rebuild


def sync(
    db: str | None = None,
    codex_home: str | None = None,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
    progress=None,
) -> int:
    """Fill the inventory from a Codex home and print what changed."""
    import sqlite3

    from memcite.ledger.sync import render_notes, render_text, sync_home

    try:
        where = Locations(db=db, codex_home=codex_home)
        # a batch write: a damaged file refused
        report = sync_home(where, lambda: open_ledger(where, quick_check=True), progress=progress)
    except MemciteError as error:
        return report_error(error)
    except sqlite3.Error as exc:
        return report_error(database_error(
            db, exc, "the sync stopped (batches already committed are kept; re-run it)"))
    for warning in report.warnings():
        note(f"WARNING: {warning}")
    if json:
        dump_json(report.to_dict())
        return 0
    sys.stdout.write(render_text(report))
    for line in render_notes(report):
        note(line)
    return 0


def ingest(
    rollouts: list[str] | None = None,
    db: str | None = None,
    codex_home: str | None = None,
    policy: str = "default",
    profile: str = "codex",
    json: bool = False,  # noqa: A002 - mirrors the --json flag
    since: str | None = None,
    progress: bool | None = None,
    home_progress=None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> int:
    """Record the assistant replies of the given rollout files; print one line per file.

    With no files, every session file of the Codex home, each read from where the
    last read stopped (``ingest_home``; ``home_progress`` is its progress callback, by
    default a bar on a terminal's stderr). Each reply is keyed by its session and line
    (see ``memcite.ledger.ingest``). A file that cannot be read or a line that is bad is
    reported and skipped; the rest is recorded and the exit code is 2 ("done with
    problems"); 1 when a strict reading rejected replies. ``progress``: None shows it on a
    terminal's stderr only. Also run by the fast path: it imports neither Typer nor rich.
    """
    import sqlite3

    from memcite.ledger.ingest_run import FileInterrupted, ingest_files
    from memcite.ledger.recording import POLICIES

    if not rollouts:
        shown = home_progress
        if shown is None and not json and (sys.stderr.isatty() if progress is None else progress):
            shown = RichProgress()
        try:
            return ingest_home(db=db, codex_home=codex_home, policy=policy, profile=profile,
                               json=json, since=since, progress=shown)
        finally:
            if shown is not None and shown is not home_progress:
                shown.stop()
    try:
        check_choice(policy, POLICIES, "--policy")
        check_choice(profile, PROFILE_CHOICES, "--profile")
        if since is not None:
            raise InputError("--since chooses among the session files of a Codex home; "
                             "with files named, leave it out")
        if max_bytes < 1:
            raise InputError(f"--max-bytes: {max_bytes} is not a positive number of bytes")
        shown = IngestProgress() if (sys.stderr.isatty() if progress is None else progress) \
            else None
        where = Locations(db=db, codex_home=codex_home)
        # a batch write: a damaged file refused
        return ingest_files(
            rollouts, lambda: open_ledger(where, quick_check=True),
            codex_home=where.codex_home_path, policy=policy,
            profile=profile, max_bytes=max_bytes, progress=shown,
            on_report=lambda path, report: _print_ingest_report(path, report, json, max_bytes),
            on_error=report_error)
    except MemciteError as error:
        return report_error(error)
    except FileInterrupted as stop:
        return report_error(database_error(
            db, stop.error, "the file in progress was not finished (re-running records only "
            "what is missing)"))
    except sqlite3.Error as exc:
        return report_error(database_error(db, exc, "nothing was ingested"))


class RichProgress:
    """A progress bar on stderr (rich, imported at the first report), started then."""

    def __init__(self) -> None:
        self._progress = None
        self._tasks: dict[str, object] = {}

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        from rich.console import Console
        from rich.progress import Progress

        from memcite.display import styled

        if self._progress is None:  # memcite's own phase names: the bar's sequences go raw
            self._progress = Progress(console=Console(file=styled(sys.stderr)), transient=True)
            self._progress.start()
        if phase not in self._tasks:
            self._tasks[phase] = self._progress.add_task(phase, total=total)
        self._progress.update(self._tasks[phase], completed=done, total=total)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()


class IngestProgress:
    """``ingest``'s progress on stderr: nothing for the first second, then a line at most
    every ``interval`` seconds (rewritten in place on a terminal)."""

    def __init__(self, *, interval: float = 1.0, stream=None, clock=None) -> None:
        import time

        self._clock = clock or time.monotonic
        self._stream = stream or sys.stderr
        self._interval = interval
        self._path: str | None = None
        self._started = self._last = 0.0
        self._drawn = False

    def __call__(self, scan) -> None:
        now = self._clock()
        if scan.path != self._path:
            self._path, self._started, self._last = scan.path, now, now
        if now - self._last < self._interval:
            return
        self._last = now
        size = None if scan.path.endswith(".zst") else _file_size(scan.path)
        read = f"{scan.offset / 1e6:.0f} MB" + (
            f" of {size / 1e6:.0f} MB ({100 * scan.offset // size}%)" if size else "")
        line = (f"memcite: ingest {scan.path}: {read}, {scan.lines} lines, "
                f"{count(scan.replies, 'reply', 'replies')}, "
                f"{now - self._started:.0f} s")
        if self._stream.isatty():  # the line's path escaped, memcite's own sequence raw
            from memcite.display import escape_controls, styled

            styled(self._stream).write("\r\x1b[K" + escape_controls(line))
            self._drawn = True
        else:
            self._stream.write(line + "\n")
        self._stream.flush()

    def done(self) -> None:
        """Clear the line drawn on a terminal (the file's report follows on stdout)."""
        if self._drawn:
            from memcite.display import styled

            styled(self._stream).write("\r\x1b[K")
            self._stream.flush()
            self._drawn = False
        self._path = None


def _file_size(path: str) -> int | None:
    try:
        return os.path.getsize(path) or None
    except OSError:
        return None


def ingest_home(
    db: str | None = None,
    codex_home: str | None = None,
    policy: str = "default",
    profile: str = "codex",
    json: bool = False,  # noqa: A002 - mirrors the --json flag
    since: str | None = None,
    progress=None,
) -> int:
    """Bring every session file of a Codex home up to date, from the stored offsets."""
    import sqlite3

    from memcite.ledger.ingest_run import home_exit_code, home_summary_line, ingest_home_sessions
    from memcite.ledger.recording import POLICIES, parse_time

    def show(result) -> None:
        if result.status != "read":
            return
        if json:
            dump_json(result.to_dict())
        elif result.report.replies or result.reread:
            _print_ingest_report(result.path, result.report, False)

    try:
        check_choice(policy, POLICIES, "--policy")
        check_choice(profile, PROFILE_CHOICES, "--profile")
        after = None if since is None else parse_time(since, what="--since")
        where = Locations(db=db, codex_home=codex_home)
        # a batch write: a damaged file refused
        summary = ingest_home_sessions(
            where.codex_home_path, lambda: open_ledger(where, quick_check=True),
            since=after, policy=policy,
            profile=profile, progress=progress, on_file=show)
    except MemciteError as error:
        return report_error(error)
    except sqlite3.Error as exc:
        return report_error(database_error(db, exc))
    for problem in summary.failed:
        note(f"{problem} (skipped)")
    (sys.stderr if json else sys.stdout).write(home_summary_line(summary))
    return home_exit_code(summary)


def _print_ingest_report(path: str, report, json: bool,
                         max_bytes: int = DEFAULT_MAX_BYTES) -> None:
    from memcite.ledger.ingest_run import report_line, report_notes

    for line in report_notes(path, report, max_bytes):
        note(line)
    if json:
        dump_json(report.to_dict())
        return
    sys.stdout.write(report_line(path, report))


def rebuild(
    db: str | None = None,
    check: bool = False,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
) -> int:
    """Recompute usage counts from the log; with ``check``, only report (exit 1 on a difference)."""
    import sqlite3

    from memcite.ledger.recording import rebuild as rebuild_counts

    try:
        # Counts rebuilt from a damaged log would be wrong: the whole file is checked first
        # (before any migration). --check is read-only: a missing database is an error,
        # nothing is created or migrated.
        conn = open_ledger(Locations(db=db), readonly=check, quick_check=True)
        try:
            report = rebuild_counts(conn, apply=not check)
        finally:
            conn.close()
    except MemciteError as error:
        return report_error(error)
    except sqlite3.Error as exc:
        return report_error(database_error(db, exc, "not read" if check else
                                            "nothing was changed"))
    if json:
        dump_json(report.to_dict())
    else:
        sys.stdout.write(report.render_text())
    return EXIT_FINDINGS if check and (report.differences or report.counters) else EXIT_OK
