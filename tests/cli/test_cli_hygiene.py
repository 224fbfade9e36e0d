"""The command line's manners: --version, exit codes, broken pipes, Ctrl-C, strict pass-through,
empty replies, the terminal hint, help texts, `demo --keep`, the weekly chart, ingest's checks."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.cli.demo import demo_command
from memcite.demo.loop import load_sample_builder
from memcite.errors import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_FINDINGS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_REFUSED,
)
from memcite_process import run_memcite

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
SPELLINGS = CORPUS / "replies" / "ids_spellings.txt"  # warnings: a strict reading fails
BUILDER = load_sample_builder(CORPUS)
NOW = 1_800_000_000
DAY = 86_400
runner = CliRunner()

BOTH_PATHS = [pytest.param({}, id="fast path"), pytest.param({"MEMCITE_NO_FASTPATH": "1"}, id="typer")]


@pytest.fixture
def env(sample_env):
    return sample_env


def _env(extra=None) -> dict:
    return {**os.environ, **(extra or {})}


def run(args, env=None, stdin: bytes = b"", **popen):
    return run_memcite(args, env, stdin=stdin, timeout=120, **popen)


# --------------------------------------------------------------------------- exit codes


def test_exit_codes_are_the_documented_ones():
    assert (EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT, EXIT_REFUSED, EXIT_INTERRUPTED,
            EXIT_BROKEN_PIPE) == (0, 1, 2, 3, 130, 141)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("### Exit codes", 1)[1].split("\n#", 1)[0]
    for code in (0, 1, 2, 3, 130, 141):
        assert re.search(rf"^\| `{code}` \|", table, re.MULTILINE), code


# --------------------------------------------------------------------------- --version


def test_a_lowercase_v_points_at_the_version_flag():
    code, out, err = run(["-v"])
    assert code == 2 and out == b""
    assert "No such option: -v" in err and "memcite -V (or --version)" in err


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_comes_from_the_package_metadata(flag):
    expected = f"memcite {version('codex-memcite')}\n".encode()
    assert run([flag]) == (0, expected, "")
    result = runner.invoke(app, [flag])  # the Typer app knows it too (and --help lists it)
    assert result.exit_code == 0 and result.stdout.encode() == expected


def test_the_distribution_is_codex_memcite_and_the_versions_agree():
    import tomllib

    import memcite

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "codex-memcite"
    assert project["scripts"] == {"memcite": "memcite.__main__:main"}
    assert project["version"] == memcite.__version__ == version("codex-memcite")


# --------------------------------------------------------------------------- broken pipe, Ctrl-C


def _run_into_closed_pipe(args, env):
    """Run memcite with a stdout whose reader is already gone."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "memcite", *args], stdout=write_end,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=_env(env),
                              timeout=120)
    finally:
        os.close(write_end)
    return done.returncode, done.stderr.decode("utf-8", "replace")


@pytest.mark.parametrize("paths", BOTH_PATHS)
@pytest.mark.parametrize("args", [["parse", str(SPELLINGS)], ["stats"], ["--help"]],
                         ids=["parse", "stats", "help"])
def test_a_closed_output_pipe_is_exit_141_without_a_traceback(args, paths, env):
    if args == ["stats"]:
        assert run(["sync"], env)[0] == 0
    code, err = _run_into_closed_pipe(args, {**env, **paths})
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert code == EXIT_BROKEN_PIPE


@pytest.mark.parametrize("paths", BOTH_PATHS)
def test_record_into_a_closed_pipe_still_records(paths, env, tmp_path):
    reply = tmp_path / "reply.txt"
    reply.write_text("Done.\n\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:1-1|note=[x]\n"
                     f"</citation_entries>\n<rollout_ids>\n{BUILDER.thread_id(0)}\n"
                     "</rollout_ids>\n</oai-mem-citation>")
    code, err = _run_into_closed_pipe(["record", str(reply)], {**env, **paths})
    assert code == EXIT_BROKEN_PIPE and "Traceback" not in err
    import sqlite3

    conn = sqlite3.connect(env["MEMCITE_DB"])
    try:
        assert conn.execute("SELECT count(*) FROM replies").fetchone()[0] == 1
    finally:
        conn.close()


def test_the_chart_reports_a_broken_pipe_instead_of_exiting_1():
    from memcite.retention.stats_text import print_weeks as _print_weeks

    class Closed(io.StringIO):
        def write(self, text):
            raise BrokenPipeError

        def flush(self):
            raise BrokenPipeError

    weeks = [{"week_start": "2026-01-05", "week_start_epoch": 0, "citations": 3}]
    with pytest.raises(BrokenPipeError):  # rich alone would raise SystemExit(1)
        _print_weeks(weeks, Closed())


def _wait_reading_stdin(process, timeout=30.0) -> None:
    """Wait until ``process`` is blocked reading its stdin (Linux), else give it a moment."""
    deadline = time.monotonic() + timeout
    path = f"/proc/{process.pid}/syscall"
    while time.monotonic() < deadline:
        try:
            fields = Path(path).read_text().split()
        except OSError:
            time.sleep(3)
            return
        if len(fields) > 1 and fields[0] in ("0", "63") and fields[1] == "0x0":
            time.sleep(0.2)
            return
        time.sleep(0.05)


@pytest.mark.parametrize("paths", BOTH_PATHS)
def test_ctrl_c_says_interrupted_and_exits_130(paths, env):
    process = subprocess.Popen([sys.executable, "-m", "memcite", "record", "-"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=_env({**env, **paths}))
    try:
        _wait_reading_stdin(process)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    err = err.decode("utf-8", "replace")
    assert process.returncode == EXIT_INTERRUPTED, err
    assert "memcite: interrupted" in err and "Traceback" not in err
    assert not Path(env["MEMCITE_DB"]).exists()


# --------------------------------------------------------------------------- replies


@pytest.mark.parametrize("paths", BOTH_PATHS)
@pytest.mark.parametrize("command", ["strip", "record"])
def test_a_strict_reading_still_passes_the_visible_reply_through(command, paths, env):
    from memcite import parse_reply

    text = SPELLINGS.read_text(encoding="utf-8")
    visible = parse_reply(text).visible.encode()
    code, out, err = run([command, "--profile", "strict", str(SPELLINGS)], {**env, **paths})
    assert (code, out) == (EXIT_FINDINGS, visible)
    assert f"{SPELLINGS}:6:1: error:" in err and "<reply>" not in err
    code, out, err = run([command, "--profile", "strict", "-"], {**env, **paths},
                         stdin=text.encode())
    assert (code, out) == (EXIT_FINDINGS, visible)
    assert "<stdin>:6:1: error:" in err and "<reply>" not in err
    if command == "record":
        assert "not recorded" in err
        assert not Path(env["MEMCITE_DB"]).exists()


def test_a_strict_json_error_names_the_file():
    code, out, _ = run(["parse", "--json", "--profile", "strict", str(SPELLINGS)])
    assert code == EXIT_FINDINGS
    assert json.loads(out)["error"].startswith(f"{SPELLINGS}:6:1: ")


@pytest.mark.parametrize("paths", BOTH_PATHS)
@pytest.mark.parametrize("reply", [b"", b"  \n\n"], ids=["empty", "blank"])
def test_recording_an_empty_reply_is_refused(reply, paths, env):
    code, out, err = run(["record", "-"], {**env, **paths}, stdin=reply)
    assert (code, out) == (EXIT_BAD_INPUT, b"")
    assert "<stdin>: the reply is empty; nothing recorded" in err
    assert not Path(env["MEMCITE_DB"]).exists()


def test_an_empty_reply_in_a_batch_is_skipped_and_the_batch_goes_on(env, tmp_path):
    batch = tmp_path / "replies.jsonl"
    batch.write_text(json.dumps({"text": ""}) + "\n" + json.dumps({"text": "fine"}) + "\n")
    code, out, err = run(["record", "--jsonl", str(batch)], env)
    assert code == EXIT_BAD_INPUT
    assert f'{batch}:1: "text" is empty (skipped)' in err
    assert out.decode().startswith("recorded 1 reply (0 already recorded, 0 rejected, 1 line")


def test_reading_a_reply_from_a_terminal_says_how_to_end_it(monkeypatch, capsys):
    from memcite.cli import inputs

    class Terminal:
        buffer = io.BytesIO(b"hello")

        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Terminal())
    assert inputs.read_bytes("-") == b"hello"
    assert "reading the reply from the terminal; end it with Ctrl-D" in capsys.readouterr().err


def test_a_real_terminal_on_stdin_gets_the_hint():
    import pty

    master, slave = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "memcite", "strip"], stdin=slave,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    os.close(slave)
    try:
        _wait_reading_stdin(process)
        os.write(master, b"hello\n\x04")
        out, err = process.communicate(timeout=60)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()
    assert (process.returncode, out) == (0, b"hello\n")
    assert err.decode().startswith("memcite: reading the reply from the terminal; end it with Ctrl-D")


def test_no_terminal_hint_when_stdin_is_a_pipe(env):
    code, out, err = run(["strip", "-"], env, stdin=b"hi")
    assert (code, out, err) == (0, b"hi", "")


# --------------------------------------------------------------------------- exit codes of batches


def test_restoring_an_id_that_is_not_archived_is_bad_input(env):
    assert run(["sync"], env)[0] == 0
    code, out, _ = run(["restore", BUILDER.thread_id(0)], env)
    assert code == EXIT_BAD_INPUT and b"skipped" in out


def test_ingest_of_a_file_that_is_not_a_session_file_is_an_error(env, tmp_path):
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"hello": "world"}\n{"type": "turn_context", "payload": {}}\n')
    good = next((CORPUS / "codex_home" / "sessions").rglob("rollout-*.jsonl"))
    code, out, err = run(["ingest", str(notes), str(good)], env)
    assert code == EXIT_BAD_INPUT
    assert (f"{notes}: not a Codex session file: no session_meta line and no assistant reply"
            " in 2 lines") in err
    assert f"{good}:" in out.decode()  # the batch went on


def test_ingest_of_a_file_with_lines_that_are_not_json_is_done_with_problems(env, tmp_path):
    good = next((CORPUS / "codex_home" / "sessions").rglob("rollout-*.jsonl"))
    damaged = tmp_path / "rollout-damaged.jsonl"
    damaged.write_bytes(good.read_bytes() + b'{"type": "response_item", "payload": {"role": "assistant"\n')
    code, out, err = run(["ingest", str(damaged)], env)
    assert code == EXIT_BAD_INPUT and "not JSON" in err and b"recorded" in out


def test_ingest_progress_is_quiet_at_first_then_rate_limited():
    from memcite.cli.ledger_commands import IngestProgress
    from memcite.ledger.ingest import RolloutScan

    clock = [100.0]
    stream = io.StringIO()
    progress = IngestProgress(interval=1.0, stream=stream, clock=lambda: clock[0])
    scan = RolloutScan("/nonexistent/rollout.jsonl", lines=4096, replies=3, offset=2_000_000)
    progress(scan)
    clock[0] += 0.5
    progress(scan)
    assert stream.getvalue() == ""  # short ingests say nothing
    clock[0] += 0.6
    progress(scan)
    clock[0] += 0.2
    progress(scan)
    lines = stream.getvalue().splitlines()
    assert lines == ["memcite: ingest /nonexistent/rollout.jsonl: 2 MB, 4096 lines, 3 replies, 1 s"]


def test_ingest_calls_progress_while_reading(tmp_path, monkeypatch):
    from memcite.ledger import ingest

    good = next((CORPUS / "codex_home" / "sessions").rglob("rollout-*.jsonl"))
    monkeypatch.setattr(ingest, "PROGRESS_EVERY_LINES", 2)
    seen = []
    list(ingest.iter_rollout_replies(good, progress=lambda scan: seen.append(
        (scan.lines, scan.offset))))
    lines = len(good.read_bytes().splitlines())
    assert [n for n, _ in seen] == list(range(2, lines + 1, 2))
    assert all(0 < offset <= good.stat().st_size for _, offset in seen)


def test_ingest_progress_option_prints_to_stderr(env, monkeypatch, tmp_path):
    from memcite.cli import ledger_commands
    from memcite.ledger import ingest

    good = next((CORPUS / "codex_home" / "sessions").rglob("rollout-*.jsonl"))
    monkeypatch.setattr(ingest, "PROGRESS_EVERY_LINES", 1)
    monkeypatch.setattr(ledger_commands, "IngestProgress", _EveryCall)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = runner.invoke(app, ["ingest", "--progress", str(good)])
    assert result.exit_code == 0, result.output
    assert "progress " in result.stderr
    quiet = runner.invoke(app, ["ingest", "--no-progress", str(good)])
    assert "progress " not in quiet.stderr


class _EveryCall:
    def __call__(self, scan):
        sys.stderr.write(f"progress {scan.lines}\n")

    def done(self):
        pass


# --------------------------------------------------------------------------- help


def test_help_shows_the_choices_and_whole_summaries():
    for command, choices in [("parse", "[codex|strict]"), ("strip", "[strict|replace]"),
                             ("record", "[default|codex]"), ("ingest", "[codex|strict]"),
                             ("instructions", "[memcite|codex]"), ("stats", "[memcite|codex]"),
                             ("truncate", "[o200k_base|cl100k_base|approx]")]:
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0
        assert choices in result.stdout, command
        assert "<str>" not in result.stdout.split("Options:")[1], command
    top = runner.invoke(app, ["--help"]).stdout
    flat = " ".join(top.split())
    assert "..." not in top.split("Start here:")[1] and "-V, --version" in top
    for name, command in get_command(app).commands.items():
        summary = " ".join(command.help.split("\n\n")[0].split())
        assert f"{name} {summary}" in flat, name


# --------------------------------------------------------------------------- demo --keep


def test_demo_keep_prints_exports_and_runnable_step_headers(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "demo"
    monkeypatch.chdir(tmp_path)
    assert demo_command("demo", now=NOW) == 0  # relative: printed as an absolute path
    out = capsys.readouterr().out
    exports = re.search(r"^  export (.+)$", out, re.MULTILINE).group(1)
    values = dict(item.split("=", 1) for item in shlex.split(exports))
    assert values == {"CODEX_HOME": str(folder / "codex_home"),
                      "MEMCITE_DB": str(folder / "memcite.sqlite"),
                      "MEMCITE_CACHE_DIR": str(folder / "cache"),
                      "MEMCITE_HOME": str(folder)}
    headers = re.findall(r"^== \d\. (memcite .+)$", out, re.MULTILINE)
    assert [h.split()[1] for h in headers] == ["sync", "instructions", "record", "hook", "ingest",
                                               "stats", "prune"]
    isolated = {"HOME": str(tmp_path / "home"), "MEMCITE_DB": "", "CODEX_HOME": "",
                "MEMCITE_CACHE_DIR": str(folder / "cache"), "MEMCITE_HOME": str(tmp_path / "data")}
    for header in headers:
        args = shlex.split(header)[1:]
        stdin = b""
        if "<" in args:  # the hook's payload, on stdin as Codex gives it
            stdin = Path(args[args.index("<") + 1]).read_bytes()
            args = args[:args.index("<")]
        code, printed, err = run(args, isolated, stdin=stdin)
        assert code == 0, (header, err)
        if " stats " in header:  # the same report as the demo printed
            section = out.split(header + "\n", 1)[1].split("\n== ", 1)[0]
            # but for what to run next: run with --db and --codex-home, stats repeats them
            suggested = re.search(r"^next: (.+)$", printed.decode(), re.MULTILINE).group(1)
            assert suggested.startswith("memcite prune --max-unused-days 30 --db ")
            assert "next: memcite prune --max-unused-days 30  (" in section
            assert re.sub(r"\d+ file\(s\) read|next: .*", "", printed.decode()).strip() == \
                re.sub(r"\d+ file\(s\) read|next: .*", "", section).strip()
    hook_run = json.loads((tmp_path / "data" / "logs" / "hooks.log").read_text().splitlines()[-1])
    assert (hook_run["status"], hook_run["recorded"]) == ("ok", 0)  # read already, by the demo
    code, printed, _ = run(["stats"], {"HOME": str(tmp_path / "home"), **values})
    assert code == 0 and b"Dead memories" in printed  # the export line is enough


@pytest.mark.parametrize("keep", ["a-file", "a-file/below"], ids=["file", "below a file"])
def test_demo_keep_that_cannot_be_a_folder_is_a_clean_error(keep, tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("mine")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["demo", "--keep", keep], cwd=tmp_path)
    assert code == EXIT_BAD_INPUT and out == b""
    assert err.startswith(f"memcite: error: --keep {keep}: ") and "Traceback" not in err


# --------------------------------------------------------------------------- the weekly chart


def _recorded_weeks(env, weeks: int):
    """Sync the home, then record one reply per week for ``weeks`` weeks before NOW (stats
    refuses to judge a home never synced)."""
    from memcite.ledger.recording import ReplyInput, record_reply
    from memcite.ledger.store import open_store
    from memcite.ledger.sync import sync_codex_home

    conn = open_store(env["MEMCITE_DB"])
    try:
        sync_codex_home(conn, env["CODEX_HOME"], now=NOW)
        for week in range(weeks):
            text = (f"r{week}\n\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:1-1|note=[x]\n"
                    f"</citation_entries>\n<rollout_ids>\n{BUILDER.thread_id(0)}\n"
                    "</rollout_ids>\n</oai-mem-citation>")
            record_reply(conn, ReplyInput(text, at=NOW - week * 7 * DAY), now=NOW)
    finally:
        conn.close()


def test_the_chart_says_when_it_is_cut_and_json_has_every_week(env):
    _recorded_weeks(env, 30)
    code, out, _ = run(["stats", "--as-of", str(NOW)], env)
    text = out.decode()
    assert code == 0 and "(the last 26 of 30 weeks; --since shows more" in text
    code, out, _ = run(["stats", "--as-of", str(NOW), "--json"], env)
    weeks = json.loads(out)["weeks"]
    assert len(weeks) == 30 and all(w["citations"] == 1 for w in weeks)
    assert all(w["week_start_epoch"] % DAY == 0 for w in weeks)
    code, out, _ = run(["stats", "--as-of", str(NOW), "--since", str(NOW - 29 * 7 * DAY)], env)
    assert "the last" not in out.decode()  # the range asked for, whole
    assert len(re.findall(r"^ \d{4}-\d\d-\d\d +1 ", out.decode(), re.MULTILINE)) == 30


def test_nothing_after_as_of_counts_in_the_weeks(env):
    _recorded_weeks(env, 6)
    as_of = NOW - 3 * 7 * DAY
    code, out, _ = run(["stats", "--as-of", str(as_of), "--json"], env)
    weeks = json.loads(out)["weeks"]
    assert sum(w["citations"] for w in weeks) == 3  # weeks 5, 4, 3 before NOW
    assert weeks[-1]["week_start_epoch"] <= as_of < weeks[-1]["week_start_epoch"] + 7 * DAY


def test_the_chart_falls_back_to_ascii(env):
    _recorded_weeks(env, 2)
    code, out, err = run(["stats", "--as-of", str(NOW)], {**env, "PYTHONIOENCODING": "ascii"})
    assert code == 0, err
    assert b"#" in out.split(b"Citations per week")[1]


# --------------------------------------------------------------------------- instructions


def test_instructions_json_lists_the_warnings_it_printed(tmp_path):
    code, out, err = run(["instructions", "--json", "--memory-root", str(tmp_path / "none"),
                          "--no-cache"], {"CODEX_HOME": str(tmp_path)})
    assert code == 0
    printed = [line.removeprefix("memcite: warning: ") for line in err.splitlines()]
    assert json.loads(out)["warnings"] == printed and printed


def test_instructions_budget_0_says_the_budget_is_0(env):
    code, out, err = run(["instructions", "--budget", "0", "--explain", "--tokenizer", "approx",
                          "--no-cache"], env)
    assert code == 0
    assert "nothing to inject: the budget is 0 tokens" in out.decode()
    assert "no summary" not in out.decode()


# --------------------------------------------------------------------------- usage errors


def _synthetic(prefix: str, length: int, seed: int) -> str:
    """A key-shaped value put together at run time (no literal token in the repository)."""
    import random

    rng = random.Random(seed)
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
    return prefix + "".join(rng.choice(alphabet) for _ in range(length))


@pytest.mark.parametrize("paths", BOTH_PATHS)
@pytest.mark.parametrize("shape", ["pem-as-option", "key-as-command", "key-as-option"])
def test_a_usage_error_never_echoes_a_secret(shape, paths, tmp_path):
    # click quotes what it could not read: a PEM block starts with -----, which it takes for
    # an option ("No such option: -----BEGIN ..."); a key where a command name should be.
    body = _synthetic("MIIEpAIBAAKCAQEA", 48, 1)
    token = _synthetic("ghp_", 36, 2)
    args = {
        "pem-as-option": ["note", "save", "-----BEGIN RSA PRIVATE KEY-----\n" + body
                          + "\n-----END RSA PRIVATE KEY-----", "--yes"],
        "key-as-command": [token],
        "key-as-option": ["stats", "--" + token],
    }[shape]
    code, out, err = run(args, {"MEMCITE_DB": str(tmp_path / "memcite.sqlite"),
                                "CODEX_HOME": str(tmp_path), "MEMCITE_HOME": "", **paths})
    assert code == EXIT_BAD_INPUT
    assert "Usage: memcite" in err and "Error:" in err
    assert "[REDACTED:" in err
    for secret in (body[16:], token[4:]):
        assert secret[:12] not in err and secret[-12:] not in err
    assert out == b""


@pytest.mark.parametrize("args", [
    ["stats", "--json", "--codex-home", "{tmp}/none"],
    ["search", "--json", ""],
    ["stats", "--json", "--no-such-option"],
])
def test_with_json_an_error_is_one_json_object_on_stderr(args, tmp_path):
    """Issue 40: with --json, errors were plain text."""
    env = {**os.environ, "HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / "none")}
    done = subprocess.run([sys.executable, "-m", "memcite", *[a.format(tmp=tmp_path) for a in args]],
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == "", done
    error = json.loads(done.stderr)
    assert set(error) == {"error", "hint", "exit_code"} and error["exit_code"] == 2
    plain = subprocess.run([sys.executable, "-m", "memcite",
                            *[a.format(tmp=tmp_path) for a in args if a != "--json"]],
                           capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert plain.returncode == 2 and not plain.stderr.startswith("{")
