"""`memcite demo`: the whole loop on the sample home, printing each step, leaving nothing behind."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from memcite.cli.demo import DemoError, demo_command, find_corpus, run_demo

NOW = 1_800_000_000


def _listing(folder) -> set[str]:
    return {os.path.join(base, name) for base, dirs, files in os.walk(folder)
            for name in dirs + files}


def test_run_demo_prints_every_step_and_finds_the_broken_citations(tmp_path):
    out = io.StringIO()
    report = run_demo(str(tmp_path), now=NOW, out=out)
    text = out.getvalue()
    for step in ("== 1.", "== 2. memcite sync", "== 3. memcite instructions",
                 "== 4. memcite record", "== 6. memcite prune"):
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
    assert "Dead memories" in out and "Citation checks" in out and "Citations per week" in out
    assert "the temporary folder was removed" in out
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
    import memcite.cli.demo as demo

    monkeypatch.setattr(demo, "__file__", str(tmp_path / "a" / "b" / "demo.py"))
    with pytest.raises(DemoError, match="MEMCITE_CORPUS"):
        find_corpus({})


def test_the_demo_codex_count_is_what_codex_deletes_at_start_up(tmp_path):
    import re
    import sqlite3

    out = io.StringIO()
    run_demo(str(tmp_path), now=NOW, out=out)
    text = out.getvalue()
    assert "Dead memories" in text and "Citation checks" in text  # stats printed to ``out``
    found = re.search(r"(\d+) by --rule codex \(what Codex itself deletes at start-up\)", text)
    codex_db = sqlite3.connect(tmp_path / "codex_home" / "memories_1.sqlite")
    deleted = codex_db.execute(
        "SELECT count(*) FROM (SELECT thread_id FROM stage1_outputs WHERE selected_for_phase2 = 0"
        " AND COALESCE(last_usage, source_updated_at) < ? LIMIT 200)",
        (NOW - 30 * 86_400,)).fetchone()[0]
    codex_db.close()
    assert found and int(found.group(1)) == deleted
