"""``memcite prune --rule tiered`` as one library function: ``prune_tiered`` judges the entries
of MEMORY.md and of memcite's notes by their tier windows and, when asked, acts on them
(memcite's notes' entries archived, Codex asked about MEMORY.md's with one ad-hoc note);
``render_text`` is what the command prints.

In the Codex wing, not in retention, because it reads Codex's last consolidation
(``memcite.codex.consolidation``) and archives notes (``memcite.notes.operations``); the
judging and the request to Codex are ``memcite.retention.tiered``'s. Where things are comes
in resolved (the located home, memcite's config path, an open ledger) and the time as
``now``: nothing here reads the environment.
"""

from __future__ import annotations

import os
import time

from memcite.display import count
from memcite.errors import InputError
from memcite.retention.stats_text import day

TIERED = "tiered"


class TieredPrune:
    """What one ``prune --rule tiered`` run judged, and did when ``applied``."""

    def __init__(self, *, locations, settings, windows, now: int, last_consolidation,
                 judged: list, untiered: int, codex_items: list, note_items: list,
                 applied: bool, codex_result, notes_result: dict | None) -> None:
        self.locations, self.settings, self.windows = locations, settings, windows
        self.now, self.last_consolidation = now, last_consolidation
        self.judged, self.untiered = judged, untiered
        self.codex_items, self.note_items = codex_items, note_items
        self.applied, self.codex_result, self.notes_result = applied, codex_result, notes_result

    def to_dict(self) -> dict:
        """``prune --rule tiered --json``."""
        from memcite.retention.stats_report import store_of

        locations, settings = self.locations, self.settings
        return {
            "codex_home": locations.codex_home, "state_db": locations.state_db,
            "store": store_of(locations), "rule": TIERED, "as_of": self.now,
            "max_unused_days": settings.max_unused_days,
            "settings": settings.to_dict(), "applied": self.applied, "way": None,
            "prune": [], "result": None,
            "codex_still_sees": still_sees(self.codex_result),
            "gone_from_codex": 0, "not_in_codex_table": 0,
            "tiers": self.windows.to_dict(), "entries": [item.to_dict() for item in self.judged],
            "untiered": self.untiered,
            "entry_result": None if not self.applied else {
                "codex": None if self.codex_result is None else self.codex_result.to_dict(),
                "notes": self.notes_result or {"archived": [], "skipped": []}},
        }



def check_tiered_options(*, in_codex_db: bool, include_recent_threads: bool,
                         max_unused_days: int | None) -> None:
    """Refuse (``InputError``) the options of the other rules: tiered judges MEMORY.md's
    entries and memcite's notes by their tiers."""
    if in_codex_db or include_recent_threads or max_unused_days is not None:
        option = ("--in-codex-db" if in_codex_db else "--include-recent-threads"
                  if include_recent_threads else "--max-unused-days")
        raise InputError(
            f"{option} does not apply to --rule tiered (it judges MEMORY.md's entries and "
            "memcite's notes by their tiers)",
            hint="the tier windows are set in memcite's config, [retention.tiers]")

def prune_tiered(locations, open_ledger, *, config_path: str | None, now: int, limit: int,
                 apply: bool, judge_without_usage: bool, applied_at: float) -> TieredPrune:
    """Judge the located home's entries at ``now`` by the tier windows of memcite's config
    (``config_path``); with ``apply``, act on them at ``applied_at``. ``open_ledger()`` opens
    memcite's database once the settings are read (a writer with ``apply``), or gives None
    when there is no ledger yet (refused unless ``judge_without_usage``); it is closed here."""
    from memcite.codex.consolidation import last_consolidation as read_last_consolidation
    from memcite.retention.rules import codex_memories_of, load_memcite_config
    from memcite.retention.stats_report import check_limit, resolve_settings_for
    from memcite.retention.tiers import TierWindows

    check_limit(limit)
    settings = resolve_settings_for(locations.codex_home, config_path=config_path,
                                    codex_memories=codex_memories_of(locations))
    mine = load_memcite_config(config_path)
    windows = TierWindows.from_config(mine.get("tiers"), mine.get("decay"))
    last_consolidation = read_last_consolidation(locations.state_db)
    conn = open_ledger()
    try:
        return _judge_and_act(conn, locations, settings, windows, last_consolidation, now=now,
                              limit=limit, apply=apply, judge_without_usage=judge_without_usage,
                              applied_at=applied_at)
    finally:
        if conn is not None:
            conn.close()


def _judge_and_act(conn, locations, settings, windows, last_consolidation, *, now: int,
                   limit: int, apply: bool, judge_without_usage: bool,
                   applied_at: float) -> TieredPrune:
    from memcite.retention.entry_report import (
        is_v2_folder,
        memory_citations,
        memory_entries,
        note_entries,
    )
    from memcite.retention.stats_report import log_root, require_citation_log
    from memcite.retention.tiered import judge_entries, request_entries, to_act_on

    root = None if conn is None else log_root(conn, locations)
    require_citation_log(conn, locations, root, judge_without_usage)
    citations = [] if conn is None else memory_citations(
        conn, root, v2=is_v2_folder(locations.memory_folder))
    files = [f for f in [memory_entries(locations.memory_folder, citations, now=now)]
             if f is not None] + note_entries(locations.codex_home, now=now)
    judged, untiered = judge_entries(files, now=now, windows=windows,
                                     last_consolidation=last_consolidation)
    codex_items = to_act_on(judged, "codex")
    note_items = to_act_on(judged, "note")
    if limit:
        codex_items, note_items = codex_items[:limit], note_items[:limit]
    codex_result = notes_result = None
    if apply and codex_items:
        codex_result = request_entries(conn, codex_items, codex_home=locations.codex_home,
                                       memory_folder=locations.memory_folder,
                                       now=int(applied_at), as_of=now)
    if apply and note_items:
        notes_result = archive_note_entries(conn, locations.codex_home, note_items,
                                            now=applied_at)
    return TieredPrune(locations=locations, settings=settings, windows=windows, now=now,
                       last_consolidation=last_consolidation, judged=judged,
                       untiered=untiered, codex_items=codex_items, note_items=note_items,
                       applied=apply, codex_result=codex_result, notes_result=notes_result)


def still_sees(result) -> str:
    """What Codex still sees of MEMORY.md after a run whose request to Codex is ``result``."""
    if result is None or not result.note_path:
        return "MEMORY.md as it is (nothing new asked of Codex in this run)"
    return ("MEMORY.md as it is (memcite never edits it) until Codex's next consolidation "
            "applies the note")


def archive_note_entries(conn, codex_home: str, items, *, now: float) -> dict:
    """Move each entry of memcite's notes the rule prunes into the note archive (``forget_note``);
    those to review are only reported."""
    from memcite.notes.operations import forget_note, location_of_note
    from memcite.notes.refusals import NoteRefusal

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


def render_text(run: TieredPrune) -> str:
    """The lines ``memcite prune --rule tiered`` prints for ``run``."""
    lines = []
    out = lines.append
    judged, windows, now = run.judged, run.windows, run.now
    acted = len(run.codex_items) + len(run.note_items)
    shown = ", ".join(f"{tier} {'never' if days is None else count(days, 'day')}"
                      for tier, days in windows.to_dict().items())
    out(f"prune for the Codex home {run.locations.codex_home} (tiered rule as of {day(now)}; "
        f"unused before acting: {shown}; Codex's last consolidation: "
        f"{day(run.last_consolidation) if run.last_consolidation else 'none recorded'}): "
        f"{count(len(judged), 'entry', 'entries')} with a "
        f"tier, {acted} to act on, {run.untiered} without a tier (not judged)\n")
    for item in judged:
        row = item.to_dict()
        where = f"{row['path']}:{row['line_start']}"
        out(f"  {item.verdict.action:<6} [{row['tier']}] {row['title'][:70]}\n"
            f"         {where}\n         {item.verdict.reason}; cited "
            f"{count(row['citations'], 'time')}\n")
    if not run.applied:
        if acted:
            out("nothing changed: this is a preview. --apply moves the notes' entries into the "
                "note archive (`memcite note restore` brings them back) and asks Codex, with "
                "one ad-hoc note, to remove or review MEMORY.md's (memcite never edits it).\n")
        return "".join(lines)
    codex_result, notes_result = run.codex_result, run.notes_result
    if codex_result is not None:
        for item in codex_result.dropped:
            out(f"  not asked again: {item['title'][:60]} ({item['why']})\n")
        if codex_result.note_path:
            out(f"asked Codex's next consolidation about "
                f"{count(len(codex_result.asked), 'MEMORY.md entry', 'MEMORY.md entries')}: wrote "
                f"{codex_result.note_path}\n")
    if notes_result is not None:
        for item in notes_result["archived"]:
            out(f"archived note entry {item['id']} to {item['archived']} (undo: `memcite note "
                f"restore {os.path.basename(item['archived'])}` in its project)\n")
        for item in notes_result["skipped"]:
            out(f"  not archived: {item['path']}:{item['line_start']} ({item['why']})\n")
    out(f"what Codex still sees: {still_sees(codex_result)}\n")
    return "".join(lines)
