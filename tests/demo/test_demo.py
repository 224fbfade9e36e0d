"""`memcite demo`: the whole loop on the sample home, printing each step, leaving nothing behind."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys

import pytest

from memcite.cli.demo import demo_command
from memcite.demo.loop import DemoError, find_corpus, load_sample_builder, run_demo, sample_replies
from memcite.ledger.hook_log import read_entries

NOW = 1_800_000_000


def _listing(folder) -> set[str]:
    return {os.path.join(base, name) for base, dirs, files in os.walk(folder)
            for name in dirs + files}


def test_run_demo_prints_every_step_and_finds_the_broken_citations(tmp_path):
    out = io.StringIO()
    report = run_demo(str(tmp_path), now=NOW, out=out)
    text = out.getvalue()
    for step in ("== 1.", "== 2. memcite sync", "== 3. memcite instructions",
                 "== 4. memcite record", "== 5. memcite hook stop", "== 6. memcite ingest",
                 "== 7. memcite stats", "== 8. memcite prune", "== 9. memcite audit"):
        assert step in text
    outcomes = report["citation_checks"]["outcomes"]
    for outcome in ("outside_root", "missing", "out_of_range", "blank", "changed"):
        assert outcomes[outcome]["entries"] >= 1, outcome
    assert outcomes["ok"]["entries"] >= 5
    assert report["memories"] == 36 and report["dead"]
    assert {u["thread_id"] for u in report["unknown_ids"]} >= {
        "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee"}
    assert report["not_uuid_ids"] == [{"rollout_id": "not-a-uuid", "citations": 1}]
    assert {"codex_home", "memcite.sqlite"} <= set(os.listdir(tmp_path))
    assert os.environ.get("MEMCITE_CACHE_DIR", "") != str(tmp_path / "cache")  # restored
    assert os.environ.get("MEMCITE_HOME", "") != str(tmp_path)


def test_demo_command_leaves_nothing_outside_its_temporary_folder(tmp_path):
    tmp = tmp_path / "tmp"
    home = tmp_path / "home"
    tmp.mkdir()
    home.mkdir()
    corpus = find_corpus()
    corpus_before = _listing(corpus)
    env = {**os.environ, "TMPDIR": str(tmp), "HOME": str(home),
           "XDG_CACHE_HOME": str(home / ".cache"), "XDG_DATA_HOME": str(home / ".local"),
           "XDG_CONFIG_HOME": str(home / ".config"), "PYTHONDONTWRITEBYTECODE": "1"}
    for key in ("MEMCITE_DB", "MEMCITE_HOME", "MEMCITE_CACHE_DIR", "CODEX_HOME"):
        env.pop(key, None)
    done = subprocess.run([sys.executable, "-m", "memcite", "demo"], capture_output=True,
                          env=env, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    out = done.stdout.decode()
    assert "Dead memories" in out and "Counts:" in out and "memcite stats --full" in out
    assert "the temporary folder was removed" in out
    journey = out.split("the temporary folder was removed", 1)[1]
    for step in ("memcite demo --keep", "cd ~/memcite-demo/projects/infra", "memcite thread --last",
                 "memcite consolidation", "memcite report", "memcite setup codex"):
        assert step in journey, step
    assert os.listdir(tmp) == []
    assert os.listdir(home) == []
    assert _listing(corpus) == corpus_before
    assert sorted(os.listdir(tmp_path)) == ["home", "tmp"]


def test_demo_keep_refuses_a_folder_that_is_not_empty(tmp_path, capsys):
    (tmp_path / "x").write_text("mine")
    assert demo_command(str(tmp_path), now=NOW) == 2
    assert "not empty" in capsys.readouterr().err
    assert os.listdir(tmp_path) == ["x"]


def test_missing_corpus_is_a_clear_error(monkeypatch, tmp_path):
    import memcite.demo.loop as demo

    monkeypatch.setattr(demo, "__file__", str(tmp_path / "a" / "b" / "demo.py"))
    with pytest.raises(DemoError, match="MEMCITE_CORPUS"):
        find_corpus({})


def test_the_demo_codex_count_is_what_codex_deletes_at_start_up(tmp_path):
    out = io.StringIO()
    run_demo(str(tmp_path), now=NOW, out=out)
    text = out.getvalue()
    assert "Dead memories" in text and "Counts:" in text  # stats printed to ``out``
    found = re.search(r"(\d+) by --rule codex \(what Codex itself deletes at start-up\)", text)
    codex_db = sqlite3.connect(tmp_path / "codex_home" / "memories_1.sqlite")
    deleted = codex_db.execute(
        "SELECT count(*) FROM (SELECT thread_id FROM stage1_outputs WHERE selected_for_phase2 = 0"
        " AND COALESCE(last_usage, source_updated_at) < ? LIMIT 200)",
        (NOW - 30 * 86_400,)).fetchone()[0]
    codex_db.close()
    assert found and int(found.group(1)) == deleted


# --------------------------------------------------------------------------- the hook and ingest steps


def _demo(tmp_path):
    out = io.StringIO()
    report = run_demo(str(tmp_path), now=NOW, out=out)
    return out.getvalue(), report


def _step(text: str, number: int) -> str:
    return text.split(f"== {number}. ", 1)[1].split("\n== ", 1)[0]


def _replies_by_origin(tmp_path, prefix: str) -> list[tuple[str, int, list[str]]]:
    """(origin, counted ids, cited thread ids) of each reply whose origin starts with ``prefix``."""
    db = sqlite3.connect(tmp_path / "memcite.sqlite")
    try:
        rows = db.execute("SELECT id, origin FROM replies WHERE origin LIKE ? ORDER BY id",
                          (prefix + "%",)).fetchall()
        return [(origin,
                 db.execute("SELECT coalesce(sum(counted), 0) FROM cited_ids WHERE reply_id = ?",
                            (rid,)).fetchone()[0],
                 [t for (t,) in db.execute("SELECT thread_id FROM cited_ids WHERE reply_id = ?"
                                           " ORDER BY position", (rid,))])
                for rid, origin in rows]
    finally:
        db.close()


def test_the_hook_step_records_the_live_session_as_codex_s_stop_hook_would(tmp_path):
    builder = load_sample_builder()
    text, _ = _demo(tmp_path)
    live = builder.sample_sessions(NOW)[-1]
    transcript = tmp_path / "codex_home" / live["path"]
    step = _step(text, 5)
    header = step.split("\n", 1)[0]
    assert header == (f"memcite hook stop --db {tmp_path / 'memcite.sqlite'} < "
                      f"{tmp_path / 'stop_payload.json'}")
    payload = json.loads((tmp_path / "stop_payload.json").read_text())
    assert set(payload) == {"cwd", "hook_event_name", "last_assistant_message", "model",
                            "permission_mode", "session_id", "stop_hook_active",
                            "transcript_path", "turn_id"}
    assert payload["hook_event_name"] == "Stop" and payload["transcript_path"] == str(transcript)
    assert "<oai-mem-citation>" not in payload["last_assistant_message"]
    assert "<oai-mem-citation>" in live["turns"][-1]["reply"]  # the file has what the payload lost
    hooked = _replies_by_origin(tmp_path, "hook:")
    assert [origin for origin, _, _ in hooked] == [f"hook:{transcript}"] * len(live["turns"])
    assert [threads for _, _, threads in hooked] == [t["threads"] for t in live["turns"]]
    # What the step printed is what the database holds, and what the hook's log says.
    read, recorded, counted = map(int, re.search(
        r"(\d+) replies read, (\d+) recorded, (\d+) citations counted", step).groups())
    assert (read, recorded, counted) == (len(hooked), len(hooked), sum(c for _, c, _ in hooked))
    # the hook's own line (the quarantine's look it started may log a line of its own after it)
    entry = [e for e in read_entries(tmp_path / "logs" / "hooks.log", 5)
             if e.get("event") != "quarantine"][-1]
    assert entry["status"] == "ok" and entry["session_id"] == live["id"]
    assert "waited_for_reply" not in entry  # the payload's reply was found in the file at once


def test_the_ingest_step_reads_the_other_sessions_and_counts_nothing_twice(tmp_path):
    builder = load_sample_builder()
    text, report = _demo(tmp_path)
    sessions = builder.sample_sessions(NOW)
    step = _step(text, 6)
    files, read, recorded, counted, unchanged = map(int, re.search(
        r"(\d+) session files: (\d+) read \((\d+) replies recorded, (\d+) citations counted\), "
        r"(\d+) unchanged \(the hook's", step).groups())
    ingested = _replies_by_origin(tmp_path, "ingest:")
    story = 1 if hasattr(builder, "write_provenance_story") else 0  # its archived session
    assert (files, read, unchanged) == (len(sessions) + story, len(sessions) - 1 + story, 1)
    assert (recorded, counted) == (len(ingested), sum(c for _, c, _ in ingested))
    expected = [t["threads"] for s in sessions[:-1] for t in s["turns"]]
    assert [threads for _, _, threads in ingested] == expected
    assert any(expected) and not all(expected)  # turns that cite, and one that cites nothing
    # The stats step counts the hook's and ingest's replies with the recorded ones.
    hooked = _replies_by_origin(tmp_path, "hook:")
    recorded_step = int(re.search(r"(\d+) replies recorded", _step(text, 4)).group(1))
    assert report["totals"]["replies"] == recorded_step + len(hooked) + len(ingested)


def test_the_demo_leaves_the_alarm_handler_it_found(tmp_path):
    if not hasattr(signal, "SIGALRM"):
        pytest.skip("no SIGALRM here")

    def mine(signum, frame):  # pragma: no cover - never fired
        pass

    previous = signal.signal(signal.SIGALRM, mine)
    try:
        _demo(tmp_path)
        assert signal.getsignal(signal.SIGALRM) is mine
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_a_corpus_from_before_the_sample_sessions_still_runs(tmp_path, monkeypatch):
    import types

    import memcite.demo.loop as demo

    real = load_sample_builder()
    old = types.SimpleNamespace(
        build_codex_home=lambda target, *, now=None: real.build_codex_home(target, now=now),
        sample_rows=real.sample_rows, thread_id=real.thread_id)  # no sample_sessions
    monkeypatch.setattr(demo, "load_sample_builder", lambda corpus=None: old)
    text, report = _demo(tmp_path)
    assert "(skipped: this corpus's sample home has no session files)" in _step(text, 5)
    assert _step(text, 6).startswith(f"memcite ingest --db {tmp_path / 'memcite.sqlite'}")
    assert "0 session files: 0 read" in _step(text, 6)
    assert report["memories"] == 36 and not (tmp_path / "codex_home" / "sessions").exists()


def test_the_plain_demo_is_short_and_ends_with_the_journey_and_setup(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert demo_command(now=NOW) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) <= 110  # was about 200, most of them the full stats
    tail = out.split("\ndone (", 1)[1]
    assert "memcite demo --keep" in tail and tail.rstrip().splitlines()[-1].startswith(
        "then, with your own Codex: memcite setup codex")
    for command in ("memcite thread --last", "memcite consolidation", "memcite report"):
        assert command in tail


def test_the_kept_demo_ends_with_the_journey_and_setup(tmp_path, capsys):
    assert demo_command(str(tmp_path / "kept"), now=NOW) == 0
    tail = capsys.readouterr().out.split("\ndone (kept in", 1)[1]
    assert f"cd {tmp_path / 'kept' / 'projects' / 'infra'}" in tail
    assert "memcite setup codex" in tail.rstrip().splitlines()[-1]


def test_demo_help_names_every_step():
    from typer.testing import CliRunner

    from memcite.cli.app import app

    text = " ".join(CliRunner().invoke(app, ["demo", "--help"]).stdout.split())
    for step in ("sync", "instructions", "record", "hook stop", "ingest", "stats", "prune"):
        assert step in text, step


# The section each citation of the demo's replies and sample sessions means (its note).
CITED_SECTIONS = {"how to run the tests": "## Testing", "pytest": "## Testing",
                  "how tests are laid out": "## Testing", "WAL and busy timeout": "## SQLite",
                  "transactions": "## SQLite", "fast path": "## Command line",
                  "report format": "## Format", "compose port": "## Local development",
                  "release checklist and migration names": "## Releases",
                  "flaky tests are retried once": "## CI", "liveness probe settings": "## Kubernetes"}


def test_the_demo_s_citations_name_the_lines_of_their_sections():
    """MEMORY.md's line numbers, as the replies and sessions cite them: each range lies in the
    section its note names, on its heading and knowledge lines (never its source list)."""
    from memcite.citations.reading import parse_reply

    corpus = find_corpus()
    builder = load_sample_builder(corpus)
    with open(os.path.join(corpus, "codex_home", "memories", "MEMORY.md"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    texts = [r.text for r in sample_replies(builder.thread_id, corpus)]
    texts += [t["reply"] for s in builder.sample_sessions(NOW) for t in s["turns"]]
    seen = set()
    for text in texts:
        citation = parse_reply(text).citation
        for entry in citation.entries if citation else ():
            if entry.path != "MEMORY.md" or entry.note not in CITED_SECTIONS:
                continue
            seen.add(entry.note)
            cited = lines[entry.line_start - 1:entry.line_end]
            heading = next(line for line in reversed(lines[:entry.line_end])
                           if line.startswith("## "))
            assert heading == CITED_SECTIONS[entry.note], (entry.note, heading)
            assert all(line.strip() and not line.startswith(("###", "- rollout_summaries/"))
                       for line in cited), (entry.note, cited)
    assert seen == set(CITED_SECTIONS)
