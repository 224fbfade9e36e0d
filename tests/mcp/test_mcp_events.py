"""The MCP tools of the event log: log_event (two calls, a confirm token), check_approach and
file_history (read-only)."""

from __future__ import annotations

import json

import pytest

from memcite.mcp import tools as mcp_tools
from memcite.paths import Locations


@pytest.fixture
def context(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "src" / "sync.py").write_text("a\n")
    ctx = mcp_tools.ToolContext(Locations(db=str(tmp_path / "db.sqlite"),
                                          codex_home=str(tmp_path / "codex")),
                                mcp_tools.ConfirmTokens())
    return ctx, str(repo)


def call(context, name, **arguments) -> dict:
    ctx, repo = context
    result = mcp_tools.call_tool(ctx, None, name, {"cwd": repo, **arguments})
    if result.get("isError"):
        return {"error": result["structuredContent"], **result["structuredContent"]}
    return {"error": False, **json.loads(result["content"][0]["text"])}


def test_log_event_takes_two_calls_and_a_token(context):
    args = {"kind": "failure", "text": "`pytest -n 8` deadlocks", "files": ["src/sync.py"]}
    draft = call(context, "log_event", **args)
    assert draft["status"] == "draft" and draft["event"]["id"] is None
    assert call(context, "file_history", file="src/sync.py")["events"] == []  # nothing written
    wrong = call(context, "log_event", **{**args, "text": "other"}, confirm=draft["confirm_token"])
    assert wrong["error"]
    draft = call(context, "log_event", **args)
    logged = call(context, "log_event", **args, confirm=draft["confirm_token"])
    assert logged["status"] == "logged" and logged["event"]["id"].startswith("ev-")
    again = call(context, "log_event", **args, confirm=draft["confirm_token"])
    assert again["error"]  # a token is used once
    history = call(context, "file_history", file="src/sync.py")
    assert [e["id"] for e in history["events"]] == [logged["event"]["id"]]


def test_log_event_refuses_secrets_and_outside_paths(context):
    secret = call(context, "log_event", kind="note",
                  text="key ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    assert secret["error"] and secret["refused"]["reason"] == "secret"
    outside = call(context, "log_event", kind="note", text="x", files=["/etc/passwd"])
    assert outside["error"] and "outside the project" in outside["error"]["message"]


def test_check_approach_finds_a_failed_command_and_similar_attempts(context):
    args = {"kind": "failure", "text": "`pytest -n 8` deadlocks in sync", "files": ["src/sync.py"]}
    draft = call(context, "log_event", **args)
    call(context, "log_event", **args, confirm=draft["confirm_token"])
    found = call(context, "check_approach", approach="pytest -n 8 tests/", files=["src/sync.py"])
    assert found["verdict"] == "failed-before" and found["files"]["src/sync.py"]
    similar = call(context, "check_approach", approach="pytest deadlocks sync")
    assert similar["verdict"] == "similar-failures"
    assert call(context, "check_approach", approach="ruff check")["verdict"] == "no-record"
