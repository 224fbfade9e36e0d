"""Issue 34, part 1: appends on an unterminated last line, JSON and TOML nested too deeply,
links out of the project, and the other inputs memcite does not control."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.errors import InputError
from memcite.ledger.hook_log import append_entry, read_entries
from memcite.notes import events
from memcite.notes.storage import locate_note
from memcite.untrusted import json_lines, loads_json, loads_toml

runner = CliRunner()
NOW = 1_800_000_000
DEEP = 100_000
DEEP_JSON = "[" * DEEP + "]" * DEEP
DEEP_OBJECT = '{"a":' * DEEP + "1" + "}" * DEEP


def git(repo, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


@pytest.fixture
def project(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "sync.py").write_text("a\n")
    git(repo, "init", "-q")
    home = tmp_path / "codex"
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("MEMCITE_HOME", str(tmp_path / "mh"))
    monkeypatch.chdir(repo)
    return repo, locate_note(str(repo), str(home))


# --------------------------------------------------------------------------- the parsers


@pytest.mark.parametrize("text", [DEEP_JSON, DEEP_OBJECT, '{"a": ' + DEEP_JSON + "}"])
def test_deep_json_is_a_value_error(text):
    with pytest.raises(ValueError, match="nested too deeply"):
        loads_json(text)
    with pytest.raises(ValueError, match="nested too deeply"):
        loads_json(text.encode())


@pytest.mark.parametrize("text", ["a = " + "[" * 5000 + "]" * 5000,
                                  "a = " + "{b = " * 5000 + "1" + "}" * 5000])
def test_deep_toml_is_a_value_error(text):
    import tomllib

    with pytest.raises(tomllib.TOMLDecodeError, match="nested too deeply"):
        loads_toml(text)


def test_json_lines_reports_each_bad_line_and_keeps_the_others():
    data = b'{"a": 1}\n\n' + DEEP_JSON.encode() + b'\nnope\n\xff\n[2]'
    assert list(json_lines(data)) == [
        (1, {"a": 1}, None), (3, None, "nested too deeply"),
        (4, None, "not JSON (Expecting value: line 1 column 1 (char 0))"), (5, None, "not UTF-8"),
        (6, [2], None)]
    assert [n for n, _v, _w in json_lines("x\ny", first=10)] == [10, 11]


# --------------------------------------------------------------------------- the event log


def test_an_event_appended_after_an_unterminated_line_is_on_its_own(project):
    repo, location = project
    first = events.add_event(location, kind="note", text="first", now=NOW).event
    path = events.events_path(location)
    with open(path, "ab") as handle:
        handle.write(b'{"hand": "edit, no newline"}')
    result = runner.invoke(app, ["event", "add", "--kind", "note", "second", "--json"])
    assert result.exit_code == 0, result.output
    second = json.loads(result.output)["event"]["id"]
    assert [e.id for e in events.read_events(location)] == [first.id, second]
    listed = json.loads(runner.invoke(app, ["event", "list", "--json"]).output)
    assert [e["id"] for e in listed["events"]] == [first.id, second]
    assert open(path, "rb").read().endswith(b'no newline"}\n' + open(path, "rb").read()
                                            .split(b"\n")[-2] + b"\n")


def test_the_read_back_checks_the_event_itself(project, monkeypatch):
    repo, location = project
    events.add_event(location, kind="note", text="first", now=NOW)
    from memcite.notes.refusals import NoteRefusal
    from memcite.readpath import event_log

    monkeypatch.setattr(event_log, "event_of_line", lambda line: None)
    with pytest.raises(NoteRefusal, match="reading the event back"):
        events.add_event(location, kind="note", text="second", now=NOW)


def test_a_deep_line_in_the_event_log_is_skipped_like_any_bad_line(project):
    repo, location = project
    events.add_event(location, kind="issue", text="flaky sync", now=NOW)
    with open(events.events_path(location), "ab") as handle:
        handle.write(DEEP_JSON.encode() + b"\n")
    listed = runner.invoke(app, ["event", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.output)["count"] == 1
    added = runner.invoke(app, ["event", "add", "--kind", "note", "still works", "--json"])
    assert added.exit_code == 0, added.output
    shown = runner.invoke(app, ["event", "show", json.loads(added.output)["event"]["id"]])
    assert shown.exit_code == 0 and "still works" in shown.output
    recalled = runner.invoke(app, ["note", "recall", "--json"])
    assert recalled.exit_code == 0, recalled.output
    assert json.loads(recalled.output)["events"]["open_issues"][0]["text"] == "flaky sync"


def test_a_hook_log_entry_after_an_unterminated_line_is_read(tmp_path):
    log = tmp_path / "hooks.log"
    log.write_bytes(b'{"n": 0}\n{"cut": "mid-wri')
    append_entry(log, {"n": 1})
    with log.open("ab") as handle:
        handle.write(b"[" * 10_000 + b"]" * 10_000 + b"\n")
    append_entry(log, {"n": 2})
    assert [entry.get("n") for entry in read_entries(log, 10)] == [0, 1, 2]


# --------------------------------------------------------------------------- event add --file


def test_event_add_refuses_a_link_inside_the_project_leading_out(project, tmp_path):
    repo, location = project
    outside = tmp_path / "secret.txt"
    outside.write_text("x\n")
    os.symlink(outside, repo / "src" / "out.py")
    os.symlink(tmp_path, repo / "up")
    for name in ("src/out.py", "up/secret.txt", "up/not-there.py"):
        with pytest.raises(InputError, match="outside the project"):
            events.project_file(location, name)
    result = runner.invoke(app, ["event", "add", "--kind", "note", "x", "--file", "src/out.py"])
    assert result.exit_code == 2 and "outside the project" in result.output
    os.symlink(repo / "src" / "sync.py", repo / "inside.py")
    assert events.project_file(location, "inside.py") == "inside.py"
    assert events.project_file(location, "src/new.py") == "src/new.py"
