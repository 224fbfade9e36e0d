"""`memcite parse` and `memcite strip`, through Typer's CliRunner and as real processes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.cli.fastpath import FAST_COMMANDS
from memcite_process import run_memcite

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "replies"
TYPICAL = CORPUS / "typical.txt"
runner = CliRunner()


def run(*args, stdin: bytes = b"", env_extra=None, cwd=None):
    """Run ``python -m memcite`` as a real process; returns (code, stdout bytes, stderr text)."""
    return run_memcite(args, env_extra, stdin=stdin, cwd=cwd)


def test_parse_json_matches_the_golden_file():
    result = runner.invoke(app, ["parse", "--json", str(TYPICAL)])
    assert result.exit_code == 0, result.output
    expected = json.loads(TYPICAL.with_suffix(".expected.json").read_text(encoding="utf-8"))
    assert json.loads(result.stdout) == expected


def test_parse_summary_is_readable():
    result = runner.invoke(app, ["parse", str(CORPUS / "entry_reversed_and_zero.txt")])
    assert result.exit_code == 0
    assert "2 entries, 1 rollout id, 1 counted" in result.stdout
    assert "range-reversed" in result.stdout
    assert "range-zero" in result.stdout


def test_parse_reads_stdin():
    result = runner.invoke(app, ["parse", "--json", "-"], input=TYPICAL.read_bytes())
    assert result.exit_code == 0
    assert json.loads(result.stdout)["thread_ids"][0] == "019c6e27-e55b-73d1-87d8-4e01f1f75043"


def test_strict_profile_exits_1_with_line_and_column():
    result = runner.invoke(app, ["parse", "--profile", "strict", str(CORPUS / "entry_no_note.txt")])
    assert result.exit_code == 1
    assert "entry_no_note.txt:5:1: error:" in result.stderr
    assert "1 problem" in result.stderr
    assert "entry-no-note" in result.stderr


def test_strict_profile_accepts_a_clean_reply():
    result = runner.invoke(app, ["parse", "--profile", "strict", "--json", str(TYPICAL)])
    assert result.exit_code == 0


def test_bad_profile_is_a_usage_error():
    result = runner.invoke(app, ["parse", "--profile", "lenient", str(TYPICAL)])
    assert result.exit_code == 2


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.txt"))[:12], ids=lambda p: p.stem)
def test_strip_writes_the_visible_reply_byte_for_byte(path):
    code, out, _ = run("strip", str(path))
    expected = json.loads(path.with_suffix(".expected.json").read_text(encoding="utf-8"))["visible"]
    assert code == 0
    assert out == expected.encode("utf-8")


def test_strip_adds_no_newline_and_reports_diagnostics_on_stderr():
    code, out, err = run("strip", "-", stdin=b"answer<oai-mem-citation><citation_entries>\nbad\n</citation_entries></oai-mem-citation>")
    assert (code, out) == (0, b"answer")
    assert "<stdin>:2:1: warning:" in err and "entry-no-note" in err


def test_invalid_utf8_names_the_byte_offset():
    code, out, err = run("strip", "-", stdin=b"ok \xff\xfe tail")
    assert code == 2
    assert out == b""
    assert "invalid UTF-8 at byte offset 3" in err
    assert "--errors replace" in err


def test_errors_replace_reads_invalid_utf8():
    code, out, _ = run("strip", "--errors", "replace", "-", stdin=b"ok \xff tail")
    assert code == 0
    assert out == "ok \ufffd tail".encode()


def test_size_limit_is_a_clear_error(tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 2048)
    code, _, err = run("parse", "--max-bytes", "1024", str(big))
    assert code == 2
    assert "larger than the limit of 1024 bytes" in err and "--max-bytes" in err


def test_missing_file_is_exit_2(tmp_path):
    code, _, err = run("parse", str(tmp_path / "absent.txt"))
    assert code == 2
    assert "absent.txt: no such file" in err


def test_installed_command_works_outside_the_checkout(tmp_path):
    (tmp_path / "reply.txt").write_bytes(TYPICAL.read_bytes())
    code, out, err = run("parse", "--json", "reply.txt", cwd=tmp_path)
    assert code == 0, err
    assert len(json.loads(out)["citation"]["entries"]) == 2


FAST_CASES = [
    ["strip", str(TYPICAL)],
    ["strip", "--profile", "strict", str(CORPUS / "entry_no_note.txt")],
    ["strip", "--profile=codex", str(CORPUS / "stage_a_unterminated.txt")],
    ["parse", "--json", str(CORPUS / "ids_spellings.txt")],
    ["parse", str(CORPUS / "stage_a_two_blocks.txt")],
    ["parse", "--profile", "strict", "--json", str(CORPUS / "entry_bad_numbers.txt")],
    ["parse", "--max-bytes", "10", str(TYPICAL)],
    ["parse", "--", str(TYPICAL)],
]


@pytest.mark.parametrize("args", FAST_CASES, ids=lambda a: " ".join(a[:3]))
def test_fast_path_and_typer_print_the_same(args):
    fast = run(*args)
    slow = run(*args, env_extra={"MEMCITE_NO_FASTPATH": "1"})
    assert fast == slow


@pytest.mark.parametrize("args", [
    ["parse", "--profile", "lenient", str(TYPICAL)],
    ["strip", "--errors", "ignore", str(TYPICAL)],
    ["record", "--policy", "sometimes", str(TYPICAL)],
    ["instructions", "--tokenizer", "gpt2"],
    ["instructions", "--profile", "claude"],
    ["truncate", "--errors", "ignore", str(TYPICAL)],
], ids=lambda a: " ".join(a[:3]))
def test_a_bad_choice_is_one_message_on_both_paths(args, tmp_path):
    # One check (memcite.cli.console.check_choice) for the fast path and Typer alike.
    env = {"MEMCITE_DB": str(tmp_path / "m.sqlite"), "CODEX_HOME": str(tmp_path)}
    fast = run(*args, env_extra=env)
    slow = run(*args, env_extra={**env, "MEMCITE_NO_FASTPATH": "1"})
    assert fast == slow
    code, out, err = fast
    assert (code, out) == (2, b"")
    assert err.startswith(f"memcite: error: {args[1]}: '{args[2]}' is not one of ")
    assert not (tmp_path / "m.sqlite").exists()


def test_fast_path_options_exist_on_the_typer_commands():
    group = get_command(app)  # Typer vendors click, so duck typing
    for name, spec in FAST_COMMANDS.items():
        command = group
        for word in name.split():  # "hook stop": a subcommand
            command = command.commands[word]
        options = {opt for param in command.params for opt in getattr(param, "opts", [])}
        for option in [*spec.options, *spec.flags]:
            assert option in options, f"{name} {option}"
        arguments = [p.name for p in command.params if p.param_type_name == "argument"]
        assert list(spec.positionals) == arguments


def test_help_lists_every_command():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for name in ("parse", "strip"):
        assert name in result.stdout


def test_thousands_of_problems_are_capped_with_a_count_in_text_and_listed_in_json(tmp_path):
    import json as json_module

    ids = "\n".join(f"not-a-uuid-{i}" for i in range(3000))
    reply = tmp_path / "many.txt"
    reply.write_text(f"x\n<oai-mem-citation>\n<rollout_ids>\n{ids}\n</rollout_ids>\n</oai-mem-citation>\n")
    text = subprocess.run([sys.executable, "-m", "memcite", "parse", str(reply)],
                          capture_output=True, text=True, timeout=60)
    assert text.returncode == 0 and len(text.stdout.splitlines()) < 120
    assert "… and 2950 more problems (--json lists every one)" in text.stdout
    assert "… and 2950 more ids" in text.stdout
    strip = subprocess.run([sys.executable, "-m", "memcite", "strip", str(reply)],
                           capture_output=True, text=True, timeout=60)
    assert len(strip.stderr.splitlines()) == 51 and "2950 more problems" in strip.stderr
    whole = subprocess.run([sys.executable, "-m", "memcite", "parse", str(reply), "--json"],
                           capture_output=True, text=True, timeout=60)
    assert len(json_module.loads(whole.stdout)["diagnostics"]) == 3000
