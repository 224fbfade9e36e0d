"""The options several ``memcite`` commands share, declared once for Typer, and how help reads.

Every value in the help is named by one of ``PLACEHOLDERS`` (``--since TIME``, ``FILE``),
or, when only a few values are allowed, by all of them (``--profile [codex|strict]``);
``tests/cli/test_cli_help.py`` holds every command to it.
"""

from __future__ import annotations

import re
from typing import Annotated, Optional

import typer
from typer.core import TyperCommand

from memcite.cli.fastpath import BYTES_MAX
from memcite.cli.inputs import DEFAULT_MAX_BYTES

# The one placeholder for each kind of value, and what it stands for.
PLACEHOLDERS = {
    "DIR": "a folder",
    "FILE": "a file (a reply, a draft, an archived note; - for stdin where the help says so)",
    "PATH": "memcite's database (a file, created when missing), or a file or folder to lint; "
            "for stats, also a fleet server's URL",
    "URL": "a PostgreSQL server: postgresql://user@host:port/database",
    "N": "a number: a count, a size in bytes or tokens, days, seconds",
    "TIME": "a time: epoch seconds or ISO 8601 (2026-03-01, 2026-03-01T10:00:00Z)",
    "ID": "an id: of a reply, a thread (memory), a session, a note entry, a prune batch",
    "TEXT": "free text, quoted when it has spaces",
    "NAME": "a name: a schema's, an archived file's, a machine's in a fleet",
    "COMMAND": "another program and its arguments, written after --",
}


def choices(allowed: tuple[str, ...]) -> str:
    """The metavar of an option with a few allowed values, shown in the help: ``[codex|strict]``.

    The values are checked by the command bodies (``memcite.cli.console.check_choice``),
    so the fast path and Typer refuse a bad one with the same message.
    """
    return "[" + "|".join(allowed) + "]"


# Typer's own additions to a parameter's help, "  [default: 20; x>=0]", and a number's bounds
# in them: a person reads "0 or more" in the help text instead.
_EXTRAS = re.compile(r"\s*\[([^\[\]]*)\]\Z")
_BOUNDS = re.compile(r"(?:-?[0-9.]+<=)?x(?:<=|>=)-?[0-9.]+")


def _without_bounds(text: str) -> str:
    found = _EXTRAS.search(text)
    if found is None:
        return text
    kept = [item for item in found.group(1).split("; ") if not _BOUNDS.fullmatch(item)]
    head = text[:found.start()]
    if not kept:
        return head
    return f"{head}  [{'; '.join(kept)}]" if head else f"[{'; '.join(kept)}]"


def _argument_name(param) -> str:
    name = param.metavar or param.name.upper()
    if param.nargs != 1 and not name.endswith("..."):
        name += "..."
    return name


class HelpCommand(TyperCommand):
    """A command whose help names each value by its placeholder, as a person reads it.

    Typer lists an argument as ``FILE <str>`` (or ``ID <list[str]>``), writes a required
    one as ``{ID}`` in the usage line and a number's bounds as ``[x>=0]``; this command
    writes ``FILE``, ``ID...``, ``ID`` and ``[FILE]``, and leaves bounds to the help text.
    Only the help changes: parsing and checking are Typer's.
    """

    def collect_usage_pieces(self, ctx) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name != "argument":
                pieces.extend(param.get_usage_pieces(ctx))
                continue
            name = _argument_name(param)
            if not param.required:
                name = f"[{name.removesuffix('...')}]" + ("..." if name.endswith("...") else "")
            pieces.append(name)
        return pieces

    def format_options(self, ctx, formatter) -> None:
        arguments, options = [], []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            name, text = record
            if param.param_type_name == "argument":
                arguments.append((_argument_name(param), _without_bounds(text)))
            else:
                options.append((name, _without_bounds(text)))
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


# ``app.command(cls=HelpCommand)`` for each command: Typer has no app-wide command class.
COMMAND = {"cls": HelpCommand}


SourceArg = Annotated[
    Optional[str],  # noqa: UP045 - Typer reads the annotation at run time
    typer.Argument(help="Reply file to read, or - for stdin (the default).", show_default=False,
                   metavar="FILE"),
]
ErrorsOpt = Annotated[
    str,
    typer.Option("--errors", metavar=choices(("strict", "replace")),
                 help="strict: invalid UTF-8 is an error; replace: read it as U+FFFD."),
]


def max_bytes_option(what: str):
    """``--max-bytes N`` (1 or more), its help ``what`` this many bytes, the default in MiB."""
    return Annotated[int, typer.Option(
        "--max-bytes", metavar="N", min=1, max=BYTES_MAX, show_default=False,
        help=f"{what} this many bytes (default: {DEFAULT_MAX_BYTES // 2**20} MiB).")]


MaxBytesOpt = max_bytes_option("Refuse inputs larger than")
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
DB_HELP = ("memcite's database (default: $MEMCITE_DB, else memcite.sqlite in $MEMCITE_HOME "
            "or the user data folder).")
DbOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--db",
        metavar="PATH",
        help=DB_HELP,
        show_default=False,
    ),
]
_CODEX_HOME_HELP = "Codex's home folder (default: $CODEX_HOME, else ~/.codex)."
# For the commands that read Codex's memories database (usage counters, stage1_outputs).
CodexSqliteHomeOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--codex-home",
        metavar="DIR",
        help="Codex's home folder, holding memories/ and config.toml (default: $CODEX_HOME, "
        "else ~/.codex); memories_1.sqlite is read from its SQLite home, as Codex finds it: "
        "config sqlite_home, else $CODEX_SQLITE_HOME, else the home itself.",
        show_default=False,
        show_envvar=False,
    ),
]
# For the commands that only read or write files in the home (memories/, memory/, config.toml).
CodexHomeOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--codex-home",
        metavar="DIR",
        help=_CODEX_HOME_HELP,
        show_default=False,
        show_envvar=False,
    ),
]


def exit_with(code: int) -> None:
    """End a Typer command with the exit code its body returned."""
    if code:
        raise typer.Exit(code)
