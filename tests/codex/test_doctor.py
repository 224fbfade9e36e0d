"""``memcite doctor``: a healthy home passes every check; each broken part is named with its fix."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from memcite.codex.doctor import DoctorInputs, run_checks
from memcite.codex.setup import EVENT_LABELS, STOP_COMMAND, apply_plan, codex_hook_hash, plan_setup
from memcite.ledger.hook_log import append_entry
from memcite.ledger.store import open_store

HANDLER = {"type": "command", "command": STOP_COMMAND, "timeout": 30}


def healthy_home(tmp_path):
    """A Codex home set up for memcite, trusted, with memories, a database and a good run logged."""
    home = tmp_path / "codex"
    home.mkdir()
    bin_dir = tmp_path / "bin"  # the memcite setup wrote into the hooks, also on PATH
    bin_dir.mkdir()
    (bin_dir / "memcite").write_text("#!/bin/sh\n")
    os.chmod(bin_dir / "memcite", 0o755)
    apply_plan(plan_setup(home, lint=True, mcp=True, memcite=[str(bin_dir / "memcite")],
                          codex_home=str(home)))
    hooks = json.loads((home / "hooks.json").read_text())["hooks"]
    hooks_path = home / "hooks.json"
    trust = "".join(
        f'[hooks.state."{hooks_path}:{EVENT_LABELS[event]}:0:0"]\n'
        f'trusted_hash = "{codex_hook_hash(event, groups[0]["hooks"][0])}"\n\n'
        for event, groups in hooks.items())
    (home / "config.toml").write_text(
        "[features]\nmemories = true\n\n[memories]\nuse_memories = true\n\n"
        + (home / "config.toml").read_text() + "\n" + trust)
    codex_db = sqlite3.connect(home / "memories_1.sqlite")
    codex_db.execute("CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY, raw_memory TEXT)")
    codex_db.execute("INSERT INTO stage1_outputs VALUES ('019b7635-7fb3-7cf8-8f11-6f64065672e0', 'x')")
    codex_db.commit()
    codex_db.close()
    notes = home / "memory" / "projects" / "repo"
    notes.mkdir(parents=True, mode=0o700)
    os.chmod(home / "memory", 0o700)
    os.chmod(home / "memory" / "projects", 0o700)
    (notes / "memory.md").write_text("# notes\n")
    os.chmod(notes / "memory.md", 0o600)
    data = tmp_path / "memcite"
    data.mkdir()
    open_store(data / "memcite.sqlite").close()
    append_entry(data / "logs" / "hooks.log", {"event": "stop", "at": "2026-11-30T10:00:00Z",
                                               "status": "ok", "recorded": 2})
    (tmp_path / "cache").mkdir()
    return DoctorInputs(codex_home=str(home), db_path=str(data / "memcite.sqlite"),
                        log_path=str(data / "logs" / "hooks.log"), cache_dir=str(tmp_path / "cache"),
                        cwd=str(tmp_path), environ={"PATH": str(bin_dir)})


def statuses(inputs) -> dict[str, str]:
    return {check.name: check.status for check in run_checks(inputs)}


def test_a_healthy_home_passes_every_check(tmp_path):
    inputs = healthy_home(tmp_path)
    checks = run_checks(inputs)
    assert [c.name for c in checks if c.status != "ok"] == []
    assert {c.name for c in checks} >= {
        "codex-home", "codex-config", "memories-db", "memories-enabled", "hooks-feature",
        "stop-hook", "hook-trust", "hook-runs", "database", "tokenizer-o200k_base",
        "cache-folder", "notes-folder", "memory-audit"}
    assert "1 memory" in next(c.message for c in checks if c.name == "memories-db")


def _break(inputs, what: str) -> None:
    home = inputs.codex_home
    if what == "hooks-off":
        text = open(os.path.join(home, "config.toml")).read().replace(
            "memories = true\n", "memories = true\nhooks = false\n", 1)
        open(os.path.join(home, "config.toml"), "w").write(text)
    elif what == "no-hook":
        os.unlink(os.path.join(home, "hooks.json"))
    elif what == "untrusted":
        text = open(os.path.join(home, "config.toml")).read()
        open(os.path.join(home, "config.toml"), "w").write(text.split("[hooks.state")[0])
    elif what == "hook-changed":
        hooks = json.load(open(os.path.join(home, "hooks.json")))
        hooks["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 45
        json.dump(hooks, open(os.path.join(home, "hooks.json"), "w"))
    elif what == "last-run-failed":
        append_entry(inputs.log_path, {"event": "stop", "at": "2026-11-30T11:00:00Z",
                                       "status": "error", "error": "memcite's database: locked"})
    elif what == "corrupt-db":
        size = os.path.getsize(inputs.db_path)
        with open(inputs.db_path, "r+b") as handle:  # damage every page after the header page
            for page in range(4096, size, 4096):
                handle.seek(page)
                handle.write(b"\xa5" * 64)
    elif what == "not-a-db":
        open(inputs.db_path, "wb").write(b"hello" * 100)
    elif what == "bad-config":
        open(os.path.join(home, "config.toml"), "w").write("[features\n")
    elif what == "wide-notes":
        os.chmod(os.path.join(home, "memory", "projects"), 0o755)
    elif what == "cache-not-a-folder":
        os.rmdir(inputs.cache_dir)
        open(inputs.cache_dir, "w").write("x")
    elif what in ("no-path", "bare-command"):
        hooks = json.load(open(os.path.join(home, "hooks.json")))
        hooks["hooks"]["Stop"][0]["hooks"][0]["command"] = STOP_COMMAND
        json.dump(hooks, open(os.path.join(home, "hooks.json"), "w"))
        if what == "no-path":
            inputs.environ["PATH"] = ""
    elif what in ("mcp-no-home", "mcp-other-home"):
        text = open(os.path.join(home, "config.toml")).read()
        args = '"--codex-home", "/elsewhere"' if what == "mcp-other-home" else ""
        text = text.replace(f'"--codex-home", {json.dumps(home)}', args).replace(", ]", "]")
        open(os.path.join(home, "config.toml"), "w").write(text)
    elif what == "bad-memcite-config":
        path = os.path.join(os.path.dirname(inputs.db_path), "config.toml")
        open(path, "w").write("[retention]\nmax_unusd_days = 10\n")
        inputs.environ["MEMCITE_CONFIG"] = path
    elif what == "gone-memcite":
        os.unlink(os.path.join(os.path.dirname(inputs.db_path), "..", "bin", "memcite"))
    elif what == "memories-off":
        text = open(os.path.join(home, "config.toml")).read().replace(
            "memories = true", "memories = false", 1)
        open(os.path.join(home, "config.toml"), "w").write(text)


@pytest.mark.parametrize(
    ("what", "name", "status", "words"),
    [
        ("hooks-off", "hooks-feature", "failure", "hooks = false"),
        ("no-hook", "stop-hook", "failure", "memcite setup codex --apply"),
        ("untrusted", "hook-trust", "failure", "/hooks"),
        ("hook-changed", "hook-trust", "warning", "does not match"),
        ("last-run-failed", "hook-runs", "failure", "locked"),
        ("corrupt-db", "database", "failure", "malformed"),
        ("not-a-db", "database", "failure", "not an SQLite database"),
        ("bad-config", "codex-config", "failure", "cannot be read"),
        ("wide-notes", "notes-folder", "warning", "755"),
        ("no-path", "stop-hook", "failure", "not found on PATH"),
        ("bare-command", "stop-hook", "warning", "/bin/bash -c"),
        ("mcp-no-home", "mcp-server", "failure", "without CODEX_HOME"),
        ("mcp-other-home", "mcp-server", "failure", "not this Codex home"),
        ("gone-memcite", "stop-hook", "failure", "does not exist"),
        ("bad-memcite-config", "memcite-config", "failure", "did you mean retention.max_unused_days"),
        ("cache-not-a-folder", "cache-folder", "failure", "not a folder"),
        ("memories-off", "memories-enabled", "warning", "memories = true"),
    ],
)
def test_each_broken_part_is_named_with_its_fix(tmp_path, what, name, status, words):
    inputs = healthy_home(tmp_path)
    _break(inputs, what)
    checks = {c.name: c for c in run_checks(inputs)}
    check = checks[name]
    assert check.status == status, check
    assert words in check.message + (check.fix or "")
    assert check.fix
    others = [c.name for c in checks.values() if c.status != "ok" and c.name != name]
    allowed = {"untrusted": set(), "no-hook": {"hook-trust"}, "bad-config": {
        "memories-enabled", "memories-db", "hook-trust", "mcp-server"}, "hook-changed": set(),
        "no-path": {"hook-trust"}, "bare-command": {"hook-trust"}, "gone-memcite": {"mcp-server"}}
    assert set(others) <= allowed.get(what, set()), others


def test_a_missing_home_and_nothing_else(tmp_path):
    inputs = DoctorInputs(codex_home=str(tmp_path / "none"), db_path=str(tmp_path / "db"),
                          log_path=str(tmp_path / "log"), cache_dir=str(tmp_path / "c"),
                          cwd=str(tmp_path), environ={})
    result = statuses(inputs)
    assert result["codex-home"] == "failure"
    assert result["database"] == "warning" and result["hook-runs"] == "warning"
    assert result["cache-folder"] == "ok"  # can be created
    assert not (tmp_path / "db").exists() and not (tmp_path / "c").exists()  # doctor creates nothing


def test_the_command_exit_codes_and_json(tmp_path):
    inputs = healthy_home(tmp_path)
    env = {**os.environ, "CODEX_HOME": inputs.codex_home, "MEMCITE_HOME": str(tmp_path / "memcite"),
           "MEMCITE_CACHE_DIR": inputs.cache_dir, "PATH": inputs.environ["PATH"] + os.pathsep
           + os.environ.get("PATH", "")}
    env.pop("MEMCITE_DB", None)
    done = subprocess.run([sys.executable, "-m", "memcite", "doctor", "--json"], env=env,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    report = json.loads(done.stdout)
    assert report["failures"] == 0 and report["ok"] == len(report["checks"])
    assert report["checked_at_iso"].endswith("Z") and isinstance(report["checked_at"], int)
    assert set(report["checks"][0]) == {"name", "status", "message", "fix"}
    from memcite.contracts.outputs import DoctorOutput

    DoctorOutput.model_validate_json(done.stdout)  # the --json contract
    _break(inputs, "no-hook")
    done = subprocess.run([sys.executable, "-m", "memcite", "doctor"], env=env,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 1
    line = next(line for line in done.stdout.splitlines() if "stop-hook" in line)
    assert line.startswith("failure  stop-hook: ") and "(fix: memcite setup codex --apply)" in line
    assert len(done.stdout.splitlines()) == len(report["checks"])


def test_a_hook_written_inline_in_config_toml_counts_with_its_own_trust_key(tmp_path):
    inputs = healthy_home(tmp_path)
    home = inputs.codex_home
    os.unlink(os.path.join(home, "hooks.json"))
    key = f"{os.path.join(home, 'config.toml')}:stop:0:0"
    with open(os.path.join(home, "config.toml"), "w") as handle:
        handle.write("[features]\nmemories = true\n\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\n"
                     f'type = "command"\ncommand = "{STOP_COMMAND}"\ntimeout = 30\n\n'
                     f'[hooks.state."{key}"]\ntrusted_hash = "{codex_hook_hash("Stop", HANDLER)}"\n')
    checks = {c.name: c for c in run_checks(inputs)}
    # found there, with its trust; a bare `memcite` is worth a warning
    assert checks["stop-hook"].status == "warning" and "config.toml" in checks["stop-hook"].message
    assert "/bin/bash -c" in checks["stop-hook"].message
    assert checks["hook-trust"].status == "ok"


def test_the_memory_audit_check_reads_the_last_audit_and_never_audits(tmp_path, monkeypatch):
    from memcite.audit import memory_audit
    from memcite.codex import doctor
    from memcite.codex.doctor import check_memory_audit
    from poisoned_home import build_home

    generated = tmp_path / "generated"
    build_home(generated, 4, mix={"poisoned": 1.0})
    inputs = healthy_home(tmp_path)
    inputs.codex_home = str(generated)
    check = check_memory_audit(inputs)
    assert check.status == "ok" and check.message == "not audited yet"
    assert "memcite audit" in check.fix
    # the audit keeps its counts in the cache; doctor reads them and runs no audit itself
    memory_audit.audit_home(str(generated), cwd=str(tmp_path), cache_dir=inputs.cache_dir)
    monkeypatch.setattr(memory_audit, "audit_home", lambda *a, **k: pytest.fail("doctor audited"))
    check = check_memory_audit(inputs)
    assert check.status == "warning" and "4 memories; findings: 4 poisoned" in check.message
    assert "memcite audit" in check.fix and "--quarantine" in check.fix
    assert doctor.check_memory_audit is check_memory_audit
    # a memory folder changed since the audit: said, with the command to run again
    with open(generated / "memories" / "MEMORY.md", "a", encoding="utf-8") as memory:
        memory.write("- a line added after the audit\n")
    check = check_memory_audit(inputs)
    assert check.status == "warning" and "changed since" in check.message


@pytest.mark.parametrize(("made", "status", "words"), [
    ({}, "failure", "is not a Codex home: it is empty"),
    ({"memory/projects/": None}, "failure", "it holds only memory"),
    ({"memory/projects/": None, "hooks.json": "{}"}, "failure", "Codex is not installed here"),
    ({"config.toml": ""}, "ok", "(Codex's: config.toml)"),
    ({"auth.json": "{}"}, "ok", "(Codex's: auth.json)"),
    ({"sessions/": None}, "ok", "(Codex's: sessions/)"),
    ({"state_5.sqlite": ""}, "ok", "(Codex's: state_5.sqlite)"),
    ({"memories/": None}, "ok", "(Codex's: memories/)"),
])
def test_a_folder_only_memcite_made_is_no_codex_home(tmp_path, made, status, words):
    home = tmp_path / "codex"
    home.mkdir()
    for name, text in made.items():
        if name.endswith("/"):
            (home / name).mkdir(parents=True)
        else:
            (home / name).write_text(text)
    inputs = DoctorInputs(codex_home=str(home), db_path=str(tmp_path / "db"),
                          log_path=str(tmp_path / "log"), cache_dir=str(tmp_path / "c"),
                          cwd=str(tmp_path), environ={})
    check = next(check for check in run_checks(inputs) if check.name == "codex-home")
    assert check.status == status and words in check.message, check.line()
    if status == "failure":
        assert "npm install -g @openai/codex" in check.fix


def test_a_missing_home_says_codex_is_not_installed_and_how_to_install_it(tmp_path):
    inputs = DoctorInputs(codex_home=str(tmp_path / "none"), db_path=str(tmp_path / "db"),
                          log_path=str(tmp_path / "log"), cache_dir=str(tmp_path / "c"),
                          cwd=str(tmp_path), environ={})
    check = next(check for check in run_checks(inputs) if check.name == "codex-home")
    assert "Codex is not installed" in check.message and "npm install -g @openai/codex" in check.fix


@pytest.mark.parametrize("background", [
    {"event": "quarantine", "status": "ok", "poisoned": 0},
    {"event": "pre-tool", "status": "ok"},
])
def test_hook_runs_read_by_kind_when_another_line_lands_last(tmp_path, background):
    """Issue 40: the Stop hook's detached quarantine logs a line of its own; when it landed
    last, doctor read it as the last hook run ("ok, 0 replies recorded")."""
    inputs = healthy_home(tmp_path)
    os.unlink(inputs.log_path) if os.path.exists(inputs.log_path) else None
    append_entry(inputs.log_path, {"event": "stop", "at": "2026-11-30T11:00:00Z", "status": "ok",
                                   "read": 2, "recorded": 2})
    append_entry(inputs.log_path, {**background, "at": "2026-11-30T11:00:01Z"})
    check = next(c for c in run_checks(inputs) if c.name == "hook-runs")
    assert check.status == "ok", check
    assert check.message.startswith("last Stop-hook run 2026-11-30T11:00:00Z: ok, 2 replies "
                                    "recorded; 1 Stop-hook run logged"), check.message


def test_a_log_with_only_background_lines_has_no_stop_hook_run(tmp_path):
    inputs = healthy_home(tmp_path)
    os.unlink(inputs.log_path) if os.path.exists(inputs.log_path) else None
    append_entry(inputs.log_path, {"event": "quarantine", "at": "2026-11-30T11:00:01Z",
                                   "status": "error", "error": "database is locked"})
    check = next(c for c in run_checks(inputs) if c.name == "hook-runs")
    assert check.status == "warning" and "no Stop-hook run logged yet" in check.message, check


def test_a_busy_last_run_is_no_failure(tmp_path):
    from memcite.codex.stop_hook import BUSY_REASON

    inputs = healthy_home(tmp_path)
    append_entry(inputs.log_path, {"event": "stop", "at": "2026-11-30T11:00:00Z",
                                   "status": "busy", "reason": BUSY_REASON})
    check = {c.name: c for c in run_checks(inputs)}["hook-runs"]
    assert check.status == "ok", check
    assert "busy" in check.message and "nothing was lost" in check.message
