"""The fast path's table (``memcite.cli.fastpath.FAST_COMMANDS``) is current with the Typer
app, both ways: each fast command takes exactly the options, flags, arguments and
environment variables its Typer command declares. (Typer's import is most of the start-up:
`benchmarks/bench_startup.py --no-fastpath` measures strip, record and the Stop hook at
about 22-25x `python -c pass` through Typer, against 2-4x on the fast path.)"""

from __future__ import annotations

import pytest
from typer.main import get_command

from memcite.cli.app import app
from memcite.cli.fastpath import FAST_COMMANDS

ROOT = get_command(app)


def _command(name: str):
    command = ROOT
    for word in name.split():
        command = command.commands[word]
    return command


def _declared(command) -> tuple[set[str], set[str], list[str], dict[str, str]]:
    """``(options taking a value, flags, arguments, {parameter: environment variable})``."""
    options, flags, arguments, envvars = set(), set(), [], {}
    for param in command.params:
        if param.param_type_name == "argument":
            arguments.append(param.name)
            continue
        long = [opt for opt in param.opts if opt.startswith("--")]
        if not long or long[0] == "--help":
            continue
        (flags if param.is_flag else options).add(long[0])
        if param.envvar:
            envvars[param.name] = param.envvar
    return options, flags, arguments, envvars


@pytest.mark.parametrize("name", sorted(FAST_COMMANDS))
def test_the_fast_table_declares_what_the_typer_command_declares(name):
    spec = FAST_COMMANDS[name]
    options, flags, arguments, envvars = _declared(_command(name))
    assert set(spec.options) == options, name
    assert set(spec.flags) == flags, name
    assert list(spec.positionals) == arguments, name
    assert spec.envvars == envvars, name


def test_no_location_variable_is_copied_into_an_option():
    """CODEX_HOME and MEMCITE_DB are read by memcite.paths alone (so that a message knows an
    option from a variable): neither Typer nor the fast path turns them into options."""
    for name, spec in FAST_COMMANDS.items():
        assert not {"CODEX_HOME", "MEMCITE_DB"} & set(spec.envvars.values()), name

    def leaves(group, prefix=""):
        for word, command in group.commands.items():
            if hasattr(command, "commands"):
                yield from leaves(command, f"{prefix}{word} ")
            else:
                yield f"{prefix}{word}", command

    for name, command in leaves(ROOT):
        envvars = set(_declared(command)[3].values())
        assert not {"CODEX_HOME", "MEMCITE_DB", "CODEX_SQLITE_HOME"} & envvars, name
