"""The library's public names: listed in ``memcite.__all__``, each loaded on first use."""

import subprocess
import sys

import memcite


def test_every_public_name_resolves_and_is_listed():
    assert sorted(memcite.__all__) == sorted(memcite._HOME)
    for name in memcite.__all__:
        assert getattr(memcite, name).__name__ == name


def test_importing_memcite_loads_none_of_its_modules():
    done = subprocess.run(
        [sys.executable, "-c", "import memcite, sys; print(sorted(m for m in sys.modules"
         " if m.startswith('memcite.')))"],
        capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
