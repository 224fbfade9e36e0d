"""``memcite consolidation`` and ``memcite archived`` against what the real Codex records of its
memory consolidation: a run that succeeds (the mock consolidation agent writes MEMORY.md and
memory_summary.md with its tools), one that fails (the mock's stream for the agent breaks
off), and memcite's ad-hoc note taken in by the next consolidation."""

from __future__ import annotations

import json
import sqlite3
import threading
import time

import pytest
from mock_model import MockModel, Turn, message_turn

from conftest import CodexWorld, assert_ran

THREADS = [f"019a0000-0000-7000-8000-{n:012x}" for n in range(1, 3)]  # fresh memories
OLD = [f"019a0000-0000-7000-8000-{n:012x}" for n in range(3, 5)]  # past Codex's retention
DAY = 86_400


def is_agent(body: dict) -> bool:
    """A request of the consolidation agent (phase-1 extraction requests say
    ``memory_consolidation`` in their turn metadata too, but not as their subagent)."""
    return (body.get("client_metadata") or {}).get("x-openai-subagent") == "memory_consolidation"


class BrokenStream(Turn):
    """A response that starts and never completes: the model's stream breaks off."""

    def __init__(self):
        super().__init__([])

    def events(self) -> list[dict]:
        return [{"type": "response.created", "response": {"id": "resp-broken"}}]


class AfterTheAgent(Turn):
    """The user's reply, held until the consolidation agent has its last answer: `codex exec`
    exits after its turn and does not wait for the consolidation (a run cut short that way
    fails as failed_agent)."""

    def __init__(self, done: threading.Event):
        super().__init__(message_turn("Done.").items)
        self.done = done

    @property
    def delay(self) -> float:
        self.done.wait(60)
        return 2.0  # Codex writes the job row just after the agent's end

    @delay.setter
    def delay(self, value: float) -> None:
        pass


class Consolidator:
    """The mock's consolidation agent: ``write`` makes the files Codex checks after a run
    (MEMORY.md, memory_summary.md) with one tool call, then answers; ``break`` fails."""

    def __init__(self):
        self.mode = "write"
        self.root = None
        self.done = threading.Event()

    def __call__(self, body: dict):
        if not is_agent(body):
            return None
        if self.mode == "break":
            self.done.set()
            return BrokenStream()
        if any(item.get("type") == "custom_tool_call_output" for item in body.get("input", [])) \
                or (self.root / "MEMORY.md").exists():
            self.done.set()
            return message_turn("Consolidated.")
        patch = ("*** Begin Patch\n"
                 f"*** Add File: {self.root}/MEMORY.md\n+# Memory\n+\n+Nothing to keep yet.\n"
                 f"*** Add File: {self.root}/memory_summary.md\n+v1\n+Nothing to keep yet.\n"
                 "*** End Patch")
        script = f"text(JSON.stringify(await tools.apply_patch({json.dumps(patch)})));"
        return Turn([{"type": "response.output_item.done", "item": {
            "type": "custom_tool_call", "call_id": "call-consolidate", "name": "exec",
            "input": script}}])


@pytest.fixture
def consolidator():
    return Consolidator()


@pytest.fixture
def world(tmp_path, codex, consolidator):
    with MockModel(responder=consolidator) as mock:
        made = CodexWorld(tmp_path, codex, mock)
        consolidator.root = made.memories
        yield made


def run(world: CodexWorld, consolidator: Consolidator, mode: str) -> None:
    """One `codex exec` whose session stays until the consolidation agent is done."""
    consolidator.mode = mode
    consolidator.done.clear()
    world.model.queue(AfterTheAgent(consolidator.done))
    agents = sum(map(is_agent, world.model.requests))
    assert_ran(world.exec("hello"))
    assert sum(map(is_agent, world.model.requests)) > agents, "no consolidation ran"


def job_row(world: CodexWorld) -> dict:
    with sqlite3.connect(world.memories_db()) as db:
        db.row_factory = sqlite3.Row
        row = db.execute("SELECT * FROM jobs WHERE kind = 'memory_consolidate_global'").fetchone()
    db.close()
    return dict(row)


def forget_jobs(world: CodexWorld) -> None:
    """Skip Codex's wait (six hours after a success, an hour after a failure)."""
    with sqlite3.connect(world.memories_db()) as db:
        db.execute("DELETE FROM jobs")
    db.close()


def consolidation(world: CodexWorld, code: int = 0) -> dict:
    done = world.memcite("consolidation", "--codex-home", str(world.codex_home), "--json",
                         check=False)
    assert done.returncode == code, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_a_consolidation_that_ran(world, consolidator):
    run(world, consolidator, "write")
    row = job_row(world)
    # What Codex 0.171 records of a success.
    assert row["job_key"] == "global" and row["status"] == "done" and row["last_error"] is None
    assert row["retry_at"] is None and row["retry_remaining"] == 3 and row["finished_at"]
    assert not (world.memories / "phase2_workspace_diff.md").exists()
    report = consolidation(world)
    assert report["ok"] and report["problems"] == [] and report["store"] == "v1"
    (store,) = report["stores"]
    state = store["consolidation"]
    assert state["state"] == "succeeded" and state["finished"] == row["finished_at"]
    assert state["succeeded"] == row["finished_at"] and state["worker"] == row["worker_id"]
    assert state["cooldown"] and state["next_run"] == row["finished_at"] + 6 * 3600
    assert store["baseline"]["present"] and store["baseline"]["committed"] >= row["started_at"]
    assert not store["workspace_diff"]["present"]


def test_a_consolidation_that_failed(world, consolidator):
    run(world, consolidator, "break")
    row = job_row(world)
    # What Codex 0.171 records of a failure: a code, an hour's back-off, one retry less.
    assert row["status"] == "error" and row["last_error"] == "failed_agent"
    assert row["retry_at"] == row["finished_at"] + 3600 and row["retry_remaining"] == 2
    assert (world.memories / "phase2_workspace_diff.md").exists()
    report = consolidation(world, code=1)
    (problem,) = report["problems"]
    assert problem["kind"] == "failed" and "failed_agent" in problem["message"]
    assert "logs_2.sqlite" in problem["detail"] and row["worker_id"] in problem["detail"]
    state = report["stores"][0]["consolidation"]
    assert state["state"] == "failed" and state["backoff"] and state["retries_left"] == 2
    assert state["retry_after"] == row["retry_at"] and state["next_run"] == row["retry_at"]
    assert report["stores"][0]["workspace_diff"]["present"]
    text = world.memcite("consolidation", "--codex-home", str(world.codex_home), check=False)
    assert text.returncode == 1 and "Codex records no more than this code" in text.stdout


def _outcomes(world: CodexWorld) -> dict[str, dict]:
    listed = world.memcite_json("archived", "--codex-home", str(world.codex_home))
    return {r["thread_id"]: r["consolidation"] for r in listed["requests"]}


def test_the_prune_note_is_taken_in_by_the_next_consolidation(world, consolidator):
    run(world, consolidator, "write")  # Codex makes its databases and a first baseline
    now = int(time.time())
    world.add_stage1_rows(THREADS)
    world.add_stage1_rows(OLD, now=now - 90 * DAY)  # Codex's retention removes these
    world.memcite("sync", "--codex-home", str(world.codex_home))
    later = str(now + 120 * DAY)  # judged four months from now: every memory unused
    world.memcite("prune", "--apply", "--as-of", later, "--codex-home", str(world.codex_home))
    (note,) = (world.memories / "extensions" / "ad_hoc" / "notes").iterdir()
    assert {o["outcome"] for o in _outcomes(world).values()} == {"asked"}
    listed = consolidation(world)["stores"][0]["notes"]
    assert [(n["name"], n["by_memcite"], n["seen_by"]) for n in listed] == \
        [(note.name, True, None)]

    forget_jobs(world)
    run(world, consolidator, "break")  # the run reads the note, and fails
    assert f"extensions/ad_hoc/notes/{note.name}" in \
        (world.memories / "phase2_workspace_diff.md").read_text()
    outcomes = _outcomes(world)
    assert {outcomes[t]["outcome"] for t in THREADS} == {"seen"}
    assert all("failed_agent" in outcomes[t]["text"] for t in THREADS)
    assert {outcomes[t]["outcome"] for t in OLD} == {"done"}  # Codex's start-up pruning
    assert consolidation(world, code=1)["stores"][0]["notes"][0]["seen_by"] == "workspace_diff"

    forget_jobs(world)
    run(world, consolidator, "write")  # the next run succeeds: the note is in the baseline
    assert job_row(world)["status"] == "done"
    report = consolidation(world)
    (seen,) = report["stores"][0]["notes"]
    assert seen["seen_by"] == "baseline" and seen["seen"] >= job_row(world)["started_at"]
    outcomes = _outcomes(world)
    for thread in THREADS:  # Codex keeps their rows until its own retention removes them
        assert outcomes[thread]["outcome"] == "not_done", outcomes[thread]
        assert outcomes[thread]["consolidations_since"] == 1 and outcomes[thread]["row_in_codex"]
    assert {outcomes[t]["outcome"] for t in OLD} == {"done"}
    text = world.memcite("archived", "--codex-home", str(world.codex_home)).stdout
    assert "in Codex: not done after 1 consolidation" in text and "in Codex: done" in text
