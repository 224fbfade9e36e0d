"""The programs ``conformance check`` runs: one that hangs on every reply is reported within
seconds (the run stops after a few time-outs in a row, saying why), and what a program leaves
behind in a session of its own (``setsid``) does not outlive the run (Linux: a subreaper)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.conformance.check import MAX_CONSECUTIVE_TIMEOUTS
from memcite.conformance.corpus import load_cases
from memcite.conformance.runner import run_program
from memcite.contracts.generate import models

TOYS = str(Path(__file__).resolve().parents[1] / "conformance_toys.py")


def toy(mode: str) -> list[str]:
    return [sys.executable, TOYS, mode]


def test_a_reader_that_hangs_on_every_reply_is_reported_within_seconds():
    cases = [c for c in load_cases(None) if c["kind"] == "reply"]
    started = time.monotonic()
    result = CliRunner().invoke(app, ["conformance", "check", "--json", "--timeout", "0.5", "--",
                                      *toy("hang")])
    took = time.monotonic() - started
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    models()["conformance-check"].model_validate(report)
    assert report["stopped"] == "timeouts"
    assert report["cases"] == report["failed"] == MAX_CONSECUTIVE_TIMEOUTS
    assert report["not_run"] == len(cases) - MAX_CONSECUTIVE_TIMEOUTS
    assert took < 60  # 174 cases x 0.5 s would be 87 s; x 10 s (the default) 29 minutes


def test_the_text_report_says_why_it_stopped():
    result = CliRunner().invoke(app, ["conformance", "check", "--timeout", "0.3", "--",
                                      *toy("hang")])
    assert result.exit_code == 1
    assert f"timed out on {MAX_CONSECUTIVE_TIMEOUTS} cases in a row" in result.stdout
    assert "cases not run" in result.stdout


def test_time_outs_that_are_not_in_a_row_do_not_stop_the_run(tmp_path):
    """HANG-ME cases between answered ones: every case runs."""
    cases = [c for c in load_cases(None) if c["kind"] == "reply"][:4]
    for case in cases[::2]:
        case["reply"] += " HANG-ME"
    corpus = tmp_path / "cases.jsonl"
    corpus.write_text("".join(json.dumps(c) + "\n" for c in cases))
    result = CliRunner().invoke(app, ["conformance", "check", "--json", "--timeout", "4",
                                      "--corpus", str(corpus), "--", *toy("agree")])
    report = json.loads(result.stdout)
    assert report["stopped"] is None and report["not_run"] == 0 and report["cases"] == 4


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="the subreaper is Linux's; elsewhere docs/conformance.md says the limit")
def test_a_grandchild_in_a_session_of_its_own_does_not_outlive_the_run(tmp_path, monkeypatch):
    pids = tmp_path / "pids"
    monkeypatch.setenv("TOY_PID_FILE", str(pids))
    outcome, out, _err, code = run_program(toy("setsid"), b"no citation here", timeout=20)
    assert outcome == "ok" and code == 0 and json.loads(out)["visible"] == "no citation here"
    for _ in range(100):  # the grandchild writes its pid once it runs
        if pids.exists() and pids.read_text().strip():
            break
        time.sleep(0.05)
    (pid,) = [int(line) for line in pids.read_text().split()]
    assert not _alive(pid), f"{pid} outlived the run"


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="the subreaper is Linux's; elsewhere docs/conformance.md says the limit")
def test_the_run_leaves_this_process_s_own_children_alone(tmp_path, monkeypatch):
    import subprocess

    mine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        monkeypatch.setenv("TOY_PID_FILE", str(tmp_path / "pids"))
        run_program(toy("setsid"), b"x", timeout=20)
        assert mine.poll() is None and _alive(mine.pid)
    finally:
        mine.kill()
        mine.wait()
    assert os.getpid()
