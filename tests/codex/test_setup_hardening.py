"""``setup codex`` on hostile or unusual config folders: links, FIFOs, duplicated keys, deep
nesting. Each is refused with exit 3 and nothing written, or handled without a byte lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from memcite.codex.setup import SetupRefused, apply_plan, backup_name, plan_setup


def snapshot(*folders):
    """Every name and its bytes (or link target) under the folders."""
    found = {}
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder):
            for name in dirnames + filenames:
                path = os.path.join(dirpath, name)
                if os.path.islink(path):
                    found[path] = ("link", os.readlink(path))
                elif os.path.isfile(path):
                    found[path] = ("file", open(path, "rb").read())
    return found


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "codex"
    home.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    return home, outside


@pytest.mark.parametrize("name", ["config.toml", "hooks.json"])
def test_a_config_file_that_is_a_link_is_refused_and_kept(home, name):
    home, outside = home
    target = outside / name
    target.write_text('model = "x"\n' if name == "config.toml" else '{"hooks": {}}\n')
    (home / name).symlink_to(target)
    before = snapshot(home, outside)
    with pytest.raises(SetupRefused, match="symbolic link") as caught:
        apply_plan(plan_setup(home, mcp=True))
    assert caught.value.exit_code == 3 and str(target) in caught.value.message
    assert snapshot(home, outside) == before


def test_a_link_planted_after_the_plan_is_refused(home):
    home, outside = home
    (home / "config.toml").write_text('model = "x"\n')
    plan = plan_setup(home, mcp=True)
    (outside / "dotfile.toml").write_text('model = "x"\n')
    os.unlink(home / "config.toml")
    (home / "config.toml").symlink_to(outside / "dotfile.toml")
    before = snapshot(home, outside)
    with pytest.raises(SetupRefused) as caught:
        apply_plan(plan)
    assert caught.value.exit_code == 3
    assert snapshot(home, outside) == before


def test_a_link_at_the_old_predictable_backup_name_is_never_followed(home):
    home, outside = home
    (home / "config.toml").write_text('model = "x"\n')
    now = 1_800_000_000
    predictable = f"{home / 'config.toml'}.memcite-backup-" + time.strftime(
        "%Y%m%dT%H%M%SZ", time.gmtime(now))
    os.symlink(outside / "stolen.toml", predictable)
    backups = apply_plan(plan_setup(home, mcp=True), now=now)
    assert not (outside / "stolen.toml").exists()
    assert len(backups) == 1 and backups[0] != predictable
    assert open(backups[0]).read() == 'model = "x"\n'
    assert backup_name("/x/config.toml", now) != backup_name("/x/config.toml", now)


def test_a_fifo_config_is_refused_at_once(home):
    home, _ = home
    os.mkfifo(home / "config.toml")
    code = ("import sys; from memcite.codex.setup import plan_setup, SetupRefused\n"
            f"try:\n    plan_setup({str(home)!r}, mcp=True)\n"
            "except SetupRefused as e:\n    print(e.message); sys.exit(e.exit_code)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20)
    assert done.returncode == 3 and "FIFO" in done.stdout


def test_a_duplicated_key_in_hooks_json_is_refused_and_names_the_key(home):
    home, _ = home
    text = ('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine.sh"}]}], '
            '"Stop": [{"hooks": [{"type": "command", "command": "other.sh"}]}]}}')
    (home / "hooks.json").write_text(text)
    with pytest.raises(SetupRefused, match='"Stop" appears twice') as caught:
        plan_setup(home)
    assert caught.value.exit_code == 3
    assert (home / "hooks.json").read_text() == text


@pytest.mark.parametrize("name, text", [
    ("hooks.json", '{"hooks": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}"),
    ("config.toml", "a = " + "[" * 100_000 + "]" * 100_000 + "\n"),
])
def test_deep_nesting_is_refused_not_a_crash(home, name, text):
    home, _ = home
    (home / name).write_text(text)
    with pytest.raises(SetupRefused) as caught:
        plan_setup(home, mcp=True)
    assert caught.value.exit_code == 3
    assert (home / name).read_text() == text


def test_the_command_exits_3_with_the_reason(home, tmp_path):
    home, outside = home
    (outside / "config.toml").write_text('model = "x"\n')
    (home / "config.toml").symlink_to(outside / "config.toml")
    env = {**os.environ, "HOME": str(tmp_path), "CODEX_HOME": str(home)}
    done = subprocess.run([sys.executable, "-m", "memcite", "setup", "codex", "--apply"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 3, done.stderr
    assert "symbolic link" in done.stderr and "Traceback" not in done.stderr
    assert json.dumps(os.readlink(home / "config.toml"))  # the link is still there
