"""``memcite setup codex``: hooks.json merged, config.toml edited around the user's bytes, undone exactly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.cli.codex_commands import setup_codex
from memcite.codex.setup import (
    MCP_BLOCK,
    STOP_COMMAND,
    SetupRefused,
    apply_plan,
    codex_hook_hash,
    plan_setup,
    trust_state,
)

CONFIG = """\
# Codex settings, kept by hand
model = "gpt-5-codex"   # the default model
approval_policy = "on-request"

[features]
memories = true   # on since January

[mcp_servers.docs]
command = "docs-server"
args = ["--stdio"]
env = { TOKEN_FILE = "~/.docs-token" }

# profiles below
[profiles.fast]
model = "gpt-5-mini"
"""

USER_HOOKS = {
    "hooks": {
        "PreToolUse": [{"matcher": "^Bash$", "hooks": [{"type": "command", "command": "guard.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify.sh", "timeout": 5}]}],
    }
}


def full_setup(folder, **options):
    plan = plan_setup(folder, lint=options.get("lint", False), mcp=options.get("mcp", True),
                      remove=options.get("remove", False))
    apply_plan(plan, now=1_800_000_000)
    return plan


def test_on_an_empty_home_it_creates_both_files_and_remove_takes_them_away(tmp_path):
    plan = full_setup(tmp_path)
    hooks = json.loads((tmp_path / "hooks.json").read_text())
    handler = {"type": "command", "command": STOP_COMMAND, "timeout": 30}
    # a subagent's turn fires SubagentStop, not Stop: both run the same command
    assert hooks == {"hooks": {"Stop": [{"hooks": [handler]}], "SubagentStop": [{"hooks": [handler]}]}}
    assert (tmp_path / "config.toml").read_text() == MCP_BLOCK
    assert tomllib.loads(MCP_BLOCK)["mcp_servers"]["memcite"] == {"command": "memcite",
                                                                   "args": ["mcp"]}
    assert not list(tmp_path.glob("*.memcite-backup-*"))  # nothing existed to back up
    assert "--- /dev/null" in plan.diff()
    full_setup(tmp_path, remove=True)
    assert sorted(p.name for p in tmp_path.iterdir() if "backup" not in p.name) == []


def test_the_absolute_memcite_and_the_codex_home_go_into_the_entries(tmp_path):
    memcite = ["/opt/venv with space/bin/memcite"]
    env = {"MEMCITE_DB": '/data/"odd"\\name.sqlite'}
    apply_plan(plan_setup(tmp_path, lint=True, mcp=True, memcite=memcite, codex_home="/home/u/.codex",
                          env=env), now=1_800_000_000)
    hooks = json.loads((tmp_path / "hooks.json").read_text())["hooks"]
    assert hooks["Stop"][0]["hooks"][0]["command"] == "'/opt/venv with space/bin/memcite' hook stop"
    assert hooks["PostToolUse"][0]["hooks"][0]["command"] == \
        "'/opt/venv with space/bin/memcite' lint --hook"
    entry = tomllib.loads((tmp_path / "config.toml").read_text())["mcp_servers"]["memcite"]
    assert entry == {"command": memcite[0], "args": ["mcp", "--codex-home", "/home/u/.codex"],
                     "env": env}
    assert not plan_setup(tmp_path, lint=True, mcp=True, memcite=memcite, codex_home="/home/u/.codex",
                          env=env).changed
    full_setup(tmp_path, remove=True)
    assert sorted(p.name for p in tmp_path.iterdir() if "backup" not in p.name) == []


def test_an_earlier_setup_with_a_bare_memcite_is_brought_up_to_date(tmp_path):
    full_setup(tmp_path)  # hooks and MCP entry running a bare `memcite`, no home in the entry
    plan = plan_setup(tmp_path, mcp=True, memcite=["/v/bin/memcite"], codex_home="/h")
    apply_plan(plan, now=1_800_000_001)
    hooks = json.loads((tmp_path / "hooks.json").read_text())["hooks"]
    assert [group["hooks"][0]["command"] for group in hooks["Stop"]] == ["/v/bin/memcite hook stop"]
    assert any("trust it again" in note for note in plan.notes)
    entry = tomllib.loads((tmp_path / "config.toml").read_text())["mcp_servers"]["memcite"]
    assert entry == {"command": "/v/bin/memcite", "args": ["mcp", "--codex-home", "/h"]}


def test_config_bytes_outside_memcites_table_are_unchanged(tmp_path):
    (tmp_path / "config.toml").write_text(CONFIG)
    full_setup(tmp_path)
    after = (tmp_path / "config.toml").read_text()
    assert after == CONFIG + "\n" + MCP_BLOCK
    backup = tmp_path / "config.toml.memcite-backup"
    assert backup.read_text() == CONFIG and not list(tmp_path.glob("*.memcite-backup-*"))
    parsed = tomllib.loads(after)
    assert parsed["mcp_servers"]["docs"]["command"] == "docs-server"
    # Codex then records the user's trust after our table; removing leaves that too
    trusted = after + '\n[hooks.state."/x/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:1"\n'
    (tmp_path / "config.toml").write_text(trusted)
    full_setup(tmp_path, remove=True)
    assert (tmp_path / "config.toml").read_text() == \
        CONFIG + '\n[hooks.state."/x/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:1"\n'


@pytest.mark.parametrize("text", ['model = "x"', 'model = "x"\n', 'model = "x"\n\n', "# only\n\n\n"])
def test_apply_then_remove_gives_back_the_exact_bytes(tmp_path, text):
    (tmp_path / "config.toml").write_text(text)
    hooks = json.dumps(USER_HOOKS)  # no final newline, compact
    (tmp_path / "hooks.json").write_text(hooks)
    full_setup(tmp_path)
    after = (tmp_path / "config.toml").read_text()
    assert after.startswith(text) and after.endswith(MCP_BLOCK)
    assert not (tmp_path / "hooks.json").read_text().endswith("\n")
    full_setup(tmp_path, remove=True)
    assert (tmp_path / "config.toml").read_text() == text
    assert json.loads((tmp_path / "hooks.json").read_text()) == USER_HOOKS
    assert not (tmp_path / "hooks.json").read_text().endswith("\n")


def test_hooks_are_merged_with_the_users_and_removed_exactly(tmp_path):
    original = json.dumps(USER_HOOKS, indent=2) + "\n"
    (tmp_path / "hooks.json").write_text(original)
    full_setup(tmp_path, lint=True)
    hooks = json.loads((tmp_path / "hooks.json").read_text())["hooks"]
    assert hooks["PreToolUse"] == USER_HOOKS["hooks"]["PreToolUse"]
    assert hooks["Stop"][0] == USER_HOOKS["hooks"]["Stop"][0]
    assert hooks["Stop"][1]["hooks"][0]["command"] == STOP_COMMAND
    assert hooks["PostToolUse"] == [{"hooks": [
        {"type": "command", "command": "memcite lint --hook", "timeout": 30}]}]
    full_setup(tmp_path, remove=True)
    assert (tmp_path / "hooks.json").read_text() == original


def test_the_files_indent_is_kept(tmp_path):
    (tmp_path / "hooks.json").write_text(json.dumps(USER_HOOKS, indent=4) + "\n")
    full_setup(tmp_path)
    assert '\n    "hooks": {' in (tmp_path / "hooks.json").read_text()


def test_running_twice_changes_nothing(tmp_path):
    (tmp_path / "config.toml").write_text(CONFIG)
    full_setup(tmp_path, lint=True)
    again = plan_setup(tmp_path, lint=True, mcp=True)
    assert not again.changed and again.diff() == ""


def test_a_hook_added_by_hand_is_not_added_twice(tmp_path):
    (tmp_path / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": " memcite hook stop", "timeout": 10}]}]}}))
    plan = plan_setup(tmp_path)
    after = json.loads(plan.changes[0].after)["hooks"]
    assert after["Stop"] == [{"hooks": [{"type": "command", "command": " memcite hook stop",
                                         "timeout": 10}]}]
    assert list(after) == ["Stop", "SubagentStop"]


def test_entries_changed_since_are_left_alone_on_remove(tmp_path):
    full_setup(tmp_path)
    hooks = json.loads((tmp_path / "hooks.json").read_text())
    for event in ("Stop", "SubagentStop"):
        hooks["hooks"][event][0]["hooks"][0]["timeout"] = 99
    (tmp_path / "hooks.json").write_text(json.dumps(hooks))
    (tmp_path / "config.toml").write_text(MCP_BLOCK.replace('["mcp"]', '["mcp", "--x"]'))
    plan = plan_setup(tmp_path, remove=True)
    assert not plan.changed
    assert len(plan.notes) == 3 and all("left as is" in note for note in plan.notes)


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("hooks.json", "{not json", "not valid JSON"),
        ("hooks.json", "[]", "not a JSON object"),
        ("hooks.json", '{"hooks": []}', '"hooks" is not an object'),
        ("hooks.json", '{"hooks": {"Stop": {}}}', "not a list of matcher groups"),
        ("config.toml", "model = ", "not valid TOML"),
        ("config.toml", 'mcp_servers = { docs = { command = "d" } }\n', "inline table"),
    ],
)
def test_files_it_cannot_edit_safely_are_refused_untouched(tmp_path, name, text, words):
    (tmp_path / name).write_text(text)
    with pytest.raises(SetupRefused, match=words) as caught:
        plan_setup(tmp_path, mcp=True)
    assert caught.value.exit_code == 3
    assert (tmp_path / name).read_text() == text
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_an_existing_different_mcp_entry_is_kept(tmp_path):
    text = '[mcp_servers.memcite]\ncommand = "/opt/memcite"\nargs = ["mcp"]\nrequired = true\n'
    (tmp_path / "config.toml").write_text(text)
    plan = plan_setup(tmp_path, mcp=True)
    assert not plan.changes[1].changed and "differs" in plan.notes[0]


def test_hooks_turned_off_are_pointed_out(tmp_path):
    (tmp_path / "config.toml").write_text("[features]\nhooks = false\n")
    assert any("turned off" in note for note in plan_setup(tmp_path).notes)


# --------------------------------------------------------------------------- the command


def test_without_apply_it_shows_the_diff_and_writes_nothing(tmp_path, capsys):
    (tmp_path / "config.toml").write_text(CONFIG)
    assert setup_codex(codex_home=str(tmp_path), commands=frozenset({"mcp"})) == 0
    out = capsys.readouterr().out
    assert f"+++ {tmp_path / 'hooks.json'}" in out and "+[mcp_servers.memcite]" in out
    assert "Nothing was written" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_apply_then_tells_the_user_to_trust_the_hook(tmp_path, capsys):
    assert setup_codex(codex_home=str(tmp_path), apply=True) == 0
    out = capsys.readouterr().out
    assert f"created {tmp_path / 'hooks.json'}" in out
    assert "/hooks" in out and "trust" in out
    assert "no `memcite mcp` command" in out  # this memcite has none: not wired in
    assert not (tmp_path / "config.toml").exists()
    assert setup_codex(codex_home=str(tmp_path), apply=True) == 0
    assert "nothing to change" in capsys.readouterr().out


def test_setup_names_each_hook_with_its_trust_and_asks_only_while_one_is_untrusted(tmp_path, capsys):
    assert setup_codex(codex_home=str(tmp_path), apply=True) == 0
    out = capsys.readouterr().out
    assert "hook Stop: " in out and "hook SubagentStop: " in out and "(untrusted in Codex)" in out
    assert "trust memcite's Stop and SubagentStop hooks" in out
    hooks = json.loads((tmp_path / "hooks.json").read_text())["hooks"]
    trust = "".join(
        f'[hooks.state."{tmp_path / "hooks.json"}:{label}:0:0"]\n'
        f'trusted_hash = "{codex_hook_hash(event, hooks[event][0]["hooks"][0])}"\n'
        for event, label in (("Stop", "stop"), ("SubagentStop", "subagent_stop")))
    (tmp_path / "config.toml").write_text(trust)
    assert setup_codex(codex_home=str(tmp_path), apply=True) == 0
    again = capsys.readouterr().out
    assert again.count("(trusted in Codex)") == 2 and "One step only you can take" not in again


def test_project_setup_goes_to_the_repositorys_codex_folder(tmp_path, capsys):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    code = setup_codex(project=True, apply=True, cwd=str(repo / "src"))
    assert code == 0
    assert (repo / ".codex" / "hooks.json").is_file()


def test_bad_usage_and_a_missing_home(tmp_path, capsys):
    assert setup_codex(codex_home=str(tmp_path), project=True) == 2
    assert setup_codex(codex_home=str(tmp_path / "none")) == 2
    assert "no such folder" in capsys.readouterr().err


def test_the_cli_round_trip(tmp_path):
    (tmp_path / "config.toml").write_text(CONFIG)
    runner = CliRunner()
    shown = runner.invoke(app, ["setup", "codex", "--codex-home", str(tmp_path)])
    assert shown.exit_code == 0 and "Nothing was written" in shown.stdout
    done = runner.invoke(app, ["setup", "codex", "--codex-home", str(tmp_path), "--apply"])
    assert done.exit_code == 0 and (tmp_path / "hooks.json").exists()
    undone = runner.invoke(app, ["setup", "codex", "--codex-home", str(tmp_path), "--remove",
                                 "--apply"])
    assert undone.exit_code == 0 and "removed" in undone.stdout
    assert not (tmp_path / "hooks.json").exists()
    assert (tmp_path / "config.toml").read_text() == CONFIG


def test_a_refusal_exits_3_through_a_real_process(tmp_path):
    (tmp_path / "hooks.json").write_text("{")
    done = subprocess.run([sys.executable, "-m", "memcite", "setup", "codex", "--codex-home",
                           str(tmp_path), "--apply"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3 and "not valid JSON" in done.stderr
    assert (tmp_path / "hooks.json").read_text() == "{"


# --------------------------------------------------------------------------- trust records


def test_the_trust_hash_follows_codexs_normalization():
    handler = {"type": "command", "command": STOP_COMMAND, "timeout": 30}
    stop = codex_hook_hash("Stop", handler)
    assert stop.startswith("sha256:") and len(stop) == 71
    assert codex_hook_hash("Stop", handler, matcher="x") == stop  # Stop ignores matchers
    assert codex_hook_hash("PostToolUse", handler, matcher="x") != codex_hook_hash(
        "PostToolUse", handler)
    assert codex_hook_hash("Stop", {**handler, "timeout": 31}) != stop
    # an absent timeout is Codex's default of 600
    assert codex_hook_hash("Stop", {"type": "command", "command": STOP_COMMAND}) == \
        codex_hook_hash("Stop", {**handler, "timeout": 600})


@pytest.mark.parametrize(
    ("state", "status"),
    [
        (None, "untrusted"),
        ({"enabled": True}, "untrusted"),
        ({"trusted_hash": "sha256:00"}, "modified"),
        ({"trusted_hash": "CURRENT"}, "trusted"),
        ({"trusted_hash": "CURRENT", "enabled": False}, "disabled"),
    ],
)
def test_trust_records_are_read_by_key(tmp_path, state, status):
    handler = {"type": "command", "command": STOP_COMMAND, "timeout": 30}
    path = str(tmp_path / "hooks.json")
    config = {}
    if state is not None:
        state = {k: codex_hook_hash("Stop", handler) if v == "CURRENT" else v
                 for k, v in state.items()}
        config = {"hooks": {"state": {f"{os.path.abspath(path)}:stop:1:0": state}}}
    trust = trust_state(path, "Stop", 1, 0, handler, config)
    assert trust.status == status and trust.key.endswith(":stop:1:0")


def test_removing_says_when_the_users_hooks_move_up_a_place(tmp_path):
    full_setup(tmp_path)
    hooks = json.loads((tmp_path / "hooks.json").read_text())
    hooks["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "later.sh"}]})
    (tmp_path / "hooks.json").write_text(json.dumps(hooks, indent=2) + "\n")
    plan = plan_setup(tmp_path, remove=True)
    assert any("move up one place" in note for note in plan.notes)
    apply_plan(plan)
    assert json.loads((tmp_path / "hooks.json").read_text())["hooks"]["Stop"] == [
        {"hooks": [{"type": "command", "command": "later.sh"}]}]
    assert not any("move up" in note for note in plan_setup(tmp_path, remove=True).notes)


# --------------------------------------------------------------------------- issue 40


def _setup(home, *args):
    return CliRunner().invoke(app, ["setup", "codex", "--codex-home", str(home), *args])


def test_rounds_of_apply_and_remove_keep_at_most_one_backup_per_file(tmp_path):
    """Issue 40: every apply and remove added a timestamped backup (9 after a few rounds)."""
    (tmp_path / "config.toml").write_text(CONFIG)
    (tmp_path / "hooks.json").write_text(json.dumps(USER_HOOKS))
    for _ in range(3):
        done = _setup(tmp_path, "--apply", "--trust")
        assert done.exit_code == 0, done.output
        assert f"backup: {tmp_path / 'config.toml'}.memcite-backup " in done.stdout
        assert sorted(p.name for p in tmp_path.glob("*backup*")) == [
            "config.toml.memcite-backup", "hooks.json.memcite-backup"]
        undone = _setup(tmp_path, "--remove", "--apply")
        assert undone.exit_code == 0, undone.output
        assert f"given back: {tmp_path / 'config.toml'}, as it was before setup" in undone.stdout
        assert (tmp_path / "config.toml").read_text() == CONFIG
        assert (tmp_path / "hooks.json").read_text() == json.dumps(USER_HOOKS)
        assert not list(tmp_path.glob("*backup*"))  # back as found: nothing left behind


def test_remove_takes_out_the_trust_entries_codex_wrote_for_memcite_s_hooks_only(tmp_path):
    """Issue 40: the [hooks.state] entries stayed, so a later apply was trusted at once."""
    (tmp_path / "config.toml").write_text(CONFIG)
    assert _setup(tmp_path, "--apply").exit_code == 0
    os.unlink(tmp_path / "config.toml.memcite-backup")  # no backup: the entries go on their own
    hooks = json.loads((tmp_path / "hooks.json").read_text())["hooks"]
    path = tmp_path / "hooks.json"
    codex_wrote = "".join(  # as Codex's config writer lays them out, with another hook's
        f'\n[hooks.state."{path}:{label}:0:0"]\n'
        f'trusted_hash = "{codex_hook_hash(event, hooks[event][0]["hooks"][0])}"\n'
        for event, label in (("Stop", "stop"), ("SubagentStop", "subagent_stop")))
    other = '\n[hooks.state."/elsewhere/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:1"\n'
    (tmp_path / "config.toml").write_text(CONFIG + codex_wrote + other)
    assert "(trusted in Codex)" in _setup(tmp_path, "--apply").stdout
    assert _setup(tmp_path, "--remove", "--apply").exit_code == 0
    left = tomllib.loads((tmp_path / "config.toml").read_text())
    assert list(left["hooks"]["state"]) == ["/elsewhere/hooks.json:stop:0:0"]
    assert left == tomllib.loads(CONFIG + other)
    again = _setup(tmp_path, "--apply")
    assert "(trusted in Codex)" not in again.stdout and "(untrusted in Codex)" in again.stdout


def test_trust_writes_codex_s_entries_for_memcite_s_hooks_only(tmp_path):
    user_hook = {"type": "command", "command": "notify.sh", "timeout": 5}
    (tmp_path / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [user_hook]}]}}))
    (tmp_path / "config.toml").write_text(CONFIG)
    shown = _setup(tmp_path, "--trust")
    assert shown.exit_code == 0 and "+trusted_hash = " in shown.stdout
    assert (tmp_path / "config.toml").read_text() == CONFIG  # shown, not written
    done = _setup(tmp_path, "--apply", "--trust")
    assert done.exit_code == 0, done.output
    assert done.stdout.count("(trusted in Codex)") == 3 and "/hooks, and trust" not in done.stdout
    config = tomllib.loads((tmp_path / "config.toml").read_text())
    hooks = json.loads((tmp_path / "hooks.json").read_text())["hooks"]
    path = tmp_path / "hooks.json"
    assert config["hooks"]["state"] == {  # memcite's Stop is the second group; notify.sh untouched
        f"{path}:stop:1:0": {"trusted_hash": codex_hook_hash("Stop", hooks["Stop"][1]["hooks"][0])},
        f"{path}:subagent_stop:0:0": {
            "trusted_hash": codex_hook_hash("SubagentStop", hooks["SubagentStop"][0]["hooks"][0])},
        f"{path}:post_tool_use:0:0": {
            "trusted_hash": codex_hook_hash("PostToolUse", hooks["PostToolUse"][0]["hooks"][0])}}
    assert (tmp_path / "config.toml").read_text().startswith(CONFIG)  # your bytes, then ours
    assert "nothing to change" in _setup(tmp_path, "--apply", "--trust").stdout


def test_trust_sets_the_hash_in_an_entry_codex_already_has(tmp_path):
    """A modified hook (its entry holds an old hash, and `enabled`) is trusted in place."""
    assert _setup(tmp_path, "--apply").exit_code == 0
    key = f"{tmp_path / 'hooks.json'}:stop:0:0"
    (tmp_path / "config.toml").write_text(f'[hooks.state."{key}"]\ntrusted_hash = "sha256:0"\n'
                                          "enabled = true\n")
    done = _setup(tmp_path, "--apply", "--trust")
    assert done.exit_code == 0, done.output
    state = tomllib.loads((tmp_path / "config.toml").read_text())["hooks"]["state"]
    assert state[key]["enabled"] is True and state[key]["trusted_hash"] != "sha256:0"
    assert done.stdout.count("(trusted in Codex)") == 3


def test_trust_in_a_project_goes_to_the_codex_home_s_config(tmp_path, monkeypatch):
    repo, home = tmp_path / "repo", tmp_path / "home"
    (repo / ".git").mkdir(parents=True)
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert setup_codex(project=True, apply=True, trust=True, cwd=str(repo)) == 0
    state = tomllib.loads((home / "config.toml").read_text())["hooks"]["state"]
    assert set(state) == {f"{repo / '.codex' / 'hooks.json'}:stop:0:0",
                          f"{repo / '.codex' / 'hooks.json'}:subagent_stop:0:0"}
    assert setup_codex(project=True, remove=True, apply=True, cwd=str(repo)) == 0
    assert not (home / "config.toml").exists()


def test_trust_with_remove_is_bad_usage(tmp_path):
    refused = _setup(tmp_path, "--remove", "--trust")
    assert refused.exit_code == 2 and "--trust and --remove" in refused.output


def test_the_help_names_every_hook_setup_adds_and_the_mcp_server():
    """Issue 40: the help said it adds "the Stop hook and MCP server"; it adds three hooks."""
    from memcite.codex.setup import HOOK_ARGS, LINT_ARGS, STOP_ARGS

    shown = " ".join(CliRunner().invoke(app, ["setup", "codex", "--help"]).stdout.split())
    added = [event for event, args in HOOK_ARGS.items() if args in (STOP_ARGS, LINT_ARGS)]
    assert added == ["Stop", "SubagentStop", "PostToolUse"]
    for event in added:
        assert event in shown, event
    assert "Three hooks go into hooks.json" in shown and "MCP server (`memcite mcp`)" in shown
    assert "Add memcite's Stop hook and MCP server" not in shown
