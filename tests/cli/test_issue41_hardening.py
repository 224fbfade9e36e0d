"""Issue 41, each class reproduced as an attacker would and kept: a cited path no program can
be given, integer options past any sensible bound, kept audit counts that lie, a cache folder
that is a link, a ledger damaged under a held connection, a subreaper that ends others' processes.
Each test fails on the code before the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

A = "019b7635-7fb3-7cf8-8f11-6f64065672e0"


def block(entries: list[str], ids: list[str]) -> str:
    return ("Done.\n<oai-mem-citation>\n<citation_entries>\n" + "\n".join(entries)
            + "\n</citation_entries>\n<rollout_ids>\n" + "\n".join(ids)
            + "\n</rollout_ids>\n</oai-mem-citation>")


def run(args, env: dict, stdin: bytes = b"", timeout: float = 60, cwd=None):
    """``python -m memcite`` as a real process."""
    done = subprocess.run([sys.executable, "-m", "memcite", *args], input=stdin,
                          capture_output=True, env={**os.environ, **env}, timeout=timeout, cwd=cwd)
    return done.returncode, done.stdout.decode("utf-8", "replace"), \
        done.stderr.decode("utf-8", "replace")


def git(folder, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), "-c", "user.email=m@example.invalid",
                    "-c", "user.name=m", *args], check=True, capture_output=True)


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "codex"
    memories = home / "memories"
    memories.mkdir(parents=True)
    (memories / "MEMORY.md").write_text("# Memory\nline two\n")
    git(memories, "init", "-q")
    git(memories, "add", "-A")
    git(memories, "commit", "-qm", "baseline")
    return {"CODEX_HOME": str(home), "MEMCITE_DB": str(tmp_path / "m.sqlite"),
            "MEMCITE_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path / "home"),
            "MEMCITE_NO_FASTPATH": ""}


# --------------------------------------------------------------------------- 1. NUL in a cited path

# Cited paths no program can be given, or that a program could take for an option.
HOSTILE_PATHS = [
    "MEM\x00ORY.md",           # a NUL byte: ValueError from subprocess on main
    "notes/\x00",              # a NUL byte alone in the last part
    "\ud800.md",               # a lone surrogate (a JSON escape): UnicodeEncodeError on main
    "-c.md",                   # shaped like an option
    "--output=MEMORY.md",      # an option with a value
]


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_a_hostile_cited_path_never_reaches_git_and_stats_stays_usable(env, tmp_path, path):
    batch = tmp_path / "batch.jsonl"
    batch.write_text(json.dumps({"text": block([f"{path}:1-1|note=[x]", "MEMORY.md:1-1|note=[ok]"],
                                               [A]), "id": "r1"}) + "\n")
    code, _, err = run(["record", "--jsonl", str(batch)], env)
    assert code == 0, err
    for _ in range(2):  # every later stats, not only the first
        code, out, err = run(["stats", "--json", "--judge-without-usage"], env)
        assert code == 0, err
        assert "Traceback" not in err
        assert json.loads(out)["citation_checks"]["citations"] == 2
    code, _, err = run(["report", "--judge-without-usage", "--html", str(tmp_path / "r.html")], env)
    assert code == 0, err
    assert "Traceback" not in err


@pytest.mark.parametrize(("value", "safe"), [
    ("MEMORY.md", True), ("a b/c", True), ("\udcff", True),  # a non-UTF-8 byte of a file name
    ("a\x00b", False), ("\x00", False), ("\ud800", False), ("x\udbff", False), ("", True),
])
def test_os_safe_says_what_the_os_can_be_given(value, safe):
    from memcite.untrusted import os_safe, program_arguments

    assert os_safe(value) is safe
    assert (program_arguments(["git", "log", "--", value]) is not None) is safe


@pytest.mark.parametrize("path", ["MEM\x00ORY.md", "\ud800"])
def test_every_git_caller_does_without_git_for_a_path_it_cannot_pass(tmp_path, path):
    from memcite.codex import consolidation
    from memcite.ledger.memory_history import MemoryHistory
    from memcite.readpath.event_log import staleness

    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("one\n")
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "one")
    history = MemoryHistory(folder)
    assert history.ever_had(path) is False
    assert history.lines_at(path, 2**40) is None
    assert history.lines_sha256_at(path, 1, 1, 2**40) is None
    assert history.ever_had("MEMORY.md") is True
    later = 2**33  # written after every commit: only the unnameable file is said gone
    assert staleness(str(folder), [("k", later, [path, "MEMORY.md"])]) == {"k": [f"gone {path}"]}
    assert consolidation._git(str(folder), "log", "--", path) is None


# --------------------------------------------------------------------------- 2. bounded numbers

HUGE = "99999999999999999999"


def _walk(command, path=()):
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _walk(sub, (*path, name))


def _number_options():
    """(command words, option, kind) for every option taking a number or a time."""
    from typer.main import get_command

    from memcite.cli.app import app

    found = []
    for path, command in _walk(get_command(app)):
        if hasattr(command, "commands"):
            continue
        for param in command.params:
            if param.param_type_name != "option" or getattr(param, "is_flag", False):
                continue
            if param.metavar in ("N", "TIME"):
                found.append((" ".join(path), param.opts[0], param.metavar, param.min))
    return found


NUMBER_OPTIONS = _number_options()
# What each command needs besides the option, so that only the option can be wrong.
NEEDS = {"show": [A], "thread": [A], "conformance check": ["--", "cat"],
         "conformance fuzz": ["--", "cat"], "push": ["--to", "postgresql://u@127.0.0.1:9/x"],
         "restore": ["--all"]}


def test_the_walk_finds_every_number_option():
    names = {(command, option) for command, option, _, _ in NUMBER_OPTIONS}
    assert {("restore", "--since"), ("stats", "--limit"), ("parse", "--max-bytes"),
            ("conformance fuzz", "--seed"), ("mcp", "--confirm-ttl"), ("select", "--n"),
            ("push", "--batch"), ("record", "--at")} <= names
    assert len(names) >= 30


def _bad_values(kind: str, low) -> list[str]:
    values = [HUGE, "-" + HUGE, "1e400"]
    if kind == "N" and low is not None and low >= 0:
        values.append("-1")
    if kind == "TIME":
        values += ["10000-01-01", "nan", "inf"]
    return values


@pytest.mark.parametrize(("command", "option", "kind", "low"), NUMBER_OPTIONS,
                         ids=[f"{c}:{o}" for c, o, _, _ in NUMBER_OPTIONS])
def test_every_number_option_refuses_what_is_out_of_range_with_exit_2(tmp_path, monkeypatch,
                                                                      command, option, kind, low):
    from typer.testing import CliRunner

    from memcite.cli.app import app

    (tmp_path / "codex" / "memories").mkdir(parents=True)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("MEMCITE_DB", str(tmp_path / "m.sqlite"))
    monkeypatch.setenv("MEMCITE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    extra = NEEDS.get(command, [])
    tail = extra if extra[:1] == ["--"] else []
    head = [] if tail else extra
    for value in _bad_values(kind, low):
        args = [*command.split(), *head, f"{option}={value}", *tail]
        result = CliRunner().invoke(app, args, input="Done.\n")
        shown = f"{args}: {result.output}"
        assert result.exit_code == 2, shown
        assert isinstance(result.exception, SystemExit), (shown, result.exc_info)
        assert option in result.output, shown


@pytest.mark.parametrize("name", sorted(__import__("memcite.cli.fastpath", fromlist=["x"])
                                        .FAST_COMMANDS))
def test_the_fast_path_hands_every_out_of_range_number_to_typer(name):
    from memcite.cli.fastpath import FAST_COMMANDS, parse_args

    spec = FAST_COMMANDS[name]
    for option, kind in spec.options.items():
        if kind is str or hasattr(kind, "choices"):
            continue
        for value in (HUGE, "-" + HUGE, "-1", "1e400", "nan"):
            assert parse_args(spec, [option, value]) is None, (name, option, value)


@pytest.mark.parametrize("args", [
    ["restore", "--since", HUGE],
    ["stats", "--limit", HUGE, "--judge-without-usage"],
    ["stats", "--as-of", HUGE, "--judge-without-usage"],
    ["search", "x", "--limit", HUGE],
    ["parse", "--max-bytes", "100000000000"],
    ["record", "--at", HUGE],
])
@pytest.mark.parametrize("fast", ["", "1"])
def test_an_overflowing_number_by_hand_is_a_message_not_a_traceback(env, args, fast):
    code, _, err = run(["record"], env, stdin=block(["MEMORY.md:1-1|note=[x]"], [A]).encode())
    assert code == 0, err
    code, _, err = run(args, {**env, "MEMCITE_NO_FASTPATH": fast}, stdin=b"hi\n")
    assert code == 2, err
    assert "Traceback" not in err, err
    assert any(arg in err for arg in args[1:] if arg.startswith("--")), err  # names the option
