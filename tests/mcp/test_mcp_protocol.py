"""memcite's own MCP loop (``memcite.mcp.server``): the JSON-RPC it speaks, bad input, start-up.

Most tests drive a ``Connection`` in this process over in-memory streams; those about
start-up and stdout run ``memcite mcp`` as a subprocess. The SDK's client drives the
server in ``test_mcp.py``.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memcite.mcp import catalog as mcp_catalog
from memcite.mcp import server as mcp_server
from memcite.mcp import tools as mcp_tools
from memcite.mcp.server import PROTOCOL_VERSIONS, Connection
from memcite.paths import Locations

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}},
                         "clientInfo": {"name": "test", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
NO_ROOTS = {**INITIALIZE, "params": {**INITIALIZE["params"], "capabilities": {}}}


@pytest.fixture
def home(tmp_path):
    (tmp_path / "codex-home").mkdir()
    (tmp_path / "project" / ".git").mkdir(parents=True)
    return tmp_path


def line(message) -> bytes:
    return (message if isinstance(message, bytes) else json.dumps(message).encode()) + b"\n"


def connection(home, reader, writer, cls=Connection) -> Connection:
    return cls(reader, writer, locations=Locations(db=str(home / "db.sqlite"),
                                                   codex_home=str(home / "codex-home")),
               confirm_ttl=600, version="9.9")


def exchange(home, *messages, cls=Connection) -> list[dict]:
    """Serve ``messages`` (dicts, or raw bytes for a line as it is) to the end; the answers."""
    out = io.BytesIO()
    connection(home, io.BytesIO(b"".join(line(m) for m in messages)), out, cls).serve()
    lines = out.getvalue().splitlines()
    assert all(json.loads(raw) is not None for raw in lines)  # every answer is one JSON line
    return [json.loads(raw) for raw in lines]


def by_id(answers: list[dict]) -> dict:
    return {answer["id"]: answer for answer in answers}


class Live:
    """A connection served in a thread over pipes, for exchanges that need the client's turn."""

    def __init__(self, home, cls=Connection):
        to_server, self._in = os.pipe()
        self._out, from_server = os.pipe()
        self.writer = open(self._in, "wb", buffering=0)
        self.reader = open(self._out, "rb")
        self.server = connection(home, open(to_server, "rb"), open(from_server, "wb"), cls)
        self.thread = threading.Thread(target=self._serve)
        self.thread.start()

    def _serve(self):
        try:
            self.server.serve()
        finally:
            self.server._writer.close()
            self.server._reader.close()

    def send(self, message) -> None:
        self.writer.write(line(message))

    def receive(self) -> dict:
        return json.loads(self.reader.readline())

    def close(self) -> None:
        self.writer.close()
        self.thread.join(timeout=30)
        self.reader.close()


# --------------------------------------------------------------------------- the handshake


@pytest.mark.parametrize("version", PROTOCOL_VERSIONS)
def test_initialize_answers_the_version_the_client_asks_for(home, version):
    request = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": version}}
    (answer,) = exchange(home, request)
    assert answer == {"jsonrpc": "2.0", "id": 1, "result": {
        "protocolVersion": version, "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": "memcite", "version": "9.9"},
        "instructions": mcp_server.INSTRUCTIONS}}


@pytest.mark.parametrize("version", ["2026-07-28", "1999-01-01", "latest"])
def test_an_unknown_version_gets_the_newest_handshake_version(home, version):
    request = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": version}}
    (answer,) = exchange(home, request)
    assert answer["result"]["protocolVersion"] == PROTOCOL_VERSIONS[-1] == "2025-11-25"


@pytest.mark.parametrize("params", [None, {}, {"protocolVersion": 20250618}])
def test_initialize_without_a_version_is_invalid_params(home, params):
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
    if params is not None:
        request["params"] = params
    (answer,) = exchange(home, request)
    assert answer["error"]["code"] == -32602 and "protocolVersion" in answer["error"]["message"]


def test_ping_notifications_and_string_ids(home):
    answers = exchange(home, INITIALIZE, INITIALIZED, {"jsonrpc": "2.0", "id": "a-1", "method": "ping"},
                       {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
                       {"jsonrpc": "2.0", "method": "no/such/notification", "params": [1]})
    assert [answer["id"] for answer in answers] == [1, "a-1"]  # notifications get no answer
    assert answers[1] == {"jsonrpc": "2.0", "id": "a-1", "result": {}}


# --------------------------------------------------------------------------- tools/list


def test_tools_list_is_the_shipped_catalog(home):
    answers = by_id(exchange(home, INITIALIZE, INITIALIZED,
                             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                             {"jsonrpc": "2.0", "id": 3, "method": "tools/list",
                              "params": {"cursor": "anything"}}))
    tools = answers[2]["result"]["tools"]
    assert "nextCursor" not in answers[2]["result"]
    assert tools == mcp_catalog.load() == mcp_catalog.tool_list()
    assert answers[3]["result"] == answers[2]["result"]


def test_the_shipped_catalog_is_the_models_current_tool_list():
    with open(mcp_catalog.CATALOG_FILE, encoding="utf-8") as handle:
        assert handle.read() == mcp_catalog.catalog_text(), (
            "run `.venv/bin/python -m memcite.mcp.catalog --write`")
    assert mcp_catalog.main(["--check"]) == 0


def test_the_catalog_is_written_and_checked(tmp_path, monkeypatch, capsys):
    target = tmp_path / "mcp_tools.json"
    monkeypatch.setattr(mcp_catalog, "CATALOG_FILE", str(target))
    assert mcp_catalog.main(["--check"]) == 1 and "not current" in capsys.readouterr().err
    assert mcp_catalog.main(["--write"]) == 0
    assert mcp_catalog.main(["--check"]) == 0
    assert mcp_catalog.load(str(target)) == mcp_catalog.tool_list()
    assert mcp_catalog.main([]) == 2


@pytest.mark.parametrize("content", [None, b"", b"{not json", b'{"tools": 3}', b"[]"])
def test_a_missing_or_damaged_catalog_is_made_from_the_models(tmp_path, content):
    path = tmp_path / "mcp_tools.json"
    if content is not None:
        path.write_bytes(content)
    assert mcp_catalog.load(str(path)) == mcp_catalog.tool_list()


def test_the_annotations_say_what_each_tool_may_change():
    hints = {tool["name"]: tool["annotations"] for tool in mcp_catalog.load()}
    for name in ("recall", "list", "stats", "lint"):
        assert hints[name] == {"readOnlyHint": True, "destructiveHint": False,
                               "openWorldHint": False}, name
    # save replaces an entry it merges with: destructive, so Codex asks the person first
    assert hints["save"] == {"readOnlyHint": False, "destructiveHint": True,
                             "idempotentHint": True, "openWorldHint": False}
    assert hints["forget"] == {"readOnlyHint": False, "destructiveHint": True,
                               "idempotentHint": True, "openWorldHint": False}


def codex_requires_approval(annotations: dict | None) -> bool:
    """Codex's rule in its default (auto) mode: ``requires_mcp_tool_approval`` in
    codex-rs/core/src/mcp_tool_call.rs; an absent hint counts as MCP's default."""
    annotations = annotations or {}
    destructive = annotations.get("destructiveHint")
    if destructive is True:
        return True
    if annotations.get("readOnlyHint") is True:
        return False
    return (True if destructive is None else destructive) or annotations.get("openWorldHint", True)


def test_codex_asks_the_person_before_every_write():
    """Codex's own approval prompt comes before ``save`` and ``forget``; their draft and
    confirm token are a second gate (the e2e suite runs the real Codex: tests/e2e/test_e2e_mcp.py)."""
    approval = {tool["name"]: codex_requires_approval(tool["annotations"])
                for tool in mcp_catalog.load()}
    assert approval == {"recall": False, "save": True, "list": False, "forget": True,
                        "stats": False, "lint": False, "log_event": True,
                        "check_approach": False, "file_history": False, "search": False}
    # the rule itself, as Codex's own tests have it
    assert codex_requires_approval(None) is True
    assert codex_requires_approval({"readOnlyHint": True, "destructiveHint": True}) is True
    assert codex_requires_approval({"readOnlyHint": False, "destructiveHint": False,
                                    "openWorldHint": False}) is False


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("raw, code", [
    (b"not json", -32700),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "ping"', -32700),  # cut short
    (b"\xff\xfe{}", -32700),  # not UTF-8
    (b"[" * 100_000, -32700),  # nested too deep for the parser
    (b"[1, 2]", -32600),  # a batch
    (b"[]", -32600),
    (b"42", -32600),
    (b'"ping"', -32600),
    (b"null", -32600),
    (b'{"jsonrpc": "2.0"}', -32600),  # no method, no id
    (b'{"id": 5, "method": "ping"}', -32600),  # no jsonrpc
    (b'{"jsonrpc": "1.0", "id": 5, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 5, "method": 7}', -32600),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": [1]}', -32602),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": "x"}', -32602),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call"}', -32602),  # no name
    (b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": 3}}', -32602),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "list", '
     b'"arguments": [1]}}', -32602),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "resources/list"}', -32601),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "server/discover", "params": {}}', -32601),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "logging/setLevel", "params": {"level": "info"}}',
     -32601),
])
def test_bad_input_gets_a_json_rpc_error_and_the_server_goes_on(home, raw, code):
    answers = exchange(home, INITIALIZE, raw, {"jsonrpc": "2.0", "id": 99, "method": "ping"})
    assert answers[0]["id"] == 1 and answers[-1] == {"jsonrpc": "2.0", "id": 99, "result": {}}
    (error,) = answers[1:-1]
    assert error["jsonrpc"] == "2.0" and error["error"]["code"] == code
    assert isinstance(error["error"]["message"], str) and error["error"]["message"]
    # the request's id when it had a usable one, else null
    assert error["id"] == (5 if b'"id": 5' in raw and code != -32700 else None)


def test_an_unknown_method_names_itself(home):
    (answer,) = exchange(home, {"jsonrpc": "2.0", "id": 7, "method": "prompts/list"})
    assert answer["error"] == {"code": -32601, "message": "Method not found", "data": "prompts/list"}


def test_empty_lines_crlf_and_stray_responses_are_taken_calmly(home):
    answers = exchange(home, b"", b"   ", line(INITIALIZE).strip() + b"\r",
                       {"jsonrpc": "2.0", "id": 77, "result": {}},  # answers nothing we asked
                       {"jsonrpc": "2.0", "id": 78, "error": {"code": 1, "message": "x"}},
                       {"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert [answer["id"] for answer in answers] == [1, 2]


def test_a_message_over_the_size_limit_is_skipped(home, monkeypatch):
    monkeypatch.setattr(mcp_server, "MAX_MESSAGE_BYTES", 256)
    huge = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"x": "y" * 1000}})
    answers = exchange(home, INITIALIZE, huge.encode(), {"jsonrpc": "2.0", "id": 4, "method": "ping"})
    assert [answer["id"] for answer in answers] == [1, None, 4]
    assert answers[1]["error"]["code"] == -32600 and "longer than 256 bytes" in answers[1]["error"]["message"]


def test_a_bug_in_a_handler_is_an_internal_error(home):
    class Broken(Connection):
        def _ping(self, request_id, params):
            raise KeyError("boom")

        _HANDLERS = {**Connection._HANDLERS, "ping": _ping}

    answers = exchange(home, {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                       {"jsonrpc": "2.0", "method": "ping"}, INITIALIZE, cls=Broken)
    assert answers[0]["error"]["code"] == -32603 and answers[1]["id"] == 1
    assert "result" in answers[1]


def test_a_closed_output_ends_the_server_quietly(home):
    class Gone(io.RawIOBase):
        def writable(self):
            return True

        def write(self, data):
            raise BrokenPipeError

    reader = io.BytesIO(line(INITIALIZE) * 1000)
    connection(home, reader, Gone()).serve()  # no exception
    assert reader.tell() < len(reader.getvalue())  # it stopped reading


def test_a_lone_surrogate_is_sent_as_an_escape(home):
    out = io.BytesIO()
    connection(home, io.BytesIO(), out)._result(3, {"path": "/tmp/caf\udce9"})
    raw = out.getvalue()
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1 and raw.isascii()
    assert json.loads(raw)["result"]["path"] == "/tmp/caf\udce9"


# --------------------------------------------------------------------------- tools/call


def call(request_id, name, arguments=None) -> dict:
    params = {"name": name} if arguments is None else {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_calls_run_and_the_input_end_waits_for_them(home):
    answers = by_id(exchange(home, INITIALIZE, INITIALIZED, call(2, "list", {}),
                             call(3, "recall", {"cwd": str(home / "project")}), call(4, "list")))
    assert answers[2]["result"] == {"content": [{"type": "text", "text": '{"notes": []}'}],
                                    "structuredContent": {"notes": []}, "isError": False}
    assert answers[3]["result"]["structuredContent"]["exists"] is False
    assert answers[4]["result"]["isError"] is False  # no arguments: as {}


def test_a_tool_failure_is_a_tool_error_not_a_protocol_error(home):
    answers = by_id(exchange(home, NO_ROOTS, call(2, "nope", {}), call(3, "recall", {"colour": 1}),
                             call(4, "save", {"text": "x", "section": "state"})))
    for request_id, words in ((2, "no tool 'nope'"), (3, "bad arguments for recall"),
                              (4, "this client offers no roots")):
        result = answers[request_id]["result"]
        assert result["isError"] is True and words in result["content"][0]["text"], result
        assert result["structuredContent"]["error"]["exit_code"] == 2


def test_a_client_without_the_roots_capability_is_not_asked(home):
    answers = exchange(home, NO_ROOTS, call(2, "recall", {}))
    assert all(answer.get("method") != "roots/list" for answer in answers)
    assert "offers no roots" in answers[-1]["result"]["content"][0]["text"]


def test_the_working_directory_comes_from_roots_list(home):
    live = Live(home)
    try:
        live.send(INITIALIZE)
        assert live.receive()["id"] == 1
        live.send(INITIALIZED)
        live.send(call("c1", "recall", {}))
        asked = live.receive()
        assert asked["method"] == "roots/list" and "params" not in asked
        live.send({"jsonrpc": "2.0", "id": "unrelated", "result": {}})  # ignored
        live.send({"jsonrpc": "2.0", "id": 42, "method": "ping"})  # read while the call waits
        assert live.receive() == {"jsonrpc": "2.0", "id": 42, "result": {}}
        live.send({"jsonrpc": "2.0", "id": asked["id"],
                   "result": {"roots": [{"uri": (home / "project").as_uri(), "name": "p"}]}})
        answer = live.receive()
        assert answer["id"] == "c1", answer
        assert answer["result"]["structuredContent"]["project"] == os.path.realpath(home / "project")
        live.send(call("c2", "recall", {}))
        asked_again = live.receive()
        assert asked_again["method"] == "roots/list" and asked_again["id"] != asked["id"]
        live.send({"jsonrpc": "2.0", "id": asked_again["id"],
                   "error": {"code": -32601, "message": "no roots here"}})
        failed = live.receive()["result"]
        assert failed["isError"] and "no roots here" in failed["content"][0]["text"]
    finally:
        live.close()


@pytest.mark.parametrize("answer, words", [
    ({"roots": "file:///x"}, "no list of roots"),
    ({"roots": [{"name": "no uri"}]}, "no list of roots"),
    ([], "no list of roots"),
    ({"roots": []}, "lists no roots"),
    ({"roots": [{"uri": "https://example.com/x"}]}, "not a local file:// folder"),
])
def test_a_useless_roots_answer_is_a_tool_error(home, answer, words):
    live = Live(home)
    try:
        live.send(INITIALIZE)
        live.receive()
        live.send(call(2, "recall", {}))
        asked = live.receive()
        live.send({"jsonrpc": "2.0", "id": asked["id"], "result": answer})
        result = live.receive()["result"]
        assert result["isError"] and words in result["content"][0]["text"], result
    finally:
        live.close()


def test_an_unanswered_roots_list_times_out(home, monkeypatch):
    monkeypatch.setattr(mcp_server, "ROOTS_TIMEOUT_SECONDS", 0.3)
    live = Live(home)
    try:
        live.send(INITIALIZE)
        live.receive()
        live.send(call(2, "recall", {}))
        asked = live.receive()
        assert asked["method"] == "roots/list"
        result = live.receive()["result"]
        assert result["isError"] and "no answer to roots/list within 0.3 s" in result["content"][0]["text"]
        live.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": []}})  # too late: ignored
        live.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert live.receive()["id"] == 3
    finally:
        live.close()


def test_a_cancelled_call_gets_no_answer(home):
    gate = threading.Event()

    class Gated(Connection):
        def _load_tools(self):
            gate.wait(10)
            return super()._load_tools()

        def _notification(self, method, params):
            super()._notification(method, params)
            if method == "notifications/cancelled":
                gate.set()

    answers = exchange(home, INITIALIZE, call(2, "list", {}),
                       {"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 2, "reason": "user"}},
                       {"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 999}},  # no such call: nothing happens
                       call(3, "list", {}), cls=Gated)
    assert sorted(answer["id"] for answer in answers) == [1, 3]


def test_tools_that_cannot_be_loaded_are_a_tool_error(home):
    class Broken(Connection):
        def _load_tools(self):
            raise ImportError("No module named 'pydantic'")

    answers = by_id(exchange(home, INITIALIZE, call(2, "list", {}), cls=Broken))
    result = answers[2]["result"]
    assert result["isError"] and "the tools could not be loaded (ImportError" in result["content"][0]["text"]
    assert result["structuredContent"]["error"]["exit_code"] == 1


def test_calls_share_one_context_and_the_tokens_in_it(home):
    connection_ = connection(home, io.BytesIO(), io.BytesIO())
    tools, context = connection_._load_tools()
    assert tools is mcp_tools and connection_._load_tools()[1] is context
    assert context.codex_home == str(home / "codex-home") and context.tokens.ttl == 600


# --------------------------------------------------------------------------- the process


def server_env(home) -> dict:
    return {**os.environ, "CODEX_HOME": str(home / "codex-home"), "MEMCITE_HOME": str(home),
            "MEMCITE_DB": str(home / "db.sqlite"), "MEMCITE_CACHE_DIR": str(home / "cache")}


def test_listing_the_tools_imports_neither_pydantic_nor_the_tool_bodies(home):
    """What initialize and tools/list load: the standard library and memcite's command line."""
    code = (
        "import io, json, sys\n"
        "from memcite.mcp.server import Connection\n"
        "from memcite.paths import Locations\n"
        "class NoWarmUp(Connection):\n"
        "    def _start_warm_up(self): pass\n"
        "out = io.BytesIO()\n"
        "lines = [{'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': "
        "{'protocolVersion': '2025-06-18', 'capabilities': {}}}, "
        "{'jsonrpc': '2.0', 'id': 2, 'method': 'tools/list'}]\n"
        "raw = b''.join(json.dumps(m).encode() + b'\\n' for m in lines)\n"
        "NoWarmUp(io.BytesIO(raw), out, locations=Locations(codex_home='/nowhere'), confirm_ttl=1).serve()\n"
        "assert len(json.loads(out.getvalue().splitlines()[1])['result']['tools']) == 10\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'mcp', 'mcp_types', "
        "'typer'}), sorted(m for m in sys.modules if m.startswith(('memcite.notes', "
        "'memcite.mcp.tools', 'memcite.contracts.outputs'))))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] []"


def test_the_warm_up_loads_the_tools_once_tools_list_is_answered(home):
    live = Live(home)
    try:
        live.send(INITIALIZE)
        live.receive()
        assert live.server._warm_up is None
        live.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        live.receive()
        deadline = time.monotonic() + 30
        while live.server._warm_up is None and time.monotonic() < deadline:
            time.sleep(0.01)
        live.server._warm_up.join(30)
        assert live.server._tools is mcp_tools
    finally:
        live.close()


def test_nothing_a_tool_prints_reaches_the_protocol_stream():
    code = ("import os, sys\n"
            "from memcite.mcp.server import _protocol_output\n"
            "out = _protocol_output()\n"
            "print('stray print'); sys.stdout.flush(); os.write(1, b'stray write\\n')\n"
            "out.write(b'protocol\\n'); out.flush()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"protocol\n"
    assert b"stray print" in done.stderr and b"stray write" in done.stderr


def test_memcite_mcp_answers_and_exits_0_at_the_end_of_its_input(home):
    started = time.perf_counter()
    messages = [INITIALIZE, INITIALIZED, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                b"garbage", call(3, "list", {})]
    done = subprocess.run([sys.executable, "-m", "memcite", "mcp"], env=server_env(home),
                          input=b"".join(line(m) for m in messages), capture_output=True,
                          timeout=60)
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    answers = [json.loads(raw) for raw in done.stdout.splitlines()]
    assert [answer["id"] for answer in answers] == [1, 2, None, 3]
    assert answers[3]["result"]["structuredContent"] == {"notes": []}
    assert time.perf_counter() - started < 30


def test_the_server_does_not_read_its_own_working_directory(home, tmp_path):
    """The same tool list from anywhere: the catalog is found beside the module."""
    done = subprocess.run([sys.executable, "-m", "memcite", "mcp"], env=server_env(home),
                          cwd=tmp_path, input=line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
                          capture_output=True, timeout=60)
    assert json.loads(done.stdout)["result"]["tools"] == mcp_catalog.load()
    assert Path(mcp_catalog.CATALOG_FILE).parent == Path(mcp_server.__file__).parent


@pytest.mark.parametrize("args", [["--codex-home", "HOME"], ["--confirm-ttl", "30"], []])
def test_the_fast_path_and_typer_serve_the_same(home, args):
    """`memcite mcp` runs without Typer (its import was most of the start-up); the answers are
    the same bytes as through Typer, and a value Typer would refuse goes to Typer."""
    args = [str(home / "codex-home") if a == "HOME" else a for a in args]
    messages = [INITIALIZE, INITIALIZED, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                call(3, "list", {})]
    outputs = []
    for no_fastpath in ("", "1"):
        env = {**server_env(home), "MEMCITE_NO_FASTPATH": no_fastpath} if no_fastpath \
            else server_env(home)
        done = subprocess.run([sys.executable, "-m", "memcite", "mcp", *args], env=env,
                              input=b"".join(line(m) for m in messages), capture_output=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    refused = subprocess.run([sys.executable, "-m", "memcite", "mcp", "--confirm-ttl", "0"],
                             env=server_env(home), input=b"", capture_output=True, timeout=60)
    assert refused.returncode == 2 and b"--confirm-ttl" in refused.stderr


def test_started_on_a_terminal_it_says_on_stderr_what_it_serves(home, tmp_path):
    # A person who types `memcite mcp` gets a word on stderr, not a silent wait; stdout
    # stays the protocol's.
    import pty

    leader, follower = pty.openpty()
    env = {**os.environ, "HOME": str(tmp_path), "CODEX_HOME": str(home)}
    process = subprocess.Popen([sys.executable, "-m", "memcite", "mcp"], stdin=follower,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    os.close(follower)
    try:
        time.sleep(1.5)
        os.write(leader, b"\x04")  # Ctrl-D: the end of its input
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    assert "serving memcite's notes to Codex as MCP tools over stdin" in err.decode()
    assert out == b""


def test_started_by_a_client_it_says_nothing_on_stderr(home, tmp_path):
    env = {**os.environ, "HOME": str(tmp_path), "CODEX_HOME": str(home)}
    done = subprocess.run([sys.executable, "-m", "memcite", "mcp"], input=b"",
                          capture_output=True, env=env, timeout=30)
    assert done.returncode == 0 and b"serving" not in done.stderr
