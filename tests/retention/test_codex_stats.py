"""``stats`` straight from Codex's database counts and ranks in SQL: the same report as the
retention rules give row by row in Python (``memcite.retention.rules``), for any table."""

from __future__ import annotations

import sqlite3
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcite.ledger.codex_home import CodexHomeError
from memcite.retention.labels import memory_label
from memcite.retention.rules import MemoryUsage, dead_memories, last_used
from memcite.retention.stats import collect_codex_stats

NOW = 1_800_000_000
DAY = 86_400
FULL = ("CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY, source_updated_at INTEGER,"
        " raw_memory TEXT, rollout_summary TEXT, rollout_slug TEXT, generated_at INTEGER,"
        " usage_count INTEGER, last_usage INTEGER, selected_for_phase2 INTEGER DEFAULT 0,"
        " selected_for_phase2_source_updated_at INTEGER)")

times = st.one_of(st.none(), st.integers(NOW - 90 * DAY, NOW).map(lambda t: t - t % DAY))
rows = st.lists(st.tuples(st.sampled_from([None, "  ", "slug-a", "slug-b"]),
                          st.integers(NOW - 90 * DAY, NOW).map(lambda t: t - t % (10 * DAY)),
                          st.sampled_from([None, 0, 1, 2, 5]), times),
                max_size=25)


def _write(path, table_rows) -> None:
    conn = sqlite3.connect(path)
    conn.execute(FULL)
    conn.executemany(
        "INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory, rollout_summary,"
        " rollout_slug, generated_at, usage_count, last_usage) VALUES (?, ?, 'x', 'y', ?, ?, ?, ?)",
        [(str(uuid.UUID(int=n + 1, version=4)), updated, slug, updated, uses, last)
         for n, (slug, updated, uses, last) in enumerate(table_rows)])
    conn.commit()
    conn.close()


def _expected(table_rows, rule: str, limit: int) -> dict:
    """What the report held when every row was judged in Python (the rules themselves)."""
    memories, labels = [], {}
    for n, (slug, updated, uses, last) in enumerate(table_rows):
        thread_id = str(uuid.UUID(int=n + 1, version=4))
        labels[thread_id] = memory_label(slug, None, None)
        memories.append(MemoryUsage(thread_id=thread_id, source_updated_at=updated,
                                    codex_last_usage=last, codex_usage_count=uses))
    dead = dead_memories(memories, as_of=NOW, max_unused_days=30, rule=rule)
    by_id = {m.thread_id: m for m in memories}
    cited = sorted((m for m in memories if m.codex_usage_count),
                   key=lambda m: (-m.codex_usage_count, -(m.codex_last_usage or 0), m.thread_id))
    return {
        "dead": [{**d.to_dict(), "label": labels[d.thread_id], "usage_count": 0,
                  "codex_usage_count": by_id[d.thread_id].codex_usage_count,
                  "asked_to_forget": False} for d in (dead[:limit] if limit else dead)],
        "top": [{"thread_id": m.thread_id, "label": labels[m.thread_id], "usage_count": 0,
                 "codex_usage_count": m.codex_usage_count, "last_usage": None,
                 "codex_last_usage": m.codex_last_usage, "last_used": last_used(m, rule)}
                for m in (cited[:limit] if limit else cited)],
        "dead_count": len(dead), "memories": len(memories), "cited": len(cited),
        "citations": sum(m.codex_usage_count or 0 for m in memories),
    }


@settings(max_examples=60, deadline=None)
@given(table_rows=rows, rule=st.sampled_from(["memcite", "codex"]),
       limit=st.sampled_from([0, 1, 3]))
def test_sql_report_matches_the_rules_row_by_row(tmp_path_factory, table_rows, rule, limit):
    db = tmp_path_factory.mktemp("codex") / "memories_1.sqlite"
    _write(db, table_rows)
    report = collect_codex_stats(db, memory_root=None, as_of=NOW, max_unused_days=30,
                                 rule=rule, limit=limit).to_dict()
    expected = _expected(table_rows, rule, limit)
    assert report["dead"] == expected["dead"]
    assert [list(d) for d in report["dead"]] == [list(d) for d in expected["dead"]]  # key order
    assert report["top"] == expected["top"]
    assert report["dead_count"] == report["totals"]["dead"] == expected["dead_count"]
    totals = report["totals"]
    assert (totals["memories"], totals["cited"], totals["citations"],
            totals["codex_citations"]) == (expected["memories"], expected["cited"],
                                           expected["citations"], expected["citations"])
    assert totals["never_cited"] == expected["memories"] - expected["cited"]


def test_columns_codex_lacks_read_as_null(tmp_path):
    db = tmp_path / "memories_1.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY, source_updated_at"
                 " INTEGER)")
    conn.executemany("INSERT INTO stage1_outputs VALUES (?, ?)",
                     [("b", NOW - 40 * DAY), ("a", NOW - 40 * DAY), ("c", NOW)])
    conn.commit()
    conn.close()
    report = collect_codex_stats(db, memory_root=None, as_of=NOW, max_unused_days=30, limit=0)
    assert [(d["thread_id"], d["reason"], d["label"]) for d in report.dead] == [
        ("a", "never cited", "-"), ("b", "never cited", "-")]
    assert report.totals["memories"] == 3 and report.totals["cited"] == 0 and report.top == []


def test_not_a_codex_table_is_a_clear_error(tmp_path):
    db = tmp_path / "memories_1.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE other (x)")
    conn.commit()
    conn.close()
    with pytest.raises(CodexHomeError, match="no stage1_outputs table"):
        collect_codex_stats(db, memory_root=None, as_of=NOW, max_unused_days=30)
