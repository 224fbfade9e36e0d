"""Every command's --help, as a person reads it: placeholders instead of type names, the choices
of every option with a few allowed values, an example for every command a person runs by hand,
whole one-line summaries in each group's list, and no text copied from a sibling command.

The rules, for every command and sub-command (walked from the Typer app, so a new one is held
to them at once):

- no Python in the help: no type in angle brackets (``<str>``, ``<int range>``,
  ``<list[str]>``), no name in braces (``{thread_id}``), no ``x>=0`` bounds;
- every argument and every option that takes a value has a metavar, and it is one of
  ``memcite.cli.options.PLACEHOLDERS`` (``FILE``, ``ID``...), or the option's allowed values
  (``[codex|strict]``); the usage line names the arguments the same way;
- the options known to take one of a few values (``CHOICE_OPTIONS``) show them, the same
  values the fast path and the command bodies accept;
- every command a person runs by hand (all but ``HOOK_COMMANDS``) has an example: a
  paragraph starting with "Example", then a ``\\b`` block with a ``memcite ...`` line;
- in every group's list, each summary is the command's whole first paragraph on one line
  (never cut with "..."), at 80 columns; and no line of any help is wider than that;
- the long --codex-home text (Codex's SQLite home) only on ``SQLITE_HOME_COMMANDS``;
- no help copied from a sibling: ``note demote`` does not speak of promoting (nor
  ``promote`` of demoting), and no option of a command says it is "not for" that command.
"""

from __future__ import annotations

import re

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from memcite.cli import citations_commands, ledger_commands, lint_commands, readpath_commands
from memcite.cli.app import app
from memcite.cli.fastpath import FAST_COMMANDS
from memcite.cli.options import PLACEHOLDERS
from memcite.readpath.note_format import CONFIDENCES, SECTIONS, TIERS
from memcite.readpath.projects import SCOPES
from memcite.retention.rules import RULES

WIDTH = 80
runner = CliRunner()

# Run by Codex's hooks, never by hand: no example needed.
HOOK_COMMANDS = {"hook stop"}
# The commands that read Codex's memories database, found through its SQLite home.
SQLITE_HOME_COMMANDS = {"sync", "stats", "prune", "select", "show", "doctor", "mcp"}
# Options that take one of a few values, by name; each must show them in its metavar.
CHOICE_OPTIONS = {"--profile", "--errors", "--policy", "--rule", "--tokenizer", "--format",
                  "--section", "--confidence", "--tier", "--scope", "--to", "--scopes"}
# ... except where the same name takes a server (`push --to URL`).
URL_OPTIONS = {("push", "--to")}
# Where the allowed values are known, they are exactly the ones shown.
KNOWN_CHOICES = {
    ("parse", "--profile"): citations_commands.PROFILE_CHOICES,
    ("record", "--policy"): ledger_commands.POLICY_CHOICES,
    ("ingest", "--profile"): ledger_commands.PROFILE_CHOICES,
    ("instructions", "--profile"): readpath_commands.PROFILE_CHOICES,
    ("truncate", "--tokenizer"): readpath_commands.TOKENIZER_CHOICES,
    ("lint", "--format"): lint_commands.FORMATS,
    ("stats", "--rule"): RULES,
    ("note save", "--section"): tuple(SECTIONS),
    ("note save", "--confidence"): CONFIDENCES,
    ("note save", "--tier"): TIERS,
}
OPPOSITES = {"note promote": "demot", "note demote": "promot"}

CHOICES_FORM = re.compile(r"\[([A-Za-z0-9_-]+(?:\|[A-Za-z0-9_-]+)+)\](,\.\.\.)?")
TYPE_NAME = re.compile(r"<[a-z][a-z_ ]*(?:\[[^\]]*\])?>")
BRACED_NAME = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
BOUNDS = re.compile(r"(?<![\w-])x\s*[<>]=")


def _walk(command, path=()):
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():  # Typer vendors click
        yield from _walk(sub, (*path, name))


ROOT = get_command(app)
ALL = {" ".join(path): command for path, command in _walk(ROOT)}
LEAVES = {name: command for name, command in ALL.items() if not hasattr(command, "commands")}
GROUPS = {name: command for name, command in ALL.items() if hasattr(command, "commands")}


def _help(name: str, width: int = WIDTH) -> str:
    result = runner.invoke(app, [*name.split(), "--help"], terminal_width=width)
    assert result.exit_code == 0, (name, result.output)
    return result.output


def _value_params(command):
    """The parameters that take a value: arguments, and options that are not flags."""
    return [p for p in command.params
            if p.param_type_name == "argument" or not getattr(p, "is_flag", False)]


def _option(command, name):
    return next(p for p in command.params if name in getattr(p, "opts", ()))


def _first_paragraph(command) -> str:
    import inspect

    return " ".join(inspect.cleandoc(command.help or "").split("\n\n", 1)[0].split())


def test_the_walk_finds_every_command():
    assert {"parse", "record", "stats", "note save", "note demote", "hook stop",
            "setup codex"} <= set(LEAVES)
    assert {"", "note", "hook", "setup", "event", "conformance"} == set(GROUPS)


@pytest.mark.parametrize("name", sorted(ALL), ids=lambda n: n or "memcite")
def test_no_python_in_the_help(name):
    text = _help(name)
    assert not TYPE_NAME.search(text), (name, TYPE_NAME.search(text).group())
    assert not BRACED_NAME.search(text), (name, BRACED_NAME.search(text).group())
    assert not BOUNDS.search(text), (name, text)
    wide = [line for line in text.splitlines() if len(line) > WIDTH]
    assert not wide, (name, wide)


def _is_placeholder(metavar: str) -> bool:
    bare = metavar.removesuffix("...")
    return bare in PLACEHOLDERS or CHOICES_FORM.fullmatch(metavar) is not None


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_every_value_has_an_agreed_placeholder(name):
    command = LEAVES[name]
    for param in _value_params(command):
        label = getattr(param, "opts", [param.name])[0]
        assert param.metavar, f"memcite {name} {label}: no metavar"
        assert _is_placeholder(param.metavar), f"memcite {name} {label}: {param.metavar!r}"
        if param.param_type_name == "argument":
            assert param.metavar in PLACEHOLDERS, f"memcite {name} {label}: {param.metavar!r}"
        assert param.help, f"memcite {name} {label}: no help"
    usage = _help(name).split("\n", 1)[0]
    words = usage.removeprefix(f"Usage: memcite {name} ").split()
    assert words[0] == "[OPTIONS]", usage
    for word in words[1:]:
        bare = word.removesuffix("...").removeprefix("[").removesuffix("]")
        assert bare in PLACEHOLDERS, (name, usage)


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_options_with_choices_show_them(name):
    command = LEAVES[name]
    for param in command.params:
        option = next(iter(getattr(param, "opts", [])), "")
        if option in CHOICE_OPTIONS and (name, option) not in URL_OPTIONS:
            assert param.metavar and CHOICES_FORM.fullmatch(param.metavar), (name, option)
        described = re.fullmatch(r"(\w+): .*?(?:; (\w+): .*?)+", param.help or "")
        if described and param.param_type_name == "option" and not param.is_flag:
            # "text: one finding per line...; github: annotations...": the values, described
            assert param.metavar and CHOICES_FORM.fullmatch(param.metavar), (name, option)
    spec = FAST_COMMANDS.get(name)
    for option, kind in (spec.options.items() if spec else ()):
        if hasattr(kind, "choices"):  # the fast path's fastpath.choice(...)
            shown = CHOICES_FORM.fullmatch(_option(command, option).metavar)
            assert shown and tuple(shown.group(1).split("|")) == kind.choices, (name, option)


def test_the_known_choices_are_the_ones_shown():
    for (name, option), allowed in KNOWN_CHOICES.items():
        shown = CHOICES_FORM.fullmatch(_option(LEAVES[name], option).metavar)
        assert shown and tuple(shown.group(1).split("|")) == tuple(allowed), (name, option)
    for name in ("note save", "note recall", "note list"):
        shown = CHOICES_FORM.fullmatch(_option(LEAVES[name], "--scope").metavar)
        assert set(shown.group(1).split("|")) == set(SCOPES), name


@pytest.mark.parametrize("name", sorted(set(LEAVES) - HOOK_COMMANDS))
def test_every_hand_run_command_has_an_example(name):
    import inspect

    text = inspect.cleandoc(LEAVES[name].help or "")
    paragraphs = text.split("\n\n")
    heading = next((i for i, p in enumerate(paragraphs) if p.startswith("Example")), None)
    assert heading is not None, f"memcite {name}: no Examples paragraph"
    blocks = [p for p in paragraphs[heading + 1:] if p.startswith("\b\n")]
    assert blocks, f"memcite {name}: the example is not in a \\b block (click would rewrap it)"
    lines = [line.strip() for block in blocks for line in block.splitlines()[1:]]
    assert any(re.match(rf"(.*\| )?memcite {re.escape(name)}( |$)", line) for line in lines), \
        (name, lines)


@pytest.mark.parametrize("group", sorted(GROUPS), ids=lambda n: n or "memcite")
@pytest.mark.parametrize("width", [WIDTH, 100])
def test_summaries_are_whole_and_on_one_line(group, width):
    text = _help(group, width)
    # the root lists its commands in groups (``HELP_PANELS``), each under its heading
    listing = text.split("\nCommands:\n", 1)[1] if "\nCommands:\n" in text else \
        text.split("\nStart here:\n", 1)[1]
    rows = [line for line in listing.splitlines() if line.startswith("  ")]
    commands = GROUPS[group].commands
    assert len(rows) == len(commands), (group, rows)  # one line each: none wrapped
    for row in rows:
        name, summary = row.split(maxsplit=1)
        assert not summary.endswith("..."), (group, row)
        assert summary == _first_paragraph(commands[name]), (group, row)


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_codex_home_help_fits_the_command(name):
    command = LEAVES[name]
    home = next((p for p in command.params if "--codex-home" in getattr(p, "opts", ())), None)
    if home is None:
        return
    assert ("SQLite home" in home.help) == (name in SQLITE_HOME_COMMANDS), name


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_no_help_copied_from_a_sibling(name):
    command = LEAVES[name]
    texts = [command.help or ""] + [p.help or "" for p in command.params]
    last = name.split()[-1]
    for text in texts:
        assert not re.search(rf"not for [^.;)]*\b{re.escape(last)}\b", text), (name, text)
        if name in OPPOSITES:
            assert OPPOSITES[name] not in text.lower(), (name, text)


def test_the_command_list_comes_in_groups_with_demo_first():
    """Issue 40: 31 top-level commands in one flat list, `demo` in the middle."""
    from memcite.cli.app import HELP_PANELS

    listed = [name for names in HELP_PANELS.values() for name in names]
    assert sorted(listed) == sorted(ROOT.commands)  # each command in exactly one group
    assert {word.split()[0] for word in FAST_COMMANDS} <= set(listed)  # the fast path's too
    text = runner.invoke(app, ["--help"], terminal_width=WIDTH).stdout
    headings = [line[:-1] for line in text.splitlines() if line.endswith(":") and
                not line.startswith(" ") and line[:-1] in HELP_PANELS]
    assert headings == list(HELP_PANELS) and "\nCommands:" not in text
    rows = [line.split()[0] for line in text.split("Start here:\n", 1)[1].splitlines()
            if line.startswith("  ")]
    assert rows[:5] == ["demo", "setup", "doctor", "stats", "report"]
    start = text.split("Start here:\n", 1)[1].split("\n\n", 1)[0]
    for tool in ("parse", "strip", "truncate", "record", "schema", "conformance", "hook", "push"):
        assert f"  {tool} " not in start and f"  {tool} " in text
