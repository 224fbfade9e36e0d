"""``setup codex`` then ``setup codex --remove`` gives back every file as it found it, byte for
byte (or its absence): a compact one-line ``hooks.json`` stays one line, an empty ``AGENTS.md``
stays, and a file that held only what setup adds goes without a backup."""

from __future__ import annotations

import json
import os
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcite.codex.setup import apply_plan, plan_setup

NOW = 1_800_000_000
USER_HOOK = {"type": "command", "command": "notify.sh", "timeout": 5}
CONFIG = '# kept by hand\nmodel = "gpt-5-codex"\n\n[features]\nmemories = true\n'


def _hooks_documents():
    groups = st.lists(st.fixed_dictionaries({"hooks": st.just([USER_HOOK])}), max_size=2)
    events = st.dictionaries(st.sampled_from(["Stop", "PreToolUse", "PostToolUse"]), groups,
                             max_size=3)
    return st.one_of(st.just({}), events.map(lambda hooks: {"hooks": hooks}),
                     events.map(lambda hooks: {"hooks": hooks, "version": 1}))


@st.composite
def hooks_texts(draw):
    document = draw(_hooks_documents())
    style = draw(st.sampled_from(["compact", "spaced", 2, 4, "\t"]))
    if style == "compact":
        text = json.dumps(document, separators=(",", ":"))
    elif style == "spaced":
        text = json.dumps(document)
    else:
        text = json.dumps(document, indent=style)
    return text + ("\n" if draw(st.booleans()) else "")


STATES = st.fixed_dictionaries({
    "hooks.json": st.none() | hooks_texts(),
    "config.toml": st.sampled_from([None, "", CONFIG, CONFIG.rstrip("\n")]),
    "memory/AGENTS.md": st.sampled_from([None, "", "# Notes\n", "# Notes"]),
    "project/AGENTS.md": st.sampled_from([None, "", "Be brief.\n", "\n"]),
})


def _write(root: str, state: dict) -> None:
    for name in ("memory", "project", "codex"):
        os.makedirs(os.path.join(root, name), exist_ok=True)
    for relative, text in state.items():
        path = _path(root, relative)
        if text is not None:
            with open(path, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)


def _path(root: str, relative: str) -> str:
    return os.path.join(root, relative if "/" in relative else os.path.join("codex", relative))


def _read(root: str, relative: str) -> str | None:
    path = _path(root, relative)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def _round_trip(root: str, **options) -> None:
    folders = {"memory_folder": os.path.join(root, "memory"),
               "project_folder": os.path.join(root, "project")}
    codex = os.path.join(root, "codex")
    apply_plan(plan_setup(codex, mcp=True, gate=True, governance=True, **folders, **options),
               now=NOW)
    apply_plan(plan_setup(codex, remove=True, **folders), now=NOW + 60)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STATES)
def test_apply_then_remove_gives_back_every_files_bytes(state):
    with tempfile.TemporaryDirectory() as root:
        _write(root, state)
        _round_trip(root)
        for relative, text in state.items():
            assert _read(root, relative) == text, relative


def test_a_compact_hooks_json_comes_back_on_one_line(tmp_path):
    """Seen: indented after `--gate --apply` then `--remove --apply`."""
    text = json.dumps({"hooks": {"Stop": [{"hooks": [USER_HOOK]}]}}, separators=(",", ":"))
    _write(str(tmp_path), {"hooks.json": text})
    _round_trip(str(tmp_path))
    assert _read(str(tmp_path), "hooks.json") == text


def test_a_compact_hooks_json_stays_on_one_line_with_memcite_s_hooks(tmp_path):
    text = json.dumps({"hooks": {}}, separators=(",", ":"))
    _write(str(tmp_path), {"hooks.json": text})
    codex = os.path.join(str(tmp_path), "codex")
    apply_plan(plan_setup(codex, gate=True), now=NOW)
    after = _read(str(tmp_path), "hooks.json")
    assert "\n" not in after and '"PreToolUse"' in after and ": " not in after


def test_an_empty_agents_md_that_was_there_stays(tmp_path):
    _write(str(tmp_path), {"memory/AGENTS.md": "", "project/AGENTS.md": ""})
    _round_trip(str(tmp_path))
    assert _read(str(tmp_path), "memory/AGENTS.md") == ""
    assert _read(str(tmp_path), "project/AGENTS.md") == ""


def test_a_file_that_held_only_memcite_s_part_goes_without_a_backup(tmp_path):
    """Issue 33: `--remove --apply` left backups beside files setup had created."""
    root = str(tmp_path)
    _write(root, {})
    _round_trip(root)
    for folder in ("codex", "memory", "project"):
        assert os.listdir(os.path.join(root, folder)) == [], folder


def test_without_a_backup_the_layout_is_still_kept(tmp_path):
    """The backups deleted by hand: the removal still writes the file in its own layout."""
    text = json.dumps({"hooks": {"Stop": [{"hooks": [USER_HOOK]}]}}, separators=(",", ":"))
    _write(str(tmp_path), {"hooks.json": text})
    codex = os.path.join(str(tmp_path), "codex")
    apply_plan(plan_setup(codex, gate=True), now=NOW)
    for name in os.listdir(codex):
        if ".memcite-backup-" in name:
            os.unlink(os.path.join(codex, name))
    apply_plan(plan_setup(codex, remove=True), now=NOW + 60)
    assert _read(str(tmp_path), "hooks.json") == text
