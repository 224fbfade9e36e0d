"""Every state of a real Codex home has a way forward: ``stats``, ``sync``, ``report`` and ``prune``
each say what the home holds and what happens next, exit 0 where nothing is wrong, and a hint never
names a command that refuses in turn (issue 40)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite_process import run_memcite

runner = CliRunner()

MEMORIES_ON = "[features]\nmemories = true\n"
STAGE1 = ("CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY, source_updated_at INTEGER NOT "
          "NULL, raw_memory TEXT NOT NULL, rollout_summary TEXT NOT NULL, rollout_slug TEXT, "
          "generated_at INTEGER NOT NULL, usage_count INTEGER, last_usage INTEGER, "
          "selected_for_phase2 INTEGER NOT NULL DEFAULT 0, "
          "selected_for_phase2_source_updated_at INTEGER)")


def _just_switched_on(home: Path) -> None:
    """Memories turned on a moment ago: MEMORY.md and memory_summary.md only."""
    (home / "config.toml").write_text(MEMORIES_ON)
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text("# Memory\n")
    (home / "memories" / "memory_summary.md").write_text("Nothing yet.\n")


def _empty_database(home: Path) -> None:
    _just_switched_on(home)
    conn = sqlite3.connect(home / "memories_1.sqlite")
    conn.execute(STAGE1)
    conn.commit()
    conn.close()


def _no_memory_folder(home: Path) -> None:
    """Codex ran with memories on, but has made no memory folder yet."""
    (home / "config.toml").write_text(MEMORIES_ON + "[memories]\nmin_rollout_idle_hours = 12\n")
    (home / "sessions").mkdir()


def _only_memory_md(home: Path) -> None:
    """A MEMORY.md and nothing else, memories never turned on."""
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text("# Memory\n- a line written by hand\n")


def _made_by_memcite(home: Path) -> None:
    """What ``memcite note save`` leaves where Codex never ran: its notes folder only."""
    (home / "memory" / "projects").mkdir(parents=True)


STATES = {
    "just switched on": (_just_switched_on, 0, "no memories_1.sqlite; memories/ holds MEMORY.md, "
                         "memory_summary.md", "idle for 6 hours"),
    "empty memories_1.sqlite": (_empty_database, 0, "an empty memories_1.sqlite",
                                "idle for 6 hours"),
    "no memory folder yet": (_no_memory_folder, 0, "no memories_1.sqlite, no memories/ yet",
                             "idle for 12 hours"),
    "only MEMORY.md": (_only_memory_md, 0, "memories/ holds MEMORY.md",
                       "config.toml does not turn them on"),
    "made by memcite": (_made_by_memcite, 2, "is not a Codex home", "npm install -g @openai/codex"),
}
COMMANDS = ("stats", "sync", "report", "prune", "select")


def _env(tmp_path: Path, home: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "user"), "XDG_DATA_HOME": str(tmp_path / "xdg"),
            "CODEX_HOME": str(home), "MEMCITE_DB": "", "MEMCITE_HOME": ""}


def _home(tmp_path: Path, state: str) -> Path:
    home = tmp_path / "codex"
    home.mkdir()
    STATES[state][0](home)
    return home


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("state", STATES)
def test_each_state_says_what_the_home_holds_and_what_comes_next(tmp_path, state, command):
    _, code, holds, then = STATES[state]
    home = _home(tmp_path, state)
    result = runner.invoke(app, [command], env=_env(tmp_path, home))
    said = result.stdout + result.stderr
    assert result.exit_code == code, said
    assert holds in said and then in said, said
    if code == 0:
        assert "error" not in said and said.startswith(f"Codex holds no memory in {home}")
        assert "nothing is wrong" in said
    assert not [p for p in (tmp_path / "xdg").rglob("*") if p.is_file()]  # nothing written
    assert not list(Path.cwd().glob("memcite-report.html"))


def _memcite_commands(text: str) -> list[list[str]]:
    """The ``memcite ...`` commands a message names in backticks."""
    return [found.split()[1:] for found in re.findall(r"`(memcite [^`]*)`", text)]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("state", STATES)
def test_no_hint_names_a_command_that_refuses_in_turn(tmp_path, state, command):
    home = _home(tmp_path, state)
    env = _env(tmp_path, home)
    first = runner.invoke(app, [command], env=env)
    named = _memcite_commands(first.stdout + first.stderr)
    for step in named:
        if step[0] == "doctor":  # it exits 1 on a failed check, by design; never 2 or 3
            continue
        then = runner.invoke(app, step, env=env)
        assert then.exit_code not in (2, 3), (step, then.stdout + then.stderr)


def test_after_a_sync_of_an_empty_database_stats_says_no_memory_yet_not_sync_again(tmp_path):
    home = _home(tmp_path, "empty memories_1.sqlite")
    env = _env(tmp_path, home)
    synced = runner.invoke(app, ["sync"], env=env)
    assert synced.exit_code == 0, synced.stderr
    assert "Codex holds no memory in" in synced.stdout
    result = runner.invoke(app, ["stats"], env=env)
    assert result.exit_code == 0, result.stderr
    assert "now that" not in result.stdout + result.stderr
    assert "Codex holds no memory in" in result.stdout


def test_a_folder_only_home_without_a_ledger_is_told_to_sync_before_judging_without_usage(
        tmp_path, codex_home):
    (codex_home / "memories_1.sqlite").unlink()
    env = _env(tmp_path, codex_home)
    refused = runner.invoke(app, ["stats"], env=env)
    assert refused.exit_code == 3
    assert "`memcite sync` reads the memory folder" in refused.stderr
    assert runner.invoke(app, ["sync"], env=env).exit_code == 0
    judged = runner.invoke(app, ["stats", "--judge-without-usage"], env=env)
    assert judged.exit_code == 0, judged.stderr


def test_the_fast_path_says_the_same(tmp_path):
    home = _home(tmp_path, "just switched on")
    env = _env(tmp_path, home)
    typer = runner.invoke(app, ["stats"], env=env)
    code, out, err = run_memcite(["stats"], env)
    assert code == 0, err
    assert out.decode() == typer.stdout


def test_without_any_codex_home_stats_says_codex_is_not_installed_and_how_to_install_it(tmp_path):
    env = {**_env(tmp_path, tmp_path / "none"), "CODEX_HOME": ""}
    env["HOME"] = str(tmp_path / "user")  # no ~/.codex there
    result = runner.invoke(app, ["stats"], env=env)
    assert result.exit_code == 2
    assert "Codex is not installed here" in result.stderr
    assert "npm install -g @openai/codex" in result.stderr
