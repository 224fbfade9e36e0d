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
    _database_error,
    report_error,
    resolve_codex_home,
    resolve_db_path,
)
from memcite.errors import EXIT_BAD_INPUT, EXIT_OK, InputError, MemciteError
from memcite.retention.rules import check_rule


def _time(value: str | None, what: str, default: int | None) -> int | None:
    if value is None:
        return default
    if value.strip().isdigit():
        return int(value)  # epoch seconds, without importing the ledger
    from memcite.ledger.recording import parse_time

    return parse_time(value, what=what)


def _check_limit(limit: int, option: str = "--limit") -> int:
    if limit < 0:
        raise InputError(f"{option}: must be 0 (everything) or more, not {limit}")
    return limit


def resolve_settings_for(codex_home: str, *, rule: str = "memcite",
                         max_unused_days: int | None = None, n: int | None = None):
    """The retention settings: command line, memcite's config (not read for Codex's rules:
    ``rule`` ``codex``, and ``select``), Codex's ``[memories]``, defaults."""
    from memcite.retention.rules import (
        default_memcite_config_path,
        load_codex_memories_config,
        load_memcite_config,
        resolve_settings,
    )

    mine = load_memcite_config(default_memcite_config_path()) if rule == "memcite" else None
    return resolve_settings(
        {"max_unused_days": max_unused_days, "max_raw_memories_for_consolidation": n},
        mine, load_codex_memories_config(codex_home), rule=rule)


def _inputs(codex_home: str | None, *, rule: str, max_unused_days: int | None,
            as_of: str | None, limit: int = 0, n: int | None = None):
    """``(Codex home, settings, time to judge at)`` for a retention command, options checked."""
    check_rule(rule)
    _check_limit(limit)
    home = resolve_codex_home(codex_home)
    settings = resolve_settings_for(home, rule=rule, max_unused_days=max_unused_days, n=n)
    return home, settings, _time(as_of, "--as-of", int(time.time()))


def _failed(db: str | None, error: Exception) -> int:
    """Report a memcite or database error from a command body; its exit code."""
    if isinstance(error, sqlite3.Error):
        error = _database_error(db, error, "not read; nothing was written")
    return report_error(error)


def _day(seconds: int | None) -> str:
    from memcite.retention.rules import format_day

    return "-" if not seconds else format_day(seconds)


# --------------------------------------------------------------------------- stats


def _nothing_to_report(db_path: str, home: str) -> MemciteError:
    return InputError(
        f"no memcite database ({db_path}) and no Codex memories database "
        f"({os.path.join(home, 'memories_1.sqlite')}): nothing to report",
        hint="pass the Codex home with --codex-home (or CODEX_HOME), or run `memcite sync`; "
             "`memcite demo` shows the whole loop on sample data")


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
) -> int:
    """Print the usage report (dead memories, top, unknown ids, citation checks, sections)."""
    try:
        home, settings, now = _inputs(codex_home, rule=rule, max_unused_days=max_unused_days,
                                      as_of=as_of, limit=limit)
        since_time = _time(since, "--since", None)
        root = os.path.join(home, "memories")  # as memcite.ledger.codex_home, without importing it
        codex_db = os.path.join(home, "memories_1.sqlite")
        path = resolve_db_path(db)
        common = dict(memory_root=root, as_of=now, max_unused_days=settings.max_unused_days,
                      rule=rule, limit=limit)
        if db is None and not os.path.exists(path) and os.path.isfile(codex_db):
            from memcite.retention.stats import collect_codex_stats

            if since_time is not None:
                raise InputError("--since needs memcite's citation log; "
                                 "there is no memcite database yet",
                                 hint="record replies or run `memcite sync` first")
            report = collect_codex_stats(codex_db, **common)
        elif db is None and not os.path.exists(path):
            raise _nothing_to_report(path, home)
        else:
            from memcite.ledger.store import open_store
            from memcite.paths import user_cache_dir
            from memcite.retention.stats import collect_stats

            conn = open_store(path, readonly=True)
            try:
                report = collect_stats(conn, since=since_time, weeks=True,
                                       cache_dir=None if no_cache else user_cache_dir(),
                                       **common)
            finally:
                conn.close()
    except (MemciteError, sqlite3.Error) as error:
        return _failed(db, error)
    if json:
        dump_json(report.to_dict())
    else:
        print_stats(report)
    return 0


NO_CITATION_LOG = "no citation log (run memcite record or memcite ingest)"


def print_stats(report, file=None) -> None:
    """Print a ``memcite.retention.stats.StatsReport`` as ``memcite stats`` does (to stdout by default)."""
    file = file or sys.stdout
    out = file.write
    t = report.totals
    source = "Codex's memories_1.sqlite (no memcite database)" if report.source == "codex" \
        else "memcite's ledger"
    out(f"memcite stats from {source}, as of {_day(report.as_of)}, rule {report.rule}, "
        f"dead after {report.max_unused_days} day(s) unused\n")
    counts = "Codex's counts" if report.source == "codex" or report.rule == "codex" \
        else "memcite's log"
    gone, in_table = t["gone_from_codex"], t["in_codex_table"]
    scope = (f" of the {in_table} in Codex's table"
             if report.rule == "codex" and in_table != t["memories"] else "")
    out(f"  memories {t['memories']} (archived {t['archived']}"
        f"{f', gone from Codex {gone}' if gone else ''}), dead {t['dead']}{scope}; "
        f"by {counts}: cited {t['cited']}, never cited {t['never_cited']}\n")
    if gone:
        out(f"  gone from Codex: {gone} memor{'y' if gone == 1 else 'ies'} no longer in Codex "
            "(missing at the last sync), kept for their citations, counted apart\n")
    if report.source == "codex":
        out(f"  citations {t['citations']} (Codex's usage counts; no replies recorded)\n")
    else:
        out(f"  citations {t['citations']} in {t['replies']} "
            f"repl{'y' if t['replies'] == 1 else 'ies'} recorded, unknown ids "
            f"{t['unknown_ids']}, ids that are not UUIDs {t['not_uuid_ids']}\n")
    out(f"\nDead memories ({report.dead_count}, stalest first):\n")
    if not report.dead:
        out("  none\n")
    for dead in report.dead:
        out(f"  {dead['thread_id']}  {dead['days_unused']:>4} days unused  {dead['reason']}\n")
    if report.dead_count > len(report.dead):
        out(f"  … and {report.dead_count - len(report.dead)} more (--limit 0 lists all)\n")
    out("\nMost cited (Codex's usage counts):\n" if not report.citation_log
        else "\nMost cited:\n")
    if not report.top:
        out("  none\n")
    for top in report.top:
        if not report.citation_log:  # Codex's count is the only one there is
            count = f"{top['codex_usage_count'] or 0:>5}"
        else:
            count = f"{top['usage_count']:>5}" + ("" if top["codex_usage_count"] is None
                                                 else f" (Codex: {top['codex_usage_count']})")
        out(f"  {top['thread_id']}  {count}  last {_day(top['last_used'])}\n")
    _print_list(out, "Cited ids that are not known memories",
                [f"{item['thread_id']}  {item['citations']} citation(s)"
                 for item in report.unknown_ids])
    _print_list(out, "Cited ids that are not UUIDs",
                [f"{item['rollout_id']!r}  {item['citations']} citation(s)"
                 for item in report.not_uuid_ids])
    checks = report.citation_checks
    if not report.citation_log:
        out(f"\nCitation checks and MEMORY.md sections: {NO_CITATION_LOG}\n")
    else:
        out(f"\nCitation checks against {checks.memory_root or 'no memory folder'} "
            f"({checks.entries} distinct entries, {checks.citations} citations, "
            f"{checks.files_read} file(s) read):\n")
        for outcome, counts in checks.outcomes.items():
            if counts["entries"]:
                out(f"  {outcome:<13} {counts['entries']:>6} entries  "
                    f"{counts['citations']:>7} citations\n")
        if checks.worst:
            out("  worst:\n")
            for entry in checks.worst:
                out(f"    {entry.path}:{entry.line_start}-{entry.line_end}  {entry.outcome}"
                    f"  ({entry.citations} citation(s))\n")
        for path, why in checks.skipped.items():
            out(f"  not read: {path}: {why}\n")
    _print_list(out, "Citations per file",
                [f"{item['citations']:>6}  {item['path']}" for item in report.files])
    _print_list(out, "MEMORY.md sections (citations)",
                [f"{s.citations:>6}  {'  ' * (s.level - 1)}{s.title}"
                 + ("" if s.citations else "   <- never cited") for s in report.sections])
    if report.weeks:
        file.flush()
        _print_weeks(report.weeks, file, cut=CHART_WEEKS if report.since is None else None)


def _print_list(out, title: str, lines: list[str]) -> None:
    """A titled list of the report, indented; nothing when it is empty."""
    if lines:
        out(f"\n{title}:\n")
        for line in lines:
            out(f"  {line}\n")


CHART_WEEKS = 26  # weeks drawn without --since (--json lists them all)


def _print_weeks(weeks: list[dict], file, *, cut: int | None = CHART_WEEKS) -> None:
    """A bar chart of citations per week (the last ``cut`` weeks, saying so), drawn with rich;
    ``#`` bars where the output cannot encode block characters."""
    from rich.console import Console
    from rich.table import Table

    class _Console(Console):
        def on_broken_pipe(self) -> None:  # rich would exit 1; memcite's entry point exits 141
            raise BrokenPipeError

    shown = weeks[-cut:] if cut else weeks
    title = f"Citations per week, {shown[0]['week_start']} to {shown[-1]['week_start']}"
    if len(shown) < len(weeks):
        title += (f" (the last {len(shown)} of {len(weeks)} weeks; "
                  "--since shows more, --json lists every week)")
    file.write(f"\n{title}:\n")
    file.flush()
    block = "█" if _can_encode(file, "█") else "#"
    peak = max(week["citations"] for week in shown) or 1
    table = Table(show_header=True, header_style="bold", box=None, padding=(0, 1))
    table.add_column("week of")
    table.add_column("citations", justify="right")
    table.add_column("")
    for week in shown:
        bar = block * max(1 if week["citations"] else 0, round(40 * week["citations"] / peak))
        table.add_row(week["week_start"], str(week["citations"]), f"[cyan]{bar}[/cyan]")
    _Console(file=file, highlight=False, safe_box=True).print(table)


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
    archive_dir: str | None = None,
    apply: bool = False,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
) -> int:
    """Preview (or with ``apply``, archive) the memories the rule would forget.

    Memories gone from Codex are never offered (nothing is left to archive) and, with
    ``--rule codex``, rows only in the memory folder are not judged (they are not in
    Codex's table); both are counted in the output.
    """
    from memcite.ledger.store import open_store
    from memcite.retention.archive import archive_memories, prune_candidates
    from memcite.retention.rules import cutoff
    from memcite.retention.stats import out_of_scope

    try:
        home, settings, now = _inputs(codex_home, rule=rule, max_unused_days=max_unused_days,
                                      as_of=as_of, limit=limit)
        conn = open_store(resolve_db_path(db), readonly=not apply)
        try:
            candidates = prune_candidates(conn, as_of=now, max_unused_days=settings.max_unused_days,
                                          rule=rule, limit=limit)
            outside = out_of_scope(conn, limit_time=cutoff(now, settings.max_unused_days))
            moved = []
            if apply:
                moved = archive_memories(conn, candidates, codex_home=home,
                                         archive_dir=archive_dir, now=int(time.time()),
                                         rule=rule)
        finally:
            conn.close()
    except (MemciteError, sqlite3.Error) as error:
        return _failed(db, error)
    folder_only = outside.folder_only if rule == "codex" else 0
    if json:
        dump_json({
            "rule": rule, "as_of": now, "max_unused_days": settings.max_unused_days,
            "settings": settings.to_dict(), "applied": apply,
            "prune": [{"thread_id": c.thread_id, "last_used": c.last_used, "reason": c.reason}
                      for c in candidates],
            "archived": [m.to_dict() for m in moved],
            "gone_from_codex": outside.gone,
            "not_in_codex_table": folder_only,
        })
        return 0
    out = sys.stdout.write
    verb = "archived" if apply else "would archive"
    out(f"prune ({rule} rule, unused for more than {settings.max_unused_days} day(s) before "
        f"{_day(now)}): {verb} {len(candidates)} memor{'y' if len(candidates) == 1 else 'ies'}\n")
    files = {m.thread_id: m for m in moved}
    here = os.path.realpath(home)
    for candidate in candidates:
        line = f"  {candidate.thread_id}  last used {_day(candidate.last_used)}  {candidate.reason}"
        item = files.get(candidate.thread_id)
        if item and item.codex_home and os.path.realpath(item.codex_home) != here:
            line += (f"\n      from the Codex home it was synced from, {item.codex_home} "
                     f"(not {home})")
        if item and item.file_to:
            line += f"\n      moved {item.file_from} -> {item.file_to}"
        if item and item.problem:
            line += f"\n      note: {item.problem}"
        out(line + "\n")
    if outside.gone:
        out(f"not offered: {outside.gone} memor{'y' if outside.gone == 1 else 'ies'} already "
            "gone from Codex (missing at the last sync; nothing left to archive)\n")
    if folder_only:
        out(f"not judged: {folder_only} memor{'y' if folder_only == 1 else 'ies'} only in the "
            "memory folder, not in Codex's table (its retention never sees them; "
            "--rule memcite does)\n")
    if not apply and candidates:
        out("nothing changed: this is a preview; add --apply to archive them "
            "(summary files are moved, never deleted; `memcite restore` undoes it)\n")
    return 0


def restore(
    thread_ids: list[str] | None = None,
    db: str | None = None,
    all: bool = False,  # noqa: A002 - mirrors the --all flag
    since: str | None = None,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
) -> int:
    """Undo ``prune --apply`` for the given ids, ``--all``, or ``--since TIME``."""
    from memcite.ledger.store import open_store
    from memcite.retention.archive import restore_memories

    thread_ids = list(thread_ids or [])
    try:
        if not thread_ids and not all and since is None:
            raise InputError("say what to restore: thread ids, --all, or --since TIME",
                             hint="`memcite stats` lists archived counts; the ids are in "
                                  "`memcite prune --json` output")
        since_time = _time(since, "--since", None)
        path = resolve_db_path(db)
        open_store(path, readonly=True).close()  # a missing database is an error, not created
        conn = open_store(path)
        try:
            results = restore_memories(conn, thread_ids=thread_ids, all_archived=all,
                                       since=since_time, now=int(time.time()))
        finally:
            conn.close()
    except (MemciteError, sqlite3.Error) as error:
        return _failed(db, error)
    done = [r for r in results if r.done]
    if json:
        dump_json({"restored": [r.to_dict() for r in results]})
    else:
        sys.stdout.write(f"restored {len(done)} memor{'y' if len(done) == 1 else 'ies'}\n")
        for item in results:
            line = f"  {item.thread_id}"
            if item.file_to:
                line += f"  {item.file_from} -> {item.file_to}"
            if not item.done:
                line += "  skipped"
            if item.problem:
                line += f"  ({item.problem})"
            sys.stdout.write(line + "\n")
    # An id that was not archived is a bad input item: the others are restored, exit 2.
    return EXIT_BAD_INPUT if len(done) < len(results) and thread_ids else EXIT_OK


# --------------------------------------------------------------------------- select


def select(
    db: str | None = None,
    codex_home: str | None = None,
    n: int | None = None,
    max_unused_days: int | None = None,
    as_of: str | None = None,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
) -> int:
    """Print the memories Codex's next consolidation would take, in its order."""
    from memcite.ledger.codex_home import iter_stage1_outputs, state_db_path
    from memcite.retention.rules import MemoryUsage, consolidation_selection

    try:
        home, settings, now = _inputs(codex_home, rule="codex", max_unused_days=max_unused_days,
                                      as_of=as_of, n=n)
        codex_db = state_db_path(home)
        memories: list[MemoryUsage] = []
        if os.path.isfile(codex_db):
            source = codex_db
            for row in iter_stage1_outputs(codex_db):
                thread, updated, _gen, _slug, uses, last, selected, _at, raw, summary = row
                memories.append(MemoryUsage(thread, updated, None, last, 0, uses,
                                            bool(selected), bool(raw or summary)))
        else:
            from memcite.ledger.store import open_store
            from memcite.retention.stats import RULE_SCOPE

            source = resolve_db_path(db)
            if db is None and not os.path.exists(source):
                raise _nothing_to_report(source, home)
            conn = open_store(source, readonly=True)
            try:
                for row in conn.execute(
                        "SELECT thread_id, source_updated_at, codex_last_usage, codex_usage_count,"
                        " selected_for_phase2, has_raw_memory OR has_rollout_summary"
                        f" FROM memories WHERE archived_at IS NULL AND {RULE_SCOPE['codex']}"):
                    memories.append(MemoryUsage(row[0], row[1], None, row[2], 0, row[3],
                                                bool(row[4]), bool(row[5])))
            finally:
                conn.close()
        chosen = consolidation_selection(
            memories, now=now, max_unused_days=settings.max_unused_days,
            n=settings.max_raw_memories_for_consolidation)
    except (MemciteError, sqlite3.Error) as error:
        return _failed(db, error)
    if json:
        dump_json({"source": source, "as_of": now, "settings": settings.to_dict(),
               "selected": [{"thread_id": m.thread_id, "usage_count": m.codex_usage_count,
                             "last_usage": m.codex_last_usage,
                             "source_updated_at": m.source_updated_at} for m in chosen]})
        return 0
    sys.stdout.write(
        f"Codex's next consolidation would take {len(chosen)} of {len(memories)} memories "
        f"(n = {settings.max_raw_memories_for_consolidation}, used within "
        f"{settings.max_unused_days} day(s) of {_day(now)}; from {source}):\n")
    for m in chosen:
        sys.stdout.write(f"  {m.thread_id}  uses {m.codex_usage_count or 0:>4}  "
                         f"updated {_day(m.source_updated_at)}\n")
    return 0
