"""``memcite setup codex --apply`` as the real Codex sees it: hooks, trust, MCP entry, Stop payload."""

from __future__ import annotations

import json
import sqlite3
import subprocess

from app_server import AppServer

from conftest import MEMCITE, assert_ran
from memcite.codex.setup import codex_hook_hash, memcite_args

CITED = ("Fixed.\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:1-1|note=[tests]\n"
         "</citation_entries>\n<rollout_ids>\n{thread}\n</rollout_ids>\n</oai-mem-citation>")


def setup(world, *args) -> subprocess.CompletedProcess:
    return world.memcite("setup", "codex", "--codex-home", str(world.codex_home), *args)


def recorded_replies(world) -> list[tuple]:
    if not world.db.exists():
        return []
    with sqlite3.connect(world.db) as db:
        rows = db.execute("SELECT reply_key, origin FROM replies ORDER BY id").fetchall()
    db.close()
    return rows


def test_setup_is_accepted_by_codex_and_its_trust_hash_is_codex_s(world):
    done = setup(world, "--apply")
    hooks_json = json.loads((world.codex_home / "hooks.json").read_text())
    added = {event: group["hooks"][0] for event, groups in hooks_json["hooks"].items()
             for group in groups}
    assert set(added) == {"Stop", "SubagentStop", "PostToolUse"}
    for event, handler in added.items():  # the absolute path of the memcite that ran setup
        assert handler["command"].split()[0] == MEMCITE
        assert f"hook {event}: `{handler['command']}` (untrusted in Codex)" in done.stdout
    with AppServer(world) as server:
        listed = {hook["key"]: hook for hook in server.hooks()}
        ours = {key: hook for key, hook in listed.items() if memcite_args(hook["command"])}
        assert len(ours) == 3, listed
        for hook in ours.values():
            event = {"stop": "Stop", "subagentStop": "SubagentStop",
                     "postToolUse": "PostToolUse"}[hook["eventName"]]
            assert hook["trustStatus"] == "untrusted"
            assert hook["currentHash"] == codex_hook_hash(event, added[event])
        for hook in ours.values():
            server.trust(hook)
        assert {hook["trustStatus"] for hook in server.hooks() if memcite_args(hook["command"])} \
            == {"trusted"}
    again = setup(world, "--apply")
    assert "nothing to change" in again.stdout
    assert "trust" not in again.stdout.split("(trusted in Codex)")[-1]  # no trust step repeated
    assert again.stdout.count("(trusted in Codex)") == 3
    doctor = world.memcite("doctor", "--codex-home", str(world.codex_home), check=False)
    for name in ("stop-hook", "hook-trust", "mcp-server"):
        assert f"ok       {name}" in doctor.stdout, doctor.stdout

    listing = subprocess.run([world.codex, "mcp", "list", "--json"], env=world.env(),
                             capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0, listing.stderr
    servers = {server["name"]: server for server in json.loads(listing.stdout)}
    entry = servers["memcite"]
    transport = entry.get("transport", entry)
    assert transport["command"] == MEMCITE
    assert transport["args"] == ["mcp", "--codex-home", str(world.codex_home)]


def test_an_untrusted_hook_does_not_run_and_a_trusted_one_records_every_turn(world):
    thread = "019a0000-0000-7000-8000-00000000a001"
    setup(world, "--apply")
    world.model.reply(CITED.format(thread=thread))
    assert_ran(world.exec("fix the tests"))
    assert recorded_replies(world) == []  # untrusted: skipped silently
    with AppServer(world) as server:
        for hook in server.hooks():
            if memcite_args(hook["command"]):
                server.trust(hook)
    world.model.reply(CITED.format(thread=thread))
    assert_ran(world.exec("fix them again"))
    world.model.reply(CITED.format(thread=thread))
    assert_ran(world.exec("and once more", resume=True))
    rows = recorded_replies(world)
    assert len(rows) == 2, rows
    assert all(origin.startswith("hook:") for _, origin in rows), rows


def test_the_stop_payload_has_the_keys_memcite_reads(world, tmp_path):
    capture = tmp_path / "payload.json"
    (world.codex_home / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": f"cat > {capture}", "timeout": 10}]}]}}))
    world.model.reply("All done.")
    assert_ran(world.exec("hello", "--dangerously-bypass-hook-trust"))
    payload = json.loads(capture.read_text())
    read_by_memcite = {"session_id", "turn_id", "hook_event_name", "transcript_path",
                       "last_assistant_message"}
    assert read_by_memcite <= set(payload), payload
    assert payload["hook_event_name"] == "Stop"
    assert payload["last_assistant_message"].strip() == "All done."
    assert (world.codex_home / "sessions").as_posix() in payload["transcript_path"]


def test_remove_takes_out_what_setup_added(world):
    config_before = (world.codex_home / "config.toml").read_text()
    setup(world, "--apply")
    setup(world, "--remove", "--apply")
    assert not (world.codex_home / "hooks.json").exists()
    assert (world.codex_home / "config.toml").read_text() == config_before
    with AppServer(world) as server:
        assert not [hook for hook in server.hooks() if memcite_args(hook["command"])]


SUBAGENT_THREAD = "019a0000-0000-7000-8000-00000000b001"


def _delegating_model(body: dict):
    """The parent spawns a subagent, waits for it, then answers; the subagent cites memory."""
    import json as json_module

    from mock_model import message_turn, tool_turn

    from conftest import is_consolidation

    if is_consolidation(body):
        return message_turn("Nothing to consolidate.")
    metadata = body.get("client_metadata") or {}
    if metadata.get("x-openai-subagent"):
        return message_turn(CITED.format(thread=SUBAGENT_THREAD).replace("Fixed.", "Looked it up."))
    outputs = [item for item in body.get("input", []) if item.get("type") == "function_call_output"]
    if not outputs:
        return tool_turn("spawn_agent", {"message": "look up the build steps"},
                         namespace="multi_agent_v1")
    if len(outputs) == 1:
        agent = json_module.loads(outputs[0]["output"])["agent_id"]
        return tool_turn("wait_agent", {"targets": [agent]}, namespace="multi_agent_v1")
    return message_turn("The subagent found the build steps.")


def test_a_subagent_s_cited_reply_is_recorded_once_by_hook_and_ingest(world):
    setup(world, "--apply")
    with AppServer(world) as server:
        for hook in server.hooks():
            if memcite_args(hook["command"]):
                server.trust(hook)
    world.model.responder = _delegating_model
    assert_ran(world.exec("delegate the lookup"))
    rows = recorded_replies(world)
    with sqlite3.connect(world.db) as db:
        cited = db.execute("SELECT COUNT(*) FROM cited_ids WHERE thread_id = ?",
                           (SUBAGENT_THREAD,)).fetchone()[0]
    db.close()
    assert cited == 1, rows  # the SubagentStop hook read the subagent's own session file
    assert all(origin.startswith("hook:") for _, origin in rows)
    before = len(rows)
    world.memcite("ingest", "--codex-home", str(world.codex_home))
    assert len(recorded_replies(world)) == before  # whole-home ingest finds nothing new


def test_setup_with_trust_runs_the_stop_hook_with_no_interactive_step(world):
    """Issue 40: `setup codex --apply --trust` writes the entries Codex's /hooks screen writes,
    so the very next `codex exec` turn runs memcite's Stop hook; --remove takes them out."""
    config_before = (world.codex_home / "config.toml").read_text()
    done = setup(world, "--apply", "--trust")
    assert done.stdout.count("(trusted in Codex)") == 3, done.stdout
    with AppServer(world) as server:  # Codex itself reads the entries as trust in our hooks only
        ours = [hook for hook in server.hooks() if memcite_args(hook["command"])]
        assert len(ours) == 3 and {hook["trustStatus"] for hook in ours} == {"trusted"}, ours
    thread = "019a0000-0000-7000-8000-00000000a040"
    world.model.reply(CITED.format(thread=thread))
    assert_ran(world.exec("fix the tests"))  # no --dangerously-bypass-hook-trust, no /hooks
    rows = recorded_replies(world)
    assert len(rows) == 1 and rows[0][1].startswith("hook:"), rows
    doctor = world.memcite("doctor", "--codex-home", str(world.codex_home), check=False)
    assert "ok       hook-trust" in doctor.stdout, doctor.stdout

    setup(world, "--remove", "--apply")
    assert (world.codex_home / "config.toml").read_text() == config_before
    assert not list(world.codex_home.glob("*memcite-backup*"))
    again = setup(world, "--apply")  # no trust left behind: a new set-up asks again
    assert again.stdout.count("(untrusted in Codex)") == 3, again.stdout
