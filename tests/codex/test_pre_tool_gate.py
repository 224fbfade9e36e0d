"""`memcite hook pre-tool`: payload shapes, Codex's output contract, never blocking by default,
its own errors never blocking."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from memcite.cli import gate_commands
from memcite.codex import pre_tool_gate as gate
from memcite.notes import events
from memcite.notes.storage import locate_note

PATCH = ("*** Begin Patch\n*** Update File: src/sync.py\n@@\n-a\n+b\n"
         "*** Add File: docs/new.md\n+x\n*** Delete File: old.txt\n*** End Patch\n")


@pytest.fixture
def project(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "src" / "sync.py").write_text("a\n")
    home = tmp_path / "codex"
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("MEMCITE_HOME", str(tmp_path / "mh"))
    location = locate_note(str(repo), str(home))
    events.add_event(location, kind="failure", text="`pytest -n 8` deadlocks in the sync tests",
                     files=["src/sync.py"], now=1_800_000_000)
    return repo, home


def run(payload, home, block=None) -> tuple[int, str]:
    out = io.StringIO()
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    code = gate_commands.hook_pre_tool(codex_home=str(home), block=block, stdin=io.BytesIO(data),
                              stdout=out)
    return code, out.getvalue()


def test_patch_headers_shell_words_and_path_arguments():
    assert gate.patch_files(PATCH) == ["src/sync.py", "docs/new.md", "old.txt"]
    files, command = gate.touched("Bash", {"command": "sed -i s/a/b/ src/sync.py && make"})
    assert "src/sync.py" in files and command == "sed -i s/a/b/ src/sync.py && make"
    files, command = gate.touched("shell", {"command": ["bash", "-lc", "cat 'src/x.py'"]})
    assert files == ["src/x.py"] and command == "cat src/x.py"
    files, _ = gate.touched("mcp__fs__write", {"path": "a/b.txt", "content": "x"})
    assert files == ["a/b.txt"]
    assert gate.touched("apply_patch", {"command": PATCH}) == (
        ["src/sync.py", "docs/new.md", "old.txt"], None)
    assert gate.touched("Bash", {"command": "echo unbalanced 'quote"})[1] == "echo unbalanced 'quote"


def test_a_patch_touching_a_failed_file_gets_context_not_a_block(project):
    repo, home = project
    code, out = run({"cwd": str(repo), "tool_name": "apply_patch",
                     "tool_input": {"command": PATCH}}, home)
    assert code == 0
    output = json.loads(out)["hookSpecificOutput"]
    assert output["hookEventName"] == "PreToolUse"
    assert "permissionDecision" not in output
    assert "src/sync.py: failed before" in output["additionalContext"]


def test_a_repeated_failed_command_is_named(project):
    repo, home = project
    code, out = run({"cwd": str(repo / "src"), "tool_name": "Bash",
                     "tool_input": {"command": "pytest   -n 8 tests/"}}, home)
    assert "`pytest -n 8` was recorded as a failed approach" in \
        json.loads(out)["hookSpecificOutput"]["additionalContext"]


def test_nothing_known_prints_nothing(project, tmp_path):
    repo, home = project
    assert run({"cwd": str(repo), "tool_name": "Bash", "tool_input": {"command": "ls"}},
               home) == (0, "")
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert run({"cwd": str(other), "tool_name": "Bash",
                "tool_input": {"command": "cat src/sync.py"}}, home) == (0, "")


def test_blocks_only_what_the_person_configured(project):
    repo, home = project
    payload = {"cwd": str(repo), "tool_name": "apply_patch", "tool_input": {"command": PATCH}}
    _, out = run(payload, home, block="fragile")
    assert "permissionDecision" not in out  # a failure, not a fragile mark
    _, out = run(payload, home, block="failures")
    output = json.loads(out)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny" and output["permissionDecisionReason"]


@pytest.mark.parametrize("payload", [b"", b"not json", b"[1]", b'{"cwd": 3}',
                                     b'{"cwd": "relative", "tool_name": "Bash"}',
                                     b'{"cwd": "/", "tool_input": "x"}' + b" " * 10])
def test_errors_never_block(project, payload):
    _, home = project
    assert run(payload, home, block="all") == (0, "")


def test_a_damaged_index_or_bad_block_option_never_blocks(project):
    repo, home = project
    location = locate_note(str(repo), str(home))
    folder = events.gate_dir_of(location.project_dir)
    for name in os.listdir(folder):
        with open(os.path.join(folder, name), "w") as handle:
            handle.write("{broken")
    payload = {"cwd": str(repo), "tool_name": "apply_patch", "tool_input": {"command": PATCH}}
    assert run(payload, home, block="all") == (0, "")
    assert run(payload, home, block="nonsense") == (0, "")
    log = open(os.path.join(os.environ["MEMCITE_HOME"], "hooks.log")).read() \
        if os.path.exists(os.path.join(os.environ["MEMCITE_HOME"], "hooks.log")) else ""
    assert log == "" or "error" in log


def test_the_command_on_the_fast_path_prints_codex_output(project):
    repo, home = project
    payload = json.dumps({"cwd": str(repo), "tool_name": "apply_patch",
                          "tool_input": {"command": PATCH}})
    done = subprocess.run([sys.executable, "-m", "memcite", "hook", "pre-tool", "--unknown"],
                          input=payload.encode(), capture_output=True, check=False,
                          env={**os.environ, "CODEX_HOME": str(home)})
    assert done.returncode == 0 and done.stderr == b""
    assert "additionalContext" in json.loads(done.stdout)["hookSpecificOutput"]
    assert "typer" not in sys.modules or True
    probe = subprocess.run(
        [sys.executable, "-c", "import sys, io; from memcite.cli import fastpath; "
         "sys.stdin = io.TextIOWrapper(io.BytesIO(b'{}')); "
         "fastpath.run(['hook', 'pre-tool']); "
         "print(sorted(m for m in ('typer', 'pydantic', 'memcite.notes.storage') "
         "if m in sys.modules))"],
        capture_output=True, check=False, text=True)
    assert probe.stdout.strip().endswith("[]"), probe.stdout + probe.stderr


@pytest.mark.parametrize("patch, files", [
    ("*** Begin Patch\n  *** Update File: a.py\n*** Move to: b.py\n@@\n-x\n+y\n*** End Patch",
     ["a.py", "b.py"]),
    ("*** Begin Patch\n\u2028*** Add File: c.md\n+x\u2028*** Add File: d.md\n*** End Patch",
     ["c.md"]),  # the second header is inside a line: Codex splits on \n only
    ("\n" * 1000 + "*** Begin Patch\n\t*** Delete File: e.md\n*** End Patch", ["e.md"]),
    ("*** Begin Patch\n  *** Add File: f.md\n+x\n\n+y\n*** End Patch", ["f.md"]),  # refused
])
def test_patch_files_as_codex_reads_the_headers(patch, files):
    assert gate.patch_files(patch) == files
