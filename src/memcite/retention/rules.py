"""Retention rules as pure functions of their inputs (time passed in, never read inside).

- ``last_used`` / ``dead_memories``: memcite's rule (a memory's last use is
  ``max(last_usage, codex_last_usage, source_updated_at)``, so re-extraction
  refreshes it) and Codex's rule (``COALESCE(last_usage, source_updated_at)`` on
  Codex's own counters).
- ``codex_prune_selection``: exactly the rows Codex's start-up pruning deletes.
- ``consolidation_selection``: the rows Codex's next consolidation takes, in its order.
- ``in_scope``: which memories a rule looks at. Codex's rules (``codex`` and the
  selections) only at rows of Codex's table as of the last sync; memcite's at
  every memory Codex still has. A memory Codex no longer has at all (sync marked
  it missing) is counted apart by the callers, never judged by a rule.
- ``resolve_settings``: command line, then memcite's config (skipped for Codex's
  rules, which run on Codex's settings), then ``[memories]`` in Codex's
  ``config.toml`` (clamped as Codex clamps), then Codex's defaults.

See docs/usage-and-retention.md. Reading the config files is the only
I/O here (``load_codex_memories_config``, ``load_memcite_config``); memcite's own file
is checked against its model in ``memcite.contracts.config``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from memcite.errors import InputError
from memcite.ledger.codex_settings import CODEX_CLAMPS, CODEX_DEFAULTS  # noqa: F401 - here too
from memcite.value_classes import FrozenSlots

DAY = 86_400
RULES = ("memcite", "codex")
CODEX_PRUNE_LIMIT = 200

# The settings memcite's retention commands use, and the smallest value each accepts.
RETENTION_SETTINGS: dict[str, int] = {
    "max_unused_days": 0,
    "max_raw_memories_for_consolidation": 1,
}


class ConfigError(InputError):
    """A config file or setting memcite cannot use (exit 2)."""


# --------------------------------------------------------------------------- memories


_set = object.__setattr__  # how the frozen values below set their fields in __init__


class MemoryUsage(FrozenSlots):
    """What the retention rules need to know about one memory (times in Unix seconds)."""

    __slots__ = ("thread_id", "source_updated_at", "last_usage", "codex_last_usage",
                 "usage_count", "codex_usage_count", "selected_for_phase2", "has_text",
                 "in_codex_table", "gone_from_codex")
    _fields = _compared = __slots__

    def __init__(self, thread_id: str, source_updated_at: int | None = None,
                 last_usage: int | None = None, codex_last_usage: int | None = None,
                 usage_count: int = 0, codex_usage_count: int | None = None,
                 selected_for_phase2: bool = False, has_text: bool = True,
                 in_codex_table: bool = True, gone_from_codex: bool = False) -> None:
        _set(self, "thread_id", thread_id)
        _set(self, "source_updated_at", source_updated_at)
        _set(self, "last_usage", last_usage)  # memcite's own, from its citation log
        _set(self, "codex_last_usage", codex_last_usage)  # Codex's, as stage1_outputs holds it
        _set(self, "usage_count", usage_count)
        _set(self, "codex_usage_count", codex_usage_count)
        _set(self, "selected_for_phase2", selected_for_phase2)
        _set(self, "has_text", has_text)  # raw_memory or rollout_summary is non-blank
        # a stage1_outputs row at the last sync, not only in the folder
        _set(self, "in_codex_table", in_codex_table)
        # in neither at the last sync (marked missing, kept)
        _set(self, "gone_from_codex", gone_from_codex)


class DeadMemory(FrozenSlots):
    """A memory unused for longer than the limit, and why."""

    __slots__ = ("thread_id", "last_used", "days_unused", "reason")
    _fields = _compared = __slots__

    def __init__(self, thread_id: str, last_used: int, days_unused: int, reason: str) -> None:
        _set(self, "thread_id", thread_id)
        _set(self, "last_used", last_used)
        _set(self, "days_unused", days_unused)
        _set(self, "reason", reason)

    def to_dict(self) -> dict:
        return {
            "thread_id": self.thread_id,
            "last_used": self.last_used,
            "days_unused": self.days_unused,
            "reason": self.reason,
        }


def check_rule(rule: str) -> str:
    """``rule`` if it is one memcite knows, else an ``InputError`` saying which ones are."""
    if rule not in RULES:
        import difflib

        near = difflib.get_close_matches(rule, (*RULES, "tiered"), n=1, cutoff=0.6)
        raise InputError(f"--rule: {rule!r} is not one of {', '.join(RULES)}, or tiered for prune",
                         hint=f"did you mean {near[0]}?" if near else None)
    return rule


def in_scope(memory: MemoryUsage, rule: str = "memcite") -> bool:
    """Whether ``rule`` judges ``memory``: Codex's rule only the rows of Codex's table (what
    its retention can delete), memcite's every memory Codex still has in some form."""
    if memory.gone_from_codex:
        return False
    return memory.in_codex_table or check_rule(rule) != "codex"


def last_used(memory: MemoryUsage, rule: str = "memcite") -> int | None:
    """When a memory was last used under ``rule``.

    memcite's rule gives 0 when nothing is known (so such a memory is dead); Codex's
    gives None, as its SQL does, and a NULL is neither dead nor eligible.
    """
    if rule == "codex":
        value = memory.codex_last_usage
        return value if value is not None else memory.source_updated_at
    check_rule(rule)
    return max(memory.last_usage or 0, memory.codex_last_usage or 0,
               memory.source_updated_at or 0)


def cutoff(as_of: int, max_unused_days: int) -> int:
    """The time before which a memory counts as unused."""
    return as_of - max_unused_days * DAY


def days_unused(last: int, as_of: int) -> int:
    """Whole days between ``last`` and ``as_of`` (never negative)."""
    return max(0, (as_of - last) // DAY)


def format_day(seconds: int) -> str:
    """A Unix time as its UTC date, ``YYYY-MM-DD``."""
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%d")


def dead_reason(memory: MemoryUsage, rule: str = "memcite") -> str:
    """Why a memory is unused: never cited, or the last time it was."""
    if rule == "codex":
        cited_at = memory.codex_last_usage if memory.codex_usage_count else None
    else:
        counts = (memory.usage_count or 0) + (memory.codex_usage_count or 0)
        times = [t for t in (memory.last_usage, memory.codex_last_usage) if t is not None]
        cited_at = max(times) if counts and times else None
    if cited_at is None:
        return "never cited"
    return f"not cited since {format_day(cited_at)}"


def is_dead(memory: MemoryUsage, *, as_of: int, max_unused_days: int,
            rule: str = "memcite") -> bool:
    """True when the memory's last use is older than ``max_unused_days`` before ``as_of``."""
    last = last_used(memory, rule)
    return last is not None and last < cutoff(as_of, max_unused_days)


def dead_memories(memories: Iterable[MemoryUsage], *, as_of: int, max_unused_days: int,
                  rule: str = "memcite") -> list[DeadMemory]:
    """The dead memories among those ``rule`` judges (``in_scope``), stalest first (ties by
    thread id)."""
    check_rule(rule)
    limit = cutoff(as_of, max_unused_days)
    found = []
    for memory in memories:
        if not in_scope(memory, rule):
            continue
        last = last_used(memory, rule)
        if last is not None and last < limit:
            found.append(DeadMemory(memory.thread_id, last, days_unused(last, as_of),
                                    dead_reason(memory, rule)))
    found.sort(key=lambda dead: (dead.last_used, dead.thread_id))
    return found


# --------------------------------------------------------------------------- Codex's selections


def codex_prune_selection(memories: Iterable[MemoryUsage], *, now: int, max_unused_days: int,
                          limit: int = CODEX_PRUNE_LIMIT) -> list[MemoryUsage]:
    """The rows Codex's start-up pruning deletes: rows of its table (``in_scope``) not selected
    for consolidation, unused (``COALESCE(last_usage, source_updated_at)`` on Codex's
    counters) since before the cutoff, oldest first, at most ``limit``."""
    def key(memory: MemoryUsage) -> tuple:
        return (last_used(memory, "codex"), memory.source_updated_at or 0, memory.thread_id)

    chosen = [m for m in memories if in_scope(m, "codex") and not m.selected_for_phase2
              and is_dead(m, as_of=now, max_unused_days=max_unused_days, rule="codex")]
    chosen.sort(key=key)
    return chosen[: max(0, limit)]


def consolidation_selection(memories: Iterable[MemoryUsage], *, now: int, max_unused_days: int,
                            n: int) -> list[MemoryUsage]:
    """The memories Codex's next consolidation takes: rows of its table (``in_scope``) that are
    eligible (a text SQLite's trim(), spaces only, leaves non-empty; used since the cutoff),
    ranked by use, recency and thread id, the
    first ``n`` sorted by thread id. A NULL last use (SQL) is never eligible; 0 is a time."""
    limit_time = cutoff(now, max_unused_days)
    eligible = []
    for m in memories:
        last = last_used(m, "codex")
        if in_scope(m, "codex") and m.has_text and last is not None and last >= limit_time:
            eligible.append(m)
    # ORDER BY usage DESC, last used DESC, source_updated_at DESC, thread_id DESC
    eligible.sort(key=lambda m: (m.codex_usage_count or 0, last_used(m, "codex"),
                                 m.source_updated_at or 0, m.thread_id), reverse=True)
    return sorted(eligible[: max(0, n)], key=lambda m: m.thread_id)


# --------------------------------------------------------------------------- settings


class Settings(FrozenSlots):
    """The retention settings in force, and where each one came from."""

    __slots__ = ("max_unused_days", "max_raw_memories_for_consolidation", "sources")
    _fields = _compared = __slots__

    def __init__(self, max_unused_days: int, max_raw_memories_for_consolidation: int,
                 sources: dict[str, str] | None = None) -> None:
        _set(self, "max_unused_days", max_unused_days)
        _set(self, "max_raw_memories_for_consolidation", max_raw_memories_for_consolidation)
        # name -> cli | memcite | codex | default
        _set(self, "sources", {} if sources is None else sources)

    def to_dict(self) -> dict:
        return {
            "max_unused_days": self.max_unused_days,
            "max_raw_memories_for_consolidation": self.max_raw_memories_for_consolidation,
            "sources": dict(self.sources),
        }


def _integer(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{where}: expected a whole number, got {value!r}",
                          hint="write it as a TOML integer, e.g. 30")
    return value


def clamp_codex(name: str, value: object, where: str = "[memories]") -> int:
    """A Codex ``[memories]`` value as Codex uses it: an integer clamped to its range."""
    low, high = CODEX_CLAMPS[name]
    return min(high, max(low, _integer(value, f"{where}.{name}")))


def resolve_settings(
    command_line: Mapping[str, int | None] | None = None,
    memcite_config: Mapping[str, object] | None = None,
    codex_config: Mapping[str, object] | None = None,
    *,
    rule: str = "memcite",
) -> Settings:
    """Each setting from the command line, else memcite's config, else Codex's ``[memories]``
    (clamped), else Codex's default. Command-line and memcite values are checked, not clamped.

    With ``rule`` ``codex`` (Codex's retention and selection) memcite's config is skipped:
    what Codex does depends on Codex's settings alone.
    """
    if check_rule(rule) == "codex":
        memcite_config = None
    values: dict[str, int] = {}
    sources: dict[str, str] = {}
    for name, minimum in RETENTION_SETTINGS.items():
        given = (command_line or {}).get(name)
        if given is not None:
            value, source = _integer(given, f"--{name.replace('_', '-')}"), "cli"
        elif (memcite_config or {}).get(name) is not None:
            value = _integer(memcite_config[name], f"memcite config: [retention].{name}")
            source = "memcite"
        elif (codex_config or {}).get(name) is not None:
            value, source = clamp_codex(name, codex_config[name]), "codex"
        else:
            value, source = int(CODEX_DEFAULTS[name]), "default"
        if value < minimum:
            label = f"--{name.replace('_', '-')}" if source == "cli" else name
            raise ConfigError(f"{label} is {value} ({_SOURCE_NAMES[source]}); "
                              f"it must be at least {minimum}")
        values[name] = value
        sources[name] = source
    return Settings(sources=sources, **values)


MAX_CONFIG_BYTES = 1024 * 1024  # a config file is a few lines; anything this large is not one
_SOURCE_NAMES = {"cli": "command line", "memcite": "memcite config",
                 "codex": "Codex config.toml", "default": "Codex default"}


def load_toml(path: str) -> dict | None:
    if not os.path.lexists(path):
        return None  # the common case, without importing tomllib
    from memcite.ledger.memory_files import open_regular, read_capped

    try:
        fd = open_regular(path)  # a FIFO or a device: refused, never a hang
        try:
            read = read_capped(fd, MAX_CONFIG_BYTES)
        finally:
            os.close(fd)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a TOML file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if read.too_large:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes; not read as a "
                          "config file", hint="fix the file, or move it aside")
    return _parse_toml(read.data, path)


def _table(data: dict | None, name: str, path: str) -> dict:
    if data is None:
        return {}
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [{name}] must be a table")
    return table


def load_codex_memories_config(codex_home: str | os.PathLike) -> dict:
    """The ``[memories]`` table of ``$CODEX_HOME/config.toml`` ({} when there is none)."""
    path = os.path.join(os.fspath(codex_home), "config.toml")
    return _table(load_toml(path), "memories", path)


def codex_memories_of(locations) -> dict:
    """The ``[memories]`` table of the located Codex home's config.toml, from the file as
    ``memcite.ledger.codex_home.locate`` read it (``locations.config``): not read again, and
    parsed only when that read did not parse it; same checks and errors as
    ``load_codex_memories_config``, which it falls back on for a home located otherwise."""
    config = getattr(locations, "config", None)
    if config is None or config.path is None:
        return load_codex_memories_config(locations.codex_home)
    if config.raw is None:
        return {}  # no config.toml
    data = config.data
    if data is None:
        data = _parse_toml(config.raw, config.path)
    return _table(data, "memories", config.path)


def _parse_toml(raw: bytes, path: str) -> dict:
    """A config file's bytes as read, parsed as ``load_toml`` parses them (its limits and errors)."""
    import tomllib

    from memcite.untrusted import loads_toml

    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes; not read as a "
                          "config file", hint="fix the file, or move it aside")
    try:
        return loads_toml(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML (invalid UTF-8 at byte offset {exc.start})",
                          hint="fix the file, or move it aside") from None
    except tomllib.TOMLDecodeError as exc:  # nested too deeply too (loads_toml)
        raise ConfigError(f"{path}: not valid TOML ({exc})",
                          hint="fix the file, or move it aside") from None


def load_memcite_config(path: str | os.PathLike | None) -> dict:
    """The ``[retention]`` table of memcite's config file ({} when there is none).

    The whole file is checked against ``memcite.contracts.config.MemciteConfig``: an unknown
    key or a bad value is a ``ConfigError`` naming the file, the key and the closest valid key.
    """
    return _memcite_config_table(path, "retention")


def load_fleet_config(path: str | os.PathLike | None) -> dict:
    """The ``[fleet]`` table of memcite's config file ({} when there is none), checked."""
    return _memcite_config_table(path, "fleet")


def load_gate_config(path: str | os.PathLike | None) -> dict:
    """The ``[gate]`` table of memcite's config file ({} when there is none), checked."""
    return _memcite_config_table(path, "gate")


def gate_setting(config_path: str | os.PathLike | None) -> bool:
    """``[gate] memory_writes`` of memcite's config (default true: the gate is on)."""
    return load_gate_config(config_path).get("memory_writes", True) is not False


def _memcite_config_table(path: str | os.PathLike | None, table: str) -> dict:
    """One table of memcite's config file, the whole file checked first."""
    if path is None:
        return {}
    path = os.fspath(path)
    data = load_toml(path)
    if data is None:
        return {}
    check_memcite_config(data, path)
    return dict(data.get(table, {}))


def _plainly_valid(data: dict) -> bool:
    """True for a file holding only known retention settings with usable values: what the
    model accepts too, decided without importing pydantic (the common case stays fast)."""
    if not set(data) <= {"retention", "gate"}:
        return False
    gate = data.get("gate", {})
    if not isinstance(gate, dict) or not all(
            name == "memory_writes" and type(value) is bool for name, value in gate.items()):
        return False
    table = data.get("retention", {})
    return isinstance(table, dict) and all(
        name in RETENTION_SETTINGS and type(value) is int and value >= RETENTION_SETTINGS[name]
        for name, value in table.items())


def check_memcite_config(data: dict, path: str) -> None:
    """Refuse a parsed config file the model does not accept, with every problem in one error."""
    if _plainly_valid(data):
        return
    from memcite.contracts.config import config_problems

    problems = config_problems(data)
    if problems:
        text = problems[0] if len(problems) == 1 else (
            f"{len(problems)} problems:" + "".join(f"\n  {problem}" for problem in problems))
        raise ConfigError(f"{path}: {text}",
                          hint="fix the file (`memcite schema config` shows every key), "
                               "or point MEMCITE_CONFIG elsewhere")


def default_memcite_config_path(environ: Mapping[str, str] = os.environ) -> str | None:
    """``$MEMCITE_CONFIG``, else ``config.toml`` in ``$MEMCITE_HOME``, else in the user
    config folder (``$XDG_CONFIG_HOME/memcite`` or ``~/.config/memcite``): see
    ``memcite.paths.memcite_config_path``, the one reader of those variables."""
    from memcite.paths import memcite_config_path

    return memcite_config_path(environ)
