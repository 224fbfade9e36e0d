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
