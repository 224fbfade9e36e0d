"""A real PostgreSQL for the fleet tests: ``initdb`` and ``pg_ctl`` in a temporary folder,
listening on 127.0.0.1 (a free port) and on a socket in that folder only, with a password.

``.ci/run`` starts one with ``python tests/pg_server.py start DIR`` (it prints the URL, which
CI exports as ``MEMCITE_TEST_PG_URL``) and stops it with ``... stop DIR``. Without that
variable the tests start their own (``conftest.py``'s ``pg_url`` fixture), and skip with a
message only where no PostgreSQL is installed; with ``MEMCITE_REQUIRE_PG=1`` (CI) they fail.

As root (a container), the server runs as the ``postgres`` user that Debian's package makes:
``initdb`` refuses to run as root.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time

USER = "memcite"
DATABASE = "fleet"


def postgres_bin() -> str | None:
    """The folder holding ``initdb`` and ``pg_ctl``: Debian's (newest first), else PATH."""
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.isfile(os.path.join(folder, "initdb")):
            return folder
    found = shutil.which("initdb")
    return os.path.dirname(found) if found else None


def _as_server_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", "postgres", "--", *argv]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(folder: str) -> str:
    """Start a server whose files are all in ``folder``; return its URL (with the password)."""
    bindir = postgres_bin()
    if bindir is None:
        raise RuntimeError("no PostgreSQL installed (initdb not found)")
    os.makedirs(folder, exist_ok=True)
    data = os.path.join(folder, "data")
    password = secrets.token_hex(12)
    pwfile = os.path.join(folder, "pwfile")
    with open(pwfile, "w") as handle:
        handle.write(password + "\n")
    if os.geteuid() == 0:
        os.chmod(folder, 0o755)
        shutil.chown(folder, "postgres")
        shutil.chown(pwfile, "postgres")
    subprocess.run(_as_server_user([
        os.path.join(bindir, "initdb"), "-D", data, "-U", USER, "--pwfile", pwfile,
        "--auth=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]),
        check=True, capture_output=True, text=True)
    os.unlink(pwfile)
    port = _free_port()
    options = (f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={folder}"
               " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
               " -c max_connections=40 -c shared_buffers=256MB")
    subprocess.run(_as_server_user([
        os.path.join(bindir, "pg_ctl"), "-D", data, "-l", os.path.join(folder, "server.log"),
        "-o", options, "-w", "-t", "60", "start"]), check=True, capture_output=True, text=True)
    base = f"postgresql://{USER}:{password}@127.0.0.1:{port}"
    _create_database(bindir, folder, port, password)
    with open(os.path.join(folder, "url"), "w") as handle:
        handle.write(f"{base}/{DATABASE}\n")
    return f"{base}/{DATABASE}"


def _create_database(bindir: str, folder: str, port: int, password: str) -> None:
    environment = {**os.environ, "PGPASSWORD": password}
    for _ in range(50):
        done = subprocess.run([os.path.join(bindir, "createdb"), "-h", "127.0.0.1", "-p",
                               str(port), "-U", USER, DATABASE], env=environment,
                              capture_output=True, text=True)
        if done.returncode == 0:
            return
        time.sleep(0.1)
    raise RuntimeError(f"createdb failed: {done.stderr.strip()}")


def stop(folder: str) -> None:
    bindir = postgres_bin()
    data = os.path.join(folder, "data")
    if bindir and os.path.isdir(data):
        subprocess.run(_as_server_user([os.path.join(bindir, "pg_ctl"), "-D", data, "-m",
                                        "fast", "-w", "stop"]), capture_output=True, text=True)
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    action, where = sys.argv[1], sys.argv[2]
    if action == "start":
        print(start(where))
    elif action == "stop":
        stop(where)
    else:
        sys.exit(f"usage: {sys.argv[0]} start|stop DIR")
