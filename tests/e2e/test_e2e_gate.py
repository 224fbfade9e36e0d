"""The pre-action gate as the real Codex runs it: a PreToolUse hook running ``memcite hook
pre-tool`` shows the agent what the project's event log holds for the file it is about to
touch, and lets the tool call go on (it warns, never blocks, unless told to)."""

from __future__ import annotations

import json

from app_server import AppServer

from conftest import assert_ran
from memcite.codex.setup import memcite_args


def _trust_all(world) -> None:
    with AppServer(world) as server:
        for hook in server.hooks():
            if memcite_args(hook["command"]):
                server.trust(hook)


def test_codex_shows_the_agent_the_recorded_failures_of_a_file_it_is_about_to_touch(world):
    (world.work / "billing.py").write_text("total = 0\n")
    world.memcite("event", "add", "--kind", "failure", "--file", "billing.py", "--cwd",
                  str(world.work), "rounding with float broke the invoice totals")
    done = world.memcite("setup", "codex", "--codex-home", str(world.codex_home), "--gate",
                         "--apply")
    assert "PreToolUse" in (world.codex_home / "hooks.json").read_text(), done.stdout
    _trust_all(world)
    world.model.call_tool("exec_command", {"cmd": "cat billing.py"})
    world.model.reply("Read it.")
    assert_ran(world.exec("look at billing.py", "--sandbox", "danger-full-access"))
    requests = world.turn_requests()
    assert len(requests) >= 2, "Codex sent no request after the tool call"
    after = json.dumps(requests[1])
    assert "rounding with float broke the invoice totals" in after, after[-3000:]
    # as a developer message between the call and its output (seen: Codex 0.171)
    body = requests[1]["input"]
    roles = [(item.get("type"), item.get("role")) for item in body]
    feedback = next(i for i, item in enumerate(body) if item.get("role") == "developer"
                    and "rounding with float" in json.dumps(item))
    assert roles[feedback - 1][0] == "function_call" and roles[feedback + 1][0] == "function_call_output"
    # a warning, not a block: the command ran and its output reached the model
    assert "total = 0" in after
