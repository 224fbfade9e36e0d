"""Codex's memory store v2 (``[memories] version = "v2"``): memcite reads the store Codex reads.

Seen with the real binary: under v2 Codex injects its v2 read path from
``memories_v2/memory_summary.md`` (base path ``$CODEX_HOME/memories_v2``) and counts
citations in ``memories_v2_1.sqlite``; without ``version`` (or with ``"v1"``) it reads
``memories/`` and counts in ``memories_1.sqlite``, whatever ``dual_write`` says.
"""

from __future__ import annotations

import sqlite3
import time

import pytest
from test_e2e_read_path import LONG, codex_memory_message

from conftest import assert_ran, new_thread_id

V2_SUMMARIES = {
    "plain": b"v1\n# Summary\n\n- tests run with pytest -q\n",
    "placeholder_inside": b"v1\n# {{ base_path }} and {{ memory_summary }} stay as written\n",
    "over_the_limit": b"v1\n" + LONG.encode(),
    "bom": "\ufeffv1\n# Summary with a BOM\n".encode(),
    "blank": b" \n\t\n",
}

STORES = {  # config lines -> (the store Codex reads, why memcite says so)
    "": "v1",
    'version = "v1"\ndual_write = true\n': "v1",
    'version = "v2"\n': "v2",
    'version = "v2"\ndual_write = true\n': "v2",
}


def _add_row(db, thread_id: str) -> None:
    now = int(time.time())
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory, "
                     "rollout_summary, rollout_slug, generated_at) VALUES (?, ?, 'r', 's', 'slug', ?)",
                     (thread_id, now, now))
    conn.close()


def _usage(db, thread_id: str):
    with sqlite3.connect(db) as conn:
        found = conn.execute("SELECT usage_count FROM stage1_outputs WHERE thread_id = ?",
                             (thread_id,)).fetchone()
    conn.close()
    return found[0] if found else None


@pytest.mark.parametrize("case", sorted(V2_SUMMARIES))
def test_the_v2_read_path_equals_memcite_byte_for_byte(world, case):
    world.append_config('version = "v2"\n')
    folder = world.codex_home / "memories_v2"
    folder.mkdir(exist_ok=True)
    (folder / "memory_summary.md").write_bytes(V2_SUMMARIES[case])
    assert_ran(world.exec("What do you remember?"))
    message = codex_memory_message(world)
    ours = world.memcite_json("instructions", "--profile", "codex", "--codex-home", str(world.codex_home))
    assert ours["store"] == "v2"
    if ours["instructions"] is None:
        assert message is None, f"Codex injected memory where memcite says it does not ({case})"
        return
    assert message == ours["instructions"]
    assert f"{folder}/rollout_summaries/" in message and "Do not cite `memory_summary.md`" in message
    if case == "over_the_limit":
        assert ours["truncated"] and "tokens truncated" in message


@pytest.mark.parametrize("config", sorted(STORES), ids=lambda c: c.replace("\n", " ").strip() or "default")
def test_memcite_reads_and_counts_the_store_codex_counts_in(world, config):
    world.append_config(config)
    assert_ran(world.exec("hello"))  # Codex creates its databases
    thread = new_thread_id()
    databases = {store: world.codex_home / name for store, name in
                 (("v1", "memories_1.sqlite"), ("v2", "memories_v2_1.sqlite"))}
    for db in databases.values():
        if db.exists():
            _add_row(db, thread)
    world.model.reply("Done.\n<oai-mem-citation>\n<citation_entries>\nrollout_summaries/x.md:1-2"
                      f"|note=[used]\n</citation_entries>\n<rollout_ids>\n{thread}\n</rollout_ids>\n"
                      "</oai-mem-citation>")
    assert_ran(world.exec("What do you remember?"))
    expected = STORES[config]
    other = "v1" if expected == "v2" else "v2"
    assert _usage(databases[expected], thread) == 1  # Codex counted here
    if databases[other].exists():
        assert _usage(databases[other], thread) is None  # and not there
    synced = world.memcite_json("sync", "--codex-home", str(world.codex_home))
    assert synced["store"] == expected
    assert synced["state_db"] == str(databases[expected])
    assert synced["dual_write"] == ("dual_write = true" in config)
    stats = world.memcite_json("stats", "--codex-home", str(world.codex_home))
    assert stats["totals"]["codex_citations"] == 1


def test_under_v2_a_cited_summary_is_flagged_and_a_rollout_summary_checked(world):
    world.append_config('version = "v2"\n')
    assert_ran(world.exec("hello"))
    folder = world.codex_home / "memories_v2"
    (folder / "memory_summary.md").write_text("v1\n## User Profile\nA developer.\n")
    (folder / "rollout_summaries").mkdir(exist_ok=True)
    summary = folder / "rollout_summaries" / "2026-11-01T10-00-00-abcd-flaky.md"
    summary.write_text("thread_id: x\n\n# Fixing the flaky test\nIt was a race.\n")
    world.model.reply("Done.\n<oai-mem-citation>\n<citation_entries>\n"
                      f"rollout_summaries/{summary.name}:3-4|note=[used]\n"
                      "memory_summary.md:1-2|note=[not to be cited]\n</citation_entries>\n"
                      "<rollout_ids>\n</rollout_ids>\n</oai-mem-citation>")
    assert_ran(world.exec("What do you remember?"))
    world.memcite("sync", "--codex-home", str(world.codex_home), check=False)
    ingested = world.memcite("ingest", "--codex-home", str(world.codex_home))
    assert ingested.returncode == 0
    stats = world.memcite_json("stats", "--codex-home", str(world.codex_home), "--no-cache",
                               "--judge-without-usage")
    outcomes = {name: counts["citations"] for name, counts in
                stats["citation_checks"]["outcomes"].items() if counts["citations"]}
    assert outcomes == {"not_to_cite": 1, "ok": 1}
    assert stats["citation_checks"]["memory_root"] == str(folder)
