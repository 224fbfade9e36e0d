"""The real Codex CLI against a mock model, for memcite's end-to-end tests.

``codex`` is the pinned Codex CLI (``CODEX_VERSION``), installed by
``install_codex.sh`` into a cache folder outside the checkout; ``$MEMCITE_CODEX_BIN``
names another binary instead (``run_newest.sh`` uses it for the newest release).
A failed install fails the tests: they are never skipped for want of Codex.

Each test gets a ``CodexWorld``: a temporary HOME and ``CODEX_HOME`` (nothing
falls back to the real ``~/.codex``), a working directory, a ``config.toml``
whose only model provider is the mock on 127.0.0.1 (no retries), memory turned
on, and helpers to run ``codex exec`` and memcite's own commands there.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mock_model import MockModel  # noqa: E402

import run_folder  # noqa: E402  (tests/run_folder.py: on sys.path through the root conftest)

MEMCITE = str(Path(sys.executable).with_name("memcite"))
# Codex runs hooks with /bin/bash -c and its own folder first on PATH; memcite's
# virtual environment is left off on purpose, as on a person's machine.
PLAIN_PATH = "/usr/local/bin:/usr/bin:/bin"
EXEC_TIMEOUT = 120


@pytest.fixture(scope="session")
def codex() -> str:
    """The pinned Codex CLI, installed (or found installed and checked) once per run: the
    first process to ask runs install_codex.sh under a lock in the download cache (so that
    two runs, or two pytest-xdist workers, never install into it at once) and notes the
    path in the run's folder for the others."""
    given = os.environ.get("MEMCITE_CODEX_BIN")
    if given:
        return given
    cache = os.environ["MEMCITE_E2E_CACHE"]  # named by the root conftest before HOME moved
    os.makedirs(cache, exist_ok=True)
    noted = os.path.join(run_folder.RUN_DIR, "codex-bin")
    with run_folder.locked(os.path.join(cache, "install.lock")):
        if os.path.exists(noted):
            with open(noted) as handle:
                return handle.read()
        try:
            done = subprocess.run(["bash", str(HERE / "install_codex.sh")], capture_output=True,
                                  text=True, timeout=900)
        except subprocess.TimeoutExpired:
            pytest.fail("installing the Codex CLI with npm took over 15 minutes")
        if done.returncode != 0:
            pytest.fail(f"the Codex CLI could not be installed (tests/e2e/install_codex.sh):\n"
                        f"{done.stderr[-4000:]}")
        path = done.stdout.strip().splitlines()[-1]
        with open(noted, "w") as handle:
            handle.write(path)
        return path


def is_consolidation(body: dict) -> bool:
    """A request of Codex's memory consolidation agent, not of the user's turn."""
    metadata = body.get("client_metadata") or {}
    return metadata.get("x-openai-subagent") == "memory_consolidation" or \
        '"thread_source":"memory_consolidation"' in str(metadata.get("x-codex-turn-metadata", ""))


class CodexWorld:
    """A temporary Codex home with the mock model as its provider."""

    def __init__(self, root: Path, codex: str, model: MockModel):
        self.root = root
        self.codex = codex
        self.model = model
        self.home = root / "home"
        self.codex_home = root / "codex_home"
        self.memories = self.codex_home / "memories"
        self.work = root / "work"
        self.cache = root / "memcite_cache"
        self.db = root / "memcite.sqlite"
        for folder in (self.home, self.codex_home, self.memories, self.work):
            folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", str(self.work)], check=True)
        self.extra_config = ""
        self.write_config()

    # ------------------------------------------------------------------ config
    def write_config(self, extra: str | None = None) -> None:
        if extra is not None:
            self.extra_config = extra
        (self.codex_home / "config.toml").write_text(
            'model = "mock-model"\n'
            'model_provider = "mock"\n'
            f"{self.extra_config}\n"
            "[model_providers.mock]\n"
            'name = "mock"\n'
            f'base_url = "{self.model.base_url}"\n'
            'wire_api = "responses"\n'
            'env_key = "MEMCITE_E2E_KEY"\n'
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n\n"
            "[features]\n"
            "memories = true\n\n"
            "[memories]\n"
            "generate_memories = false\n"
        )

    def append_config(self, text: str) -> None:
        with open(self.codex_home / "config.toml", "a") as handle:
            handle.write("\n" + text)

    # ------------------------------------------------------------------ environments
    def env(self, **extra: str) -> dict[str, str]:
        """What Codex and memcite run with: nothing of the real HOME or Codex home."""
        env = {"HOME": str(self.home), "CODEX_HOME": str(self.codex_home), "PATH": PLAIN_PATH,
               "LANG": "C.UTF-8", "MEMCITE_E2E_KEY": "test-key",
               "MEMCITE_CACHE_DIR": str(self.cache), "MEMCITE_DB": str(self.db)}
        env.update(extra)
        return env

    def exec(self, prompt: str, *args: str, resume: bool = False, env: dict | None = None,
             timeout: float = EXEC_TIMEOUT) -> subprocess.CompletedProcess:
        """One ``codex exec`` turn (``resume``: another turn of the last session)."""
        command = [self.codex, "exec"]
        if resume:
            command += ["resume", "--last"]
        command += ["--skip-git-repo-check", *args, prompt]
        done = subprocess.run(command, cwd=self.work, env=env or self.env(), capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        return done

    def memcite(self, *args: str, input: str | None = None, env: dict | None = None,
                check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([MEMCITE, *args], cwd=self.work, env=env or self.env(), input=input,
                              capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            raise AssertionError(f"memcite {' '.join(args)} exited {done.returncode}:\n"
                                 f"{done.stdout}\n{done.stderr}")
        return done

    def memcite_json(self, *args: str, **kwargs) -> dict:
        return json.loads(self.memcite(*args, "--json", **kwargs).stdout)

    # ------------------------------------------------------------------ what Codex sent
    def turn_requests(self) -> list[dict]:
        """The requests of the user's turns (not of the consolidation agent), in order."""
        return [body for body in self.model.requests if not is_consolidation(body)]

    def consolidation_requests(self) -> list[dict]:
        return [body for body in self.model.requests if is_consolidation(body)]

    # ------------------------------------------------------------------ Codex's databases
    def memories_db(self, sqlite_home: Path | None = None) -> Path:
        return (sqlite_home or self.codex_home) / "memories_1.sqlite"

    def add_stage1_rows(self, thread_ids: list[str], sqlite_home: Path | None = None,
                        now: int | None = None) -> None:
        """``stage1_outputs`` rows, fresh and unused, in the table Codex created."""
        now = int(time.time()) if now is None else now
        with sqlite3.connect(self.memories_db(sqlite_home)) as db:
            for index, thread_id in enumerate(thread_ids):
                db.execute(
                    "INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory, "
                    "rollout_summary, rollout_slug, generated_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (thread_id, now - index, f"raw memory {index}", f"summary {index}",
                     f"slug-{index}", now - index))
        db.close()

    def usage(self, sqlite_home: Path | None = None) -> dict[str, tuple]:
        with sqlite3.connect(self.memories_db(sqlite_home)) as db:
            rows = db.execute("SELECT thread_id, usage_count, last_usage FROM stage1_outputs").fetchall()
        db.close()
        return {row[0]: (row[1], row[2]) for row in rows}


@pytest.fixture
def model():
    with MockModel(responder=_consolidation_answer) as mock:
        yield mock


def _consolidation_answer(body: dict):
    """The consolidation agent gets a plain answer; it never takes a scripted turn."""
    from mock_model import message_turn

    return message_turn("Nothing to consolidate.") if is_consolidation(body) else None


@pytest.fixture
def world(tmp_path, codex, model) -> CodexWorld:
    return CodexWorld(tmp_path, codex, model)


def new_thread_id() -> str:
    return str(uuid.uuid4())


def assert_ran(done: subprocess.CompletedProcess, what: str = "codex exec") -> None:
    assert done.returncode == 0, f"{what} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)
