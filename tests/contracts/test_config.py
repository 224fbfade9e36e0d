"""memcite's config file: read into its model; an unknown key or a bad value is an error naming
the file, the key and the closest valid key (exit 2), never skipped."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.contracts.config import MemciteConfig, RetentionConfig, config_problems
from memcite.retention.rules import (
    RETENTION_SETTINGS,
    ConfigError,
    _plainly_valid,
    load_memcite_config,
)

runner = CliRunner()

# (file text, what the error says: each string must appear)
BAD_FILES = [
    ("[retention]\nmax_unused_dayz = 30\n",
     ["retention.max_unused_dayz", "unknown key", "did you mean retention.max_unused_days?"]),
    ("[retention]\nmax_raw_memories = 30\n",
     ["retention.max_raw_memories", "did you mean retention.max_raw_memories_for_consolidation?"]),
    ("[retension]\nmax_unused_days = 30\n",
     ["retension", "unknown key", "did you mean retention?"]),
    ("[retention]\nfrobnicate = 1\n",
     ["retention.frobnicate", "unknown key",
      "[retention] accepts max_unused_days, max_raw_memories_for_consolidation"]),
    ("colour = 'blue'\n", ["colour", "unknown key", "the file accepts retention"]),
    ("[retention]\nmax_unused_days = '30'\n",
     ["retention.max_unused_days", "expected a whole number", "'30'"]),
    ("[retention]\nmax_unused_days = 30.5\n",
     ["retention.max_unused_days", "expected a whole number", "30.5"]),
    ("[retention]\nmax_unused_days = true\n",
     ["retention.max_unused_days", "expected a whole number", "True"]),
    ("[retention]\nmax_unused_days = -1\n",
     ["retention.max_unused_days", "must be at least 0", "-1"]),
    ("[retention]\nmax_raw_memories_for_consolidation = 0\n",
     ["retention.max_raw_memories_for_consolidation", "must be at least 1"]),
    ("retention = 30\n", ["retention", "must be a table"]),
    ("[retention]\nmax_unused_days = [30]\n", ["retention.max_unused_days", "whole number"]),
    ("[retention]\nmax_unused_dayz = 1\nmax_unused_days = -4\n",  # every problem at once
     ["did you mean retention.max_unused_days?", "must be at least 0"]),
]

BAD_FILES += [
    # keys that are no Python identifiers (found by the config fuzzer: a crash before)
    ("rutentio- = 5\n", ["rutentio-", "unknown key", "did you mean retention?"]),
    ("\"literal['x']\" = 1\n", ["literal['x']", "unknown key", "the file accepts retention"]),
    ("[retention]\n\"a b\" = 1\n", ["retention.a b", "unknown key"]),
    ("[retention.tiers]\nsec_dayz = 7\n",
     ["retention.tiers.sec_dayz", "unknown key", "did you mean retention.tiers.sec_days?"]),
    ("[retention.tiers]\nimp_days = -1\n",
     ["retention.tiers.imp_days", "expected a whole number of at least 0 or 'never'", "-1"]),
    ("[retention.tiers]\ncore_days = 'forever'\n",
     ["retention.tiers.core_days", "expected a whole number or 'never'", "'forever'"]),
    ("[retention.tiers]\nirr_days = 1.5\n", ["retention.tiers.irr_days", "1.5"]),
    ("[retention]\ntiers = 14\n", ["retention.tiers", "must be a table"]),
]

GOOD_FILES = [
    ("", {}),
    ("[retention]\n", {}),
    ("[retention]\nmax_unused_days = 0\n", {"max_unused_days": 0}),
    ("[retention]\nmax_unused_days = 45\nmax_raw_memories_for_consolidation = 7\n",
     {"max_unused_days": 45, "max_raw_memories_for_consolidation": 7}),
    ("[retention.tiers]\ncore_days = 'never'\nimp_days = 30\nsec_days = 0\nirr_days = 0\n",
     {"tiers": {"core_days": "never", "imp_days": 30, "sec_days": 0, "irr_days": 0}}),
]


@pytest.mark.parametrize(("text", "expected"), BAD_FILES)
def test_a_bad_config_is_an_error_naming_the_file_and_the_key(tmp_path, text, expected):
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_memcite_config(path)
    message = str(caught.value)
    assert caught.value.exit_code == 2
    assert message.startswith(f"{path}: ")
    for part in expected:
        assert part in message


@pytest.mark.parametrize(("text", "expected"), GOOD_FILES)
def test_a_good_config_gives_its_retention_table(tmp_path, text, expected):
    path = tmp_path / "config.toml"
    path.write_text(text)
    assert load_memcite_config(path) == expected


def test_no_config_file_is_no_settings(tmp_path):
    assert load_memcite_config(tmp_path / "missing.toml") == {}
    assert load_memcite_config(None) == {}


@pytest.fixture
def home(tmp_path, monkeypatch, codex_home):
    codex = str(codex_home)
    config = tmp_path / "config.toml"
    for key, value in {"CODEX_HOME": codex, "MEMCITE_HOME": str(tmp_path),
                       "MEMCITE_CONFIG": str(config)}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("MEMCITE_DB", raising=False)
    return config


@pytest.mark.parametrize("command", [["stats"], ["prune"]])
def test_commands_refuse_a_misspelt_config_with_exit_2(home, command):
    home.write_text("[retention]\nmax_unused_dayz = 3\n")
    result = runner.invoke(app, [*command, "--json", "--as-of", "1800000000"])
    assert result.exit_code == 2
    assert f"memcite: error: {home}: retention.max_unused_dayz: unknown key; did you mean " \
           "retention.max_unused_days?" in result.output
    assert "Traceback" not in result.output


def test_the_fast_path_reports_the_same_error(home):
    home.write_text("[retention]\nmax_unused_days = 'thirty'\n")
    done = subprocess.run([sys.executable, "-m", "memcite", "stats", "--json"],
                          capture_output=True, env=dict(os.environ), timeout=60)
    assert done.returncode == 2 and not done.stdout
    assert "retention.max_unused_days: expected a whole number" in done.stderr.decode()


def test_a_valid_config_setting_is_used(home):
    home.write_text("[retention]\nmax_unused_days = 44\n")
    result = runner.invoke(app, ["stats", "--json", "--as-of", "1800000000"])
    assert result.exit_code == 0, result.output
    assert '"max_unused_days": 44' in result.stdout


def test_the_tier_windows_come_from_the_config_and_default_per_tier(home):
    from memcite.retention.tiers import TierWindows

    # by default every tier decays: the days an entry never used lasts (no consolidation known)
    assert TierWindows.from_config(None).to_dict() == {"CORE": None, "IMP": 80, "SEC": 30,
                                                       "IRR": 0}
    home.write_text("[retention.tiers]\nsec_days = 3\ncore_days = 400\n"
                    "[retention.decay]\nimp_rate = 0.2\nimp_threshold = 0.5\n")
    mine = load_memcite_config(home)
    windows = TierWindows.from_config(mine["tiers"], mine["decay"])
    assert windows.to_dict() == {"CORE": 400, "IMP": 75, "SEC": 3, "IRR": 0}
    result = runner.invoke(app, ["prune", "--rule", "tiered", "--json", "--as-of", "1800000000",
                                 "--judge-without-usage"])
    assert result.exit_code == 0, result.output
    assert '"tiers": {"CORE": 400, "IMP": 75, "SEC": 3, "IRR": 0}' in result.stdout


@pytest.mark.parametrize(("text", "says"), [
    ("[retention.decay]\nimp_rate = 1.5\n", "retention.decay.imp_rate: must be at most 1"),
    ("[retention.decay]\nsec_treshold = 0.5\n", "did you mean retention.decay.sec_threshold?"),
    ("[retention.decay]\nused_rate = \"slow\"\n", "retention.decay.used_rate"),
])
def test_bad_decay_settings_are_refused_naming_the_key(home, text, says):
    from memcite.retention.rules import ConfigError

    home.write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_memcite_config(home)
    assert says in str(raised.value)


def test_the_model_knows_exactly_the_retention_settings_and_their_minimums():
    assert list(MemciteConfig.model_fields) == ["retention", "consolidation", "fleet", "gate"]
    assert list(RetentionConfig.model_fields) == [*RETENTION_SETTINGS, "tiers", "decay"]
    for name, minimum in RETENTION_SETTINGS.items():
        assert config_problems({"retention": {name: minimum}}) == []
        assert config_problems({"retention": {name: minimum - 1}}) != []


_values = st.one_of(st.integers(-3, 3), st.booleans(), st.floats(allow_nan=False), st.text(max_size=3),
                    st.none(), st.lists(st.integers(), max_size=2))
_keys = st.sampled_from([*RETENTION_SETTINGS, "max_unused_dayz", "other"])


@given(st.one_of(
    st.fixed_dictionaries({"retention": st.dictionaries(_keys, _values, max_size=3)}),
    st.dictionaries(st.sampled_from(["retention", "retension"]),
                    st.one_of(_values, st.dictionaries(_keys, _values, max_size=2)), max_size=2),
))
def test_the_quick_check_accepts_only_what_the_model_accepts(data):
    if _plainly_valid(data):
        assert config_problems(data) == []
    elif config_problems(data) == []:
        # the model accepts more than the quick check only for values TOML cannot hold
        assert "None" in repr(data)
