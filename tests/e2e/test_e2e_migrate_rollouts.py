"""``codex migrate-rollouts --apply`` (the real Codex) rewrites legacy session files into
the paginated form; memcite's ledger keeps every reply once, before and after.

Seen with the real 0.171 binary: the dry run (no ``--apply``) reports each legacy file
``eligible`` and writes nothing; ``--apply`` reports it ``migrated`` and rewrites it in
place, and a session ``codex exec`` wrote is ``already_paginated``. A file must be listed
in the state database (``state_5.sqlite``, table ``threads``): Codex lists the files under
``sessions/`` when it first starts in a home (its backfill), so the legacy files are
written before the first run, as a person's old sessions are; a file put there after the
backfill fails (``thread ... is missing its SQLite metadata``). The rewrite is line for line only for files that already had ``task_started`` and
``task_complete`` events; for older files it inserts those events (and drops a
``turn_context`` it cannot read), so replies move to other lines, with their times and
texts kept. Legacy assistant messages carry no item id (Codex never wrote it) and the
migration adds none to the ``response_item``, so line numbers are the keys memcite keeps;
the moved replies are found by text and time and their keys moved with them.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections import Counter
from pathlib import Path

import codex_sessions as sessions
from conftest import assert_ran
from memcite.ledger.ingest import iter_rollout_replies

FILES = 120
CITED = ("Done, as the memory said.\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:1-2|"
         "note=[build]\n</citation_entries>\n<rollout_ids>\n{thread}\n</rollout_ids>\n"
         "</oai-mem-citation>")


def legacy_home(codex_home: Path) -> dict[str, Path]:
    """``FILES`` legacy session files of three ages, some archived; their paths by session."""
    paths = {}
    for number in range(1, FILES + 1):
        session = sessions.session_id(0x500 + number)
        memory = sessions.MEMORIES[number % 2]
        archived = number % 10 == 0
        path = sessions.session_path(codex_home, session, day=1 + number % 28, archived=archived)
        turns = 1 + number % 4
        kind = number % 3
        if kind == 0:  # the oldest form: a short turn_context, no task events
            data = sessions.session_bytes(session, turns, cite=memory if number % 5 else None)
        else:  # later: a full turn_context; task events from some version on
            data = sessions.legacy_session_bytes(session, turns, cite=memory,
                                                 task_events=kind == 1,
                                                 commentary=number % 4 != 0)
        path.write_bytes(data)
        paths[session] = path
    return paths


def ledger(db: Path) -> dict:
    """What memcite's log holds: replies (key, text hash, time, thread) and counted citations."""
    with sqlite3.connect(db) as conn:
        replies = conn.execute("SELECT reply_key, text_sha256, replied_at, thread_id FROM replies"
                               ).fetchall()
        cited = conn.execute(
            "SELECT r.text_sha256, r.replied_at, c.thread_id, c.counted FROM cited_ids c"
            " JOIN replies r ON r.id = c.reply_id").fetchall()
        usage = dict(conn.execute("SELECT thread_id, usage_count FROM memories"))
    conn.close()
    return {"keys": {row[0] for row in replies},
            "replies": Counter(row[1:] for row in replies),
            "citations": Counter(cited),
            "counted": sum(row[3] for row in cited),
            "usage": usage}


def migrate(world, *args: str) -> dict:
    done = subprocess.run([world.codex, "migrate-rollouts", "--json", *args], env=world.env(),
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (f"migrate-rollouts exited {done.returncode}:\n"
                                  f"{done.stdout[-6000:]}\n{done.stderr[-3000:]}")
    return Counter(outcome["status"] for outcome in json.loads(done.stdout)["outcomes"])


def keys_now(paths) -> set[str]:
    return {reply.id for path in paths for reply in iter_rollout_replies(path)}


def test_migrate_rollouts_keeps_every_reply_once(world, capsys):
    paths = legacy_home(world.codex_home)  # as a person's old sessions are, before 0.171
    legacy_bytes = {session: path.read_bytes() for session, path in paths.items()}
    world.model.reply(CITED.format(thread=sessions.MEMORIES[0]))
    # the first run of 0.171: a paginated session, Codex's databases, its threads listed
    assert_ran(world.exec("use memory"))
    world.add_stage1_rows(list(sessions.MEMORIES))
    sessions.memory_folder(world.codex_home)
    world.memcite("sync", "--codex-home", str(world.codex_home))

    world.memcite("ingest", "--codex-home", str(world.codex_home))
    before = ledger(world.db)
    assert before["keys"] >= keys_now(paths.values())
    assert sum(before["replies"].values()) > FILES and before["counted"] > FILES // 2

    dry = migrate(world)
    assert dry["eligible"] == FILES and dry["already_paginated"] == 1, dry
    assert all(path.read_bytes() == legacy_bytes[s] for s, path in paths.items())
    applied = migrate(world, "--apply")
    assert applied["migrated"] == FILES, applied
    assert all(path.read_bytes() != legacy_bytes[s] for s, path in paths.items())
    assert all(b'"ordinal"' in path.read_bytes()[:200] for path in paths.values())
    moved_files = {s for s, path in paths.items()
                   if {r.id for r in iter_rollout_replies(path)} - before["keys"]}
    assert moved_files, "no reply changed lines: the test shows nothing"

    world.memcite("ingest", "--codex-home", str(world.codex_home))
    after = ledger(world.db)
    assert after["replies"] == before["replies"]  # no reply counted twice, none lost
    assert after["citations"] == before["citations"] and after["usage"] == before["usage"]
    assert keys_now(paths.values()) <= after["keys"]  # each reply keyed by its new line
    assert not [key for key in after["keys"] if "~" in key]  # none found on no line
    check = world.memcite("rebuild", "--check")
    assert check.returncode == 0

    again = world.memcite("ingest", "--codex-home", str(world.codex_home)).stdout
    assert " 0 recorded" in again and ledger(world.db)["replies"] == before["replies"]
    # memcite's own reading of each file names the same replies as before
    for session in sorted(moved_files)[:5]:
        scratch = world.root / "legacy.jsonl"
        scratch.write_bytes(legacy_bytes[session])
        old = [(r.text, r.at) for r in iter_rollout_replies(scratch)]
        assert [(r.text, r.at) for r in iter_rollout_replies(paths[session])] == old

    # the figures: `pytest -rP` or `-s` shows them; `-q` prints no stray line
    print(f"\nmigrate-rollouts {world.codex}: {FILES} legacy files, "
          f"{dry['eligible']} eligible, {applied['migrated']} migrated, "
          f"{applied['already_paginated']} already paginated; {len(moved_files)} files with "
          f"replies on other lines ({len(after['keys'] - before['keys'])} replies re-keyed, "
          f"{FILES - len(moved_files)} files whose replies kept their lines); replies {sum(before['replies'].values())} before, "
          f"{sum(after['replies'].values())} after; counted citations "
          f"{before['counted']} before, {after['counted']} after; usage {after['usage']}")


def test_a_migrated_session_goes_on_and_its_new_reply_counts_once(world):
    session = sessions.session_id(0x777)
    path = sessions.session_path(world.codex_home, session, day=2)
    path.write_bytes(sessions.session_bytes(session, 3))
    world.model.reply("Hello.")
    assert_ran(world.exec("hello"))
    world.add_stage1_rows(list(sessions.MEMORIES))
    world.memcite("sync", "--codex-home", str(world.codex_home))
    world.memcite("ingest", "--codex-home", str(world.codex_home))
    before = ledger(world.db)
    assert migrate(world, "--apply")["migrated"] == 1
    # Codex resumes the migrated thread: its new reply is appended in the paginated form
    world.model.reply(CITED.format(thread=sessions.MEMORIES[1]))
    done = subprocess.run(
        [world.codex, "exec", "resume", "--skip-git-repo-check", session, "go on"],
        cwd=world.work, env=world.env(), capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL)
    assert_ran(done, "codex exec resume")
    world.memcite("ingest", "--codex-home", str(world.codex_home))
    after = ledger(world.db)
    new = after["replies"] - before["replies"]
    assert sum(new.values()) == 1 and not before["replies"] - after["replies"]
    assert after["usage"][sessions.MEMORIES[1]] == before["usage"].get(sessions.MEMORIES[1], 0) + 1
    assert world.memcite("rebuild", "--check").returncode == 0
