"""memcite inside Codex: ``memcite hook stop``, ``memcite setup codex`` and ``memcite doctor``.

The bodies live in ``memcite.codex.stop_hook`` (run on the fast path, without
Typer) and ``memcite.cli.codex_commands``; these wrappers declare the options.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import codex_commands
from memcite.cli.options import CodexHomeOpt, DbOpt, JsonOpt, exit_with
from memcite.codex import stop_hook

hook_app = typer.Typer(
    name="hook",
    help="The commands Codex's hooks run. They print nothing and always exit 0; "
    "problems go to memcite's hook log (see `memcite doctor`).",
    no_args_is_help=True,
)
setup_app = typer.Typer(name="setup", help="Wire memcite into an agent.", no_args_is_help=True)


@hook_app.command("stop")
def stop(
    db: DbOpt = None,
    codex_home: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--codex-home", help="Codex's home, for the memory folder (default: the "
                     "home the session file lies in, else $CODEX_HOME, else ~/.codex).",
                     show_default=False),
    ] = None,
) -> None:
    """Record the replies a Codex session gained since the last turn (the payload on stdin)."""
    exit_with(stop_hook.hook_stop(db=db, codex_home=codex_home))


def available_commands(root) -> frozenset[str]:
    """Which of the commands setup can wire in this memcite has: ``lint --hook``, ``mcp``.

    ``root`` is the command group being run (``ctx.find_root().command``), so this
    module needs no import of the app that registers it.
    """
    commands = root.commands
    found = set()
    lint = commands.get("lint")
    if lint is not None and any("--hook" in getattr(p, "opts", ()) for p in lint.params):
        found.add("lint --hook")
    if "mcp" in commands:
        found.add("mcp")
    return frozenset(found)


@setup_app.command("codex")
def codex(
    ctx: typer.Context,
    codex_home: CodexHomeOpt = None,
    project: Annotated[bool, typer.Option(
        "--project", help="Set up the repository's .codex/ folder instead of the Codex home "
        "(Codex reads it only in a trusted project).")] = False,
    apply: Annotated[bool, typer.Option(
        "--apply", help="Make the change (default: only show it as a diff).")] = False,
    remove: Annotated[bool, typer.Option(
        "--remove", help="Take out exactly what setup added (shown, or made with --apply).")] = False,
) -> None:
    """Add memcite's Stop hook (hooks.json) and MCP server (config.toml) to Codex; show the diff.

    Merged with what is there, idempotent, each changed file backed up first;
    config.toml keeps its comments and layout. Codex then needs you to trust the
    hook once, in /hooks.
    """
    exit_with(codex_commands.setup_codex(codex_home=codex_home, project=project, apply=apply,
                                         remove=remove,
                                         commands=available_commands(ctx.find_root().command)))


def doctor(
    codex_home: CodexHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Check the Codex setup and memcite's own files: one line per check, with its fix.

    Exit 1 when any check fails.
    """
    exit_with(codex_commands.doctor(codex_home=codex_home, db=db, json=json))


def register(app) -> None:
    """Add this module's commands to ``app``."""
    app.add_typer(hook_app)
    app.add_typer(setup_app)
    app.command()(doctor)
