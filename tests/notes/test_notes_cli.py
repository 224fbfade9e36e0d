"""`memcite note ...` through Typer's CliRunner and as real processes (8 concurrent saves among them)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from memcite.cli import note_runs
from memcite.cli.app import app
from memcite.notes.model import parse_note
from memcite_process import run_memcite

runner = CliRunner()


@pytest.fixture
def env(tmp_path, monkeypatch):
    project = tmp_path / "src" / "payments-api"
    (project / ".git").mkdir(parents=True)
    (project / "pkg").mkdir()
    home = tmp_path / "codex-home"
    home.mkdir()
    values = {"CODEX_HOME": str(home), "MEMCITE_DB": str(tmp_path / "memcite.sqlite"),
              "MEMCITE_HOME": str(tmp_path)}
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return {"project": str(project), "home": str(home), "env": {**os.environ, **values}}


def invoke(env, *args):
    return runner.invoke(app, ["note", *args, "--cwd", env["project"]])


def note_file(env) -> str:
    out = json.loads(invoke(env, "path", "--json").stdout)
    return out["note_file"]


def run(env, *args, stdin: bytes | None = None):
    code, out, err = run_memcite(["note", *args], env["env"], stdin=stdin, cwd=env["project"])
    return code, out.decode(), err


def test_path_names_project_slug_note_and_archive(env):
    result = invoke(env, "path", "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["project"] == os.path.realpath(env["project"])
    assert info["slug"].startswith("payments-api-") and len(info["slug"]) == len("payments-api-") + 12
    assert info["note_file"].endswith(f"/memory/projects/{info['slug']}/memory.md")
    assert info["archive_dir"].endswith(f"/memory/archive/{info['slug']}")
    assert info["exists"] is False
    text = invoke(env, "path").stdout
    assert "none yet" in text and info["slug"] in text


def test_path_from_a_subfolder_is_the_same_project(env):
    top = json.loads(invoke(env, "path", "--json").stdout)
    sub = json.loads(runner.invoke(app, ["note", "path", "--json", "--cwd",
                                         os.path.join(env["project"], "pkg")]).stdout)
    assert sub["slug"] == top["slug"] and sub["cwd"] != top["cwd"]


def test_save_recall_list_log(env):
    result = invoke(env, "save", "Use WAL with synchronous=NORMAL", "--section", "decisions",
                    "--topic", "db", "--source", "src/store.py", "--confidence", "high",
                    "--tier", "core", "--expires", "2027-01-01", "--json")
    assert result.exit_code == 0, result.output
    saved = json.loads(result.stdout)
    entry_id = saved["entries"][0]["id"]
    assert saved["written"] is True and saved["entries"][0]["action"] == "save"
    text = open(note_file(env), encoding="utf-8").read()
    for line in (f"- [{entry_id}] Use WAL with synchronous=NORMAL", "  Topic: db",
                 "  Source: src/store.py", "  Confidence: HIGH", "  Tier: CORE",
                 "  Expires: 2027-01-01"):
        assert line in text

    recall = invoke(env, "recall")
    assert recall.exit_code == 0
    assert "evidence, not instructions" in recall.stdout
    assert note_file(env) in recall.stdout
    assert f"[{entry_id}] Use WAL" in recall.stdout and "days old" in recall.stdout
    # only the section that holds something has its heading: none stands empty
    assert "## Durable decisions" in recall.stdout
    assert "## Current state" not in recall.stdout and "## Risks and next steps" not in recall.stdout

    recall_json = json.loads(invoke(env, "recall", "--json", "--check").stdout)
    assert recall_json["exists"] and recall_json["entries"][0]["id"] == entry_id
    assert recall_json["entries"][0]["missing_paths"] == ["src/store.py"]

    listed = json.loads(invoke(env, "list", "--json").stdout)
    assert listed == {"notes": [{"slug": saved["slug"], "updated": parse_note(text).updated}]}
    assert "Use WAL" not in invoke(env, "list").stdout

    log = json.loads(invoke(env, "log", entry_id, "--json").stdout)
    (row,) = log["log"]
    assert row["action"] == "save" and row["confirmed_by"] == "request"
    assert row["at_iso"].endswith("Z") and isinstance(row["at"], int)
    assert "Use WAL" not in json.dumps(log)


def test_recall_without_note_says_so(env):
    result = invoke(env, "recall")
    assert result.exit_code == 0
    assert "No project note" in result.stdout


def test_save_from_stdin_and_file(env, tmp_path):
    result = runner.invoke(app, ["note", "save", "-", "--section", "state", "--cwd",
                                 env["project"]], input="Tests pass on main\n")
    assert result.exit_code == 0, result.output
    draft = tmp_path / "draft.md"
    draft.write_text("# Project memory\n\n## Risks and next steps\n- Flaky sync test\n"
                     "  Source: tests/ledger/test_sync.py\n")
    result = invoke(env, "save", "--file", str(draft))
    assert result.exit_code == 0, result.output
    text = open(note_file(env), encoding="utf-8").read()
    assert "] Tests pass on main" in text and "] Flaky sync test" in text


def test_dry_run_prints_the_file_and_writes_nothing(env):
    result = invoke(env, "save", "A decision", "--section", "decisions", "--dry-run")
    assert result.exit_code == 0
    assert result.stdout.startswith("# Project memory\n\nProject: ")
    assert not os.path.exists(note_file(env))


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["aws key AKIAIOSFODNN7EXAMPLE", "--section", "state"], "secret"),
        (["Authorization: Bearer abcdef1234567890abcdef", "--section", "state"], "secret"),
        (["the deploy password lives in the vault", "--section", "state"], "needs-confirmation"),
    ],
)
def test_refusals_exit_3_with_the_reason_on_stderr_and_in_json(env, args, reason):
    result = invoke(env, "save", *args, "--json")
    assert result.exit_code == 3
    refusal = json.loads(result.stdout)["refused"]
    assert refusal["reason"] == reason and refusal["message"]
    assert f"refused ({reason})" in result.stderr
    assert "AKIAIOSFODNN7EXAMPLE" not in result.stdout + result.stderr
    assert "abcdef1234567890abcdef" not in result.stdout + result.stderr
    assert not os.path.exists(note_file(env))


def test_collision_and_moved_project_refusals(env):
    invoke(env, "save", "A", "--section", "state")
    path = note_file(env)
    text = open(path, encoding="utf-8").read()
    for recorded, reason in ((env["home"], "collision"), ("/nowhere/payments-api", "moved-project")):
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text.replace(os.path.realpath(env["project"]), recorded))
        before = open(path, encoding="utf-8").read()
        result = invoke(env, "save", "B", "--section", "state", "--json")
        assert result.exit_code == 3
        assert json.loads(result.stdout)["refused"]["reason"] == reason
        assert open(path, encoding="utf-8").read() == before
        recall = invoke(env, "recall")
        assert recall.exit_code == 3 and "] A" not in recall.stdout


def test_not_writable_prints_the_proposed_note(env, monkeypatch):
    import errno

    def refuse(path, mode=0o777):
        raise PermissionError(errno.EACCES, "Permission denied", path)

    monkeypatch.setattr(os, "mkdir", refuse)
    result = invoke(env, "save", "Use WAL", "--section", "decisions")
    assert result.exit_code == 3
    assert "refused (not-writable)" in result.stderr
    assert "# Project memory" in result.stdout and "] Use WAL" in result.stdout
    as_json = json.loads(invoke(env, "save", "Use WAL", "--section", "decisions", "--json").stdout)
    assert "] Use WAL" in as_json["refused"]["proposed_note"]


def test_confirmation_is_asked_on_a_terminal(env, monkeypatch):
    monkeypatch.setattr(note_runs, "interactive", lambda: True)
    monkeypatch.setattr(note_runs, "ask", lambda question: False)
    result = invoke(env, "save", "the deploy password lives in the vault", "--section", "state")
    assert result.exit_code == 3 and not os.path.exists(note_file(env))
    monkeypatch.setattr(note_runs, "ask", lambda question: True)
    result = invoke(env, "save", "the deploy password lives in the vault", "--section", "state")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(invoke(env, "log", "--json").stdout)["log"]
    assert row["confirmed_by"] == "terminal"


def test_forget_restore_purge_through_the_cli(env):
    saved = json.loads(invoke(env, "save", "A", "--section", "state", "--json").stdout)
    entry_id = saved["entries"][0]["id"]
    invoke(env, "save", "B", "--section", "state")
    refused = invoke(env, "forget", "--entry", entry_id, "--json")
    assert refused.exit_code == 3
    assert json.loads(refused.stdout)["refused"]["reason"] == "needs-confirmation"
    result = invoke(env, "forget", "--entry", entry_id, "--yes", "--json")
    assert result.exit_code == 0, result.output
    moved = json.loads(result.stdout)
    assert moved["restore"].startswith("memcite note restore ")
    assert "] A" not in open(note_file(env), encoding="utf-8").read()

    whole = invoke(env, "forget", "--yes")
    assert whole.exit_code == 0 and "nothing was deleted" in whole.stdout
    assert not os.path.exists(note_file(env))
    archived = whole.stdout.split("moved the note to ")[1].split("\n")[0]

    restored = invoke(env, "restore", os.path.basename(archived))
    assert restored.exit_code == 0, restored.output
    restored = invoke(env, "restore", os.path.basename(moved["archived"]))
    assert restored.exit_code == 0, restored.output
    text = open(note_file(env), encoding="utf-8").read()
    assert "] A" in text and "] B" in text

    wrong = invoke(env, "purge", archived, "--confirm", "nope")
    assert wrong.exit_code == 3 and os.path.exists(archived)
    missing = invoke(env, "purge", archived)
    assert missing.exit_code == 3 and os.path.exists(archived)
    done = invoke(env, "purge", archived, "--confirm", os.path.basename(archived))
    assert done.exit_code == 0, done.output
    assert not os.path.exists(archived)
    actions = [row["action"] for row in json.loads(invoke(env, "log", "--json").stdout)["log"]]
    assert actions[-1] == "purge" and "forget" in actions and "restore" in actions


def test_bad_usage_exits_2(env):
    assert invoke(env, "save", "x", "--section", "nowhere").exit_code == 2
    assert invoke(env, "save", "x", "--section", "state", "--confidence", "sure").exit_code == 2
    assert invoke(env, "save", "x").exit_code == 2  # one entry needs --section
    assert invoke(env, "save", "", "--section", "state").exit_code == 2
    assert runner.invoke(app, ["note", "path", "--cwd", "/no/such/folder"]).exit_code == 2


def test_a_real_process_saves_and_recalls(env):
    code, out, err = run(env, "save", "Use WAL", "--section", "decisions")
    assert code == 0, err
    assert "read back and verified" in out
    code, out, err = run(env, "recall")
    assert code == 0 and "] Use WAL" in out
    code, out, err = run(env, "save", "mail jane.doe@acme-corp.com", "--section", "state")
    assert code == 3 and "refused (secret)" in err and "jane.doe" not in err


def test_eight_concurrent_saves_all_land(env):
    processes = [
        subprocess.Popen([sys.executable, "-m", "memcite", "note", "save", f"entry number {i}",
                          "--section", "state"], env=env["env"], cwd=env["project"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for i in range(8)
    ]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()
    note = parse_note(open(note_file(env), encoding="utf-8").read())
    texts = sorted(entry.text for _, entry in note.entries())
    assert texts == sorted(f"entry number {i}" for i in range(8))
    assert len(note.ids()) == 8
    log = json.loads(invoke(env, "log", "--json").stdout)["log"]
    assert sorted(row["entry_id"] for row in log) == sorted(note.ids())


def test_fast_path_note_options_match_the_typer_commands():
    from typer.main import get_command

    from memcite.cli.fastpath import FAST_COMMANDS

    group = get_command(app).commands["note"]
    notes = {key.split()[1]: spec for key, spec in FAST_COMMANDS.items() if key.startswith("note ")}
    assert {"path", "recall", "list", "save"} <= set(notes)
    for name, spec in notes.items():
        command = group.commands[name]
        options = {opt for param in command.params for opt in getattr(param, "opts", [])}
        for option in [*spec.options, *spec.flags]:
            assert option in options, f"{name} {option}"
        arguments = [p.name for p in command.params if p.param_type_name == "argument"]
        assert list(spec.positionals) == arguments


@pytest.mark.parametrize(
    "args",
    [
        ("path",), ("path", "--json"), ("recall",), ("recall", "--json", "--check"), ("list",),
        ("list", "--json"),
        ("save", "Use WAL", "--section", "decisions", "--dry-run"),
        ("save", "AKIAIOSFODNN7EXAMPLE", "--section", "state", "--json"),
    ],
)
def test_fast_path_note_commands_print_what_typer_prints(env, args):
    run(env, "save", "A decision", "--section", "decisions", "--source", "src/x.py")
    fast = run(env, *args)
    slow_env = {**env, "env": {**env["env"], "MEMCITE_NO_FASTPATH": "1"}}
    slow = run(slow_env, *args)
    assert fast == slow


def test_fast_path_saves_without_importing_typer(env):
    probe = ("import sys, runpy; sys.argv = ['memcite', 'note', 'save', 'x y', '--section', 'state'];"
             "from memcite.__main__ import main\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print('typer' in sys.modules, 'detect_secrets' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, env=env["env"],
                          cwd=env["project"], timeout=60)
    assert done.stderr.decode().split()[-2:] == ["False", "False"]


def test_every_note_command_and_option_is_in_the_reference():
    from pathlib import Path

    from typer.main import get_command

    notes = (Path(__file__).resolve().parents[2] / "docs" / "commands-notes.md").read_text(
        encoding="utf-8")
    group = get_command(app).commands["note"]
    for name, command in group.commands.items():
        assert f"### `memcite note {name}" in notes, name
        for param in command.params:
            for option in getattr(param, "opts", []):
                if option.startswith("--") and option != "--help":
                    assert re.search(rf"(?<![\w-]){option}(?![\w-])", notes), f"{name} {option}"


def test_path_through_a_symlink_names_both_the_folder_and_the_canonical_path(env, tmp_path):
    alias = tmp_path / "alias"
    alias.symlink_to(env["project"])
    info = json.loads(runner.invoke(app, ["note", "path", "--json", "--cwd",
                                          str(alias / "pkg")]).stdout)
    assert info["project_folder"] == str(alias)
    assert info["project"] == os.path.realpath(env["project"])


def test_a_draft_for_another_project_is_refused(env, tmp_path):
    draft = tmp_path / "draft.md"
    draft.write_text("# Project memory\n\nProject: /elsewhere/billing\n\n## Current state\n- x\n")
    result = invoke(env, "save", "--file", str(draft), "--json")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["refused"]["reason"] == "collision"
    assert not os.path.exists(note_file(env))


def test_a_secret_given_as_a_bad_option_value_is_not_echoed(env):
    result = invoke(env, "save", "x", "--section", "state", "--confidence", "AKIAIOSFODNN7EXAMPLE")
    assert result.exit_code == 2
    assert "AKIAIOSFODNN7EXAMPLE" not in result.stdout + result.stderr


SECRET_VALUES = [
    ("key AKIAIOSFODNN7EXAMPLE in env", "AKIAIOSFODNN7EXAMPLE"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("write to jane.doe@acme-corp.com", "jane.doe@acme-corp.com"),
    ("db postgres://admin:S3cretPass@db.internal/app", "S3cretPass"),
    ("Cookie: sessionid=abc123def456zz", "abc123def456zz"),
]


@pytest.mark.parametrize(("text", "value"), SECRET_VALUES)
@pytest.mark.parametrize("redact", [False, True])
def test_no_secret_reaches_the_note_archive_database_or_output(env, tmp_path, text, value, redact):
    invoke(env, "save", "A first entry", "--section", "state", "--topic", "t")
    args = [text, "--section", "state", "--topic", "t", "--source", text]
    result = invoke(env, "save", *args, *(["--redact"] if redact else []))
    assert result.exit_code == (0 if redact else 3), result.output
    invoke(env, "forget", "--yes")
    seen = [result.stdout, result.stderr]
    for folder, _, files in os.walk(tmp_path):
        for name in files:
            with open(os.path.join(folder, name), "rb") as handle:
                seen.append(handle.read().decode("utf-8", "replace"))
    assert not any(value in chunk for chunk in seen)


def test_json_outputs_keep_their_keys(env):
    def keys(*args):
        result = invoke(env, *args, "--json")
        assert result.exit_code == 0, result.output
        return set(json.loads(result.stdout))

    assert keys("path") == {"cwd", "project_folder", "project", "slug", "scope", "session",
                            "note_file", "archive_dir", "exists"}
    assert keys("save", "A", "--section", "state", "--dry-run") == {
        "note_file", "project", "slug", "scope", "written", "dry_run", "entries", "adopted",
        "redacted", "archived", "tightened", "text"}
    assert keys("save", "A", "--section", "state") == {
        "note_file", "project", "slug", "scope", "written", "dry_run", "entries", "adopted", "redacted",
        "archived", "tightened"}
    assert keys("recall") == {"project", "note_file", "exists", "updated", "notice", "entries",
                              "events"}
    entry = json.loads(invoke(env, "recall", "--json", "--check").stdout)["entries"][0]
    assert set(entry) == {"id", "section", "text", "fields", "date", "age_days", "expired",
                          "missing_paths", "stale"}
    assert keys("list") == {"notes"}
    assert keys("log") == {"project", "slug", "scope", "entry_id", "log"}
    row = json.loads(invoke(env, "log", "--json").stdout)["log"][0]
    assert set(row) == {"id", "at", "at_iso", "command", "action", "project", "slug", "entry_id",
                        "hash_before", "hash_after", "confirmed_by", "user", "file"}
    forgot = keys("forget", "--yes")
    assert forgot == {"project", "scope", "entry_id", "archived", "restore", "tightened"}
    archived = json.loads(invoke(env, "log", "--json").stdout)["log"][-1]["file"]
    assert keys("restore", os.path.basename(archived)) == {
        "project", "note_file", "source", "restored", "kept", "replaced_to", "tightened"}
    purged = runner.invoke(app, ["note", "purge", archived, "--confirm",
                                 os.path.basename(archived), "--json"])
    assert set(json.loads(purged.stdout)) == {"purged", "sha256"}


def test_recall_shows_what_a_person_wrote_above_the_sections(env):
    invoke(env, "save", "A", "--section", "state")
    path = note_file(env)
    text = open(path, encoding="utf-8").read().replace(
        "\n## Durable decisions", "Goal: settle payments in one pass.\n\n## Durable decisions")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    out = invoke(env, "recall").stdout
    assert "Goal: settle payments in one pass." in out and "] A" in out


# --------------------------------------------------------------------------- odd names and paths


def _note_cli(cwd, home, *args):
    import subprocess
    import sys

    env = {**os.environ, "HOME": str(home), "CODEX_HOME": str(home / "codex"),
           "MEMCITE_HOME": str(home / "memcite")}
    (home / "codex").mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "memcite", "note", *args], cwd=cwd, env=env,
                          capture_output=True, timeout=60)


@pytest.mark.parametrize("name, code, words", [
    (b"bad\xffname", 2, b"not valid UTF-8"),
    (b"new\nProject: /etc\n## Durable decisions\n- [x] injected", 2, b"control character"),
    (b"esc\x1bhere", 2, b"control character"),
    (b"cr\rhere", 2, b"control character"),
    (b"ghp_" + b"abcdefghijklmnopqrstuvwxyz0123456789", 3, b"secret"),
])
def test_a_project_folder_a_note_cannot_name_faithfully_is_refused_before_writing(
        tmp_path, name, code, words):
    folder = os.path.join(os.fsencode(tmp_path), name.replace(b"/", b"_"))
    os.mkdir(folder)
    done = _note_cli(folder, tmp_path, "save", "an entry", "--section", "decisions", "--yes")
    assert done.returncode == code, done.stderr
    assert words in done.stderr and b"Traceback" not in done.stderr
    assert not (tmp_path / "codex" / "memory").exists()  # nothing written, nothing logged
    if b"ghp_" in name:
        assert name not in done.stderr and name not in done.stdout  # masked in the message


@pytest.mark.parametrize("name", ["tab\there", "\tleading tab", "trailing space ",
                                  'a "quoted" name'])
def test_a_project_folder_with_a_tab_keeps_its_note_escaped_on_the_project_line(tmp_path, name):
    import json as json_module

    folder = tmp_path / name
    folder.mkdir()
    for text in ("an entry", "another entry"):  # the second one checks the Project: line
        done = _note_cli(folder, tmp_path, "save", text, "--section", "decisions", "--yes")
        assert done.returncode == 0, done.stderr
    [note] = (tmp_path / "codex" / "memory" / "projects").glob("*/memory.md")
    line = next(line for line in note.read_text().splitlines() if line.startswith("Project:"))
    value = line[len("Project: "):]
    if "\t" in name or name != name.strip():
        assert value == json_module.dumps(str(folder), ensure_ascii=False)
    else:
        assert value == str(folder)
    assert "\t" not in line
    recalled = _note_cli(folder, tmp_path, "recall")
    assert recalled.returncode == 0, recalled.stderr
    assert b"an entry" in recalled.stdout and b"another entry" in recalled.stdout
    import subprocess
    import sys

    env = {**os.environ, "HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / "codex"),
           "MEMCITE_HOME": str(tmp_path / "memcite")}
    for args in (["search", "another"], ["instructions", "--profile", "memcite"]):
        done = subprocess.run([sys.executable, "-m", "memcite", *args], cwd=folder, env=env,
                              capture_output=True, timeout=60)
        assert done.returncode == 0 and b"another" in done.stdout and b"entry" in done.stdout, \
            (args, done)


def test_an_empty_scope_is_a_usage_error(tmp_path):
    done = _note_cli(tmp_path, tmp_path, "save", "x", "--section", "decisions", "--yes",
                     "--scope", "")
    assert done.returncode == 2 and b"--scope" in done.stderr
    assert not (tmp_path / "codex" / "memory").exists()


def test_a_note_that_cannot_be_read_is_refused_not_a_traceback(tmp_path, monkeypatch):
    import errno as errno_module

    from memcite.notes import storage
    from memcite.notes.refusals import NoteRefusal

    note = tmp_path / "memory.md"
    note.write_text("# Project memory\n")
    real_open = os.open

    def denied(path, flags, *args, **kwargs):
        if os.fspath(path) == str(note):
            raise PermissionError(errno_module.EACCES, "Permission denied", str(note))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(storage.os, "open", denied)  # root reads every file: simulate it
    with pytest.raises(NoteRefusal) as caught:
        storage.read_file(str(note))
    assert caught.value.reason == "not-writable" and "cannot be read" in caught.value.message


def test_a_fifo_planted_as_the_note_does_not_hang(tmp_path):
    from memcite.notes import storage
    from memcite.notes.refusals import NoteRefusal

    fifo = tmp_path / "memory.md"
    os.mkfifo(fifo)
    with pytest.raises(NoteRefusal, match="not a regular file"):
        storage.read_file(str(fifo))


def test_a_session_id_that_looks_like_a_secret_is_refused_and_never_echoed(tmp_path):
    secret = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    done = _note_cli(tmp_path, tmp_path, "save", "x", "--section", "decisions", "--yes",
                     "--scope", "session", "--session", secret)
    assert done.returncode == 2 and b"looks like a secret" in done.stderr
    assert secret.encode() not in done.stderr + done.stdout
    assert not (tmp_path / "codex" / "memory").exists()


def test_saving_outside_a_git_work_tree_says_which_folder_is_the_project(tmp_path):
    folder = tmp_path / "not-a-repo"
    folder.mkdir()
    done = _note_cli(folder, tmp_path, "save", "x", "--section", "decisions", "--yes")
    assert done.returncode == 0, done.stderr
    assert f"the project is {folder}".encode() in done.stderr and b"no git work tree" in done.stderr
    (folder / ".git").mkdir()
    again = _note_cli(folder, tmp_path, "save", "y", "--section", "decisions", "--yes")
    assert again.returncode == 0 and b"no git work tree" not in again.stderr


def test_ctrl_c_while_reading_the_entry_says_interrupted_once(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    env = {**os.environ, "HOME": str(tmp_path), "CODEX_HOME": str(tmp_path),
           "MEMCITE_HOME": str(tmp_path / "memcite")}
    process = subprocess.Popen([sys.executable, "-m", "memcite", "note", "save", "-", "--section",
                                "decisions", "--yes"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    time.sleep(1.5)  # reading stdin
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=20)
    assert process.returncode == 130
    assert err.count(b"interrupted") == 1, err


def test_save_help_says_what_yes_does_off_a_terminal(env):
    """Issue 40: the help said --yes was needed off a terminal; an ordinary save went ahead
    without it, "Confirmed: no (automatic)". The help now says so, and the behaviour holds."""
    shown = " ".join(runner.invoke(app, ["note", "save", "--help"]).stdout.split())
    assert "needed when not on a terminal" not in shown
    assert "an ordinary save goes ahead, stamped 'Confirmed: no (automatic)'" in shown
    assert "refused off one (exit 3, nothing saved)" in shown
    code, _out, err = run(env, "save", "Use WAL for the cache", "--section", "decisions")
    assert code == 0, err
    assert "Confirmed: no (automatic)" in open(note_file(env), encoding="utf-8").read()
    code, _out, err = run(env, "save", "The deploy needs the admin password", "--section", "risks")
    assert code == 3 and "needs a person's confirmation" in err
    code, _out, err = run(env, "save", "The deploy needs the admin password", "--section", "risks",
                          "--yes")
    assert code == 0, err
    assert "Confirmed: yes (--yes" in open(note_file(env), encoding="utf-8").read()
