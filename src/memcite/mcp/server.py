"""``memcite mcp``: memcite's project notes as MCP tools, served on stdio by a small loop of its own.

Why not the MCP Python SDK's server: Codex does not wait for an MCP server that is
not ``required``; a server's tools reach the model only once it has answered
``initialize``, and Codex sends its first model request 0.7-1.5 s after it starts.
Built on the SDK's low-level ``Server``, ``memcite mcp`` answered ``initialize``
about 0.6 s after its start (1.1-1.5 s on slower machines), most of it importing
the SDK (~0.3 s: its client, HTTP and server-framework modules come along), its
``mcp_types`` (~0.07 s) and memcite's pydantic models, so its tools were often
missing from a session's first request. Answering ``initialize`` early while the
SDK imported in a thread was the other design weighed: the SDK's session must
then be handed a handshake it did not see, and ``tools/list`` (what Codex needs)
would still wait for the whole import, with the import holding the GIL. This loop
imports only the standard library and answers both at about 0.14 s, of which
~0.1 s is memcite's Typer command line and ~0.04 s the server itself (medians of
``benchmarks/bench_mcp.py``; a Python server of a few lines answers at ~0.015 s).

What it speaks: newline-delimited JSON-RPC 2.0 on stdin and stdout, the part of
MCP memcite needs: ``initialize`` (the version the client asks for when it is one
of ``PROTOCOL_VERSIONS``, else the newest of them), ``notifications/initialized``,
``ping``, ``tools/list``, ``tools/call``, ``notifications/cancelled``, and the
server's own ``roots/list`` request to the client (for a call without ``cwd``).
Any other method is ``-32601``; a line that is not JSON, ``-32700``; JSON that is
no request, ``-32600`` (batches included); bad parameters, ``-32602``. Nothing the
client sends ends the server: only the end of its input does (the calls still
running finish first). The protocol has a private copy of stdout: file descriptor
1 and ``sys.stdout`` point at stderr while serving, so nothing a tool prints can
corrupt it. The official SDK's client drives this server in the tests.

How the tools load: ``tools/list`` is answered from ``tools.json``
(``memcite.mcp.catalog``: generated from the pydantic models, checked by a
test). Once it is answered, a background thread imports the tools
(``memcite.mcp.tools``: pydantic, the notes library); a ``tools/call`` waits
for that thread, so the first call of a session rarely waits at all. (Started at
``initialize`` instead, the import shared the GIL with ``tools/list`` and delayed it
by ~5 ms, for a first call ~10 ms sooner: Codex needs the list first.) Calls run in
threads of their own, at most ``CALL_WORKERS`` at a time, so a ``ping`` or the
client's answer to ``roots/list`` is read while a call runs.

The working directory of a call is its ``cwd`` argument (an absolute path) or,
without one, the client's single ``file://`` root; it is never guessed. A failure
is a tool error (``isError``) whose text names the reason and whose structured
content is the refusal object ``memcite note --json`` prints, with the same reason
code (``memcite.mcp.tools.call_tool``).
"""

from __future__ import annotations

import json
import os
import sys
import threading

from memcite.mcp import catalog
from memcite.untrusted import loads_json

# The versions reached through the initialize handshake, oldest first. The tools use
# nothing newer than 2025-06-18 (structured content, output schemas); older clients
# ignore those fields and read the JSON text.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
SERVER_NAME = "memcite"
INSTRUCTIONS = ("Project notes of the current project: recall reads them; save and forget take "
                "two calls, the second only after the person said yes.")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

MAX_MESSAGE_BYTES = 16 * 1024 * 1024  # a longer line is refused (and skipped), not read whole
ROOTS_TIMEOUT_SECONDS = 60.0  # how long a call waits for the client's answer to roots/list
CALL_WORKERS = 8  # calls running at once; more wait their turn


def _is_id(value: object) -> bool:
    """A request id as MCP allows it: a string or an integer (never null, nor a bool)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class _Waiter:
    """A request of ours to the client, waiting for its answer (None: the client left)."""

    __slots__ = ("answered", "message")

    def __init__(self) -> None:
        self.answered = threading.Event()
        self.message: dict | None = None


class Connection:
    """One client on a pair of binary streams: ``serve`` reads until the input ends."""

    def __init__(self, reader, writer, *, locations, confirm_ttl: float,
                 version: str = "0") -> None:
        self._reader = reader
        self._writer = writer
        self._locations = locations  # the run's memcite.paths.Locations, built by the caller
        self._confirm_ttl = confirm_ttl
        self._version = version
        self._write_lock = threading.Lock()
        self._output_closed = False
        self._state_lock = threading.Lock()
        self._input_closed = False
        self._client_capabilities: dict = {}
        self._pending: dict[int, _Waiter] = {}  # our requests to the client, by id
        self._next_id = 0
        self._running: dict[object, bool] = {}  # calls in progress -> cancelled by the client
        self._threads: list[threading.Thread] = []
        self._call_slots = threading.BoundedSemaphore(CALL_WORKERS)
        self._catalog: list[dict] | None = None
        self._load_lock = threading.Lock()
        self._tools = None  # the module memcite.mcp.tools, once imported
        self._context = None
        self._warm_up: threading.Thread | None = None

    # ------------------------------------------------------------------ reading

    def serve(self) -> None:
        """Answer the client until its input ends (or the output is gone)."""
        try:
            while not self._output_closed:
                line = self._read_line()
                if line is None:
                    break
                if line.strip():
                    self._receive(line)
        finally:
            self._finish()

    def _read_line(self) -> bytes | None:
        """The next line (b"" for one refused as too long), None at the end of the input."""
        line = self._reader.readline(MAX_MESSAGE_BYTES + 1)
        if not line:
            return None
        if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
            while True:  # skip the rest of it
                rest = self._reader.readline(MAX_MESSAGE_BYTES)
                if not rest or rest.endswith(b"\n"):
                    break
            self._error(None, INVALID_REQUEST, f"a message longer than {MAX_MESSAGE_BYTES} bytes "
                        "was skipped")
            return b""
        return line

    def _receive(self, line: bytes) -> None:
        try:
            message = loads_json(line)
        except ValueError:  # not JSON, not UTF-8, nested too deep
            self._error(None, PARSE_ERROR, "Parse error: the line is not a JSON message")
            return
        request_id = message.get("id") if isinstance(message, dict) else None
        try:
            self._dispatch(message)
        except Exception as error:  # noqa: BLE001 - a bug must not end the server
            import logging

            logging.getLogger("memcite.mcp").exception("a message could not be handled")
            if isinstance(message, dict) and "method" in message and _is_id(request_id):
                self._error(request_id, INTERNAL_ERROR, f"Internal error: {type(error).__name__}")

    def _dispatch(self, message: object) -> None:
        if isinstance(message, list):
            self._error(None, INVALID_REQUEST, "Invalid request: batches are not supported")
            return
        if not isinstance(message, dict):
            self._error(None, INVALID_REQUEST, "Invalid request: a message is a JSON object")
            return
        has_id = "id" in message
        request_id = message.get("id")
        reply_to = request_id if _is_id(request_id) else None
        if message.get("jsonrpc") != "2.0":
            self._error(reply_to, INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"')
            return
        if "method" not in message:
            if has_id and ("result" in message or "error" in message):
                self._answered(request_id, message)
            else:
                self._error(reply_to, INVALID_REQUEST,
                            "Invalid request: neither a request, a notification nor a response")
            return
        method = message["method"]
        if not isinstance(method, str):
            self._error(reply_to, INVALID_REQUEST, 'Invalid request: "method" must be a string')
            return
        params = message.get("params")
        if not has_id:
            self._notification(method, params)
            return
        if reply_to is None:
            self._error(None, INVALID_REQUEST, 'Invalid request: "id" must be a string or an '
                        "integer")
            return
        if params is None:
            params = {}
        if not isinstance(params, dict):
            self._error(request_id, INVALID_PARAMS, 'Invalid params: "params" must be an object')
            return
        handler = self._HANDLERS.get(method)
        if handler is None:
            self._error(request_id, METHOD_NOT_FOUND, "Method not found", data=method)
            return
        handler(self, request_id, params)

    def _notification(self, method: str, params: object) -> None:
        """``notifications/cancelled`` drops the answer of a running call; others need nothing."""
        if method == "notifications/cancelled" and isinstance(params, dict):
            with self._state_lock:
                if params.get("requestId") in self._running:
                    self._running[params["requestId"]] = True

    def _answered(self, request_id: object, message: dict) -> None:
        with self._state_lock:
            waiter = self._pending.pop(request_id, None) if _is_id(request_id) else None
        if waiter is not None:
            waiter.message = message
            waiter.answered.set()

    # ------------------------------------------------------------------ the methods

    def _initialize(self, request_id, params: dict) -> None:
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            self._error(request_id, INVALID_PARAMS, 'Invalid params: initialize needs '
                        '"protocolVersion" (a string)')
            return
        capabilities = params.get("capabilities")
        self._client_capabilities = capabilities if isinstance(capabilities, dict) else {}
        self._result(request_id, {
            "protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": SERVER_NAME, "version": self._version},
            "instructions": INSTRUCTIONS,
        })

    def _ping(self, request_id, params: dict) -> None:
        self._result(request_id, {})

    def _list_tools(self, request_id, params: dict) -> None:
        if self._catalog is None:
            self._catalog = catalog.load()
        self._result(request_id, {"tools": self._catalog})  # one page: no nextCursor
        self._start_warm_up()

    def _call_tool(self, request_id, params: dict) -> None:
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str):
            self._error(request_id, INVALID_PARAMS, 'Invalid params: tools/call needs "name" '
                        "(a string)")
            return
        if arguments is not None and not isinstance(arguments, dict):
            self._error(request_id, INVALID_PARAMS, 'Invalid params: "arguments" must be an '
                        "object")
            return
        with self._state_lock:
            self._running[request_id] = False
        thread = threading.Thread(target=self._run_call, args=(request_id, name, arguments),
                                  name=f"memcite-mcp-call-{request_id}")
        self._threads = [alive for alive in self._threads if alive.is_alive()]
        self._threads.append(thread)
        thread.start()

    _HANDLERS = {"initialize": _initialize, "ping": _ping, "tools/list": _list_tools,
                 "tools/call": _call_tool}

    # ------------------------------------------------------------------ calls

    def _run_call(self, request_id, name: str, arguments: dict | None) -> None:
        with self._call_slots:
            try:
                tools, context = self._load_tools()
            except Exception as error:  # noqa: BLE001 - an incomplete install, say
                message = f"the tools could not be loaded ({type(error).__name__}: {error})"
                result = {"content": [{"type": "text", "text": f"memcite: error: {message}"}],
                          "structuredContent": {"error": {"message": message, "exit_code": 1}},
                          "isError": True}
            else:
                result = tools.call_tool(context, self, name, arguments)
        with self._state_lock:
            cancelled = self._running.pop(request_id, False)
        if not cancelled:
            self._result(request_id, result)

    def _load_tools(self):
        """The tools module and the context every call shares, imported once (the warm-up's)."""
        with self._load_lock:
            if self._tools is None:
                from memcite.mcp import tools

                tools.preload()
                self._context = tools.ToolContext(self._locations,
                                                  tools.ConfirmTokens(ttl=self._confirm_ttl))
                self._tools = tools
            return self._tools, self._context

    def _start_warm_up(self) -> None:
        if self._warm_up is None:
            warm_up = threading.Thread(target=self._warm, name="memcite-mcp-warm-up")
            warm_up.start()
            self._warm_up = warm_up  # set once started: a reader may join it at once

    def _warm(self) -> None:
        try:
            self._load_tools()
        except Exception:  # noqa: BLE001 - the first call tries again and says why
            pass

    # ------------------------------------------------------------------ the client's roots

    def offers_roots(self) -> bool:
        """Whether the client said, at initialize, that it answers ``roots/list``."""
        return isinstance(self._client_capabilities.get("roots"), dict)

    def list_roots(self) -> object:
        """Ask the client for its roots; the ``result`` of its answer."""
        waiter = _Waiter()
        with self._state_lock:
            if self._input_closed:
                raise ConnectionError("the client closed the connection")
            self._next_id += 1
            request_id = self._next_id
            self._pending[request_id] = waiter
        self._send({"jsonrpc": "2.0", "id": request_id, "method": "roots/list"})
        if not waiter.answered.wait(ROOTS_TIMEOUT_SECONDS):
            with self._state_lock:
                self._pending.pop(request_id, None)
            raise TimeoutError(f"no answer to roots/list within {ROOTS_TIMEOUT_SECONDS:g} s")
        message = waiter.message
        if message is None:
            raise ConnectionError("the client closed the connection")
        if "error" in message:
            error = message["error"]
            detail = error.get("message") if isinstance(error, dict) else None
            raise RuntimeError(f"the client answered roots/list with an error: {detail!r}")
        return message.get("result")

    # ------------------------------------------------------------------ writing

    def _result(self, request_id, result: dict) -> None:
        self._send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _error(self, request_id, code: int, message: str, data: object = None) -> None:
        error: dict = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self._send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def _send(self, message: dict) -> None:
        """Write one message as one line; a closed output only stops the server."""
        try:
            line = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate from an undecodable file name
            line = json.dumps(message, separators=(",", ":")).encode("ascii")
        with self._write_lock:
            if self._output_closed:
                return
            try:
                self._writer.write(line + b"\n")
                self._writer.flush()
            except (OSError, ValueError):
                self._output_closed = True

    def _finish(self) -> None:
        """The input ended: the requests waiting for the client fail, the running calls end."""
        with self._state_lock:
            self._input_closed = True
            waiters, self._pending = list(self._pending.values()), {}
        for waiter in waiters:
            waiter.answered.set()
        for thread in [*self._threads, self._warm_up]:
            if thread is not None:
                thread.join()


def _protocol_output():
    """A private copy of stdout for the protocol; fd 1 and ``sys.stdout`` then go to stderr."""
    try:
        sys.stdout.flush()
        private = os.dup(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # no real stdout (embedded): use it as it is
        return sys.stdout.buffer
    try:
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        pass
    return os.fdopen(private, "wb")


def run(locations, confirm_ttl: float, version: str = "0") -> int:
    """Serve on stdin and stdout until the client closes its side; ``locations`` is the run's
    ``memcite.paths.Locations`` (built once by the command line from ``--db``, ``--codex-home``
    and the environment), ``version`` memcite's, for ``initialize``."""

    try:
        on_terminal = os.isatty(sys.stdin.fileno())
    except (AttributeError, OSError, ValueError):
        on_terminal = False
    if on_terminal:  # a person started it by hand: say what it waits for
        sys.stderr.write("memcite mcp: serving memcite's notes to Codex as MCP tools over stdin "
                         "and stdout (JSON-RPC, one message a line); Codex starts it itself "
                         "from config.toml ([mcp_servers.memcite]). Ctrl-D stops it.\n")
        sys.stderr.flush()

    connection = Connection(sys.stdin.buffer, _protocol_output(), locations=locations,
                            confirm_ttl=confirm_ttl, version=version)
    connection.serve()
    return 0
