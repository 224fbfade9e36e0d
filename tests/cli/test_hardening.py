"""Attacks on memcite, each reproduced and kept: hostile content, unbounded reads, a memory
root raced with symlinks, a damaged ledger. Each test fails on the code before the fix."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import zstandard

from memcite.ledger import memory_files
from memcite.ledger.ingest import RolloutScan, ingest_rollout, iter_rollout_replies
from memcite.ledger.memory_files import MemoryRoot, locate
from memcite.ledger.recording import MemoryFiles, ReplyInput, record_replies, record_reply
from memcite.ledger.store import DamagedStoreError, StoreError, open_store, transaction
from memcite.retention import checks as checks_module
from memcite.retention.checks import MemoryFolder, check_citations, check_entry, markdown_sections
from memcite.untrusted import loads_json, storable

A = "019b7635-7fb3-7cf8-8f11-6f64065672e0"
SESSION = "019bdb5e-1c40-7a21-9c3e-5f0d2b7a4e11"
PARENT = "019bdb5e-1c40-7a21-9c3e-5f0d2b7a4e99"


def block(entries: list[str], ids: list[str], before: str = "Done.\n") -> str:
    return (before + "<oai-mem-citation>\n<citation_entries>\n" + "\n".join(entries)
            + "\n</citation_entries>\n<rollout_ids>\n" + "\n".join(ids)
            + "\n</rollout_ids>\n</oai-mem-citation>")


def run(args, env: dict, stdin: bytes = b"", timeout: float = 30):
    """``python -m memcite`` as a real process (args and env may hold bytes)."""
    environ = {k.encode() if isinstance(k, str) else k: v.encode() if isinstance(v, str) else v
               for k, v in {**os.environ, **env}.items()}
    done = subprocess.run([sys.executable.encode(), b"-m", b"memcite",
                           *(a.encode() if isinstance(a, str) else a for a in args)],
                          input=stdin, capture_output=True, env=environ, timeout=timeout)
    return done.returncode, done.stdout, done.stderr.decode("utf-8", "replace")


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "codex"
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text("# Memory\nline two\n")
    return {"CODEX_HOME": str(home), "MEMCITE_DB": str(tmp_path / "m.sqlite"),
            "MEMCITE_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path / "home"),
            "MEMCITE_NO_FASTPATH": ""}


def session_line(kind: str, payload: dict) -> str:
    return json.dumps({"timestamp": "2026-01-20T10:00:00Z", "type": kind, "payload": payload})


def reply_line(text: str) -> str:
    return session_line("response_item", {"type": "message", "role": "assistant",
                                          "content": [{"type": "output_text", "text": text}]})


def meta_line(thread: str) -> str:
    return session_line("session_meta", {"id": thread, "cwd": "/w"})


# --------------------------------------------------------------------------- untrusted content

NUL_REPLY = block(["MEM\x00ORY.md:1-1|note=[nul]", "MEMORY.md:1-1|note=[fine]"], [A])


@pytest.mark.parametrize("with_folder", [True, False])
def test_a_nul_byte_in_a_cited_path_is_recorded_and_checked_without_a_crash(env, tmp_path,
                                                                             with_folder):
    if not with_folder:  # a Codex home without its memory folder
        (tmp_path / "bare").mkdir()
        env = {**env, "CODEX_HOME": str(tmp_path / "bare")}
    code, out, err = run(["record"], env, stdin=NUL_REPLY.encode())
    assert code == 0, err
    assert out == b"Done.\n"
    # ... and every later stats reads it, the memory folder present or not
    for home in (env["CODEX_HOME"], str(tmp_path / "codex")):
        code, out, err = run(["stats", "--json", "--judge-without-usage"], {**env, "CODEX_HOME": home})
        assert code == 0, err
        report = json.loads(out)
        assert report["citation_checks"]["citations"] == 2


def test_a_nul_byte_in_a_jsonl_batch_or_a_session_file_costs_nothing_else(env, tmp_path):
    batch = tmp_path / "b.jsonl"
    batch.write_text(json.dumps({"text": NUL_REPLY, "id": "nul"}) + "\n"
                     + json.dumps({"text": "after", "id": "after"}) + "\n")
    code, out, err = run(["record", "--jsonl", str(batch)], env)
    assert code == 0, err
    assert out.startswith(b"recorded 2 replies")
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text("\n".join([meta_line(SESSION), reply_line(NUL_REPLY),
                                  reply_line("after")]) + "\n")
    code, out, err = run(["ingest", str(rollout)], env)
    assert code == 0, err
    assert b"2 replies, 2 recorded" in out


SURROGATE_CASES = {
    "note": ({"text": block(["MEMORY.md:1-1|note=[\ud800]"], [A])}, "note", "\\ud800"),
    "path": ({"text": block(["MEM\udfffORY.md:1-1|note=[n]"], [A])}, "path", "MEM\\udfffORY.md"),
    "rollout id": ({"text": block(["MEMORY.md:1-1|note=[n]"], ["\ud83d"])}, "rollout_id",
                   "\\ud83d"),
    "id": ({"text": "hi", "id": "key-\udc00"}, "reply_key", "key-\\udc00"),
    "thread id": ({"text": "hi", "thread_id": "\udbff"}, "thread_id", "\\udbff"),
    "cwd": ({"text": "hi", "cwd": "/w/\ud800"}, "cwd", "/w/\\ud800"),
}
_COLUMN_TABLE = {"note": "cited_entries", "path": "cited_entries", "rollout_id": "cited_ids",
                 "reply_key": "replies", "thread_id": "replies", "cwd": "replies"}


@pytest.mark.parametrize("case", sorted(SURROGATE_CASES))
def test_lone_surrogates_from_json_escapes_are_stored_as_escapes(env, tmp_path, case):
    item, column, stored = SURROGATE_CASES[case]
    batch = tmp_path / "b.jsonl"
    # json.dumps writes the lone surrogate as the escape "\udXXX", as a hostile writer would
    batch.write_text(json.dumps(item) + "\n" + json.dumps({"text": "next", "id": "n"}) + "\n")
    code, out, err = run(["record", "--jsonl", str(batch), "--json"], env)
    assert code == 0, err
    assert len(out.splitlines()) == 2  # the batch went on, and printed both results
    conn = sqlite3.connect(env["MEMCITE_DB"])
    values = [row[0] for row in conn.execute(f"SELECT {column} FROM {_COLUMN_TABLE[column]}")]
    conn.close()
    assert stored in values


@pytest.mark.parametrize("option", ["--id", "--cwd", "--thread-id"])
def test_non_utf8_bytes_in_options_are_stored_as_escapes(env, option):
    code, out, err = run(["record", option, b"\xffbad\xfe"], env, stdin=b"hello")
    assert code == 0, err
    assert out == b"hello"
    conn = sqlite3.connect(env["MEMCITE_DB"])
    row = conn.execute("SELECT reply_key, cwd, thread_id FROM replies").fetchone()
    conn.close()
    assert "\\udcffbad\\udcfe" in row


def test_non_utf8_bytes_in_environment_values_and_file_names(env, tmp_path):
    home = os.fsencode(tmp_path) + b"/codex\xff"
    os.makedirs(home + b"/memories")
    with open(home + b"/memories/MEMORY.md", "wb") as handle:
        handle.write(b"# M\nline\n")
    db = os.fsencode(tmp_path) + b"/db\xfe.sqlite"
    values = {**env, "CODEX_HOME": home, "MEMCITE_DB": db}
    code, _, err = run(["record"], values, stdin=block(["MEMORY.md:2-2|note=[x]"], [A]).encode())
    assert code == 0, err
    rollout = os.fsencode(tmp_path) + b"/rollout\xfd.jsonl"
    with open(rollout, "wb") as handle:
        handle.write((meta_line(SESSION) + "\n" + reply_line("hi") + "\n").encode())
    code, out, err = run(["ingest", rollout], values)
    assert code == 0, err
    assert b"rollout\\udcfd.jsonl: 1 reply, 1 recorded" in out
    code, out, err = run(["stats", "--json", "--judge-without-usage"], values)
    assert code == 0, err
    assert json.loads(out)["citation_checks"]["outcomes"]["ok"]["citations"] == 1
    with open(home + b"/memories/raw_memories.md", "w") as handle:
        handle.write(f"## Thread `{A}`\nupdated_at: 2026-01-20T10:00:00Z\n\ntext\n")
    code, out, err = run(["sync"], values)  # the home's name is stored as its escape
    assert code == 0, err
    assert b"codex\\udcff: 1 raw_memories.md section" in out


DEEP = "[" * 100_000 + "]" * 100_000


def test_json_nested_100000_deep_is_a_bad_line_and_the_batch_goes_on(env, tmp_path):
    batch = tmp_path / "b.jsonl"
    batch.write_text(DEEP + "\n" + '{"text": ' + DEEP + "}\n" + json.dumps({"text": "ok"}) + "\n")
    code, out, err = run(["record", "--jsonl", str(batch)], env)
    assert code == 2  # done, with problems
    assert f"{batch}:1: not JSON (nested too deeply)" in err and f"{batch}:2:" in err
    assert out.startswith(b"recorded 1 reply")
    rollout = tmp_path / "rollout.jsonl"
    deep_reply = '{"type": "response_item", "payload": {"role": "assistant", "x": ' + DEEP + "}}"
    rollout.write_text("\n".join([meta_line(SESSION), deep_reply, reply_line("ok")]) + "\n")
    code, out, err = run(["ingest", str(rollout)], env)
    assert code == 2
    assert "nested too deeply (lines 2)" in err
    assert b"1 reply, 1 recorded" in out


def test_untrusted_helpers():
    assert storable("plain é") == "plain é"
    assert storable("a\ud800b\udcff") == "a\\ud800b\\udcff"
    with pytest.raises(ValueError, match="nested too deeply"):
        loads_json("[" * 100_000)


# --------------------------------------------------------------------------- ingest: forks


def test_the_first_session_meta_is_the_thread_and_sibling_forks_never_collide(tmp_path):
    """A fork repeats its parent's session_meta after its own: replies stay the fork's."""
    conn = open_store(tmp_path / "m.sqlite")
    forks = []
    for name, thread, text in (("a", SESSION, "fork A's own reply"),
                               ("b", "019bdb5e-1c40-7a21-9c3e-5f0d2b7a4e12", "fork B's reply")):
        path = tmp_path / f"rollout-2026-01-20T10-00-00-{thread}.jsonl"
        path.write_text("\n".join([meta_line(thread), meta_line(PARENT), reply_line(text)]) + "\n")
        forks.append((name, path, thread))
    for _name, path, thread in forks:
        scan = RolloutScan(str(path))
        replies = list(iter_rollout_replies(path, scan))
        assert [r.thread_id for r in replies] == [thread]
        assert scan.parent_ids == [PARENT]
        report = ingest_rollout(conn, path)
        assert (report.recorded, report.duplicates) == (1, 0)  # never dropped as a duplicate
    rows = conn.execute("SELECT reply_key, thread_id FROM replies ORDER BY id").fetchall()
    assert rows == [(f"{SESSION}:3", SESSION),
                    ("019bdb5e-1c40-7a21-9c3e-5f0d2b7a4e12:3", "019bdb5e-1c40-7a21-9c3e-5f0d2b7a4e12")]


def test_a_reverted_threads_file_is_keyed_apart_and_an_archived_copy_is_not(tmp_path):
    conn = open_store(tmp_path / "m.sqlite")
    lines = "\n".join([meta_line(SESSION), reply_line("first")]) + "\n"
    original = tmp_path / f"rollout-2026-01-20T10-00-00-{SESSION}.jsonl"
    reverted = tmp_path / f"rollout-2026-01-20T11-00-00-{SESSION}_r2.jsonl"
    archived = tmp_path / "archived" / original.name
    archived.parent.mkdir()
    for path in (original, reverted, archived):
        path.write_text(lines)
    assert ingest_rollout(conn, original).recorded == 1
    assert ingest_rollout(conn, reverted).recorded == 1  # another version of the thread
    assert ingest_rollout(conn, archived).duplicates == 1  # the same file, moved
    keys = [row[0] for row in conn.execute("SELECT reply_key FROM replies ORDER BY id")]
    assert keys == [f"{SESSION}:2", f"{SESSION}_r2:2"]


# --------------------------------------------------------------------------- bounded reads


@pytest.mark.parametrize("source", ["/dev/zero", "/dev/urandom", "fifo"])
def test_ingest_of_a_device_or_a_fifo_returns_promptly(env, tmp_path, source):
    if source == "fifo":
        source = str(tmp_path / "fifo")
        os.mkfifo(source)
    started = time.monotonic()
    code, _, err = run(["ingest", source], env, timeout=20)
    assert code == 2 and "not a regular file" in err
    assert time.monotonic() - started < 15
    assert not os.path.exists(env["MEMCITE_DB"])  # nothing created


@pytest.mark.parametrize("command", [["record", "-"], ["stats", "--judge-without-usage"], ["rebuild", "--check"],
                                     ["record", "--jsonl", "FIFO"]])
def test_a_fifo_as_the_database_or_the_batch_never_hangs(env, tmp_path, command):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    target = {**env, "MEMCITE_DB": str(fifo)} if "FIFO" not in command else env
    args = [str(fifo) if arg == "FIFO" else arg for arg in command]
    code, _, err = run(args, target, stdin=b"hi", timeout=20)
    assert code == 2 and "FIFO" in err


def test_ingest_skips_a_reply_over_max_bytes_without_holding_it(tmp_path):
    rollout = tmp_path / "rollout.jsonl"
    huge = reply_line("x" * 30_000_000)
    rollout.write_text("\n".join([meta_line(SESSION), huge, reply_line("small")]) + "\n")
    packed = tmp_path / "rollout.jsonl.zst"
    packed.write_bytes(zstandard.ZstdCompressor().compress(rollout.read_bytes()))
    import tracemalloc

    for path in (rollout, packed):
        scan = RolloutScan(str(path))
        tracemalloc.start()
        replies = [r.text for r in iter_rollout_replies(path, scan, max_bytes=1_000_000)]
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert replies == ["small"]
        assert (scan.long_line_count, scan.long_lines) == (1, [2])
        assert peak < 10_000_000, peak  # the 30 MB line was never held


def test_ingest_reports_a_skipped_long_line_and_exits_2(env, tmp_path):
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text("\n".join([meta_line(SESSION), reply_line("y" * 5000),
                                  reply_line("ok")]) + "\n")
    code, out, err = run(["ingest", "--max-bytes", "1000", str(rollout)], env)
    assert code == 2
    assert "1 reply line longer than the limit of 1000 bytes (lines 2)" in err
    assert b"1 reply, 1 recorded" in out


def test_a_cited_file_over_the_cap_is_not_read_and_says_so(tmp_path, monkeypatch):
    root = tmp_path / "memories"
    root.mkdir()
    (root / "MEMORY.md").write_bytes(b"# Big\n" + b"x\n" * 5000)
    monkeypatch.setattr(checks_module, "MAX_FILE_BYTES", 1000)
    folder = MemoryFolder(root)
    checks = check_citations([("MEMORY.md", 1, 2, "0" * 64, 1)], folder)
    assert checks.outcomes["unverified"]["citations"] == 1  # neither ok nor blamed
    assert "MEMORY.md" in checks.skipped and "not read" in checks.skipped["MEMORY.md"]


def test_sections_of_file_lines_match_the_list_reading():
    data = (b"# One\r\ntext\n```\n# not a heading\n```\n## Two ##\n\n###  Three\nend"
            b"\n####### seven\n   ~~~\n# fenced\n~~~\n# Last")
    from memcite.ledger.memory_files import FileLines, byte_lines

    fast = [s.to_dict() for s in markdown_sections(FileLines(data))]
    plain = [s.to_dict() for s in markdown_sections(byte_lines(data))]
    assert fast == plain and [s["title"] for s in fast] == ["One", "Two", "Three", "Last"]


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmHWM from /proc")
def test_stats_on_a_256_mib_memory_md_stays_small(env, tmp_path):
    """The issue's case: 256 MiB of short lines cost 5.9 GB; now the file is not read whole."""
    memory_md = Path(env["CODEX_HOME"]) / "memories" / "MEMORY.md"
    with open(memory_md, "wb") as handle:
        handle.write(b"# Memory\n")
        handle.truncate(256 * 1024 * 1024)  # sparse: nothing written to disk
    code, _, err = run(["record"], env, stdin=block(["MEMORY.md:1-1|note=[x]"], [A]).encode())
    assert code == 0, err
    # VmHWM is this process's own peak (ru_maxrss would carry the parent's over exec).
    script = ("import sys, runpy; sys.argv = ['memcite', 'stats', '--json', '--judge-without-usage'];"
              "\ntry:\n    runpy.run_module('memcite', run_name='__main__')\n"
              "except SystemExit:\n    pass\n"
              "peak = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0]\n"
              "sys.stderr.write('MAXRSS %d' % int(peak.split()[1]))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120,
                          env={**os.environ, **env})
    rss_kib = int(done.stderr.decode().rsplit("MAXRSS ", 1)[1])
    report = json.loads(done.stdout)
    assert "MEMORY.md" in report["citation_checks"]["skipped"]
    assert [s["title"] for s in report["sections"]] == ["Memory"]  # streamed, not held
    assert rss_kib < 100 * 1024, rss_kib  # the code before the fix held GBs


def test_streamed_sections_look_at_the_start_of_a_very_long_line(monkeypatch):
    import io

    monkeypatch.setattr(checks_module, "_LONG_LINE", 10)
    monkeypatch.setattr(checks_module, "_STREAM_CHUNK", 7)
    data = b"# " + b"t" * 100 + b"\nx\n## B\n" + b"y" * 50
    sections = checks_module.markdown_sections_streamed(io.BytesIO(data).read)
    assert [(s.title, s.line, s.end_line) for s in sections] == [("tttttttt", 1, 2), ("B", 3, 4)]


def test_a_raw_memories_line_over_the_limit_is_skipped_unheld(tmp_path, monkeypatch):
    from memcite.ledger import codex_home

    folder = tmp_path / "memories"
    folder.mkdir()
    (folder / "raw_memories.md").write_text(
        f"## Thread `{A}`\nupdated_at: 2026-01-20T10:00:00Z\n\n" + "z" * 50_000 + "\nmore\n")
    monkeypatch.setattr(codex_home, "MAX_LINE_BYTES", 1000)
    skipped: list[str] = []
    found = list(codex_home.iter_raw_memories(folder / "raw_memories.md", skipped))
    assert [(f.thread_id, f.has_text) for f in found] == [(A, True)]
    assert len(skipped) == 1 and "1 line longer than 1000 bytes" in skipped[0]


def test_a_large_summary_is_read_as_a_prefix_and_says_so(tmp_path, monkeypatch):
    from memcite.readpath import instructions

    root = tmp_path / "memories"
    root.mkdir()
    (root / "memory_summary.md").write_text("# Summary\n" + "é fact\n" * 10_000)
    monkeypatch.setattr(instructions, "MAX_SUMMARY_PREFIX_BYTES", 4001)  # mid-character
    data = instructions._read_summary(str(root / "memory_summary.md"), str(root), "memcite")
    assert len(data) <= 4001 and data.decode("utf-8")  # cut at a character boundary
    assert data.unread == (root / "memory_summary.md").stat().st_size - len(data)


# --------------------------------------------------------------------------- the memory root


@pytest.fixture
def tree(tmp_path):
    """A memory folder with links inside and out, and a secret outside it."""
    root = tmp_path / "memories"
    (root / "sub").mkdir(parents=True)
    (root / "MEMORY.md").write_text("one\ntwo\n")
    (root / "sub" / "n.md").write_text("inside\n")
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.md").write_text("secret\n")
    (outside / "sub" / "n.md").write_text("SECRET\n")
    (root / "abs_in.md").symlink_to(root / "MEMORY.md")
    (root / "rel_in.md").symlink_to("sub/../MEMORY.md")
    (root / "sub" / "up.md").symlink_to("../MEMORY.md")
    (root / "linkdir").symlink_to("sub")
    (root / "out.md").symlink_to(outside / "secret.md")
    (root / "rel_out.md").symlink_to("../outside/secret.md")
    (root / "outdir").symlink_to(outside / "sub")
    (root / "loop.md").symlink_to("loop.md")
    os.mkfifo(root / "fifo.md")
    return root


@pytest.mark.parametrize("path,outcome,real", [
    ("MEMORY.md", "ok", "MEMORY.md"),
    ("abs_in.md", "ok", "MEMORY.md"),
    ("rel_in.md", "ok", "MEMORY.md"),
    ("sub/up.md", "ok", "MEMORY.md"),
    ("linkdir/n.md", "ok", "sub/n.md"),
    ("out.md", "outside_root", None),
    ("rel_out.md", "outside_root", None),
    ("outdir/n.md", "outside_root", None),
    ("loop.md", "missing", None),
    ("fifo.md", "missing", None),  # not a regular file: never opened for reading
    ("sub", "missing", None),
    ("MEM\x00ORY.md", "missing", None),
    ("../outside/secret.md", "outside_root", None),
])
def test_memory_root_resolves_inside_only(tree, path, outcome, real):
    expected = None if real is None else os.path.join(os.path.realpath(tree), *real.split("/"))
    assert locate(os.path.realpath(tree), path) == (outcome, expected)


def _opens_outside(monkeypatch, root: str, outside: str) -> list[str]:
    """Record every path os.open opens (made absolute through dir_fd) under ``outside``."""
    seen: list[str] = []
    real_open = os.open

    def recording_open(path, flags, mode=0o777, *, dir_fd=None):
        fd = real_open(path, flags, mode, dir_fd=dir_fd)
        try:
            where = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            where = ""
        if where.startswith(outside):
            seen.append(where)
        return fd

    monkeypatch.setattr(os, "open", recording_open)
    return seen


@pytest.mark.skipif(not os.path.exists("/proc/self/fd"), reason="needs /proc to name open files")
def test_a_folder_swapped_for_a_symlink_during_stats_never_leads_outside(tree, tmp_path,
                                                                         monkeypatch):
    """The issue's race: `sub` swapped for a symlink to the outside while checks run."""
    outside = str(tmp_path / "outside")
    secret_hash = hashlib.sha256(b"SECRET").hexdigest()
    seen = _opens_outside(monkeypatch, str(tree), outside)
    stop = threading.Event()

    def swap():
        real_sub, parked = tree / "sub", tree / "sub.parked"
        while not stop.is_set():
            os.rename(real_sub, parked)
            os.symlink(outside + "/sub", real_sub)
            time.sleep(0)
            os.unlink(real_sub)
            os.rename(parked, real_sub)

    swapper = threading.Thread(target=swap)
    swapper.start()
    outcomes = set()
    try:
        for _ in range(1500):  # the code before the fix read the outside file within ~2000
            folder = MemoryFolder(tree)
            outcomes.add(check_entry(folder, "sub/n.md", 1, 1, secret_hash))
            files = MemoryFiles(tree)
            assert files.lines_sha256("sub/n.md", 1, 1) != secret_hash
            folder.close()
    finally:
        stop.set()
        swapper.join()
    assert seen == []  # not one file outside the memory folder was opened
    assert "ok" not in outcomes  # the outside file's lines were never read
    assert outcomes <= {"changed", "missing", "outside_root"}


def test_memory_root_holds_the_folder_it_opened(tree, tmp_path):
    """The root is a handle: renaming the folder away does not change what is opened."""
    with MemoryRoot(tree) as root:
        moved = tmp_path / "moved"
        os.rename(tree, moved)
        tree.mkdir()
        (tree / "MEMORY.md").write_text("planted\n")
        outcome, read, _ = root.read("MEMORY.md")
    assert outcome == "ok" and read.data == b"one\ntwo\n"


def test_sync_does_not_follow_symlinks_out_of_the_memory_folder(tmp_path):
    from memcite.ledger.sync import sync_codex_home

    home = tmp_path / "codex"
    folder = home / "memories"
    (folder / "rollout_summaries").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "raw.md").write_text(f"## Thread `{A}`\nupdated_at: 2026-01-20T10:00:00Z\n\ntext\n")
    (outside / "s.md").write_text(f"thread_id: {A}\n\nsummary\n")
    (folder / "raw_memories.md").symlink_to(outside / "raw.md")
    (folder / "rollout_summaries" / "2026-01-20T10-00-00-abcd-x.md").symlink_to(outside / "s.md")
    conn = open_store(tmp_path / "m.sqlite")
    report = sync_codex_home(conn, home, now=1_800_000_000)
    assert report.folder_threads == 0
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
    assert len(report.skipped) == 2
    assert all("symlink leading outside the memory folder" in line for line in report.skipped)


# --------------------------------------------------------------------------- the ledger


def _ledger(tmp_path: Path, replies: int = 300) -> Path:
    path = tmp_path / "m.sqlite"
    conn = open_store(path)
    list(record_replies(conn, [ReplyInput(block(["MEMORY.md:1-1|note=[n]"], [A], f"r{i}\n"),
                                          id=str(i)) for i in range(replies)]))
    conn.close()
    return path


def _damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    if how == "truncated":
        path.write_bytes(bytes(data[:-1000]))
    elif how == "flipped bytes":
        for offset in range(page * 2 + 8, len(data), page):  # every page header after page 2
            data[offset : offset + 4] = bytes(b ^ 0xFF for b in data[offset : offset + 4])
        path.write_bytes(bytes(data))
    elif how == "zeroed page":
        data[page * 3 : page * 4] = bytes(page)
        path.write_bytes(bytes(data))
    elif how == "dropped table":
        conn = sqlite3.connect(path)
        conn.execute("DROP TABLE cited_entries")
        conn.close()


DAMAGE = ["truncated", "flipped bytes", "zeroed page", "dropped table"]


@pytest.mark.parametrize("how", DAMAGE)
def test_rebuild_check_refuses_a_damaged_ledger_and_leaves_it_untouched(tmp_path, how):
    path = _ledger(tmp_path)
    _damage(path, how)
    before = path.read_bytes()
    code, out, err = run(["rebuild", "--check"], {"MEMCITE_DB": str(path)})
    assert code in (2, 3) and "damaged" in err or "corrupt" in err, err
    assert "counts match" not in out.decode()
    assert path.read_bytes() == before


def _crash_mid_write(path: Path) -> None:
    """A writer killed with uncommitted and committed frames in the WAL (an unclean end)."""
    script = (
        "import os, signal, sqlite3\n"
        f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
        "c.execute('PRAGMA journal_mode=WAL'); c.execute('PRAGMA wal_autocheckpoint=0')\n"
        "c.execute('BEGIN'); c.execute(\"INSERT INTO syncs (codex_home, started_at)"
        " VALUES ('x', 1)\"); c.execute('COMMIT')\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n")
    done = subprocess.run([sys.executable, "-c", script], timeout=30)
    assert done.returncode == -signal.SIGKILL
    assert os.path.getsize(str(path) + "-wal") > 0


@pytest.mark.parametrize("how", ["flipped bytes", "zeroed page"])
def test_a_write_after_an_unclean_end_checks_the_ledger_first(tmp_path, how):
    path = _ledger(tmp_path)
    _crash_mid_write(path)
    _damage(path, how)
    before = path.read_bytes()
    with pytest.raises(DamagedStoreError, match="damaged|corrupt"):
        open_store(path)
    assert path.read_bytes() == before


def test_an_unclean_end_on_an_intact_ledger_is_only_checked(tmp_path):
    path = _ledger(tmp_path, replies=5)
    _crash_mid_write(path)
    conn = open_store(path)  # quick_check passes: the write goes on
    assert conn.execute("SELECT count(*) FROM syncs").fetchone()[0] == 1
    conn.close()


def test_a_dropped_table_is_refused_by_writers_and_readers(tmp_path):
    path = _ledger(tmp_path, replies=5)
    _damage(path, "dropped table")
    before = path.read_bytes()
    for readonly in (False, True):
        with pytest.raises(DamagedStoreError, match="cited_entries missing"):
            open_store(path, readonly=readonly)
    assert path.read_bytes() == before


def test_an_empty_sqlite_database_of_another_program_is_not_adopted(tmp_path, env):
    path = tmp_path / "other.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 7")  # a real header, no table
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="did not create"):
        open_store(path)
    code, _, err = run(["record"], {**env, "MEMCITE_DB": str(path)}, stdin=b"hi")
    assert code == 2 and "did not create" in err
    assert path.read_bytes() == before


def test_read_only_commands_say_not_read(tmp_path, env):
    path = _ledger(tmp_path, replies=5)
    _damage(path, "truncated")
    code, _, err = run(["stats", "--judge-without-usage"], {**env, "MEMCITE_DB": str(path)})
    assert code in (2, 3) and "not recorded" not in err


def test_a_ledger_that_cannot_be_written_is_read_immutable(tmp_path, monkeypatch):
    path = _ledger(tmp_path, replies=5)
    conn = open_store(path)  # leave a -wal and -shm behind, as a live writer would
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **k: False if mode & os.W_OK
                        else real_access(p, mode, **k))
    opened = []
    real_connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: opened.append(a[0]) or real_connect(
        *a, **k))
    reader = open_store(path, readonly=True)
    assert reader.execute("SELECT count(*) FROM replies").fetchone()[0] == 5
    assert opened[-1].endswith("immutable=1")
    reader.close()
    conn.close()


def test_the_ledger_and_the_caches_are_private_whatever_the_umask(tmp_path, env):
    old = os.umask(0)
    try:
        conn = open_store(tmp_path / "fresh.sqlite")
        with transaction(conn):
            conn.execute("INSERT INTO syncs (codex_home, started_at) VALUES ('x', 1)")
        for suffix in ("", "-wal", "-shm"):
            mode = stat.S_IMODE(os.stat(f"{tmp_path / 'fresh.sqlite'}{suffix}").st_mode)
            assert mode == 0o600, (suffix, oct(mode))
        conn.close()
        code, _, err = run(["record"], {**env, "MEMCITE_DB": str(tmp_path / "cli.sqlite")},
                           stdin=block(["MEMORY.md:1-1|note=[x]"], [A]).encode())
        assert code == 0, err
        code, _, err = run(["stats", "--judge-without-usage"], {**env, "MEMCITE_DB": str(tmp_path / "cli.sqlite")})
        assert code == 0, err
        cache = Path(env["MEMCITE_CACHE_DIR"])
        assert stat.S_IMODE(cache.stat().st_mode) == 0o700
        for entry in cache.rglob("*"):
            expected = 0o700 if entry.is_dir() else 0o600
            assert stat.S_IMODE(entry.stat().st_mode) == expected, entry
    finally:
        os.umask(old)


def test_the_folders_prune_creates_are_private(tmp_path):
    from memcite.durable_files import make_private_folders

    old = os.umask(0)
    try:
        make_private_folders(str(tmp_path / "memories" / "extensions" / "ad_hoc" / "notes"))
    finally:
        os.umask(old)
    for folder in (tmp_path / "memories", tmp_path / "memories" / "extensions" / "ad_hoc" / "notes"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_record_reply_library_survives_hostile_values(tmp_path):
    conn = open_store(tmp_path / "m.sqlite")
    reply = ReplyInput(block(["a\x00b:1-1|note=[\ud800]"], ["\udfff", A]), id="\ud800",
                       thread_id="\x00\udcff", cwd="\udcfe", origin="\ud800")
    result = record_reply(conn, reply, memory_root=tmp_path)
    assert result.status == "recorded" and result.reply_key == "\\ud800"
    assert memory_files.split_cited_path("a\x00b") == ["a\x00b"]  # spelled inside; opens nothing


def _header(pages: int, page_size: int = 4096) -> bytes:
    header = bytearray(b"SQLite format 3\x00" + bytes(84))
    header[16:18] = page_size.to_bytes(2, "big")
    header[24:28] = header[92:96] = (7).to_bytes(4, "big")  # the page count is valid
    header[28:32] = pages.to_bytes(4, "big")
    return bytes(header)


@pytest.mark.parametrize(("pages", "size", "wal_in_use", "damaged"), [
    (10, 10 * 4096, False, False),
    (10, 9 * 4096, False, True),   # cut short, nothing in the WAL to finish it
    (10, 9 * 4096, True, False),   # a checkpoint under way (or cut short) writes page 1 first
    (10, 11 * 4096, False, False),
    (10, 9 * 4096 + 1, True, True),  # not whole pages is damage whatever the WAL holds
])
def test_header_page_count_is_judged_with_the_wal_in_mind(pages, size, wal_in_use, damaged):
    from memcite.ledger.store import _header_problem

    problem = _header_problem(_header(pages), size, wal_in_use=wal_in_use)
    assert (problem is not None) == damaged, problem


def test_opening_the_ledger_while_another_writer_checkpoints_is_never_called_damage(tmp_path):
    """A writer growing the file through frequent checkpoints; opening it meanwhile, over and
    over, must never see "damaged" (before the fix: about one open in five did)."""
    from memcite.ledger.store import _check_file

    path = tmp_path / "m.sqlite"
    open_store(path).close()
    done = threading.Event()

    def write() -> None:
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA wal_autocheckpoint=1")
        conn.execute("CREATE TABLE IF NOT EXISTS filler (data BLOB)")
        while not done.is_set():
            conn.execute("INSERT INTO filler VALUES (randomblob(40000))")
        conn.close()

    writer = threading.Thread(target=write)
    writer.start()
    problems, checks = [], 0
    try:
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            try:
                _check_file(str(path), readonly=True)
            except DamagedStoreError as exc:
                problems.append(str(exc))
            checks += 1
    finally:
        done.set()
        writer.join()
    assert checks > 100
    assert problems == []
