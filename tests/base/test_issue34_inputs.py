"""Issue 34, part 1: appends on an unterminated last line, JSON and TOML nested too deeply,
links out of the project, and the other inputs memcite does not control."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
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
        (1, {"a": 1}, None), (3, None, "not JSON (nested too deeply)"),
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


# --------------------------------------------------------------------------- every surface


DEEP_TOML = "[memories]\nx = " + "[" * 5000 + "]" * 5000 + "\n"
DEEP_TOML_SQLITE = 'sqlite_home = "/x"\nx = ' + "[" * 5000 + "]" * 5000 + "\n"


def _config_home(tmp_path, text):
    home = tmp_path / "codex-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(text)
    return str(home)


def _thread_settings(tmp_path):
    from memcite.codex.thread import codex_settings

    features, memories, problems = codex_settings(_config_home(tmp_path, DEEP_TOML))
    assert (features, memories) == ({}, {}) and "nested too deeply" in problems[0]


def _codex_home_config(tmp_path):
    from memcite.ledger.codex_home import CodexHomeError, read_codex_config

    with pytest.raises(CodexHomeError, match="nested too deeply"):
        read_codex_config(_config_home(tmp_path, DEEP_TOML_SQLITE))


def _doctor_config(tmp_path):
    from memcite.codex.doctor import _load_config

    config, problem = _load_config(_config_home(tmp_path, DEEP_TOML))
    assert config is None and "nested too deeply" in problem


def _setup_feature_warnings(tmp_path):
    from memcite.codex.setup import _feature_warnings

    assert _feature_warnings(DEEP_TOML) == []


def _rules_config(tmp_path):
    from memcite.retention.rules import ConfigError, load_toml

    path = tmp_path / "memcite.toml"
    path.write_text(DEEP_TOML)
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_toml(str(path))


def _gate_index(tmp_path):
    from memcite.codex.pre_tool_gate import GateError, _read_json

    path = tmp_path / "shard.json"
    path.write_text(DEEP_JSON)
    with pytest.raises(GateError, match="not JSON"):
        _read_json(str(path))


def _stop_hook_stdin(tmp_path):
    import io

    from memcite.codex.stop_hook import _BadPayload, read_payload

    with pytest.raises(_BadPayload, match="nested too deeply"):
        read_payload(io.BytesIO(DEEP_OBJECT.encode()))


def _lint_hook_stdin(tmp_path):
    import io

    from memcite.cli.lint_commands import lint_hook

    assert lint_hook(codex_home=str(tmp_path), stdin=io.BytesIO(DEEP_JSON.encode())) == 0


def _import_scope(tmp_path):
    from memcite.lint.folder_checks import check_import_scope

    found = check_import_scope(str(tmp_path / "scope.json"), DEEP_JSON)
    assert [f.code for f in found] == ["import-scope-invalid"]


def _instructions_cache(tmp_path):
    from memcite.readpath import instructions_cache

    key = "k" * 64
    (tmp_path / "instructions").mkdir()
    (tmp_path / "instructions" / f"{key}.json").write_text(DEEP_JSON)
    assert instructions_cache.read_cached(str(tmp_path), key) is None


def _corpus_line(tmp_path):
    from memcite.conformance.corpus import CORPUS_FILE, load_cases

    path = tmp_path / "cases.jsonl"
    with open(CORPUS_FILE) as handle:
        shipped = handle.readline()
    path.write_text(shipped + DEEP_JSON + "\n")
    with pytest.raises(InputError, match=r"cases.jsonl:2: not JSON \(nested too deeply\)"):
        load_cases(str(path))
    array = tmp_path / "cases.json"
    array.write_text("[" + DEEP_JSON + "]")
    with pytest.raises(InputError, match="nested too deeply"):
        load_cases(str(array))


def _program_output(tmp_path):
    import sys

    from memcite.conformance.runner import run_json

    program = tmp_path / "deep.py"
    program.write_text(f"print('[' * {DEEP} + ']' * {DEEP})\n")
    result = run_json([sys.executable, str(program)], b"reply", timeout=30)
    assert result.outcome == "not-json" and "nested too deeply" in result.detail


def _search_events(tmp_path):
    from memcite.notes.search import _event_rows

    line = json.dumps({"id": "ev-00000001", "kind": "issue", "text": "flaky sync"})
    assert [number for number, _row in _event_rows(DEEP_JSON + "\n" + line + "\n")] == [2]


SURFACES = {"search's event rows": _search_events, "thread's config.toml": _thread_settings, "Codex home config.toml": _codex_home_config,
            "doctor's config.toml": _doctor_config, "setup's config.toml": _setup_feature_warnings,
            "memcite's config": _rules_config, "the gate index": _gate_index,
            "the stop hook's stdin": _stop_hook_stdin, "the lint hook's stdin": _lint_hook_stdin,
            "an import's scope.json": _import_scope, "the instructions cache": _instructions_cache,
            "a --corpus file": _corpus_line, "conformance check's program": _program_output}


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_deep_nesting_is_a_bad_input_on_every_surface(surface, tmp_path):
    SURFACES[surface](tmp_path)  # a RecursionError would fail the test


# --------------------------------------------------------------------------- stale temporaries


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def _plant(folder, name, *, age=3600, data=b"a full copy of the note"):
    path = folder / name
    path.write_bytes(data)
    then = path.stat().st_mtime - age
    os.utime(path, (then, then))
    return path


def test_only_memcites_own_stale_temporaries_are_removed(tmp_path):
    from memcite.durable_files import remove_stale_temporaries

    dead, alive = _dead_pid(), os.getppid()
    removed = {f".memory.md.{dead}.tmp",  # a killed note write
               ".memory.md.memcite-0123456789ab.tmp"}  # a killed durable write
    for name in removed:
        _plant(tmp_path, name)
    kept = {
        f".memory.md.{dead}.tmp.bak": 3600,  # not a name memcite gives
        f".memory.md.{dead}x.tmp": 3600,
        f".memory.md.{alive}.tmp": 3600,  # its process still runs
        "memory.md.memcite-0123456789ab.tmp": 3600,  # not the hidden form
        f".other.md.{dead}.tmp": 3600,  # another target
        ".memory.md.memcite-fedcba987654.tmp": 5,  # too fresh: maybe being renamed now
        "memory.md": 3600, "notes.txt": 3600, "hard": 3600,
    }
    for name, age in kept.items():
        _plant(tmp_path, name, age=age)
    linked = f".memory.md.{_dead_pid()}.tmp"
    os.symlink(tmp_path / "notes.txt", tmp_path / linked)  # a link: not memcite's
    os.link(tmp_path / "hard", tmp_path / f".memory.md.{_dead_pid()}.tmp")  # a second name
    (tmp_path / ".memory.md.memcite-aaaaaaaaaaaa.tmp").mkdir()  # a folder
    before = set(os.listdir(tmp_path))
    assert sorted(remove_stale_temporaries(str(tmp_path), {"memory.md"})) == sorted(removed)
    assert set(os.listdir(tmp_path)) == before - removed
    assert (tmp_path / "notes.txt").read_bytes() == b"a full copy of the note"


def test_a_day_old_temporary_of_a_live_pid_is_removed_too(tmp_path):
    from memcite.durable_files import remove_stale_temporaries

    _plant(tmp_path, f".memory.md.{os.getppid()}.tmp", age=2 * 24 * 3600)
    assert remove_stale_temporaries(str(tmp_path), {"memory.md"}) == [
        f".memory.md.{os.getppid()}.tmp"]


def test_cache_temporaries_are_removed_in_their_own_form(tmp_path):
    from memcite.durable_files import remove_stale_temporaries

    dead = _dead_pid()
    _plant(tmp_path, f"abc.json.{dead}.tmp")
    _plant(tmp_path, f".abc.json.{dead}.tmp")
    assert remove_stale_temporaries(str(tmp_path), dotted=False) == [f"abc.json.{dead}.tmp"]


def test_the_next_note_write_removes_what_a_killed_import_left(project):
    repo, location = project
    assert runner.invoke(app, ["note", "save", "Use WAL", "--section", "decisions"]).exit_code \
        == 0
    folder = location.project_dir
    left = _plant(Path(folder), f".memory.md.{_dead_pid()}.tmp")
    result = runner.invoke(app, ["note", "save", "Prefer small commits", "--section",
                                 "decisions"])
    assert result.exit_code == 0, result.output
    assert not left.exists()
    assert "Use WAL" in open(location.note_file).read()


# --------------------------------------------------------------------------- the Project: line


@given(st.text(alphabet=st.characters(blacklist_characters="\n\r\x00\u2028\u2029\x85\x0b\x0c"
                                      "\x1c\x1d\x1e"), max_size=40))
def test_a_project_path_round_trips_through_its_project_line(name):
    from memcite.readpath.note_format import (
        new_note,
        project_from_line,
        project_line_value,
        render_note,
    )
    from memcite.readpath.projects import note_project_line

    path = "/home/me/" + name
    value = project_line_value(path)
    assert "\t" not in value and value == value.strip()
    assert project_from_line(value) == path
    note = new_note(path, "2026-01-01")
    assert note.project == path and note.owner("project") == path
    assert note_project_line(render_note(note)) == path


# --------------------------------------------------------------------------- sensitive subjects


POLICY_NOTES = [
    "The password policy requires 12 characters; the check lives in src/auth/policy.py",
    "Password requirements: at least 12 characters, checked in auth/validate.py",
    "password-strength rules are in auth.py",
    "API key rotation policy: every 90 days (ops/rotate.sh)",
    "the passphrase length is checked by the CLI",
]
STILL_SENSITIVE = [
    ("the deploy password lives in the vault", ["password"]),
    ("the password rotation broke the deploy", ["password"]),
    ("share the credentials file with ops", ["credentials"]),
    ("password policy: 12 characters; the admin password is on the wiki", ["password"]),
    ("the api_key is in the env file", ["api key"]),
    ("salary policy for the team", ["salary"]),
    ("medical rules of the clinic", ["medical"]),
]


@pytest.mark.parametrize("text", POLICY_NOTES)
def test_a_note_about_a_policy_is_not_a_sensitive_subject(text):
    from memcite.notes.checks import sensitive_subjects
    from memcite.secrets import scan

    assert sensitive_subjects(text) == [] and scan(text) == []


@pytest.mark.parametrize(("text", "subjects"), STILL_SENSITIVE)
def test_a_credential_itself_still_asks_for_confirmation(text, subjects):
    from memcite.notes.checks import sensitive_subjects

    assert sensitive_subjects(text) == subjects


def test_note_save_of_the_password_policy_note_needs_no_confirmation(project):
    done = runner.invoke(app, ["note", "save", POLICY_NOTES[0], "--section", "decisions"])
    assert done.exit_code == 0, done.output
    asked = runner.invoke(app, ["note", "save", STILL_SENSITIVE[0][0], "--section", "state"])
    assert asked.exit_code == 3 and "confirm" in asked.output


def test_forget_s_temporary_left_by_a_killed_run_is_removed(tmp_path):
    from memcite.retention.forget import write_new_file

    left = _plant(tmp_path, ".note.md.memcite-tmp")
    write_new_file(str(tmp_path / "note.md"), b"retired\n")
    assert (tmp_path / "note.md").read_bytes() == b"retired\n" and not left.exists()


# --------------------------------------------------------------------------- one parser


# json.loads on what memcite itself wrote (its database, the files it ships), and nowhere else.
OWN_DATA_PARSES = {
    "codex/setup.py": 1,  # a copy of a value already parsed: json.loads(json.dumps(value))
    "retention/forget.py": 2,  # stage1 rows memcite stored in its own database
    "mcp/catalog.py": 1,  # the catalog shipped in the package
    "fleet/push.py": 1,  # a row memcite wrote in its own database
    "conformance/corpus.py": 1,  # the corpus shipped in the package
}


def test_every_untrusted_json_or_toml_goes_through_the_bounded_parser():
    import re

    root = Path(__file__).resolve().parents[2] / "src" / "memcite"
    found = {}
    for path in root.rglob("*.py"):
        relative = path.relative_to(root).as_posix()
        if relative == "untrusted.py":
            continue
        text = path.read_text(encoding="utf-8")
        calls = re.findall(r"\b(?:json|_json)\.loads?\(|\btomllib\.loads?\(", text)
        if calls:
            found[relative] = len(calls)
    assert found == OWN_DATA_PARSES, "parse untrusted JSON/TOML with memcite.untrusted"
