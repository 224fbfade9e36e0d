"""``memcite select`` as one library function: ``build`` lists the memories Codex's next
consolidation would take, in its order (``memcite.retention.rules.consolidation_selection``),
read from Codex's own table when it is there, else from memcite's inventory. Where things
are comes in as a ``memcite.paths.Locations``, the time as ``now``.
"""

from __future__ import annotations

import os

from memcite.display import count
from memcite.value_classes import Slots


class Selection(Slots):
    """The next consolidation's choice: ``chosen`` of ``memories``, each labelled."""

    __slots__ = ("locations", "source", "as_of", "settings", "memories", "chosen", "labels")
    _fields = __slots__

    def __init__(self, locations, source: str, as_of: int, settings, memories: list,
                 chosen: list, labels: dict[str, str]) -> None:
        self.locations = locations  # memcite.ledger.codex_home.CodexLocations
        self.source = source  # the database read: Codex's table or memcite's ledger
        self.as_of = as_of
        self.settings = settings
        self.memories = memories
        self.chosen = chosen
        self.labels = labels

    def to_dict(self) -> dict:
        """``memcite select --json`` (times in seconds; the printer adds their ISO forms)."""
        return {"codex_home": self.locations.codex_home, "source": self.source,
                "as_of": self.as_of, "settings": self.settings.to_dict(),
                "selected": [{"thread_id": m.thread_id, "label": self.labels.get(m.thread_id, "-"),
                              "usage_count": m.codex_usage_count,
                              "last_usage": m.codex_last_usage,
                              "source_updated_at": m.source_updated_at} for m in self.chosen]}


def build(where, *, now: int, n: int | None = None, max_unused_days: int | None = None,
          judge_without_usage: bool = False, enabled_threads=None) -> Selection:
    """What Codex's next consolidation in the home ``where`` names would take, at ``now``;
    ``NothingYet`` (exit 0) when Codex holds no memory in the home yet; ``UsageUnknown``
    (exit 3) when no usage is known, unless ``judge_without_usage``.
    ``enabled_threads(sqlite_home)`` is the set of threads Codex's state database lets
    memories be made from (None: every one), as Codex selects
    (``memcite.codex.consolidation.enabled_threads``)."""
    from memcite.ledger.codex_home import iter_stage1_outputs, locate
    from memcite.retention.labels import memory_label
    from memcite.retention.rules import MemoryUsage, codex_memories_of, consolidation_selection
    from memcite.retention.stats_report import (
        nothing_to_report,
        require_memories,
        require_usage,
        resolve_settings_for,
    )

    locations = locate(where)
    require_memories(locations, "`memcite select` shows what the next consolidation would take")
    settings = resolve_settings_for(locations.codex_home, rule="codex",
                                    max_unused_days=max_unused_days, n=n,
                                    codex_memories=codex_memories_of(locations))
    require_usage(locations, judge_without_usage)
    codex_db = locations.state_db
    memories: list[MemoryUsage] = []
    labels: dict[str, str] = {}
    if os.path.isfile(codex_db):
        source = codex_db
        for row in iter_stage1_outputs(codex_db):
            thread, updated, _gen, slug, uses, last, selected, _at, raw, summary = row
            labels[thread] = memory_label(slug, None, None)
            memories.append(MemoryUsage(thread, updated, None, last, 0, uses,
                                        bool(selected), bool(raw or summary)))
    else:
        from memcite.ledger.store import open_store
        from memcite.retention.labels import LABEL_COLUMNS
        from memcite.retention.stats import RULE_SCOPE, memories_of

        source = where.db_path
        if not where.db.given and not os.path.exists(source):
            raise nothing_to_report(where, locations.codex_home)
        conn = open_store(source, readonly=True)
        try:
            table = memories_of(conn, locations.codex_home)
            for row in conn.execute(
                    "SELECT thread_id, source_updated_at, codex_last_usage, codex_usage_count,"
                    f" selected_for_phase2, has_raw_memory OR has_rollout_summary,"
                    f" {LABEL_COLUMNS} FROM {table} WHERE archived_at IS NULL"
                    f" AND {RULE_SCOPE['codex']}"):
                labels[row[0]] = memory_label(*row[6:9])
                memories.append(MemoryUsage(row[0], row[1], None, row[2], 0, row[3],
                                            bool(row[4]), bool(row[5])))
        finally:
            conn.close()
    # As Codex: only the threads its state database lets memories be made from.
    enabled = None if enabled_threads is None else enabled_threads(locations.sqlite_home)
    chosen = consolidation_selection(
        [m for m in memories if enabled is None or m.thread_id in enabled], now=now,
        max_unused_days=settings.max_unused_days, n=settings.max_raw_memories_for_consolidation)
    return Selection(locations, source, now, settings, memories, chosen, labels)


def render_text(selection: Selection) -> str:
    """The lines ``memcite select`` prints for ``selection``."""
    from memcite.retention.stats_text import day

    settings, chosen, labels = selection.settings, selection.chosen, selection.labels
    lines = [
        f"Codex's next consolidation for the Codex home {selection.locations.codex_home} would "
        f"take {len(chosen)} of {len(selection.memories)} memories "
        f"(n = {settings.max_raw_memories_for_consolidation}, used within "
        f"{count(settings.max_unused_days, 'day')} of {day(selection.as_of)}; "
        f"from {selection.source}):\n"]
    for m in chosen:
        lines.append(f"  {m.thread_id}  Codex uses {m.codex_usage_count or 0:>4}  "
                     f"updated {day(m.source_updated_at)}  {labels.get(m.thread_id, '-')}\n")
    return "".join(lines)
