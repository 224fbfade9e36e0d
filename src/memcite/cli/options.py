"""The options several ``memcite`` commands share, declared once for Typer."""

from __future__ import annotations

from typing import Annotated, Optional

import typer


def choices(allowed: tuple[str, ...]) -> str:
    """The metavar of an option with a few allowed values, shown in the help: ``[codex|strict]``.

    The values are checked by the command bodies (``memcite.cli.console.check_choice``),
    so the fast path and Typer refuse a bad one with the same message.
    """
    return "[" + "|".join(allowed) + "]"

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
MaxBytesOpt = Annotated[
    int, typer.Option("--max-bytes", help="Refuse inputs larger than this many bytes.", min=1,
                      metavar="N")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
DbOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--db",
        metavar="PATH",
        help="memcite's database (default: $MEMCITE_DB, else memcite.sqlite in $MEMCITE_HOME "
        "or the user data folder).",
        envvar="MEMCITE_DB",
        show_default=False,
        show_envvar=False,
    ),
]
CodexHomeOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--codex-home",
        metavar="DIR",
        help="Codex's home folder, holding memories/ and config.toml; memories_1.sqlite is in "
        "its SQLite home, as Codex finds it: config sqlite_home, else $CODEX_SQLITE_HOME, else "
        "the home itself (default: $CODEX_HOME, else ~/.codex).",
        envvar="CODEX_HOME",
        show_default=False,
        show_envvar=False,
    ),
]


def exit_with(code: int) -> None:
    """End a Typer command with the exit code its body returned."""
    if code:
        raise typer.Exit(code)
