import os
import sys
import tempfile

import pytest
from hypothesis import HealthCheck, settings

# tests/plain_reader.py is imported by name from the tests and the benchmarks.
sys.path.insert(0, os.path.dirname(__file__))

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
# throw-away folder, never the user's ~/.cache or a MEMCITE_CACHE_DIR given from outside.
SESSION_CACHE = tempfile.mkdtemp(prefix="memcite-test-cache-")
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
# here for the session (tests/pg_server.py); where no PostgreSQL is installed they skip,
# saying so, except with MEMCITE_REQUIRE_PG=1 (CI), where they fail.


@pytest.fixture(scope="session")
def pg_server_url():
    given = os.environ.get("MEMCITE_TEST_PG_URL")
    if given:
        yield given
        return
    import pg_server

    if pg_server.postgres_bin() is None:
        message = ("no PostgreSQL installed here (initdb not found): the fleet tests need one "
                   "(Debian: apt-get install postgresql)")
        if os.environ.get("MEMCITE_REQUIRE_PG") == "1":
            pytest.fail(message)
        pytest.skip(message)
    folder = tempfile.mkdtemp(prefix="memcite-pg-")
    try:
        yield pg_server.start(folder)
    finally:
        pg_server.stop(folder)
