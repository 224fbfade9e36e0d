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
