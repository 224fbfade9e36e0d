"""The README's promises: the CI runs its test command, and every command it names exists."""

import re
from pathlib import Path

from typer.main import get_command

from memcite.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _setup_commands() -> list[str]:
    section = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section)


def test_readme_gives_exactly_two_setup_commands():
    assert len(_setup_commands()) == 2


def test_ci_runs_the_readme_test_command():
    test_command = _setup_commands()[1]
    assert "pytest" in test_command
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_every_command_in_the_readme_exists():
    named = set(re.findall(r"^### `memcite (\w+)", README, re.MULTILINE))
    assert named
    assert named <= set(get_command(app).commands)


def test_every_command_is_in_the_readme():
    named = set(re.findall(r"^### `memcite (\w+)", README, re.MULTILINE))
    assert set(get_command(app).commands) <= named
