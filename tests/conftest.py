import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# tests/plain_reader.py is imported by name from the tests and the benchmarks.
sys.path.insert(0, os.path.dirname(__file__))

import run_folder  # noqa: E402  (the run's shared folder, made before any test's world)

# A run started in the background by a shell without job control (`pytest &`, nohup) has
# SIGINT ignored, and the memcite processes the tests start would inherit that: the tests
# that press Ctrl-C on one need it delivered, as from a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# ------------------------------------------------------------------ one isolated world per test
# Nothing on the developer's machine may make a test pass: every test runs with HOME at a
# fresh empty folder of its own and XDG_*, CODEX_HOME, CODEX_SQLITE_HOME and every MEMCITE_
# variable cleared (so each default falls inside that HOME), as on a fresh machine.
# The exceptions are what the suite itself is given from outside: the pinned Codex CLI's
# download cache, another Codex binary, the test PostgreSQL, and the golden-file switch.
KEPT_VARIABLES = ("MEMCITE_E2E_CACHE", "MEMCITE_CODEX_BIN", "MEMCITE_TEST_PG_URL",
                  "MEMCITE_REQUIRE_PG", "MEMCITE_UPDATE_GOLDEN")

# The Codex download cache is named before HOME moves (install_codex.sh's own default).
os.environ.setdefault("MEMCITE_E2E_CACHE", os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
    "memcite-e2e"))
# memcite's cache (lark's tables, instructions) is shared by the session's tests: one
# throw-away folder per process (each pytest-xdist worker has its own) in the run's folder,
# never the user's ~/.cache or a MEMCITE_CACHE_DIR given from outside.
SESSION_CACHE = tempfile.mkdtemp(prefix="memcite-test-cache-", dir=run_folder.RUN_DIR)
os.environ["MEMCITE_CACHE_DIR"] = SESSION_CACHE


def _isolated_environment(root: str) -> dict[str, str]:
    """The environment variables of one test's world rooted at ``root`` (others are cleared)."""
    home = os.path.join(root, "home")
    os.makedirs(home, exist_ok=True)
    return {"HOME": home, "MEMCITE_CACHE_DIR": SESSION_CACHE}


def _cleared(name: str) -> bool:
    if name in ("CODEX_HOME", "CODEX_SQLITE_HOME") or name.startswith("XDG_"):
        return True
    return name.startswith("MEMCITE_") and name not in KEPT_VARIABLES


@pytest.fixture(autouse=True)
def isolated_world(tmp_path_factory, monkeypatch):
    """HOME at a fresh empty folder for this test; XDG_*, CODEX_* and MEMCITE_* cleared."""
    root = tmp_path_factory.mktemp("world")
    for name in [name for name in os.environ if _cleared(name)]:
        monkeypatch.delenv(name)
    for name, value in _isolated_environment(str(root)).items():
        monkeypatch.setenv(name, value)
    yield root

# CI runs a fixed, derandomised profile so that a run is repeatable.
settings.register_profile(
    "ci", max_examples=300, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("long", max_examples=5000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


# --------------------------------------------------------------------------- a real PostgreSQL
# The fleet tests' server: $MEMCITE_TEST_PG_URL (``.ci/run`` starts one), else one started
# here for the run (tests/pg_server.py): by the first process that asks for it, under a lock
# in the run's folder, and shared by every pytest-xdist worker; it is stopped at the end of
# the run. Where no PostgreSQL is installed they skip, saying so, except with
# MEMCITE_REQUIRE_PG=1 (CI), where they fail.
PG_FOLDER = os.path.join(run_folder.RUN_DIR, "pg")


@pytest.fixture(scope="session")
def pg_server_url():
    given = os.environ.get("MEMCITE_TEST_PG_URL")
    if given:
        return given
    import pg_server

    if pg_server.postgres_bin() is None:
        message = ("no PostgreSQL installed here (initdb not found): the fleet tests need one "
                   "(Debian: apt-get install postgresql)")
        if os.environ.get("MEMCITE_REQUIRE_PG") == "1":
            pytest.fail(message)
        pytest.skip(message)
    with run_folder.locked(PG_FOLDER + ".lock"):
        url_file = os.path.join(PG_FOLDER, "url")
        if os.path.exists(url_file):
            with open(url_file) as handle:
                return handle.read().strip()
        return pg_server.start(PG_FOLDER)


# ------------------------------------------------------------------------ shared test worlds
# A Codex home, a ledger and a memcite run, built the same way for every module that needs
# one (each inside the test's own tmp_path). ``SAMPLE_NOW`` is the sample builder's clock.
SAMPLE_NOW = 1_800_000_000
CORPUS = Path(__file__).resolve().parent.parent / "corpus"


@pytest.fixture(scope="session")
def sample_builder():
    """corpus/build_codex_home.py, loaded once for the session."""
    from memcite.demo.loop import load_sample_builder

    return load_sample_builder(CORPUS)


@pytest.fixture
def codex_home(tmp_path, sample_builder) -> Path:
    """The sample Codex home (``build_codex_home`` at ``SAMPLE_NOW``) in ``tmp_path/codex``."""
    return Path(sample_builder.build_codex_home(str(tmp_path / "codex"), now=SAMPLE_NOW))


@pytest.fixture
def memory_home(tmp_path) -> Path:
    """A bare Codex home in ``tmp_path/codex``: only memories/MEMORY.md."""
    from codex_sessions import memory_folder

    home = tmp_path / "codex"
    memory_folder(home)
    return home


@pytest.fixture
def corpus_home(tmp_path) -> Path:
    """A copy of corpus/memory_home (the golden memory folder) in ``tmp_path/codex``."""
    target = tmp_path / "codex"
    shutil.copytree(CORPUS / "memory_home", target)
    return target


@pytest.fixture
def ledger(tmp_path):
    """A fresh memcite ledger at ``tmp_path/memcite.sqlite``, closed after the test."""
    from memcite.ledger.store import open_store

    conn = open_store(tmp_path / "memcite.sqlite")
    yield conn
    conn.close()


@pytest.fixture(scope="session")
def empty_ledger_copy(tmp_path_factory):
    """``copy(path)``: a freshly migrated empty ledger written at ``path`` (a copy of one
    migrated once per session: migrating costs ~45 ms, a copy ~4 ms, for the properties that
    open a new ledger per example)."""
    from memcite.ledger.store import open_store

    template = tmp_path_factory.mktemp("ledger-template") / "memcite.sqlite"
    open_store(template).close()
    names = set(os.listdir(template.parent))
    assert names == {"memcite.sqlite"}, names  # closed cleanly: no -wal/-shm to copy too

    def copy(path):
        shutil.copyfile(template, path)
        return path

    return copy


@pytest.fixture
def synced_ledger(ledger, codex_home):
    """``ledger`` with the sample ``codex_home`` synced into it at ``SAMPLE_NOW``."""
    from memcite.ledger.sync import sync_codex_home

    sync_codex_home(ledger, codex_home, now=SAMPLE_NOW)
    return ledger


@pytest.fixture
def sample_env(tmp_path, codex_home) -> dict[str, str]:
    """Environment values for a memcite run on the sample ``codex_home``: a database path in
    ``tmp_path``, a scratch HOME and XDG_DATA_HOME, MEMCITE_HOME and the fast-path switch empty."""
    return {"MEMCITE_DB": str(tmp_path / "memcite.sqlite"), "CODEX_HOME": str(codex_home),
            "HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "xdg"),
            "MEMCITE_HOME": "", "MEMCITE_NO_FASTPATH": ""}


@pytest.fixture
def memcite_run():
    """``python -m memcite`` as a real process in the test's world: see memcite_process.py."""
    from memcite_process import run_memcite

    return run_memcite


@pytest.fixture
def memcite_invoke():
    """memcite's Typer app invoked in-process (CliRunner): ``invoke(*args, env=None, input=None)``."""
    from typer.testing import CliRunner

    from memcite.cli.app import app

    runner = CliRunner()

    def invoke(*args, **options):
        return runner.invoke(app, [str(a) for a in args], **options)

    return invoke


# ------------------------------------------------- what starting ``python -m memcite`` costs
# MEMCITE_TEST_LAUNCHES=FILE counts every ``python -m memcite`` the tests start and the
# seconds from its start to its end, per test, and writes them to FILE as JSON Lines at the
# end of the session (nothing is printed, so -q stays clean).
_LAUNCHES: list[dict] = []


def _is_memcite_launch(args) -> bool:
    words = [a.decode() if isinstance(a, bytes) else str(a) for a in
             (args if isinstance(args, (list, tuple)) else [args])]
    return any(w == "-m" and i + 1 < len(words) and words[i + 1] == "memcite"
               for i, w in enumerate(words))


def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (pyproject's addopts): one worker per core, at least 4 (the end-to-end
    tests mostly wait on Codex, so 4 pay on 2 cores) and at most 8 (one PostgreSQL and the
    Codex processes are shared by all of them)."""
    return max(4, min(os.cpu_count() or 1, 8))


@pytest.hookimpl(trylast=True)  # after pytest-xdist's own pytest_configure
def pytest_configure(config):
    _quiet_workers_status(config)
    if not os.environ.get("MEMCITE_TEST_LAUNCHES"):
        return
    original_init, original_wait = subprocess.Popen.__init__, subprocess.Popen._wait

    def init(self, args, *rest, **options):
        self._memcite_started = time.monotonic() if _is_memcite_launch(args) else None
        original_init(self, args, *rest, **options)

    def wait(self, *rest, **options):
        code = original_wait(self, *rest, **options)
        started = getattr(self, "_memcite_started", None)
        if started is not None:
            self._memcite_started = None
            _LAUNCHES.append({"test": os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0],
                              "seconds": round(time.monotonic() - started, 4)})
        return code

    subprocess.Popen.__init__, subprocess.Popen._wait = init, wait


def _quiet_workers_status(config) -> None:
    """Under ``-q``, pytest-xdist's controller prints no lines of its own ("bringing up
    nodes...", a blank line): ``-q`` shows the tests' progress and the summary only, as
    without workers. A worker that goes down is still reported."""
    session = config.pluginmanager.getplugin("dsession")
    if session is None or config.option.verbose >= 0 or not getattr(session, "terminal", None):
        return
    session.terminal = None  # the status line and blank line printed when collection ends
    status = getattr(session, "trdist", None)
    if status is not None:
        status.ensure_show_status = lambda: None  # the line printed as the workers start
        status._isatty = False  # no status rewritten over the progress line


def pytest_unconfigure(config):
    if run_folder.OWNER:  # the run's first process: the workers have ended
        import pg_server

        pg_server.stop(PG_FOLDER)
        shutil.rmtree(run_folder.RUN_DIR, ignore_errors=True)
    target = os.environ.get("MEMCITE_TEST_LAUNCHES")
    if target and _LAUNCHES:
        import json

        with open(target, "a") as handle:
            handle.writelines(json.dumps(launch) + "\n" for launch in _LAUNCHES)
