"""Running another implementation on one input: what it printed, or how it failed.

The other program is untrusted: its output is read up to a cap, it gets a time limit, and
on a hang or an overflow its whole process group is killed. Nothing here raises for what
the program does; a program that cannot be started at all is a usage error.

A child that calls ``setsid()`` leaves the group, and ``killpg`` cannot reach it. On Linux
memcite makes itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``) while the
program runs: whatever the program leaves behind is handed to memcite when its parent
ends, and after the run memcite kills and reaps each process handed to it that is its
own: in the session memcite made for the program (it starts in a new one), or started
from the program with the run's marker in its environment (``RUN_MARKER``, a random
token per run, which a ``setsid`` child inherits). Any other process handed to memcite
meanwhile (an orphan of a wrapper's helper, of another child of memcite's) came from
elsewhere and is left running. Elsewhere (macOS, Windows), and for a child that both
leaves the session and clears its environment, such a process can outlive the run.
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


_PR_SET_CHILD_SUBREAPER = 36


def _subreaper(on: bool) -> bool:
    """Make this process a child subreaper (Linux); whether it is one."""
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0 and on
    except (OSError, AttributeError):
        return False


def _children() -> set[int]:
    """The processes whose parent is this one (from /proc; empty where there is none):
    each thread's ``children`` file, else a scan of every process's parent."""
    found = set()
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children", "rb") as handle:
                found.update(int(pid) for pid in handle.read().split())
        return found
    except (OSError, ValueError):
        found = set()
    me = os.getpid()
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and fields[1] == str(me).encode():
            found.add(int(name))
    return found


RUN_MARKER = "MEMCITE_CONFORMANCE_RUN"


def _is_own(pid: int, session: int, token: str) -> bool:
    """Whether process ``pid`` came from the program memcite started in session ``session``
    (``/proc``: its session or group is that one, or its environment holds the run's
    marker ``token``)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        if session in (int(fields[2]), int(fields[3])):  # its process group, its session
            return True
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read(1 << 20)
    except (OSError, IndexError, ValueError):
        return False
    return f"{RUN_MARKER}={token}".encode() in environ.split(b"\0")


def _kill_left_behind(before: set[int], session: int, token: str) -> int:
    """Kill and reap what the program left that was handed to this subreaper: the processes
    that became this one's children during the run and are its own (``_is_own``); each one
    killed may hand over its own. A process from elsewhere is left alone."""
    killed = 0
    for _ in range(64):  # each round reaches one more generation
        left = {pid for pid in _children() - before if _is_own(pid, session, token)}
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
        for pid in left:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
    return killed


def run_program(command: list[str], data: bytes, timeout: float = DEFAULT_TIMEOUT,
                max_output: int = MAX_OUTPUT_BYTES) -> tuple[str, bytes, bytes, int | None]:
    """Run ``command`` with ``data`` on stdin: (outcome, stdout, stderr tail, exit code).

    The outcome is ``ok`` (it exited, whatever its code), ``timeout`` or ``too-large``.
    """
    reaping = _subreaper(True)
    before = _children() if reaping else set()
    try:
        return _run(command, data, timeout, max_output, before if reaping else None)
    finally:
        if reaping:
            _subreaper(False)


def _run(command: list[str], data: bytes, timeout: float, max_output: int,
         before: set[int] | None) -> tuple[str, bytes, bytes, int | None]:
    import secrets

    token = secrets.token_hex(16)
    try:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True,
                                   env={**os.environ, RUN_MARKER: token})
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
    if before is not None:  # what left the group (setsid) and was handed to this subreaper
        _kill_left_behind(before | {process.pid}, process.pid, token)
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
