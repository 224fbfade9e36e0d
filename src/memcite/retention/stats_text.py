"""``memcite stats``'s text report: ``print_stats`` draws a ``StatsReport`` (one Codex home's,
or a fleet server's) as the lines ``memcite stats`` prints, each fitted to the terminal's width.

Pure rendering, library code: the command line, the demo and tests call it; it reads nothing
but the report (and, for the next step's hint, the stamp of Codex's table). Light at import
(the fast path runs it): rich only to draw the weekly chart.
"""

from __future__ import annotations

import os
import sys

from memcite.display import count


def day(seconds: int | None) -> str:
    """A day as the reports write it (``YYYY-MM-DD``), ``-`` for none."""
    from memcite.retention.rules import format_day

    return "-" if not seconds else format_day(seconds)


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


def columns(text: str) -> int:
    """How many columns ``text`` takes on a terminal (wide characters two, combining none)."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF"
               else 1 for c in text)


class ReportText:
    """The report's lines, each fitted to ``width``: a label cut at its end, a path at its
    start, with an ellipsis; prose wrapped between words."""

    def __init__(self, file, width: int) -> None:
        self.file = file
        self.width = width
        self.dots = "…" if can_encode(file, "…") else "..."

    def line(self, text: str = "") -> None:
        self.file.write(self.cut(text, self.width) + "\n")

    def cut(self, text: str, room: int) -> str:
        """``text`` cut at its end to ``room`` columns."""
        if columns(text) <= room:
            return text
        room -= len(self.dots)
        kept, used = [], 0
        for char in text:
            used += columns(char)
            if used > room:
                break
            kept.append(char)
        return "".join(kept).rstrip() + self.dots

    def cut_path(self, path: str, room: int) -> str:
        """``path`` cut at its start to ``room`` columns, always at a ``/``: its last folders
        whole (never a name cut in the middle; the last name whole even when it is longer)."""
        if columns(path) <= room:
            return path
        room -= len(self.dots)
        kept, used = [], 0
        for char in reversed(path):
            used += columns(char)
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
            if columns(candidate) <= self.width:
                self.line(candidate)
                return
        self.line(candidates[-1])

    def title(self, text: str) -> None:
        """A blank line, then a section's title (wrapped when it is too long)."""
        self.line()
        self.prose(text, indent="")


def _count(count: int | None) -> str:
    return "-" if count is None else str(count)


def counts(memcite: int | None, codex: int | None, *, padded: bool = True) -> str:
    """A memory's two counts, always in the same words and order; ``-``: no count."""
    mine = "-" if memcite is None else str(memcite)
    theirs = "-" if codex is None else str(codex)
    return f"memcite {mine:>4}  Codex {theirs:>4}" if padded else f"memcite {mine}  Codex {theirs}"


CODEX_DASH = "(Codex -: Codex's counter is empty: Codex never counted a use of it)"
MEMCITE_DASH = "(memcite -: no memcite log to count in)"


_LABEL_ROOM = 16  # a table of memories keeps one line per memory while labels get this much


def memory_rows(text: ReportText, rows: list[dict], table: list[tuple[str, int, bool]]) -> None:
    """Memories as a table, one line each: thread id, ``table``'s columns (``(header, width,
    optional)``; a row's ``cells`` by header), then the label, cut; optional columns are left
    out when the label would get fewer than 16 columns. Narrower still: the id and label on
    one line, the row's ``details`` (else ``compact``) below."""
    if not rows:
        return
    for keep in (table, [c for c in table if not c[2]]):
        fixed = 2 + _ID + sum(2 + size for _header, size, _optional in keep) + 2
        if fixed + _LABEL_ROOM <= text.width:
            text.line("  " + "thread id".ljust(_ID) + "".join(
                f"  {header:>{size}}" for header, size, _optional in keep) + "  label")
            for row in rows:
                head = f"  {row['id']}" + "".join(
                    f"  {row['cells'][header]:>{size}}" for header, size, _optional in keep)
                text.line(f"{head}  {text.cut(row['label'], text.width - len(head) - 2)}")
            return
    padded = 6 + max(columns(row["details"]) for row in rows) <= text.width
    for row in rows:
        head = f"  {row['id']}  "
        text.line(head + text.cut(row["label"], text.width - columns(head)))
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


def next_step(report) -> tuple[str, list[str], tuple[str, ...], str] | None:
    """What to run next, true for the report: ``(command, its options, the options of this run
    it must repeat, why)``, or None when nothing needs doing."""
    t = report.totals
    homes = ("--db", "--codex-home")
    if report.source == "codex":
        return "sync", [], homes, "starts memcite's ledger from this home"
    if report.other_homes and not t["memories"] and not t["gone_from_codex"]:
        return "sync", [], homes, "no memories of this home yet"
    if _codex_changed_since_sync(report):
        return "sync", [], homes, f"Codex's table changed after the last sync, {day(report.last_sync)}"
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


def print_summary(text: ReportText, report, where: dict[str, str]) -> None:
    """Three lines: how many memories, how many dead, what to run next."""
    t = report.totals
    tail = f", as of {day(report.as_of)}"
    if report.fleet is not None:
        machines = report.fleet["machines"]
        text.line(f"{count(t['memories'], 'memory', 'memories')} across "
                  f"{count(len(machines), 'machine')} of the fleet{tail}")
    else:
        head = f"{count(t['memories'], 'memory', 'memories')} in the Codex home "
        text.line(head + text.cut_path(report.codex_home or "-",
                                       text.width - len(head) - len(tail)) + tail)
    in_table = t["in_codex_table"]
    scope = (f" of the {in_table} in Codex's table"
             if report.rule == "codex" and in_table != t["memories"] else "")
    unused = f"unused for more than {count(report.max_unused_days, 'day')} (rule {report.rule})"
    text.line(f"{report.dead_count} dead{scope}: {unused}" if report.dead_count
              else f"none dead{scope}: none {unused}")
    _next_line(text, report, where)


def print_totals(text: ReportText, report) -> None:
    t = report.totals
    if report.source == "codex":
        name = os.path.basename(report.state_db or "memories_1.sqlite")
        text.title(f"Totals, from Codex's {name} (no memcite database):")
    elif report.fleet is not None:
        fleet = report.fleet
        scope = "".join(f", {key} {fleet[key]}" for key in ("machine", "project") if fleet[key])
        text.title(f"Totals, from the fleet server ({count(len(fleet['machines']), 'machine')}"
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
        text.prose(f"(memcite's database also holds {count(len(report.other_homes), 'other Codex home')}, "
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
        text.prose(f"gone from Codex: {count(gone, 'memory', 'memories')} no longer in Codex "
                   "(missing at the last sync), kept for their citations, counted apart")
    if t.get("asked_to_forget"):
        text.prose(f"asked to forget, still in Codex: {t['asked_to_forget']} (until a sync finds "
                   "them gone)")
    if report.source == "codex":
        text.prose(f"citations {t['citations']} (Codex's usage counts; no replies recorded)")
        return
    replies = count(t["replies"], "reply", "replies")
    text.prose(f"citations {t['citations']} in {replies} (memory ids cited; Codex's counters "
               f"add up to {t['codex_citations']})")
    text.prose(f"unknown ids {t['unknown_ids']}, ids that are not UUIDs {t['not_uuid_ids']} "
               "(never counted)")
    checks = report.citation_checks
    text.prose(f"cited line ranges {checks.citations} ({checks.entries} distinct) in the same "
               "replies, checked below")


def print_stats(report, file=None, *, width: int | None = None,
                where: dict[str, str] | None = None, full: bool = False) -> None:
    """Print a ``memcite.retention.stats.StatsReport`` as ``memcite stats`` does (to stdout by
    default), every line fitted to ``width`` (default ``text_width``): the answer first (the
    verdict, the one command to act, each count once, the dead and the most used; see
    ``print_brief``), or with ``full`` three lines (how many memories, how many dead, what to
    run next) and every section. ``where``: the options this run was given (``--db``,
    ``--codex-home``, ``--as-of``), repeated in the command suggested."""
    file = file or sys.stdout
    text = ReportText(file, width or text_width(file))
    if not full:
        print_brief(text, report, where or {})
        return
    print_summary(text, report, where or {})
    print_totals(text, report)
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
            "details": f"{dead['days_unused']:>4} days unused  {counts(mine, theirs)}  {reason}",
            "compact": f"{dead['days_unused']}d unused  {counts(mine, theirs, padded=False)}  "
                       f"{reason}"})
    memory_rows(text, rows, [("unused", 6, False), ("memcite", 7, False), ("Codex", 5, False),
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
        theirs, last = top["codex_usage_count"], day(top["last_used"])
        rows.append({"id": top["thread_id"], "label": top.get("label", "-"),
                     "cells": {"memcite": _count(mine), "Codex": _count(theirs), "last used": last},
                     "details": f"{counts(mine, theirs)}  last {last}",
                     "compact": f"{counts(mine, theirs, padded=False)}  last {last}"})
    memory_rows(text, rows, [("memcite", 7, False), ("Codex", 5, False), ("last used", 10, True)])
    explain(report.top, "codex_usage_count")
    if report.asked_to_forget:
        text.title("Asked to forget, still in Codex:")
        for item in report.asked_to_forget:
            how = (f"note {os.path.basename(item['note_path'])}" if item["way"] == "note"
                   else "rows deleted from Codex's table; files until its next consolidation")
            head = f"  {item['thread_id']}  "
            text.line(head + text.cut(item.get("label") or "-", text.width - len(head)))
            text.prose(f"asked {day(item['requested_at'])} ({how})", indent="      ")
    print_list(text, "Cited ids that are not known memories",
                [f"{item['thread_id']}  {count(item['citations'], 'citation')}"
                 for item in report.unknown_ids])
    print_list(text, "Cited ids that are not UUIDs (never counted)",
                [f"{item['rollout_id']!r}  {count(item['citations'], 'citation')}"
                 for item in report.not_uuid_ids])
    print_checks(text, report)
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
        print_entries(text, report.entries, report.relevance)
    if report.weeks:
        file.flush()
        print_weeks(report.weeks, file, cut=CHART_WEEKS if report.since is None else None,
                     width=text.width)
    if report.audit is not None:
        from memcite.retention.audit_counts import audit_line

        text.line()
        text.prose(audit_line(report.audit), indent="")

BRIEF_TOP = 5  # the most used memories the default view lists


def _uses(row: dict, citation_log: bool) -> int | None:
    """A memory's uses as the default view counts them: Codex's counter (it counts every use),
    else memcite's log; None when neither counted one."""
    theirs = row.get("codex_usage_count")
    mine = row.get("usage_count") if citation_log else None
    if theirs is None and mine is None:
        return None
    return max(theirs or 0, mine or 0)


def _next_line(text: ReportText, report, where: dict[str, str]) -> None:
    """The one command to act, with this run's options, fitted (as ``print_summary`` does)."""
    step = next_step(report)
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
    blanks = " ".join([short, *[f"{name} {text.dots}" for name in given]])
    text.pick(f"next: {full}  ({why})", f"next: {full}",
              f"next: {short}  (and this run's {', '.join(given)})" if given else f"next: {short}",
              f"next: {blanks}", f"next: {short} {text.dots}" if given else f"next: {short}")


# The citation checks' outcomes in the default view's words (``--full`` explains each).
BRIEF_OUTCOMES = {"outside_root": "outside the memory folder", "missing": "no such file",
                  "not_to_cite": "a summary not to cite", "removed": "file removed",
                  "out_of_range": "past the file's end", "blank": "blank", "changed": "changed",
                  "moved": "moved", "unverified": "not checkable"}


def print_brief(text: ReportText, report, where: dict[str, str]) -> None:
    """The default view of ``memcite stats``: the verdict and the one command to act, each
    count once in plain words (one line on why memcite's and Codex's counts differ), the dead
    memories (each with its uses and when it was last used), the most used, and where the full
    tables are (``--full``)."""
    t = report.totals
    memories = count(t["memories"], "memory", "memories")
    days = count(report.max_unused_days, "day")
    as_of = day(report.as_of)
    if report.rule == "codex" and t["in_codex_table"] != t["memories"]:
        memories = f"the {count(t['in_codex_table'], 'memory', 'memories')} in Codex's database"
    if report.dead_count:
        verb = "is" if report.dead_count == 1 else "are"
        text.prose(f"{report.dead_count} of {memories} {verb} dead: unused for more than {days} "
                   f"(as of {as_of})", indent="")
    else:
        text.prose(f"none of {memories} is dead: each was used in the last {days} (as of "
                   f"{as_of})", indent="")
    _next_line(text, report, where)
    if report.fleet is not None:
        text.line(f"  across {count(len(report.fleet['machines']), 'machine')} of the fleet")
    else:
        head = "  Codex home: "
        text.line(head + text.cut_path(report.codex_home or "-", text.width - len(head)))
    if report.other_homes:
        text.prose(f"(memcite's database also holds "
                   f"{count(len(report.other_homes), 'other Codex home')}, not counted here)")
    store = report.store
    if store and (store["store"] != "v1" or store["dual_write"]):  # v1 alone: nothing to say
        text.prose(f"Codex reads memory store {store['store']} ({store['store_from']}"
                   + ("; dual_write: it also consolidates the other" if store["dual_write"]
                      else "") + ")")
    text.title("Counts:")
    if t["in_codex_table"] != t["memories"] or t["gone_from_codex"] or t["archived"]:
        parts = [f"{t['in_codex_table']} in Codex's database"]
        if t["gone_from_codex"]:
            parts.append(f"{t['gone_from_codex']} gone from Codex (kept for their citations)")
        if t["archived"]:
            parts.append(f"{t['archived']} archived by memcite")
        others = t["memories"] - t["in_codex_table"] - t["gone_from_codex"]
        if others > 0:
            parts.append(f"{others} only in the memory folder")
        text.prose(f"memories: {'; '.join(parts)}")
    text.prose(f"used, by Codex's own count: {count(t['cited_codex'], 'memory', 'memories')}, "
               f"{count(t['codex_citations'], 'time')} in all; never used: "
               f"{t['never_cited_codex']}")
    if report.source != "codex" and report.citation_log:
        text.prose(f"seen by memcite: {count(t['replies'], 'reply', 'replies')} citing "
                   f"{count(t['cited_memcite'], 'memory', 'memories')} "
                   f"{count(t['citations'], 'time')}")
        dead_when = (f"dead: Codex saw no use for {days} (rule codex)" if report.rule == "codex"
                     else f"dead: neither saw a use, nor did Codex extract it again, for {days}")
        text.prose("(Codex counts every use of a memory; memcite only the replies it read, "
                   f"since its hook was set up; {dead_when})")
        strays = t.get("unknown_ids", 0) + t.get("not_uuid_ids", 0)
        if strays:
            text.prose(f"cited ids that are no memory: {strays} (Codex counts none of them)")
        checks = report.citation_checks
        bad = [(outcome, tally["citations"]) for outcome, tally in checks.outcomes.items()
               if outcome != "ok" and tally["citations"]]
        if checks.citations:
            ok = checks.outcomes.get("ok", {}).get("citations", 0)
            text.prose(f"cited lines: {ok} of {checks.citations} still as cited"
                       + ("; " + ", ".join(f"{BRIEF_OUTCOMES.get(outcome, outcome)} {n}"
                                          for outcome, n in bad) if bad else ""))
    elif report.source != "codex":
        text.prose("seen by memcite: no reply yet (`memcite setup codex` records each turn)")
    if t.get("asked_to_forget"):
        text.prose(f"asked to forget, still in Codex: {t['asked_to_forget']} (until a sync finds "
                   f"{'it' if t['asked_to_forget'] == 1 else 'them'} gone)")
    text.title(f"Dead memories ({report.dead_count}, stalest first):")
    if not report.dead:
        text.line("  none")
    rows, used = [], 0
    for dead in report.dead:
        uses = _uses(dead, report.citation_log)
        used += bool(uses)
        mark = "[asked to forget] " if dead.get("asked_to_forget") else ""
        rows.append({"id": dead["thread_id"], "label": mark + dead.get("label", "-"),
                     "cells": {"unused": f"{dead['days_unused']} d", "uses": _count(uses)},
                     "details": f"{dead['days_unused']:>4} days unused  {_count(uses)} uses",
                     "compact": f"{dead['days_unused']}d unused, {_count(uses)} uses"})
    memory_rows(text, rows, [("unused", 6, False), ("uses", 4, False)])
    if report.dead_count > len(report.dead):
        text.line(f"  {text.dots} and {report.dead_count - len(report.dead)} more "
                  "(--limit 0 lists all)")
    if used:
        text.prose(f"({count(used, 'of them was', 'of them were')} used, but the last use is "
                   f"older than {days}: \"unused\" counts the days since)")
    if report.top:
        shown = report.top[:BRIEF_TOP]
        text.title(f"Most used ({len(shown)} of {len(report.top)}):")
        rows = []
        for top in shown:
            uses, last = _uses(top, report.citation_log), day(top["last_used"])
            rows.append({"id": top["thread_id"], "label": top.get("label", "-"),
                         "cells": {"uses": _count(uses), "last used": last},
                         "details": f"{_count(uses)} uses  last used {last}",
                         "compact": f"{_count(uses)} uses"})
        memory_rows(text, rows, [("uses", 4, False), ("last used", 10, True)])
    if report.audit is not None:
        from memcite.retention.audit_counts import audit_line

        text.line()
        text.prose(audit_line(report.audit), indent="")
    text.line()
    text.prose("`memcite stats --full` shows every table: both counts per memory, the citation "
               "checks, MEMORY.md's sections and entries, citations per week", indent="")


def print_checks(text: ReportText, report) -> None:
    """The citation checks: what they compare, one row per outcome, the worst places."""
    from memcite.retention.checks import OUTCOME_MEANING

    checks = report.citation_checks
    if not report.citation_log:
        text.title(f"Citation checks: {NO_CITATION_LOG}")
        return
    text.title(f"Citation checks: {count(checks.citations, 'cited line range')} "
               f"({checks.entries} distinct), in the memory folder now")
    files = f" ({count(checks.files_read, 'file')} read)"
    text.line("  " + text.cut_path(checks.memory_root or "no memory folder",
                                   text.width - 2 - len(files)) + files)
    late = report.totals.get("replies_hashed_late")
    text.prose("each compared with its hash, taken when its reply was recorded; for an old "
               "session ingested late, from the folder's git history at the reply's time (none "
               "without one: unverified)"
               + (f"; {count(late, 'reply was', 'replies were')} recorded over an hour after "
                  "being made" if late else ""))
    shown = [(outcome, tally) for outcome, tally in checks.outcomes.items() if tally["entries"]]
    if shown:
        text.line("  outcome        ranges  distinct  meaning")
    for outcome, tally in shown:
        head = f"  {outcome:<12} {tally['citations']:>7} {tally['entries']:>9}  "
        text.prose(OUTCOME_MEANING[outcome], indent=head, more=" " * len(head))
    if checks.worst:
        text.line("  worst:")
        for entry in checks.worst:
            now_at = (f" (now at {entry.moved_to[0]}-{entry.moved_to[1]})"
                      if entry.moved_to else "")
            place = f":{entry.line_start}-{entry.line_end}"
            tail = f"{place}  {entry.outcome}{now_at}  ({count(entry.citations, 'time')})"
            text.line("    " + text.cut_path(entry.path, text.width - 4 - len(tail)) + tail)
    for path, why in checks.skipped.items():
        text.line(f"  not read: {path}: {why}")


def _entry_lines(text: ReportText, rows: list[dict]) -> list[str]:
    """Entries as the report lists them: relevance, tier, citations, last cited, place, title."""
    lines = []
    for row in rows:
        where = f"{os.path.basename(row['path'])}:{row['line_start']}"
        if row["kind"] == "note":
            where = f"{os.path.basename(os.path.dirname(row['path']))}/{where}"
        last = day(row["last_cited"]) if row["last_cited"] else "never"
        tier = f"[{row['tier'] or '-'}]"
        head = (f"{row['relevance']:.3f}  {tier:<6} {row['citations']:>4} cit.  {last:<10}  "
                if text.width >= DEFAULT_WIDTH else
                f"{row['relevance']:.3f} {tier:<6}{row['citations']:>3} cit. {last:<10} ")
        room = text.width - 2 - len(head)
        if len(where) > room - 8:
            where = text.cut_path(where, room // 2)
        lines.append(head + where + "  " + text.cut(row["title"], room - len(where) - 2))
    return lines


def print_entries(text: ReportText, entries: dict,
                   relevance: tuple[list[dict], list[dict]] = ([], [])) -> None:
    """The ``entries`` part: usage per entry of MEMORY.md and memcite's notes."""
    tiers = "  ".join(f"{tier} {count}" for tier, count in entries["tiers"].items())
    text.title(f"Entries: {entries['count']} in {count(len(entries['files']), 'file')}, "
               f"cited {count(entries['citations'], 'time')} (a range, once per entry it covers):")
    text.line(f"  tiers: {tiers}")
    for item in entries["files"]:
        if item["problem"]:
            text.line(f"  not read: {item['path']}: {item['problem']}")
        elif item["kind"] == "codex" and (item["moved"] or item["unattributed"]):
            none = item["unattributed"]
            text.prose(f"{os.path.basename(item['path'])}: {count(none, 'cited range')} "
                       f"cover{'s' if none == 1 else ''} no entry now, {item['moved']} followed "
                       "to moved lines")
    most, least = relevance
    print_list(text, "Most relevant cited entries (importance x 0.95^days unused"
                + ("" if least else f", all {len(most)}") + ")", _entry_lines(text, most))
    print_list(text, "Least relevant cited entries (least first)", _entry_lines(text, least))
    print_list(text, f"Entries never cited ({entries['never_cited_count']})",
                _entry_lines(text, entries["never_cited"]))
    print_list(text, "Supersession chains (live head <- what it replaces)", [
        ("LOOP (no live head)" if chain["head"] is None else
         f"{os.path.basename(chain['head']['path'])}:{chain['head']['line_start']} "
         f"{chain['head']['title'][:60]}")
        + "  <- " + "; ".join(r["title"][:40] for r in chain["replaced"])
        for chain in entries["chains"]])


def print_list(text: ReportText, title: str, lines: list[str]) -> None:
    """A titled list of the report, indented, each line fitted; nothing when it is empty."""
    if lines:
        text.title(f"{title}:")
        for line in lines:
            text.line(f"  {line}")



CHART_WEEKS = 26  # weeks drawn without --since (--json lists them all)


def print_weeks(weeks: list[dict], file, *, cut: int | None = CHART_WEEKS,
                 width: int = DEFAULT_WIDTH) -> None:
    """A bar chart of citations per week (the last ``cut`` weeks, saying so), drawn with rich
    in ``width`` columns; ``#`` bars where the output cannot encode block characters. When
    more than half the weeks have no citation, one line says so instead of the chart."""
    shown = weeks[-cut:] if cut else weeks
    text = ReportText(file, width)
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
    block = "█" if can_encode(file, "█") else "#"
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


def can_encode(file, text: str) -> bool:
    encoding = getattr(file, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True
