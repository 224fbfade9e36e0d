"""The tiered retention rule (``prune --rule tiered``): how long each tier survives unused.

Each entry with a tier has a survival potential, 1.0 when it was last used (its last
citation in memcite's log, else when it was written), lost at a rate per month (30
days) that depends on its tier and on Codex's last consolidation:

- no consolidation since it was last used: its tier's rate (``CORE`` 0, ``IMP`` 0.15,
  ``SEC`` 0.40, ``IRR`` 0.65 a month), from its last use until the last
  consolidation, then accelerated (``unused_rate``, 0.25 a month, or the tier's own
  rate when that is higher) from the consolidation to now;
- used since the last consolidation: the decay is reset, and runs at ``used_rate``
  (0.05 a month, or the tier's rate when that is lower) from that use;
- no consolidation known: the tier's rate all along.

Once the potential is at or below its tier's threshold (``CORE`` 0, ``IMP`` 0.60,
``SEC`` 0.60, ``IRR`` 1.0), the tier's action applies: ``review`` for ``CORE`` and
``IMP``, ``prune`` for ``SEC`` and ``IRR``. With the defaults, ``CORE`` is never
pruned, ``IMP`` is up for review after 80 days unused, ``SEC`` is pruned after 30,
``IRR`` at once. A fixed window (``[retention.tiers] sec_days = 14``) replaces the
decay for its tier: the entry acts once unused that many days. An entry without a
tier is not judged. Pure functions: the time and the last consolidation are passed in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from memcite.display import count
from memcite.errors import InputError
from memcite.retention.rules import format_day

DAY = 86_400
MONTH = 30 * DAY
NEVER = "never"
KEEP, REVIEW, PRUNE = "keep", "review", "prune"
# Per tier: what happens once it has decayed (or its window has passed).
TIER_ACTIONS = {"CORE": REVIEW, "IMP": REVIEW, "SEC": PRUNE, "IRR": PRUNE}
# The keys of ``[retention.tiers]`` in memcite's config, per tier: a fixed window instead of decay.
CONFIG_KEYS = {"core_days": "CORE", "imp_days": "IMP", "sec_days": "SEC", "irr_days": "IRR"}
# Survival lost per month by tier, and the potential at or below which the tier's action applies.
DEFAULT_RATES = {"CORE": 0.0, "IMP": 0.15, "SEC": 0.40, "IRR": 0.65}
DEFAULT_THRESHOLDS = {"CORE": 0.0, "IMP": 0.60, "SEC": 0.60, "IRR": 1.0}
DEFAULT_USED_RATE = 0.05  # after a use since the last consolidation: the decay reset
DEFAULT_UNUSED_RATE = 0.25  # after a consolidation the entry was not used since: accelerated
# The keys of ``[retention.decay]``.
DECAY_KEYS = {**{f"{tier.lower()}_rate": tier for tier in DEFAULT_RATES},
              **{f"{tier.lower()}_threshold": tier for tier in DEFAULT_THRESHOLDS},
              "used_rate": None, "unused_rate": None}


def _fraction(table: str, key: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InputError(f"[{table}] {key}: a number from 0 to 1, got {value!r}")
    return float(value)


@dataclass(frozen=True, slots=True)
class TierWindows:
    """How each tier decays, and the fixed windows (days; None: never) set instead."""

    windows: Mapping[str, int | None]  # only the tiers given a fixed window
    rates: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_RATES))
    thresholds: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    used_rate: float = DEFAULT_USED_RATE
    unused_rate: float = DEFAULT_UNUSED_RATE

    @classmethod
    def from_config(cls, table: Mapping[str, object] | None,
                    decay: Mapping[str, object] | None = None) -> TierWindows:
        """The rule from ``[retention.tiers]`` (fixed windows: ``sec_days = 14``, ``"never"``)
        and ``[retention.decay]`` (``imp_rate = 0.15``, ``sec_threshold = 0.6``, ``used_rate``,
        ``unused_rate``), the defaults for the keys they lack."""
        windows: dict[str, int | None] = {}
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
        rates, thresholds = dict(DEFAULT_RATES), dict(DEFAULT_THRESHOLDS)
        used, unused = DEFAULT_USED_RATE, DEFAULT_UNUSED_RATE
        for key, value in (decay or {}).items():
            if key not in DECAY_KEYS:
                raise InputError(f"[retention.decay] {key}: unknown key; it accepts "
                                 f"{', '.join(DECAY_KEYS)}")
            number = _fraction("retention.decay", key, value)
            if key == "used_rate":
                used = number
            elif key == "unused_rate":
                unused = number
            elif key.endswith("_rate"):
                rates[DECAY_KEYS[key]] = number
            else:
                thresholds[DECAY_KEYS[key]] = number
        return cls(windows, rates, thresholds, used, unused)

    def fixed(self, tier: str) -> bool:
        """Whether ``tier`` has a fixed window instead of decay."""
        return tier in self.windows

    def window(self, tier: str | None) -> int | None:
        """Days unused before the tier's action applies, for an entry never used since no
        consolidation: its fixed window, else when its decay reaches the threshold (None:
        never)."""
        if tier is None:
            return None
        if tier in self.windows:
            return self.windows[tier]
        rate, threshold = self.rates[tier], self.thresholds[tier]
        if threshold >= 1:
            return 0
        if rate <= 0:
            return None
        return math.ceil(round((1 - threshold) / rate * 30, 9))

    def to_dict(self) -> dict:
        return {tier: self.window(tier) for tier in TIER_ACTIONS}


DEFAULT = TierWindows({})
# The windows before decay, for those who want them back (``[retention.tiers]``).
CLASSIC_WINDOWS: dict[str, int | None] = {"CORE": None, "IMP": 60, "SEC": 14, "IRR": 0}
DEFAULT_WINDOWS = CLASSIC_WINDOWS


def survival(tier: str, *, since: int, now: int, last_consolidation: int | None,
             used_since: bool, windows: TierWindows = DEFAULT) -> tuple[float, str]:
    """``(survival potential at now, how it decayed)`` of an entry of ``tier`` last used (else
    written) at ``since``; ``used_since``: it was used after ``last_consolidation``."""
    rate = windows.rates[tier]
    if rate <= 0:
        return 1.0, f"{tier} does not decay"
    if last_consolidation is None or last_consolidation > now:
        months = max(0, now - since) / MONTH
        return max(0.0, 1 - rate * months), f"{rate:g}/month, no consolidation known"
    if used_since:
        reset = min(rate, windows.used_rate)
        months = max(0, now - since) / MONTH
        return max(0.0, 1 - reset * months), (
            f"used since the last consolidation ({format_day(last_consolidation)}): decay reset "
            f"to {reset:g}/month")
    faster = max(rate, windows.unused_rate)
    before = max(0, last_consolidation - since) / MONTH
    after = max(0, now - max(since, last_consolidation)) / MONTH
    return max(0.0, 1 - rate * before - faster * after), (
        f"not used since the last consolidation ({format_day(last_consolidation)}): "
        f"{rate:g}/month until it, {faster:g}/month since")


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the tiered rule says of one entry, and why."""

    action: str  # keep | review | prune
    reason: str
    days_unused: int | None  # None: no time known


def judge(tier: str | None, *, last_cited: int | None, created_at: int | None, now: int,
          windows: TierWindows = DEFAULT, last_consolidation: int | None = None) -> Verdict:
    """The verdict for an entry of ``tier``, last cited at ``last_cited`` (else written at
    ``created_at``), judged at ``now``, Codex's last consolidation at ``last_consolidation``."""
    if tier is None:
        return Verdict(KEEP, "no tier: the tiered rule does not judge it", None)
    since = last_cited if last_cited is not None else created_at
    days = None if since is None else max(0, now - since) // DAY
    what = "last cited" if last_cited is not None else "never cited, written"
    age = "at an unknown time" if days is None else f"{count(days, 'day')} ago"
    action = TIER_ACTIONS[tier]
    verb = "review" if action == REVIEW else "prune"
    if windows.fixed(tier):
        return _by_window(tier, windows.window(tier), since, days, now, action, verb, what, age)
    rate, threshold = windows.rates[tier], windows.thresholds[tier]
    if threshold >= 1:
        return Verdict(action, f"[{tier}]: {verb} at once ({what} {age})", days)
    if rate <= 0 and threshold < 1:
        return Verdict(KEEP, f"[{tier}] does not decay: never pruned ({what} {age})", days)
    if since is None:
        return Verdict(KEEP, f"[{tier}]: when it was last used is unknown; kept", None)
    used_since = last_cited is not None and last_consolidation is not None and \
        last_cited >= last_consolidation
    potential, how = survival(tier, since=since, now=now, last_consolidation=last_consolidation,
                              used_since=used_since, windows=windows)
    if potential <= threshold + 1e-9:  # 80 days at 0.15/month is 0.60, not 0.6000001
        return Verdict(action, f"[{tier}] survival {potential:.2f} at or below {threshold:g}: "
                       f"{verb} ({what} {age}; {how})", days)
    return Verdict(KEEP, f"[{tier}] survival {potential:.2f} above {threshold:g}: kept ({what} "
                   f"{age}; {how})", days)


def _by_window(tier, window, since, days, now, action, verb, what, age) -> Verdict:
    if window is None:
        return Verdict(KEEP, f"[{tier}] is never pruned ({what} {age})", days)
    if window == 0:
        return Verdict(action, f"[{tier}]: {verb} at once ({what} {age})", days)
    if days is None:
        return Verdict(KEEP, f"[{tier}]: when it was last used is unknown; kept", None)
    if now - since >= window * DAY:
        return Verdict(action, f"[{tier}] unused for {count(days, 'day')}, {verb} after {window} "
                       f"({what} {age})", days)
    return Verdict(KEEP, f"[{tier}] used within {count(window, 'day')} ({what} {age})", days)


__all__ = ["CLASSIC_WINDOWS", "CONFIG_KEYS", "DECAY_KEYS", "DEFAULT", "DEFAULT_RATES",
           "DEFAULT_THRESHOLDS", "DEFAULT_USED_RATE", "DEFAULT_UNUSED_RATE", "DEFAULT_WINDOWS",
           "KEEP", "NEVER", "PRUNE", "REVIEW", "TIER_ACTIONS", "TierWindows", "Verdict", "judge",
           "survival"]
