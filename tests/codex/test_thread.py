"""``memcite thread``: one thread's memory read from its session file, and what memory costs.

The session files are built in the shapes Codex 0.171 writes (seen with the real binary,
tests/e2e/test_e2e_thread.py): a paginated ``session_meta`` (``source``, ``memory_mode``),
the developer message whose first ``input_text`` span is the memory message, replies as
``item_completed`` events and assistant ``response_item`` lines, ``token_count`` events;
Codex's ``state_5.sqlite`` with its ``threads`` table, and ``memories_1.sqlite`` with
``stage1_outputs`` and ``jobs``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from codex_sessions import MEMORIES, paged_line, paged_turn
from memcite.cli.app import app
from memcite.codex.memory_cost import memory_cost
from memcite.codex.thread import NoSuchThread, read_thread, thread_report
from memcite.contracts.generate import models
from memcite.errors import InputError
from memcite.ledger import session_scan as scan
from memcite.readpath.codex_profile import codex_summary, render_v2
from memcite.readpath.truncation import approx_token_count

NOW = 1_800_000_000
DAY = 86_400
runner = CliRunner()

SUMMARY = "v1\n# Summary\n- tests run with pytest -q\n"
PREAMBLE = ("## Memory\n\nYou have access to a memory folder with guidance from prior runs.\n\n"
            "Memory layout (general -> specific):\n\n- {root}/memory_summary.md (already "
            "provided below; do NOT open again)\n- {root}/MEMORY.md (searchable registry)\n\n")


def v1_message(root: str, summary: str) -> str:
    """Codex 0.171's v1 memory message around ``summary`` (its preamble shortened)."""
    return (PREAMBLE.format(root=root) + scan.SUMMARY_BEGIN + "\n" + summary + "\n"
            + scan.SUMMARY_END + scan.V1_TRAILER)


def developer(spans: list[str], ordinal: int, second: int = 1) -> bytes:
    return paged_line("response_item", {
        "type": "message", "id": f"msg_dev_{ordinal}", "role": "developer",
        "content": [{"type": "input_text", "text": text} for text in spans]}, ordinal, second)


def meta(thread: str, cwd: str, *, source="exec", memory_mode: str | None = "disabled",
         started: str = "2026-01-20T10:00:00.000Z") -> bytes:
    payload = {"session_id": thread, "id": thread, "timestamp": started, "cwd": cwd,
               "originator": "codex_exec", "cli_version": "0.171.0", "source": source,
               "thread_source": "subagent" if isinstance(source, dict) else "user",
               "model_provider": "mock", "base_instructions": "You are Codex. " * 2000,
               "history_mode": "paginated"}
    if memory_mode is not None:
        payload["memory_mode"] = memory_mode
    return paged_line("session_meta", payload, 0)


def token_count(ordinal: int, second: int) -> bytes:
    return paged_line("event_msg", {"type": "token_count", "info": None}, ordinal, second)


def session(thread: str, cwd: str, *, message: str | None, turns: list[str | None],
            **options) -> bytes:
    """A session: meta, the developer message (memory span first, when given), and one turn
    per entry of ``turns`` (the memory it cites, or None)."""
    lines = [meta(thread, cwd, **options)]
    spans = ([message] if message else []) + ["<skills_instructions>\n## Skills\n</skills_"
                                              "instructions>", "<permissions instructions>"]
    lines.append(developer(spans, len(lines)))
    for number, cite in enumerate(turns, start=1):
        lines += paged_turn(number, len(lines), cite=cite)
    return b"".join(lines)


def write(home: Path, thread: str, data: bytes, *, day: int = 20, archived: bool = False,
          zst: bool = False, mtime: int | None = None) -> Path:
    folder = home / "archived_sessions" if archived else home / "sessions" / "2026" / "01" / f"{day:02d}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-2026-01-{day:02d}T10-00-00-{thread}.jsonl{'.zst' if zst else ''}"
    if zst:
        import zstandard

        data = zstandard.ZstdCompressor().compress(data)
    path.write_bytes(data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def thread_id(number: int) -> str:
    return f"019c{number:04x}-0000-7000-8000-{number:012x}"


def state_db(home: Path, rows: list[tuple[str, str, str]]) -> Path:
    """Codex's state_5.sqlite with the columns memcite reads: (id, source, memory_mode)."""
    path = home / "state_5.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE IF NOT EXISTS threads (id TEXT PRIMARY KEY, rollout_path TEXT "
                   "NOT NULL DEFAULT '', source TEXT NOT NULL, cwd TEXT NOT NULL DEFAULT '', "
                   "archived INTEGER NOT NULL DEFAULT 0, memory_mode TEXT NOT NULL DEFAULT "
                   "'enabled')")
        db.executemany("INSERT OR REPLACE INTO threads (id, source, memory_mode) VALUES (?, ?, ?)",
                       rows)
    db.close()
    return path


def memories_db(home: Path, threads: list[str], jobs: list[tuple] = ()) -> Path:
    path = home / "memories_1.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY, source_updated_at "
                   "INTEGER, raw_memory TEXT, rollout_summary TEXT, rollout_slug TEXT, "
                   "generated_at INTEGER, usage_count INTEGER, last_usage INTEGER, "
                   "selected_for_phase2 INTEGER DEFAULT 0, "
                   "selected_for_phase2_source_updated_at INTEGER)")
        db.execute("CREATE TABLE jobs (kind TEXT NOT NULL, job_key TEXT NOT NULL, status TEXT "
                   "NOT NULL, worker_id TEXT, ownership_token TEXT, started_at INTEGER, "
                   "finished_at INTEGER, lease_until INTEGER, retry_at INTEGER, "
                   "retry_remaining INTEGER NOT NULL DEFAULT 3, last_error TEXT, "
                   "input_watermark INTEGER, last_success_watermark INTEGER, "
                   "PRIMARY KEY (kind, job_key))")
        db.executemany("INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory, "
                       "rollout_summary) VALUES (?, 1, 'raw', 'summary')",
                       [(t,) for t in threads])
        db.executemany("INSERT INTO jobs (kind, job_key, status, started_at, finished_at) "
                       "VALUES (?, ?, ?, ?, ?)", jobs)
    db.close()
    return path


@pytest.fixture
def home(tmp_path) -> Path:
    """A Codex home with memory on, a summary and a MEMORY.md, in a git project."""
    codex = tmp_path / "codex"
    memories = codex / "memories"
    memories.mkdir(parents=True)
    (memories / "memory_summary.md").write_text(SUMMARY)
    (memories / "MEMORY.md").write_text("# Memory\n- the ledger uses BEGIN IMMEDIATE\n- more\n")
    (codex / "config.toml").write_text('model = "mock"\n\n[features]\nmemories = true\n\n'
                                       "[memories]\ngenerate_memories = false\n")
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / ".git").mkdir()
    return codex


def project_of(home: Path) -> Path:
    return home.parent / "project"


def report(home: Path, thread: str | None = None, **options) -> dict:
    options.setdefault("now", NOW)
    return thread_report(str(home), thread, **options)


# --------------------------------------------------------------------------- the memory message


def test_the_memory_message_of_one_span_and_its_summary():
    message = v1_message("/h/memories", SUMMARY.strip())
    found = scan.memory_message({"type": "message", "role": "developer", "content": [
        {"type": "input_text", "text": message}, {"type": "input_text", "text": "<skills>"}]})
    assert found.text == message and found.summary == SUMMARY.strip()
    assert found.store == "v1" and found.spans == 1


@pytest.mark.parametrize("cut", [40, 300, -60, -20, -1])
def test_a_message_split_over_spans_is_joined_back(cut):
    """Codex sends a long developer message in several spans: cut in the preamble, in the
    summary, or in v1's closing paragraph after the end marker."""
    message = v1_message("/h/memories", SUMMARY.strip())
    spans = [message[:cut], message[cut:], "<permissions instructions>"]
    found = scan.memory_message({"type": "message", "role": "developer",
                                 "content": [{"type": "input_text", "text": t} for t in spans]})
    assert found.text == message and found.spans == 2
    assert found.summary == SUMMARY.strip()


def test_store_v2_s_message_is_told_apart():
    text = render_v2("/h/memories_v2", "v1\n# Summary v2")
    found = scan.memory_message({"type": "message", "role": "developer",
                                 "content": [{"type": "input_text", "text": text}]})
    assert found.store == "v2" and found.summary == "v1\n# Summary v2"


def test_no_memory_span_no_memory_message():
    for payload in ({"type": "message", "role": "developer",
                     "content": [{"type": "input_text", "text": "<skills_instructions>"}]},
                    {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": "## Memory\n"}]},
                    {"type": "message", "role": "developer", "content": "## Memory"}):
        assert scan.memory_message(payload) is None


def test_the_truncation_marker_says_how_much_was_cut():
    long = "".join(f"- line {n}: the build uses uv; 日本語 {n}\n" for n in range(900))
    cut = codex_summary(long)
    removed = scan.truncated_tokens(cut)
    assert removed == -(-(len(long.strip().encode()) - 4 * 2500) // 4)
    assert scan.truncated_tokens(SUMMARY) is None and scan.truncated_tokens(None) is None


# --------------------------------------------------------------------------- one thread


def test_an_injected_cited_thread(home):
    tid = thread_id(1)
    message = v1_message(f"{home}/memories", SUMMARY.strip())
    write(home, tid, session(tid, str(project_of(home)), message=message,
                             turns=[MEMORIES[0], None]))
    state_db(home, [(tid, "exec", "disabled")])
    found = report(home, tid)
    memory = found["memory"]
    assert memory["injected"] and memory["store"] == "v1" and memory["messages"] == 1
    assert memory["tokens"] == approx_token_count(message)
    assert memory["summary_tokens"] == approx_token_count(SUMMARY.strip())
    assert not memory["truncated"] and memory["matches_current"] is True
    assert found["generation"]["memory_mode"] == "disabled"
    assert found["generation"]["memory_mode_from"] == "state_5.sqlite"
    assert found["generation"]["will_generate"] is False
    assert found["citations"]["replies"] == 2 and found["citations"]["cited_replies"] == 1
    assert found["citations"]["threads"] == [{"thread_id": MEMORIES[0], "replies": 1,
                                              "in_codex": None}]
    (entry,) = found["citations"]["entries"]
    assert (entry["path"], entry["line_start"], entry["line_end"]) == ("MEMORY.md", 1, 2)
    assert entry["outcome"] == "unverified" and entry["basis"] == "none"
    assert found["reason"] is None and found["source"] == "exec"
    assert found["created_at"] == 1_768_903_200  # 2026-01-20T10:00:00Z
    models()["thread"].model_validate_json(json.dumps(with_iso(found)))


def with_iso(obj):
    from memcite.times import with_iso_times

    return with_iso_times(obj)


def test_a_changed_summary_no_longer_matches(home):
    tid = thread_id(2)
    write(home, tid, session(tid, "/x", message=v1_message("/m", "v1\n# Older summary"),
                             turns=[None]))
    found = report(home, tid)
    assert found["memory"]["injected"] and found["memory"]["matches_current"] is False
    assert found["reason"].startswith("the memory message was in the thread's context")
    assert found["setting"] is None


def test_a_truncated_summary_is_reported_with_its_cut(home):
    long = "".join(f"- line {n}: tests run with pytest -q; 日本語 {n}\n" for n in range(900))
    (home / "memories" / "memory_summary.md").write_text(long)
    injected = codex_summary(long)
    tid = thread_id(3)
    write(home, tid, session(tid, "/x", message=v1_message("/m", injected), turns=[None]))
    memory = report(home, tid)["memory"]
    assert memory["truncated"] and memory["truncated_tokens"] == scan.truncated_tokens(injected)
    assert memory["matches_current"] and memory["current"]["truncated"]


@pytest.mark.parametrize(("config", "summary", "words", "setting"), [
    ("[features]\nmemories = false\n", True, "memory feature is off", "[features] memories = true"),
    ("[features]\nmemories = true\n[memories]\nuse_memories = false\n", True, "use_memories = false",
     "[memories] use_memories = true (or remove the line)"),
    ("[features]\nmemories = true\n", False, "no memory summary to inject",
     "[memories] generate_memories = true"),
    # memory was off when the thread ran: the reason names every key that turns it off
    ("[features]\nmemories = true\n", True, "`-c memories.use_memories=false`, "
     "`-c features.memories=false`, or `codex --disable memories`",
     "[memories] use_memories = true and [features] memories = true (in config.toml, the "
     "profile or -c), without --disable memories"),
])
def test_why_memory_was_not_injected(home, config, summary, words, setting):
    (home / "config.toml").write_text(config)
    if not summary:
        (home / "memories" / "memory_summary.md").unlink()
    tid = thread_id(4)
    write(home, tid, session(tid, "/x", message=None, turns=[None]))
    found = report(home, tid)
    assert not found["memory"]["injected"] and found["memory"]["matches_current"] is None
    assert words in found["reason"] and found["setting"] == setting
    assert found["eligibility"]["could_get_memory"] == ("memories = true" in config
                                                       and "use_memories" not in config)


@pytest.mark.parametrize(("mode", "source", "will", "words"), [
    ("disabled", "cli", False, "generate_memories = false"),
    ("polluted", "cli", False, "disable_on_external_context = true"),
    ("enabled", "exec", False, "never from exec threads"),
    ("enabled", '{"subagent":{"thread_spawn":{"parent_thread_id":"x"}}}', False,
     "never from subagent threads"),
    ("enabled", "cli", True, "min_rollout_idle_hours"),
    ("enabled", "vscode", True, "min_rollout_idle_hours"),
])
def test_whether_codex_makes_a_memory_from_it(home, mode, source, will, words):
    (home / "config.toml").write_text("[features]\nmemories = true\n")
    tid = thread_id(5)
    write(home, tid, session(tid, "/x", message=None, turns=[None], memory_mode=None))
    state_db(home, [(tid, source, mode)])
    generation = report(home, tid)["generation"]
    assert generation["memory_mode"] == mode and generation["will_generate"] is will
    assert words in generation["explanation"]


def test_memory_mode_from_the_session_meta_without_a_state_database(home):
    tid = thread_id(6)
    write(home, tid, session(tid, "/x", message=None, turns=[None], memory_mode="disabled"))
    generation = report(home, tid)["generation"]
    assert (generation["memory_mode"], generation["memory_mode_from"]) == ("disabled",
                                                                           "session_meta")
    tid = thread_id(7)
    write(home, tid, session(tid, "/x", message=None, turns=[None], memory_mode=None))
    generation = report(home, tid)["generation"]
    assert generation["memory_mode"] is None and generation["will_generate"] is None


def test_a_memory_already_made_and_its_job_from_codex_s_memories_database(home):
    (home / "config.toml").write_text("[features]\nmemories = true\n")
    tid = thread_id(8)
    write(home, tid, session(tid, "/x", message=v1_message("/m", SUMMARY.strip()),
                             turns=[MEMORIES[0], MEMORIES[1]], memory_mode=None))
    state_db(home, [(tid, "cli", "enabled")])
    memories_db(home, [tid, MEMORIES[1]], jobs=[("memory_stage1", tid, "done", 1, 2)])
    found = report(home, tid)
    assert found["generation"]["memory_exists"] is True
    assert found["generation"]["will_generate"] is False
    assert found["generation"]["stage1_job"] == "done"
    cited = {row["thread_id"]: row["in_codex"] for row in found["citations"]["threads"]}
    assert cited == {MEMORIES[0]: False, MEMORIES[1]: True}


def test_a_subagent_s_thread(home):
    parent, child = thread_id(9), thread_id(10)
    source = {"subagent": {"thread_spawn": {"parent_thread_id": parent, "depth": 1,
                                            "agent_nickname": "Locke"}}}
    write(home, child, session(child, "/x", message=v1_message("/m", SUMMARY.strip()),
                               turns=[MEMORIES[0]], source=source))
    found = report(home, child)
    assert found["source"] == "subagent" and found["parent_thread_id"] == parent
    assert found["eligibility"]["subagent"] and found["memory"]["injected"]
    assert found["generation"]["interactive"] is False


def test_found_in_archived_sessions_and_compressed(home):
    tid = thread_id(11)
    write(home, tid, session(tid, "/x", message=v1_message("/m", SUMMARY.strip()),
                             turns=[MEMORIES[0]]), archived=True, zst=True)
    found = report(home, tid.upper().replace("-", ""))  # any spelling Codex counts
    assert found["archived"] and found["session_file"].endswith(".jsonl.zst")
    assert found["thread_id"] == tid and found["memory"]["injected"]


def test_no_such_thread_and_not_an_id(home):
    with pytest.raises(NoSuchThread):
        report(home, thread_id(12))
    with pytest.raises(InputError, match="not a thread id"):
        report(home, "not-a-uuid")


def test_last_takes_the_newest_thread_of_the_project(home):
    project = project_of(home)
    old, new, other, sub = thread_id(13), thread_id(14), thread_id(15), thread_id(16)
    write(home, old, session(old, str(project), message=None, turns=[None]), mtime=NOW - 300)
    write(home, new, session(new, str(project / "sub"), message=None, turns=[None]),
          mtime=NOW - 200)
    write(home, other, session(other, "/elsewhere", message=None, turns=[None]), mtime=NOW - 100)
    write(home, sub, session(sub, str(project), message=None, turns=[None],
                             source={"subagent": {"thread_spawn": {"parent_thread_id": new}}}),
          mtime=NOW - 50)
    assert report(home, last_in=str(project))["thread_id"] == new
    with pytest.raises(NoSuchThread):
        report(home, last_in=str(home.parent / "nowhere"))


def test_a_paginated_reply_not_yet_written_as_a_response_item_counts(home):
    tid = thread_id(17)
    lines = [meta(tid, "/x"), developer([v1_message("/m", SUMMARY.strip())], 1)]
    lines += paged_turn(1, len(lines), cite=MEMORIES[0], response_item=False)
    write(home, tid, b"".join(lines))
    citations = report(home, tid)["citations"]
    assert citations["replies"] == 1 and citations["cited_replies"] == 1
    assert citations["threads"][0]["thread_id"] == MEMORIES[0]


def test_untrusted_lines_are_skipped_and_said(home):
    tid = thread_id(18)
    data = session(tid, "/x", message=v1_message("/m", SUMMARY.strip()), turns=[MEMORIES[0]])
    data += b'{"type":"response_item","payload":{"role":"assistant"\n'  # not JSON
    data += b'{"type":"response_item","payload":{"type":"message","role":"assistant",' \
            b'"content":[{"type":"output_text","text":"' + b"x" * (17 << 20) + b'"}]}}\n'
    write(home, tid, data)
    found = report(home, tid)
    assert found["citations"]["cited_replies"] == 1
    assert any("not JSON" in w for w in found["warnings"])
    assert any("too long" in w for w in found["warnings"])
    thread = read_thread(found["session_file"], max_bytes=1024)
    assert thread.counts.partial and thread.meta is not None


def _ingest(home: Path, path: Path, db: Path) -> None:
    result = runner.invoke(app, ["ingest", str(path), "--db", str(db), "--codex-home", str(home)])
    assert result.exit_code == 0, result.output


def test_cited_entries_checked_against_the_hash_memcite_recorded(home, tmp_path):
    """Replies recorded as they were made (as the Stop hook records them) carry the hash of
    the lines they cited; an old session ingested late has none (then: the git history)."""
    import time

    tid = thread_id(19)
    hour = time.strftime("%Y-%m-%dT%H", time.gmtime()).encode()
    data = session(tid, "/x", message=v1_message("/m", SUMMARY.strip()),
                   turns=[MEMORIES[0], MEMORIES[0]]).replace(b"2026-01-20T10", hour)
    path = write(home, tid, data)
    db = tmp_path / "memcite.sqlite"
    _ingest(home, path, db)
    (entry,) = report(home, tid, db_path=str(db))["citations"]["entries"]
    assert (entry["outcome"], entry["basis"], entry["citations"]) == ("ok", "recorded", 2)
    (home / "memories" / "MEMORY.md").write_text("# Memory\n- changed line\n- more\n")
    (entry,) = report(home, tid, db_path=str(db))["citations"]["entries"]
    assert (entry["outcome"], entry["basis"]) == ("changed", "recorded")
    (home / "memories" / "MEMORY.md").write_text("# Memory\n")
    (entry,) = report(home, tid)["citations"]["entries"]
    assert entry["outcome"] == "out_of_range" and entry["basis"] == "none"


def test_cited_entries_checked_against_the_folder_s_git_history(home):
    folder = home / "memories"
    git = ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    env = {**os.environ, "GIT_COMMITTER_DATE": "2026-01-19T00:00:00Z",
           "GIT_AUTHOR_DATE": "2026-01-19T00:00:00Z"}
    subprocess.run([*git, "commit", "-q", "-m", "memories"], check=True, env=env)
    tid = thread_id(20)
    write(home, tid, session(tid, "/x", message=v1_message("/m", SUMMARY.strip()),
                             turns=[MEMORIES[0]]))
    (entry,) = report(home, tid)["citations"]["entries"]
    assert (entry["outcome"], entry["basis"]) == ("ok", "history")


# --------------------------------------------------------------------------- the CLI


def invoke(args: list[str], home: Path, cwd: Path | None = None):
    previous = os.getcwd()
    os.chdir(cwd or home)
    try:
        return runner.invoke(app, ["thread", *args, "--codex-home", str(home)],
                             env={"MEMCITE_DB": str(home / "none.sqlite")})
    finally:
        os.chdir(previous)


def test_the_command_prints_the_report_and_its_json_fits_the_model(home):
    tid = thread_id(21)
    write(home, tid, session(tid, str(project_of(home)), message=v1_message("/m", SUMMARY.strip()),
                             turns=[MEMORIES[0]]))
    result = invoke([tid], home)
    assert result.exit_code == 0, result.output
    assert "memory message: injected" in result.output
    assert f"memory {MEMORIES[0]}: 1 reply" in result.output
    result = invoke(["--last", "--json"], home, cwd=project_of(home) / "sub")
    assert result.exit_code == 0, result.output
    (parsed,) = [models()["thread"].model_validate_json(line) for line in result.stdout.splitlines()]
    assert parsed.root.thread_id == tid and parsed.root.checked_at_iso


@pytest.mark.parametrize("args", [[], ["--last", thread_id(1)], ["--cost", "--last"],
                                  ["--last", "--since", "2026-01-01"], [thread_id(99)],
                                  ["nope"], ["--cost", "--since", "yesterday"]])
def test_bad_input_and_no_such_thread_exit_2_without_a_traceback(home, args):
    result = invoke(args, home)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "memcite: error:" in result.output


def test_a_missing_codex_home_is_exit_2(tmp_path):
    result = runner.invoke(app, ["thread", "--last", "--codex-home", str(tmp_path / "no")])
    assert result.exit_code == 2 and "no such Codex home" in result.output


# --------------------------------------------------------------------------- what memory costs


def _costly_home(home: Path) -> dict[str, int]:
    """Three threads: two days, two folders; one without memory; one compacted (two messages)."""
    first, second, third = thread_id(30), thread_id(31), thread_id(32)
    message = v1_message("/m", SUMMARY.strip())
    tokens = approx_token_count(message)
    lines = [meta(first, "/work/a"), developer([message], 1, second=1)]
    lines += paged_turn(1, len(lines), cite=None)  # one token_count each turn
    lines += paged_turn(2, len(lines), cite=None)
    write(home, first, b"".join(lines), day=20)
    lines = [meta(second, "/work/b"), developer([message], 1, second=1)]
    lines += paged_turn(1, len(lines), cite=None)
    bigger = v1_message("/m", SUMMARY.strip() + "\n- one more line")
    lines.append(developer([bigger], len(lines), second=20))  # after a compaction
    lines.append(token_count(len(lines), second=21))
    data = b"".join(lines).replace(b"2026-01-20T", b"2026-01-21T")
    write(home, second, data, day=21)
    write(home, third, session(third, "/work/a", message=None, turns=[None])
          .replace(b"2026-01-20T", b"2026-01-21T"), day=21)
    return {"tokens": tokens, "bigger": approx_token_count(bigger)}


def test_memory_cost_per_day_and_per_folder(home):
    sizes = _costly_home(home)
    memories_db(home, [], jobs=[("memory_stage1", thread_id(30), "done", NOW - 10, NOW - 5),
                                ("memory_stage1", thread_id(31), "error", NOW - 9, NOW - 8),
                                ("memory_consolidate_global", "global", "done", 5, 6)])
    found = memory_cost(home, now=NOW)
    tokens, bigger = sizes["tokens"], sizes["bigger"]
    assert found["totals"] == {"threads": 3, "threads_with_memory": 2, "injections": 3,
                               "tokens": 2 * tokens + bigger, "requests": 5,
                               "resent_tokens": 3 * tokens + bigger}
    days = {row["day"]: row for row in found["by_day"]}
    assert set(days) == {"2026-01-20", "2026-01-21"}
    assert days["2026-01-20"]["tokens"] == tokens and days["2026-01-20"]["requests"] == 2
    assert days["2026-01-21"]["injections"] == 2 and days["2026-01-21"]["threads"] == 2
    folders = {row["cwd"]: row for row in found["by_project"]}
    assert folders["/work/b"]["tokens"] == tokens + bigger
    assert folders["/work/a"]["threads"] == 2 and folders["/work/a"]["threads_with_memory"] == 1
    (v1, v2) = found["jobs"]
    assert v1["found"] and v1["rows"] == 3 and not v2["found"]
    assert {(row["kind"], row["status"]): row["rows"] for row in v1["by_kind"]} == {
        ("memory_consolidate_global", "done"): 1, ("memory_stage1", "done"): 1,
        ("memory_stage1", "error"): 1}
    assert found["files"]["read"] == 3
    models()["thread"].model_validate_json(json.dumps(with_iso(found)))


def test_memory_cost_since_counts_only_what_came_after(home):
    sizes = _costly_home(home)
    for path in (home / "sessions").rglob("*.jsonl"):
        os.utime(path, (NOW, NOW))
    memories_db(home, [], jobs=[("memory_stage1", "a", "done", NOW - 10, NOW - 5),
                                ("memory_consolidate_global", "global", "done", 5, 6)])
    since = 1_768_953_600  # 2026-01-21T00:00:00Z
    found = memory_cost(home, now=NOW, since=since)
    assert [row["day"] for row in found["by_day"]] == ["2026-01-21"]
    assert found["totals"]["injections"] == 2
    assert found["totals"]["tokens"] == sizes["tokens"] + sizes["bigger"]
    assert found["jobs"][0]["rows"] == 1
    old = memory_cost(home, now=NOW, since=NOW + 1)  # every file last written before
    assert old["files"]["skipped_old"] == 3 and old["totals"]["threads"] == 0


def test_memory_cost_reads_big_files_in_part_and_survives_bad_ones(home):
    sizes = _costly_home(home)
    (home / "sessions" / "2026" / "01" / "22").mkdir(parents=True)
    bad = home / "sessions" / "2026" / "01" / "22" / f"rollout-2026-01-22T10-00-00-{thread_id(40)}.jsonl.zst"
    bad.write_bytes(b"not zstd at all")
    found = memory_cost(home, now=NOW, max_file_bytes=300_000)
    assert found["files"]["unreadable"] == 1 and "zstd" in found["files"]["problems"][0]
    assert found["files"]["partial"] == 0
    small = memory_cost(home, now=NOW, max_file_bytes=1_000)  # a line begun is read whole
    assert small["files"]["partial"] == 3 and small["totals"]["tokens"] == 0
    assert found["totals"]["tokens"] == 2 * sizes["tokens"] + sizes["bigger"]


def test_the_cost_command_prints_and_its_json_fits_the_model(home):
    _costly_home(home)
    result = invoke(["--cost"], home)
    assert result.exit_code == 0, result.output
    assert "per day (UTC):" in result.output and "/work/b" in result.output
    result = invoke(["--cost", "--json", "--since", "2026-01-21"], home)
    assert result.exit_code == 0, result.output
    (parsed,) = [models()["thread"].model_validate_json(line) for line in result.stdout.splitlines()]
    assert parsed.root.since_iso == "2026-01-21T00:00:00Z"


def test_cited_without_a_memory_message_is_not_blamed_on_a_setting(home):
    # memory off in config.toml, no memory message, yet a reply cites memory: the report says
    # so, and never that memory was off and also cited
    (home / "config.toml").write_text("[features]\nmemories = false\n")
    tid = thread_id(9)
    write(home, tid, session(tid, "/x", message=None, turns=[MEMORIES[0]]))
    found = report(home, tid)
    assert not found["memory"]["injected"] and found["citations"]["cited_replies"] == 1
    assert "read the memory folder on its own" in found["reason"]
    assert "feature is off" not in found["reason"] and found["setting"] is None
    shown = invoke([tid], home)
    assert "how memory was used: no memory message" in shown.stdout
    assert "why memory was not used" not in shown.stdout


def test_last_outside_a_project_takes_the_home_s_newest_and_inside_names_the_flag(home, tmp_path):
    """Issue 40: `thread --last` worked only inside the session's git project, and elsewhere
    said only that it found no session."""
    elsewhere, other = thread_id(41), thread_id(42)
    write(home, other, session(other, "/srv/older", message=None, turns=[None]), mtime=NOW - 200)
    write(home, elsewhere, session(elsewhere, "/srv/app", message=None, turns=[None]),
          mtime=NOW - 100)
    plain = tmp_path / "plain"  # no .git anywhere above it
    plain.mkdir()
    result = invoke(["--last"], home, cwd=plain)
    assert result.exit_code == 0, result.output
    assert f"{plain} is in no git project: the newest thread of the whole Codex home" in \
        result.output and elsewhere in result.output
    repository = tmp_path / "repo"
    (repository / ".git").mkdir(parents=True)
    result = invoke(["--last"], home, cwd=repository)
    assert result.exit_code == 2
    assert "memcite thread --last --anywhere" in result.output
    result = invoke(["--last", "--anywhere", "--json"], home, cwd=repository)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["thread_id"] == elsewhere
    assert invoke(["--anywhere", elsewhere], home).exit_code == 2  # --anywhere goes with --last
