"""A small client of ``codex app-server`` (JSON-RPC 2.0, one JSON object a line, on stdio)."""

from __future__ import annotations

import json
import queue
import subprocess
import threading


class AppServerError(AssertionError):
    pass


class AppServer:
    """``codex app-server`` started in a Codex world; use as a context manager."""

    def __init__(self, world, timeout: float = 30.0, on_request=None):
        self.world = world
        self.timeout = timeout
        self._next_id = 0
        self._lines: queue.Queue = queue.Queue()
        self.process: subprocess.Popen | None = None
        # Answers the server's own requests (approvals): ``on_request(method, params)`` returns
        # the result to send back; every request and notification is kept in ``seen``.
        self.on_request = on_request
        self.seen: list[dict] = []

    def __enter__(self) -> AppServer:
        self.process = subprocess.Popen(
            [self.world.codex, "app-server"], cwd=self.world.work, env=self.world.env(),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        self.request("initialize", {"clientInfo": {"name": "memcite-e2e", "version": "1"},
                                    "capabilities": {"experimentalApi": True}})
        self.notify("initialized")
        return self

    def __exit__(self, *exc) -> None:
        assert self.process is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _send(self, message: dict) -> None:
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def notify(self, method: str, params: dict | None = None) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def request(self, method: str, params: dict | None = None):
        self._next_id += 1
        wanted = self._next_id
        message = {"jsonrpc": "2.0", "id": wanted, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        for answer in self._messages(f"an answer to {method}", self.timeout):
            if "method" in answer or answer.get("id") != wanted:
                continue  # a notification, a request of the server's, another answer
            if "error" in answer:
                raise AppServerError(f"{method}: {answer['error']}")
            return answer.get("result")

    def _messages(self, what: str, timeout: float):
        """The server's messages until ``timeout``: its requests and notifications are served
        (and kept in ``seen``) on the way, and yielded too."""
        import time

        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.05, deadline - time.monotonic()))
            except queue.Empty:
                raise AppServerError(f"app-server gave no {what} in {timeout} s") from None
            if line is None:
                raise AppServerError(f"app-server closed before {what}")
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "method" in message:
                self._serve(message)
            yield message

    def _serve(self, message: dict) -> None:
        """Keep a notification; answer a request of the server's (an approval, say)."""
        self.seen.append(message)
        if "id" not in message:
            return
        if self.on_request is None:
            self._send({"jsonrpc": "2.0", "id": message["id"],
                        "error": {"code": -32601, "message": "not handled by the test client"}})
            return
        result = self.on_request(message["method"], message.get("params") or {})
        self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def wait_for(self, method: str, timeout: float | None = None) -> dict:
        """Read (and answer) the server's messages until a notification ``method`` arrives."""
        for message in self._messages(method, timeout or self.timeout):
            if message.get("method") == method:
                return message
        raise AssertionError("unreachable")  # _messages raises at its deadline

    def run_turn(self, text: str, approval_policy: str, timeout: float = 60.0) -> dict:
        """One turn in a new thread under ``approval_policy``; the ``turn/completed`` notification."""
        thread = self.request("thread/start", {"cwd": str(self.world.work),
                                               "approvalPolicy": approval_policy})["thread"]["id"]
        self.request("turn/start", {"threadId": thread, "input": [{"type": "text", "text": text}],
                                    "approvalPolicy": approval_policy})
        return self.wait_for("turn/completed", timeout)

    def hooks(self, cwd=None) -> list[dict]:
        """Every hook ``hooks/list`` shows for ``cwd`` (default: the world's working directory)."""
        result = self.request("hooks/list", {"cwds": [str(cwd or self.world.work)]})
        return [hook for entry in result.get("data", []) for hook in entry.get("hooks", [])]

    def trust(self, hook: dict) -> None:
        """Trust one hook as Codex's own /hooks screen does."""
        self.request("config/value/write", {
            "keyPath": "hooks.state", "mergeStrategy": "upsert",
            "value": {hook["key"]: {"trusted_hash": hook["currentHash"]}}})
