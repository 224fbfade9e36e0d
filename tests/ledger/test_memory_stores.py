"""Codex's two memory stores: memcite reads the one Codex reads (``[memories] version``).

What Codex does was seen with the real binary (tests/e2e/test_e2e_store_v2.py); these tests
pin memcite's side without it: the choice, the reports naming it, and the refusal to judge
an inventory synced from the other store.
"""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.demo.loop import load_sample_builder
from memcite.ledger.codex_home import (
    CodexConfig,
    CodexHomeError,
    codex_memory_folder,
    locate_codex_home,
    memory_store,
    read_codex_config,
)

NOW = 1_800_000_000
runner = CliRunner()


@pytest.mark.parametrize(("config", "store"), [
    ("", "v1"),
    ('[memories]\nversion = "v1"\n', "v1"),
    ('[memories]\nversion = "v2"\n', "v2"),
    ('[memories]\nversion = "v2"\ndual_write = true\n', "v2"),
    ('[memories]\ndual_write = true\n', "v1"),  # dual_write never changes what Codex reads
    ('model = "x"\n[features]\nmemories = true\n', "v1"),
])
def test_the_store_is_the_one_codex_reads(tmp_path, config, store):
    (tmp_path / "config.toml").write_text(config)
    assert memory_store(read_codex_config(tmp_path))[0] == store
    located = locate_codex_home(tmp_path)
    assert located.store == store
    folder = "memories" if store == "v1" else "memories_v2"
    database = "memories_1.sqlite" if store == "v1" else "memories_v2_1.sqlite"
    assert located.memory_folder == os.path.join(os.path.realpath(tmp_path), folder)
    assert located.state_db == os.path.join(os.path.realpath(tmp_path), database)
    assert codex_memory_folder(tmp_path) == os.path.join(tmp_path, folder)
    assert located.dual_write == ("dual_write = true" in config)


@pytest.mark.parametrize("config", ['[memories]\nversion = "v3"\n', '[memories]\nversion = 2\n',
                                    '[memories]\ndual_write = "yes"\n', '[memories]\nversion = \n'])
def test_a_store_setting_codex_would_refuse_is_an_error_that_says_where(tmp_path, config):
    (tmp_path / "config.toml").write_text(config)
    with pytest.raises(CodexHomeError) as caught:
        read_codex_config(tmp_path)
    assert "config.toml" in caught.value.message


def test_asking_for_the_other_store_says_which_codex_reads(tmp_path):
    located = locate_codex_home(tmp_path, store="v2")
    assert located.store == "v2" and "Codex reads v1" in located.store_from
    assert memory_store(CodexConfig()) == ("v1", located.store_from.split(": ", 1)[1].rstrip(")"))


def _v2_home(tmp_path):
    """The sample home, moved into memory store v2 (its folder and its database)."""
    home = tmp_path / "codex_home"
    load_sample_builder().build_codex_home(str(home), now=NOW)
    (home / "memories").rename(home / "memories_v2")
    (home / "memories_1.sqlite").rename(home / "memories_v2_1.sqlite")
    (home / "config.toml").write_text('[memories]\nversion = "v2"\n')
    return home


def _run(env, *args):
    return runner.invoke(app, list(args), env=env, catch_exceptions=False)


def test_reports_name_the_store_and_refuse_an_inventory_of_the_other(tmp_path):
    home = _v2_home(tmp_path)
    env = {"CODEX_HOME": str(home), "MEMCITE_DB": str(tmp_path / "m.sqlite"),
           "MEMCITE_CONFIG": str(tmp_path / "none.toml"), "COLUMNS": "100"}
    synced = json.loads(_run(env, "sync", "--json").stdout)
    assert (synced["store"], synced["inserted"]) == ("v2", 36)
    assert synced["state_db"].endswith("memories_v2_1.sqlite")
    stats = json.loads(_run(env, "stats", "--json", "--as-of", str(NOW)).stdout)
    assert stats["store"]["store"] == "v2"
    assert stats["store"]["memory_folder"] == str(home / "memories_v2")
    assert stats["totals"]["codex_citations"] == synced["counts"]["codex_citations"] > 0
    brief = _run(env, "stats", "--as-of", str(NOW)).stdout
    assert 'Codex reads memory store v2 ([memories] version = "v2"' in " ".join(brief.split())
    text = _run(env, "stats", "--as-of", str(NOW), "--full").stdout
    assert 'memory store v2, the one Codex reads ([memories] version = "v2"' in text
    prune = json.loads(_run(env, "prune", "--json", "--as-of", str(NOW)).stdout)
    assert prune["store"]["store"] == "v2"

    # The person turns v2 off: Codex reads v1 now (its database is there, as Codex keeps
    # both), and the inventory holds v2's memories.
    other = tmp_path / "other"
    load_sample_builder().build_codex_home(str(other), now=NOW)
    (other / "memories_1.sqlite").rename(home / "memories_1.sqlite")
    (home / "config.toml").write_text("")
    refused = _run(env, "stats", "--as-of", str(NOW))
    assert refused.exit_code == 3
    assert "read memory store v2, but Codex reads v1 now" in refused.stderr
    assert "memcite sync" in refused.stderr


def _record(env, home, text):
    from memcite.ledger.codex_home import codex_memory_folder
    from memcite.ledger.recording import ReplyInput, record_reply
    from memcite.ledger.store import open_store

    conn = open_store(env["MEMCITE_DB"])
    try:
        record_reply(conn, ReplyInput(text, at=NOW - 3600), memory_root=codex_memory_folder(home),
                     now=NOW)
    finally:
        conn.close()


def _block(*entries: str) -> str:
    return ("Done.\n<oai-mem-citation>\n<citation_entries>\n"
            + "".join(f"{entry}|note=[n]\n" for entry in entries)
            + "</citation_entries>\n<rollout_ids>\n</rollout_ids>\n</oai-mem-citation>")


def _outcomes(env) -> dict:
    stats = json.loads(_run(env, "stats", "--json", "--as-of", str(NOW), "--no-cache").stdout)
    return {name: counts["citations"] for name, counts in stats["citation_checks"]["outcomes"].items()
            if counts["citations"]}


def test_under_v2_a_citation_of_the_summary_is_flagged(tmp_path):
    home = _v2_home(tmp_path)
    env = {"CODEX_HOME": str(home), "MEMCITE_DB": str(tmp_path / "m.sqlite"),
           "MEMCITE_CONFIG": str(tmp_path / "none.toml")}
    _run(env, "sync")
    summary = sorted((home / "memories_v2" / "rollout_summaries").iterdir())[0].name
    _record(env, home, _block("memory_summary.md:1-2", f"rollout_summaries/{summary}:1-2"))
    assert _outcomes(env) == {"not_to_cite": 1, "ok": 1}
    text = _run(env, "stats", "--as-of", str(NOW), "--no-cache", "--full").stdout
    assert "not_to_cite" in text and "says not to cite it" in " ".join(text.split())


def test_a_summary_codex_removed_is_told_apart_from_one_that_never_was(tmp_path):
    import subprocess

    home = tmp_path / "codex_home"
    load_sample_builder().build_codex_home(str(home), now=NOW)
    env = {"CODEX_HOME": str(home), "MEMCITE_DB": str(tmp_path / "m.sqlite"),
           "MEMCITE_CONFIG": str(tmp_path / "none.toml")}
    _run(env, "sync")
    folder = home / "memories"
    known, other = sorted((folder / "rollout_summaries").iterdir())[:2]
    # A note only the folder's git history knew (Codex keeps the folder in git).
    git = ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t"]
    (folder / "notes.md").write_text("one\ntwo\n")
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "notes.md"], check=True)
    subprocess.run([*git, "commit", "-qm", "baseline"], check=True)
    _record(env, home, _block(f"rollout_summaries/{known.name}:1-2", "notes.md:1-2",
                              "rollout_summaries/never-was.md:1-2", f"rollout_summaries/{other.name}:1-2"))
    known.unlink()  # Codex's consolidation deletes the summary of a memory it dropped
    (folder / "notes.md").unlink()
    assert _outcomes(env) == {"removed": 2, "missing": 1, "ok": 1}


def _v2_home_with_routes(tmp_path, used_tier: str = "", unused_tier: str = ""):
    """A synced v2 home without MEMORY.md whose summary routes to two rollout summaries:
    ``(home, folder, env, used, unused)``; the routes' tier prefixes as given."""
    home = _v2_home(tmp_path)
    folder = home / "memories_v2"
    (folder / "MEMORY.md").unlink()  # v2 has none
    used, unused = sorted(p.name for p in (folder / "rollout_summaries").iterdir())[:2]
    (folder / "memory_summary.md").write_text(
        "v1\n## User Profile\nA developer.\n\n## User preferences\n- short answers\n\n"
        "## General Tips\n- none\n\n## What's in Memory\n### /home/dev/app\n#### 2026-11-01\n"
        f"- {unused_tier}rollout_summaries/{unused} — never cited; "
        "thread_id=019b76a3-9a91-7f98-8541-21849548e142\n"
        f"- {used_tier}rollout_summaries/{used} — the one cited; "
        "thread_id=019b76da-a800-7de5-8c3e-9e72e44926e8\n")
    env = {"CODEX_HOME": str(home), "MEMCITE_DB": str(tmp_path / "m.sqlite"),
           "MEMCITE_CONFIG": str(tmp_path / "none.toml")}
    _run(env, "sync")
    return home, folder, env, used, unused


def test_under_v2_the_summary_routes_are_the_entries_that_citations_use(tmp_path):
    home, folder, env, used, unused = _v2_home_with_routes(tmp_path)
    for lines in ("1-3", "2-4"):  # two replies citing the same rollout summary
        _record(env, home, _block(f"rollout_summaries/{used}:{lines}"))
    stats = json.loads(_run(env, "stats", "--json", "--as-of", str(NOW), "--no-cache").stdout)
    (codex,) = [f for f in stats["entries"]["files"] if f["kind"] == "codex"]
    assert codex["path"] == str(folder / "memory_summary.md")
    assert codex["citations"] == 2 and codex["unattributed"] == 0
    listed = stats["entries"]["most_relevant"] + stats["entries"]["never_cited"]
    by_title = {e["title"]: e["citations"] for e in listed}
    assert by_title[f"rollout_summaries/{used}"] == 2
    assert by_title[f"rollout_summaries/{unused}"] == 0


def test_under_v2_tiered_pruning_judges_the_summary_routes(tmp_path):
    home, folder, env, used, unused = _v2_home_with_routes(tmp_path, "[CORE] ", "[IRR] ")
    _record(env, home, _block(f"rollout_summaries/{used}:1-3"))
    later = str(NOW + 400 * 86400)
    preview = json.loads(_run(env, "prune", "--rule", "tiered", "--json", "--as-of", later).stdout)
    assert preview["store"]["store"] == "v2"
    judged = {item["title"]: item for item in preview["entries"]} if "entries" in preview else None
    assert judged is not None, sorted(preview)
    (mine,) = [item for title, item in judged.items() if unused in title]
    assert (mine["tier"], mine["citations"], mine["action"]) == ("IRR", 0, "prune")
    assert all(str(folder / "memory_summary.md") == item["path"] for item in judged.values())
