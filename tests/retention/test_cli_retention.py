"""`memcite stats`, `prune`, `restore` and `select` through Typer's CliRunner and as real
processes (the fast path for `stats`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.ledger.recording import ReplyInput, record_reply
from memcite.ledger.store import open_store
from memcite.ledger.sync import sync_codex_home
from memcite_process import run_memcite

NOW = 1_800_000_000
AS_OF = str(NOW)
runner = CliRunner()


@pytest.fixture
def env(tmp_path, monkeypatch, sample_builder, codex_home):
    """A synced sample home, a recorded reply, and an environment pointing memcite at them."""
    builder, home = sample_builder, codex_home
    db = tmp_path / "memcite.sqlite"
    conn = open_store(db)
    sync_codex_home(conn, home, now=NOW)
    text = ("x\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:4-7|note=[t]\n"
            "../up.md:1-1|note=[u]\n</citation_entries>\n<rollout_ids>\n"
            f"{builder.thread_id(2)}\n</rollout_ids>\n</oai-mem-citation>")
    record_reply(conn, ReplyInput(text, at=NOW - 86_400), memory_root=home / "memories", now=NOW)
    conn.close()
    values = {"MEMCITE_DB": str(db), "CODEX_HOME": str(home), "MEMCITE_HOME": str(tmp_path),
              "MEMCITE_CONFIG": str(tmp_path / "no-config.toml")}
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return {"home": home, "db": db, "builder": builder, "env": {**os.environ, **values}}


def run(args, env):
    code, out, err = run_memcite(args, env)
    return code, out.decode(), err


def test_stats_json_shape(env):
    result = runner.invoke(app, ["stats", "--json", "--as-of", AS_OF, "--limit", "0"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) >= {"memories", "dead", "top", "unknown_ids", "citation_checks",
                           "sections"}
    assert report["memories"] == 36
    assert report["codex_home"] == os.path.realpath(env["home"])
    assert report["state_db"] == os.path.join(os.path.realpath(env["home"]), "memories_1.sqlite")
    top = {t["thread_id"]: t for t in report["top"]}
    assert top[env["builder"].thread_id(2)]["usage_count"] == 1
    assert top[env["builder"].thread_id(2)]["label"] == "pytest_fixture_layout"
    assert report["citation_checks"]["outcomes"]["outside_root"]["entries"] == 1
    assert {"thread_id", "label", "last_used", "last_used_iso", "days_unused", "reason", "usage_count",
            "codex_usage_count", "asked_to_forget"} == set(report["dead"][0])


def test_stats_text_shows_dead_checks_sections_and_chart(env):
    result = runner.invoke(app, ["stats", "--as-of", AS_OF, "--limit", "3", "--full"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Dead memories" in out and "never cited" in out and "more (--limit 0" in out
    assert "outside_root" in out and "../up.md:1-1" in out
    assert "Testing" in out and "<- never cited" in out
    assert "Citations per week" in out


def test_stats_fast_path_prints_the_same_bytes_as_typer_without_importing_it(env):
    args = ["stats", "--json", "--as-of", AS_OF, "--limit", "50", "--no-cache"]
    code, fast, err = run(args, env["env"])
    assert code == 0, err
    code, slow, err = run(args, {**env["env"], "MEMCITE_NO_FASTPATH": "1"})
    assert code == 0, err
    assert fast == slow
    probe = ("import sys, runpy; sys.argv = ['memcite', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('memcite', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "heavy = [m for m in ('typer', 'click', 'rich', 'pydantic', 'sqlite_utils')"
             " if m in sys.modules]\nsys.stderr.write('HEAVY=' + ','.join(heavy))\n")
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True,
                          env=env["env"], timeout=60)
    assert done.stderr.decode().endswith("HEAVY="), done.stderr.decode()


@pytest.mark.parametrize(("args", "message"), [
    (["stats", "--rule", "llm"], "--rule"),
    (["stats", "--as-of", "yesterday"], "--as-of"),
    (["stats", "--max-unused-days", "-1"], "max-unused-days"),
    (["restore"], "say what to restore"),
    (["restore", "not-an-id"], "not a thread id"),
])
def test_bad_input_exits_2_with_a_message(env, args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.output
    code, _out, err = run(args, env["env"])
    assert code == 2 and message in err


def test_codex_config_sets_max_unused_days(env):
    (env["home"] / "config.toml").write_text("[memories]\nmax_unused_days = 1000\n")
    result = runner.invoke(app, ["prune", "--json", "--as-of", AS_OF])
    report = json.loads(result.stdout)
    assert report["max_unused_days"] == 365  # clamped as Codex does
    assert report["settings"]["sources"]["max_unused_days"] == "codex"
    result = runner.invoke(app, ["prune", "--json", "--as-of", AS_OF, "--max-unused-days", "5"])
    assert json.loads(result.stdout)["max_unused_days"] == 5


def test_prune_previews_then_asks_codex_with_a_note_and_restore_withdraws(env):
    summaries = env["home"] / "memories" / "rollout_summaries"
    notes = env["home"] / "memories" / "extensions" / "ad_hoc" / "notes"
    before = sorted(os.listdir(summaries))
    codex_before = (env["home"] / "memories_1.sqlite").read_bytes()
    db_before = env["db"].read_bytes()
    result = runner.invoke(app, ["prune", "--rule", "codex", "--as-of", AS_OF, "--json"])
    assert result.exit_code == 0, result.output
    preview = json.loads(result.stdout)["prune"]
    assert preview and {"thread_id", "label", "last_used", "last_used_iso", "reason"} == set(preview[0])
    assert env["db"].read_bytes() == db_before and not notes.exists()
    text = runner.invoke(app, ["prune", "--rule", "codex", "--as-of", AS_OF]).stdout
    assert "nothing changed: this is a preview" in text

    result = runner.invoke(app, ["prune", "--rule", "codex", "--as-of", AS_OF, "--apply"])
    assert result.exit_code == 0, result.output
    assert "way: ad-hoc note" in result.stdout and "what Codex still sees:" in result.stdout
    written = os.listdir(notes)
    assert len(written) == 1
    note = (notes / written[0]).read_text()
    for item in preview:
        assert item["thread_id"] in note and item["label"] in note
    # No file of Codex's moved, its database untouched.
    assert sorted(os.listdir(summaries)) == before
    assert (env["home"] / "memories_1.sqlite").read_bytes() == codex_before
    stats = json.loads(runner.invoke(app, ["stats", "--json", "--as-of", AS_OF]).stdout)
    assert stats["totals"]["asked_to_forget"] == len(preview)
    assert stats["totals"]["archived"] == 0
    text = runner.invoke(app, ["stats", "--as-of", AS_OF]).stdout
    assert f"asked to forget, still in Codex: {len(preview)}" in text
    # Asked once: a second prune offers them no more.
    again = json.loads(runner.invoke(app, ["prune", "--rule", "codex", "--as-of", AS_OF,
                                           "--json"]).stdout)
    assert again["prune"] == []
    listed = json.loads(runner.invoke(app, ["archived", "--json"]).stdout)
    assert {r["thread_id"] for r in listed["requests"]} == {p["thread_id"] for p in preview}

    result = runner.invoke(app, ["restore", "--all"])
    assert result.exit_code == 0, result.output
    assert f"restored {len(preview)}" in result.stdout
    assert len(os.listdir(notes)) == 2  # the request, retired, and the withdrawal
    assert "asks nothing" in result.stdout
    # one note withdrew every request: its long path said once, then a short line per memory
    assert len(preview) > 1 and result.stdout.count("asks nothing") == 1
    assert all(len(line) < 120 for line in result.stdout.splitlines() if line.startswith("    "))
    assert (notes / written[0]).read_text().startswith("# Nothing to drop")
    stats = json.loads(runner.invoke(app, ["stats", "--json", "--as-of", AS_OF]).stdout)
    assert stats["totals"]["asked_to_forget"] == 0


def test_select_follows_codex_order(env):
    result = runner.invoke(app, ["select", "--n", "3", "--as-of", AS_OF, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    ids = [m["thread_id"] for m in report["selected"]]
    assert len(ids) == 3 and ids == sorted(ids)
    b = env["builder"]
    # the three most used recent threads of the sample: 30, 12 and 7 uses
    assert set(ids) == {b.thread_id(22), b.thread_id(1), b.thread_id(5)}
    assert report["source"].endswith("memories_1.sqlite")


def test_stats_from_codex_home_without_a_memcite_database(env, tmp_path):
    env_vars = {**env["env"], "MEMCITE_DB": ""}
    env_vars["MEMCITE_HOME"] = str(tmp_path / "fresh")
    code, out, err = run(["stats", "--json", "--as-of", AS_OF], env_vars)
    assert code == 0, err
    report = json.loads(out)
    assert report["source"] == "codex" and report["memories"] == 33
    assert not (tmp_path / "fresh" / "memcite.sqlite").exists()


def test_stats_cache_gives_the_same_report_without_reading_files(env):
    args = ["stats", "--json", "--as-of", AS_OF]
    code, first, err = run(args, env["env"])
    assert code == 0, err
    code, second, err = run(args, env["env"])
    assert code == 0, err
    first, second = json.loads(first), json.loads(second)
    assert first["citation_checks"]["files_read"] >= 1
    assert second["citation_checks"]["files_read"] == 0
    first["citation_checks"]["files_read"] = 0
    assert first == second


def test_no_database_and_no_codex_home_is_a_clear_error_and_creates_nothing(tmp_path,
                                                                            monkeypatch):
    monkeypatch.delenv("MEMCITE_DB", raising=False)
    monkeypatch.setenv("MEMCITE_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    for args in (["stats"], ["select"], ["prune"], ["archived"], ["restore", "--all"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, args
        assert "no such Codex home" in result.output or "no such database" in result.output
    assert not (tmp_path / "data" / "memcite.sqlite").exists()


def test_codex_rule_and_select_ignore_memcite_config(env, tmp_path, monkeypatch):
    (tmp_path / "memcite.toml").write_text(
        "[retention]\nmax_unused_days = 5\nmax_raw_memories_for_consolidation = 2\n")
    monkeypatch.setenv("MEMCITE_CONFIG", str(tmp_path / "memcite.toml"))
    mine = json.loads(runner.invoke(app, ["prune", "--json", "--as-of", AS_OF]).stdout)
    assert (mine["max_unused_days"], mine["settings"]["sources"]["max_unused_days"]) == \
        (5, "memcite")
    codex = json.loads(runner.invoke(app, ["prune", "--rule", "codex", "--json", "--as-of",
                                           AS_OF]).stdout)
    assert (codex["max_unused_days"], codex["settings"]["sources"]["max_unused_days"]) == \
        (30, "default")
    (env["home"] / "config.toml").write_text("[memories]\nmax_unused_days = 12\n")
    report = json.loads(runner.invoke(app, ["stats", "--rule", "codex", "--json", "--as-of",
                                            AS_OF]).stdout)
    assert report["max_unused_days"] == 12
    selected = json.loads(runner.invoke(app, ["select", "--json", "--as-of", AS_OF]).stdout)
    assert selected["settings"]["max_raw_memories_for_consolidation"] == 256
    assert selected["settings"]["max_unused_days"] == 12


def test_prune_and_stats_by_codex_rule_list_what_codex_deletes(env):
    import sqlite3

    codex_db = sqlite3.connect(env["home"] / "memories_1.sqlite")
    expected = [row[0] for row in codex_db.execute(
        "SELECT thread_id FROM stage1_outputs WHERE selected_for_phase2 = 0"
        " AND COALESCE(last_usage, source_updated_at) < ?"
        " ORDER BY COALESCE(last_usage, source_updated_at), source_updated_at, thread_id",
        (NOW - 30 * 86_400,))]
    codex_db.close()
    report = json.loads(runner.invoke(app, ["prune", "--rule", "codex", "--limit", "0",
                                            "--json", "--as-of", AS_OF]).stdout)
    assert [item["thread_id"] for item in report["prune"]] == expected
    assert report["not_in_codex_table"] == 3 and report["gone_from_codex"] == 0
    text = runner.invoke(app, ["prune", "--rule", "codex", "--as-of", AS_OF]).stdout
    assert f"): {len(expected)} memories" in text
    assert "not judged: 3 memories only in the memory folder" in text
    stats = json.loads(runner.invoke(app, ["stats", "--rule", "codex", "--limit", "0",
                                           "--json", "--as-of", AS_OF]).stdout)
    assert sorted(d["thread_id"] for d in stats["dead"]) == sorted(expected)


def test_stats_straight_from_codex_says_there_is_no_citation_log(env, tmp_path):
    env_vars = {**env["env"], "MEMCITE_DB": "", "MEMCITE_HOME": str(tmp_path / "fresh")}
    code, out, err = run(["stats", "--as-of", AS_OF, "--full"], env_vars)
    assert code == 0, err
    assert "no citation log (run memcite record or memcite ingest)" in out
    assert "<- never cited" not in out and "by memcite's log" not in out  # no claims from no log
    header, top = out.split("Most cited")[1].splitlines()[1:3]
    assert header.split()[2:4] == ["memcite", "Codex"]
    assert top.split()[:3] == [env["builder"].thread_id(22), "-", "30"]
    assert "(memcite -: no memcite log to count in)" in out


@pytest.mark.parametrize("command", [["stats"], ["stats", "--json"], ["prune"]])
def test_a_home_never_synced_is_said_so_not_a_silent_zero(env, tmp_path, command):
    """A ledger the hook or `record` made before the first sync: judging it would say
    'memories 0' while Codex's table holds rows. (`select` reads Codex's table itself.)"""
    fresh = tmp_path / "fresh.sqlite"
    conn = open_store(fresh)
    record_reply(conn, ReplyInput("no citation here", at=NOW - 60), now=NOW)
    conn.close()
    code, out, err = run([*command, "--as-of", AS_OF], {**env["env"], "MEMCITE_DB": str(fresh)})
    assert code == 3, (out, err)
    assert "was never synced" in err and "memcite sync" in err and out == ""
    code, out, err = run(["sync"], {**env["env"], "MEMCITE_DB": str(fresh)})
    assert code == 0, err
    code, out, err = run([*command, "--as-of", AS_OF], {**env["env"], "MEMCITE_DB": str(fresh)})
    assert code in (0, 1) and "was never synced" not in err and out, (code, err)


def test_a_misspelt_rule_names_every_valid_one_and_the_nearest(env):
    code, out, err = run(["prune", "--rule", "tierd"], env["env"])
    assert code == 2 and "or tiered for prune" in err and "did you mean tiered?" in err
