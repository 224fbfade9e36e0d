"""The bodies of ``memcite stats``, ``prune``, ``restore`` and ``select``; each returns the exit code.

Shared by the Typer commands (``memcite.cli.retention_app``) and, for ``stats``, the
fast path: this module imports neither Typer, pydantic nor sqlite-utils, and
rich only to draw the terminal chart.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time

from memcite.cli.console import dump_json
from memcite.cli.ledger_commands import (
    database_error,
    report_error,
)
from memcite.errors import EXIT_BAD_INPUT, EXIT_OK, InputError, MemciteError
from memcite.paths import Locations
from memcite.retention.rules import check_rule
from memcite.retention.stats_report import (
    JUDGE_OVERRIDE,
    UsageUnknown,
    require_citation_log,
    require_synced_usage,
    require_usage,
    resolve_settings_for,
    store_of,
)
from memcite.retention.stats_report import as_time as _time
from memcite.retention.stats_report import check_limit as _check_limit
from memcite.retention.stats_report import log_root as citation_log_root

__all__ = ["JUDGE_OVERRIDE", "UsageUnknown", "require_synced_usage",
           "require_usage", "resolve_settings_for", "store_of"]


def _codex_locations(codex_home: str | None):
    """This run's Codex home as ``CodexLocations`` (``memcite.ledger.codex_home.locate``); a
    home that is not a folder is an error (exit 2), saying how it was named."""
    from memcite.ledger.codex_home import locate

    return locate(Locations(codex_home=codex_home))


def report_read_failure(db: str | None, error: Exception) -> int:
    """Report a memcite or database error from a command body that reads; its exit code."""
    if isinstance(error, sqlite3.Error):
        error = database_error(db, error, "not read; nothing was written")
    return report_error(error)


def _day(seconds: int | None) -> str:
    from memcite.retention.rules import format_day

    return "-" if not seconds else format_day(seconds)


# --------------------------------------------------------------------------- stats


def _nothing_to_report(db_path: str, home: str) -> MemciteError:
    from memcite.paths import Locations
    from memcite.retention.stats_report import nothing_to_report

    return nothing_to_report(Locations(db=db_path), home)


def stats(
    db: str | None = None,
    codex_home: str | None = None,
    max_unused_days: int | None = None,
    rule: str = "memcite",
    as_of: str | None = None,
    since: str | None = None,
    limit: int = 20,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
    no_cache: bool = False,
    judge_without_usage: bool = False,
    machine: str | None = None,
    project: str | None = None,
) -> int:
    """Print the usage report of one Codex home (dead memories, top, unknown ids, checks), or
    with ``db`` (or ``$MEMCITE_DB``) a PostgreSQL URL, of the fleet server."""
    from memcite.paths import Locations

    where = Locations(db=db, codex_home=codex_home)
    if where.db_is_server:
        return fleet_stats(where, machine=machine, project=project,
                           max_unused_days=max_unused_days, rule=rule, as_of=as_of,
                           since=since, limit=limit, json=json)
    if machine is not None or project is not None:
        return report_error(InputError("--machine and --project report on a fleet server",
                                       hint="give --db postgresql://... (the server "
                                            "`memcite push` sends to)"))
    try:
        from memcite.retention.stats_report import build

        check_rule(rule)
        _check_limit(limit)
        report = build(where, now=_time(as_of, "--as-of", int(time.time())), rule=rule,
                       max_unused_days=max_unused_days, since=_time(since, "--since", None),
                       limit=limit, cache=not no_cache, judge_without_usage=judge_without_usage)
    except (MemciteError, sqlite3.Error) as error:
        return report_read_failure(where.db_given, error)
    if json:
        dump_json(report.to_dict())
    else:
        given = {**where.options_given(), "--as-of": as_of}
        print_stats(report, where={name: value for name, value in given.items() if value})
    return 0


NO_CITATION_LOG = "no citation log (run memcite record or memcite ingest)"
DEFAULT_WIDTH = 80  # columns when the output is no terminal and $COLUMNS is not set
MIN_WIDTH = 40
_ID = 36  # a thread id's columns


def text_width(file=None) -> int:
    """The columns the text report may fill: ``$COLUMNS``, else the terminal's width when
    ``file`` is a terminal, else 80 (never fewer than 40)."""
    columns = os.environ.get("COLUMNS", "").strip()
    try:
        terminal = file is not None and file.isatty()
    except (AttributeError, OSError, ValueError):
        terminal = False
    if not terminal and not (columns.isdigit() and int(columns) > 0):
        return DEFAULT_WIDTH
    import shutil

    return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def _columns(text: str) -> int:
    """How many columns ``text`` takes on a terminal (wide characters two, combining none)."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF"
               else 1 for c in text)


def _plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else many or word + 's'}"


class _Text:
    """The report's lines, each fitted to ``width``: a label cut at its end, a path at its
    start, with an ellipsis; prose wrapped between words."""

    def __init__(self, file, width: int) -> None:
        self.file = file
        self.width = width
        self.dots = "…" if _can_encode(file, "…") else "..."

    def line(self, text: str = "") -> None:
        self.file.write(self.cut(text, self.width) + "\n")

    def cut(self, text: str, room: int) -> str:
        """``text`` cut at its end to ``room`` columns."""
        if _columns(text) <= room:
            return text
        room -= len(self.dots)
        kept, used = [], 0
        for char in text:
            used += _columns(char)
            if used > room:
                break
            kept.append(char)
        return "".join(kept).rstrip() + self.dots

    def cut_path(self, path: str, room: int) -> str:
        """``path`` cut at its start to ``room`` columns, always at a ``/``: its last folders
        whole (never a name cut in the middle; the last name whole even when it is longer)."""
        if _columns(path) <= room:
            return path
        room -= len(self.dots)
        kept, used = [], 0
        for char in reversed(path):
            used += _columns(char)
            if used > room:
                break
            kept.append(char)
        tail = "".join(reversed(kept))
        slash = tail.find("/")
        if slash >= 0:
            return self.dots + tail[slash:]
        cut = path.rstrip("/").rfind("/")
        return self.dots + path[cut:] if cut > 0 else path

    def prose(self, text: str, indent: str = "  ", more: str | None = None) -> None:
        """``text`` wrapped to the width between words (a date or a path is never split), its
        first line indented by ``indent``, the others by ``more`` (two spaces more)."""
        import textwrap

        for line in textwrap.wrap(text, self.width, initial_indent=indent,
                                  subsequent_indent=indent + "  " if more is None else more,
                                  break_long_words=False, break_on_hyphens=False):
            self.line(line)

    def pick(self, *candidates: str) -> None:
        """The first of ``candidates`` that fits, else the last, cut."""
        for candidate in candidates:
            if _columns(candidate) <= self.width:
                self.line(candidate)
                return
        self.line(candidates[-1])

    def title(self, text: str) -> None:
        """A blank line, then a section's title (wrapped when it is too long)."""
        self.line()
        self.prose(text, indent="")


def _count(count: int | None) -> str:
    return "-" if count is None else str(count)


def _counts(memcite: int | None, codex: int | None, *, padded: bool = True) -> str:
    """A memory's two counts, always in the same words and order; ``-``: no count."""
    mine = "-" if memcite is None else str(memcite)
    theirs = "-" if codex is None else str(codex)
    return f"memcite {mine:>4}  Codex {theirs:>4}" if padded else f"memcite {mine}  Codex {theirs}"


CODEX_DASH = "(Codex -: Codex's counter is empty: Codex never counted a use of it)"
MEMCITE_DASH = "(memcite -: no memcite log to count in)"


_LABEL_ROOM = 16  # a table of memories keeps one line per memory while labels get this much


def _memory_rows(text: _Text, rows: list[dict], columns: list[tuple[str, int, bool]]) -> None:
    """Memories as a table, one line each: thread id, ``columns`` (``(header, width,
    optional)``; a row's ``cells`` by header), then the label, cut; optional columns are left
    out when the label would get fewer than 16 columns. Narrower still: the id and label on
    one line, the row's ``details`` (else ``compact``) below."""
    if not rows:
        return
    for keep in (columns, [c for c in columns if not c[2]]):
        fixed = 2 + _ID + sum(2 + size for _header, size, _optional in keep) + 2
        if fixed + _LABEL_ROOM <= text.width:
            text.line("  " + "thread id".ljust(_ID) + "".join(
                f"  {header:>{size}}" for header, size, _optional in keep) + "  label")
            for row in rows:
                head = f"  {row['id']}" + "".join(
                    f"  {row['cells'][header]:>{size}}" for header, size, _optional in keep)
                text.line(f"{head}  {text.cut(row['label'], text.width - len(head) - 2)}")
            return
    padded = 6 + max(_columns(row["details"]) for row in rows) <= text.width
    for row in rows:
        head = f"  {row['id']}  "
        text.line(head + text.cut(row["label"], text.width - _columns(head)))
        text.line(f"      {row['details']}" if padded else f"    {row['compact']}")


def _shell_word(value: str) -> str:
    import shlex

    return shlex.quote(value)


def _codex_changed_since_sync(report) -> bool:
    """Whether Codex's table (its database or its write-ahead log) was written after memcite's
    last sync of the home finished."""
    if report.source != "memcite" or report.last_sync is None or not report.state_db:
        return False
    for path in (report.state_db, report.state_db + "-wal"):
        try:
            if os.stat(path).st_mtime_ns // 1_000_000_000 > report.last_sync:
                return True
        except OSError:
            continue
    return False


def _next_step(report) -> tuple[str, list[str], tuple[str, ...], str] | None:
    """What to run next, true for the report: ``(command, its options, the options of this run
    it must repeat, why)``, or None when nothing needs doing."""
    t = report.totals
    homes = ("--db", "--codex-home")
    if report.source == "codex":
        return "sync", [], homes, "starts memcite's ledger from this home"
    if report.other_homes and not t["memories"] and not t["gone_from_codex"]:
        return "sync", [], homes, "no memories of this home yet"
    if _codex_changed_since_sync(report):
        return "sync", [], homes, f"Codex's table changed after the last sync, {_day(report.last_sync)}"
    if report.dead_count:
        if len(report.dead) == report.dead_count and all(
                dead.get("asked_to_forget") for dead in report.dead):
            return ("sync", [], homes, "each dead memory was asked to forget: sync after "
                    "Codex's next consolidation")
        options = ["--max-unused-days", str(report.max_unused_days)]
        if report.rule != "memcite":
            options += ["--rule", report.rule]
        return "prune", options, (*homes, "--as-of"), "previews asking Codex to forget them"
    if report.citation_log and not t.get("replies"):
        return "doctor", [], homes, "no replies recorded yet: is the hook set up?"
    return None


def _print_summary(text: _Text, report, where: dict[str, str]) -> None:
    """Three lines: how many memories, how many dead, what to run next."""
    t = report.totals
    tail = f", as of {_day(report.as_of)}"
    if report.fleet is not None:
        machines = report.fleet["machines"]
        text.line(f"{_plural(t['memories'], 'memory', 'memories')} across "
                  f"{_plural(len(machines), 'machine')} of the fleet{tail}")
    else:
        head = f"{_plural(t['memories'], 'memory', 'memories')} in the Codex home "
        text.line(head + text.cut_path(report.codex_home or "-",
                                       text.width - len(head) - len(tail)) + tail)
    in_table = t["in_codex_table"]
    scope = (f" of the {in_table} in Codex's table"
             if report.rule == "codex" and in_table != t["memories"] else "")
    unused = f"unused for more than {_plural(report.max_unused_days, 'day')} (rule {report.rule})"
    text.line(f"{report.dead_count} dead{scope}: {unused}" if report.dead_count
              else f"none dead{scope}: none {unused}")
    step = _next_step(report)
    if step is not None and report.fleet is not None:
        text.pick(f"next: memcite {step[0]} on each machine ({step[3]}; the fleet server is only "
                  "reported on)", f"next: memcite {step[0]} on each machine")
        return
    if step is None:
        text.pick("next: nothing needed (`memcite show ID` tells one memory's story)",
                  "next: nothing needed")
        return
    command, options, repeated, why = step
    given = [name for name in repeated if where.get(name)]
    short = " ".join(["memcite", command, *options])
    full = " ".join([short, *[f"{name} {_shell_word(where[name])}" for name in given]])
    # Too long with this run's paths: the command with each option to repeat shown as `…`.
    blanks = " ".join([short, *[f"{name} {text.dots}" for name in given]])
    text.pick(f"next: {full}  ({why})", f"next: {full}",
              f"next: {short}  (and this run's {', '.join(given)})" if given else f"next: {short}",
              f"next: {blanks}", f"next: {short} {text.dots}" if given else f"next: {short}")


def _print_totals(text: _Text, report) -> None:
    t = report.totals
    if report.source == "codex":
        name = os.path.basename(report.state_db or "memories_1.sqlite")
        text.title(f"Totals, from Codex's {name} (no memcite database):")
    elif report.fleet is not None:
        fleet = report.fleet
        scope = "".join(f", {key} {fleet[key]}" for key in ("machine", "project") if fleet[key])
        text.title(f"Totals, from the fleet server ({_plural(len(fleet['machines']), 'machine')}"
                   f"{scope}):")
        text.prose("each machine's memcite and Codex counts added up; cited lines as each "
                   "machine checked them when it pushed", indent="  ")
    else:
        text.title("Totals, from memcite's ledger:")
    if report.store:
        store = report.store
        text.prose(f"memory store {store['store']}, the one Codex reads ({store['store_from']}"
                   + ("; dual_write: Codex also consolidates the other" if store["dual_write"]
                      else "") + ")", indent="  ")
    if report.fleet is None:
        text.line("  usage data: " + (text.cut_path(report.state_db, text.width - 14)
                                      if report.state_db else "none (judged without it)"))
    if report.other_homes:
        text.prose(f"(memcite's database also holds {_plural(len(report.other_homes), 'other Codex home')}, "
                   f"not counted here: {', '.join(report.other_homes)})")
        if not t["memories"] and not t["gone_from_codex"]:
            text.prose("no memories of this home yet: run `memcite sync` for it")
        if report.log_scope:
            text.prose(f"(citations and their checks: the replies recorded against "
                       f"{report.log_scope} only)")
    gone, in_table = t["gone_from_codex"], t["in_codex_table"]
    text.line(f"  memories {t['memories']} (in Codex's table {in_table}, archived {t['archived']}"
              f"{f', gone from Codex {gone}' if gone else ''}), dead {t['dead']}")
    if report.citation_log:
        text.pick(f"  cited:       by memcite's log {t['cited_memcite']:>5}   by Codex's counters "
                  f"{t['cited_codex']:>5}",
                  f"  cited: {t['cited_memcite']} by memcite's log, {t['cited_codex']} by Codex's")
        text.pick(f"  never cited: by memcite's log {t['never_cited_memcite']:>5}   by Codex's "
                  f"counters {t['never_cited_codex']:>5}",
                  f"  never cited: {t['never_cited_memcite']} by memcite's log, "
                  f"{t['never_cited_codex']} by Codex's")
        if (t["cited_memcite"], t["never_cited_memcite"]) != (t["cited_codex"],
                                                              t["never_cited_codex"]) \
                or t.get("citations") != t.get("codex_citations"):
            text.prose("which is which: memcite's log counts the replies memcite read and "
                       "checked; Codex's counters also count replies memcite never saw (before "
                       "setup, or with its hook off) and an id cited in two spellings twice; "
                       + ("the dead are judged by both (rule memcite)" if report.rule == "memcite"
                          else "the dead are judged by Codex's counters (rule codex)"),
                       indent="  ", more="    ")
    else:
        text.line(f"  cited:       by Codex's counters {t['cited_codex']:>5} (no memcite log)")
        text.line(f"  never cited: by Codex's counters {t['never_cited_codex']:>5}")
    if gone:
        text.prose(f"gone from Codex: {_plural(gone, 'memory', 'memories')} no longer in Codex "
                   "(missing at the last sync), kept for their citations, counted apart")
    if t.get("asked_to_forget"):
        text.prose(f"asked to forget, still in Codex: {t['asked_to_forget']} (until a sync finds "
                   "them gone)")
    if report.source == "codex":
        text.prose(f"citations {t['citations']} (Codex's usage counts; no replies recorded)")
        return
    replies = _plural(t["replies"], "reply", "replies")
    text.prose(f"citations {t['citations']} in {replies} (memory ids cited; Codex's counters "
               f"add up to {t['codex_citations']})")
    text.prose(f"unknown ids {t['unknown_ids']}, ids that are not UUIDs {t['not_uuid_ids']} "
               "(never counted)")
    checks = report.citation_checks
    text.prose(f"cited line ranges {checks.citations} ({checks.entries} distinct) in the same "
               "replies, checked below")


def print_stats(report, file=None, *, width: int | None = None,
                where: dict[str, str] | None = None) -> None:
    """Print a ``memcite.retention.stats.StatsReport`` as ``memcite stats`` does (to stdout by
    default): three lines (how many memories, how many dead, what to run next), then the
    sections, every line fitted to ``width`` (default ``text_width``). ``where``: the options
    this run was given (``--db``, ``--codex-home``, ``--as-of``), repeated in the command
    suggested."""
    file = file or sys.stdout
    text = _Text(file, width or text_width(file))
    _print_summary(text, report, where or {})
    _print_totals(text, report)
    legend = {"Codex": False, "memcite": False}  # printed once, under the first list needing it

    def explain(rows: list[dict], key: str) -> None:
        if not legend["Codex"] and any(row.get(key) is None for row in rows):
            legend["Codex"] = True
            text.prose(CODEX_DASH)
        if not legend["memcite"] and rows and not report.citation_log:
            legend["memcite"] = True
            text.prose(MEMCITE_DASH)

    text.title(f"Dead memories ({report.dead_count}, stalest first; citations by each count):")
    if not report.dead:
        text.line("  none")
    rows = []
    for dead in report.dead:
        mark = "[asked to forget] " if dead.get("asked_to_forget") else ""
        mine = dead.get("usage_count") if report.citation_log else None
        theirs = dead.get("codex_usage_count")
        reason = dead["reason"].replace("not cited since", "last cited")
        rows.append({
            "id": dead["thread_id"], "label": mark + dead.get("label", "-"),
            "cells": {"unused": f"{dead['days_unused']} d", "memcite": _count(mine),
                      "Codex": _count(theirs), "last cited": reason.removeprefix("last cited ")
                      .replace("never cited", "never")},
            "details": f"{dead['days_unused']:>4} days unused  {_counts(mine, theirs)}  {reason}",
            "compact": f"{dead['days_unused']}d unused  {_counts(mine, theirs, padded=False)}  "
                       f"{reason}"})
    _memory_rows(text, rows, [("unused", 6, False), ("memcite", 7, False), ("Codex", 5, False),
                              ("last cited", 10, True)])
    if report.dead_count > len(report.dead):
        text.line(f"  {text.dots} and {report.dead_count - len(report.dead)} more "
                  "(--limit 0 lists all)")
    explain(report.dead, "codex_usage_count")
    text.title("Most cited (by memcite's log and by Codex's counters):" if report.citation_log
               else "Most cited (by Codex's counters; no memcite log):")
    if not report.top:
        text.line("  none")
    rows = []
    for top in report.top:
        mine = top["usage_count"] if report.citation_log else None
        theirs, last = top["codex_usage_count"], _day(top["last_used"])
        rows.append({"id": top["thread_id"], "label": top.get("label", "-"),
                     "cells": {"memcite": _count(mine), "Codex": _count(theirs), "last used": last},
                     "details": f"{_counts(mine, theirs)}  last {last}",
                     "compact": f"{_counts(mine, theirs, padded=False)}  last {last}"})
    _memory_rows(text, rows, [("memcite", 7, False), ("Codex", 5, False), ("last used", 10, True)])
    explain(report.top, "codex_usage_count")
    if report.asked_to_forget:
        text.title("Asked to forget, still in Codex:")
        for item in report.asked_to_forget:
            how = (f"note {os.path.basename(item['note_path'])}" if item["way"] == "note"
                   else "rows deleted from Codex's table; files until its next consolidation")
            head = f"  {item['thread_id']}  "
            text.line(head + text.cut(item.get("label") or "-", text.width - len(head)))
            text.prose(f"asked {_day(item['requested_at'])} ({how})", indent="      ")
    _print_list(text, "Cited ids that are not known memories",
                [f"{item['thread_id']}  {_plural(item['citations'], 'citation')}"
                 for item in report.unknown_ids])
    _print_list(text, "Cited ids that are not UUIDs (never counted)",
                [f"{item['rollout_id']!r}  {_plural(item['citations'], 'citation')}"
                 for item in report.not_uuid_ids])
    _print_checks(text, report)
    if report.files:
        text.title("Cited line ranges per file:")
        for item in report.files:
            head = f"  {item['citations']:>6}  "
            text.line(head + text.cut_path(item["path"], text.width - len(head)))
    if report.sections:
        text.title("MEMORY.md sections (cited line ranges):")
        for s in report.sections:
            head = f"  {s.citations:>6}  {'  ' * (s.level - 1)}"
            tail = "" if s.citations else "   <- never cited"
            text.line(head + text.cut(s.title, text.width - len(head) - len(tail)) + tail)
    if report.entries is not None and report.entries["files"]:
        _print_entries(text, report.entries, report.relevance)
    if report.weeks:
        file.flush()
        _print_weeks(report.weeks, file, cut=CHART_WEEKS if report.since is None else None,
                     width=text.width)
    if report.audit is not None:
        from memcite.retention.audit_counts import audit_line

        text.line()
        text.prose(audit_line(report.audit), indent="")


def _print_checks(text: _Text, report) -> None:
    """The citation checks: what they compare, one row per outcome, the worst places."""
    from memcite.retention.checks import OUTCOME_MEANING

    checks = report.citation_checks
    if not report.citation_log:
        text.title(f"Citation checks: {NO_CITATION_LOG}")
        return
    text.title(f"Citation checks: {_plural(checks.citations, 'cited line range')} "
               f"({checks.entries} distinct), in the memory folder now")
    files = f" ({_plural(checks.files_read, 'file')} read)"
    text.line("  " + text.cut_path(checks.memory_root or "no memory folder",
                                   text.width - 2 - len(files)) + files)
    late = report.totals.get("replies_hashed_late")
    text.prose("each compared with its hash, taken when its reply was recorded; for an old "
               "session ingested late, from the folder's git history at the reply's time (none "
               "without one: unverified)"
               + (f"; {_plural(late, 'reply was', 'replies were')} recorded over an hour after "
                  "being made" if late else ""))
    shown = [(outcome, counts) for outcome, counts in checks.outcomes.items() if counts["entries"]]
    if shown:
        text.line("  outcome        ranges  distinct  meaning")
    for outcome, counts in shown:
        head = f"  {outcome:<12} {counts['citations']:>7} {counts['entries']:>9}  "
        text.prose(OUTCOME_MEANING[outcome], indent=head, more=" " * len(head))
    if checks.worst:
        text.line("  worst:")
        for entry in checks.worst:
            now_at = (f" (now at {entry.moved_to[0]}-{entry.moved_to[1]})"
                      if entry.moved_to else "")
            place = f":{entry.line_start}-{entry.line_end}"
            tail = f"{place}  {entry.outcome}{now_at}  ({_plural(entry.citations, 'time')})"
            text.line("    " + text.cut_path(entry.path, text.width - 4 - len(tail)) + tail)
    for path, why in checks.skipped.items():
        text.line(f"  not read: {path}: {why}")


def _entry_lines(text: _Text, rows: list[dict]) -> list[str]:
    """Entries as the report lists them: relevance, tier, citations, last cited, place, title."""
    lines = []
    for row in rows:
        where = f"{os.path.basename(row['path'])}:{row['line_start']}"
        if row["kind"] == "note":
            where = f"{os.path.basename(os.path.dirname(row['path']))}/{where}"
        last = _day(row["last_cited"]) if row["last_cited"] else "never"
        tier = f"[{row['tier'] or '-'}]"
        head = (f"{row['relevance']:.3f}  {tier:<6} {row['citations']:>4} cit.  {last:<10}  "
                if text.width >= DEFAULT_WIDTH else
                f"{row['relevance']:.3f} {tier:<6}{row['citations']:>3} cit. {last:<10} ")
        room = text.width - 2 - len(head)
        if len(where) > room - 8:
            where = text.cut_path(where, room // 2)
        lines.append(head + where + "  " + text.cut(row["title"], room - len(where) - 2))
    return lines


def _print_entries(text: _Text, entries: dict,
                   relevance: tuple[list[dict], list[dict]] = ([], [])) -> None:
    """The ``entries`` part: usage per entry of MEMORY.md and memcite's notes."""
    tiers = "  ".join(f"{tier} {count}" for tier, count in entries["tiers"].items())
    text.title(f"Entries: {entries['count']} in {_plural(len(entries['files']), 'file')}, "
               f"cited {_plural(entries['citations'], 'time')} (a range, once per entry it covers):")
    text.line(f"  tiers: {tiers}")
    for item in entries["files"]:
        if item["problem"]:
            text.line(f"  not read: {item['path']}: {item['problem']}")
        elif item["kind"] == "codex" and (item["moved"] or item["unattributed"]):
            none = item["unattributed"]
            text.prose(f"{os.path.basename(item['path'])}: {_plural(none, 'cited range')} "
                       f"cover{'s' if none == 1 else ''} no entry now, {item['moved']} followed "
                       "to moved lines")
    most, least = relevance
    _print_list(text, "Most relevant cited entries (importance x 0.95^days unused"
                + ("" if least else f", all {len(most)}") + ")", _entry_lines(text, most))
    _print_list(text, "Least relevant cited entries (least first)", _entry_lines(text, least))
    _print_list(text, f"Entries never cited ({entries['never_cited_count']})",
                _entry_lines(text, entries["never_cited"]))
    _print_list(text, "Supersession chains (live head <- what it replaces)", [
        ("LOOP (no live head)" if chain["head"] is None else
         f"{os.path.basename(chain['head']['path'])}:{chain['head']['line_start']} "
         f"{chain['head']['title'][:60]}")
        + "  <- " + "; ".join(r["title"][:40] for r in chain["replaced"])
        for chain in entries["chains"]])


def _print_list(text: _Text, title: str, lines: list[str]) -> None:
    """A titled list of the report, indented, each line fitted; nothing when it is empty."""
    if lines:
        text.title(f"{title}:")
        for line in lines:
            text.line(f"  {line}")


def fleet_stats(where, *, machine: str | None, project: str | None, max_unused_days,
                rule: str, as_of: str | None, since: str | None, limit: int, json: bool) -> int:  # noqa: A002
    """``memcite stats`` over a fleet server (``where.db``); no Codex home is looked for."""
    from memcite.fleet.report import fleet_stats as build_fleet_stats

    try:
        _check_limit(limit)
        report = build_fleet_stats(where, now=_time(as_of, "--as-of", int(time.time())),
                                   machine=machine, project=project, rule=rule,
                                   max_unused_days=max_unused_days,
                                   since=_time(since, "--since", None), limit=limit)
    except MemciteError as error:
        return report_error(error)
    if json:
        dump_json(report.to_dict())
    else:
        from memcite.fleet.connection import describe

        print_stats(report, where={"--db": describe(where.db_path)})
    return EXIT_OK


CHART_WEEKS = 26  # weeks drawn without --since (--json lists them all)


def _print_weeks(weeks: list[dict], file, *, cut: int | None = CHART_WEEKS,
                 width: int = DEFAULT_WIDTH) -> None:
    """A bar chart of citations per week (the last ``cut`` weeks, saying so), drawn with rich
    in ``width`` columns; ``#`` bars where the output cannot encode block characters. When
    more than half the weeks have no citation, one line says so instead of the chart."""
    shown = weeks[-cut:] if cut else weeks
    text = _Text(file, width)
    busy = [week for week in shown if week["citations"]]
    first, last = shown[0]["week_start"], shown[-1]["week_start"]
    if 2 * len(busy) < len(shown) or not busy:
        text.line()
        if not busy:
            text.pick(f"Citations per week, {first} to {last}: none")
            return
        peak = max(busy, key=lambda week: week["citations"])
        text.pick(f"Citations per week, {first} to {last}: {len(busy)} of {len(shown)} weeks had "
                  f"any, at most {peak['citations']} (week of {peak['week_start']})",
                  f"Citations per week: {len(busy)} of {len(shown)} weeks had any, at most "
                  f"{peak['citations']} (week of {peak['week_start']})",
                  f"Citations per week: {len(busy)} of {len(shown)} weeks had any")
        return
    from rich.console import Console
    from rich.table import Table

    class _Console(Console):
        def on_broken_pipe(self) -> None:  # rich would exit 1; memcite's entry point exits 141
            raise BrokenPipeError

    text.title(f"Citations per week, {first} to {last}:")
    if len(shown) < len(weeks):
        text.prose(f"(the last {len(shown)} of {len(weeks)} weeks; --since shows more, "
                   "--json lists every week)")
    file.flush()
    block = "█" if _can_encode(file, "█") else "#"
    peak = max(week["citations"] for week in shown) or 1
    longest = max(5, min(40, width - 26))
    table = Table(show_header=True, header_style="bold", box=None, padding=(0, 1))
    table.add_column("week of")
    table.add_column("citations", justify="right")
    table.add_column("")
    for week in shown:
        bar = block * max(1 if week["citations"] else 0,
                          round(longest * week["citations"] / peak))
        table.add_row(week["week_start"], str(week["citations"]), f"[cyan]{bar}[/cyan]")
    from memcite.display import styled  # dates and counts only: rich's colours go raw

    _Console(file=styled(file), highlight=False, safe_box=True, width=width).print(table)


def _can_encode(file, text: str) -> bool:
    encoding = getattr(file, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


# --------------------------------------------------------------------------- prune, restore


def prune(
    db: str | None = None,
    codex_home: str | None = None,
    max_unused_days: int | None = None,
    rule: str = "memcite",
    limit: int = 200,
    as_of: str | None = None,
    apply: bool = False,
    in_codex_db: bool = False,
    include_recent_threads: bool = False,
    judge_without_usage: bool = False,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
) -> int:
    """Preview the memories the rule would forget; with ``apply``, ask Codex to forget them.

    ``apply`` writes one ad-hoc note asking Codex's consolidation to drop them;
    ``apply`` with ``in_codex_db`` deletes their rows from Codex's table as its own
    start-up pruning does (saved first; ``restore`` puts them back). Memories gone from
    Codex are never offered and, with ``--rule codex``, rows only in the memory folder
    are not judged; both are counted in the output.
    """
    if rule == TIERED:
        if in_codex_db or include_recent_threads or max_unused_days is not None:
            option = ("--in-codex-db" if in_codex_db else "--include-recent-threads"
                      if include_recent_threads else "--max-unused-days")
            return report_error(InputError(
                f"{option} does not apply to --rule tiered (it judges MEMORY.md's entries and "
                "memcite's notes by their tiers)",
                hint="the tier windows are set in memcite's config, [retention.tiers]"))
        return prune_tiered(db, codex_home, limit, as_of, apply=apply,
                            judge_without_usage=judge_without_usage, json=json)
    from memcite.ledger.codex_home import locate
    from memcite.ledger.store import open_store
    from memcite.retention import prune as pruning
    from memcite.retention.rules import load_codex_memories_config

    result = None
    try:
        if in_codex_db and not apply:
            raise InputError("--in-codex-db says how --apply forgets; add --apply",
                             hint="without --apply, prune only previews")
        check_rule(rule)
        _check_limit(limit)
        where = Locations(db=db, codex_home=codex_home)
        locations = locate(where)
        codex_memories = load_codex_memories_config(locations.codex_home)  # read once
        settings = resolve_settings_for(locations.codex_home, rule=rule,
                                        max_unused_days=max_unused_days,
                                        codex_memories=codex_memories)
        now = _time(as_of, "--as-of", int(time.time()))
        require_usage(locations, judge_without_usage)
        if apply:
            from memcite.cli.ledger_commands import open_database

            conn = open_database(db, quick_check=True)  # a batch write: a damaged file refused
        else:
            conn = open_store(where.db_path, readonly=True)
        try:
            planned = pruning.plan(conn, locations, settings, rule=rule, now=now, limit=limit,
                                   judge_without_usage=judge_without_usage)
            if apply:
                result = pruning.apply(conn, planned, in_codex_db=in_codex_db,
                                       include_recent_threads=include_recent_threads,
                                       now=int(time.time()), codex_memories=codex_memories)
        finally:
            conn.close()
    except (MemciteError, sqlite3.Error) as error:
        return report_read_failure(db, error)
    candidates, outside, folder_only = planned.candidates, planned.outside, planned.folder_only
    if json:
        dump_json(planned.to_dict(result, applied=apply))
        return 0
    out = sys.stdout.write
    count = len(candidates)
    plural = "y" if count == 1 else "ies"
    out(f"prune for the Codex home {locations.codex_home} ({rule} rule, unused for more than "
        f"{_plural(settings.max_unused_days, 'day')} before {_day(now)}): {count} memor{plural}\n")
    for candidate in candidates:
        out(f"  {candidate.thread_id}  {candidate.label}\n"
            f"      last used {_day(candidate.last_used)}  {candidate.reason}\n")
    if outside.gone:
        out(f"not offered: {outside.gone} memor{'y' if outside.gone == 1 else 'ies'} already "
            "gone from Codex (missing at the last sync; nothing left to forget)\n")
    if folder_only:
        out(f"not judged: {folder_only} memor{'y' if folder_only == 1 else 'ies'} only in the "
            "memory folder, not in Codex's table (its retention never sees them; "
            "--rule memcite does)\n")
    if result is None:
        if candidates:
            out("nothing changed: this is a preview. --apply asks Codex to forget them with an "
                "ad-hoc note in its memory folder; --apply --in-codex-db deletes their rows "
                "from Codex's table (saved first). `memcite restore` undoes either.\n")
        return 0
    _print_forget_result(out, result)
    return 0


TIERED = "tiered"
PRUNE_RULES = ("memcite", "codex", TIERED)


def prune_tiered(db: str | None, codex_home: str | None, limit: int, as_of: str | None, *,
                 apply: bool, judge_without_usage: bool, json: bool) -> int:  # noqa: A002
    """``prune --rule tiered``: judge MEMORY.md's and memcite's notes' entries by their tier
    windows; with ``apply``, archive the notes' entries and ask Codex (one ad-hoc note) about
    MEMORY.md's."""
    from memcite.codex.consolidation import last_consolidation as tiered_last_consolidation
    from memcite.ledger.codex_home import locate
    from memcite.ledger.store import open_store
    from memcite.retention.entry_report import (
        is_v2_folder,
        memory_citations,
        memory_entries,
        note_entries,
    )
    from memcite.retention.rules import load_memcite_config
    from memcite.retention.tiered import judge_entries, request_entries, to_act_on
    from memcite.retention.tiers import TierWindows

    codex_result = None
    notes_result: dict | None = None
    try:
        _check_limit(limit)
        where = Locations(db=db, codex_home=codex_home)
        locations = locate(where)
        now = _time(as_of, "--as-of", int(time.time()))
        settings = resolve_settings_for(locations.codex_home, config_path=where.config.path)
        mine = load_memcite_config(where.config.path)
        windows = TierWindows.from_config(mine.get("tiers"), mine.get("decay"))
        last_consolidation = tiered_last_consolidation(locations.state_db)
        if apply:
            from memcite.cli.ledger_commands import open_database

            conn = open_database(db, quick_check=True)  # a batch write: a damaged file refused
        elif not where.db.given and not os.path.exists(where.db_path):
            conn = None  # no ledger yet: no citation log (refused below unless judged anyway)
        else:
            conn = open_store(where.db_path, readonly=True)
        try:
            log_root = None if conn is None else citation_log_root(conn, locations)
            require_citation_log(conn, locations, log_root, judge_without_usage)
            citations = [] if conn is None else memory_citations(
                conn, log_root, v2=is_v2_folder(locations.memory_folder))
            files = [f for f in [memory_entries(locations.memory_folder, citations, now=now)]
                     if f is not None] + note_entries(locations.codex_home, now=now)
            judged, untiered = judge_entries(files, now=now, windows=windows,
                                             last_consolidation=last_consolidation)
            codex_items = to_act_on(judged, "codex")
            note_items = to_act_on(judged, "note")
            if limit:
                codex_items, note_items = codex_items[:limit], note_items[:limit]
            if apply and codex_items:
                codex_result = request_entries(conn, codex_items, codex_home=locations.codex_home,
                                               memory_folder=locations.memory_folder,
                                               now=int(time.time()), as_of=now)
            if apply and note_items:
                notes_result = _archive_note_entries(conn, locations.codex_home, note_items)
        finally:
            if conn is not None:
                conn.close()
    except (MemciteError, sqlite3.Error) as error:
        return report_read_failure(db, error)
    preview = [item.to_dict() for item in judged]
    if json:
        dump_json({
            "codex_home": locations.codex_home, "state_db": locations.state_db,
            "store": store_of(locations), "rule": TIERED, "as_of": now,
            "max_unused_days": settings.max_unused_days,
            "settings": settings.to_dict(), "applied": apply, "way": None,
            "prune": [], "result": None,
            "codex_still_sees": _tiered_still_sees(codex_result),
            "gone_from_codex": 0, "not_in_codex_table": 0,
            "tiers": windows.to_dict(), "entries": preview, "untiered": untiered,
            "entry_result": None if not apply else {
                "codex": None if codex_result is None else codex_result.to_dict(),
                "notes": notes_result or {"archived": [], "skipped": []}},
        })
        return 0
    out = sys.stdout.write
    acted = len(codex_items) + len(note_items)
    shown = ", ".join(f"{tier} {'never' if days is None else _plural(days, 'day')}"
                      for tier, days in windows.to_dict().items())
    out(f"prune for the Codex home {locations.codex_home} (tiered rule as of {_day(now)}; "
        f"unused before acting: {shown}; Codex's last consolidation: "
        f"{_day(last_consolidation) if last_consolidation else 'none recorded'}): "
        f"{len(judged)} entr{'y' if len(judged) == 1 else 'ies'} with a "
        f"tier, {acted} to act on, {untiered} without a tier (not judged)\n")
    for item in judged:
        row = item.to_dict()
        where = f"{row['path']}:{row['line_start']}"
        out(f"  {item.verdict.action:<6} [{row['tier']}] {row['title'][:70]}\n"
            f"         {where}\n         {item.verdict.reason}; cited "
            f"{_plural(row['citations'], 'time')}\n")
    if not apply:
        if acted:
            out("nothing changed: this is a preview. --apply moves the notes' entries into the "
                "note archive (`memcite note restore` brings them back) and asks Codex, with "
                "one ad-hoc note, to remove or review MEMORY.md's (memcite never edits it).\n")
        return 0
    if codex_result is not None:
        for item in codex_result.dropped:
            out(f"  not asked again: {item['title'][:60]} ({item['why']})\n")
        if codex_result.note_path:
            out(f"asked Codex's next consolidation about {len(codex_result.asked)} MEMORY.md "
                f"entr{'y' if len(codex_result.asked) == 1 else 'ies'}: wrote "
                f"{codex_result.note_path}\n")
    if notes_result is not None:
        for item in notes_result["archived"]:
            out(f"archived note entry {item['id']} to {item['archived']} (undo: `memcite note "
                f"restore {os.path.basename(item['archived'])}` in its project)\n")
        for item in notes_result["skipped"]:
            out(f"  not archived: {item['path']}:{item['line_start']} ({item['why']})\n")
    out(f"what Codex still sees: {_tiered_still_sees(codex_result)}\n")
    return 0


def _tiered_still_sees(result) -> str:
    if result is None or not result.note_path:
        return "MEMORY.md as it is (nothing new asked of Codex in this run)"
    return ("MEMORY.md as it is (memcite never edits it) until Codex's next consolidation "
            "applies the note")


def _archive_note_entries(conn, codex_home: str, items) -> dict:
    """Move each entry of memcite's notes the rule prunes into the note archive (``forget_note``);
    those to review are only reported."""
    from memcite.notes.operations import forget_note, location_of_note
    from memcite.notes.refusals import NoteRefusal

    now = time.time()
    today = time.strftime("%Y-%m-%d", time.gmtime(now))
    archived, skipped = [], []
    for item in items:
        row = item.to_dict()
        if item.verdict.action != "prune":
            skipped.append({**row, "why": "to review: reported, not archived (`memcite note "
                                          "forget` archives it, `note save --tier` demotes it)"})
            continue
        if not row["id"]:
            skipped.append({**row, "why": "no id: `memcite note save` gives hand-written "
                                          "entries one"})
            continue
        try:
            location = location_of_note(codex_home, item.file.path)
            done = forget_note(location, entry_id=row["id"], now=now, today=today, conn=conn,
                               confirmed_by="prune --rule tiered --apply")
        except (NoteRefusal, InputError) as refusal:
            skipped.append({**row, "why": str(refusal)})
            continue
        archived.append({**row, "archived": done.archived})
    return {"archived": archived, "skipped": skipped}


def _print_forget_result(out, result) -> None:
    for item in result.settled:
        out(f"settled an interrupted earlier prune: {item['thread_id']} {item['state']}\n")
    for item in result.dropped:
        out(f"  not asked: {item['thread_id']}  {item.get('label') or ''}  ({item['why']})\n")
    asked = len(result.asked)
    plural = "y" if asked == 1 else "ies"
    if result.way == "note":
        if asked:
            out(f"asked Codex to forget {asked} memor{plural} (way: ad-hoc note): wrote "
                f"{result.note_path}\n")
    elif asked:
        out(f"deleted {asked} row(s) from stage1_outputs in {result.codex_db} (way: Codex's "
            "database; each row saved in memcite's database first)\n")
    else:
        out("deleted nothing from Codex's table\n")
    out(f"what Codex still sees: {result.codex_still_sees()}\n")
    if asked:
        out("undo: `memcite restore --batch " + result.batch + "` (or the thread ids); "
            "`memcite archived` lists every request\n")


def restore(
    thread_ids: list[str] | None = None,
    db: str | None = None,
    all: bool = False,  # noqa: A002 - mirrors the --all flag
    since: str | None = None,
    batch: str | None = None,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
) -> int:
    """Undo ``prune --apply`` for the given ids, ``--all``, ``--since TIME`` or ``--batch``:
    requests withdrawn, rows put back into Codex's table, files an older memcite moved put back."""
    from memcite.cli.ledger_commands import open_database
    from memcite.ledger.store import open_store
    from memcite.retention.restore import restore as restore_requests
    from memcite.retention.restore import thread_ids_to_restore

    thread_ids = list(thread_ids or [])
    try:
        if not thread_ids and not all and since is None and batch is None:
            raise InputError("say what to restore: thread ids, --all, --since TIME or --batch",
                             hint="`memcite archived` lists what can be restored")
        since_time = _time(since, "--since", None)
        wanted = thread_ids_to_restore(thread_ids)
        path = Locations(db=db).db_path
        open_store(path, readonly=True).close()  # a missing database is an error, not created
        conn = open_database(db, quick_check=True)  # a batch write: a damaged file refused
        try:
            restored = restore_requests(conn, thread_ids=wanted, every=all, since=since_time,
                                        batch=batch, now=int(time.time()))
        finally:
            conn.close()
    except (MemciteError, sqlite3.Error) as error:
        return report_read_failure(db, error)
    undone, legacy, unknown, done = (restored.undone, restored.legacy, restored.unknown,
                                     restored.done)
    if json:
        dump_json(restored.to_dict())
    else:
        out = sys.stdout.write
        out(f"restored {len(done)} memor{'y' if len(done) == 1 else 'ies'}\n")
        by_what: dict[str, list] = {}  # one note withdraws many requests: said once, not per line
        for item in undone:
            by_what.setdefault(item.what, []).append(item)
        for what, items in by_what.items():
            if len(items) > 1:
                out(f"  {what}:\n")
            for item in items:
                way = "note" if item.way == "note" else "Codex's database"
                state = "" if item.done else "  (nothing done)"
                tail = "" if len(items) > 1 else f"  {what}"
                out(f"{'    ' if len(items) > 1 else '  '}{item.thread_id}  {item.label or '-'}"
                    f"  [{way}]{tail}{state}\n")
        for item in legacy:
            line = f"  {item.thread_id}  [file archived by an earlier memcite]"
            if item.file_to:
                line += f"  {item.file_from} -> {item.file_to}"
            if item.problem:
                line += f"  ({item.problem})"
            out(line + "\n")
        for thread in unknown:
            out(f"  {thread}  not found: no request to forget and nothing archived (skipped)\n")
        ways = {item.way for item in undone if item.done}
        if "codex_db" in ways:
            out("what Codex sees now: the rows put back are in its table again, as they were; "
                "its next consolidation may take them\n")
        if "note" in ways:
            out("what Codex sees now: its table never lost these memories; the withdrawal note "
                "asks its next consolidation to keep them\n")
    # An id with nothing to undo is a bad input item: the others are restored, exit 2.
    return EXIT_BAD_INPUT if (unknown or len(done) < len(undone) + len(legacy)) and thread_ids \
        else EXIT_OK


def archived(
    db: str | None = None,
    codex_home: str | None = None,
    all_homes: bool = False,
    limit: int = 50,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
) -> int:
    """List the requests to forget (and what an older memcite archived), newest first, each
    open one with whether Codex did it, by what Codex records (``memcite.codex.consolidation``)."""
    from memcite.codex.consolidation import request_outcomes
    from memcite.ledger.store import open_store
    from memcite.retention.archive import archive_log
    from memcite.retention.forget import list_requests

    try:
        _check_limit(limit)
        home = None if all_homes else _codex_locations(codex_home).codex_home
        conn = open_store(Locations(db=db).db_path, readonly=True)
        try:
            requests = list_requests(conn, codex_home=home, limit=limit)
            legacy = [e for e in archive_log(conn, limit=limit) if e["action"] == "archive"]
        finally:
            conn.close()
        outcomes = request_outcomes(requests, sqlite_homes=_sqlite_homes(requests),
                                    now=int(time.time()))
    except (MemciteError, sqlite3.Error) as error:
        return report_read_failure(db, error)
    for item in requests:
        item["consolidation"] = outcomes.get(item["id"])
    if json:
        dump_json({"codex_home": home, "requests": requests, "legacy_archive": legacy})
        return 0
    out = sys.stdout.write
    out(f"requests to forget{f' for the Codex home {home}' if home else ''} "
        f"({len(requests)}, newest first):\n")
    if not requests:
        out("  none\n")
    for item in requests:
        where = (os.path.basename(item["note_path"] or "-") if item["way"] == "note"
                 else f"rows deleted from {item['codex_db']}")
        out(f"  {item['thread_id']}  {item['label'] or '-'}\n"
            f"      {item['state']:<11} {_day(item['requested_at'])}  way {item['way']}: "
            f"{where}  batch {item['batch'][:12]}\n")
        if item["consolidation"]:
            out(f"      in Codex: {item['consolidation']['text']}\n")
    if legacy:
        out(f"\nsummary files archived by an earlier memcite ({len(legacy)}):\n")
        for entry in legacy:
            out(f"  {entry['thread_id']}  {_day(entry['at'])}  {entry['file_to'] or '-'}\n")
    out(SHOWS_STATES)
    if any(item["consolidation"] for item in requests):
        out(SHOWS_OUTCOMES)
    return 0


def _sqlite_homes(requests: list[dict]) -> dict[str, str | None]:
    """Each Codex home's SQLite home, as Codex finds it (None when the home cannot be read)."""
    from memcite.ledger.codex_home import CodexHomeError, locate
    from memcite.paths import Locations

    found: dict[str, str | None] = {}
    for home in {item["codex_home"] for item in requests}:
        try:
            found[home] = locate(Locations(codex_home=home)).sqlite_home
        except CodexHomeError:
            found[home] = None
    return found


SHOWS_STATES = ("states: done = asked, Codex still has it; forgotten = a sync found it gone; "
                "withdrawn / restored = undone; rolled_back = never happened\n")
SHOWS_OUTCOMES = ("in Codex: asked = no consolidation has read the note yet; seen = a run that "
                  "has not succeeded read it; not done after a consolidation = the last "
                  "successful one took it in, and the memory is still there (Codex keeps a "
                  "record of its last run only); done = its row and rollout summary are gone "
                  "(`memcite consolidation` shows each store's runs)\n")


# --------------------------------------------------------------------------- select


def select(
    db: str | None = None,
    codex_home: str | None = None,
    n: int | None = None,
    max_unused_days: int | None = None,
    as_of: str | None = None,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
    judge_without_usage: bool = False,
) -> int:
    """Print the memories Codex's next consolidation would take, in its order
    (``memcite.retention.selection.build``)."""
    from memcite.codex.consolidation import enabled_threads
    from memcite.retention.selection import build

    try:
        where = Locations(db=db, codex_home=codex_home)
        selection = build(where, now=_time(as_of, "--as-of", int(time.time())), n=n,
                          max_unused_days=max_unused_days,
                          judge_without_usage=judge_without_usage,
                          enabled_threads=enabled_threads)
    except (MemciteError, sqlite3.Error) as error:
        return report_read_failure(db, error)
    if json:
        dump_json(selection.to_dict())
        return 0
    settings, chosen, labels = selection.settings, selection.chosen, selection.labels
    sys.stdout.write(
        f"Codex's next consolidation for the Codex home {selection.locations.codex_home} would "
        f"take {len(chosen)} of {len(selection.memories)} memories "
        f"(n = {settings.max_raw_memories_for_consolidation}, used within "
        f"{_plural(settings.max_unused_days, 'day')} of {_day(selection.as_of)}; "
        f"from {selection.source}):\n")
    for m in chosen:
        sys.stdout.write(f"  {m.thread_id}  Codex uses {m.codex_usage_count or 0:>4}  "
                         f"updated {_day(m.source_updated_at)}  {labels.get(m.thread_id, '-')}\n")
    return 0


# --------------------------------------------------------------------------- show


def show(
    thread_id: str,
    db: str | None = None,
    codex_home: str | None = None,
    limit: int = 10,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
) -> int:
    """Print what memcite knows of one memory: label, place, times, both counts, citations."""
    from memcite.ledger.store import open_store
    from memcite.retention.memory_card import memory_card

    try:
        _check_limit(limit)
        locations = _codex_locations(codex_home)
        conn = open_store(Locations(db=db).db_path, readonly=True)
        try:
            card = memory_card(conn, thread_id, memory_root=locations.memory_folder,
                               limit=limit)
        finally:
            conn.close()
    except (MemciteError, sqlite3.Error) as error:
        return report_read_failure(db, error)
    if json:
        dump_json(card)
        return 0
    out = sys.stdout.write
    out(f"{card['thread_id']}  {card['label']}\n")
    for key, title in (("cwd", "cwd"), ("git_branch", "branch"), ("codex_home", "Codex home"),
                       ("rollout_summary_file", "summary file"), ("source", "found in")):
        if card.get(key):
            out(f"  {title + ':':<14}{card[key]}\n")
    for key, title in (("source_updated_at", "updated"), ("generated_at", "extracted"),
                       ("first_synced_at", "first synced"), ("missing_since", "gone since"),
                       ("archived_at", "archived")):
        if card["times"].get(key):
            out(f"  {title + ':':<14}{_iso_or_dash(card['times'][key])}\n")
    counts = card["counts"]
    out(f"  {'citations:':<14}memcite's log {counts['memcite']['usage_count']} (last "
        f"{_iso_or_dash(counts['memcite']['last_usage'])}), Codex's counters "
        f"{'-' if counts['codex']['usage_count'] is None else counts['codex']['usage_count']}"
        f" (last {_iso_or_dash(counts['codex']['last_usage'])})\n")
    out(f"  {'in Codex:':<14}{card['status']}\n")
    if card["forget_requests"]:
        out("  requests to forget:\n")
        for item in card["forget_requests"]:
            out(f"    {item['state']:<11} {_day(item['requested_at'])}  way {item['way']}\n")
    from memcite.retention.checks import OUTCOME_MEANING

    out(f"\nRecent citations ({len(card['citations'])} of {card['citation_count']}), their line "
        "ranges checked in the memory folder now:\n")
    if not card["citations"]:
        out("  none recorded\n")
    seen: list[str] = []
    for item in card["citations"]:
        out(f"  {_iso_or_dash(item['replied_at'])}  {item['origin'] or '-'}\n")
        basis = None
        for entry in item["entries"]:
            if entry["basis"] != basis:  # said once for the entries that share it
                basis = entry["basis"]
                out(f"    against the {basis}\n" if basis.startswith("hash")
                    else f"    {basis}\n")
            out(f"      {entry['path']}:{entry['line_start']}-{entry['line_end']}  "
                f"{entry['outcome']}{_moved(entry)}\n")
            if entry["outcome"] not in seen:
                seen.append(entry["outcome"])
    for outcome in seen:
        out(f"  ({outcome}: {OUTCOME_MEANING[outcome]})\n")
    out("\nRollout summary:\n")
    if not card["summary_lines"]:
        out(f"  {card['summary_problem'] or 'no summary file'}\n")
    for line in card["summary_lines"]:
        out(f"  | {line}\n")
    return 0


def _iso_or_dash(value: int | None) -> str:
    from memcite.cli.console import iso_utc

    return "-" if value is None else (iso_utc(value) or str(value))


def _moved(entry: dict) -> str:
    moved = entry.get("moved_to")
    return f" (now at {moved[0]}-{moved[1]})" if moved else ""
