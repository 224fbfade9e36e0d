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
from memcite.retention.stats_text import day, plural, print_stats

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
    from memcite.retention.rules import codex_memories_of

    result = None
    try:
        if in_codex_db and not apply:
            raise InputError("--in-codex-db says how --apply forgets; add --apply",
                             hint="without --apply, prune only previews")
        check_rule(rule)
        _check_limit(limit)
        where = Locations(db=db, codex_home=codex_home)
        locations = locate(where)
        codex_memories = codex_memories_of(locations)  # config.toml as locate read it
        settings = resolve_settings_for(locations.codex_home, rule=rule,
                                        max_unused_days=max_unused_days,
                                        config_path=where.config.path,
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
    ending = "y" if count == 1 else "ies"
    out(f"prune for the Codex home {locations.codex_home} ({rule} rule, unused for more than "
        f"{plural(settings.max_unused_days, 'day')} before {day(now)}): {count} memor{ending}\n")
    for candidate in candidates:
        out(f"  {candidate.thread_id}  {candidate.label}\n"
            f"      last used {day(candidate.last_used)}  {candidate.reason}\n")
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
    shown = ", ".join(f"{tier} {'never' if days is None else plural(days, 'day')}"
                      for tier, days in windows.to_dict().items())
    out(f"prune for the Codex home {locations.codex_home} (tiered rule as of {day(now)}; "
        f"unused before acting: {shown}; Codex's last consolidation: "
        f"{day(last_consolidation) if last_consolidation else 'none recorded'}): "
        f"{len(judged)} entr{'y' if len(judged) == 1 else 'ies'} with a "
        f"tier, {acted} to act on, {untiered} without a tier (not judged)\n")
    for item in judged:
        row = item.to_dict()
        where = f"{row['path']}:{row['line_start']}"
        out(f"  {item.verdict.action:<6} [{row['tier']}] {row['title'][:70]}\n"
            f"         {where}\n         {item.verdict.reason}; cited "
            f"{plural(row['citations'], 'time')}\n")
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
    ending = "y" if asked == 1 else "ies"
    if result.way == "note":
        if asked:
            out(f"asked Codex to forget {asked} memor{ending} (way: ad-hoc note): wrote "
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
            f"      {item['state']:<11} {day(item['requested_at'])}  way {item['way']}: "
            f"{where}  batch {item['batch'][:12]}\n")
        if item["consolidation"]:
            out(f"      in Codex: {item['consolidation']['text']}\n")
    if legacy:
        out(f"\nsummary files archived by an earlier memcite ({len(legacy)}):\n")
        for entry in legacy:
            out(f"  {entry['thread_id']}  {day(entry['at'])}  {entry['file_to'] or '-'}\n")
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
        f"{plural(settings.max_unused_days, 'day')} of {day(selection.as_of)}; "
        f"from {selection.source}):\n")
    for m in chosen:
        sys.stdout.write(f"  {m.thread_id}  Codex uses {m.codex_usage_count or 0:>4}  "
                         f"updated {day(m.source_updated_at)}  {labels.get(m.thread_id, '-')}\n")
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
            out(f"    {item['state']:<11} {day(item['requested_at'])}  way {item['way']}\n")
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
