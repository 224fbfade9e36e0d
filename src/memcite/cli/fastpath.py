"""A light argument reader for the commands that run once per agent reply.

Typer and click cost several times Python's own start-up, so the per-reply
commands (``strip``, ``parse``, ``record``, ...) are first offered here: when
the arguments are plain options of a known command, the command body runs
without importing Typer. Anything else (``--help``, an unknown option, a bad
value) returns ``None`` and Typer reads the arguments and reports the problem.
The command bodies are the same functions Typer's commands call, and
the CLI tests (``test_fast_path_*`` in ``tests/test_cli_*.py``) check that both
paths print the same bytes.
"""

from __future__ import annotations

import os
from importlib import import_module


class FastCommand:
    """How to read one command's arguments without Typer, and which function runs it.

    A plain class (not a dataclass): this module is imported by every command.
    """

    __slots__ = ("target", "positionals", "variadic", "options", "flags", "defaults", "envvars",
                 "tolerant")

    def __init__(
        self,
        target: str,  # "module:function"; called with keyword arguments, returns an exit code
        positionals: tuple[str, ...] = (),  # names of optional positional arguments, in order
        variadic: bool = False,  # the last positional takes every remaining argument, as a list
        options: dict[str, type] | None = None,  # "--max-bytes": int
        flags: tuple[str, ...] = (),  # "--json": boolean, False unless given
        defaults: dict[str, object] | None = None,  # a flag's value when not given (else False)
        envvars: dict[str, str] | None = None,  # kwarg name -> environment variable
        # A hook's command: arguments it cannot read are passed on as ``ignored_args`` rather
        # than handed to Typer, whose usage error (exit 2) would reach the agent.
        tolerant: bool = False,
    ) -> None:
        self.target = target
        self.positionals = positionals
        self.variadic = variadic
        self.options = {} if options is None else options
        self.flags = flags
        self.defaults = {} if defaults is None else defaults
        self.envvars = {} if envvars is None else envvars
        self.tolerant = tolerant

    def __repr__(self) -> str:
        return f"FastCommand(target={self.target!r}, positionals={self.positionals!r}, ...)"


def choice(*allowed: str):
    """An option type that accepts only ``allowed`` (anything else goes to Typer, which explains)."""

    def check(value: str) -> str:
        if value not in allowed:
            raise ValueError(value)
        return value

    check.choices = allowed
    return check


# The largest number each kind of option takes. Typer's options say them (``max=``) and the
# fast path holds to them, so a value past one is refused with exit 2 and a message, never
# carried into SQLite, a buffer or a clock as a traceback.
BYTES_MAX = 2**32  # --max-bytes: 4 GiB, read into memory at most once
COUNT_MAX = 10**9  # --limit, --budget, --n, --batch, --max-cases
DAYS_MAX = 100_000  # --max-unused-days: about 270 years
SECONDS_MAX = 365 * 86400  # --confirm-ttl: a year
SEED_MAX = 2**63 - 1  # --seed, either sign


def at_least_one(value: str) -> float:
    """A number of seconds, 1 to ``SECONDS_MAX`` (anything else goes to Typer, which explains)."""
    number = float(value)
    if not 1 <= number <= SECONDS_MAX:
        raise ValueError(value)
    return number


def int_between(low: int, high: int):
    """An option type for sizes and counts: an integer from ``low`` to ``high`` (anything else
    goes to Typer, which explains)."""

    def check(value: str) -> int:
        number = int(value)
        if not low <= number <= high:
            raise ValueError(value)
        return number

    return check


positive_int = int_between(1, BYTES_MAX)  # --max-bytes
COUNT = int_between(0, COUNT_MAX)
DAYS = int_between(0, DAYS_MAX)


PROFILE = choice("codex", "strict")
ERRORS = choice("strict", "replace")

_NOTE_COMMON = {"--cwd": str, "--codex-home": str, "--scope": str, "--session": str}

# Each entry mirrors a Typer command in memcite.cli.app; keep the two in step
# (the CLI tests compare the option names with the Typer commands).
FAST_COMMANDS: dict[str, FastCommand] = {
    "strip": FastCommand(
        target="memcite.cli.citations_commands:strip",
        positionals=("source",),
        options={"--profile": PROFILE, "--errors": ERRORS, "--max-bytes": positive_int},
    ),
    "parse": FastCommand(
        target="memcite.cli.citations_commands:parse",
        positionals=("source",),
        options={"--profile": PROFILE, "--errors": ERRORS, "--max-bytes": positive_int},
        flags=("--json",),
    ),
    "instructions": FastCommand(
        target="memcite.cli.readpath_commands:instructions",
        options={
            "--cwd": str,
            "--memory-root": str,
            "--codex-home": str,
            "--budget": COUNT,
            "--tokenizer": str,
            "--profile": str,
            "--errors": str,
            "--bpe-file": str,
            "--session": str,
            "--scopes": str,
        },
        flags=("--json", "--explain", "--no-cache"),
        envvars={"bpe_file": "MEMCITE_BPE_FILE",
                 "session": "MEMCITE_SESSION"},
    ),
    "stats": FastCommand(
        target="memcite.cli.retention_commands:stats",
        options={
            "--db": str,
            "--codex-home": str,
            "--max-unused-days": DAYS,
            "--rule": choice("memcite", "codex"),
            "--as-of": str,
            "--since": str,
            "--limit": COUNT,
            "--machine": str,
            "--project": str,
        },
        flags=("--json", "--no-cache", "--judge-without-usage", "--full"),
    ),
    "report": FastCommand(
        target="memcite.cli.report_commands:report",
        options={"--output": str, "--codex-home": str, "--db": str, "--as-of": str, "--since": str},
        flags=("--open", "--judge-without-usage"),
    ),
    # A read-only audit of a whole home: its start-up is a fifth of a 5,000-line MEMORY.md's.
    "audit": FastCommand(
        target="memcite.cli.audit_commands:audit",
        options={"--codex-home": str, "--project": str, "--format": choice("text", "json", "sarif"),
                 "--db": str},
        flags=("--json", "--quarantine", "--apply"),
    ),
    "truncate": FastCommand(
        target="memcite.cli.readpath_commands:truncate",
        positionals=("source",),
        options={
            "--budget": COUNT,
            "--tokenizer": str,
            "--bpe-file": str,
            "--errors": str,
            "--max-bytes": positive_int,
        },
        envvars={"bpe_file": "MEMCITE_BPE_FILE"},
    ),
    "lint": FastCommand(
        target="memcite.cli.lint_commands:lint",
        positionals=("paths",),
        variadic=True,
        options={"--format": choice("text", "github"), "--codex-home": str},
        flags=("--json", "--strict", "--hook"),
    ),
    "record": FastCommand(
        target="memcite.cli.ledger_commands:record",
        positionals=("source",),
        options={
            "--db": str,
            "--codex-home": str,
            "--jsonl": str,
            "--policy": choice("default", "codex"),
            "--profile": PROFILE,
            "--errors": ERRORS,
            "--max-bytes": positive_int,
            "--id": str,
            "--at": str,
            "--thread-id": str,
            "--cwd": str,
        },
        flags=("--json",),
    ),
    # An explicit re-ingest of an unchanged file is one look-up: Typer's start-up would be
    # most of it. --no-progress (and --help) go to Typer; progress None: only on a terminal.
    "ingest": FastCommand(
        target="memcite.cli.ledger_commands:ingest",
        positionals=("rollouts",),
        variadic=True,
        options={
            "--db": str,
            "--codex-home": str,
            "--since": str,
            "--policy": choice("default", "codex"),
            "--profile": PROFILE,
            "--max-bytes": positive_int,
        },
        flags=("--json", "--progress"),
        defaults={"progress": None},
    ),
    # Two words: a subcommand. No CODEX_HOME default: the session file says which home.
    "hook stop": FastCommand(
        target="memcite.cli.gate_commands:hook_stop",
        options={"--db": str, "--codex-home": str},
        tolerant=True,
    ),
    # Codex's PreToolUse hook: before every tool call, so it must start fast; never blocks on
    # its own errors. CODEX_HOME is the default home (the payload has no session file path).
    "hook pre-tool": FastCommand(
        target="memcite.cli.gate_commands:pre_tool",
        options={"--db": str, "--codex-home": str, "--block": str},
        tolerant=True,
    ),
    # Codex starts it at every session and does not wait long for its `initialize`.
    "mcp": FastCommand(
        target="memcite.cli.mcp_commands:mcp",
        options={"--codex-home": str, "--db": str, "--confirm-ttl": at_least_one},
    ),
    # The note commands a session runs often.
    "note path": FastCommand(
        target="memcite.cli.notes_commands:path",
        options=_NOTE_COMMON,
        flags=("--json",),
        envvars={"session": "MEMCITE_SESSION"},
    ),
    "note recall": FastCommand(
        target="memcite.cli.notes_commands:recall",
        options=_NOTE_COMMON,
        flags=("--check", "--json"),
        envvars={"session": "MEMCITE_SESSION"},
    ),
    "note list": FastCommand(
        target="memcite.cli.notes_commands:list_notes",
        options=_NOTE_COMMON,
        flags=("--json",),
        envvars={"session": "MEMCITE_SESSION"},
    ),
    "note save": FastCommand(
        target="memcite.cli.notes_commands:save",
        positionals=("text",),
        options={**_NOTE_COMMON, "--db": str, "--file": str, "--section": str, "--topic": str,
                 "--source": str, "--evidence": str, "--confidence": str, "--tier": str,
                 "--expires": str},
        flags=("--redact", "--dry-run", "--yes", "--json"),
        envvars={"session": "MEMCITE_SESSION"},
    ),
}




def _option_name(option: str) -> str:
    return option[2:].replace("-", "_")


def parse_args(spec: FastCommand, args: list[str]) -> dict | None:
    """Keyword arguments for ``spec.target``, or None when Typer should read ``args``."""
    kwargs: dict[str, object] = {_option_name(flag): False for flag in spec.flags}
    kwargs.update(spec.defaults)
    for name, variable in spec.envvars.items():
        if os.environ.get(variable):
            kwargs[name] = os.environ[variable]
    positionals: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            positionals.extend(args[index + 1 :])
            break
        if arg.startswith("--"):
            name, has_value, value = arg.partition("=")
            if name in spec.flags and not has_value:
                kwargs[_option_name(name)] = True
            elif name in spec.options:
                if not has_value:
                    index += 1
                    if index >= len(args):
                        return None
                    value = args[index]
                try:
                    kwargs[_option_name(name)] = spec.options[name](value)
                except ValueError:
                    return None
            else:
                return None
        elif arg.startswith("-") and arg != "-":
            return None
        else:
            positionals.append(arg)
        index += 1
    if spec.variadic and spec.positionals:
        fixed = len(spec.positionals) - 1
        if len(positionals) > fixed:
            positionals[fixed:] = [positionals[fixed:]]
    if len(positionals) > len(spec.positionals):
        return None
    for name, value in zip(spec.positionals, positionals, strict=False):
        kwargs[name] = value
    return kwargs


def run(args: list[str]) -> int | None:
    """Run ``args`` on the fast path and return the exit code, or None to hand over to Typer."""
    if not args or os.environ.get("MEMCITE_NO_FASTPATH"):
        return None
    words = 2 if " ".join(args[:2]) in FAST_COMMANDS else 1
    spec = FAST_COMMANDS.get(" ".join(args[:words]))
    if spec is None:
        return None
    rest = args[words:]
    kwargs = parse_args(spec, rest)
    if kwargs is None:
        if not spec.tolerant or "--help" in rest or "-h" in rest:
            return None
        kwargs = {"ignored_args": rest}
    module_name, function_name = spec.target.split(":")
    function = getattr(import_module(module_name), function_name)
    return function(**kwargs)
