"""`memcite mcp` driven by the MCP SDK's own client over a real stdio subprocess.

The server is memcite's own JSON-RPC loop (``memcite.mcp.server``); the official
SDK's client (``mcp.client.stdio``, ``ClientSession`` and ``Client``) proves that it
speaks MCP. The loop's handling of bad input is in ``test_mcp_protocol.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memcite.mcp import tools as mcp_tools
from memcite.mcp.tools import TOOLS, ToolFailure, path_of_root


@pytest.fixture
def env(tmp_path):
    project = tmp_path / "src" / "payments-api"
    (project / ".git").mkdir(parents=True)
    other = tmp_path / "src" / "billing"
    (other / ".git").mkdir(parents=True)
    home = tmp_path / "codex-home"
    home.mkdir()
    elsewhere = tmp_path / "elsewhere"  # the server's own working directory: never used
    elsewhere.mkdir()
    values = {"CODEX_HOME": str(home), "MEMCITE_DB": str(tmp_path / "memcite.sqlite"),
              "MEMCITE_HOME": str(tmp_path), "MEMCITE_CACHE_DIR": str(tmp_path / "cache")}
    return {"project": str(project), "other": str(other), "home": str(home),
            "db": values["MEMCITE_DB"], "elsewhere": str(elsewhere), "tmp": tmp_path,
            "env": {**os.environ, **values}}


def server_params(env, args: tuple[str, ...] = ()) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "memcite", "mcp", *args],
                                 env=env["env"], cwd=env["elsewhere"])


@contextlib.asynccontextmanager
async def connect(env, *, roots: list[str] | None = None, args: tuple[str, ...] = ()):
    """A client session with ``python -m memcite mcp``; ``roots`` (file URIs) offered when given."""
    params = server_params(env, args)
    callback = None
    if roots is not None:
        async def callback(context):
            return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in roots])
    with open(env["tmp"] / "server-stderr.txt", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, list_roots_callback=callback) as session:
                await session.initialize()
                yield session


def run(env, body, **options):
    """Run ``body(session)`` against a fresh server; its result."""
    async def main():
        async with connect(env, **options) as session:
            return await body(session)
    return anyio.run(main)


def refusal(result) -> tuple[str | None, str]:
    """The reason code and text of a tool error."""
    assert result.is_error, result.structured_content
    text = result.content[0].text
    data = result.structured_content
    reason = data["refused"]["reason"] if "refused" in data else None
    return reason, text


def note_text(env, slug_project: str | None = None) -> str | None:
    project = slug_project or env["project"]
    from memcite.notes.storage import locate_note

    path = locate_note(project, env["home"]).note_file
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def note_log(env) -> list[tuple]:
    conn = sqlite3.connect(env["db"])
    try:
        return conn.execute("SELECT command, action, entry_id, confirmed_by FROM note_log"
                            " ORDER BY id").fetchall()
    finally:
        conn.close()


SAVE = {"text": "Parse replies with lark's LALR parser", "section": "decisions",
        "topic": "parsing", "source": "src/memcite/citations/reader.py"}


# --------------------------------------------------------------------------- tools and schemas


def test_lists_every_tool_with_the_schemas_of_its_models(env):
    listed = run(env, lambda session: session.list_tools())
    by_name = {tool.name: tool for tool in listed.tools}
    assert list(by_name) == ["recall", "save", "list", "forget", "stats", "lint", "log_event",
                             "check_approach", "file_history", "search"]
    for spec in TOOLS:
        tool = by_name[spec.name]
        assert tool.input_schema == spec.input_model.model_json_schema()
        assert tool.output_schema == spec.output_model.model_json_schema()
        assert tool.input_schema["additionalProperties"] is False
    save = by_name["save"].input_schema
    assert set(save["properties"]) == {"cwd", "text", "section", "topic", "source", "evidence",
                                       "confidence", "tier", "expires", "redact", "confirm"}
    assert save["required"] == ["text", "section"]
    assert set(by_name["forget"].input_schema["properties"]) == {"cwd", "entry", "confirm"}
    hints = {name: tool.annotations for name, tool in by_name.items()}
    for name in ("recall", "list", "stats", "lint"):
        assert hints[name].read_only_hint is True, name
    assert hints["save"].read_only_hint is False
    assert hints["save"].destructive_hint is True  # it may replace an entry (archived)
    assert hints["save"].idempotent_hint is True
    assert hints["forget"].read_only_hint is False
    assert hints["forget"].destructive_hint is True
    assert hints["forget"].idempotent_hint is True
    assert all(hint.open_world_hint is False for hint in hints.values())


# --------------------------------------------------------------------------- the SDK's clients


def test_the_sdk_client_initializes_lists_and_calls(env):
    """The official client over stdio: the handshake, ping, tools/list, tools/call."""
    async def body(session):
        info = await session.initialize()  # already done by connect: the same answer again
        await session.send_ping()
        listed = await session.list_tools()
        recalled = await session.call_tool("recall", {"cwd": env["project"]})
        notes = await session.call_tool("list", {})
        return info, listed, recalled, notes

    info, listed, recalled, notes = run(env, body)
    assert info.protocol_version == "2025-11-25"  # the SDK's newest handshake version
    assert info.server_info.name == "memcite" and info.server_info.version
    assert info.capabilities.tools is not None and info.instructions
    assert [tool.name for tool in listed.tools] == [tool.name for tool in TOOLS]
    assert not recalled.is_error and recalled.structured_content["exists"] is False
    assert not notes.is_error and notes.structured_content == {"notes": []}


def test_the_sdk_client_in_auto_mode_falls_back_to_the_handshake(env):
    """``mcp.Client`` probes ``server/discover`` first; memcite answers -32601 and the client
    uses ``initialize``."""
    from mcp import Client

    async def main():
        async with Client(server_params(env)) as client:
            listed = await client.list_tools()
            result = await client.call_tool("list", {})
            return client.protocol_version, listed, result

    version, listed, result = anyio.run(main)
    assert version == "2025-11-25"
    assert len(listed.tools) == len(TOOLS)
    assert not result.is_error and result.structured_content == {"notes": []}


def test_recall_without_a_note_says_so_and_writes_nothing(env):
    result = run(env, lambda s: s.call_tool("recall", {"cwd": env["project"]}))
    assert not result.is_error
    data = result.structured_content
    assert data["exists"] is False and data["entries"] == [] and data["notice"] is None
    assert data["project"] == os.path.realpath(env["project"])
    assert not os.path.exists(os.path.join(env["home"], "memory"))
    assert json.loads(result.content[0].text) == data


# --------------------------------------------------------------------------- save in two calls


def test_save_writes_only_on_the_confirming_call(env):
    async def body(session):
        draft = await session.call_tool("save", {"cwd": env["project"], **SAVE})
        assert not draft.is_error, draft.content
        between = note_text(env)
        saved = await session.call_tool("save", {"cwd": env["project"], **SAVE,
                                                 "confirm": draft.structured_content["confirm_token"]})
        recalled = await session.call_tool("recall", {"cwd": env["project"]})
        return draft.structured_content, between, saved, recalled.structured_content

    draft, between, saved, recalled = run(env, body)
    assert draft["status"] == "draft" and between is None
    assert draft["entries"][0]["action"] == "save"
    assert "- [" in draft["note"] and SAVE["text"] in draft["note"]
    assert draft["expires_at"] - time.time() > 500
    assert not saved.is_error, saved.content
    assert saved.structured_content["status"] == "saved"
    assert saved.structured_content["confirm_token"] is None
    written = note_text(env)
    entry_id = draft["entries"][0]["id"]
    assert f"- [{entry_id}] {SAVE['text']}" in written
    assert "Topic: parsing" in written and "Source: src/memcite/citations/reader.py" in written
    assert f"Project: {os.path.realpath(env['project'])}" in written
    assert [e["text"] for e in recalled["entries"]] == [SAVE["text"]]
    assert note_log(env) == [("mcp save", "save", entry_id, "mcp-confirm")]
    # the note says what the log says: confirmed by the second call's token, through MCP,
    # and the draft showed exactly those lines
    assert "Confirmed: yes (mcp-confirm by " in written and "Via: mcp" in written
    assert "Confirmed: yes (mcp-confirm by " in draft["note"] and "Via: mcp" in draft["note"]
    assert "automatic" not in written


def test_wrong_reused_and_mismatched_tokens_are_refused(env):
    async def body(session):
        results = {}
        results["unknown"] = await session.call_tool(
            "save", {"cwd": env["project"], **SAVE, "confirm": "not-a-token"})
        draft = await session.call_tool("save", {"cwd": env["project"], **SAVE})
        token = draft.structured_content["confirm_token"]
        results["other text"] = await session.call_tool(
            "save", {"cwd": env["project"], **SAVE, "text": "something else", "confirm": token})
        results["spent by the mismatch"] = await session.call_tool(
            "save", {"cwd": env["project"], **SAVE, "confirm": token})
        draft = await session.call_tool("save", {"cwd": env["project"], **SAVE})
        token = draft.structured_content["confirm_token"]
        results["other cwd"] = await session.call_tool(
            "save", {"cwd": env["other"], **SAVE, "confirm": token})
        draft = await session.call_tool("save", {"cwd": env["project"], **SAVE})
        token = draft.structured_content["confirm_token"]
        first = await session.call_tool("save", {"cwd": env["project"], **SAVE, "confirm": token})
        assert not first.is_error
        results["reused"] = await session.call_tool(
            "save", {"cwd": env["project"], **SAVE, "confirm": token})
        return results

    results = run(env, body)
    for case, result in results.items():
        reason, text = refusal(result)
        assert reason == "needs-confirmation", case
        assert "nothing was changed" in text, case
    assert note_text(env, env["other"]) is None
    assert [row[1] for row in note_log(env)] == ["save"]  # only the one confirmed save


def test_an_expired_token_is_refused(env):
    async def body(session):
        draft = await session.call_tool("save", {"cwd": env["project"], **SAVE})
        await anyio.sleep(1.3)
        return await session.call_tool("save", {"cwd": env["project"], **SAVE,
                                                "confirm": draft.structured_content["confirm_token"]})

    reason, text = refusal(run(env, body, args=("--confirm-ttl", "1")))
    assert reason == "needs-confirmation" and "expired" in text
    assert note_text(env) is None


@pytest.mark.parametrize("arguments, reason", [
    ({"text": "aws key AKIAIOSFODNN7EXAMPLE", "section": "state"}, "secret"),
    ({"text": "ok", "section": "state", "source": "postgres://u:pa55word@db/app"}, "secret"),
])
def test_a_secret_is_refused_at_the_draft_with_its_reason(env, arguments, reason):
    result = run(env, lambda s: s.call_tool("save", {"cwd": env["project"], **arguments}))
    got, text = refusal(result)
    assert got == reason and text.startswith(f"memcite: refused ({reason}):")
    assert "AKIAIOSFODNN7EXAMPLE" not in json.dumps(result.structured_content)
    assert "pa55word" not in json.dumps(result.structured_content)
    assert result.structured_content["refused"]["findings"]
    assert note_text(env) is None


@pytest.mark.parametrize("recorded, reason", [
    ("other", "collision"),  # another project that exists, same slug
    ("/no/longer/there/payments-api", "moved-project"),
])
def test_a_note_recorded_for_another_path_keeps_its_reason(env, recorded, reason):
    from memcite.notes.storage import locate_note

    recorded = env.get(recorded, recorded)
    location = locate_note(env["project"], env["home"])
    os.makedirs(location.project_dir, mode=0o700)
    with open(location.note_file, "w") as handle:
        handle.write(f"# Project memory\n\nProject: {recorded}\nUpdated: 2026-01-01\n")
    os.chmod(location.note_file, 0o600)

    async def body(session):
        return (await session.call_tool("save", {"cwd": env["project"], **SAVE}),
                await session.call_tool("recall", {"cwd": env["project"]}),
                await session.call_tool("forget", {"cwd": env["project"]}))

    for result in run(env, body):
        got, text = refusal(result)
        assert got == reason and recorded in text
        assert result.structured_content["refused"]["recorded_project"] == recorded


def test_the_draft_shows_why_a_person_must_confirm(env):
    arguments = {"cwd": env["project"], "section": "state",
                 "text": "the staging password lives in vault"}

    async def body(session):
        draft = await session.call_tool("save", arguments)
        saved = await session.call_tool("save", {**arguments, "confirm":
                                                 draft.structured_content["confirm_token"]})
        return draft, saved

    draft, saved = run(env, body)
    assert not draft.is_error, draft.content
    assert any("password" in question for question in draft.structured_content["questions"])
    assert not saved.is_error, saved.content  # the person's yes covers what was asked
    assert "the staging password lives in vault" in note_text(env)


# --------------------------------------------------------------------------- the working directory


def test_the_working_directory_comes_from_the_clients_root(env):
    uri = "file://" + env["project"]
    result = run(env, lambda s: s.call_tool("recall", {}), roots=[uri])
    assert not result.is_error, result.content
    assert result.structured_content["project"] == os.path.realpath(env["project"])


def test_an_explicit_cwd_wins_over_the_roots(env):
    result = run(env, lambda s: s.call_tool("recall", {"cwd": env["other"]}),
                 roots=["file://" + env["project"]])
    assert result.structured_content["project"] == os.path.realpath(env["other"])


@pytest.mark.parametrize("roots, arguments, words", [
    (None, {}, "pass cwd"),
    ([], {}, "lists no roots"),
    (["file:///a", "file:///b"], {}, "is not guessed"),
    (None, {"cwd": "src/payments-api"}, "not an absolute path"),
    (None, {"cwd": "/no/such/folder/here"}, "is not a folder"),
])
def test_without_a_usable_working_directory_the_call_fails(env, roots, arguments, words):
    result = run(env, lambda s: s.call_tool("save", {**SAVE, **arguments}), roots=roots)
    reason, text = refusal(result)
    assert reason is None and words in text
    assert result.structured_content["error"]["exit_code"] == 2
    assert not os.path.exists(os.path.join(env["home"], "memory"))


@pytest.mark.parametrize("uri, path", [
    ("file:///home/me/proj", "/home/me/proj"),
    ("file://localhost/home/me/my%20proj", "/home/me/my proj"),
])
def test_path_of_a_root(uri, path):
    assert path_of_root(uri) == path


@pytest.mark.parametrize("uri", ["https://example.com/x", "file://server/share", "file:relative"])
def test_a_root_that_is_no_local_folder_is_refused(uri):
    with pytest.raises(ToolFailure):
        path_of_root(uri)


# --------------------------------------------------------------------------- list, forget


def test_list_and_forget_in_two_calls(env):
    async def body(session):
        draft = await session.call_tool("save", {"cwd": env["project"], **SAVE})
        await session.call_tool("save", {"cwd": env["project"], **SAVE,
                                         "confirm": draft.structured_content["confirm_token"]})
        listed = await session.call_tool("list", {})
        entry_id = draft.structured_content["entries"][0]["id"]
        forget = await session.call_tool("forget", {"cwd": env["project"], "entry": entry_id})
        kept = note_text(env)
        done = await session.call_tool("forget", {
            "cwd": env["project"], "entry": entry_id,
            "confirm": forget.structured_content["confirm_token"]})
        missing = await session.call_tool("forget", {"cwd": env["project"], "entry": "zzzzzz"})
        return entry_id, listed, forget, kept, done, missing

    entry_id, listed, forget, kept, done, missing = run(env, body)
    slugs = [item["slug"] for item in listed.structured_content["notes"]]
    assert len(slugs) == 1 and slugs[0].startswith("payments-api-")
    assert "Parse replies" not in listed.content[0].text  # slugs and dates, never content
    assert forget.structured_content["status"] == "draft" and SAVE["text"] in kept
    assert not done.is_error, done.content
    archived = done.structured_content["archived"]
    assert SAVE["text"] not in note_text(env)
    with open(archived, encoding="utf-8") as handle:
        assert SAVE["text"] in handle.read()
    assert done.structured_content["restore"] == f"memcite note restore {os.path.basename(archived)}"
    assert note_log(env)[-1] == ("mcp forget", "forget", entry_id, "mcp-confirm")
    assert refusal(missing)[0] is None and "zzzzzz" in missing.content[0].text


def test_a_forget_token_does_not_forget_the_whole_note(env):
    async def body(session):
        draft = await session.call_tool("save", {"cwd": env["project"], **SAVE})
        await session.call_tool("save", {"cwd": env["project"], **SAVE,
                                         "confirm": draft.structured_content["confirm_token"]})
        entry_id = draft.structured_content["entries"][0]["id"]
        forget = await session.call_tool("forget", {"cwd": env["project"], "entry": entry_id})
        return await session.call_tool("forget", {
            "cwd": env["project"], "confirm": forget.structured_content["confirm_token"]})

    assert refusal(run(env, body))[0] == "needs-confirmation"
    assert SAVE["text"] in note_text(env)


# --------------------------------------------------------------------------- stats, lint


def cli(env, *args) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-m", "memcite", *args], capture_output=True,
                          text=True, env=env["env"], cwd=env["elsewhere"], timeout=60)
    return done.returncode, done.stdout, done.stderr


def test_stats_refuses_as_the_command_does_without_usage_data(env):
    result = run(env, lambda s: s.call_tool("stats", {}))
    code, out, err = cli(env, "stats", "--json")
    assert code != 0 and out == ""
    assert result.is_error
    assert result.structured_content["error"]["exit_code"] == code if code != 3 else \
        result.structured_content["refused"]["reason"] == "usage-unknown"
    error = json.loads(err)  # with --json, the command's error is one JSON object (issue 40)
    assert error["exit_code"] == code
    assert result.content[0].text.split(": ", 2)[-1] == f"{error['error']}\n  hint: {error['hint']}"


def test_stats_reports_what_the_command_reports(env):
    conn_code, _, _ = cli(env, "note", "save", "x", "--section", "state", "--cwd", env["project"])
    assert conn_code == 0  # the database now exists
    result = run(env, lambda s: s.call_tool("stats", {"as_of": "2027-01-01T00:00:00Z"}))
    code, out, err = cli(env, "stats", "--json", "--as-of", "2027-01-01T00:00:00Z")
    if code:
        error = json.loads(err)  # with --json, the command's error is one JSON object
        assert result.is_error and result.content[0].text.split(": ", 2)[-1] == \
            f"{error['error']}\n  hint: {error['hint']}"
    else:
        assert not result.is_error, result.content
        assert result.structured_content == json.loads(out)


def test_lint_reports_what_the_command_reports(env):
    memories = env["tmp"] / "codex-home" / "memories"
    memories.mkdir()
    (memories / "MEMORY.md").write_text("not a memory file\n")
    result = run(env, lambda s: s.call_tool("lint", {}))
    code, out, _ = cli(env, "lint", "--json")
    assert not result.is_error, result.content
    expected = json.loads(out)
    got = result.structured_content
    assert got["findings"] == expected["findings"] and got["files"] == expected["files"] >= 1
    assert got["paths"] == expected["paths"] == [str(memories)]
    assert (code == 1) == bool(got["errors"])
    missing = run(env, lambda s: s.call_tool("lint", {"paths": [str(env["tmp"] / "none")]}))
    assert refusal(missing)[0] is None and "no such file" in missing.content[0].text


def test_bad_arguments_are_a_tool_error(env):
    async def body(session):
        return (await session.call_tool("save", {"cwd": env["project"], "text": "x",
                                                 "section": "elsewhere"}),
                await session.call_tool("recall", {"cwd": env["project"], "colour": "blue"}),
                await session.call_tool("nope", {}))

    for result in run(env, body):
        assert result.is_error and refusal(result)[0] is None
    assert "bad arguments" in result.content[0].text or "no tool" in result.content[0].text


# --------------------------------------------------------------------------- without the server


def test_tokens_are_bound_single_use_and_expiring():
    now = [1000.0]
    tokens = mcp_tools.ConfirmTokens(ttl=10, clock=lambda: now[0])
    token, expires_at = tokens.issue("a")
    assert expires_at == 1010
    tokens.redeem(token, "a")
    with pytest.raises(ToolFailure, match="already used"):
        tokens.redeem(token, "a")
    token, _ = tokens.issue("a")
    now[0] = 1010
    with pytest.raises(ToolFailure, match="expired"):
        tokens.redeem(token, "a")


def test_setup_codex_wires_the_mcp_server_in():
    from typer.main import get_command

    from memcite.cli.app import app
    from memcite.cli.codex_app import available_commands

    assert available_commands(get_command(app)) == {"mcp", "lint --hook", "hook pre-tool"}


def test_no_command_imports_the_mcp_package():
    """The SDK is the tests' client only: the server is memcite's own loop."""
    code = ("import sys, memcite.cli.app, memcite.cli.notes_commands, memcite.mcp.server\n"
            "import memcite.mcp.tools, memcite.mcp.catalog\n"
            "print(any(name.split('.')[0] in ('mcp', 'mcp_types') for name in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_the_help_names_every_tool_the_server_lists():
    """``memcite mcp --help`` says which tools it serves: all of them, as the catalog lists them."""
    import json
    from pathlib import Path

    from typer.testing import CliRunner

    import memcite.mcp
    from memcite.cli.app import app

    catalog = json.loads((Path(memcite.mcp.__file__).with_name("tools.json")).read_text(encoding="utf-8"))
    shown = " ".join(CliRunner().invoke(app, ["mcp", "--help"], env={"COLUMNS": "200"}).output.split())
    missing = [tool["name"] for tool in catalog["tools"] if tool["name"] not in shown]
    assert missing == []
