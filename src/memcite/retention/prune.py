"""``memcite prune`` (its ``memcite`` and ``codex`` rules) as library functions: ``plan``
judges which memories the rule would forget; ``apply`` asks Codex to forget them (one ad-hoc
note, or their rows deleted from Codex's table, saved first). Both take the open ledger,
the home's ``CodexLocations`` and the time: nothing here reads the environment or the clock.
"""

from __future__ import annotations

from memcite.display import count
from memcite.value_classes import Slots


class PrunePlan(Slots):
    """What the rule would forget in one home, and what it leaves out (gone, folder only)."""

    __slots__ = ("locations", "settings", "rule", "as_of", "limit_time", "candidates",
                 "outside")
    _fields = __slots__

    def __init__(self, locations, settings, rule: str, as_of: int, limit_time: int,
                 candidates: list, outside) -> None:
        self.locations = locations  # memcite.ledger.codex_home.CodexLocations
        self.settings = settings
        self.rule = rule
        self.as_of = as_of
        self.limit_time = limit_time
        self.candidates = candidates  # memcite.retention.archive's prune candidates
        self.outside = outside  # memcite.retention.stats.OutOfScope

    @property
    def folder_only(self) -> int:
        """Memories only in the memory folder, not judged by Codex's rule."""
        return self.outside.folder_only if self.rule == "codex" else 0

    def to_dict(self, result=None, *, applied: bool = False) -> dict:
        """``memcite prune --json``: the plan, and ``result`` when it was applied."""
        from memcite.retention.stats_report import store_of

        locations = self.locations
        return {
            "codex_home": locations.codex_home, "state_db": locations.state_db,
            "store": store_of(locations), "rule": self.rule, "as_of": self.as_of,
            "max_unused_days": self.settings.max_unused_days,
            "settings": self.settings.to_dict(), "applied": applied,
            "way": None if result is None else result.way,
            "prune": [{"thread_id": c.thread_id, "label": c.label, "last_used": c.last_used,
                       "reason": c.reason} for c in self.candidates],
            "result": None if result is None else result.to_dict(),
            "codex_still_sees": ("everything (a preview changes nothing)" if result is None
                                 else result.codex_still_sees()),
            "gone_from_codex": self.outside.gone,
            "not_in_codex_table": self.folder_only,
        }


def plan(conn, locations, settings, *, rule: str, now: int, limit: int,
         judge_without_usage: bool = False) -> PrunePlan:
    """The memories of ``locations``' home that ``rule`` would forget at ``now`` (at most
    ``limit``; 0: all); ``UsageUnknown`` (exit 3) when no usage is known."""
    from memcite.retention.archive import prune_candidates
    from memcite.retention.rules import cutoff
    from memcite.retention.stats import memories_of, out_of_scope
    from memcite.retention.stats_report import require_synced_usage, require_usage

    require_usage(locations, judge_without_usage)
    require_synced_usage(conn, locations, judge_without_usage)
    limit_time = cutoff(now, settings.max_unused_days)
    candidates = prune_candidates(conn, as_of=now, max_unused_days=settings.max_unused_days,
                                  rule=rule, limit=limit, codex_home=locations.codex_home)
    outside = out_of_scope(conn, limit_time=limit_time,
                           table=memories_of(conn, locations.codex_home))
    return PrunePlan(locations, settings, rule, now, limit_time, candidates, outside)


def apply(conn, planned: PrunePlan, *, in_codex_db: bool, include_recent_threads: bool,
          now: int, codex_memories: dict | None = None):
    """Ask Codex to forget ``planned``'s memories: an ad-hoc note (or, with ``in_codex_db``,
    their rows deleted from Codex's table, saved first); ``codex_memories`` is the home's
    ``[memories]`` table when the caller has read it. The result of
    ``memcite.retention.forget.forget_memories``."""
    from memcite.retention.forget import WAY_CODEX_DB, WAY_NOTE, ToForget, forget_memories
    from memcite.retention.rules import clamp_codex, codex_memories_of

    locations = planned.locations
    if codex_memories is None:
        codex_memories = codex_memories_of(locations)
    age = clamp_codex("max_rollout_age_days", codex_memories.get("max_rollout_age_days", 10))
    return forget_memories(
        conn, [ToForget(c.thread_id, c.last_used, c.reason) for c in planned.candidates],
        locations=locations, way=WAY_CODEX_DB if in_codex_db else WAY_NOTE,
        rule=planned.rule, max_unused_days=planned.settings.max_unused_days,
        limit_time=planned.limit_time, now=now, max_rollout_age_days=age,
        include_recent=include_recent_threads)


_apply_plan = apply  # ``run``'s flag of the same name hides it there


class PruneRun(Slots):
    """One ``prune`` run of the ``memcite`` or ``codex`` rule: its plan, and what was done
    when it was applied (``result``: ``memcite.retention.forget``'s, None for a preview)."""

    __slots__ = ("planned", "result", "applied")
    _fields = __slots__

    def __init__(self, planned: PrunePlan, result, applied: bool) -> None:
        self.planned = planned
        self.result = result
        self.applied = applied

    def to_dict(self) -> dict:
        """``memcite prune --json``."""
        return self.planned.to_dict(self.result, applied=self.applied)


def run(locations, open_ledger, *, rule: str, max_unused_days: int | None,
        config_path: str | None, now: int, limit: int, apply: bool, in_codex_db: bool,
        include_recent_threads: bool, judge_without_usage: bool, applied_at: int,
        ledger_missing: str | None = None) -> PruneRun:
    """``memcite prune``: the settings (the command line's ``max_unused_days``, memcite's
    config ``config_path``, Codex's ``[memories]`` as ``locate`` read it), the plan at ``now``,
    and with ``apply`` the request to Codex at ``applied_at``. ``open_ledger()`` opens memcite's
    database once the settings are read and the usage data found (a writer with ``apply``);
    it is closed here. ``ledger_missing``: memcite's database when it does not exist yet (the
    refusal's hint then says to sync first)."""
    from memcite.retention.rules import codex_memories_of
    from memcite.retention.stats_report import (
        require_memories,
        require_usage,
        resolve_settings_for,
    )

    codex_memories = codex_memories_of(locations)  # config.toml as locate read it
    settings = resolve_settings_for(locations.codex_home, rule=rule,
                                    max_unused_days=max_unused_days, config_path=config_path,
                                    codex_memories=codex_memories)
    require_memories(locations, "`memcite prune` previews what to forget")
    require_usage(locations, judge_without_usage, ledger=ledger_missing)
    result = None
    conn = open_ledger()
    try:
        planned = plan(conn, locations, settings, rule=rule, now=now, limit=limit,
                       judge_without_usage=judge_without_usage)
        if apply:
            result = _apply_plan(conn, planned, in_codex_db=in_codex_db,
                                 include_recent_threads=include_recent_threads,
                                 now=applied_at, codex_memories=codex_memories)
    finally:
        conn.close()
    return PruneRun(planned, result, apply)


def render_text(done: PruneRun) -> str:
    """The lines ``memcite prune`` (``memcite`` and ``codex`` rules) prints for ``done``."""
    from memcite.retention.stats_text import day

    planned, result = done.planned, done.result
    candidates, outside, folder_only = planned.candidates, planned.outside, planned.folder_only
    lines = []
    out = lines.append
    out(f"prune for the Codex home {planned.locations.codex_home} ({planned.rule} rule, unused "
        f"for more than {count(planned.settings.max_unused_days, 'day')} before "
        f"{day(planned.as_of)}): {count(len(candidates), 'memory', 'memories')}\n")
    for candidate in candidates:
        out(f"  {candidate.thread_id}  {candidate.label}\n"
            f"      last used {day(candidate.last_used)}  {candidate.reason}\n")
    if outside.gone:
        out(f"not offered: {count(outside.gone, 'memory', 'memories')} already "
            "gone from Codex (missing at the last sync; nothing left to forget)\n")
    if folder_only:
        out(f"not judged: {count(folder_only, 'memory', 'memories')} only in the "
            "memory folder, not in Codex's table (its retention never sees them; "
            "--rule memcite does)\n")
    if result is None:
        if candidates:
            out("nothing changed: this is a preview. --apply asks Codex to forget them with an "
                "ad-hoc note in its memory folder; --apply --in-codex-db deletes their rows "
                "from Codex's table (saved first). `memcite restore` undoes either.\n")
        return "".join(lines)
    return "".join(lines) + forget_result_text(result)


def forget_result_text(result) -> str:
    """What one request to forget did (``memcite.retention.forget.forget_memories``' result)."""
    lines = []
    out = lines.append
    for item in result.settled:
        out(f"settled an interrupted earlier prune: {item['thread_id']} {item['state']}\n")
    for item in result.dropped:
        out(f"  not asked: {item['thread_id']}  {item.get('label') or ''}  ({item['why']})\n")
    asked = len(result.asked)
    if result.way == "note":
        if asked:
            out(f"asked Codex to forget {count(asked, 'memory', 'memories')} (way: ad-hoc note): wrote "
                f"{result.note_path}\n")
    elif asked:
        out(f"deleted {count(asked, 'row')} from stage1_outputs in {result.codex_db} (way: Codex's "
            "database; each row saved in memcite's database first)\n")
    else:
        out("deleted nothing from Codex's table\n")
    out(f"what Codex still sees: {result.codex_still_sees()}\n")
    if asked:
        out("undo: `memcite restore --batch " + result.batch + "` (or the thread ids); "
            "`memcite archived` lists every request\n")
    return "".join(lines)
