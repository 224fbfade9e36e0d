import os
import sys
import tempfile

from hypothesis import HealthCheck, settings

# tests/plain_reader.py is imported by name from the tests and the benchmarks.
sys.path.insert(0, os.path.dirname(__file__))

# Codex's SQLite home is the Codex home unless a test says otherwise.
os.environ.pop("CODEX_SQLITE_HOME", None)

# memcite's cache (lark's tables, instructions) goes to a throw-away folder, not ~/.cache.
os.environ.setdefault("MEMCITE_CACHE_DIR", tempfile.mkdtemp(prefix="memcite-test-cache-"))

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
import pytest  # noqa: E402


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
