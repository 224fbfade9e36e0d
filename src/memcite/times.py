"""Times as memcite prints them: Unix seconds as ISO 8601 UTC (``2026-03-01T12:00:00Z``) and
as a UTC day (``2026-03-01``). One definition for every wing; light (``time`` only), since
the per-reply commands and the fast path print times too. Nothing here reads the clock: the
time is passed in.
"""

from __future__ import annotations

import time

# The times memcite takes from an option or a file: what ISO 8601 can write (years 1-9999).
EARLIEST = -62135596800  # 0001-01-01T00:00:00Z
LATEST = 253402300799  # 9999-12-31T23:59:59Z


def in_range(seconds: float) -> bool:
    """Whether ``seconds`` is a finite time from ``EARLIEST`` to ``LATEST``."""
    return EARLIEST <= seconds <= LATEST


def _utc(seconds: float | None):
    if seconds is None:
        return None
    try:
        moment = time.gmtime(int(seconds))
    except (OverflowError, OSError, ValueError, TypeError):
        return None
    return moment if 1 <= moment.tm_year <= 9999 else None


def iso_utc(seconds: float | None) -> str | None:
    """``seconds`` as ``YYYY-MM-DDTHH:MM:SSZ``; None when it is None or beyond years 1-9999."""
    t = _utc(seconds)
    if t is None:
        return None
    return (f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}"
            f"T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}Z")


def utc_day(seconds: float | None) -> str | None:
    """``seconds`` as its UTC day, ``YYYY-MM-DD``; None when it is None or beyond years 1-9999."""
    t = _utc(seconds)
    return None if t is None else f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}"


# The keys that hold a time in Unix seconds, in any --json output or MCP tool result. Each gets
# a sibling ``<key>_iso`` with the same instant as ISO 8601 UTC (see memcite.contracts.outputs).
TIME_KEYS = frozenset({"as_of", "since", "last_used", "last_usage", "codex_last_usage",
                       "logged_last_usage", "source_updated_at", "replied_at", "checked_at",
                       "requested_at", "completed_at", "seen_gone_at", "undone_at",
                       "first_synced_at", "archived_at", "missing_since", "generated_at",
                       "at", "recorded_at", "last_cited", "created_at", "asked_at",
                       "before_taken_at", "after_taken_at", "baseline_at", "judged_at",
                       "last_snapshot_at"})


def with_iso_times(obj, untimed: frozenset | tuple = ()):
    """``obj`` with ``<key>_iso`` after every time key (``TIME_KEYS``) of every object in it;
    ``untimed``: keys whose values hold no time key at any depth (as their maker knows), left
    as they are rather than walked (an audit's thousands of findings)."""
    if isinstance(obj, list):
        return [with_iso_times(item, untimed) for item in obj]
    if not isinstance(obj, dict):
        return obj
    result = {}
    for key, value in obj.items():
        result[key] = value if key in untimed else with_iso_times(value, untimed)
        if key in TIME_KEYS and (value is None or type(value) is int):
            result[f"{key}_iso"] = iso_utc(value)
    return result
