"""The event log: append-only, supersession, a deterministic projection, staleness from git,
and `memcite event add|list|show`."""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.errors import InputError
from memcite.notes import events
from memcite.notes.refusals import NoteRefusal
from memcite.notes.storage import locate_note
from memcite.readpath import event_log

runner = CliRunner()
NOW = 1_800_000_000


def git(repo, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


@pytest.fixture
def project(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "sync.py").write_text("a\n")
    (repo / "src" / "other.py").write_text("a\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    home = tmp_path / "codex"
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("MEMCITE_HOME", str(tmp_path / "mh"))
    monkeypatch.chdir(repo)
    return repo, locate_note(str(repo), str(home))


def add(location, kind="failure", text="`pytest -n 8` deadlocks", files=("src/sync.py",),
        now=NOW, **kwargs):
    return events.add_event(location, kind=kind, text=text, files=list(files), now=now,
                            **kwargs).event


def test_events_are_appended_never_rewritten(project):
    repo, location = project
    first = add(location)
    path = events.events_path(location)
    before = open(path, "rb").read()
    second = add(location, kind="fix", text="fixed seed", supersedes=first.id)
    after = open(path, "rb").read()
    assert after.startswith(before) and len(after.splitlines()) == 2
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(location.project_dir).st_mode) == 0o700
    logged = events.read_events(location)
    assert [e.id for e in logged] == [first.id, second.id]
    assert logged[0].provenance == {"who": logged[0].provenance["who"], "via": "cli",
                                    "confirmed": False, "confirmation": None}
    assert events.superseded_by(logged) == {first.id: second.id}
    assert [e.id for e in events.current(logged)] == [second.id]


def test_refusals_and_bad_input(project):
    repo, location = project
    with pytest.raises(NoteRefusal) as refused:
        add(location, text="key ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    assert refused.value.reason == "secret"
    assert not os.path.exists(events.events_path(location))
    redacted = add(location, text="key ghp_abcdefghijklmnopqrstuvwxyz0123456789", redact=True)
    assert "ghp_" not in redacted.text and "[REDACTED" in redacted.text
    with pytest.raises(InputError, match="outside the project"):
        add(location, files=["../../etc/passwd"])
    with pytest.raises(InputError, match="outside the project"):
        add(location, files=["/etc/passwd"])
    with pytest.raises(InputError, match="not one of"):
        add(location, kind="oops")
    with pytest.raises(InputError, match="no event"):
        add(location, supersedes="ev-00000000")
    with pytest.raises(InputError, match="not an event id"):
        add(location, supersedes="k3f9a2")
    with pytest.raises(NoteRefusal) as asked:
        add(location, text="the password rotation broke the deploy")
    assert asked.value.reason == "needs-confirmation"
    confirmed = add(location, text="the password rotation broke the deploy", confirmed_by="--yes")
    assert confirmed.provenance["confirmed"] is True


def test_projection_is_deterministic_and_hides_superseded(project):
    repo, location = project
    issue = add(location, kind="issue", text="flaky sync", now=NOW)
    add(location, kind="decision", text="use WAL", files=(), now=NOW + 1)
    failed = add(location, now=NOW + 2)
    add(location, kind="fix", text="fixed seed", supersedes=issue.id, now=NOW + 3)
    add(location, kind="note", text="hand tuned", files=("src/other.py",), fragile=True,
        now=NOW + 4)
    logged = events.read_events(location)
    one = events.project(logged)
    assert one == events.project(events.read_events(location))
    assert events.render_projection(one) == events.render_projection(events.project(logged))
    assert one["open_issues"] == []  # the issue was superseded by its fix
    assert [d["text"] for d in one["decisions"]] == ["use WAL"]
    by_file = {f["file"]: f for f in one["files"]}
    assert [f["id"] for f in by_file["src/sync.py"]["failures"]] == [failed.id]
    assert by_file["src/other.py"]["fragile"] is True
    assert one["superseded"] == 1
    assert issue.id not in events.render_projection(one)


def test_staleness_from_git_history_and_gone_files(project):
    repo, location = project
    event = add(location, now=1_000_000_000)  # written before the next commit
    later = add(location, files=("src/other.py",), now=4_000_000_000)  # after every commit
    (repo / "src" / "sync.py").write_text("b\n")
    git(repo, "commit", "-qam", "change sync")
    stale = events.stale_events(str(repo), events.read_events(location))
    assert stale == {event.id: ["changed src/sync.py"]}
    (repo / "src" / "other.py").unlink()
    stale = events.stale_events(str(repo), events.read_events(location))
    assert stale[later.id] == ["gone src/other.py"]
    entries = [{"id": "k3f9a2", "date": "2020-01-01", "files": ["src/sync.py"]},
               {"id": "m4x8z1", "date": "2999-01-01", "files": ["src/sync.py"]}]
    assert events.stale_note_entries(str(repo), entries) == {"k3f9a2": ["changed src/sync.py"]}


def test_gate_index_is_bounded(project):
    repo, location = project
    logged = [events.Event(f"ev-{n:08d}", "2027-01-01T00:00:00Z", NOW + n, "failure",
                           f"`make x{n}` failed", ["src/sync.py"]) for n in range(500)]
    shards, approaches = events.gate_index(logged)
    (entry,) = shards.values()
    assert len(entry["src/sync.py"]["failures"]) == event_log.GATE_PER_FILE
    assert len(approaches) == event_log.GATE_APPROACHES


def test_cli_add_list_show(project):
    repo, location = project
    result = runner.invoke(app, ["event", "add", "--kind", "failure", "`make` fails",
                                 "--file", "src/sync.py", "--json"])
    assert result.exit_code == 0, result.output
    event = json.loads(result.output)["event"]
    result = runner.invoke(app, ["event", "add", "--kind", "fix", "ok now",
                                 "--supersedes", event["id"], "--yes"])
    assert result.exit_code == 0 and "supersedes" in result.output
    listed = json.loads(runner.invoke(app, ["event", "list", "--json"]).output)
    assert listed["count"] == 2 and listed["events"][0]["superseded_by"]
    only = json.loads(runner.invoke(app, ["event", "list", "--kind", "fix", "--json"]).output)
    assert [e["kind"] for e in only["events"]] == ["fix"]
    by_file = json.loads(runner.invoke(app, ["event", "list", "--file", "src/sync.py",
                                             "--json"]).output)
    assert by_file["count"] == 1
    shown = runner.invoke(app, ["event", "show", event["id"]])
    assert shown.exit_code == 0 and "superseded by" in shown.output
    assert runner.invoke(app, ["event", "show", "ev-zzzzzzzz"]).exit_code == 2
    assert runner.invoke(app, ["event", "add", "x", "--kind", "note", "--file",
                               "/etc/passwd"]).exit_code == 2
    refused = runner.invoke(app, ["event", "add", "--kind", "note",
                                  "key ghp_abcdefghijklmnopqrstuvwxyz0123456789"])
    assert refused.exit_code == 3 and "Traceback" not in refused.output


def test_recall_and_instructions_include_the_projection(project):
    repo, location = project
    add(location, kind="issue", text="flaky sync test", now=NOW)
    recalled = runner.invoke(app, ["note", "recall", "--json"])
    assert json.loads(recalled.output)["events"]["open_issues"][0]["text"] == "flaky sync test"
    assert "flaky sync test" in runner.invoke(app, ["note", "recall"]).output
    from memcite.readpath.instructions import _read_scope_notes

    (note,) = _read_scope_notes(os.environ["CODEX_HOME"], str(repo), ("project",), None)
    assert b"## Event log" in note.data and b"flaky sync test" in note.data
    assert b"Project: " + str(repo).encode() in note.data
