"""Running another implementation on one input: what it printed, or how it failed.

The other program is untrusted: its output is read up to a cap, it gets a time limit, and
on a hang or an overflow its whole process group is killed. Nothing here raises for what
the program does; a program that cannot be started at all is a usage error.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time

from memcite.errors import InputError
from memcite.untrusted import loads_json

MAX_OUTPUT_BYTES = 1 * 2**20
STDERR_TAIL_BYTES = 4096
DEFAULT_TIMEOUT = 10.0

# How a run ended; only "ok" has a reading.
OUTCOMES = ("ok", "crashed", "timeout", "too-large", "not-json", "bad-shape")


class RunResult:
    """What one run of the other program gave: an outcome, its JSON (ok), and a detail."""

    __slots__ = ("outcome", "output", "detail")

    def __init__(self, outcome: str, output: dict | None = None, detail: str | None = None):
        self.outcome = outcome
        self.output = output
        self.detail = detail


def resolve_command(command: list[str]) -> list[str]:
    """The command as given, refused (exit 2) when it is empty or names no program."""
    if not command:
        raise InputError("no COMMAND given: write it after --, e.g. -- python my_reader.py")
    program = command[0]
    if os.sep in program:
        if not os.path.isfile(program) or not os.access(program, os.X_OK):
            raise InputError(f"{program}: not an executable file")
    elif shutil.which(program) is None:
        raise InputError(f"{program}: no such command on PATH")
    return list(command)


def _pump(stream, buffer: bytearray, cap: int, overflow: threading.Event) -> None:
    try:
        while True:
            chunk = stream.read1(65536)
            if not chunk:
                return
            room = cap + 1 - len(buffer)
            if room > 0:
                buffer.extend(chunk[:room])
            if len(buffer) > cap:
                overflow.set()
                return
    except (OSError, ValueError):
        return


def _drain_tail(stream, buffer: bytearray, keep: int) -> None:
    """Read ``stream`` to its end, keeping its last ``keep`` bytes (stderr: never blocks it)."""
    try:
        while True:
            chunk = stream.read1(65536)
            if not chunk:
                return
            buffer.extend(chunk)
            if len(buffer) > keep:
                del buffer[:-keep]
    except (OSError, ValueError):
        return


def _feed(stream, data: bytes) -> None:
    try:
        stream.write(data)
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        try:
            stream.close()
        except OSError:
            pass


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def run_program(command: list[str], data: bytes, timeout: float = DEFAULT_TIMEOUT,
                max_output: int = MAX_OUTPUT_BYTES) -> tuple[str, bytes, bytes, int | None]:
    """Run ``command`` with ``data`` on stdin: (outcome, stdout, stderr tail, exit code).

    The outcome is ``ok`` (it exited, whatever its code), ``timeout`` or ``too-large``.
    """
    try:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
    except OSError as error:
        raise InputError(f"{command[0]}: cannot be run ({error.strerror or error})") from None
    out, err = bytearray(), bytearray()
    overflow = threading.Event()
    threads = [threading.Thread(target=_feed, args=(process.stdin, data), daemon=True),
               threading.Thread(target=_pump, args=(process.stdout, out, max_output, overflow),
                                daemon=True),
               threading.Thread(target=_drain_tail, args=(process.stderr, err, STDERR_TAIL_BYTES),
                                daemon=True)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    outcome = "ok"
    while True:
        try:
            process.wait(timeout=0.02)
            break
        except subprocess.TimeoutExpired:
            pass
        if overflow.is_set():
            outcome = "too-large"
            break
        if time.monotonic() >= deadline:
            outcome = "timeout"
            break
    if outcome != "ok":
        _kill_group(process)
    else:
        # what it left running (a child holding the pipes) goes too
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for thread in threads[1:]:
        thread.join(timeout=2)
    for stream in (process.stdout, process.stderr):
        try:
            stream.close()
        except OSError:
            pass
    if outcome == "ok" and overflow.is_set():
        outcome = "too-large"
    return outcome, bytes(out[:max_output]), bytes(err), process.returncode


def run_json(command: list[str], data: bytes, timeout: float = DEFAULT_TIMEOUT,
             max_output: int = MAX_OUTPUT_BYTES) -> RunResult:
    """Run the program and read its stdout as one JSON object."""
    outcome, out, err, code = run_program(command, data, timeout, max_output)
    if outcome == "timeout":
        return RunResult("timeout", detail=f"no answer within {timeout:g} s; killed")
    if outcome == "too-large":
        return RunResult("too-large", detail=f"printed more than {max_output} bytes; killed")
    if code != 0:
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exited {code}"
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:]
        return RunResult("crashed", detail=how + (f": {_short(tail[0])}" if tail else ""))
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError as error:
        return RunResult("not-json", detail=f"output is not UTF-8 (byte offset {error.start})")
    try:
        value = loads_json(text)
    except ValueError as error:
        why = "nested too deeply" if str(error) == "nested too deeply" else "not JSON"
        return RunResult("not-json", detail=f"output is {why}: {_short(text)}")
    if not isinstance(value, dict):
        return RunResult("bad-shape", detail=f"output is a JSON {type(value).__name__}, not an "
                         "object")
    return RunResult("ok", output=value)


def _short(text: str, limit: int = 120) -> str:
    text = text.strip()
    return repr(text if len(text) <= limit else text[:limit] + "…")
