"""``memcite lint`` through Typer, the fast path and a real process; ``--hook`` with Codex payloads."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.cli.lint_commands import lint_hook
from memcite.lint.hook_paths import candidate_paths, touched_memory_files

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "lint"
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A copy of one golden case as the Codex home (CODEX_HOME), chosen by the test."""

    def make(case: str) -> Path:
        target = tmp_path / case
        shutil.copytree(CORPUS / case, target)
        (target / "expected.txt").unlink()
        monkeypatch.setenv("CODEX_HOME", str(target))
        return target

    monkeypatch.delenv("MEMCITE_NO_FASTPATH", raising=False)
    return make


def run_cli(*args: str, input: bytes | None = None):
    return CliRunner().invoke(app, list(args), input=input)


def run_process(args, input: bytes | None = None, extra_env=None, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(SRC), **(extra_env or {})}
    return subprocess.run([sys.executable, "-m", "memcite", *args], input=input, capture_output=True,
                          env=env, cwd=cwd, timeout=60)


def test_a_clean_home_exits_0(home):
    home("clean_home")
    result = run_cli("lint")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "0 errors, 0 warnings in 6 files" in result.stderr


def test_findings_exit_1_with_file_line_column_and_hint(home):
    root = home("tiers")
    result = run_cli("lint")
    assert result.exit_code == 1
    first = result.stdout.splitlines()[:2]
    assert first == [f"{root}/memories/MEMORY.md:4:3: error: [CROE] is not a tier [tier-unknown]",
                     "  hint: write [CORE] (tiers: CORE, IMP, SEC, IRR)"]


def test_warnings_alone_exit_0_unless_strict(home):
    home("provenance")
    assert run_cli("lint").exit_code == 0
    assert run_cli("lint", "--strict").exit_code == 1


def test_paths_and_codex_home_option(home, tmp_path):
    root = home("clean_home")
    other = home("tiers")
    assert run_cli("lint", "--codex-home", str(root)).exit_code == 0
    assert run_cli("lint", str(root / "memories"), str(root / "memory")).exit_code == 0
    assert run_cli("lint", str(other / "memories" / "MEMORY.md")).exit_code == 1


def test_nothing_to_lint_is_said_and_exits_0(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "none"))
    result = run_cli("lint")
    assert result.exit_code == 0
    assert "nothing to lint" in result.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["lint", "/no/such/folder"], "/no/such/folder: no such file or folder"),
        (["lint", "--format", "xml"], "--format: 'xml' is not one of text, github"),
        (["lint", "--json", "--format", "github"], "--json and --format github cannot be used together"),
    ],
)
def test_bad_usage_exits_2(home, args, message):
    home("clean_home")
    result = run_cli(*args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_json_output(home):
    root = home("supersession")
    result = run_cli("lint", "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert set(data) == {"checked_at", "checked_at_iso", "paths", "files", "errors", "warnings", "findings"}
    assert data["paths"] == [str(root / "memories"), str(root / "memory")]
    assert data["checked_at_iso"].endswith("Z") and isinstance(data["checked_at"], int)
    assert (data["errors"], data["warnings"]) == (8, 2)
    assert data["findings"][0] == {
        "code": "supersession-dangling", "severity": "error", "path": str(root / "memories" / "MEMORY.md"),
        "line": 5, "column": 3, "message": "superseded_by: 'Decision: Use SOAP' matches no entry's id, "
        "title or decision", "hint": "name the replacing entry exactly as its title (text before ' — ') or its id"}


def test_github_annotations(home):
    root = home("summary_bom")
    result = run_cli("lint", "--format", "github", str(root / "memories" / "memory_summary.md"))
    assert result.exit_code == 1
    assert result.stdout == (
        f"::error file={root}/memories/memory_summary.md,line=1,col=1,title=memcite summary-not-v1::"
        "the first line is '\\ufeffv1', not 'v1' (Codex's consolidation fails when the summary it "
        "leaves does not begin with v1 (Codex still injects the file))\n")


@pytest.mark.parametrize("args", [["lint"], ["lint", "--json"], ["lint", "--strict", "--format", "github"],
                                  ["lint", "memories"], ["lint", "memories", "memory/global/memory.md"]])
def test_fast_path_and_typer_print_the_same_bytes(home, args):
    root = home("supersession")
    (root / "memory" / "global").mkdir()
    (root / "memory" / "global" / "memory.md").write_text("- [core] x\n")
    fast = run_process(args, cwd=root)
    slow = run_process(args, cwd=root, extra_env={"MEMCITE_NO_FASTPATH": "1"})
    assert fast.returncode == slow.returncode == 1
    if "--json" in args:
        drop = ("checked_at", "checked_at_iso")
        assert {k: v for k, v in json.loads(fast.stdout).items() if k not in drop} == \
            {k: v for k, v in json.loads(slow.stdout).items() if k not in drop}
    else:
        assert fast.stdout == slow.stdout and fast.stderr == slow.stderr


# --------------------------------------------------------------------------- --hook


def _payload(tool_input, cwd="/", tool_name="apply_patch"):
    return json.dumps({"session_id": "s", "turn_id": "t", "transcript_path": None, "cwd": cwd,
                       "hook_event_name": "PostToolUse", "model": "m", "permission_mode": "default",
                       "tool_name": tool_name, "tool_input": tool_input, "tool_response": "ok"}).encode()


def test_hook_exits_2_with_findings_when_a_memory_file_was_patched(home):
    root = home("tiers")
    patch = "*** Begin Patch\n*** Update File: memories/MEMORY.md\n@@\n-x\n+y\n*** End Patch\n"
    done = run_process(["lint", "--hook"], input=_payload({"input": patch}, cwd=str(root)))
    assert done.returncode == 2
    assert done.stdout == b""
    err = done.stderr.decode()
    assert err.startswith("memcite lint: the memory files just changed have problems; fix them:\n")
    assert f"{root}/memories/MEMORY.md:4:3: error: [CROE] is not a tier [tier-unknown]" in err
    assert "memory/projects" not in err  # only the files the tool touched are reported
    assert "tier-conflict" not in err  # warnings only with --strict


@pytest.mark.parametrize(
    "tool_name, tool_input",
    [
        ("shell", {"command": ["bash", "-lc", "sed -i 's/a/b/' {home}/memories/MEMORY.md"]}),
        ("exec_command", {"cmd": "cat >> '{home}/memories/MEMORY.md' <<EOF\nx\nEOF"}),
        ("write", {"path": "{home}/memories/MEMORY.md", "content": "..."}),
        ("mcp__fs__edit", {"edits": [{"file": "file://{home}/memories/MEMORY.md"}]}),
        ("apply_patch", "*** Begin Patch\n*** Update File: {home}/memory/projects/api-0123456789ab/memory.md\n"),
    ],
)
def test_hook_finds_memory_paths_in_any_tool_input(home, tool_name, tool_input):
    root = home("tiers")
    text = json.dumps(tool_input).replace("{home}", str(root))
    code, err = _hook(_payload(json.loads(text), tool_name=tool_name), [])
    assert code == 2 and "[tier-unknown]" in err


@pytest.mark.parametrize(
    "tool_input",
    [
        {"command": ["bash", "-lc", "ls /etc && git status"]},
        {"input": "*** Begin Patch\n*** Update File: src/app.py\n"},
        {"path": "/elsewhere/memory/notes.txt"},
        "",
        None,
    ],
)
def test_hook_stays_silent_when_no_memory_file_was_touched(home, tool_input):
    root = home("tiers")
    assert _hook(_payload(tool_input, cwd=str(root)), []) == (0, "")


def test_hook_stays_silent_when_the_touched_file_is_clean(home):
    root = home("clean_home")
    assert _hook(_payload({"path": str(root / "memories" / "MEMORY.md")}), []) == (0, "")


def test_hook_with_strict_reports_warnings(home):
    root = home("provenance")
    payload = _payload({"path": str(root / "memories" / "MEMORY.md")})
    assert _hook(payload, [])[0] == 0
    code, err = _hook(payload, [], strict=True)
    assert code == 2 and "[provenance-missing]" in err


def test_hook_lints_a_memory_md_outside_the_codex_home(home, tmp_path):
    home("clean_home")
    folder = tmp_path / "repo" / "notes"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("- [CROE] x\n")
    code, err = _hook(_payload({"input": "*** Update File: notes/MEMORY.md\n"}, cwd=str(tmp_path / "repo")), [])
    assert code == 2 and "notes/MEMORY.md:1:3" in err


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1, 2", b"\xff\xfe", b"null", b"42", b'"MEMORY.md"',
                                   b"[" * 100_000 + b"]" * 100_000])
def test_hook_never_fails_on_odd_payloads(home, stdin):
    home("tiers")
    done = run_process(["lint", "--hook"], input=stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def _hook(payload: bytes, paths, strict=False):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = lint_hook(paths, strict=strict, stdin=io.BytesIO(payload))
    return code, err.getvalue()


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(alphabet=st.sampled_from("ab/.*: \n-MEMORY.mdmemories_summary~\x00"), max_size=40),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@given(_json)
def test_hook_property_any_json_payload_exits_0_or_2_and_prints_only_with_2(payload):
    root = str(CORPUS / "tiers")
    code, err = _hook(json.dumps(payload).encode(), [root + "/memories", root + "/memory"])
    assert code in (0, 2)
    assert (err != "") == (code == 2)


@given(_json)
def test_touched_files_are_memory_files(payload):
    root = str(CORPUS / "tiers" / "memories")
    for path in touched_memory_files(payload, [root], cwd=root):
        assert os.path.isabs(path)
        assert path.endswith((".md",)) or "/extensions/ad_hoc/notes/" in path


def test_candidate_paths_table():
    payload = {"input": "*** Begin Patch\n*** Add File: a/MEMORY.md\n*** Move to: memories/b.md\n",
               "command": ["bash", "-lc", "cp x ~/.codex/memories/MEMORY.md; echo done"],
               "path": "/home/me/my memory/notes.md"}
    assert candidate_paths(payload) == [
        "a/MEMORY.md", "memories/b.md", "cp x ~/.codex/memories/MEMORY.md; echo done",
        "~/.codex/memories/MEMORY.md", "/home/me/my memory/notes.md", "memory/notes.md"]


def test_the_hook_imports_no_typer(home):
    root = home("tiers")
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "memcite", "lint", "--hook"],
                          input=_payload({"path": str(root / "memories" / "MEMORY.md")}), capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(SRC)}, timeout=60)
    assert done.returncode == 2
    imported = done.stderr.decode()
    for module in ("typer", "click", "rich", "pydantic", "lark", "tiktoken"):
        assert f" {module}\n" not in imported and f" {module}." not in imported, module
