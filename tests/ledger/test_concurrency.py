"""Eight real processes recording at once, one killed mid-run and re-run: nothing lost or doubled.

``record --jsonl FILE`` commits ~100 replies per transaction: the kill loses a whole
batch in progress, and the re-run (each reply keyed) records exactly what is missing.
``ingest`` batches the same way: a killed ingest, of a file or of a whole Codex home
(whose stored offset never runs ahead of what was committed), re-run, is exact too.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter

import pytest

from codex_sessions import memory_folder, session_id, write_session
from memcite.ledger import store
from memcite.ledger.ingest import iter_rollout_replies
from memcite.ledger.recording import rebuild
from memcite.ledger.session_offsets import load_offset
from memcite.ledger.store import open_store, transaction

PROCESSES = 8
REPLIES_EACH = 120
VICTIM_REPLIES = 600
THREADS = [f"019c{n:04x}-0000-7000-8000-{n:012x}" for n in range(24)]


def _reply(rng: random.Random, key: str) -> tuple[dict, list[str]]:
    cited = rng.sample(THREADS, rng.randint(1, 3))
    written = list(cited)
    if rng.random() < 0.3:
        written.append(cited[0].upper())  # a spelling variant: counted once by default
    text = (f"Reply {key}.\n<oai-mem-citation>\n<citation_entries>\n"
            f"MEMORY.md:1-2|note=[{key}]\n</citation_entries>\n<rollout_ids>\n"
            + "".join(t + "\n" for t in written) + "</rollout_ids>\n</oai-mem-citation>")
    return {"text": text, "id": key, "at": 1_700_000_000 + rng.randint(0, 10**6)}, cited


def _start(batch, db, env):
    return subprocess.Popen(
        [sys.executable, "-m", "memcite", "record", "--jsonl", str(batch), "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )


def test_eight_processes_one_killed_and_rerun_count_every_citation_once(tmp_path):
    db = tmp_path / "memcite.sqlite"
    conn = open_store(db)
    with transaction(conn):
        conn.executemany("INSERT INTO memories (thread_id, source, first_synced_at, synced_at)"
                         " VALUES (?, 'stage1_outputs', 1, 1)", [(t,) for t in THREADS])
    expected: Counter[str] = Counter()
    batches = []
    rng = random.Random(20260120)
    for process in range(PROCESSES):
        size = VICTIM_REPLIES if process == PROCESSES - 1 else REPLIES_EACH
        batch = tmp_path / f"batch{process}.jsonl"
        with open(batch, "w") as handle:
            for n in range(size):
                item, cited = _reply(rng, f"p{process}-{n}")
                expected.update(cited)
                handle.write(json.dumps(item) + "\n")
        batches.append(batch)
    env = {**os.environ, "CODEX_HOME": str(tmp_path / "no_codex_home"),
           "MEMCITE_NO_FASTPATH": ""}

    procs = [_start(batch, db, env) for batch in batches]
    victim = procs[-1]
    # Wait until the victim is part-way through, then kill it without warning.
    watcher = sqlite3.connect(db, timeout=30)
    deadline = time.monotonic() + 60
    done_before_kill = 0
    while time.monotonic() < deadline and victim.poll() is None:
        done_before_kill = watcher.execute(
            "SELECT count(*) FROM replies WHERE reply_key LIKE 'p7-%'").fetchone()[0]
        if done_before_kill >= 40:
            break
        time.sleep(0.005)
    assert victim.poll() is None, "the victim finished before it could be killed"
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    assert victim.returncode == -signal.SIGKILL

    for proc in procs[:-1]:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        assert b"locked" not in err and err == b"", err.decode()
        assert out.startswith(f"recorded {REPLIES_EACH} replies (0 already".encode())

    recorded_by_victim = watcher.execute(
        "SELECT count(*) FROM replies WHERE reply_key LIKE 'p7-%'").fetchone()[0]
    assert done_before_kill <= recorded_by_victim < VICTIM_REPLIES
    # The victim commits a batch of replies per transaction (it reads a file): the kill
    # lost only the batch in progress, so what it left is a whole prefix of its input.
    victim_keys = {row[0] for row in watcher.execute(
        "SELECT reply_key FROM replies WHERE reply_key LIKE 'p7-%'")}
    assert victim_keys == {f"p7-{n}" for n in range(recorded_by_victim)}
    watcher.close()

    rerun = _start(batches[-1], db, env)
    out, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err.decode()
    missing = VICTIM_REPLIES - recorded_by_victim
    assert out.startswith(
        f"recorded {missing} replies ({recorded_by_victim} already recorded".encode())

    total = REPLIES_EACH * (PROCESSES - 1) + VICTIM_REPLIES
    assert conn.execute("SELECT count(*) FROM replies").fetchone()[0] == total
    assert dict(conn.execute("SELECT thread_id, usage_count FROM memories")) == dict(expected)
    # Every reply is whole: as many entries as replies, ids logged for each.
    assert conn.execute("SELECT count(*) FROM cited_entries").fetchone()[0] == total
    assert conn.execute("SELECT count(DISTINCT reply_id) FROM cited_ids").fetchone()[0] == total
    assert rebuild(conn, apply=False).differences == ()
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_eight_processes_creating_the_database_at_once(tmp_path):
    db = tmp_path / "fresh.sqlite"
    env = {**os.environ, "CODEX_HOME": str(tmp_path / "none"), "MEMCITE_DB": str(db)}
    procs = [
        subprocess.Popen([sys.executable, "-m", "memcite", "record", "--id", f"r{n}", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env)
        for n in range(PROCESSES)
    ]
    for n, proc in enumerate(procs):
        out, err = proc.communicate(f"reply {n}".encode(), timeout=120)
        assert proc.returncode == 0, err.decode()
        assert out == f"reply {n}".encode()
    conn = open_store(db)
    assert conn.execute("SELECT count(*) FROM replies").fetchone()[0] == PROCESSES
    assert conn.execute("SELECT count(*) FROM _memcite_migrations").fetchone()[0] == len(
        store.MIGRATIONS)


@pytest.mark.parametrize("whole_home", [False, True], ids=["file", "home"])
def test_a_killed_ingest_rerun_records_exactly_what_was_missing(tmp_path, whole_home):
    home = tmp_path / "codex"
    memory_folder(home)
    path = write_session(home, session_id(7), 1500, tool_output=200)  # 3,000 replies
    keys = [reply.id for reply in iter_rollout_replies(path)]
    db = tmp_path / "memcite.sqlite"
    conn = open_store(db)
    env = {**os.environ, "CODEX_HOME": str(home), "MEMCITE_NO_FASTPATH": ""}
    command = [sys.executable, "-m", "memcite", "ingest", "--db", str(db), "--json",
               *(["--codex-home", str(home)] if whole_home else [str(path)])]

    victim = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    watcher = sqlite3.connect(db, timeout=30)
    deadline = time.monotonic() + 60
    done_before_kill = 0
    while time.monotonic() < deadline and victim.poll() is None:
        done_before_kill = watcher.execute("SELECT count(*) FROM replies").fetchone()[0]
        if done_before_kill >= 300:
            break
        time.sleep(0.005)
    assert victim.poll() is None, "the ingest finished before it could be killed"
    victim.send_signal(signal.SIGKILL)
    victim.communicate()
    # Whole batches were committed, in file order: what is recorded is a prefix of the replies.
    recorded = [row[0] for row in watcher.execute("SELECT reply_key FROM replies ORDER BY id")]
    watcher.close()
    assert done_before_kill <= len(recorded) < len(keys)
    assert recorded == keys[:len(recorded)]
    assert load_offset(conn, path) is None  # never ahead of what was committed

    rerun = subprocess.run(command, capture_output=True, env=env, timeout=120, check=False)
    assert rerun.returncode == 0, rerun.stderr.decode()
    result = json.loads(rerun.stdout)
    assert (result["replies"], result["recorded"], result["duplicates"]) == \
        (len(keys), len(keys) - len(recorded), len(recorded))
    assert [row[0] for row in conn.execute("SELECT reply_key FROM replies ORDER BY id")] == keys
    cited = conn.execute("SELECT count(*) FROM cited_entries").fetchone()[0]
    assert cited == len(keys) // 2  # one reply of each turn cites a memory, counted once
    assert rebuild(conn, apply=False).differences == ()
    if whole_home:
        assert load_offset(conn, path).byte_offset == path.stat().st_size
    conn.close()
