"""The table of ``apply_patch`` cases (``tests/apply_patch_cases.py``) against the real Codex:
what the binary writes for each patch is what the table says, and what
``memcite.codex.apply_patch`` (the gate's reading) predicts.

Two ways in: the binary's own ``apply_patch`` entry (Codex runs itself under that name to
apply a patch; it reads the patch on stdin), for every case; and a model turn whose
``exec_command`` runs ``apply_patch <<'EOF' ... EOF``, which Codex takes over and applies
itself (seen with Codex 0.171: ``patch: completed``), for the cases the gate is about.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from apply_patch_cases import CASES, simulate
from conftest import assert_ran

BY_NAME = {case.name: case for case in CASES}
THROUGH_A_TURN = ["header led by spaces", "header led by U+2028", "separators inside a line",
                  "move", "move with context only", "megabyte of leading blank lines",
                  "CRLF file", "blank line inside an added file"]


def native_codex(codex: str) -> str:
    """The Codex binary itself (the npm package's ``codex`` is a Node wrapper that starts it)."""
    real = Path(os.path.realpath(codex))
    with open(real, "rb") as handle:
        if handle.read(4) == b"\x7fELF":
            return str(real)
    for parent in real.parents:
        if parent.name == "node_modules":
            found = sorted(parent.glob("@openai/codex-*/vendor/*/bin/codex"))
            assert found, f"no Codex binary under {parent}"
            return str(found[0])
    raise AssertionError(f"{codex}: not a Codex binary nor inside its npm package")


def _plant(folder: Path, files: dict) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(text.encode())


def _files(folder: Path) -> dict:
    found = {}
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            path = Path(root) / name
            found[str(path.relative_to(folder))] = path.read_bytes().decode()
    return found


@pytest.fixture(scope="module")
def apply_patch_entry(codex, tmp_path_factory) -> str:
    """``apply_patch``: the Codex binary under the name it answers to as the patch applier."""
    entry = tmp_path_factory.mktemp("bin") / "apply_patch"
    entry.symlink_to(native_codex(codex))
    return str(entry)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_codex_writes_what_the_table_says(apply_patch_entry, tmp_path, case):
    work = tmp_path / "work"
    work.mkdir()
    _plant(work, case.files)
    done = subprocess.run([apply_patch_entry], input=case.patch.encode(), cwd=work,
                          capture_output=True, timeout=60)
    written = _files(work)
    status = "applied" if done.returncode == 0 else \
        ("stopped" if written != case.files else "refused")
    assert (status, written) == (case.status, case.after), done.stderr.decode()[-500:]
    assert simulate(case.patch, case.files) == (status, written)


@pytest.mark.parametrize("name", THROUGH_A_TURN)
def test_a_model_s_patch_lands_as_the_table_says(world, name):
    case = BY_NAME[name]
    _plant(world.work, case.files)
    world.model.call_tool("exec_command", {"cmd": f"apply_patch <<'EOF'\n{case.patch}\nEOF\n"})
    world.model.reply("Patched.")
    assert_ran(world.exec("patch the notes", "--sandbox", "danger-full-access"))
    assert _files(world.work) == case.after
    assert simulate(case.patch, case.files)[1] == case.after


def test_a_patch_run_through_exec_command_reaches_the_hook_as_bash(world):
    """Codex takes over ``apply_patch <<'EOF'`` in a shell command and applies it itself, but
    its PreToolUse hook sees a ``Bash`` call (seen with Codex 0.171): the gate reads the
    patch out of the command (``memory_gate.payload_patch``)."""
    import json

    from test_e2e_memory_gate import trust_every_hook

    from memcite.codex.memory_gate import payload_patch

    log = world.root / "hooks"
    log.mkdir()
    script = world.root / "keep.sh"
    script.write_text(f"#!/bin/bash\ncat > {log}/$(date +%s%N)-$$.json\n")
    script.chmod(0o755)
    (world.codex_home / "hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"hooks": [{"type": "command", "command": str(script), "timeout": 10}]}]}}))
    trust_every_hook(world)
    case = BY_NAME["header led by spaces"]
    world.model.call_tool("exec_command", {"cmd": f"apply_patch <<'EOF'\n{case.patch}\nEOF\n"})
    world.model.reply("Patched.")
    assert_ran(world.exec("patch the notes", "--sandbox", "danger-full-access"))
    assert _files(world.work) == case.after
    (payload,) = [json.loads(path.read_text()) for path in sorted(log.iterdir())]
    assert payload["tool_name"] == "Bash" and payload["cwd"] == str(world.work)
    patch, cwd = payload_patch(payload)
    assert cwd == str(world.work) and simulate(patch, case.files) == (case.status, case.after)
