"""What a Codex home holds before it has memories, and what happens next.

Two questions every command that reads a Codex home meets first:

- **Is it a Codex home at all?** A folder is one when it holds something only Codex writes:
  ``config.toml``, ``auth.json``, ``sessions/``, ``archived_sessions/``, a memory folder
  (``memories/``, ``memories_v2/``) or one of Codex's SQLite databases (``state_*.sqlite``,
  ``memories*.sqlite``, ``logs_*.sqlite``). memcite itself writes only its notes (``memory/``),
  ``hooks.json`` and backups there (``config.toml`` only in a home that is one), so a folder
  holding none of those marks was made by memcite (``memcite note save`` where Codex never
  ran) or by hand: Codex is not installed there, or has never run (``codex_marks``, ``is_codex_home``).
- **Does it hold memories yet?** Codex holds memories once its table (``stage1_outputs`` in
  ``memories_1.sqlite``) has a row, or its memory folder has ``raw_memories.md`` or a rollout
  summary. A home that has just turned memories on has at most ``MEMORY.md`` and
  ``memory_summary.md``: nothing to judge, and nothing wrong (``no_memories_yet`` says what the
  home holds and when Codex will extract its first memories, with the home's own settings).

Only reads; light at import (the fast path's ``stats`` runs it).
"""

from __future__ import annotations

import os

from memcite.display import count
from memcite.errors import MemciteError, NothingYet

INSTALL_CODEX = "npm install -g @openai/codex"
CODEX_FILES = ("config.toml", "auth.json")
CODEX_FOLDERS = ("sessions", "archived_sessions", "memories", "memories_v2")
_DB_PREFIXES = ("state_", "memories", "logs_")


def codex_marks(folder: str) -> list[str]:
    """The names in ``folder`` that only Codex writes (see the module's rule); [] for none."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = []
    for name in sorted(names):
        path = os.path.join(folder, name)
        if name in CODEX_FILES and os.path.isfile(path):
            found.append(name)
        elif name in CODEX_FOLDERS and os.path.isdir(path):
            found.append(name + "/")
        elif name.endswith(".sqlite") and name.startswith(_DB_PREFIXES) and os.path.isfile(path):
            found.append(name)
    return found


def is_codex_home(folder: str) -> bool:
    """Whether ``folder`` holds anything only Codex writes (the module's narrow rule)."""
    return bool(codex_marks(folder))


def not_a_codex_home(folder: str) -> str:
    """Why ``folder`` is no Codex home, in one sentence (for errors and doctor)."""
    try:
        held = sorted(os.listdir(folder))
    except OSError:
        held = []
    what = ("it is empty" if not held else
            "it holds only " + ", ".join(held[:4]) + (", ..." if len(held) > 4 else ""))
    return (f"{folder} is not a Codex home: {what}, none of what Codex writes (config.toml, "
            "auth.json, sessions/, memories/, its databases): Codex is not installed here or "
            "has never run")


def install_hint(option: str = "--codex-home") -> str:
    """How to get a Codex home: install Codex and run it once, or name the real one."""
    return (f"install Codex (`{INSTALL_CODEX}`) and run `codex` once, or pass the Codex home "
            f"with {option}")


def _stage1_rows(locations) -> int | None:
    """Rows in Codex's table (None: no database there)."""
    if not os.path.isfile(locations.state_db):
        return None
    from memcite.ledger.codex_home import CodexHomeError, count_stage1_outputs

    try:
        return count_stage1_outputs(locations.state_db)
    except CodexHomeError:
        return None  # unreadable: the commands' own reads say why


def _folder_memories(folder: str) -> bool:
    """Whether the memory folder holds ``raw_memories.md`` or a rollout summary."""
    from memcite.ledger.codex_home import RAW_MEMORIES, ROLLOUT_SUMMARIES

    if os.path.isfile(os.path.join(folder, RAW_MEMORIES)):
        return True
    try:
        return any(name.endswith(".md") for name in os.listdir(os.path.join(folder,
                                                                           ROLLOUT_SUMMARIES)))
    except OSError:
        return False


def holds_memories(locations) -> bool:
    """Whether Codex holds any memory in the home ``locations`` (a ``CodexLocations``)."""
    rows = _stage1_rows(locations)
    if rows is None and os.path.exists(locations.state_db):
        return True  # there but unreadable: let the command's own read report it
    return bool(rows) or _folder_memories(locations.memory_folder)


def _memories_on(config) -> bool | None:
    """``[features] memories`` of config.toml as written (None: not set, or not parsed)."""
    data = getattr(config, "data", None)
    raw = getattr(config, "raw", None)
    if data is None and raw:
        from memcite.untrusted import loads_toml

        try:
            data = loads_toml(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None
    features = (data or {}).get("features")
    value = features.get("memories") if isinstance(features, dict) else None
    return value if isinstance(value, bool) else None


def _held(locations, rows: int | None) -> str:
    """What the home holds of memory, in a few words."""
    folder = locations.memory_folder
    try:
        files = sorted(name for name in os.listdir(folder) if not name.startswith("."))
    except OSError:
        files = None
    base = os.path.basename(locations.state_db)
    db = f"no {base}" if rows is None else f"an empty {base}"
    name = os.path.basename(folder) + "/"
    if files is None:
        return f"{db}, no {name} yet"
    shown = ", ".join(files[:3]) + (", ..." if len(files) > 3 else "")
    return f"{db}; {name} holds " + (shown if files else "nothing") + \
        " (no rollout summary yet)"


def no_memories_yet(locations, *, then: str = "`memcite stats` reports on it",
                    nothing: str = "nothing read") -> MemciteError | None:
    """``NothingYet`` (exit 0) saying what the home holds and what happens next, when Codex
    holds no memory there; None when it holds some; an ``InputError`` (exit 2) when the folder
    is no Codex home at all (``is_codex_home``). ``then``: what the command does once a memory
    is there; ``nothing``: what the command did not do, for the error."""
    if holds_memories(locations):
        return None
    if not is_codex_home(locations.codex_home):
        from memcite.ledger.codex_home import CodexHomeError

        return CodexHomeError(f"{not_a_codex_home(locations.codex_home)}; {nothing}",
                              hint=install_hint())
    from memcite.ledger.codex_settings import clamped

    home = locations.codex_home
    config = getattr(locations, "config", None)
    if config is None:
        from memcite.ledger.codex_home import CodexHomeError, read_codex_config

        try:
            config = read_codex_config(home)
        except CodexHomeError:
            config = None
    memories = _memories_table(config)
    head = f"Codex holds no memory in {home} yet: nothing to judge, and nothing is wrong.\n" \
           f"  it holds: {_held(locations, _stage1_rows(locations))}\n"
    on = _memories_on(config)
    config_path = os.path.join(home, "config.toml")
    if on is not True:
        why = ("config.toml turns them off ([features] memories = false)" if on is False else
               "config.toml does not turn them on (Codex 0.171 keeps memories off by default)")
        return NothingYet(head + f"  Codex makes none: {why}",
                          hint=f"add `memories = true` under [features] in {config_path} "
                               "(`memcite doctor` checks it)")
    if memories.get("generate_memories") is False:
        return NothingYet(head + "  Codex makes none: [memories] generate_memories = false",
                          hint=f"remove `generate_memories = false` from {config_path}")
    idle = clamped("min_rollout_idle_hours", memories.get("min_rollout_idle_hours"))
    per_start = clamped("max_rollouts_per_startup", memories.get("max_rollouts_per_startup"))
    age = clamped("max_rollout_age_days", memories.get("max_rollout_age_days"))
    return NothingYet(
        head + f"  Codex extracts a memory from an interactive session (`codex`, not `codex "
        f"exec`) once it has been idle for {count(idle, 'hour')} and if it is at most "
        f"{count(age, 'day')} old, {count(per_start, 'session')} each time Codex starts, then "
        "consolidates them into MEMORY.md",
        hint=f"use Codex as usual; once a memory is there, `memcite sync` reads it and {then}")


def _memories_table(config) -> dict:
    """``[memories]`` of config.toml as read ({} when absent or unreadable)."""
    data = getattr(config, "data", None)
    raw = getattr(config, "raw", None)
    if data is None and raw and b"[memories" in raw:
        from memcite.untrusted import loads_toml

        try:
            data = loads_toml(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return {}
    table = (data or {}).get("memories")
    return table if isinstance(table, dict) else {}
