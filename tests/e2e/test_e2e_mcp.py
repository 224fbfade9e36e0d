"""memcite's MCP server as ``setup codex`` installs it, started by the real Codex."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import memcite.mcp
from conftest import assert_ran, is_consolidation

# Every tool memcite's catalog declares (memcite/mcp/tools.json, as installed).
TOOLS = {tool["name"] for tool in json.loads(
    (Path(memcite.mcp.__file__).with_name("tools.json")).read_text(encoding="utf-8"))["tools"]}
NAMESPACE = "mcp__memcite"
RUNS = 20


def memcite_tools(body: dict) -> set[str]:
    for tool in body.get("tools") or []:
        if tool.get("type") == "namespace" and tool.get("name") == NAMESPACE:
            return {inner.get("name") for inner in tool.get("tools") or []}
    return set()


def tool_output(world, call_index: int = -1) -> str:
    """The text Codex sent back for the last function call of the turn."""
    outputs = [item for body in world.turn_requests() for item in body.get("input", [])
               if item.get("type") == "function_call_output"]
    assert outputs, "Codex sent no tool output back"
    output = outputs[call_index]["output"]
    return output if isinstance(output, str) else json.dumps(output)


@pytest.fixture
def set_up(world):
    world.memcite("setup", "codex", "--apply", "--codex-home", str(world.codex_home))
    return world


def test_the_tools_are_in_the_first_request_of_every_session(set_up, capsys):
    world = set_up
    import statistics
    import time

    present = 0
    delays = []  # from the start of `codex exec` to its first model request
    for run in range(RUNS):
        seen = len(world.model.requests)
        started = time.monotonic()
        assert_ran(world.exec(f"session {run}"))
        first = next(i for i in range(seen, len(world.model.requests))
                     if not is_consolidation(world.model.requests[i]))
        delays.append(world.model.request_times[first] - started)
        if memcite_tools(world.model.requests[first]) == TOOLS:
            present += 1
    # the figures: `pytest -rP` or `-s` shows them; `-q` prints no stray line
    print(f"\nmemcite's MCP tools in the first request: {present} of {RUNS} sessions; "
          f"first request {statistics.median(delays) * 1000:.0f} ms after start (median, "
          f"min {min(delays) * 1000:.0f} ms)")
    assert present == RUNS


def test_a_required_server_that_fails_stops_codex(world):
    """Why setup writes no `required = true`: a required MCP server that cannot start keeps
    Codex from starting at all (0.171: 'required MCP servers failed to initialize')."""
    world.append_config('[mcp_servers.broken]\ncommand = "/nonexistent/memcite"\nargs = ["mcp"]\n'
                        "required = true\n")
    done = world.exec("hello")
    assert done.returncode != 0 and "required MCP servers failed to initialize" in done.stderr
    assert world.turn_requests() == []


def test_a_call_reads_the_codex_home_that_was_set_up(set_up):
    world = set_up
    world.memcite("note", "save", "the release script is scripts/release.sh", "--topic", "release", "--section", "decisions",
                  "--yes", "--cwd", str(world.work), "--codex-home", str(world.codex_home))
    world.model.call_tool("recall", {"cwd": str(world.work)}, namespace=NAMESPACE)
    world.model.reply("Recalled.")
    assert_ran(world.exec("what do we know?"))
    assert "scripts/release.sh" in tool_output(world)
    world.model.call_tool("list", {}, namespace=NAMESPACE)
    world.model.reply("Listed.")
    assert_ran(world.exec("which projects?"))
    assert '"notes":[{' in tool_output(world).replace(" ", "")


@pytest.mark.parametrize("tool, arguments", [("stats", {}), ("lint", {}), ("list", {})])
def test_read_only_tools_run_under_approval_never(set_up, tool, arguments):
    world = set_up
    world.write_config('approval_policy = "never"')
    world.memcite("setup", "codex", "--apply", "--codex-home", str(world.codex_home))
    world.memcite("note", "save", "an entry", "--topic", "t", "--section", "decisions", "--yes",
                  "--cwd", str(world.work), "--codex-home", str(world.codex_home))
    world.model.call_tool(tool, arguments, namespace=NAMESPACE)
    world.model.reply("Done.")
    assert_ran(world.exec(f"run {tool}"))
    output = tool_output(world)
    assert "requires approval" not in output and "failed" not in output.lower(), output
    assert output.startswith("Wall time:") or "Wall time:" in output


def _without_ages(recalled: str) -> str:
    """``note recall``'s text without the entries' ages ("(0 days old)"), which a run across
    midnight UTC moves on by a day while the note itself is the same."""
    return re.sub(r" \(\d+ days? old(, [^)]*)?\)", "", recalled)


# 0.171 refuses approval_policy = "untrusted" ("no longer supported")
@pytest.mark.parametrize("policy", ["never", "on-request", "on-failure"])
@pytest.mark.parametrize("tool", ["save", "forget"])
def test_writing_tools_never_write_without_the_person_s_yes(set_up, policy, tool):
    world = set_up
    world.memcite("note", "save", "keep this entry", "--topic", "keep", "--section", "decisions", "--yes",
                  "--cwd", str(world.work), "--codex-home", str(world.codex_home))
    note = world.memcite("note", "recall", "--cwd", str(world.work),
                         "--codex-home", str(world.codex_home)).stdout
    world.write_config(f'approval_policy = "{policy}"')
    world.memcite("setup", "codex", "--apply", "--codex-home", str(world.codex_home))
    arguments = {"cwd": str(world.work), "text": "a new entry", "topic": "new",
                                     "section": "decisions"} if tool == "save" \
        else {"cwd": str(world.work)}
    world.model.call_tool(tool, arguments, namespace=NAMESPACE)
    world.model.reply("Done.")
    assert_ran(world.exec(f"{tool} something"))
    output = tool_output(world)
    after = world.memcite("note", "recall", "--cwd", str(world.work),
                          "--codex-home", str(world.codex_home)).stdout
    assert _without_ages(after) == _without_ages(note), \
        f"the note changed under approval_policy={policy}: {output}"
    # `codex exec` has nobody to ask: it runs every policy as "never" and refuses the call
    # with a clear message (seen in 0.171); memcite's two-call confirm is never reached
    assert "MCP tool call requires approval, but approval policy is never" in output, output


def _save_then_confirm(arguments: dict):
    """A model that calls save, then save again with the draft's confirm_token, then answers."""
    from mock_model import message_turn, tool_turn

    from conftest import is_consolidation

    def respond(body: dict):
        if is_consolidation(body):
            return message_turn("Nothing to consolidate.")
        outputs = [item["output"] for item in body.get("input", [])
                   if item.get("type") == "function_call_output"]
        if not outputs:
            return tool_turn("save", arguments, namespace=NAMESPACE)
        if len(outputs) == 1:
            text = outputs[0] if isinstance(outputs[0], str) else json.dumps(outputs[0])
            token = text[text.index('"confirm_token":"') + 17:].split('"')[0] \
                if '"confirm_token":"' in text else "no-token"
            return tool_turn("save", {**arguments, "confirm": token}, namespace=NAMESPACE)
        return message_turn("Saved.")
    return respond


@pytest.mark.parametrize("policy, answer", [
    ("on-request", "accept"), ("untrusted", "accept"), ("on-request", "decline"),
    ("never", None)])  # app-server's policies in 0.171: untrusted, on-request, granular, never
def test_the_two_call_save_through_the_app_server_under_each_policy(set_up, policy, answer):
    """In an interactive session (app-server, as Codex's own UI), Codex asks the person before
    each call of save (it is destructive: it may replace an entry); the first call is a draft
    that writes nothing, only the second, with the draft's token, writes. Declined, or under
    never, nothing runs and nothing is written."""
    from app_server import AppServer

    world = set_up
    arguments = {"cwd": str(world.work), "text": "deploys go through make release",
                 "section": "decisions", "topic": "deploy"}
    asked = []

    def person(method: str, params: dict) -> dict:
        asked.append((method, (params.get("_meta") or {}).get("tool_name")))
        return {"action": answer}

    world.model.responder = _save_then_confirm(arguments)
    with AppServer(world, on_request=person) as server:
        server.run_turn("remember how we deploy", policy)
    last = world.turn_requests()[-1]  # it carries every call's output of the turn
    texts = [o if isinstance(o, str) else json.dumps(o) for o in
             (item["output"] for item in last.get("input", [])
              if item.get("type") == "function_call_output")]
    recall = world.memcite("note", "recall", "--cwd", str(world.work), "--codex-home",
                           str(world.codex_home), check=False)
    if answer != "accept":
        assert "make release" not in recall.stdout, texts
        assert not any('"status":"saved"' in t.replace(" ", "") for t in texts), texts
        if policy == "never":
            assert asked == []
            assert all("requires approval, but approval policy is never" in t for t in texts)
        else:
            assert asked and asked[0] == ("mcpServer/elicitation/request", "save")
        return
    assert asked == [("mcpServer/elicitation/request", "save")] * 2, asked
    assert len(texts) == 2 and '"status":"draft"' in texts[0].replace(" ", ""), texts
    assert '"status":"saved"' in texts[1].replace(" ", ""), texts
    assert "deploys go through make release" in recall.stdout


def test_codex_does_not_wait_long_for_a_slow_server(world):
    """Why `memcite mcp` must answer `initialize` fast: 0.171 holds its first request for a
    server that is not `required` only about 1.3 s, then sends it without the server's tools."""
    import sys

    slow = ("import sys, time; time.sleep(3); from memcite.__main__ import main; "
            f"sys.argv = ['memcite', 'mcp', '--codex-home', {str(world.codex_home)!r}]; main()")
    world.append_config(f'[mcp_servers.memcite]\ncommand = {json.dumps(sys.executable)}\n'
                        f"args = ['-c', {json.dumps(slow)}]\n")
    assert_ran(world.exec("hello"))
    assert memcite_tools(world.turn_requests()[0]) == set()
