"""memcite inside Codex: ``memcite hook stop``, ``memcite setup codex`` and ``memcite doctor``.

The bodies live in ``memcite.cli.gate_commands`` (the hooks, run on the fast path, without
Typer) and ``memcite.cli.codex_commands``; these wrappers declare the options.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import codex_commands, gate_commands
from memcite.cli.options import (
    COMMAND,
    CodexHomeOpt,
    CodexSqliteHomeOpt,
    DbOpt,
    JsonOpt,
    exit_with,
)

hook_app = typer.Typer(
    name="hook",
    help="The commands Codex's hooks run, not run by hand.\n\n"
    "They always exit 0 (a hook of memcite's never stops Codex); problems go to memcite's "
    "hook log (see `memcite doctor`). `memcite setup codex` wires them in.",
    no_args_is_help=True,
)
setup_app = typer.Typer(
    name="setup",
    help="Wire memcite into an agent.\n\n"
    "Each setup shows the change as a diff first, and writes it only with --apply.",
    no_args_is_help=True,
)


@hook_app.command("stop", **COMMAND)
def stop(
    db: DbOpt = None,
    codex_home: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--codex-home", metavar="DIR", show_default=False,
                     help="Codex's home folder, for the memory folder (default: the home the "
                     "session file lies in, else $CODEX_HOME, else ~/.codex)."),
    ] = None,
) -> None:
    """Record what a Codex session replied since the last turn.

    Codex's Stop and SubagentStop hooks run it after every turn, with the hook's
    payload (JSON) on stdin: the replies the session file gained since the last run are
    recorded. It prints nothing and always exits 0; problems go to memcite's hook log.
    """
    exit_with(gate_commands.hook_stop(db=db, codex_home=codex_home))


@hook_app.command("pre-tool", **COMMAND)
def pre_tool(
    block: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--block", metavar="[failures|fragile|approaches|all],...", show_default=False,
        help="Deny the tool call instead of warning, for these findings only: "
        "failures (a file with recorded failures), fragile (a file marked fragile), approaches "
        "(a command recorded as failed), or all. Default: never block.")] = None,
    db: DbOpt = None,
    codex_home: CodexHomeOpt = None,
) -> None:
    """Warn the agent before a tool call the event log has history for.

    Codex's PreToolUse hook runs it with the payload (JSON) on stdin; it prints Codex's hook
    output (context for the agent, or a deny only with --block) and always exits 0. A patch
    into Codex's memory folder that would add a poisoned line (a directive whose words came
    from a tool's output, not from the user) is always denied; `[gate] memory_writes = false`
    in memcite's config turns that off.

    Examples:

    \b
        memcite hook pre-tool < payload.json
        memcite hook pre-tool --block fragile < payload.json
    """
    exit_with(gate_commands.pre_tool(db=db, codex_home=codex_home, block=block))


def available_commands(root) -> frozenset[str]:
    """Which of the commands setup can wire in this memcite has: ``lint --hook``, ``mcp``,
    ``hook pre-tool``.

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
    hook = commands.get("hook")
    if hook is not None and "pre-tool" in getattr(hook, "commands", {}):
        found.add("hook pre-tool")
    return frozenset(found)


@setup_app.command("codex", **COMMAND)
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
    governance: Annotated[bool, typer.Option(
        "--governance", help="Also add the memory-governance directives (tiers, at most 80 "
        "CORE entries, superseded_by:, provenance) to AGENTS.md in Codex's memory folder, "
        "where its consolidation agent reads them, and the pre-retrieval directives to the "
        "project's AGENTS.md.")] = False,
    gate: Annotated[bool, typer.Option(
        "--gate", help="Also add a PreToolUse hook running `memcite hook pre-tool` (refused "
        "when this memcite has no such command).")] = False,
    trust: Annotated[bool, typer.Option(
        "--trust", help="Also trust memcite's own hooks in Codex (and no other hook), as "
        "Codex's /hooks screen does: their trusted_hash goes under [hooks.state] in the Codex "
        "home's config.toml. For a scripted or headless set-up.")] = False,
) -> None:
    """Add memcite's hooks and MCP server to Codex.

    Three hooks go into hooks.json: Stop and SubagentStop (each running `memcite hook
    stop`, which records what a turn cited) and PostToolUse (`memcite lint --hook`);
    the MCP server (`memcite mcp`) goes into config.toml. Shown as a diff, written only
    with --apply. Merged with what is there, idempotent; each changed file is backed up
    first to one backup beside it (FILE.memcite-backup, replaced by the next change);
    config.toml keeps its comments and layout. Codex runs a new hook only once you
    trust it, in /hooks, or with --trust. --remove takes out the hooks, their trust
    entries and the MCP server, and gives each file back as setup found it.
    --governance adds memcite's directives to the AGENTS.md files as a block of their
    own; a block you edited is left alone.

    Examples:

    \b
        memcite setup codex
        memcite setup codex --apply
        memcite setup codex --apply --trust
        memcite setup codex --governance --apply
        memcite setup codex --gate --apply
        memcite setup codex --project --apply
        memcite setup codex --remove --apply
    """
    exit_with(codex_commands.setup_codex(codex_home=codex_home, project=project, apply=apply,
                                         remove=remove, governance=governance, gate=gate,
                                         trust=trust,
                                         commands=available_commands(ctx.find_root().command)))


def doctor(
    codex_home: CodexSqliteHomeOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Check the Codex setup and memcite's own files.

    One line per check, with its fix when it fails; exit 1 when any check fails.

    Examples:

    \b
        memcite doctor
        memcite doctor --codex-home ~/.codex --json
    """
    exit_with(codex_commands.doctor(codex_home=codex_home, db=db, json=json))


def register(app) -> None:
    """Add this module's commands to ``app``."""
    app.add_typer(hook_app)
    app.add_typer(setup_app)
    app.command(**COMMAND)(doctor)
