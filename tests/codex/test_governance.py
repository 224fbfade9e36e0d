"""``setup codex --governance`` (the AGENTS.md directives) and ``setup codex --gate`` (the
PreToolUse hook): shown, written, left alone once edited, taken out to the byte."""

from __future__ import annotations

import json
import subprocess

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.cli.codex_commands import setup_codex
from memcite.codex.governance import (
    MEMORY_GOVERNANCE,
    PRE_RETRIEVAL,
    add_block,
    block,
    directives,
    find_block,
    remove_block,
)
from memcite.codex.setup import apply_plan, plan_setup

runner = CliRunner()
NOW = 1_800_000_000


# --------------------------------------------------------------------------- the directives


def test_the_directives_say_what_the_consolidation_agent_must_keep():
    text = directives(MEMORY_GOVERNANCE)
    for needed in ("`[CORE]`", "`[IMP]`", "`[SEC]`", "`[IRR]`", "at most 80 `[CORE]` entries",
                   "superseded_by:", "`Source:`", "`Evidence:`", "`Confidence:`",
                   "HIGH", "MEDIUM", "LOW", "leave this AGENTS.md file itself as it is"):
        assert needed in text, needed
    retrieval = directives(PRE_RETRIEVAL)
    assert "Before you modify a file" in retrieval and "superseded_by:" in retrieval


def test_the_example_entry_reads_as_a_core_entry_with_its_provenance():
    from memcite.retention.entries import read_entries

    example = directives(MEMORY_GOVERNANCE).split("For example:\n\n")[1]
    entry = read_entries("# Memory\n\n" + "\n".join(line[4:] for line in example.splitlines()))
    assert [e.tier for e in entry] == ["CORE"]


@pytest.mark.parametrize("before", [None, "", "# Project\n", "# Project", "a\n\n", "x\n\n\n"])
@pytest.mark.parametrize("kind", [MEMORY_GOVERNANCE, PRE_RETRIEVAL])
def test_adding_then_removing_gives_back_the_bytes(before, kind):
    added = add_block(before, kind, "AGENTS.md").after
    assert block(kind) in added and (before or "") in added
    assert add_block(added, kind, "AGENTS.md").after == added  # idempotent
    removed = remove_block(added, kind, "AGENTS.md").after
    assert removed == (before or None)


def test_text_the_person_wrote_around_the_block_stays():
    added = add_block("# Mine\n", MEMORY_GOVERNANCE, "AGENTS.md").after + "\n## Later, mine\n"
    assert remove_block(added, MEMORY_GOVERNANCE, "AGENTS.md").after == "# Mine\n\n## Later, mine\n"


def test_an_edited_block_is_never_rewritten_nor_removed():
    added = add_block("# Mine\n", MEMORY_GOVERNANCE, "AGENTS.md").after
    edited = added.replace("Keep at most 80", "Keep at most 40")
    assert not find_block(edited, MEMORY_GOVERNANCE).intact
    again = add_block(edited, MEMORY_GOVERNANCE, "AGENTS.md")
    assert again.after == edited and "edited since memcite wrote them" in again.note
    gone = remove_block(edited, MEMORY_GOVERNANCE, "AGENTS.md")
    assert gone.after == edited and "left as is" in gone.note
    cut = added.replace("<!-- /memcite:memory-governance -->\n", "")  # its end taken away
    assert remove_block(cut, MEMORY_GOVERNANCE, "AGENTS.md").after == cut


def test_an_older_intact_block_is_brought_up_to_date():
    older = "# Mine\n\n" + block(MEMORY_GOVERNANCE, "## Older directives\n")
    edit = add_block(older, MEMORY_GOVERNANCE, "AGENTS.md")
    assert edit.after == "# Mine\n\n" + block(MEMORY_GOVERNANCE) and "up to date" in edit.note


# --------------------------------------------------------------------------- setup --governance


@pytest.fixture
def world(tmp_path, monkeypatch):
    home = tmp_path / "codex"
    (home / "memories").mkdir(parents=True)
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "AGENTS.md").write_text("# Project rules\n\nRun the tests.\n")
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home, project


def test_governance_is_shown_then_written_then_removed_to_the_byte(world, capsys):
    home, project = world
    before = (project / "AGENTS.md").read_bytes()
    assert setup_codex(governance=True, cwd=str(project)) == 0
    shown = capsys.readouterr().out
    assert f"+++ {home / 'memories' / 'AGENTS.md'}" in shown and "+## Memory governance" in shown
    assert "+## Memory before edits" in shown and "Nothing was written" in shown
    assert not (home / "memories" / "AGENTS.md").exists()
    assert setup_codex(governance=True, apply=True, cwd=str(project)) == 0
    out = capsys.readouterr().out
    assert f"created {home / 'memories' / 'AGENTS.md'}" in out
    assert f"backup: {project / 'AGENTS.md'}.memcite-backup " in out
    assert (home / "memories" / "AGENTS.md").read_text() == block(MEMORY_GOVERNANCE)
    assert (project / "AGENTS.md").read_bytes() == before + b"\n" + block(PRE_RETRIEVAL).encode()
    assert setup_codex(remove=True, apply=True, cwd=str(project)) == 0
    assert (project / "AGENTS.md").read_bytes() == before
    assert not (home / "memories" / "AGENTS.md").exists()
    # memcite's own block alone was no file of yours: no backup of it in the memory folder
    assert sorted(p.name for p in (home / "memories").iterdir()) == []


def test_the_memory_folder_is_that_of_the_store_codex_reads(world):
    home, project = world
    (home / "config.toml").write_text("[memories]\nstore = \"v2\"\n[features]\nmemories_v2 = true\n")
    from memcite.ledger.codex_home import locate_codex_home

    folder = locate_codex_home(str(home)).memory_folder
    plan_args = dict(governance=True, memory_folder=folder, project_folder=str(project))
    plan = plan_setup(str(home), **plan_args)
    assert [c.path for c in plan.changes if c.changed][-2] == f"{folder}/AGENTS.md"


def test_a_block_the_person_edited_is_left_by_setup_and_by_remove(world, capsys):
    home, project = world
    setup_codex(governance=True, apply=True, cwd=str(project))
    agents = home / "memories" / "AGENTS.md"
    edited = agents.read_text().replace("two weeks", "three weeks")
    agents.write_text(edited)
    capsys.readouterr()
    setup_codex(governance=True, apply=True, cwd=str(project))
    assert "edited since memcite wrote them; left as is" in capsys.readouterr().out
    setup_codex(remove=True, apply=True, cwd=str(project))
    assert agents.read_text() == edited


def test_outside_a_git_repository_only_the_memory_folder_gets_directives(world, tmp_path, capsys):
    home, _ = world
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert setup_codex(governance=True, apply=True, cwd=str(elsewhere)) == 0
    assert "in no git repository" in capsys.readouterr().out
    assert not (elsewhere / "AGENTS.md").exists() and (home / "memories" / "AGENTS.md").exists()


def test_a_link_in_place_of_agents_md_is_refused(world, tmp_path, capsys):
    home, project = world
    target = tmp_path / "target.md"
    target.write_text("mine\n")
    (home / "memories" / "AGENTS.md").symlink_to(target)
    assert setup_codex(governance=True, apply=True, cwd=str(project)) == 3
    assert target.read_text() == "mine\n"


# --------------------------------------------------------------------------- setup --gate

GATE = ["/opt/memcite/bin/memcite"]


def test_gate_adds_a_pretooluse_hook_in_its_own_group_and_remove_takes_it_out(tmp_path):
    user = {"hooks": {"PreToolUse": [{"matcher": "^Bash$", "hooks": [
        {"type": "command", "command": "guard.sh"}]}]}}
    text = json.dumps(user, indent=4) + "\n"
    (tmp_path / "hooks.json").write_text(text)
    plan = plan_setup(tmp_path, gate=True, memcite=GATE)
    hooks = json.loads(plan.changes[0].after)["hooks"]
    assert hooks["PreToolUse"][0] == user["hooks"]["PreToolUse"][0]  # yours keeps its place
    assert hooks["PreToolUse"][1] == {"hooks": [{
        "type": "command", "command": "/opt/memcite/bin/memcite hook pre-tool", "timeout": 30}]}
    assert "\n    " in plan.changes[0].after  # the indent it had
    apply_plan(plan, now=NOW)
    assert not plan_setup(tmp_path, gate=True, memcite=GATE).changed  # idempotent
    removed = plan_setup(tmp_path, remove=True, memcite=GATE)
    apply_plan(removed, now=NOW)
    assert (tmp_path / "hooks.json").read_text() == text


def test_without_gate_no_pretooluse_hook_is_added(tmp_path):
    plan = plan_setup(tmp_path, memcite=GATE)
    assert "PreToolUse" not in json.loads(plan.changes[0].after)["hooks"]


def test_an_edited_gate_hook_is_left_by_remove(tmp_path):
    apply_plan(plan_setup(tmp_path, gate=True, memcite=GATE), now=NOW)
    document = json.loads((tmp_path / "hooks.json").read_text())
    document["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = 5
    (tmp_path / "hooks.json").write_text(json.dumps(document, indent=2) + "\n")
    plan = plan_setup(tmp_path, remove=True, memcite=GATE)
    assert "PreToolUse" in json.loads(plan.changes[0].after)["hooks"]
    assert any("PreToolUse hook" in note and "left as is" in note for note in plan.notes)


def test_gate_is_refused_when_this_memcite_has_no_pre_tool_command(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    result = runner.invoke(app, ["setup", "codex", "--gate", "--apply"])
    import typer.main

    from memcite.cli.codex_app import available_commands

    has = "hook pre-tool" in available_commands(typer.main.get_command(app))
    if has:
        assert result.exit_code == 0, result.output
    else:
        assert result.exit_code == 2
        assert "no `memcite hook pre-tool` command" in result.output
        assert not (tmp_path / "hooks.json").exists()


def test_gate_is_installed_when_the_command_is_there(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    assert setup_codex(gate=True, apply=True, commands=frozenset({"hook pre-tool"})) == 0
    hooks = json.loads((tmp_path / "hooks.json").read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["command"].endswith("memcite hook pre-tool")
    assert "hook PreToolUse:" in capsys.readouterr().out


def test_available_commands_sees_a_pre_tool_hook_command():
    import click

    from memcite.cli.codex_app import available_commands

    hook = click.Group("hook", commands=[click.Command("pre-tool"), click.Command("stop")])
    root = click.Group("memcite", commands=[hook])
    assert available_commands(root) == frozenset({"hook pre-tool"})
    bare = click.Group("memcite", commands=[click.Group("hook", commands=[click.Command("stop")])])
    assert available_commands(bare) == frozenset()
