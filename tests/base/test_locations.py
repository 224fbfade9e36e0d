"""Where things are, resolved once (``memcite.paths.Locations``): each location from its
option, else its variable, else the default, knowing which; a command that needs no Codex
home never looks for one; and the messages say truthfully where a location came from."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from memcite import paths
from memcite.paths import Located, Locations

CORPUS = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "corpus", "replies")
REPLY = os.path.join(CORPUS, "crlf_reply.txt")
NO_SERVER = "postgresql://nobody@127.0.0.1:1/fleet"  # nothing listens on port 1
NOW = 1_800_000_000


@pytest.fixture
def empty_home(tmp_path, monkeypatch):
    """HOME an empty folder (no ~/.codex), and none of the location variables set."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("CODEX_HOME", "CODEX_SQLITE_HOME", "MEMCITE_DB", "MEMCITE_HOME",
                 "MEMCITE_CONFIG", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    return home


def _run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memcite", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})


# --------------------------------------------------------------------------- the value


@pytest.mark.parametrize(("flag", "environ", "expected"), [
    ("/given", {"CODEX_HOME": "/env"}, Located("/given", "--codex-home")),
    (None, {"CODEX_HOME": "/env"}, Located("/env", "CODEX_HOME")),
    (None, {"HOME": "/h"}, Located("~/.codex", "default")),
])
def test_the_codex_home_is_the_option_else_the_variable_else_the_default(flag, environ, expected):
    # ~ is the test's own HOME (set per test), so it is expanded here, not at collection
    expected = Located(os.path.expanduser(expected.path), expected.origin)
    assert Locations(codex_home=flag, environ=environ).codex_home == expected


@pytest.mark.parametrize(("flag", "environ", "origin"), [
    ("/x.sqlite", {"MEMCITE_DB": "/y.sqlite"}, "--db"),
    (None, {"MEMCITE_DB": "/y.sqlite"}, "MEMCITE_DB"),
    (None, {"MEMCITE_HOME": "/data"}, "default"),
])
def test_the_database_knows_where_it_came_from(flag, environ, origin):
    where = Locations(db=flag, environ=environ)
    assert where.db.origin == origin
    assert where.db.given is (origin != "default")
    assert where.default_db_folder == (None if where.db.given else where.data_home)
    if origin == "default":
        assert where.db_path == os.path.join("/data", paths.DB_FILE_NAME)


def test_a_server_url_in_memcite_db_is_the_fleet_server():
    where = Locations(environ={"MEMCITE_DB": NO_SERVER})
    assert where.db_is_server and where.db_path == NO_SERVER
    assert not Locations(db="~/ledger.sqlite", environ={}).db_is_server


def test_a_variable_is_not_an_option_given():
    where = Locations(environ={"CODEX_HOME": "/env", "MEMCITE_DB": "/db.sqlite"})
    assert where.options_given() == {}
    assert Locations(db="d", codex_home="h", environ={}).options_given() == {
        "--db": "d", "--codex-home": "h"}


def test_the_value_is_read_only_and_sees_one_world(monkeypatch):
    monkeypatch.setenv("CODEX_HOME", "/first")
    where = Locations()
    monkeypatch.setenv("CODEX_HOME", "/second")  # a change during the run is not seen
    assert where.codex_home.path == "/first"
    with pytest.raises(AttributeError):
        where.x = 1  # type: ignore[attr-defined]


def test_memcite_config_is_the_variable_else_the_data_home_else_xdg():
    assert paths.memcite_config_path({"MEMCITE_CONFIG": "/c.toml", "MEMCITE_HOME": "/d"}) == "/c.toml"
    assert paths.memcite_config_path({"MEMCITE_HOME": "/d"}) == "/d/config.toml"
    assert paths.memcite_config_path({"XDG_CONFIG_HOME": "/x"}) == "/x/memcite/config.toml"
    assert Locations(environ={"MEMCITE_HOME": "/d"}).config == Located("/d/config.toml",
                                                                        "MEMCITE_HOME")


def test_only_paths_reads_the_location_variables():
    """No module but ``memcite.paths`` reads CODEX_HOME, CODEX_SQLITE_HOME, MEMCITE_DB,
    MEMCITE_HOME, MEMCITE_CONFIG or MEMCITE_CACHE_DIR from the environment (nor has Typer
    or the fast path copy them into options)."""
    import re

    package = os.path.join(os.path.dirname(paths.__file__))
    names = "CODEX_HOME|CODEX_SQLITE_HOME|MEMCITE_DB|MEMCITE_HOME|MEMCITE_CONFIG|MEMCITE_CACHE_DIR"
    reads = re.compile(r"(environ(\.get)?[\[(]\s*|envvar=|getenv\()\s*([\"'](" + names
                       + r")[\"']|SQLITE_HOME_ENV)")
    found = []
    for folder, _dirs, files in os.walk(package):
        for name in files:
            path = os.path.join(folder, name)
            if not name.endswith(".py") or path == paths.__file__:
                continue
            with open(path, encoding="utf-8") as handle:
                for number, line in enumerate(handle, 1):
                    if reads.search(line):
                        found.append(f"{os.path.relpath(path, package)}:{number}: {line.strip()}")
    assert found == []


def test_locations_are_built_only_at_a_boundary():
    """``Locations(`` is called by the command line (``memcite.cli``), ``memcite.paths``
    itself, and the demo, which builds the world of its own folder (``demo_locations``);
    every library function takes the value it is given."""
    import re

    package = os.path.join(os.path.dirname(paths.__file__))
    allowed = {"paths.py", os.path.join("demo", "loop.py")}
    found = []
    for folder, _dirs, files in os.walk(package):
        for name in files:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, package)
            if not name.endswith(".py") or relative in allowed or relative.startswith("cli" + os.sep):
                continue
            with open(path, encoding="utf-8") as handle:
                for number, line in enumerate(handle, 1):
                    if re.search(r"(?<![A-Za-z_])Locations\(", line):
                        found.append(f"{relative}:{number}: {line.strip()}")
    assert found == []


# --------------------------------------------------------------------------- no Codex home


def _forbid_codex_home(monkeypatch) -> list[str]:
    """Make every way of finding a Codex home fail the test, in this process."""
    import memcite.ledger.codex_home as codex_home

    asked: list[str] = []

    def boom(*args, **kwargs):
        asked.append(repr(args))
        raise AssertionError("a Codex home was looked for")

    monkeypatch.setattr(Locations, "codex_home", property(boom))
    for module in [m for name, m in sys.modules.items() if name.startswith("memcite")]:
        for name in ("resolve_codex_home", "locate_codex_home", "locate", "locate_home"):
            if callable(getattr(module, name, None)) and module is not paths or name in (
                    "resolve_codex_home",):
                if hasattr(module, name):
                    monkeypatch.setattr(module, name, boom)
    monkeypatch.setattr(codex_home, "locate_codex_home", boom)
    return asked


@pytest.mark.parametrize("args", [
    ["parse", REPLY, "--json"],
    ["strip", REPLY],
    ["schema"],
    ["schema", "stats"],
    ["conformance", "export", "{tmp}/corpus"],
    ["stats", "--db", NO_SERVER],
    ["stats", "--db", NO_SERVER, "--json"],
    ["report", "--db", NO_SERVER, "--output", "{tmp}/page.html"],
])
def test_commands_that_need_no_codex_home_never_look_for_one(args, empty_home, tmp_path,
                                                             monkeypatch):
    import memcite.cli.app  # noqa: F401 - every command module loaded before the patch
    import memcite.cli.report_commands  # noqa: F401
    import memcite.cli.retention_commands  # noqa: F401
    import memcite.fleet.report  # noqa: F401
    import memcite.retention.stats_report  # noqa: F401
    from memcite.cli import fastpath
    from memcite.cli.app import app

    args = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    asked = _forbid_codex_home(monkeypatch)
    result = CliRunner().invoke(app, args)
    assert asked == [], result.output
    assert "no such Codex home" not in result.output
    if args[0] in ("stats", "report"):
        assert result.exit_code == 2  # the server cannot be reached: said so, exit 2
        assert "cannot connect" in result.output
    else:
        assert result.exit_code == 0, result.output
    if args[0] in fastpath.FAST_COMMANDS:
        assert fastpath.run(args) in (0, 2)
        assert asked == []


def test_fleet_stats_with_no_codex_home_reaches_the_server(empty_home):
    """With HOME empty and no CODEX_HOME, as a reader of the fleet's report has it."""
    done = _run("stats", "--db", NO_SERVER)
    assert done.returncode == 2
    assert "cannot connect" in done.stderr and "Codex home" not in done.stderr
    done = _run("report", "--db", NO_SERVER, "--html", str(empty_home / "page.html"))
    assert done.returncode == 2
    assert "cannot connect" in done.stderr and "Codex home" not in done.stderr


def test_fleet_stats_refuses_a_named_codex_home_that_is_no_folder(empty_home):
    done = _run("stats", "--db", NO_SERVER, "--codex-home", str(empty_home / "nowhere"))
    assert done.returncode == 2
    assert "nowhere: no such Codex home" in done.stderr
    assert "pass the Codex home with --codex-home" not in done.stderr  # it was passed


def test_fleet_stats_honours_a_named_codex_homes_settings(tmp_path):
    from memcite.retention.stats_report import fleet_settings

    home = tmp_path / "codex"
    home.mkdir()
    (home / "config.toml").write_text("[memories]\nmax_unused_days = 5\n", encoding="utf-8")
    none = tmp_path / "none.toml"
    named = Locations(codex_home=str(home), environ={"MEMCITE_CONFIG": str(none)})
    assert fleet_settings(named, rule="memcite", max_unused_days=None).max_unused_days == 5
    by_variable = Locations(environ={"CODEX_HOME": str(home), "MEMCITE_CONFIG": str(none)})
    assert fleet_settings(by_variable, rule="memcite", max_unused_days=None).max_unused_days == 5
    # The default home is not looked at, even when it exists.
    default = Locations(environ={"HOME": str(tmp_path), "MEMCITE_CONFIG": str(none)})
    os.makedirs(tmp_path / ".codex")
    (tmp_path / ".codex" / "config.toml").write_text("[memories]\nmax_unused_days = 9\n",
                                                     encoding="utf-8")
    assert fleet_settings(default, rule="memcite", max_unused_days=None).max_unused_days != 9


# --------------------------------------------------------------------------- true hints


def test_the_sqlite_home_is_not_said_to_come_from_codex_home_when_it_is_unset(empty_home):
    (empty_home / ".codex").mkdir()
    done = _run("stats")
    assert done.returncode == 3, done.stderr
    assert "from CODEX_HOME" not in done.stderr
    assert "Codex's SQLite home: the Codex home itself, the default ~/.codex" in done.stderr
    done = _run("stats", "--codex-home", str(empty_home / ".codex"))
    assert "Codex's SQLite home: the Codex home itself, given with --codex-home" in done.stderr
    done = _run("stats", env={"CODEX_HOME": str(empty_home / ".codex")})
    assert "Codex's SQLite home: the Codex home itself, named by CODEX_HOME" in done.stderr


@pytest.mark.parametrize(("args", "env", "hint"), [
    (["--codex-home", "/nonexistent"], {}, "the path given with --codex-home does not exist"),
    ([], {"CODEX_HOME": "/nonexistent"}, "CODEX_HOME names it: fix or unset CODEX_HOME"),
    ([], {}, "pass the Codex home with --codex-home or CODEX_HOME"),
])
def test_a_missing_codex_home_hints_by_how_it_was_named(args, env, hint, empty_home):
    done = _run("stats", *args, env=env)
    assert done.returncode == 2
    assert "no such Codex home" in done.stderr
    assert f"hint: {hint}" in done.stderr


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    import io

    from memcite.demo.loop import demo_paths, run_demo

    folder = str(tmp_path_factory.mktemp("demo"))
    run_demo(folder, now=NOW, out=io.StringIO())
    return demo_paths(folder)


def test_the_next_step_repeats_only_the_options_given(demo):
    """CODEX_HOME and MEMCITE_DB in the environment are no options of this run: the next
    step does not repeat them, nor say "(and this run's --codex-home)"."""
    env = {"CODEX_HOME": demo["CODEX_HOME"], "MEMCITE_DB": demo["MEMCITE_DB"], "COLUMNS": "60"}
    done = _run("stats", "--as-of", str(NOW), "--max-unused-days", "30", env=env)
    assert done.returncode == 0, done.stderr
    step = done.stdout.splitlines()[2]
    assert step.startswith("next: memcite prune --max-unused-days 30")
    assert "--codex-home" not in step and "--db" not in step
    assert "this run's --codex-home" not in step
    given = _run("stats", "--as-of", str(NOW), "--max-unused-days", "30", "--codex-home",
                 demo["CODEX_HOME"], env={**env, "COLUMNS": "400"})
    assert f"--codex-home {demo['CODEX_HOME']}" in given.stdout.splitlines()[2]
    as_json = json.loads(_run("stats", "--json", "--as-of", str(NOW), env=env).stdout)
    assert as_json["codex_home"] == os.path.realpath(demo["CODEX_HOME"])


# --------------------------------------------------------------------------- read once


def _count_config_reads(monkeypatch, config: str) -> dict[str, int]:
    """Count the opens and the TOML parses of Codex's ``config``, wherever memcite reads it."""
    from memcite import untrusted
    from memcite.ledger import codex_home, memory_files

    counts = {"opened": 0, "parsed": 0}
    text = open(config, encoding="utf-8").read()
    for module in (codex_home, memory_files):
        real_open = module.open_regular

        def counting_open(path, *args, real_open=real_open, **kwargs):
            if os.fspath(path) == config:
                counts["opened"] += 1
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(module, "open_regular", counting_open)
    for module in (untrusted, codex_home):
        real_loads = module.loads_toml

        def counting_loads(data, *args, real_loads=real_loads, **kwargs):
            if data == text:
                counts["parsed"] += 1
            return real_loads(data, *args, **kwargs)

        monkeypatch.setattr(module, "loads_toml", counting_loads)
    return counts


@pytest.mark.parametrize("memories", ["", '[memories]\nversion = "v1"\nmax_rollout_age_days = 12\n'])
def test_prune_apply_reads_codexs_config_once(tmp_path, monkeypatch, capsys, memories):
    """``prune --apply`` opens and parses Codex's ``config.toml`` once: locating the home
    (``sqlite_home``, ``[memories] version``) and the retention settings (``[memories]``, for
    the rule and again for ``max_rollout_age_days``) share one read. It read it twice (the
    ledger's ``read_codex_config`` and retention's ``load_codex_memories_config``), and
    ``[memories]`` twice before that. Parametrized: a file locate need not parse, and one it
    parses."""
    import io

    from memcite.cli import retention_commands
    from memcite.demo.loop import demo_paths, run_demo

    run_demo(str(tmp_path), now=NOW, out=io.StringIO())
    paths_ = demo_paths(str(tmp_path))
    config = os.path.join(os.path.realpath(paths_["CODEX_HOME"]), "config.toml")
    with open(config, "a", encoding="utf-8") as handle:
        handle.write(memories)
    monkeypatch.setenv("MEMCITE_CONFIG", str(tmp_path / "none.toml"))
    counts = _count_config_reads(monkeypatch, config)
    code = retention_commands.prune(paths_["MEMCITE_DB"], paths_["CODEX_HOME"], 30,
                                    as_of=str(NOW), apply=True, json=True)
    assert code == 0, capsys.readouterr().err
    out = json.loads(capsys.readouterr().out)
    assert out["applied"] is True
    assert counts == {"opened": 1, "parsed": 1}
    if memories:
        assert out["settings"]["sources"]["max_unused_days"] == "cli"


def test_stats_reads_codexs_config_once(tmp_path, monkeypatch, capsys):
    """``stats`` too: locating the home and the settings share one read of config.toml."""
    import io

    from memcite.cli import retention_commands
    from memcite.demo.loop import demo_paths, run_demo

    run_demo(str(tmp_path), now=NOW, out=io.StringIO())
    paths_ = demo_paths(str(tmp_path))
    config = os.path.join(os.path.realpath(paths_["CODEX_HOME"]), "config.toml")
    with open(config, "a", encoding="utf-8") as handle:
        handle.write('[memories]\nversion = "v1"\nmax_unused_days = 25\n')
    monkeypatch.setenv("MEMCITE_CONFIG", str(tmp_path / "none.toml"))
    counts = _count_config_reads(monkeypatch, config)
    code = retention_commands.stats(paths_["MEMCITE_DB"], paths_["CODEX_HOME"], as_of=str(NOW),
                                    json=True)
    assert code == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["max_unused_days"] == 25
    assert counts == {"opened": 1, "parsed": 1}


def test_a_codex_home_that_is_a_file_is_said_to_be_no_folder(empty_home):
    """Issue 40: `--codex-home /etc/hosts` was told the folder "does not exist"."""
    hosts = empty_home / "hosts"
    hosts.write_text("127.0.0.1 localhost\n")
    for command in ("stats", "sync"):
        done = _run(command, "--codex-home", str(hosts))
        assert done.returncode == 2
        assert f"{hosts}: not a folder" in done.stderr and "does not exist" not in done.stderr
        assert "hint: the path given with --codex-home is not a folder" in done.stderr
    done = _run("doctor", "--codex-home", str(hosts))
    assert f"codex-home: {hosts}: not a folder" in done.stdout


def test_sync_names_the_sqlite_home_s_true_origin(empty_home):
    """Issue 40: sync said "(SQLite home from CODEX_HOME)" with CODEX_HOME unset."""
    (empty_home / ".codex" / "memories" / "rollout_summaries").mkdir(parents=True)
    done = _run("sync")
    assert done.returncode == 0, done.stderr
    assert "from CODEX_HOME" not in done.stderr
    assert "Codex's SQLite home: the Codex home itself, the default ~/.codex" in done.stderr


def test_doctor_words_a_bad_codex_home_variable_as_the_other_commands_do(empty_home):
    done = _run("doctor", env={"CODEX_HOME": str(empty_home / "gone")})
    assert done.returncode == 1
    assert "fix or unset CODEX_HOME" in done.stdout and "set CODEX_HOME to" not in done.stdout
    stats = _run("stats", env={"CODEX_HOME": str(empty_home / "gone")})
    assert "fix or unset CODEX_HOME" in stats.stderr
