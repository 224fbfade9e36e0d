"""A mock of the OpenAI Responses API, for running the real Codex CLI in tests.

Codex posts each turn to ``POST /v1/responses`` and reads a server-sent-event
stream back. The event shapes follow Codex's own test helpers
(``codex-rs/core/tests/common/responses.rs``): ``response.created``, one
``response.output_item.done`` per output item (a ``message`` of ``output_text``
or a ``function_call``), then ``response.completed``.

A test scripts the replies: ``MockModel.reply(text)`` or
``MockModel.call_tool(...)`` queue one turn each, served in order; with the
queue empty the model answers ``DEFAULT_REPLY``. A ``responder`` callable may
decide instead, from the request body. Every request body is logged in
``requests``. The server listens on 127.0.0.1 only, serves each request on a
thread with a socket time-out, and stops when the test's ``with`` block ends.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_REPLY = "Done."
_ids = itertools.count(1)


def sse(events: list[dict]) -> bytes:
    """The SSE body of ``events``, as Codex's helper ``sse`` writes it."""
    out = []
    for event in events:
        out.append(f"event: {event['type']}\n")
        out.append(f"data: {json.dumps(event)}\n\n" if len(event) > 1 else "\n")
    return "".join(out).encode()


def ev_response_created(response_id: str) -> dict:
    return {"type": "response.created", "response": {"id": response_id}}


def ev_completed(response_id: str) -> dict:
    return {"type": "response.completed", "response": {
        "id": response_id,
        "usage": {"input_tokens": 0, "input_tokens_details": None, "output_tokens": 0,
                  "output_tokens_details": None, "total_tokens": 0}}}


def ev_assistant_message(item_id: str, text: str) -> dict:
    return {"type": "response.output_item.done", "item": {
        "type": "message", "role": "assistant", "id": item_id,
        "content": [{"type": "output_text", "text": text}]}}


def ev_function_call(call_id: str, name: str, arguments: dict, namespace: str | None = None) -> dict:
    item = {"type": "function_call", "call_id": call_id, "name": name,
            "arguments": json.dumps(arguments)}
    if namespace is not None:
        item["namespace"] = namespace
    return {"type": "response.output_item.done", "item": item}


class Turn:
    """One scripted answer: output items, and a delay before the stream is sent."""

    def __init__(self, items: list[dict], delay: float = 0.0):
        self.items = items
        self.delay = delay

    def events(self) -> list[dict]:
        response_id = f"resp-{next(_ids)}"
        return [ev_response_created(response_id), *self.items, ev_completed(response_id)]


def message_turn(text: str, delay: float = 0.0) -> Turn:
    return Turn([ev_assistant_message(f"msg-{next(_ids)}", text)], delay)


def tool_turn(name: str, arguments: dict, namespace: str | None = None, call_id: str | None = None) -> Turn:
    return Turn([ev_function_call(call_id or f"call-{next(_ids)}", name, arguments, namespace)])


class MockModel:
    """The mock Responses API on 127.0.0.1; use as a context manager."""

    def __init__(self, responder: Callable[[dict], Turn | None] | None = None, request_timeout: float = 30.0):
        self.responder = responder
        self.request_timeout = request_timeout
        self.requests: list[dict] = []  # every POST body to /responses, in order
        self.request_times: list[float] = []  # time.monotonic() of each
        self._queue: list[Turn] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting
    def reply(self, text: str, delay: float = 0.0) -> MockModel:
        with self._lock:
            self._queue.append(message_turn(text, delay))
        return self

    def queue(self, turn: Turn) -> MockModel:
        """Answer the next request that no responder takes with ``turn``."""
        with self._lock:
            self._queue.append(turn)
        return self

    def call_tool(self, name: str, arguments: dict, namespace: str | None = None) -> MockModel:
        with self._lock:
            self._queue.append(tool_turn(name, arguments, namespace))
        return self

    def _next_turn(self, body: dict) -> Turn:
        if self.responder is not None:
            turn = self.responder(body)
            if turn is not None:
                return turn
        with self._lock:
            if self._queue:
                return self._queue.pop(0)
        return message_turn(DEFAULT_REPLY)

    # -- serving
    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> MockModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            timeout = model.request_timeout
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep the test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(min(length, 64 << 20))
                if not self.path.rstrip("/").endswith("/responses"):
                    self._send(404, b'{"error": "not found"}', "application/json")
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                with model._lock:
                    model.requests.append(body)
                    model.request_times.append(time.monotonic())
                turn = model._next_turn(body)
                if turn.delay:
                    time.sleep(turn.delay)
                self._send(200, sse(turn.events()), "text/event-stream")

            def do_GET(self):
                # /v1/models and the like: nothing to list
                self._send(200, b'{"object": "list", "data": [], "models": []}', "application/json")

            def _send(self, status: int, payload: bytes, content_type: str):
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    # -- reading what Codex sent
    def developer_texts(self, index: int = 0) -> list[str]:
        """The ``input_text`` spans of the developer messages of request ``index``."""
        return _message_texts(self.requests[index], "developer")

    def tool_names(self, index: int = 0) -> set[str]:
        """The tools offered in request ``index``, namespaced tools as ``namespace.name``."""
        return set(_tool_names(self.requests[index].get("tools") or []))


def _message_texts(body: dict, role: str) -> list[str]:
    texts = []
    for item in body.get("input") or []:
        if item.get("type") == "message" and item.get("role") == role:
            for span in item.get("content") or []:
                if span.get("type") == "input_text":
                    texts.append(span.get("text", ""))
    return texts


def _tool_names(tools: list[dict], prefix: str = ""):
    for tool in tools:
        name = tool.get("name") or (tool.get("function") or {}).get("name") or tool.get("type", "")
        if tool.get("tools"):  # a namespace of tools
            yield from _tool_names(tool["tools"], f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}"
