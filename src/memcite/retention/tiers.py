"""The tiered retention rule (``prune --rule tiered``): how long each tier may go unused.

Defaults follow the tiers' meaning: ``CORE`` is never pruned, ``IMP`` is reported for
review after 60 days unused, ``SEC`` is pruned after 14 days unused, ``IRR`` at once.
An entry without a tier is not judged by this rule. "Unused" counts from the entry's
last citation in memcite's log, else from when it was written. Pure functions: the
time is passed in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from memcite.errors import InputError

DAY = 86_400
NEVER = "never"
KEEP, REVIEW, PRUNE = "keep", "review", "prune"
# Per tier: what happens once its window has passed, and the default window in days.
TIER_ACTIONS = {"CORE": REVIEW, "IMP": REVIEW, "SEC": PRUNE, "IRR": PRUNE}
DEFAULT_WINDOWS: dict[str, int | None] = {"CORE": None, "IMP": 60, "SEC": 14, "IRR": 0}
# The keys of ``[retention.tiers]`` in memcite's config, per tier.
CONFIG_KEYS = {"core_days": "CORE", "imp_days": "IMP", "sec_days": "SEC", "irr_days": "IRR"}


@dataclass(frozen=True, slots=True)
class TierWindows:
    """Days each tier may go unused before its action applies (None: never)."""

    windows: Mapping[str, int | None]

    @classmethod
    def from_config(cls, table: Mapping[str, object] | None) -> TierWindows:
        """The windows from ``[retention.tiers]`` (``core_days = "never"``, ``sec_days = 14``, ...),
        the defaults for the keys it lacks."""
        windows = dict(DEFAULT_WINDOWS)
        for key, value in (table or {}).items():
            if key not in CONFIG_KEYS:
                raise InputError(f"[retention.tiers] {key}: unknown key; it accepts "
                                 f"{', '.join(CONFIG_KEYS)}")
            if value == NEVER:
                windows[CONFIG_KEYS[key]] = None
            elif type(value) is int and value >= 0:
                windows[CONFIG_KEYS[key]] = value
            else:
                raise InputError(f"[retention.tiers] {key}: a whole number of days (0 or "
                                 f"more) or \"never\", got {value!r}")
        return cls(windows)

    def window(self, tier: str | None) -> int | None:
        return None if tier is None else self.windows.get(tier)

    def to_dict(self) -> dict:
        return {tier: self.windows.get(tier) for tier in TIER_ACTIONS}


DEFAULT = TierWindows(DEFAULT_WINDOWS)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the tiered rule says of one entry, and why."""

    action: str  # keep | review | prune
    reason: str
    days_unused: int | None  # None: no time known


def judge(tier: str | None, *, last_cited: int | None, created_at: int | None, now: int,
          windows: TierWindows = DEFAULT) -> Verdict:
    """The verdict for an entry of ``tier``, last cited at ``last_cited`` (else written at
    ``created_at``), judged at ``now``."""
    if tier is None:
        return Verdict(KEEP, "no tier: the tiered rule does not judge it", None)
    since = last_cited if last_cited is not None else created_at
    days = None if since is None else max(0, now - since) // DAY
    window = windows.window(tier)
    what = "last cited" if last_cited is not None else "never cited, written"
    age = "at an unknown time" if days is None else f"{days} day(s) ago"
    if window is None:
        return Verdict(KEEP, f"[{tier}] is never pruned ({what} {age})", days)
    action = TIER_ACTIONS[tier]
    verb = "review" if action == REVIEW else "prune"
    if window == 0:
        return Verdict(action, f"[{tier}]: {verb} at once ({what} {age})", days)
    if days is None:
        return Verdict(KEEP, f"[{tier}]: when it was last used is unknown; kept", None)
    if since is not None and now - since >= window * DAY:
        return Verdict(action, f"[{tier}] unused for {days} day(s), {verb} after {window} "
                       f"({what} {age})", days)
    return Verdict(KEEP, f"[{tier}] used within {window} day(s) ({what} {age})", days)


__all__ = ["CONFIG_KEYS", "DEFAULT", "DEFAULT_WINDOWS", "KEEP", "NEVER", "PRUNE", "REVIEW",
           "TIER_ACTIONS", "TierWindows", "Verdict", "judge"]
