"""The read-path commands, ``memcite instructions`` and ``memcite truncate``, added to the Typer app.

The bodies live in ``memcite.cli.readpath_commands`` so the fast path can run them
without Typer; these wrappers only declare the options.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import readpath_commands
from memcite.cli.fastpath import COUNT_MAX
from memcite.cli.inputs import DEFAULT_MAX_BYTES
from memcite.cli.options import (
    COMMAND,
    CodexHomeOpt,
    ErrorsOpt,
    JsonOpt,
    MaxBytesOpt,
    choices,
    exit_with,
)

_TOKENIZER_HELP = (
    "o200k_base, cl100k_base, or approx (Codex's rule: 4 bytes per token, the middle cut out)."
)

BudgetOpt = Annotated[
    int, typer.Option("--budget", help="Token budget for the memory text (0 or more).", min=0,
                      max=COUNT_MAX,
                      metavar="N")
]
BpeFileOpt = Annotated[
    Optional[str],  # noqa: UP045 - Typer reads the annotation at run time
    typer.Option(
        "--bpe-file",
        metavar="FILE",
        help="A .tiktoken file (plain or gzipped) to use instead of the installed one; "
        "checked against its published sha256 (default: $MEMCITE_BPE_FILE).",
        envvar="MEMCITE_BPE_FILE",
        show_default=False,
        show_envvar=False,
    ),
]


def instructions(
    cwd: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--cwd", metavar="DIR", show_default=False,
                     help="The working directory whose project note is used (default: the "
                     "current directory)."),
    ] = None,
    memory_root: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--memory-root",
            metavar="DIR",
            help="Folder holding memory_summary.md (default: $CODEX_HOME/memories).",
            show_default=False,
        ),
    ] = None,
    codex_home: CodexHomeOpt = None,
    budget: BudgetOpt = 2500,
    tokenizer: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--tokenizer",
            metavar=choices(readpath_commands.TOKENIZER_CHOICES),
            help="o200k_base (the default), cl100k_base, or approx (Codex's 4 bytes per token, "
            "the default with --profile codex).",
            show_default=False,
        ),
    ] = None,
    profile: Annotated[
        str,
        typer.Option(
            "--profile",
            metavar=choices(readpath_commands.PROFILE_CHOICES),
            help="memcite: exact tokens, this project's note then the global summary; "
            "codex: exactly the summary Codex injects.",
        ),
    ] = "memcite",
    errors: ErrorsOpt = "strict",
    bpe_file: BpeFileOpt = None,
    json: JsonOpt = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Print where the budget went instead.")
    ] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the cache.")
    ] = False,
    session: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--session", metavar="ID", envvar="MEMCITE_SESSION", show_default=False,
                     show_envvar=False,
                     help="Add this agent session's scratchpad note (memcite profile; "
                     "default: $MEMCITE_SESSION)."),
    ] = None,
    scopes: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--scopes", metavar=choices(("global", "project", "session")) + ",...",
                     show_default=False,
                     help="Exactly these scopes, comma-separated (global,session for a helper "
                     "agent, say; the summary counts as global)."),
    ] = None,
) -> None:
    """Print the developer instructions built from memory.

    For a working directory: with the memcite profile, its project note then Codex's
    global memory summary, cut to --budget tokens; with the codex profile, exactly the
    summary Codex injects.

    Examples:

    \b
        memcite instructions
        memcite instructions --cwd ~/src/payments-api --budget 4000
        memcite instructions --profile codex --json
        memcite instructions --explain
    """
    exit_with(
        readpath_commands.instructions(
            cwd=cwd,
            memory_root=memory_root,
            codex_home=codex_home,
            budget=budget,
            tokenizer=tokenizer,
            profile=profile,
            errors=errors,
            bpe_file=bpe_file,
            json=json,
            explain=explain,
            no_cache=no_cache,
            session=session,
            scopes=scopes,
        )
    )


def truncate(
    source: Annotated[
        Optional[str],  # noqa: UP045
        typer.Argument(metavar="FILE", show_default=False,
                       help="File to cut, or - for stdin (the default)."),
    ] = None,
    budget: BudgetOpt = 2500,
    tokenizer: Annotated[str, typer.Option("--tokenizer", help=_TOKENIZER_HELP,
                                          metavar=choices(readpath_commands.TOKENIZER_CHOICES))] = "o200k_base",
    bpe_file: BpeFileOpt = None,
    errors: ErrorsOpt = "strict",
    max_bytes: MaxBytesOpt = DEFAULT_MAX_BYTES,
) -> None:
    """Cut a text to a token budget, byte for byte.

    Writes the text, cut at a heading or a line so that it and the cut marker fit
    --budget tokens; with --tokenizer approx, Codex's own cut (the middle taken out).

    Examples:

    \b
        memcite truncate memory_summary.md --budget 2500
        memcite truncate --tokenizer approx --budget 500 - < notes.md
    """
    exit_with(readpath_commands.truncate(source, budget, tokenizer, bpe_file, errors, max_bytes))


def register(app) -> None:
    """Add this module's commands to ``app``."""
    app.command(**COMMAND)(instructions)
    app.command(**COMMAND)(truncate)
