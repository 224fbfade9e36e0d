"""``memcite prune`` (its ``memcite`` and ``codex`` rules) as library functions: ``plan``
judges which memories the rule would forget; ``apply`` asks Codex to forget them (one ad-hoc
note, or their rows deleted from Codex's table, saved first). Both take the open ledger,
the home's ``CodexLocations`` and the time: nothing here reads the environment or the clock.
"""

from __future__ import annotations

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
