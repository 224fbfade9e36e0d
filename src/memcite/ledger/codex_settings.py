"""Codex's ``[memories]`` settings in ``config.toml``: each one's default and the range Codex
clamps it to (docs/usage-and-retention.md). Declared once, below the retention rules that use
them and beside what reads a Codex home (``memcite.ledger.home_state``); imports nothing."""

CODEX_DEFAULTS: dict[str, object] = {
    "max_unused_days": 30,
    "max_raw_memories_for_consolidation": 256,
    "max_rollout_age_days": 10,
    "max_rollouts_per_startup": 2,
    "min_rollout_idle_hours": 6,
    "generate_memories": True,
    "use_memories": True,
    "disable_on_external_context": False,
}
CODEX_CLAMPS: dict[str, tuple[int, int]] = {
    "max_unused_days": (0, 365),
    "max_raw_memories_for_consolidation": (1, 4096),
    "max_rollout_age_days": (0, 90),
    "max_rollouts_per_startup": (1, 128),
    "min_rollout_idle_hours": (1, 48),
}


def clamped(name: str, value: object) -> int:
    """``value`` as Codex uses it when it is an integer (clamped to its range), else the default."""
    if not isinstance(value, int) or isinstance(value, bool):
        return CODEX_DEFAULTS[name]  # type: ignore[return-value]
    low, high = CODEX_CLAMPS[name]
    return min(high, max(low, value))
