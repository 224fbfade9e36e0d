"""``memcite instructions`` and ``memcite truncate`` through Typer, the fast path and a real process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.cli.fastpath import FAST_COMMANDS
from memcite.readpath.projects import find_project_root, project_note_path, project_slug

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def env(tmp_path, monkeypatch, corpus_home):
    """A private Codex home, cache and working directory; nothing touches the real ones."""
    home = corpus_home
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    values = {
        "CODEX_HOME": str(home),
        "MEMCITE_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": str(SRC),
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    for name in ("MEMCITE_BPE_FILE", "TIKTOKEN_CACHE_DIR", "MEMCITE_NO_FASTPATH"):
        monkeypatch.delenv(name, raising=False)
    return {"home": home, "project": project, "cache": tmp_path / "cache", "env": dict(os.environ)}


def run_cli(*args: str, input: bytes | None = None):
    return CliRunner().invoke(app, list(args), input=input)


def run_process(args, env, input: bytes | None = None, extra_env=None):
    return subprocess.run(
        [sys.executable, "-m", "memcite", *args],
        input=input,
        capture_output=True,
        env={**env["env"], **(extra_env or {})},
        cwd=env["project"],
        timeout=60,
    )


def test_instructions_plain_output(env):
    result = run_cli("instructions", "--cwd", str(env["project"]))
    assert result.exit_code == 0, result.output
    assert "========= MEMORY_SUMMARY BEGINS =========\n" in result.stdout
    assert "## User Profile" in result.stdout


def test_instructions_json(env):
    result = run_cli("instructions", "--cwd", str(env["project"]), "--budget", "80", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["truncated"] is True
    assert data["tokens"]["budget"] == 80 and 0 < data["tokens"]["used"] <= 80
    assert data["summary"] in data["instructions"]
    assert data["sources"][0]["scope"] == "global"


def test_codex_profile_json_summary_is_codexs(env):
    from memcite.readpath.truncation import truncate_approx
    from memcite.rust_text import rust_trim

    text = (env["home"] / "memories" / "memory_summary.md").read_text()
    result = run_cli("instructions", "--profile", "codex", "--budget", "50", "--json")
    data = json.loads(result.stdout)
    assert data["summary"] == truncate_approx(rust_trim(text), 50)
    assert data["tokenizer"] == "approx"


def test_nothing_to_inject_prints_nothing(env, tmp_path):
    result = run_cli("instructions", "--memory-root", str(tmp_path / "none"))
    assert (result.exit_code, result.stdout) == (0, "")
    assert f"--memory-root {tmp_path / 'none'}: no such folder" in result.stderr
    result = run_cli("instructions", "--memory-root", str(tmp_path / "none"), "--json")
    data = json.loads(result.stdout)
    assert data["instructions"] is None and data["summary"] is None


@pytest.mark.parametrize("fast", [True, False], ids=["fast path", "typer"])
def test_a_codex_home_with_a_tilde_is_expanded_as_sync_does(env, fast):
    user_home = Path(env["project"]).parent / "home"
    shutil.copytree(env["home"], user_home / ".codexalt")
    extra = {"HOME": str(user_home), "CODEX_HOME": "~/.codexalt"}
    if not fast:
        extra["MEMCITE_NO_FASTPATH"] = "1"
    done = run_process(["instructions", "--profile", "codex"], env, extra_env=extra)
    assert done.returncode == 0, done.stderr
    assert b"MEMORY_SUMMARY BEGINS" in done.stdout and b"no such folder" not in done.stderr


def test_a_missing_default_memory_root_is_a_warning(env, tmp_path):
    result = run_cli("instructions", "--codex-home", str(tmp_path / "nowhere"))
    assert (result.exit_code, result.stdout) == (0, "")
    assert f"{tmp_path / 'nowhere' / 'memories'} ($CODEX_HOME/memories: memory store v1): no such folder" \
        in result.stderr


def test_explain_is_a_table(env):
    result = run_cli("instructions", "--explain", "--budget", "100")
    assert result.exit_code == 0
    assert "within the budget (100)" in result.stdout and "whole message, budget 100" in result.stdout
    assert "memory_summary.md" in result.stdout and "yes" in result.stdout


def test_project_note_through_the_cli(env):
    root = find_project_root(env["project"])
    note = Path(project_note_path(env["home"], project_slug(root)))
    note.parent.mkdir(parents=True)
    note.write_text(f"# Project memory\n\nProject: {root}\n\n- NOTE-FACT\n")
    result = run_cli("instructions", "--cwd", str(env["project"]))
    assert "NOTE-FACT" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["instructions", "--profile", "claude"], "'claude' is not one of memcite, codex"),
        (["instructions", "--tokenizer", "gpt2"], "'gpt2' is not one of"),
        (["instructions", "--budget", "-1"], "--budget"),
        (["truncate", "--tokenizer", "x"], "'x' is not one of"),
    ],
)
def test_bad_options_exit_2(env, args, message):
    result = run_cli(*args)
    assert result.exit_code == 2
    assert message in result.output


def test_invalid_utf8_summary_exits_2_with_the_offset(env):
    (env["home"] / "memories" / "memory_summary.md").write_bytes(b"v1\n\xff")
    result = run_cli("instructions")
    assert result.exit_code == 2
    assert "invalid UTF-8 at byte offset 3" in result.output
    assert "--errors replace" in result.output
    replaced = run_cli("instructions", "--errors", "replace")
    assert replaced.exit_code == 0 and "warning" in replaced.stderr


def test_bad_bpe_file_exits_2_and_says_how_to_fix(env, tmp_path):
    bad = tmp_path / "bad.tiktoken"
    bad.write_bytes(b"nope")
    result = run_cli("truncate", "--bpe-file", str(bad), "--budget", "1", input=b"hello world")
    assert result.exit_code == 2
    assert "not the published o200k_base BPE file" in result.output
    assert "--bpe-file" in result.output


@pytest.mark.parametrize(
    ("text", "budget", "expected"),
    [
        ("abcdef", "0", "…2 tokens truncated…"),
        ("example output", "1", "ex…3 tokens truncated…ut"),
        (
            "this is an example of a long output that should be truncated",
            "5",
            "this is an…10 tokens truncated… truncated",
        ),
        ("short\n", "10", "short\n"),  # no newline added, none removed
    ],
)
def test_truncate_approx_writes_exact_bytes(env, text, budget, expected):
    result = run_cli("truncate", "-", "--budget", budget, "--tokenizer", "approx", input=text.encode())
    assert result.exit_code == 0
    assert result.stdout_bytes == expected.encode()


def test_truncate_with_a_tokenizer_from_a_file(env, tmp_path):
    from memcite.readpath.tokens import get_tokenizer

    source = tmp_path / "long.md"
    source.write_text("".join(f"## Part {n}\n- item {n}\n" for n in range(500)))
    result = run_cli("truncate", str(source), "--budget", "100")
    assert result.exit_code == 0
    assert get_tokenizer("o200k_base").count(result.stdout) <= 100
    assert result.stdout.endswith("tokens truncated…")


def test_truncate_with_a_budget_too_small_for_the_marker_warns(env):
    result = run_cli("truncate", "-", "--budget", "3", input=b"abc\n## heading\nxyz " * 5)
    assert result.exit_code == 0
    assert result.stdout_bytes == b""
    assert "cannot hold even the cut marker" in result.stderr


def test_fast_path_options_match_the_typer_commands():
    import typer.main

    command = typer.main.get_command(app)
    for name in ("instructions", "truncate"):
        typer_options = {
            option
            for param in command.commands[name].params
            for option in param.opts
            if option.startswith("--")
        }
        spec = FAST_COMMANDS[name]
        assert set(spec.options) | set(spec.flags) == typer_options - {"--help"}


@pytest.mark.parametrize(
    "args",
    [
        ["instructions", "--budget", "90"],
        ["instructions", "--json", "--budget", "70"],
        ["instructions", "--explain", "--no-cache"],
        ["instructions", "--profile", "codex", "--budget", "20"],
        ["truncate", "--tokenizer", "approx", "--budget", "3"],
        ["truncate", "--budget", "5"],
    ],
)
def test_fast_path_and_typer_print_the_same_bytes(env, args):
    stdin = b"v1\n## A\nsome text here\n## B\nmore text, and more\n" * 20
    fast = run_process(args, env, input=stdin)
    slow = run_process(args, env, input=stdin, extra_env={"MEMCITE_NO_FASTPATH": "1"})
    assert fast.returncode == slow.returncode == 0, fast.stderr + slow.stderr
    assert fast.stdout == slow.stdout


def test_a_warm_call_imports_neither_tiktoken_nor_typer(env):
    cold = run_process(["instructions"], env)
    assert cold.returncode == 0 and b"MEMORY_SUMMARY BEGINS" in cold.stdout
    warm = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memcite", "instructions"],
        capture_output=True,
        env=env["env"],
        cwd=env["project"],
        timeout=60,
    )
    assert warm.stdout == cold.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in warm.stderr.decode().splitlines()}
    assert not {"tiktoken", "typer", "click", "platformdirs"} & imported
    assert os.listdir(env["cache"] / "instructions")


def test_subprocess_truncate_reads_a_file(env, tmp_path):
    source = tmp_path / "summary.md"
    source.write_bytes(b"b" * 10_001)
    result = run_process(["truncate", str(source), "--budget", "2500", "--tokenizer", "approx"], env)
    assert result.returncode == 0
    assert result.stdout == b"b" * 5_000 + "…1 tokens truncated…".encode() + b"b" * 5_000


def test_subprocess_symlinked_summary_is_refused(env, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("v1\nsecret\n")
    summary = env["home"] / "memories" / "memory_summary.md"
    summary.unlink()
    summary.symlink_to(outside)
    result = run_process(["instructions"], env)
    assert result.returncode == 2
    assert b"symlink leading outside" in result.stderr
    assert b"secret" not in result.stdout
