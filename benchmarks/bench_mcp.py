"""`memcite mcp` start-up: a cold process to its `initialize` answer, against a trivial server.

    .venv/bin/python benchmarks/bench_mcp.py [--runs 21] [--rev HEAD~1]

Target: the `initialize` response within 300 ms of the process start, cold (Codex
does not wait for a server that is not `required`; its first model request goes
out 0.7-1.5 s after start, with only the tools of the servers that have answered
by then). Each round starts a fresh process, writes `initialize` at once (as a
client does), then `notifications/initialized`, `tools/list` and one
`tools/call` (`list`, which loads the tool bodies), and times each answer from
the process start. The floor is a JSON-RPC server of a few lines of Python that
answers the same requests. The commands run as an installed memcite does: the
console script, bytecode cached (here, in the temporary folder). `--rev REV`
also measures memcite's source at git revision REV (exported with `git
archive` into the temporary folder, run with it first on the path), for a
before/after figure. The rounds interleave the servers, the order turning round
each round, so a busy moment of the machine falls on all of them; the medians
count.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_MS = 300.0

# The floor: the least a Python stdio JSON-RPC server can do.
FLOOR = """\
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" in m:
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "floor", "version": "0"}} if m["method"] == "initialize" else {"tools": []}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\\n")
        sys.stdout.flush()
"""

# The console script's body, for a source tree that is not the installed one.
CONSOLE_SCRIPT = "import sys; from memcite.__main__ import main; sys.argv[0] = 'memcite'; sys.exit(main())"

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}},
                         "clientInfo": {"name": "bench_mcp", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
TOOLS_CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list", "arguments": {}}}


def memcite_command() -> list[str]:
    binary = shutil.which("memcite", path=os.path.dirname(sys.executable))
    return [binary] if binary else [sys.executable, "-m", "memcite"]


def _send(process: subprocess.Popen, message: dict) -> None:
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def _answer(process: subprocess.Popen, name: str, expected_id: int) -> dict:
    while True:
        line = process.stdout.readline()
        if not line:
            raise SystemExit(f"{name}: closed its output before answering request {expected_id}:\n"
                             + process.stderr.read().decode(errors="replace")[-2000:])
        message = json.loads(line)
        if message.get("id") == expected_id and "method" not in message:
            if "error" in message:
                raise SystemExit(f"{name}: request {expected_id} failed: {message['error']}")
            return message["result"]


def one_run(name: str, command: list[str], env: dict) -> tuple[float, float, float]:
    """Seconds from the process start to the initialize, tools/list and first tools/call answers."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env)
    try:
        _send(process, INITIALIZE)
        result = _answer(process, name, 1)
        initialized = time.perf_counter() - start
        assert result["protocolVersion"] == "2025-06-18", result
        _send(process, INITIALIZED)
        _send(process, TOOLS_LIST)
        tools = _answer(process, name, 2)["tools"]
        listed = time.perf_counter() - start
        assert name == "floor" or "list" in {tool["name"] for tool in tools}, tools
        _send(process, TOOLS_CALL)
        called = _answer(process, name, 3)
        assert not called.get("isError"), called
        first_call = time.perf_counter() - start
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()
    return initialized, listed, first_call


def export_revision(revision: str, folder: str) -> str:
    """memcite's ``src`` at ``revision``, unpacked under ``folder``; the folder to put on the path."""
    archive = os.path.join(folder, "rev.tar")
    subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "-o", archive, revision, "src"],
                   check=True)
    target = os.path.join(folder, "rev")
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    return os.path.join(target, "src")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="rounds (each starts every server once)")
    parser.add_argument("--rev", metavar="REV", help="also measure memcite's source at this git revision")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memcite-bench-mcp-") as folder:
        env = {**os.environ, "MEMCITE_HOME": folder, "MEMCITE_DB": os.path.join(folder, "db"),
               "MEMCITE_CACHE_DIR": os.path.join(folder, "cache"),
               "CODEX_HOME": os.path.join(folder, "codex"),
               "PYTHONPYCACHEPREFIX": os.path.join(folder, "pycache")}
        for name in ("MEMCITE_NO_FASTPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH"):
            env.pop(name, None)
        os.mkdir(env["CODEX_HOME"])
        servers = {"floor": ([sys.executable, "-c", FLOOR], env),
                   "memcite mcp": ([*memcite_command(), "mcp"], env)}
        if args.rev:
            source = export_revision(args.rev, folder)
            servers[f"memcite mcp @ {args.rev}"] = ([sys.executable, "-c", CONSOLE_SCRIPT, "mcp"],
                                                    {**env, "PYTHONPATH": source})
        for name, (command, server_env) in servers.items():  # bytecode cached, the database made
            one_run(name, command, server_env)
        times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in servers}
        names = list(servers)
        for n in range(args.runs):
            turn = n % len(names)
            for name in names[turn:] + names[:turn]:
                command, server_env = servers[name]
                times[name].append(one_run(name, command, server_env))
    medians = {name: [statistics.median(run[i] for run in runs) * 1e3 for i in range(3)]
               for name, runs in times.items()}
    floor = medians["floor"]
    print(f"cold start to each answer, medians of {args.runs} runs (interleaved), in ms:")
    print(f"  {'server':<26} {'initialize':>10} {'tools/list':>10} {'1st call':>10}   initialize / floor")
    for name, (init, listed, call) in medians.items():
        ratio = "" if name == "floor" else f"   {init / floor[0]:5.2f}x"
        print(f"  {name:<26} {init:10.1f} {listed:10.1f} {call:10.1f}{ratio}")
    init = medians["memcite mcp"][0]
    ok = init <= TARGET_MS
    print(f"`memcite mcp` initialize {init:.1f} ms (target <= {TARGET_MS:.0f} ms)  {'ok' if ok else 'MISS'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
