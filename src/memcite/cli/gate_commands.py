"""The bodies of Codex's hook commands, ``memcite hook stop`` and ``memcite hook pre-tool``,
as the command line runs them (fast path and Typer).

Each builds the run's ``memcite.paths.Locations`` from its options and hands it to its
hook: ``memcite.codex.stop_hook`` records what the session file gained after a turn;
``memcite.codex.pre_tool_gate`` reads Codex's PreToolUse payload from stdin and prints
Codex's hook output (context for the agent, or a deny only for what ``--block`` names).
Both always exit 0, and their own errors never stand in the agent's way. They run per
turn: this module imports nothing but the locations.
"""

from __future__ import annotations

from memcite.paths import Locations


def hook_stop(db: str | None = None, codex_home: str | None = None,
              ignored_args: list[str] | None = None, stdin=None) -> int:
    """Record what the session file gained since the last turn; always 0, never a byte on stdout."""
    from memcite.codex.stop_hook import run_stop_hook

    return run_stop_hook(Locations(db=db, codex_home=codex_home), codex_home=codex_home,
                         ignored_args=ignored_args, stdin=stdin)


def hook_pre_tool(db: str | None = None, codex_home: str | None = None, block: str | None = None,
                  ignored_args: list[str] | None = None, stdin=None, stdout=None) -> int:
    """Read the payload from stdin, print the gate's output; always 0."""
    from memcite.codex.pre_tool_gate import run_pre_tool_gate

    return run_pre_tool_gate(Locations(db=db, codex_home=codex_home), codex_home=codex_home,
                             block=block, ignored_args=ignored_args, stdin=stdin, stdout=stdout)


def pre_tool(db: str | None = None, codex_home: str | None = None, block: str | None = None,
             ignored_args: list[str] | None = None) -> int:
    """``memcite hook pre-tool``: ``hook_pre_tool`` on stdin and stdout; always 0."""
    return hook_pre_tool(db=db, codex_home=codex_home, block=block, ignored_args=ignored_args)
