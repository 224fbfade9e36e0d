"""The bodies of ``memcite record``, ``sync``, ``ingest`` and ``rebuild``; each returns the exit code.

Shared by the Typer commands (``memcite.cli.ledger_app``) and, for ``record``, the
fast path: this module imports neither Typer, rich nor sqlite-utils. Default
locations come from ``memcite.paths``; resolving them creates nothing: the
default data folder is created only by a command about to write to its
database, and every input (a reply, a Codex home, a rollout or JSON Lines file)
is checked before the database is opened.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

from memcite.cli.citations_commands import report_strict_failure, write_visible
from memcite.cli.console import check_choice, dump_json, masked, note, report_error, source_name
from memcite.cli.inputs import DEFAULT_MAX_BYTES, decode_utf8, hint_if_terminal, read_bytes
from memcite.errors import (
    EXIT_BAD_INPUT,
    EXIT_FINDINGS,
    EXIT_OK,
    CitationError,
    InputError,
    MemciteError,
)
from memcite.ledger.database import database_error, open_ledger
from memcite.paths import Locations, resolve_codex_home, resolve_db_path
from memcite.untrusted import bounded_lines

# resolve_* and report_error are also used by memcite.cli.retention_commands.
__all__ = ["ingest", "ingest_home", "open_database", "rebuild", "record", "report_error", "resolve_codex_home",
           "resolve_db_path", "sync"]

PROFILE_CHOICES = ("codex", "strict")
POLICY_CHOICES = ("default", "codex")  # memcite.ledger.recording.POLICIES (not imported here)
ERROR_CHOICES = ("strict", "replace")


# --------------------------------------------------------------------------- the database


def open_database(db: str | None, *, readonly: bool = False, migrate_schema: bool = True,
                  quick_check: bool = False):
    """Open the database ``--db`` names (else ``$MEMCITE_DB``, else the default one), as
    ``memcite.ledger.database.open_ledger`` opens a run's."""
    return open_ledger(Locations(db=db), readonly=readonly, migrate_schema=migrate_schema,
                       quick_check=quick_check)


# --------------------------------------------------------------------------- record


def _open_jsonl(source: str):
    """The binary handle of a JSON Lines input (stdin for ``-``); a clear error if it cannot be read."""
    name = source_name(source)
    if source == "-":
        hint_if_terminal("JSON Lines")
        return sys.stdin.buffer
    from memcite.ledger.memory_files import open_regular

    try:
        return os.fdopen(open_regular(source), "rb")  # a FIFO or a device: refused, never a hang
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{name}: is a directory, not a JSON Lines file") from None
    except ValueError:
        raise InputError(f"{name!r}: not a usable file name (it holds a NUL byte)") from None
    except OSError as exc:
        raise InputError(f"{name}: cannot read: {exc.strerror or exc}",
                         hint="to read from a pipe, pass --jsonl - and pipe into stdin") from None


def _jsonl_replies(handle, name: str, max_bytes: int, errors: str, problems) -> Iterator:
    """Yield ``ReplyInput``s from a JSON Lines handle; a bad line is noted and skipped."""

    from memcite.ledger.recording import ReplyInput, parse_time
    from memcite.untrusted import loads_json

    for number, raw in enumerate(bounded_lines(handle, max_bytes), start=1):
        where = f"{name}:{number}"
        if raw is None:
            problems.append(f"{where}: longer than the limit of {max_bytes} bytes (skipped)")
            continue
        if not raw.strip():
            continue
        try:
            item = loads_json(decode_utf8(raw, name=where, errors=errors))
        except InputError as error:
            problems.append(f"{error} (skipped)")
            continue
        except ValueError as exc:
            problems.append(f"{where}: not JSON ({exc}) (skipped)")
            continue
        try:
            yield _reply_from_object(item, where, ReplyInput, parse_time)
        except InputError as error:
            problems.append(f"{error} (skipped)")


def _reply_from_object(item, where, reply_type, parse_time):
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        raise InputError(f'{where}: expected an object with a "text" string')
    if not item["text"].strip():
        raise InputError(f'{where}: "text" is empty')
    fields = {}
    for name in ("id", "thread_id", "cwd"):
        value = item.get(name)
        if value is not None and not isinstance(value, str):
            raise InputError(f'{where}: "{name}" must be a string')
        fields[name] = value or None
    at = item.get("at")
    if at is not None:
        at = parse_time(at, what=f'{where}: "at"')
    return reply_type(text=item["text"], at=at, where=where, **fields)


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

        # The folder of the store Codex reads ($CODEX_HOME/memories, or memories_v2).
        root = codex_memory_folder(Locations(codex_home=codex_home).codex_home_path)
        if jsonl is not None:
            return _record_batch(jsonl, db, root, policy, profile, errors, max_bytes, json)
        return _record_one(source, db, root, policy, profile, errors, max_bytes, json,
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


def _record_one(source, db, root, policy, profile, errors, max_bytes, json, id, at,
                thread_id, cwd) -> int:
    """Read the reply, print it, then record it: a database problem never costs the reply."""
    from memcite.citations.reading import parse_reply
    from memcite.ledger.recording import ReplyInput, parse_time

    name = source_name(source)
    text = decode_utf8(read_bytes(source, max_bytes=max_bytes), name=name, errors=errors)
    if not text.strip():
        raise InputError(f"{name}: the reply is empty; nothing recorded",
                         hint="pass the agent's reply as FILE or on stdin")
    reply = ReplyInput(text=text, id=id or None,
                       at=None if at is None else parse_time(at, what="--at"),
                       thread_id=thread_id or None, cwd=cwd or None, where=name)
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
        result = _record_reply(db, reply, reading, profile, policy, root)
    except MemciteError as error:
        return _not_recorded(error, reading, json)
    if json:
        dump_json({"reading": reading.to_dict(), "recorded": result.to_dict()})
    _report_result(result, quiet=json)
    if closed is not None:
        raise closed  # exit 141 (memcite.__main__), once the reply is recorded
    return EXIT_OK


def _record_reply(db, reply, reading, profile, policy, root):
    """``record_reply`` of the reply already read, in the command's database; a database
    problem is a ``MemciteError``."""
    import sqlite3

    from memcite.ledger.recording import record_reply

    try:
        conn = open_database(db)
        try:
            return record_reply(conn, reply, profile=profile, policy=policy, memory_root=root,
                                reading=reading)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise database_error(db, exc) from None


def _not_recorded(error: MemciteError, reading, json: bool) -> int:
    """Report a reply that was read (and printed) but could not be recorded."""
    if json:
        dump_json({"reading": reading.to_dict(), "recorded": None, "error": str(error)})
    code = report_error(error)
    if not json:
        note("note: the visible reply was written, but it was not recorded")
    return code


def _count(number: int, word: str, many: str | None = None) -> str:
    return f"{number} {word if number == 1 else (many or word + 's')}"


def _report_result(result, *, quiet: bool) -> None:
    if quiet:
        return
    if result.status == "recorded":  # say what was recorded: the reply went to stdout
        counted = result.counted
        note(f"recorded 1 reply (key {result.reply_key[:16]}): "
             f"{_count(len(result.ids), 'memory id')} cited, "
             f"{_count(len(counted), 'citation')} counted for "
             f"{_count(len(set(counted)), 'memory', 'memories')}, "
             f"{_count(result.entries, 'cited line range')}")
    if result.status == "duplicate":
        note(f"note: this reply was already recorded (key {result.reply_key[:16]}); "
             "nothing counted again")
    for thread_id in result.unknown:
        note(f"note: {thread_id} is not a memory in the inventory; logged "
             "(run `memcite sync` if it is new)")


def _is_regular_file(handle) -> bool:
    """Whether ``handle`` reads a file (read through at once), not a pipe or a terminal."""
    import stat

    try:
        return stat.S_ISREG(os.fstat(handle.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False


class _Problems:
    """Bad input lines: printed to stderr as they are found, and counted."""

    def __init__(self) -> None:
        self.count = 0

    def append(self, message: str) -> None:
        self.count += 1
        note(message)


def _record_batch(jsonl, db, root, policy, profile, errors, max_bytes, json) -> int:
    from memcite.ledger.recording import BATCH_REPLIES, record_replies

    problems = _Problems()
    totals = {"recorded": 0, "duplicate": 0, "rejected": 0}
    counted = 0
    unknown: set[str] = set()
    not_uuid: set[str] = set()
    handle = _open_jsonl(jsonl)  # before the database: a bad input creates nothing
    try:
        conn = open_database(db)
        try:
            replies = _jsonl_replies(handle, source_name(jsonl), max_bytes, errors, problems)
            batch = BATCH_REPLIES if _is_regular_file(handle) else 1  # a live pipe: each reply
            for result in record_replies(conn, replies, profile=profile, policy=policy,
                                         memory_root=root, batch_replies=batch):
                totals[result.status] += 1
                counted += len(result.counted)
                unknown.update(result.unknown)
                not_uuid.update(result.not_uuid)
                if json:
                    dump_json(result.to_dict())
                elif result.status == "rejected":
                    note(f"{result.where}: {result.error} (not recorded)")
        finally:
            conn.close()
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()
    summary = (
        f"recorded {totals['recorded']} repl{'y' if totals['recorded'] == 1 else 'ies'}"
        f" ({totals['duplicate']} already recorded, {totals['rejected']} rejected,"
        f" {problems.count} line(s) skipped): {counted} citation(s) counted,"
        f" {len(unknown)} id(s) not in the inventory, {len(not_uuid)} id(s) not UUIDs"
    )
    (sys.stderr if json else sys.stdout).write(summary + "\n")
    code = EXIT_FINDINGS if totals["rejected"] else EXIT_OK
    return EXIT_BAD_INPUT if problems.count else code


# --------------------------------------------------------------------------- sync, ingest, rebuild


def sync(
    db: str | None = None,
    codex_home: str | None = None,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
    progress=None,
) -> int:
    """Fill the inventory from a Codex home and print what changed."""
    import sqlite3

    from memcite.ledger.codex_home import locate
    from memcite.ledger.sync import check_codex_home, sync_codex_home
    from memcite.paths import Locations

    try:
        locations = locate(Locations(db=db, codex_home=codex_home))
        check_codex_home(locations)  # before the database: a wrong home creates nothing
        conn = open_database(db, quick_check=True)  # a batch write: a damaged file refused
        try:
            report = sync_codex_home(conn, locations, progress=progress)
        finally:
            conn.close()
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
    found = []
    if report.stage1_found:
        found.append(f"{report.stage1_rows} row(s) from {report.state_db}")
    if report.folder_found:
        found.append(f"{report.raw_sections} raw_memories.md section(s) and "
                     f"{report.summary_headers} rollout summary header(s)")
    also = f"; dual_write: Codex also consolidates {'v2' if report.store == 'v1' else 'v1'}" \
        if report.dual_write else ""
    sys.stdout.write(
        f"synced {report.codex_home}: {', '.join(found)}\n"
        f"  memory store {report.store}, the one Codex reads ({report.store_from}){also}\n"
        f"  {report.inserted} new, {report.updated} changed, {report.unchanged} unchanged "
        f"(not rewritten), {report.marked_missing} marked missing (gone from Codex, kept)\n"
        + (f"  of those gone: {report.gone_asked} memcite had asked Codex to forget, "
           f"{report.marked_missing - report.gone_asked} Codex removed by itself (its start-up "
           "pruning of unused memories, or its consolidation)\n" if report.marked_missing else "")
    )
    counts = report.counts or {}
    if report.stage1_found:
        sys.stdout.write(
            f"  memories {counts.get('memories', 0)}; cited: by Codex's counters "
            f"{counts.get('cited_codex', 0)} ({counts.get('codex_citations', 0)} citations), "
            f"by memcite's log {counts.get('cited_memcite', 0)}\n")
    else:
        sys.stdout.write(f"  memories {counts.get('memories', 0)}; usage unknown (no Codex "
                         "memories database)\n")
    if report.forget_requests_seen_gone:
        sys.stdout.write(f"  {report.forget_requests_seen_gone} memor"
                         f"{'y' if report.forget_requests_seen_gone == 1 else 'ies'} memcite "
                         "asked Codex to forget are gone from Codex now\n")
    if report.invalid_ids:
        note(f"note: {report.invalid_ids} row(s) with a thread id that is not a UUID skipped")
    for line in report.skipped:
        note(f"warning: {line}")
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
    last read stopped (``ingest_home``; ``home_progress`` is its progress callback).
    Each reply is keyed by its session and line (see ``memcite.ledger.ingest``). A file
    that cannot be read or a line that is bad is reported and skipped; the rest is
    recorded and the exit code is 2 ("done with problems"); 1 when a strict reading
    rejected replies. ``progress``: None shows it on a terminal's stderr only.
    """
    import sqlite3

    from memcite.ledger.codex_home import codex_memory_folder
    from memcite.ledger.ingest import check_rollout, ingest_rollout
    from memcite.ledger.recording import POLICIES

    if not rollouts:
        return ingest_home(db=db, codex_home=codex_home, policy=policy, profile=profile,
                           json=json, since=since, progress=home_progress)
    code = 0
    try:
        check_choice(policy, POLICIES, "--policy")
        check_choice(profile, PROFILE_CHOICES, "--profile")
        if since is not None:
            raise InputError("--since chooses among the session files of a Codex home; "
                             "with files named, leave it out")
        if max_bytes < 1:
            raise InputError(f"--max-bytes: {max_bytes} is not a positive number of bytes")
        root = codex_memory_folder(Locations(codex_home=codex_home).codex_home_path)
        readable = []
        for path in rollouts:  # before the database: bad inputs alone create nothing
            try:
                check_rollout(path)
            except MemciteError as error:
                code = max(code, report_error(error))
                continue
            readable.append(path)
        if not readable:
            return code
        conn = open_database(db, quick_check=True)  # a batch write: a damaged file refused
    except MemciteError as error:
        return report_error(error)
    except sqlite3.Error as exc:
        return report_error(database_error(db, exc, "nothing was ingested"))
    shown = IngestProgress() if (sys.stderr.isatty() if progress is None else progress) else None
    try:
        for path in readable:
            try:
                report = ingest_rollout(conn, path, profile=profile, policy=policy,
                                        memory_root=root, progress=shown, max_bytes=max_bytes)
            except MemciteError as error:
                code = max(code, report_error(error))
                continue
            finally:
                if shown is not None:
                    shown.done()
            _print_ingest_report(path, report, json, max_bytes)
            if report.rejected:
                code = max(code, EXIT_FINDINGS)
            if report.problems:
                code = max(code, EXIT_BAD_INPUT)
    except sqlite3.Error as exc:
        return report_error(database_error(
            db, exc, "the file in progress was not finished (re-running records only what is "
            "missing)"))
    finally:
        conn.close()
    return code


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
                f"{scan.replies} repl{'y' if scan.replies == 1 else 'ies'}, "
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

    from memcite.ledger.codex_home import codex_memory_folder
    from memcite.ledger.recording import POLICIES, parse_time
    from memcite.ledger.session_offsets import SESSION_FOLDERS, ingest_codex_home

    try:
        check_choice(policy, POLICIES, "--policy")
        check_choice(profile, PROFILE_CHOICES, "--profile")
        after = None if since is None else parse_time(since, what="--since")
        home = Locations(codex_home=codex_home).codex_home_path
        if not any(os.path.isdir(os.path.join(home, f)) for f in SESSION_FOLDERS):
            raise InputError(f"{home}: no sessions/ or archived_sessions/ folder, no session "
                             "to ingest", hint="pass Codex's home with --codex-home DIR, or "
                             "name session files")
        conn = open_database(db, quick_check=True)  # a batch write: a damaged file refused
    except MemciteError as error:
        return report_error(error)
    except sqlite3.Error as exc:
        return report_error(database_error(db, exc))

    def show(result) -> None:
        if result.status != "read":
            return
        if json:
            dump_json(result.to_dict())
        elif result.report.replies or result.reread:
            _print_ingest_report(result.path, result.report, False)

    try:
        summary = ingest_codex_home(conn, home, since=after, progress=progress, on_file=show,
                                    profile=profile, policy=policy,
                                    memory_root=codex_memory_folder(home))
    except MemciteError as error:
        return report_error(error)
    except sqlite3.Error as exc:
        return report_error(database_error(db, exc))
    finally:
        conn.close()
    for problem in summary.failed:
        note(f"{problem} (skipped)")
    (sys.stderr if json else sys.stdout).write(
        f"{summary.codex_home}: {summary.files} session file(s), {summary.read} read "
        f"({summary.reread} again from the start), {summary.unchanged} unchanged; "
        f"{summary.replies} repl{'y' if summary.replies == 1 else 'ies'}, {summary.recorded} "
        f"recorded, {summary.duplicates} already recorded, {summary.counted} citation(s) counted\n")
    if summary.failed:
        return EXIT_BAD_INPUT  # done with problems: the other files were read
    return EXIT_FINDINGS if summary.rejected else EXIT_OK


def _print_ingest_report(path: str, report, json: bool,
                         max_bytes: int = DEFAULT_MAX_BYTES) -> None:
    if report.bad_line_count:
        lines = ", ".join(str(n) for n in report.bad_lines)
        more = "…" if report.bad_line_count > len(report.bad_lines) else ""
        note(f"{path}: {report.bad_line_count} line(s) are not JSON or nested too deeply "
             f"(lines {lines}{more}); skipped")
    if report.long_line_count:
        lines = ", ".join(str(n) for n in report.long_lines)
        more = "…" if report.long_line_count > len(report.long_lines) else ""
        note(f"{path}: {report.long_line_count} reply line(s) longer than the limit of "
             f"{max_bytes} bytes (lines {lines}{more}); skipped without being read whole "
             "(raise it with --max-bytes)")
    if report.session_id is None and report.replies:
        note(f"{path}: no session_meta line; replies recorded without a thread id")
    if json:
        dump_json(report.to_dict())
        return
    sys.stdout.write(
        f"{path}: {report.replies} repl{'y' if report.replies == 1 else 'ies'},"
        f" {report.recorded} recorded, {report.duplicates} already recorded,"
        f" {report.counted} citation(s) counted"
        + (f", {len(report.unknown_ids)} id(s) not in the inventory"
           if report.unknown_ids else "")
        + (f", {len(report.not_uuid_ids)} id(s) not UUIDs"
           if report.not_uuid_ids else "")
        + "\n"
    )


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
        conn = open_database(db, readonly=check, quick_check=True)
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
        if not report.differences:
            sys.stdout.write(f"checked {report.memories} memories: the counts match the log\n")
        else:
            verb = "fixed" if report.applied else "differ"
            sys.stdout.write(f"checked {report.memories} memories: "
                             f"{len(report.differences)} {verb}\n")
            for d in report.differences:
                sys.stdout.write(
                    f"  {d.thread_id}: usage_count {d.usage_count} -> {d.logged_usage_count},"
                    f" last_usage {d.last_usage} -> {d.logged_last_usage}\n"
                )
        if report.counters:
            verb = "recounted" if report.applied else "differ from a fresh count"
            sys.stdout.write(f"{len(report.counters)} counter(s) kept for stats {verb}\n")
            for c in report.counters:
                sys.stdout.write(f"  {c['counter']}: {c['stored']} -> {c['counted']}\n")
    return EXIT_FINDINGS if check and (report.differences or report.counters) else EXIT_OK
