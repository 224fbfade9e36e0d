"""`memcite note export` and `memcite note import`: a round trip into a fresh home, deduplication
by id and by text, secrets and other projects' lines refused line by line, a dry run that writes
nothing, malformed and huge lines reported by their number."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.contracts import outputs as contracts
from memcite.notes.events import read_events
from memcite.notes.export import MAX_LINE_BYTES
from memcite.notes.model import parse_note
from memcite.notes.storage import locate_note

runner = CliRunner()
SECRET = "AKIAIOSFODNN7EXAMPLE"


@pytest.fixture
def env(tmp_path, monkeypatch):
    project = tmp_path / "src" / "payments-api"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    (project / "src" / "db.py").write_text("x = 1\n")
    home = tmp_path / "codex-home"
    home.mkdir()
    values = {"CODEX_HOME": str(home), "MEMCITE_DB": str(tmp_path / "memcite.sqlite"),
              "MEMCITE_HOME": str(tmp_path), "MEMCITE_NO_FASTPATH": "1"}
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return {"project": str(project), "home": str(home), "tmp": tmp_path}


def note_cmd(env, *args, home=None, stdin=None):
    extra = ["--codex-home", home] if home else []
    return runner.invoke(app, ["note", *args, "--cwd", env["project"], *extra], input=stdin)


def seed(env):
    assert note_cmd(env, "save", "Use WAL for the cache", "--section", "decisions", "--topic",
                    "db", "--tier", "CORE", "--source", "src/db.py").exit_code == 0
    assert note_cmd(env, "save", "All tests pass", "--section", "state", "--evidence",
                    "CI 4411").exit_code == 0
    for args in (["--kind", "decision", "chose WAL", "--file", "src/db.py"],
                 ["--kind", "failure", "`pytest -n 8` deadlocks"]):
        done = runner.invoke(app, ["event", "add", *args, "--cwd", env["project"]])
        assert done.exit_code == 0, done.output


def export(env, home=None) -> list[dict]:
    done = note_cmd(env, "export", home=home)
    assert done.exit_code == 0, done.output
    return [json.loads(line) for line in done.stdout.splitlines()]


def write(env, lines, name="export.jsonl") -> str:
    path = env["tmp"] / name
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n"
                            for line in lines), encoding="utf-8")
    return str(path)


def do_import(env, path, *args, home=None):
    done = note_cmd(env, "import", path, "--json", *args, home=home)
    out = contracts.NoteImportOutput.model_validate_json(done.stdout)
    return done.exit_code, out


def entries_of(home, project) -> list[tuple]:
    location = locate_note(project, home)
    with open(location.note_file, encoding="utf-8") as handle:
        note = parse_note(handle.read())
    return sorted((key, entry.id, entry.text, entry.get("Topic"), entry.get("Tier"),
                   entry.get("Source"), entry.get("Evidence")) for key, entry in note.entries())


def events_of(home, project) -> list[dict]:
    found = []
    for event in read_events(locate_note(project, home)):
        raw = event.to_json()
        raw.pop("provenance")
        found.append(raw)
    return found


def folder_bytes(root) -> dict:
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                found[path] = handle.read()
    return found


def test_export_lines_fit_their_models(env):
    seed(env)
    lines = export(env)
    header = contracts.NoteExportHeader.model_validate(lines[0])
    assert header.version == 1 and header.owner == env["project"] and header.scope == "project"
    assert (header.entries, header.events) == (2, 2)
    kinds = [line["kind"] for line in lines[1:]]
    assert kinds == ["entry", "entry", "event", "event"]
    for line in lines[1:]:
        model = contracts.NoteExportEntry if line["kind"] == "entry" else contracts.NoteExportEvent
        model.model_validate(line)
        assert line["owner"] == env["project"]


def test_round_trip_into_a_fresh_home_gives_the_same_entries_and_events(env):
    seed(env)
    path = write(env, [json.dumps(line) for line in export(env)])
    fresh = str(env["tmp"] / "fresh-home")
    fresh_db = str(env["tmp"] / "fresh.sqlite")  # a fresh home, a fresh database
    code, out = do_import(env, path, "--db", fresh_db, home=fresh)
    assert code == 0, out
    assert out.counts.model_dump() == {"imported": 4, "skipped": 0, "refused": 0}
    assert entries_of(fresh, env["project"]) == entries_of(env["home"], env["project"])
    assert events_of(fresh, env["project"]) == events_of(env["home"], env["project"])
    # provenance says where each came from; the original provenance is kept
    location = locate_note(env["project"], fresh)
    text = open(location.note_file, encoding="utf-8").read()
    assert text.count(f"Imported: from {path} at ") == 2 and "via cli" in text
    for event in read_events(location):
        assert event.provenance["imported"][0]["from"] == path
        assert event.provenance["via"] == "cli"
    # the gate index was rebuilt from the log
    assert os.listdir(os.path.join(location.project_dir, "gate"))
    # the change log records the import
    log = json.loads(note_cmd(env, "log", "--json", "--db", fresh_db, home=fresh).stdout)["log"]
    assert [(row["command"], row["action"]) for row in log] == [("import", "save")] * 2


def test_dedup_by_id_and_by_text(env):
    seed(env)
    lines = export(env)
    path = write(env, [json.dumps(line) for line in lines])
    code, out = do_import(env, path)  # into the home it came from: everything is there
    assert code == 0
    assert out.counts.model_dump() == {"imported": 0, "skipped": 4, "refused": 0}
    assert {line.reason for line in out.lines} == {"same-id"}
    # the same text under another id; an event with another id but the same content
    entry = dict(lines[1], id="zz99zz", text="use  WAL for the CACHE")
    event = dict(lines[3], id="ev-zzzzzzzz", event={**lines[3]["event"], "id": "ev-zzzzzzzz"})
    code, out = do_import(env, write(env, [lines[0], entry, event], "again.jsonl"))
    assert code == 0
    assert [(line.action, line.reason) for line in out.lines] == [
        ("skipped", "same-text"), ("skipped", "same-content")]
    # twice in the same file: the second is a duplicate of the first
    fresh = str(env["tmp"] / "fresh-home")
    code, out = do_import(env, write(env, [lines[0], lines[1], lines[1]], "twice.jsonl"),
                          home=fresh)
    assert [line.action for line in out.lines] == ["imported", "skipped"]


def test_a_secret_is_refused_and_the_batch_goes_on(env):
    seed(env)
    lines = export(env)
    bad = dict(lines[1], id="aa11aa", text=f"the key is {SECRET}")
    bad_event = dict(lines[3], id="ev-aaaaaaaa",
                     event={**lines[3]["event"], "id": "ev-aaaaaaaa", "text": f"key {SECRET}"})
    fresh = str(env["tmp"] / "fresh-home")
    path = write(env, [lines[0], bad, lines[2], bad_event, lines[3]])
    code, out = do_import(env, path, home=fresh)
    assert code == 1
    assert [(line.line, line.action, line.reason) for line in out.lines] == [
        (2, "refused", "secret"), (3, "imported", None), (4, "refused", "secret"),
        (5, "imported", None)]
    location = locate_note(env["project"], fresh)
    assert SECRET not in open(location.note_file, encoding="utf-8").read()
    assert SECRET not in open(os.path.join(location.project_dir, "events.jsonl")).read()
    assert SECRET not in json.dumps(out.model_dump())


def test_another_projects_lines_refused_without_the_flag_taken_with_it(env):
    seed(env)
    lines = export(env)
    other = "/somewhere/else/billing"
    moved = [lines[0], *[dict(line, owner=other) for line in lines[1:]]]
    path = write(env, moved)
    fresh = str(env["tmp"] / "fresh-home")
    code, out = do_import(env, path, home=fresh)
    assert code == 1
    assert {(line.action, line.reason) for line in out.lines} == {("refused", "other-project")}
    assert not os.path.exists(str(env["tmp"] / "fresh-home" / "memory"))
    code, out = do_import(env, path, "--other-project", home=fresh)
    assert code == 0 and out.counts.imported == 4
    location = locate_note(env["project"], fresh)
    text = open(location.note_file, encoding="utf-8").read()
    assert f"(owner {other})" in text and f"Project: {env['project']}" in text
    for event in read_events(location):
        assert event.provenance["imported"][-1]["owner"] == other


def test_dry_run_writes_nothing(env):
    seed(env)
    lines = export(env)
    fresh = env["tmp"] / "fresh-home"
    (fresh / "memory").mkdir(parents=True)
    path = write(env, lines)
    before_home, before_fresh = folder_bytes(env["home"]), folder_bytes(fresh)
    db_before = open(os.environ["MEMCITE_DB"], "rb").read()
    done = note_cmd(env, "import", path, "--dry-run", home=str(fresh))
    assert done.exit_code == 0, done.output
    assert "would import 4" in done.stdout and "nothing was written" in done.stderr
    code, out = do_import(env, path, "--dry-run", home=str(fresh))
    assert out.dry_run and out.counts.imported == 4
    assert folder_bytes(fresh) == before_fresh and folder_bytes(env["home"]) == before_home
    assert open(os.environ["MEMCITE_DB"], "rb").read() == db_before


def test_a_malformed_line_is_reported_with_its_number(env):
    seed(env)
    lines = export(env)
    fresh = str(env["tmp"] / "fresh-home")
    path = write(env, [lines[0], "{not json", "[1, 2]", {"kind": "entry"},
                       dict(lines[1], section="nowhere"), {"kind": "weird"},
                       dict(lines[3], event={**lines[3]["event"], "files": ["../out.py"]}),
                       lines[2]])
    done = note_cmd(env, "import", path, home=fresh)
    assert done.exit_code == 1
    for number in range(2, 8):
        assert f"line {number}: refused" in done.stderr
    assert "line 8: entry" in done.stdout and "refused 6" in done.stdout


def test_a_huge_line_is_capped_and_the_batch_goes_on(env):
    seed(env)
    lines = export(env)
    huge = dict(lines[1], text="x" * (MAX_LINE_BYTES + 10))
    fresh = str(env["tmp"] / "fresh-home")
    code, out = do_import(env, write(env, [lines[0], huge, lines[2]]), home=fresh)
    assert code == 1
    assert [(line.action, line.reason) for line in out.lines] == [
        ("refused", "too-long"), ("imported", None)]
    assert len(out.lines[0].message) < 200


@pytest.mark.parametrize("content", [b"", b"{\"kind\": \"entry\"}\n", b"\xff\xfe\n",
                                     b'{"kind": "header", "format": "memcite-notes", '
                                     b'"version": 99}\n'])
def test_a_file_that_is_no_export_exits_2(env, content):
    path = env["tmp"] / "bad.jsonl"
    path.write_bytes(content)
    done = note_cmd(env, "import", str(path))
    assert done.exit_code == 2, done.output
    assert note_cmd(env, "import", str(env["tmp"] / "missing.jsonl")).exit_code == 2


def test_import_reads_stdin(env):
    seed(env)
    text = note_cmd(env, "export").stdout
    fresh = str(env["tmp"] / "fresh-home")
    done = note_cmd(env, "import", "-", home=fresh, stdin=text)
    assert done.exit_code == 0, done.output
    assert "imported 4" in done.stdout


def test_a_line_nested_too_deeply_is_refused_and_the_batch_goes_on(env):
    seed(env)
    lines = export(env)
    fresh = str(env["tmp"] / "fresh-home")
    deep = "[" * 100_000 + "]" * 100_000
    code, out = do_import(env, write(env, [lines[0], deep, lines[1]]), home=fresh)
    assert code == 1
    assert [(line.line, line.action, line.reason) for line in out.lines] == [
        (2, "refused", "invalid"), (3, "imported", None)]
    assert "nested too deeply" in out.lines[0].message
    header_deep = env["tmp"] / "deep-header.jsonl"
    header_deep.write_text(deep + "\n")
    done = note_cmd(env, "import", str(header_deep), home=fresh)
    assert done.exit_code == 2 and "line 1: not the header" in done.output
