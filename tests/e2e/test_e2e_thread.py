"""``memcite thread`` against the real Codex: what it says of a thread is what Codex did.

Seen with Codex 0.171 (and checked here):

- a thread gets the memory message when ``[features] memories = true``, ``[memories]
  use_memories`` is not false and a summary is there; ``memory_mode`` (``threads`` table of
  ``state_5.sqlite``) is ``disabled`` for every thread run with ``generate_memories = false``,
  which still gets the message; ``enabled`` with generation on; ``polluted`` once a thread
  used a web search under ``disable_on_external_context = true``;
- a subagent's thread and an ephemeral one (``codex exec --ephemeral``, which leaves no
  session file) get the memory message too;
- Codex extracts memories (its ``memory_stage1`` jobs) only from interactive threads: of two
  idle threads with ``memory_mode`` enabled, the one whose source is ``cli`` is claimed, the
  ``exec`` one never.
"""

from __future__ import annotations

import json
import sqlite3
import time

import pytest
from test_e2e_read_path import BEGIN, END, LONG, codex_memory_message

from conftest import assert_ran, is_consolidation
from memcite.readpath.truncation import approx_token_count

CITED_ID = "019b7635-7fb3-7cf8-8f11-6f64065672e0"
CITE = ("Done, as the memory said.\n\n<oai-mem-citation>\n<citation_entries>\n"
        "MEMORY.md:1-2|note=[build steps]\n</citation_entries>\n<rollout_ids>\n"
        f"{CITED_ID}\n</rollout_ids>\n</oai-mem-citation>")
SUMMARY = "v1\n# Summary\n- tests run with pytest -q\n"


def _memory(world, summary: str = SUMMARY) -> None:
    (world.memories / "memory_summary.md").write_text(summary)
    (world.memories / "MEMORY.md").write_text("# Memory\n- build with make\n- test with pytest\n")


def _generate_on(world, extra: str = "") -> None:
    config = world.codex_home / "config.toml"
    config.write_text(config.read_text().replace("generate_memories = false",
                                                 "generate_memories = true" + extra))


def _state(world, thread_id: str) -> dict:
    with sqlite3.connect(world.codex_home / "state_5.sqlite") as db:
        row = db.execute("SELECT memory_mode, source FROM threads WHERE id = ?",
                         (thread_id,)).fetchone()
    db.close()
    return {"memory_mode": row[0], "source": row[1]}


def _thread(world, *args: str) -> dict:
    return world.memcite_json("thread", *args, "--codex-home", str(world.codex_home))


def _span_message(body: dict) -> str | None:
    """The memory message of one request (its spans joined, as codex_memory_message does)."""
    for item in body.get("input", []):
        if item.get("type") != "message" or item.get("role") != "developer":
            continue
        spans = [span.get("text", "") for span in item.get("content") or []
                 if span.get("type") == "input_text"]
        for index, text in enumerate(spans):
            if text.startswith("## Memory"):
                joined = text
                for more in spans[index + 1:]:
                    if END in joined:
                        break
                    joined += more
                return joined
    return None


def test_a_thread_that_got_memory_and_cited_it(world):
    _memory(world)
    world.model.reply(CITE)
    assert_ran(world.exec("What do you remember?"))
    message = codex_memory_message(world)
    assert message is not None
    report = _thread(world, "--last")  # run in world.work, a git work tree
    memory = report["memory"]
    assert memory["injected"] and memory["store"] == "v1" and memory["messages"] == 1
    assert memory["tokens"] == approx_token_count(message)
    between = message[message.index(BEGIN) + len(BEGIN):message.index(END)]
    assert memory["summary_tokens"] == approx_token_count(between.strip("\n"))
    assert memory["matches_current"] is True and not memory["truncated"]
    ours = world.memcite_json("instructions", "--profile", "codex")
    assert memory["summary_tokens"] == ours["tokens"]["used"]
    citations = report["citations"]
    assert (citations["replies"], citations["cited_replies"]) == (1, 1)
    assert citations["threads"] == [{"thread_id": CITED_ID, "replies": 1, "in_codex": False}]
    assert [(e["path"], e["line_start"], e["line_end"]) for e in citations["entries"]] == [
        ("MEMORY.md", 1, 2)]
    assert report["reason"] is None and report["source"] == "exec"
    # memory_mode as Codex's state database holds it: disabled under generate_memories = false
    state = _state(world, report["thread_id"])
    assert state["memory_mode"] == "disabled"
    generation = report["generation"]
    assert generation["memory_mode"] == "disabled"
    assert generation["memory_mode_from"] == "state_5.sqlite"
    assert generation["will_generate"] is False
    by_id = _thread(world, report["thread_id"])
    assert {k: v for k, v in by_id.items() if not k.startswith("checked_at")} == \
        {k: v for k, v in report.items() if not k.startswith("checked_at")}
    # after the summary changed, the thread's is no longer today's
    (world.memories / "memory_summary.md").write_text(SUMMARY + "- and one more line\n")
    assert _thread(world, report["thread_id"])["memory"]["matches_current"] is False


def test_a_cut_summary_is_reported_as_codex_cut_it(world):
    _memory(world, LONG)
    assert_ran(world.exec("hello"))
    message = codex_memory_message(world)
    report = _thread(world, "--last")
    marker = message[message.index("…"):].split("…")[1]  # "N tokens truncated"
    assert report["memory"]["truncated"]
    assert report["memory"]["truncated_tokens"] == int(marker.split()[0])
    assert report["memory"]["tokens"] == approx_token_count(message)
    assert report["memory"]["matches_current"] is True


@pytest.mark.parametrize("case", ["use_memories_false", "no_summary", "feature_off"])
def test_a_thread_that_got_no_memory_and_why(world, case):
    if case != "no_summary":
        _memory(world)
    if case == "use_memories_false":
        world.append_config("use_memories = false\n")  # under [memories], the last table
    if case == "feature_off":
        config = world.codex_home / "config.toml"
        config.write_text(config.read_text().replace("memories = true\n\n[memories]",
                                                     "memories = false\n\n[memories]"))
    assert_ran(world.exec("hello"))
    assert codex_memory_message(world) is None  # Codex injected nothing
    report = _thread(world, "--last")
    assert report["memory"]["injected"] is False and report["memory"]["tokens"] == 0
    expected = {"use_memories_false": ("use_memories = false", "[memories] use_memories = true"),
                "no_summary": ("no memory summary", "[memories] generate_memories = true"),
                "feature_off": ("memory feature is off", "[features] memories = true")}[case]
    assert expected[0] in report["reason"] and report["setting"].startswith(expected[1])
    assert report["eligibility"]["could_get_memory"] is (case == "no_summary")
    assert report["generation"]["memory_mode"] == _state(world, report["thread_id"])["memory_mode"]


def test_memory_mode_enabled_and_polluted_as_codex_sets_them(world):
    from mock_model import Turn, ev_assistant_message

    _memory(world)
    _generate_on(world, "\ndisable_on_external_context = true")
    assert_ran(world.exec("hello"))
    enabled = _thread(world, "--last")
    assert _state(world, enabled["thread_id"])["memory_mode"] == "enabled"
    assert enabled["generation"]["memory_mode"] == "enabled"
    assert enabled["generation"]["will_generate"] is False  # an exec thread: never extracted
    assert "never from exec threads" in enabled["generation"]["explanation"]
    search = {"type": "response.output_item.done", "item": {
        "type": "web_search_call", "id": "ws_1", "status": "completed",
        "action": {"type": "search", "query": "weather"}}}
    with world.model._lock:
        world.model._queue.append(Turn([search, ev_assistant_message("msg-ws", "Searched.")]))
    assert_ran(world.exec("search the web"))
    polluted = _thread(world, "--last")
    assert polluted["thread_id"] != enabled["thread_id"]
    assert _state(world, polluted["thread_id"])["memory_mode"] == "polluted"
    assert polluted["generation"]["memory_mode"] == "polluted"
    assert "disable_on_external_context" in polluted["generation"]["explanation"]
    assert polluted["memory"]["injected"]  # pollution stops generation, not the read path


def test_codex_extracts_memories_from_interactive_threads_only(world):
    """Two idle threads with memory_mode enabled, one relabelled ``cli`` in Codex's state
    database: the next start claims a stage-1 job for that one alone, as memcite says."""
    _memory(world)
    _generate_on(world)
    assert_ran(world.exec("first"))
    exec_thread = _thread(world, "--last")["thread_id"]
    assert_ran(world.exec("second"))
    cli_thread = _thread(world, "--last")["thread_id"]
    idle = int(time.time() * 1000) - 8 * 3600 * 1000  # past min_rollout_idle_hours (6)
    with sqlite3.connect(world.codex_home / "state_5.sqlite") as db:
        db.execute("UPDATE threads SET updated_at_ms = ?, updated_at = ? WHERE id IN (?, ?)",
                   (idle, idle // 1000, exec_thread, cli_thread))
        db.execute("UPDATE threads SET source = 'cli' WHERE id = ?", (cli_thread,))
    db.close()
    assert _thread(world, cli_thread)["generation"]["will_generate"] is True
    assert _thread(world, exec_thread)["generation"]["will_generate"] is False
    assert_ran(world.exec("third"))
    deadline = time.monotonic() + 20
    claimed: list = []
    while time.monotonic() < deadline:
        with sqlite3.connect(world.memories_db()) as db:
            claimed = db.execute("SELECT job_key, status FROM jobs WHERE kind = "
                                 "'memory_stage1'").fetchall()
        db.close()
        if claimed:
            break
        time.sleep(0.2)
    assert [key for key, _ in claimed] == [cli_thread]
    assert _thread(world, cli_thread)["generation"]["stage1_job"] == claimed[0][1]


def _delegating_model(body: dict):
    from mock_model import message_turn, tool_turn

    if is_consolidation(body):
        return message_turn("Nothing to consolidate.")
    if (body.get("client_metadata") or {}).get("x-openai-subagent"):
        return message_turn(CITE)
    outputs = [item for item in body.get("input", []) if item.get("type") == "function_call_output"]
    if not outputs:
        return tool_turn("spawn_agent", {"message": "look up the build"}, namespace="multi_agent_v1")
    if len(outputs) == 1:
        agent = json.loads(outputs[0]["output"])["agent_id"]
        return tool_turn("wait_agent", {"targets": [agent]}, namespace="multi_agent_v1")
    return message_turn("The subagent found the build steps.")


def test_a_subagent_s_thread_gets_memory_and_last_passes_it_over(world):
    _memory(world)
    world.model.responder = _delegating_model
    assert_ran(world.exec("delegate the lookup"))
    subagent_requests = [body for body in world.model.requests
                         if (body.get("client_metadata") or {}).get("x-openai-subagent")
                         and not is_consolidation(body)]
    assert subagent_requests and _span_message(subagent_requests[0]) is not None
    parent = _thread(world, "--last")
    assert parent["source"] == "exec" and parent["parent_thread_id"] is None
    sessions = sorted((world.codex_home / "sessions").rglob("rollout-*.jsonl"))
    assert len(sessions) == 2
    child_id = next(path.name[-42:-6] for path in sessions if parent["thread_id"] not in path.name)
    child = _thread(world, child_id)
    assert child["source"] == "subagent" and child["parent_thread_id"] == parent["thread_id"]
    assert child["eligibility"]["subagent"] and child["memory"]["injected"]
    assert child["memory"]["tokens"] == approx_token_count(_span_message(subagent_requests[0]))
    assert child["citations"]["cited_replies"] == 1
    assert _state(world, child_id)["source"].startswith('{"subagent"')


def test_an_ephemeral_thread_gets_memory_but_leaves_no_file(world):
    _memory(world)
    done = world.exec("hello", "--ephemeral", "--json")
    assert_ran(done)
    assert codex_memory_message(world) is not None
    started = [json.loads(line) for line in done.stdout.splitlines()
               if line.startswith("{") and '"thread.started"' in line]
    assert started, done.stdout
    thread_id = started[0]["thread_id"]
    assert not list((world.codex_home / "sessions").rglob("*.jsonl"))
    result = world.memcite("thread", thread_id, "--codex-home", str(world.codex_home),
                           check=False)
    assert result.returncode == 2 and "ephemeral" in result.stderr


def test_store_v2_s_message_is_read_from_memories_v2(world):
    world.append_config('version = "v2"\n')
    folder = world.codex_home / "memories_v2"
    folder.mkdir()
    (folder / "memory_summary.md").write_text(SUMMARY)
    assert_ran(world.exec("hello"))
    report = _thread(world, "--last")
    assert report["memory"]["store"] == "v2" and report["memory"]["matches_current"] is True
    assert report["memory"]["tokens"] == approx_token_count(codex_memory_message(world))
    assert report["eligibility"]["store"] == "v2"


def test_what_memory_costs_matches_what_codex_sent(world):
    _memory(world)
    world.model.reply(CITE)
    assert_ran(world.exec("first turn"))
    world.model.reply("Second.")
    assert_ran(world.exec("second turn", resume=True))
    tokens = approx_token_count(codex_memory_message(world))
    turns = world.turn_requests()
    assert all(_span_message(body) is not None for body in turns)  # resent with every request
    cost = world.memcite_json("thread", "--cost")
    assert cost["totals"]["threads"] == cost["totals"]["threads_with_memory"] == 1
    assert cost["totals"]["injections"] == 1 and cost["totals"]["tokens"] == tokens
    assert cost["totals"]["requests"] == len(turns)
    assert cost["totals"]["resent_tokens"] == tokens * len(turns)
    (project,) = cost["by_project"]
    assert project["cwd"] == str(world.work)
    v1 = next(jobs for jobs in cost["jobs"] if jobs["store"] == "v1")
    with sqlite3.connect(world.memories_db()) as db:
        rows = db.execute("SELECT kind, status, count(*) FROM jobs GROUP BY kind, status").fetchall()
    db.close()
    assert {(r["kind"], r["status"]): r["rows"] for r in v1["by_kind"]} == \
        {(kind, status): count for kind, status, count in rows}
    assert v1["rows"] == sum(count for _, _, count in rows)
