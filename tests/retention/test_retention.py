"""Retention rules (memcite.retention.rules): tables of exact cases and hypothesis properties,
plus the SQL versions (stats, archive) agreeing with the pure rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcite.ledger.store import open_store, transaction
from memcite.retention import rules as retention
from memcite.retention.archive import prune_candidates
from memcite.retention.rules import (
    DAY,
    ConfigError,
    MemoryUsage,
    codex_prune_selection,
    consolidation_selection,
    dead_memories,
    in_scope,
    last_used,
    resolve_settings,
)
from memcite.retention.stats import dead_from_store

NOW = 1_800_000_000


def m(tid: str, **kw) -> MemoryUsage:
    return MemoryUsage(thread_id=tid, **kw)


# --------------------------------------------------------------------------- tables


@pytest.mark.parametrize(("memory", "rule", "expected"), [
    (m("a", source_updated_at=10), "memcite", 10),
    (m("a", source_updated_at=10, last_usage=30, codex_last_usage=20), "memcite", 30),
    (m("a", source_updated_at=50, last_usage=30, codex_last_usage=20), "memcite", 50),
    (m("a", source_updated_at=10, codex_last_usage=20), "memcite", 20),
    (m("a"), "memcite", 0),
    # Codex: COALESCE(last_usage, source_updated_at) on its own counters; memcite's ignored.
    (m("a", source_updated_at=50, codex_last_usage=20), "codex", 20),
    (m("a", source_updated_at=50, last_usage=90), "codex", 50),
    (m("a"), "codex", None),  # NULL in Codex's SQL: neither dead nor eligible
])
def test_last_used_by_rule(memory, rule, expected):
    assert last_used(memory, rule) == expected


@pytest.mark.parametrize(("memory", "memcite", "codex"), [
    (m("a"), True, True),
    (m("a", in_codex_table=False), True, False),  # only in the memory folder
    (m("a", gone_from_codex=True), False, False),  # Codex no longer has it
    (m("a", in_codex_table=False, gone_from_codex=True), False, False),
])
def test_which_memories_each_rule_judges(memory, memcite, codex):
    assert (in_scope(memory, "memcite"), in_scope(memory, "codex")) == (memcite, codex)


def test_rules_leave_out_folder_only_and_gone_memories():
    old = {"source_updated_at": NOW - 90 * DAY}
    memories = [m("table", **old), m("folder", in_codex_table=False, **old),
                m("gone", gone_from_codex=True, **old)]
    assert [d.thread_id for d in dead_memories(memories, as_of=NOW, max_unused_days=30)] == \
        ["folder", "table"]
    assert [d.thread_id for d in dead_memories(memories, as_of=NOW, max_unused_days=30,
                                               rule="codex")] == ["table"]
    assert [x.thread_id for x in codex_prune_selection(memories, now=NOW,
                                                       max_unused_days=30)] == ["table"]
    fresh = [m(x.thread_id, source_updated_at=NOW - DAY, in_codex_table=x.in_codex_table,
               gone_from_codex=x.gone_from_codex) for x in memories]
    assert [x.thread_id for x in consolidation_selection(fresh, now=NOW, max_unused_days=30,
                                                         n=10)] == ["table"]


def test_a_last_use_at_time_zero_is_a_time_not_a_null():
    # Codex's SQL: COALESCE(last_usage, source_updated_at) >= cutoff; 0 is a value.
    early = 10 * DAY  # the cutoff, 30 days before, is negative
    at_zero = m("a", source_updated_at=0, codex_last_usage=0, codex_usage_count=1)
    null = m("b")
    assert consolidation_selection([at_zero, null], now=early, max_unused_days=30,
                                   n=5) == [at_zero]


def test_unknown_rule_is_an_input_error():
    with pytest.raises(retention.InputError, match="--rule"):
        dead_memories([], as_of=NOW, max_unused_days=30, rule="llm")


def test_spec_example_reextraction_refreshes_only_under_memcite_rule():
    # Cited once 40 days ago and re-extracted yesterday; a never-cited thread from yesterday.
    cited_long_ago = m("a", source_updated_at=NOW - DAY, codex_last_usage=NOW - 40 * DAY,
                       codex_usage_count=1)
    fresh = m("b", source_updated_at=NOW - DAY)
    codex = codex_prune_selection([cited_long_ago, fresh], now=NOW, max_unused_days=30)
    assert [x.thread_id for x in codex] == ["a"]
    assert dead_memories([cited_long_ago, fresh], as_of=NOW, max_unused_days=30) == []


def test_dead_memories_stalest_first_with_days_and_reason():
    memories = [
        m("c", source_updated_at=NOW - 40 * DAY),
        m("b", source_updated_at=NOW - 90 * DAY, last_usage=NOW - 35 * DAY, usage_count=2),
        m("a", source_updated_at=NOW - 40 * DAY),
        m("d", source_updated_at=NOW - 10 * DAY),
        m("e", source_updated_at=NOW - 30 * DAY),  # exactly at the cutoff: not dead
    ]
    dead = dead_memories(memories, as_of=NOW, max_unused_days=30)
    assert [(d.thread_id, d.days_unused) for d in dead] == [("a", 40), ("c", 40), ("b", 35)]
    assert dead[0].reason == "never cited"
    assert dead[2].reason == f"not cited since {retention.format_day(NOW - 35 * DAY)}"


def test_codex_prune_skips_selected_orders_oldest_first_and_limits():
    memories = [
        m("x", source_updated_at=NOW - 100 * DAY, selected_for_phase2=True),
        m("b", source_updated_at=NOW - 50 * DAY),
        m("a", source_updated_at=NOW - 50 * DAY),
        m("c", source_updated_at=NOW - 60 * DAY, codex_last_usage=NOW - 45 * DAY),
        m("d", source_updated_at=NOW - 70 * DAY),
    ]
    chosen = codex_prune_selection(memories, now=NOW, max_unused_days=30, limit=3)
    assert [x.thread_id for x in chosen] == ["d", "a", "b"]


def test_consolidation_ranks_by_use_then_recency_and_returns_sorted_by_id():
    memories = [
        m("a", source_updated_at=NOW - DAY, codex_usage_count=1),
        m("b", source_updated_at=NOW - DAY, codex_usage_count=5),
        m("c", source_updated_at=NOW - 2 * DAY, codex_usage_count=5,
          codex_last_usage=NOW - 3600),
        m("d", source_updated_at=NOW - DAY, codex_usage_count=9, has_text=False),  # blank
        m("e", source_updated_at=NOW - 40 * DAY, codex_usage_count=9),  # too old
        m("f", source_updated_at=NOW - 5 * DAY),
    ]
    chosen = consolidation_selection(memories, now=NOW, max_unused_days=30, n=2)
    assert [x.thread_id for x in chosen] == ["b", "c"]
    chosen = consolidation_selection(memories, now=NOW, max_unused_days=30, n=3)
    assert [x.thread_id for x in chosen] == ["a", "b", "c"]


@pytest.mark.parametrize(("cli", "mine", "codex", "expected", "sources"), [
    ({}, {}, {}, (30, 256), ("default", "default")),
    ({}, {}, {"max_unused_days": 7, "max_raw_memories_for_consolidation": 10},
     (7, 10), ("codex", "codex")),
    ({}, {}, {"max_unused_days": 1000, "max_raw_memories_for_consolidation": 0},
     (365, 1), ("codex", "codex")),  # Codex's clamps
    ({}, {}, {"max_unused_days": -5, "max_raw_memories_for_consolidation": 99999},
     (0, 4096), ("codex", "codex")),
    ({}, {"max_unused_days": 60}, {"max_unused_days": 7}, (60, 256), ("memcite", "default")),
    ({"max_unused_days": 3}, {"max_unused_days": 60}, {"max_unused_days": 7}, (3, 256),
     ("cli", "default")),
    ({"max_unused_days": None, "max_raw_memories_for_consolidation": 12}, {}, {}, (30, 12),
     ("default", "cli")),
])
def test_settings_precedence_and_clamps(cli, mine, codex, expected, sources):
    settings = resolve_settings(cli, mine, codex)
    assert (settings.max_unused_days, settings.max_raw_memories_for_consolidation) == expected
    assert (settings.sources["max_unused_days"],
            settings.sources["max_raw_memories_for_consolidation"]) == sources


@pytest.mark.parametrize(("cli", "mine", "codex", "message"), [
    ({"max_unused_days": -1}, {}, {}, "at least 0"),
    ({}, {"max_raw_memories_for_consolidation": 0}, {}, "at least 1"),
    ({}, {"max_unused_days": "30"}, {}, "whole number"),
    ({}, {}, {"max_unused_days": 3.5}, "whole number"),
    ({}, {}, {"max_unused_days": True}, "whole number"),
])
def test_bad_settings_are_config_errors(cli, mine, codex, message):
    with pytest.raises(ConfigError, match=message) as info:
        resolve_settings(cli, mine, codex)
    assert info.value.exit_code == 2


def test_codex_rule_settings_skip_memcite_config():
    mine = {"max_unused_days": 60, "max_raw_memories_for_consolidation": 9}
    settings = resolve_settings({}, mine, {"max_unused_days": 7}, rule="codex")
    assert (settings.max_unused_days, settings.max_raw_memories_for_consolidation) == (7, 256)
    assert settings.sources == {"max_unused_days": "codex",
                                "max_raw_memories_for_consolidation": "default"}
    assert resolve_settings({"max_unused_days": 3}, mine, {}, rule="codex").max_unused_days == 3
    assert resolve_settings({}, mine, {"max_unused_days": 7}).max_unused_days == 60


def test_config_files_are_read_from_their_tables(tmp_path):
    (tmp_path / "config.toml").write_text('model = "x"\n[memories]\nmax_unused_days = 12\n')
    assert retention.load_codex_memories_config(tmp_path) == {"max_unused_days": 12}
    assert retention.load_codex_memories_config(tmp_path / "none") == {}
    mine = tmp_path / "memcite.toml"
    mine.write_text("[retention]\nmax_raw_memories_for_consolidation = 8\n")
    assert retention.load_memcite_config(mine) == {"max_raw_memories_for_consolidation": 8}
    bad = tmp_path / "bad.toml"
    bad.write_text("[retention\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        retention.load_memcite_config(bad)
    bad.write_text("retention = 3\n")
    with pytest.raises(ConfigError, match=r"\[retention\] must be a table"):
        retention.load_memcite_config(bad)


def test_memcite_config_location_follows_environment(tmp_path):
    assert retention.default_memcite_config_path({"MEMCITE_CONFIG": "/x/c.toml"}) == "/x/c.toml"
    assert retention.default_memcite_config_path({"MEMCITE_HOME": "/h"}) == "/h/config.toml"
    assert retention.default_memcite_config_path({"XDG_CONFIG_HOME": "/cfg"}) == \
        "/cfg/memcite/config.toml"


# --------------------------------------------------------------------------- properties

_times = st.one_of(st.none(), st.integers(NOW - 400 * DAY, NOW + DAY))
_memories = st.lists(
    st.builds(
        MemoryUsage,
        thread_id=st.uuids().map(str),
        source_updated_at=_times,
        last_usage=_times,
        codex_last_usage=_times,
        usage_count=st.integers(0, 5),
        codex_usage_count=st.one_of(st.none(), st.integers(0, 5)),
        selected_for_phase2=st.booleans(),
        has_text=st.booleans(),
        in_codex_table=st.booleans(),
        gone_from_codex=st.booleans(),
    ),
    max_size=40,
    unique_by=lambda x: x.thread_id,
)


@given(_memories, st.integers(0, 365), st.integers(0, 50))
def test_codex_prune_is_the_oldest_unselected_dead_rows(memories, days, limit):
    chosen = codex_prune_selection(memories, now=NOW, max_unused_days=days, limit=limit)
    assert len(chosen) <= limit
    dead = {d.thread_id for d in dead_memories(memories, as_of=NOW, max_unused_days=days,
                                               rule="codex")}
    assert all(x.thread_id in dead and not x.selected_for_phase2 for x in chosen)
    keys = [(last_used(x, "codex"), x.source_updated_at or 0, x.thread_id) for x in chosen]
    assert keys == sorted(keys)
    unchosen = [x for x in memories if x.thread_id in dead and not x.selected_for_phase2
                and x not in chosen]
    if unchosen and chosen:
        assert max(keys) <= min((last_used(x, "codex"), x.source_updated_at or 0, x.thread_id)
                                for x in unchosen)


@given(_memories, st.integers(0, 365))
def test_dead_by_memcite_rule_is_a_subset_of_dead_by_codex_rule(memories, days):
    mine = {d.thread_id for d in dead_memories(memories, as_of=NOW, max_unused_days=days)}
    codex = {d.thread_id for d in dead_memories(memories, as_of=NOW, max_unused_days=days,
                                                rule="codex")}
    unknown = {x.thread_id for x in memories if last_used(x, "codex") is None}
    only_mine = {x.thread_id for x in memories if not in_scope(x, "codex")}  # folder-only rows
    assert mine - unknown - only_mine <= codex


@given(_memories, st.integers(0, 365), st.integers(1, 50))
def test_consolidation_takes_the_best_ranked_eligible_sorted_by_id(memories, days, n):
    chosen = consolidation_selection(memories, now=NOW, max_unused_days=days, n=n)
    ids = [x.thread_id for x in chosen]
    assert ids == sorted(ids) and len(ids) <= n
    limit = NOW - days * DAY
    eligible = [x for x in memories if in_scope(x, "codex") and x.has_text
                and last_used(x, "codex") is not None and last_used(x, "codex") >= limit]
    assert len(chosen) == min(n, len(eligible))

    def rank(x):
        return (x.codex_usage_count or 0, last_used(x, "codex"), x.source_updated_at or 0,
                x.thread_id)

    left = [x for x in eligible if x not in chosen]
    if left and chosen:
        assert min(rank(x) for x in chosen) > max(rank(x) for x in left)


# --------------------------------------------------------------------------- SQL agrees


def _fill(conn, memories, folder_sources):
    """Rows as sync leaves them: ``source`` 'stage1_outputs' for a row of Codex's table, else
    the folder source it was found in; ``missing_since`` set for a row gone from Codex."""
    with transaction(conn):
        conn.executemany(
            "INSERT INTO memories (thread_id, source_updated_at, last_usage, codex_last_usage,"
            " usage_count, codex_usage_count, selected_for_phase2, source, missing_since,"
            " first_synced_at, synced_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0)",
            [(x.thread_id, x.source_updated_at, x.last_usage, x.codex_last_usage, x.usage_count,
              x.codex_usage_count, int(x.selected_for_phase2),
              "stage1_outputs" if x.in_codex_table else folder,
              NOW - DAY if x.gone_from_codex else None)
             for x, folder in zip(memories, folder_sources, strict=False)])


@given(_memories, st.integers(0, 365), st.sampled_from(["memcite", "codex"]),
       st.integers(0, 30), st.lists(st.sampled_from(["raw_memories", "rollout_summary"]),
                                    min_size=40, max_size=40))
def test_sql_dead_and_prune_agree_with_the_pure_rules(tmp_path_factory, empty_ledger_copy, memories,
                                                      days, rule, limit, folder_sources):
    """Folder-only and gone rows included: the SQL judges exactly the rows the pure rule does."""
    conn = open_store(empty_ledger_copy(tmp_path_factory.mktemp("db") / "m.sqlite"))
    try:
        _fill(conn, memories, folder_sources)
        count, rows = dead_from_store(conn, as_of=NOW, max_unused_days=days, rule=rule, limit=0)
        dead = dead_memories(memories, as_of=NOW, max_unused_days=days, rule=rule)
        keys = ("thread_id", "last_used", "days_unused", "reason")
        assert [{k: row[k] for k in keys} for row in rows] == [d.to_dict() for d in dead]
        assert count == len(dead)
        by_id = {x.thread_id: x for x in memories}
        for row in rows:  # both counts side by side, and a label
            assert row["usage_count"] == by_id[row["thread_id"]].usage_count
            assert row["codex_usage_count"] == by_id[row["thread_id"]].codex_usage_count
            assert row["label"] == "-" and row["asked_to_forget"] is False
        # counting the recent side and subtracting from the active rows gives the same
        active = conn.execute("SELECT count(*) FROM memories WHERE archived_at IS NULL"
                              ).fetchone()[0]
        assert dead_from_store(conn, as_of=NOW, max_unused_days=days, rule=rule, limit=0,
                               active=active)[0] == len(dead)
        pruned = prune_candidates(conn, as_of=NOW, max_unused_days=days, rule=rule, limit=limit)
        if rule == "codex":
            expected = [x.thread_id for x in codex_prune_selection(
                memories, now=NOW, max_unused_days=days, limit=limit or len(memories))]
        else:  # memcite's rule spares the last consolidation's input too
            selected = {x.thread_id for x in memories if x.selected_for_phase2}
            expected = [d.thread_id for d in dead if d.thread_id not in selected]
            expected = expected[:limit] if limit else expected
        assert [c.thread_id for c in pruned] == expected
    finally:
        conn.close()
