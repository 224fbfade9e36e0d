"""What each consolidation did to the memories in use, against the real Codex: the mock model is
the consolidation agent of two runs on a home whose MEMORY.md lines were cited. The second
run rewords one cited line, drops another, changes a number in a third, adds a line with a
path found in no source, and absorbs an ad-hoc note; ``memcite consolidation`` reports the
four findings and the note's receipt, and nothing else. With memory store v2 on, its
readiness is judged as the app server's ``memory/status`` does."""

from __future__ import annotations

import json
import sqlite3

import pytest
from mock_model import MockModel, Turn, message_turn
from test_e2e_consolidation import AfterTheAgent, forget_jobs, is_agent, job_row

from conftest import CodexWorld, assert_ran

T1 = "019a0000-0000-7000-8000-0000000000c1"
BEFORE = (
    "# Task Group: build tooling\n"
    "applies_to: cwd=/work/app; reuse_rule=same repository\n"
    "\n"
    "## Reusable knowledge\n"
    "- Run the tests with `make check` before every push.\n"
    "- The staging server answers on port 8443 behind the proxy.\n"
    "- Release notes live in docs/releases.md and are written by hand.\n"
    "- The move of staging to port 9443 is planned for the spring.\n"
)
SECOND_RUN = (  # the hunk the agent applies in the second run
    "@@\n"
    "-- Run the tests with `make check` before every push.\n"
    "-- The staging server answers on port 8443 behind the proxy.\n"
    "-- Release notes live in docs/releases.md and are written by hand.\n"
    "+- Run the tests with `make check` before each push.\n"
    "+- The staging server answers on port 9443 behind the proxy.\n"
    "+- Deploy keys are kept in /srv/keys/deploy.pem on the build host.\n"
    "+- Keep commits small: one change in each commit.\n"
    " - The move of staging to port 9443 is planned for the spring.\n"
)
NOTE_NAME = "2026-01-04T10-00-00-small-commits.md"
NOTE = "Keep commits small: one change in each commit.\n"
REPLY = ("Run make check first.\n\n<oai-mem-citation>\n<citation_entries>\n"
         "MEMORY.md:5-7|note=[build tooling]\n</citation_entries>\n<rollout_ids>\n"
         f"{T1}\n</rollout_ids>\n</oai-mem-citation>")


class Writer:
    """The mock's consolidation agent: each run applies ``patch`` with one tool call, then
    answers."""

    def __init__(self):
        self.patch = ""
        self.done = None

    def __call__(self, body: dict):
        if not is_agent(body):
            return None
        if any(item.get("type") == "custom_tool_call_output" for item in body.get("input", [])):
            self.done.set()
            return message_turn("Consolidated.")
        script = f"text(JSON.stringify(await tools.apply_patch({json.dumps(self.patch)})));"
        return Turn([{"type": "response.output_item.done", "item": {
            "type": "custom_tool_call", "call_id": "call-consolidate", "name": "exec",
            "input": script}}])


@pytest.fixture
def writer():
    return Writer()


@pytest.fixture
def world(tmp_path, codex, writer):
    import threading

    writer.done = threading.Event()
    with MockModel(responder=writer) as mock:
        yield CodexWorld(tmp_path, codex, mock)


def consolidate(world: CodexWorld, writer: Writer, patch: str, *, store: str = "v1",
                status: tuple = ("done", None)) -> None:
    """One `codex exec` whose session stays until the agent has applied ``patch``."""
    writer.patch = patch
    writer.done.clear()
    world.model.queue(AfterTheAgent(writer.done))
    agents = sum(map(is_agent, world.model.requests))
    assert_ran(world.exec("hello"))
    assert sum(map(is_agent, world.model.requests)) > agents, "no consolidation ran"
    if store == "v1":
        assert job_row(world)["status"] == "done", job_row(world)
        return
    with sqlite3.connect(world.codex_home / "memories_v2_1.sqlite") as db:
        found = db.execute("SELECT status, last_error FROM jobs WHERE kind ="
                           " 'memory_consolidate_global'").fetchone()
    db.close()
    assert found == status, found


def add(path, text: str) -> str:
    return f"*** Add File: {path}\n" + "".join(f"+{line}\n" for line in text.splitlines())


def report(world: CodexWorld, code: int) -> dict:
    done = world.memcite("consolidation", "--codex-home", str(world.codex_home), "--json",
                         check=False)
    assert done.returncode == code, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_the_second_run_is_reported_finding_by_finding_and_nothing_else(world, writer):
    root = world.memories
    consolidate(world, writer, "*** Begin Patch\n" + add(root / "MEMORY.md", BEFORE)
                + add(root / "memory_summary.md", "v1\nBuild tooling notes.\n")
                + "*** End Patch")
    assert (root / "MEMORY.md").read_text() == BEFORE
    reply = world.work / "reply.txt"
    reply.write_text(REPLY)
    world.memcite("record", "--codex-home", str(world.codex_home), str(reply))
    first = report(world, 0)["memory_runs"][0]
    assert first["snapshots"] == 1 and first["runs"] == [] and first["history_note"]

    notes = root / "extensions" / "ad_hoc" / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    (notes / NOTE_NAME).write_text(NOTE)
    forget_jobs(world)
    consolidate(world, writer, f"*** Begin Patch\n*** Update File: {root / 'MEMORY.md'}\n"
                + SECOND_RUN + "*** End Patch")
    assert "/srv/keys/deploy.pem" in (root / "MEMORY.md").read_text()

    out = report(world, 1)
    (run,) = out["memory_runs"][0]["runs"]
    assert run["counts"] == {"lost": 1, "lost_unexpected": 1, "rewritten": 1, "unsupported": 1,
                             "came_back": 0, "notes_absorbed": 1, "notes_not_absorbed": 0}
    (lost,) = run["lost"]
    assert (lost["line"], lost["why"], lost["threads"]) == (7, "unexpected", [T1])
    assert "docs/releases.md" in lost["text"]
    (rewritten,) = run["rewritten"]
    assert (rewritten["line"], rewritten["facts_gone"], rewritten["facts_new"]) == \
        (6, ["number:8443"], ["number:9443"])
    (unsupported,) = run["unsupported"]
    assert unsupported["facts"] == ["path:/srv/keys/deploy.pem"]
    (note,) = run["notes"]
    assert (note["note"], note["absorbed"], note["lines"]) == \
        (NOTE_NAME, True, [{"file": "MEMORY.md", "line": 8}])
    assert run["findings"] == 3 and run["jobs"]["consolidation"] == "done"
    assert run["growth"]["lines"] == 1
    text = world.memcite("consolidation", "--codex-home", str(world.codex_home),
                         check=False).stdout
    assert "lost in use (UNEXPECTED): MEMORY.md:7" in text
    assert f"note {NOTE_NAME}: absorbed into MEMORY.md:8" in text


def test_v2_readiness_as_memory_status_judges_it(world, writer):
    """Codex fails a v2 run whose summary lacks the required headings, and memcite calls that
    summary invalid; the next run writes them, Codex succeeds, memcite calls it valid."""
    world.append_config('version = "v2"\n')  # under [memories]
    summary = world.codex_home / "memories_v2" / "memory_summary.md"
    consolidate(world, writer, "*** Begin Patch\n" + add(summary, "v1\nBuild tooling.\n")
                + "*** End Patch", store="v2", status=("error", "failed_invalid_artifacts"))
    ready = report(world, 1)["v2_readiness"]
    assert (ready["summary_valid"], ready["summary_state"], ready["ready"]) == \
        (False, "missing ## User Profile", False)
    forget_jobs_v2(world)
    body = ("v1\n## User Profile\nA developer.\n## User preferences\n- Short answers.\n"
            "## General Tips\n- Run the tests first.\n## What's in Memory\n### app\n")
    hunk = "@@\n v1\n-Build tooling.\n" + "".join(f"+{line}\n" for line in body.splitlines()[1:])
    consolidate(world, writer, f"*** Begin Patch\n*** Update File: {summary}\n" + hunk
                + "*** End Patch", store="v2")
    ready = report(world, 0)["v2_readiness"]
    assert (ready["summary_valid"], ready["consolidated_threads"], ready["ready"]) == \
        (True, 0, False)
    assert ready["db_present"] and ready["min_consolidated_threads"] == 20


def forget_jobs_v2(world: CodexWorld) -> None:
    """Skip Codex's back-off after the failure (memories_v2_1.sqlite's jobs)."""
    with sqlite3.connect(world.codex_home / "memories_v2_1.sqlite") as db:
        db.execute("DELETE FROM jobs")
    db.close()
