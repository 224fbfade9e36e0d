"""What memcite shows: one display step (secrets masked, terminal control characters escaped)
for every command's output, the stored bytes left as they are (memcite.display)."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcite.__main__ import main
from memcite.display import DisplayStream, escape_controls, shown, styled

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
# ESC sequences that set the window title and recolour, BEL, a C1 CSI, DEL, the bidi
# override and an isolate: what a hostile file name or log line can carry.
HOSTILE = "t\x1b]0;owned\x07i\x1b[31mred\x9b2J\x7f\u202egnp.exe\u2066x\u2069"
RAW = ("\x1b", "\x07", "\x9b", "\x7f", "\u202e", "\u2066", "\u2069")


def assert_clean(text: str) -> None:
    assert not [c for c in RAW if c in text], repr(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("plain words, tab\tand\nnewline", "plain words, tab\tand\nnewline"),
    ("\x1b[31m", "\\x1b[31m"),
    ("bell\x07", "bell\\x07"),
    ("cr\roverwrite", "cr\\x0doverwrite"),
    ("del\x7f", "del\\u007f"),
    ("c1 \x9b and \x85", "c1 \\u009b and \\u0085"),
    ("\u202a\u202b\u202c\u202d\u202e", "\\u202a\\u202b\\u202c\\u202d\\u202e"),
    ("\u2066\u2067\u2068\u2069", "\\u2066\\u2067\\u2068\\u2069"),
    ("caf\u00e9 \u00a0nbsp \u200bzwsp", "caf\u00e9 \u00a0nbsp \u200bzwsp"),  # not controls
])
def test_escape_table(text, expected):
    assert escape_controls(text) == expected


@given(st.text())
def test_escaped_text_holds_no_control_and_escaping_twice_changes_nothing(text):
    once = escape_controls(text)
    assert_clean(once)
    assert all(c in "\t\n" or ord(c) >= 0x20 for c in once)
    assert escape_controls(once) == once


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)))
def test_a_json_output_through_the_stream_reads_back_the_same(value):
    """--json goes through the same stream: each escape is JSON's own, so nothing changes."""
    out = io.StringIO()
    DisplayStream(out).write(json.dumps(value, ensure_ascii=False))
    assert_clean(out.getvalue())
    assert json.loads(out.getvalue()) == value


def test_shown_masks_then_escapes():
    assert shown(f"token {TOKEN}\x1b[2J") == "token [REDACTED:github-token]\\x1b[2J"


def test_styled_is_the_terminal_under_the_stream():
    out = io.StringIO()
    stream = DisplayStream(out)
    assert styled(stream) is out and styled(out) is out
    styled(stream).write("\r\x1b[K")
    stream.write("\x1b")
    assert out.getvalue() == "\r\x1b[K\\x1b"


def run(args: list[str], capsys) -> tuple[int, str, str]:
    """memcite's own entry point (the streams it installs), as the command line runs it."""
    with pytest.raises(SystemExit) as done:
        main(args)
    out, err = capsys.readouterr()
    assert sys.stdout is not None and not isinstance(sys.stdout, DisplayStream)
    return done.value.code, out, err


# --------------------------------------------------------------------------- the commands


@pytest.fixture
def project(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    home = tmp_path / "codex"
    (home / "memories").mkdir(parents=True)
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("MEMCITE_HOME", str(tmp_path / "mh"))
    monkeypatch.setenv("MEMCITE_DB", str(tmp_path / "ledger.sqlite"))
    monkeypatch.chdir(repo)
    return repo, home


def test_event_text_and_file_names_are_escaped_and_stored_as_given(project, capsys):
    repo, home = project
    name = "src/a\x1b[8mb.py"
    (repo / "src").mkdir()
    (repo / name).write_text("x\n")
    code, out, err = run(["event", "add", "--kind", "failure", "--file", name, "--yes",
                          f"it broke {HOSTILE}"], capsys)
    assert code == 0, err
    assert_clean(out + err)
    assert "\\x1b]0;owned\\x07" in out
    log = next((home / "memory").rglob("events.jsonl")).read_text(encoding="utf-8")
    assert HOSTILE in json.loads(log.splitlines()[-1])["text"]  # stored bytes unchanged
    event_id = json.loads(log.splitlines()[-1])["id"]
    for args in (["event", "list"], ["event", "show", event_id], ["note", "recall"]):
        code, out, err = run(args, capsys)
        assert code == 0, (args, err)
        assert_clean(out + err)
        assert "\\u202egnp.exe" in out, args
        assert "a\\x1b[8mb.py" in out, args
    code, out, err = run(["event", "list", "--json"], capsys)
    (event,) = json.loads(out)["events"]
    assert event["text"].endswith(HOSTILE) and event["files"] == [name]


def test_a_note_and_memory_lines_in_search_and_recall(project, capsys):
    repo, home = project
    (home / "memories" / "MEMORY.md").write_text(f"# Memory\n\n- sqlite {HOSTILE}\n")
    code, out, err = run(["search", "sqlite"], capsys)
    assert code == 0, err
    assert "sqlite" in out
    assert_clean(out + err)
    code, out, err = run(["search", "sqlite", "--json"], capsys)
    (hit,) = json.loads(out)["hits"]
    assert_clean(hit["text"])  # the one display step: what search shows, JSON too


def test_an_error_naming_a_hostile_path_is_escaped(project, capsys):
    code, out, err = run(["note", "import", "missing\x1b]0;x\x07.jsonl"], capsys)
    assert code == 2
    assert_clean(out + err)
    assert "missing\\x1b]0;x\\x07.jsonl" in err


def test_consolidation_job_rows_are_escaped(project, capsys):
    _, home = project
    (home / "config.toml").write_text("[features]\nmemories = true\n")
    (home / "memories" / "MEMORY.md").write_text("# Memory\n")
    conn = sqlite3.connect(home / "memories_1.sqlite")
    conn.execute("CREATE TABLE jobs (kind TEXT NOT NULL, job_key TEXT NOT NULL, status TEXT "
                 "NOT NULL, worker_id TEXT, ownership_token TEXT, started_at INTEGER, "
                 "finished_at INTEGER, lease_until INTEGER, retry_at INTEGER, "
                 "retry_remaining INTEGER NOT NULL, last_error TEXT, input_watermark INTEGER, "
                 "last_success_watermark INTEGER, PRIMARY KEY (kind, job_key))")
    conn.execute("CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY, source_updated_at "
                 "INTEGER, raw_memory TEXT, rollout_summary TEXT, rollout_slug TEXT, "
                 "generated_at INTEGER, usage_count INTEGER, last_usage INTEGER, "
                 "selected_for_phase2 INTEGER DEFAULT 0, "
                 "selected_for_phase2_source_updated_at INTEGER)")
    import time

    now = int(time.time())
    conn.execute("INSERT INTO jobs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 ("memory_consolidate_global", "global", "running", f"w{HOSTILE}", "tok",
                  now - 60, None, now + 600, None, 2, f"boom{HOSTILE}", 0, 0))
    conn.commit()
    conn.close()
    code, out, err = run(["consolidation", "--codex-home", str(home)], capsys)
    assert "\\u202egnp.exe" in out + err
    assert_clean(out + err)


def test_thread_session_metadata_is_escaped(project, capsys):
    repo, home = project
    from codex.test_thread import meta

    thread = "019c0001-0000-7000-8000-000000000001"
    folder = home / "sessions" / "2026" / "01" / "20"
    folder.mkdir(parents=True)
    data = meta(thread, f"{repo}{HOSTILE}", source=f"exec{HOSTILE}")
    payload = json.loads(data)
    payload["payload"]["cli_version"] = f"0.171{HOSTILE}"
    (folder / f"rollout-2026-01-20T10-00-00-{thread}.jsonl").write_text(
        json.dumps(payload) + "\n")
    code, out, err = run(["thread", thread, "--codex-home", str(home)], capsys)
    assert "gnp.exe" in out + err, (code, out, err)
    assert_clean(out + err)


def test_a_data_command_to_a_pipe_stays_exact(project, capsys):
    """Instructions go to Codex byte for byte when they are not shown on a terminal."""
    _, home = project
    (home / "memories" / "memory_summary.md").write_text(f"v1\n# Summary\n- {HOSTILE}\n")
    code, out, err = run(["instructions", "--codex-home", str(home)], capsys)
    assert code == 0, err
    assert f"- {HOSTILE}\n" in out


# --------------------------------------------------------------------------- the gate


def test_the_gate_masks_and_escapes_what_it_tells_the_agent():
    from memcite.codex import pre_tool_gate as gate

    found = {"approaches": [], "files": {"src/x.py": {"failures": [
        {"id": "ev-1", "time": "2026-01-01T00:00:00Z", "text": f"token {TOKEN} {HOSTILE}"}]}}}
    text, kinds = gate.feedback(found)
    assert kinds == {"failures"}
    assert TOKEN not in text and "[REDACTED:" in text
    assert_clean(text)


def test_the_gate_on_a_hand_written_log_line(project, capsys):
    from memcite.cli import gate_commands
    from memcite.notes import events
    from memcite.notes.storage import locate_note

    repo, home = project
    (repo / "src").mkdir()
    (repo / "src" / "x.py").write_text("a\n")
    location = locate_note(str(repo), str(home))
    events.add_event(location, kind="failure", text=f"broke, token {TOKEN}", files=["src/x.py"],
                     now=1_800_000_000, redact=True)
    # the index as a hand-edit of the log leaves it: the token in plain text
    for shard in (home / "memory").rglob("gate/*.json"):
        shard.write_text(shard.read_text().replace("[REDACTED:github-token]", TOKEN))
    out = io.StringIO()
    payload = {"cwd": str(repo), "tool_name": "apply_patch", "tool_input": {
        "command": "*** Begin Patch\n*** Update File: src/x.py\n@@\n-a\n+b\n*** End Patch\n"}}
    gate_commands.hook_pre_tool(codex_home=str(home),
                                stdin=io.BytesIO(json.dumps(payload).encode()), stdout=out)
    context = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert "src/x.py" in context and TOKEN not in context


def test_report_pages_mask_and_escape():
    from memcite.retention import report_html

    assert report_html._mask(f"{TOKEN}{HOSTILE}") == shown(f"{TOKEN}{HOSTILE}")
    assert_clean(report_html._mask(HOSTILE))


def test_the_process_streams_are_put_back(capsys):
    before = sys.stdout, sys.stderr
    run(["--help"], capsys)
    assert (sys.stdout, sys.stderr) == before
    assert os.environ.get("HOME")


def test_recall_json_shows_a_hand_written_entry_masked_and_escaped(project, capsys):
    from memcite.notes.storage import locate_note

    repo, home = project
    location = locate_note(str(repo), str(home))
    os.makedirs(location.project_dir, exist_ok=True)
    with open(location.note_file, "w", encoding="utf-8") as handle:
        handle.write(f"# Project memory\n\nProject: {repo}\n\n## Decisions\n\n"
                     f"- token {TOKEN} {HOSTILE}\n")
    code, out, err = run(["note", "recall", "--json"], capsys)
    assert code == 0, err
    (entry,) = json.loads(out)["entries"]
    assert TOKEN not in entry["text"] and "[REDACTED:" in entry["text"]
    assert_clean(entry["text"])
    code, out, err = run(["note", "recall"], capsys)
    assert TOKEN not in out and "[REDACTED:" in out
    assert_clean(out)
    assert HOSTILE in open(location.note_file, encoding="utf-8").read()
