"""Real-shaped Codex session files and homes for the tests and the benchmarks.

A session file is JSON Lines as Codex writes it: a ``session_meta`` line first (large:
it holds the base instructions), then per turn a ``turn_context``, the user's message,
reasoning, a tool call and its output, event copies, and the assistant's reply with a
citation block (the last reply of a turn cites; some turns cite nothing).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

MEMORIES = ("019b7635-7fb3-7cf8-8f11-6f64065672e0", "019b76da-a800-7de5-8c3e-9e72e44926e8")


def line(kind: str, payload: dict, second: int = 0) -> bytes:
    """One session line, newline included."""
    stamp = f"2026-01-20T10:{second // 60 % 60:02d}:{second % 60:02d}.000Z"
    return (json.dumps({"timestamp": stamp, "type": kind, "payload": payload}) + "\n").encode()


def session_meta(session_id: str, cwd: str = "/home/dev/project", instructions: int = 20_000) -> bytes:
    return line("session_meta", {"id": session_id, "timestamp": "2026-01-20T10:00:00.000Z",
                                 "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.60.0",
                                 "instructions": "You are Codex. " * (instructions // 15)})


def cited_reply(number: int, memory: str = MEMORIES[0]) -> str:
    return (f"Turn {number}: done, as the memory said (turn {number}).\n\n<oai-mem-citation>\n<citation_entries>\n"
            f"MEMORY.md:1-2|note=[turn {number}]\n</citation_entries>\n<rollout_ids>\n{memory}\n"
            "</rollout_ids>\n</oai-mem-citation>")


def turn(number: int, *, cite: str | None = MEMORIES[0], tool_output: int = 2_000) -> bytes:
    """One turn: context, user message, reasoning, tool call and output, assistant replies."""
    base = number * 10
    reply = cited_reply(number, cite) if cite else f"Turn {number}: nothing to cite."
    return b"".join([
        line("turn_context", {"cwd": "/home/dev/project", "model": "gpt-5-codex"}, base),
        line("response_item", {"type": "message", "role": "user",
                               "content": [{"type": "input_text", "text": f"question {number}"}]}, base + 1),
        line("event_msg", {"type": "user_message", "message": f"question {number}"}, base + 1),
        line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "x" * 200}, base + 2),
        line("response_item", {"type": "function_call", "name": "shell", "call_id": f"c{number}",
                               "arguments": "{\"command\":[\"cat\",\"MEMORY.md\"]}"}, base + 3),
        line("response_item", {"type": "function_call_output", "call_id": f"c{number}",
                               "output": "role assistant " + "o" * tool_output}, base + 4),
        line("response_item", {"type": "message", "role": "assistant",
                               "content": [{"type": "output_text", "text": "Looking."}]}, base + 5),
        line("response_item", {"type": "message", "role": "assistant",
                               "content": [{"type": "output_text", "text": reply[:20]},
                                           {"type": "output_text", "text": reply[20:]}]}, base + 6),
        line("event_msg", {"type": "agent_message", "message": reply}, base + 6),
    ])


def session_bytes(session_id: str, turns: int, *, first: int = 1, **options) -> bytes:
    """A whole session file: its meta line and ``turns`` turns (numbered from ``first``)."""
    return session_meta(session_id) + b"".join(turn(n, **options) for n in range(first, first + turns))


def session_path(home: Path, session_id: str, day: int = 20, *, archived: bool = False,
                 zst: bool = False) -> Path:
    name = f"rollout-2026-01-{day:02d}T10-00-00-{session_id}.jsonl" + (".zst" if zst else "")
    folder = home / "archived_sessions" if archived else home / "sessions" / "2026" / "01" / f"{day:02d}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def write_session(home: Path, session_id: str, turns: int, *, day: int = 20, archived: bool = False,
                  zst: bool = False, **options) -> Path:
    path = session_path(home, session_id, day, archived=archived, zst=zst)
    data = session_bytes(session_id, turns, **options)
    if zst:
        import zstandard

        data = zstandard.ZstdCompressor().compress(data)
    path.write_bytes(data)
    return path


def memory_folder(home: Path) -> Path:
    """A memory folder whose MEMORY.md has the lines the replies cite."""
    folder = home / "memories"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MEMORY.md").write_text("# Memory\n- the ledger uses BEGIN IMMEDIATE\n- more\n")
    return folder


def session_id(number: int) -> str:
    return f"019c{number:04x}-0000-7000-8000-{number:012x}"


def grow_to(path: Path, size: int, session: str) -> int:
    """Append turns (with long tool outputs) until the file holds at least ``size`` bytes; the turn count."""
    number = 1
    with open(path, "ab") as handle:
        if os.path.getsize(path) == 0:
            handle.write(session_meta(session))
        written = handle.tell()
        chunk = b"".join(turn(n, tool_output=60_000) for n in range(1, 51))
        while written < size:
            handle.write(chunk)
            written += len(chunk)
            number += 50
    return number


# --------------------------------------------------------------------------- the paginated form
# As Codex 0.169 on writes it (seen with the real 0.171): every line also has an ``ordinal``;
# a reply is an ``item_completed`` event (text without its block, the block parsed in
# ``memory_citation``) and then the assistant ``response_item`` with the same item id.


def paged_line(kind: str, payload: dict, ordinal: int, second: int = 0) -> bytes:
    stamp = f"2026-01-20T10:{second // 60 % 60:02d}:{second % 60:02d}.000Z"
    return (json.dumps({"timestamp": stamp, "ordinal": ordinal, "type": kind,
                        "payload": payload}) + "\n").encode()


def paged_meta(session_id: str, cwd: str = "/home/dev/project") -> bytes:
    return paged_line("session_meta", {"session_id": session_id, "id": session_id,
                                       "timestamp": "2026-01-20T10:00:00.000Z", "cwd": cwd,
                                       "originator": "codex_exec", "cli_version": "0.171.0",
                                       "history_mode": "paginated"}, 0)


def memory_citation(number: int, memory: str = MEMORIES[0]) -> dict:
    return {"entries": [{"path": "MEMORY.md", "lineStart": 1, "lineEnd": 2,
                         "note": f"turn {number}"}], "rolloutIds": [memory]}


def paged_turn(number: int, ordinal: int, *, cite: str | None = MEMORIES[0],
               response_item: bool = True, ends: bool = True) -> list[bytes]:
    """One turn's lines (ordinals from ``ordinal``): task_started, the user's message, the
    reply's item_completed and (``response_item``) its response_item, task_complete (``ends``)."""
    turn_id = f"019d0000-0000-7000-8000-{number:012x}"
    base = number * 10
    visible = f"Turn {number}: done, as the memory said (turn {number}).\n\n"
    text = cited_reply(number, cite) if cite else f"Turn {number}: nothing to cite."
    item = {"type": "AgentMessage", "id": f"msg-{number}",
            "content": [{"type": "Text", "text": visible if cite else text}]}
    if cite:
        item["memory_citation"] = memory_citation(number, cite)
    lines = [
        ("event_msg", {"type": "task_started", "turn_id": turn_id}, base),
        ("response_item", {"type": "message", "id": f"u-{number}", "role": "user",
                           "content": [{"type": "input_text", "text": f"question {number}"}]}, base + 1),
        ("response_item", {"type": "function_call_output", "call_id": f"c{number}",
                           "output": "role assistant " + "o" * 500}, base + 2),
        ("event_msg", {"type": "item_completed", "thread_id": "t", "turn_id": turn_id,
                       "item": item}, base + 3),
    ]
    if response_item:
        lines.append(("response_item", {"type": "message", "id": f"msg-{number}",
                                        "role": "assistant",
                                        "content": [{"type": "output_text", "text": text}]}, base + 3))
    lines.append(("event_msg", {"type": "token_count", "info": None}, base + 4))
    if ends:
        lines.append(("event_msg", {"type": "task_complete", "turn_id": turn_id,
                                    "last_agent_message": visible}, base + 5))
    return [paged_line(kind, payload, ordinal + n, second)
            for n, (kind, payload, second) in enumerate(lines)]


def paged_session_lines(session_id: str, turns: int, **options) -> list[bytes]:
    """A paginated session file's lines: its meta and ``turns`` turns."""
    lines = [paged_meta(session_id)]
    for number in range(1, turns + 1):
        lines += paged_turn(number, len(lines), **options)
    return lines


def paginate(data: bytes) -> bytes:
    """A legacy file as ``codex migrate-rollouts --apply`` (0.171) writes it again: each line
    gets an ``ordinal``, a ``task_started`` goes before each turn's user message and a
    ``task_complete`` after its last line, ``turn_context`` lines this helper's turns write
    (too short for Codex) are dropped, user and agent message events become ``item_completed``
    in place. Timestamps and replies are kept: only line numbers change."""
    out: list[tuple[str, dict, str]] = []
    turn = None
    for raw in data.splitlines():
        line = json.loads(raw)
        kind, payload, stamp = line["type"], line["payload"], line["timestamp"]
        if kind == "turn_context":
            continue
        if kind == "response_item" and payload.get("type") == "message" \
                and payload.get("role") == "user":
            if turn is not None:
                out.append((stamp, "event_msg", {"type": "task_complete", "turn_id": turn}))
            turn = f"rollout-{len(out) + 1}"
            out.append((stamp, kind, payload))
            out.append((stamp, "event_msg", {"type": "task_started", "turn_id": turn}))
            continue
        if kind == "event_msg" and payload.get("type") in ("user_message", "agent_message"):
            item = {"type": "UserMessage" if payload["type"] == "user_message" else "AgentMessage",
                    "id": f"item-{len(out)}",
                    "content": [{"type": "Text", "text": payload.get("message", "")}]}
            out.append((stamp, "event_msg", {"type": "item_completed", "turn_id": turn,
                                             "item": item}))
            continue
        if kind == "session_meta":
            payload = {**payload, "history_mode": "paginated"}
        out.append((stamp, kind, payload))
    if turn is not None:
        out.append((out[-1][0], "event_msg", {"type": "task_complete", "turn_id": turn}))
    return b"".join((json.dumps({"timestamp": stamp, "ordinal": n, "type": kind,
                                 "payload": payload}) + "\n").encode()
                    for n, (stamp, kind, payload) in enumerate(out))


# --------------------------------------------------------------------------- later legacy files
# Before the paginated form, Codex (about 0.5x-0.16x) wrote lines {timestamp, type, payload};
# a full ``turn_context`` a turn, and later also ``task_started``/``task_complete`` events.


def legacy_turn(number: int, *, cite: str | None = MEMORIES[0], task_events: bool = True,
                commentary: bool = True) -> bytes:
    """One legacy turn with a ``turn_context`` Codex can read; with ``task_events`` the
    turn's ``task_started`` and ``task_complete``; ``commentary``: a first reply without citation."""
    turn_id = f"{number - 1}"  # legacy turn ids were submission ids
    base = number * 10
    reply = cited_reply(number, cite) if cite else f"Turn {number}: nothing to cite."
    lines = []
    if task_events:
        lines.append(line("event_msg", {"type": "task_started", "turn_id": turn_id,
                                        "model_context_window": 272000}, base))
    lines += [
        line("turn_context", {"cwd": "/home/dev/project", "approval_policy": "on-request",
                              "sandbox_policy": {"type": "workspace-write", "writable_roots": [],
                                                 "network_access": False,
                                                 "exclude_tmpdir_env_var": False,
                                                 "exclude_slash_tmp": False},
                              "model": "gpt-5-codex", "effort": "medium", "summary": "auto"}, base),
        line("response_item", {"type": "message", "role": "user",
                               "content": [{"type": "input_text", "text": f"question {number}"}]}, base + 1),
        line("event_msg", {"type": "user_message", "message": f"question {number}", "images": []}, base + 1),
        line("event_msg", {"type": "agent_reasoning", "text": "Looking at the memory."}, base + 2),
        line("response_item", {"type": "reasoning", "summary": [{"type": "summary_text",
                                                                 "text": "Looking at the memory."}],
                               "content": None, "encrypted_content": "gAAAA" + "x" * 100}, base + 2),
        line("response_item", {"type": "function_call", "name": "shell", "call_id": f"c{number}",
                               "arguments": "{\"command\":[\"cat\",\"MEMORY.md\"]}"}, base + 3),
        line("response_item", {"type": "function_call_output", "call_id": f"c{number}",
                               "output": "{\"output\":\"# Memory\\n\",\"metadata\":{\"exit_code\":0}}"},
             base + 4),
    ]
    if commentary:
        lines += [line("event_msg", {"type": "agent_message", "message": "Looking."}, base + 5),
                  line("response_item", {"type": "message", "role": "assistant",
                                         "content": [{"type": "output_text", "text": "Looking."}]},
                       base + 5)]
    lines += [
        line("event_msg", {"type": "agent_message", "message": reply}, base + 6),
        line("response_item", {"type": "message", "role": "assistant",
                               "content": [{"type": "output_text", "text": reply}]}, base + 6),
        line("event_msg", {"type": "token_count", "info": None, "rate_limits": None}, base + 7),
    ]
    if task_events:
        lines.append(line("event_msg", {"type": "task_complete", "turn_id": turn_id,
                                        "last_agent_message": reply}, base + 8))
    return b"".join(lines)


def legacy_session_bytes(session_id: str, turns: int, *, cli_version: str = "0.98.0",
                         **options) -> bytes:
    meta = line("session_meta", {"id": session_id, "timestamp": "2026-01-20T10:00:00.000Z",
                                 "cwd": "/home/dev/project", "originator": "codex_cli_rs",
                                 "cli_version": cli_version, "instructions": None,
                                 "source": "cli", "model_provider": "openai"})
    return meta + b"".join(legacy_turn(n, **options) for n in range(1, turns + 1))


def ledger_knowing(path, threads=MEMORIES):
    """memcite's ledger at ``path``, its inventory holding ``threads`` (as a sync leaves it)."""
    from memcite.ledger.store import open_store, transaction

    connection = open_store(path)
    with transaction(connection):
        connection.executemany(
            "INSERT INTO memories (thread_id, source, first_synced_at, synced_at)"
            " VALUES (?, 'stage1_outputs', 1, 1)", [(t,) for t in threads])
    return connection


def count_parses(monkeypatch) -> list[str]:
    """The texts ``parse_reply`` is asked to read from now on, in order."""
    from memcite.citations import reading

    texts: list[str] = []
    real = reading.parse_reply

    def counting(text, *args, **kwargs):
        texts.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(reading, "parse_reply", counting)
    return texts
