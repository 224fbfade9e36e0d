"""The README's promises: a quickstart that stays short, its two set-up commands (the CI
runs the test one), and only commands and options that exist. The command reference it
points at is checked in tests/base/test_docs.py."""

import re
from pathlib import Path

from typer.main import get_command

from memcite.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
README_PATH = ROOT / "README.md"
README = README_PATH.read_text(encoding="utf-8")
MAX_README_BYTES = 14_336


def _setup_commands() -> list[str]:
    section = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section)


def test_readme_gives_exactly_two_setup_commands():
    assert len(_setup_commands()) == 2


def test_the_setup_commands_are_the_known_ones():
    demo, tests = _setup_commands()
    assert demo == "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/memcite demo"
    assert tests == ("python3 -m venv .venv && .venv/bin/pip install --quiet '.[test]' "
                     "&& .venv/bin/python -m pytest -q")


def test_ci_runs_the_readme_test_command():
    test_command = _setup_commands()[1]
    assert "pytest" in test_command
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_ci_runs_the_readme_demo():
    assert "memcite\" demo" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _setup_commands()[0].endswith("memcite demo")


def test_the_readme_is_a_quickstart():
    size = len(README_PATH.read_bytes())
    assert size <= MAX_README_BYTES, f"README.md is {size} bytes (at most {MAX_README_BYTES}); move text to docs/"


def _commands() -> dict:
    """Every command by its full name, sub-commands of groups included (``note save``)."""
    found = {}
    for name, command in get_command(app).commands.items():
        if hasattr(command, "commands"):
            for sub, subcommand in command.commands.items():
                found[f"{name} {sub}"] = subcommand
        else:
            found[name] = command
    return found


def _options(command) -> set[str]:
    return {option for param in command.params
            for option in [*param.opts, *getattr(param, "secondary_opts", [])]
            if option.startswith("--")} | {"--help"}


def _invocations() -> list[str]:
    """Each ``memcite ...`` the README shows: in backticks, or a line of a code block."""
    spans = re.findall(r"`(memcite [^`\n]+)`", README)
    lines = [line.strip() for block in re.findall(r"```(?:sh|console)\n(.*?)```", README, re.DOTALL)
             for line in block.splitlines()]
    lines = [re.sub(r"^.*?(?=memcite )", "", line) for line in lines if "memcite " in line]
    return [re.sub(r"\s+#.*$", "", text) for text in spans + lines]


def test_every_command_the_readme_names_exists():
    commands = _commands()
    groups = {name.split()[0] for name in commands}
    invocations = _invocations()
    assert len(invocations) >= 8
    for text in invocations:
        words = text.split()[1:]
        if not words or not re.match(r"[a-z]", words[0]):  # `memcite --version`, `memcite ...`
            continue
        name = " ".join(words[:2]) if " ".join(words[:2]) in commands else words[0]
        assert name in commands or name in groups, text
        if name in commands:
            named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text))
            assert named <= _options(commands[name]), f"{text}: {sorted(named - _options(commands[name]))}"


def test_the_readme_walks_through_setting_up_codex():
    for step in ("memcite demo", "memcite setup codex --apply", "/hooks", "memcite doctor",
                 "memcite sync", "memcite stats"):
        assert step in README, step


def test_the_readme_says_the_published_name():
    assert "`codex-memcite`" in README and "pipx install ." in README
    assert "shared" + "/spec" not in README  # spelt in halves: tests/base/test_docs.py scans this file


def test_the_readme_gives_the_exit_codes():
    table = README.split("### Exit codes", 1)[1].split("\n#", 1)[0]
    for code in (0, 1, 2, 3, 130):
        assert re.search(rf"^\| `{code}` \|", table, re.MULTILINE), code


def test_the_readme_links_the_glossary_and_the_reference():
    for page in ("docs/glossary.md", "docs/commands.md", "docs/README.md"):
        assert f"]({page}" in README, page


def test_the_readme_says_how_to_install_before_the_package_is_published():
    # codex-memcite is not on PyPI yet: the README says so, how to install from the
    # repository (pipx from a clone or a git URL), and the name once published.
    flat = " ".join(README.split())
    assert "It is not on PyPI yet" in flat and "published under" not in flat
    assert "`pipx install .` in the checkout" in flat and "`pipx install 'git+URL'`" in flat
    assert "Once published, it will be `pipx install codex-memcite`" in flat
