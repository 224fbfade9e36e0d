"""The body of ``memcite hook pre-tool`` as the command line runs it (fast path and Typer).

The gate itself is ``memcite.codex.pre_tool_gate``: it reads Codex's PreToolUse payload
from stdin and prints Codex's hook output (context for the agent, or a deny only for what
``--block`` names); it always exits 0, and its own errors never block the tool call.
"""

from __future__ import annotations


def pre_tool(db: str | None = None, codex_home: str | None = None, block: str | None = None,
             ignored_args: list[str] | None = None) -> int:
    """Read the payload from stdin, print the gate's output; always 0."""
    from memcite.codex.pre_tool_gate import hook_pre_tool

    return hook_pre_tool(db=db, codex_home=codex_home, block=block, ignored_args=ignored_args)
