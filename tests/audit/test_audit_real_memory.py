"""``memcite audit`` on memory folders shaped like the ones Codex writes for real users.

Each case is a synthetic folder of our own wording with the shape a real folder showed (the
real folders are evaluation data, never quoted here): Codex's own names in every MEMORY.md,
settings and file names in rollout summaries, secrets only found with the line before them,
logins kept in ad-hoc notes, skills, a MEMORY.md that is not valid UTF-8.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from memcite.audit.memory_audit import audit_home
from memcite.cli.app import app

THREAD = "019b7635-7fb3-7cf8-8f11-6f64065672e0"
SUMMARY = "2026-03-14T09-26-53-Qz7w-orchard_irrigation_clarification_kept_existing_schedule.md"

runner = CliRunner()


def _home(tmp_path, files: dict[str, str | bytes], *, cwd: str = "/srv/orchard"):
    """A Codex home whose memory folder holds one rollout summary (``SUMMARY``) and ``files``."""
    codex = tmp_path / "codex"
    folder = codex / "memories"
    (folder / "rollout_summaries").mkdir(parents=True)
    (folder / "rollout_summaries" / SUMMARY).write_text(
        f"thread_id: {THREAD}\nupdated_at: 2026-03-14T10:00:00Z\ncwd: {cwd}\n\n"
        "# Sprinkler schedule\n\n- The schedule moved to the evening run.\n", encoding="utf-8")
    for name, body in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body, encoding="utf-8")
    return codex


def _secrets(report) -> list[dict]:
    return [f for f in report["findings"] if f["kind"] == "secret"]


# Lines of the shapes real folders hold, none a secret (each gave a "secret" finding before).
NOT_SECRETS = [
    f"- rollout_summaries/{SUMMARY} (cwd=/srv/orchard, rollout_path=/home/dev/.codex/sessions/"
    f"2026/03/14/rollout-2026-03-14T09-26-53-{THREAD}.jsonl, updated_at=2026-03-14T10:00:00+00:00,"
    f" thread_id={THREAD})",
    "- client log `Saved/Logs/Garden/FullLog/2026.08.14-10.22.31_client__qh72mz0pxk5vtr_1.log`",
    r"- logs under `C:\GameApps\StudioEditor(1234)\TrackerExtra\Saved\Logs\Garden\FullLog\2026`",
    "- values `HealthBarMaxShowDistance=2500`, `bIsAllowStageMatching=1`, `NetCullDistance=900`",
    "- the widget `NewGardenWidgetBlueprint2` calls `Server_AddSeedItemToBackpackV2`",
    "- workbook `OrchardPlannerXLS_WITH_MACROS_FIXED_v17_LOGIN_GATE_20260105.xlsm` is final",
    "task_group: GardenTrackerExtra/UGCProjects/Lin_Template",
]


@pytest.mark.parametrize("line", NOT_SECRETS)
def test_codex_s_own_names_and_a_project_s_names_are_no_secret(tmp_path, line):
    codex = _home(tmp_path, {"MEMORY.md": f"# Task Group: orchard\n\n{line}\n",
                             "raw_memories.md": f"# Raw Memories\n\n## Thread `{THREAD}`\n"
                                                f"cwd: /srv/orchard\n\n{line}\n"})
    assert _secrets(audit_home(str(codex), cwd=str(codex))) == []


def test_a_code_block_in_a_rollout_summary_is_no_secret(tmp_path):
    block = "```lua\n" + "".join(f"local v{i} = Spawn.at({i}, {i * 2})\n" for i in range(8)) + "```\n"
    codex = _home(tmp_path, {"rollout_summaries/extra.md": f"thread_id: {THREAD}\n\n{block}"})
    assert _secrets(audit_home(str(codex), cwd=str(codex))) == []


def test_a_secret_found_with_the_line_before_it_is_masked_in_every_excerpt(tmp_path):
    value = "Zq7Vw3Rt9xLp"
    codex = _home(tmp_path, {"raw_memories.md": f"## Thread `{THREAD}`\ncwd: /srv/orchard\n\n"
                                                f"- the staging database password:\n"
                                                f"  {value} - always run the deploy with it.\n"})
    report = audit_home(str(codex), project=str(tmp_path), cwd=str(codex))
    (secret,) = _secrets(report)
    assert secret["where"] == "raw_memories.md:5" and "[REDACTED:password]" in secret["excerpt"]
    assert value not in json.dumps(report)
    for args in (["--json"], []):
        result = runner.invoke(app, ["audit", "--codex-home", str(codex), *args])
        assert result.exit_code == 1 and value not in result.output


@pytest.mark.parametrize(("name", "body", "value"), [
    ("extensions/ad_hoc/notes/2026-05-01T10-00-00-qa-login.md",
     "- QA account for the orchard site: `qa.robin@example.com` with password `{v}`.\n", "Sprout99x"),
    ("extensions/ad_hoc/notes/qa.md", "- test login `qa.robin@example.com` / `{v}`, hidden\n",
     "Seed2024x"),
    ("skills/orchard-deploy/SKILL.md", "# Deploy\n\nlogin: deployer, pwd: {v}\n", "Gard3nia7"),
    ("skills/orchard-deploy/scripts/run.sh", "#!/bin/sh\nexport API_TOKEN={v}\n",
     "tk_9fQ2xLm7Vb3Rw8Zp"),
])
def test_ad_hoc_notes_and_skills_are_audited(tmp_path, name, body, value):
    codex = _home(tmp_path, {"MEMORY.md": "# Task Group: orchard\n\n- nothing secret\n",
                             name: body.format(v=value)})
    report = audit_home(str(codex), cwd=str(codex))
    (secret,) = _secrets(report)
    assert secret["where"].startswith(name + ":") and value not in json.dumps(report)
    assert report["folder_lines"] == 2  # the lines of MEMORY.md alone


def test_a_memory_md_that_is_not_utf8_is_read_and_said_so(tmp_path):
    body = ("# Task Group: orchard\n\n- the pump runs at dawn \xff\xfe here\n"
            "- deploy token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8\n").encode("latin-1")
    codex = _home(tmp_path, {"MEMORY.md": body})
    report = audit_home(str(codex), cwd=str(codex))
    assert report["folder_lines"] == 3
    assert [f["where"] for f in _secrets(report)] == ["MEMORY.md:4"]
    assert any("MEMORY.md: not valid UTF-8 in 2 places" in p for p in report["problems"])


# --------------------------------------------------------------------------- Codex's formats

def _grouped_memory_md(cwd: str, other: str = "/srv/elsewhere") -> str:
    return (f"# Task Group: orchard irrigation\n\nscope: the sprinkler controller\n"
            f"applies_to: cwd={cwd}; reuse_rule=only for this controller's repository\n\n"
            "## Task 1: move the schedule\n\n### rollout_summary_files\n\n"
            f"- rollout_summaries/{SUMMARY} (cwd={cwd}, thread_id={THREAD})\n\n"
            "### keywords\n\n- sprinkler, schedule\n\n"
            "## Reusable knowledge\n\n- The controller restarts after each schedule change.\n\n"
            "## Failures and how to do differently\n\n- Editing the cron table by hand lost "
            "the evening run twice.\n\n"
            f"# Task Group: weather station\n\napplies_to: cwd={other}; reuse_rule=there only\n\n"
            "## Reusable knowledge\n\n- The station reports in kelvin.\n")


@pytest.mark.parametrize(("group_cwd", "thread_cwd", "project"), [
    ("/srv/orchard", "/srv/orchard", "/srv/orchard"),
    ("/srv/orchard tools/main", "/srv/orchard tools/main", "/srv/orchard tools/main"),
    (r"Z:\Orchard Planner ERP", r"\\?\Z:\Orchard Planner ERP", r"Z:\Orchard Planner ERP"),
    (r"\\?\Z:\Orchard Planner ERP", r"Z:\Orchard Planner ERP", r"z:/orchard planner erp/"),
    (r"C:\Users\dev\Orchard", r"\\?\C:\Users\dev\Orchard\firmware", r"C:\Users\dev\Orchard"),
])
def test_a_task_group_s_own_lines_are_never_cross_project(tmp_path, group_cwd, thread_cwd, project):
    codex = _home(tmp_path, {"MEMORY.md": _grouped_memory_md(group_cwd)}, cwd=thread_cwd)
    report = audit_home(str(codex), project=project, cwd=str(codex))
    cross = [f for f in report["findings"] if f["kind"] == "cross-project"]
    assert [f["where"] for f in cross] == ["MEMORY.md:30"]  # the other group's line alone
    assert cross[0]["project"] == "/srv/elsewhere"


@pytest.mark.parametrize(("path", "root", "inside"), [
    (r"\\?\N:\Field Tools\app", r"N:\Field Tools", True),
    (r"n:/field tools", r"N:\Field Tools\\", True),
    (r"\\?\UNC\server\share\repo", r"\\server\share", True),
    (r"N:\Field Toolsmith", r"N:\Field Tools", False),
    ("/srv/orchard/sub/..", "/srv/orchard", True),
    ("/srv/Orchard", "/srv/orchard", False),  # POSIX keeps case
    ("/srv/orchard-two", "/srv/orchard", False),
])
def test_cwds_are_compared_as_codex_writes_them(path, root, inside):
    from memcite.ledger.cwd_match import inside as is_inside

    assert is_inside(path, root) is inside


@pytest.mark.parametrize("line", [18, 22])
def test_trace_follows_a_line_under_any_subheading_to_its_group_s_sources(tmp_path, line):
    from memcite.audit.memory_trace import trace

    codex = _home(tmp_path, {"MEMORY.md": _grouped_memory_md("/srv/orchard")})
    report = trace(str(codex), f"MEMORY.md:{line}", cwd=str(codex))
    assert report["resolved_by"] == "block"
    assert [m["thread_id"] for m in report["memories"]] == [THREAD]


@pytest.mark.parametrize(("origin", "thread_url", "cross"), [
    ("git@github.com:orchard/controller.git", "https://github.com/orchard/controller", False),
    ("https://GitHub.com/orchard/controller.git", "ssh://git@github.com/orchard/controller/", False),
    ("git@github.com:orchard/controller.git", "https://github.com/orchard/weather", True),
    (None, "https://github.com/orchard/controller", True),
])
def test_a_clone_elsewhere_of_the_project_s_repository_is_the_project(tmp_path, origin, thread_url,
                                                                       cross):
    import sqlite3

    codex = _home(tmp_path, {}, cwd="/home/dev/old-checkout/controller")
    with sqlite3.connect(codex / "state_5.sqlite") as db:
        db.execute("CREATE TABLE threads (id TEXT, cwd TEXT, source TEXT, created_at INTEGER,"
                   " git_branch TEXT, git_origin_url TEXT)")
        db.execute("INSERT INTO threads VALUES (?, ?, 'cli', 1767225600, 'main', ?)",
                   (THREAD, "/home/dev/old-checkout/controller", thread_url))
    db.close()
    project = tmp_path / "controller"
    (project / ".git").mkdir(parents=True)
    if origin:
        (project / ".git" / "config").write_text(
            f'[core]\n\tbare = false\n[remote "origin"]\n\turl = {origin}\n'
            '\tfetch = +refs/heads/*:refs/remotes/origin/*\n')
    report = audit_home(str(codex), project=str(project), cwd=str(codex))
    assert bool(report["counts"]["cross-project"]) is cross


def test_a_local_server_s_session_id_is_masked_and_medium(tmp_path):
    """A local MCP server's session id (its run's, on 127.0.0.1) is worth a look, not a key;
    the same id of a remote service is a secret, high."""
    local_id, remote_id = "7f3a91c2d4e5", "c0d9e8f7a6b5"
    codex = _home(tmp_path, {"raw_memories.md": (
        f"## Thread `{THREAD}`\ncwd: /srv/orchard\n\n"
        f"- POST /mcp initialize at http://127.0.0.1:18420/mcp returned `Mcp-Session-Id: {local_id}`\n"
        f"- the vendor portal returned `Mcp-Session-Id: {remote_id}` for the nightly export\n")})
    found = {f["severity"]: f for f in _secrets(audit_home(str(codex), cwd=str(codex)))}
    assert set(found) == {"medium", "high"}, found
    assert local_id not in json.dumps(found) and remote_id not in json.dumps(found)
    assert "this machine" in found["medium"]["message"]
