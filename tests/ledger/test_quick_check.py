"""The batch commands that write check the whole ledger (``PRAGMA quick_check``) first.

A ledger with one zeroed page in the middle passes every check an open makes (the
header, the schema): ``sync`` used to write hundreds of rows into it and ``stats`` to
read it, and only ``rebuild --check`` saw the damage. Each batch command that writes
now refuses it (exit 3, the file and what to do named) before its first write: the
ledger's bytes and the notes are left as they were.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from codex_sessions import memory_folder, session_id, write_session
from memcite.cli.app import app
from memcite.ledger.store import DamagedStoreError, open_store

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "corpus"))

from build_codex_home import CODEX_SCHEMA  # noqa: E402

MEMORIES = 400
SESSION = session_id(21)
SCRATCH = "s-quick-check"


def memcite(args: list[str], env: dict) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-m", "memcite", *args], capture_output=True,
                          env={**os.environ, **env}, stdin=subprocess.DEVNULL, timeout=60)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def ok(args: list[str], env: dict) -> str:
    """A command that builds the healthy ledger, run in-process (Typer's CliRunner): only
    the refusals below need a real process, for their exit code and stderr."""
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, (args, result.stdout, result.stderr, result.exception)
    return result.stdout


def codex_home(folder: Path) -> Path:
    """A Codex home: ``MEMORIES`` rows in memories_1.sqlite, a memory folder, one session."""
    memory_folder(folder)
    conn = sqlite3.connect(folder / "memories_1.sqlite")
    conn.executescript(CODEX_SCHEMA)
    conn.executemany(
        "INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory, rollout_summary,"
        " rollout_slug, generated_at, usage_count, last_usage) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(str(uuid.UUID(int=n + 1, version=4)), 1_700_000_000 + n, f"- memory {n}\n" * 5,
          f"summary {n}", f"slug-{n}", 1_700_000_000 + n, n % 3, None) for n in range(MEMORIES)])
    conn.commit()
    conn.close()
    write_session(folder, SESSION, 3)
    return folder


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A healthy ledger the batch commands wrote (each exits 0), and its environment."""
    base = tmp_path_factory.mktemp("quick-check")
    home = codex_home(base / "codex")
    project = base / "project"
    project.mkdir()
    env = {"CODEX_HOME": str(home), "MEMCITE_DB": str(base / "memcite.sqlite"),
           "MEMCITE_HOME": str(base / "memcite"), "MEMCITE_CACHE_DIR": str(base / "cache"),
           "HOME": str(base / "user"), "MEMCITE_SESSION": ""}
    ok(["sync"], env)
    ok(["ingest"], env)
    ok(["ingest", str(write_session(home, session_id(22), 2, day=21))], env)
    unread = write_session(home, session_id(23), 2, day=22)  # for ingest to refuse
    unread.rename(unread.with_name("new.jsonl"))
    ok(["rebuild", "--check"], env)
    ok(["rebuild"], env)
    at = ["--cwd", str(project)]
    saved = json.loads(ok(["note", "save", "the build uses make", "--section", "decisions",
                           "--yes", "--json", *at], env))
    ok(["note", "save", "scratch", "--section", "state", "--yes", "--scope", "session",
        "--session", SCRATCH, *at], env)
    ended = json.loads(ok(["note", "end-session", SCRATCH, "--json", *at], env))
    ok(["note", "save", "scratch again", "--section", "state", "--yes", "--scope", "session",
        "--session", SCRATCH, *at], env)
    return {"env": env, "base": base, "project": project, "entry": saved["entries"][0]["id"],
            "archived": ended["archived"]}


def _zero_a_page_in_the_middle(path: Path) -> int:
    """Zero the page nearest the middle that the cheap checks of an open miss and
    ``quick_check`` finds; its number."""
    data = path.read_bytes()
    page = int.from_bytes(data[16:18], "big")
    pages = len(data) // page
    middle = pages // 2
    for number in sorted(range(2, pages), key=lambda n: abs(n - middle)):
        damaged = bytearray(data)
        damaged[page * (number - 1): page * number] = bytes(page)
        path.write_bytes(bytes(damaged))
        try:
            open_store(path).close()  # what record and the Stop hook check
        except DamagedStoreError:
            continue
        finally:
            for suffix in ("-wal", "-shm"):
                if os.path.exists(str(path) + suffix):
                    os.remove(str(path) + suffix)
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            found = conn.execute("PRAGMA quick_check").fetchall() != [("ok",)]
        except sqlite3.DatabaseError:
            found = True
        finally:
            conn.close()
        if found:
            path.write_bytes(bytes(damaged))  # as it was before open_store's close
            return number
    raise AssertionError("no page whose damage only quick_check sees")


@pytest.fixture
def damaged(built):
    """The built ledger with a zeroed page in its middle (put back as it was afterwards)."""
    path = Path(built["env"]["MEMCITE_DB"])
    healthy = path.read_bytes()
    number = _zero_a_page_in_the_middle(path)
    try:
        yield {**built, "path": path, "page": number}
    finally:
        path.write_bytes(healthy)
        for suffix in ("-wal", "-shm"):
            if os.path.exists(str(path) + suffix):
                os.remove(str(path) + suffix)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.is_symlink() and "cache" not in p.parts}


def _commands(d) -> dict[str, list[str]]:
    """Each batch command that writes, as run against the damaged copy ``d``."""
    at = ["--cwd", str(d["project"])]
    name = os.path.basename(d["archived"])
    home = Path(d["env"]["CODEX_HOME"])
    return {
        "sync": ["sync"],
        "ingest a file": ["ingest", str(home / "sessions" / "2026" / "01" / "22" / "new.jsonl")],
        "ingest the home": ["ingest"],
        "prune --apply": ["prune", "--apply", "--judge-without-usage"],
        "prune --rule tiered --apply": ["prune", "--rule", "tiered", "--apply",
                                        "--judge-without-usage"],
        "restore": ["restore", "--all"],
        "rebuild": ["rebuild"],
        "rebuild --check": ["rebuild", "--check"],
        "note save": ["note", "save", "another fact", "--section", "decisions", "--yes", *at],
        "note forget": ["note", "forget", "--yes", *at],
        "note restore": ["note", "restore", name, "--scope", "session", "--session", SCRATCH, *at],
        "note purge": ["note", "purge", d["archived"], "--confirm", name, *at],
        "note promote": ["note", "promote", d["entry"], "--to", "global", "--yes", *at],
        "note end-session": ["note", "end-session", SCRATCH, *at],
    }


COMMANDS = ["sync", "ingest a file", "ingest the home", "prune --apply",
            "prune --rule tiered --apply", "restore", "rebuild", "rebuild --check", "note save",
            "note forget", "note restore", "note purge", "note promote", "note end-session"]


@pytest.mark.parametrize("command", COMMANDS)
def test_each_batch_command_refuses_a_damaged_ledger_and_writes_nothing(damaged, command):
    args = _commands(damaged)[command]
    before = _snapshot(damaged["base"])
    code, out, err = memcite(args, damaged["env"])
    assert code == 3, (args, out, err)
    path = str(damaged["path"])
    assert f"{path}: the database is damaged (quick_check:" in err, err
    assert "left untouched" in err and "restore it from a backup" in err, err
    after = _snapshot(damaged["base"])
    changed = [name for name in before.keys() | after.keys() if before.get(name) != after.get(name)]
    assert changed == [], changed  # the ledger's bytes, the notes, nothing new


def test_the_cheap_checks_alone_miss_that_damage(damaged):
    """What ``record`` and the Stop hook still check (one reply each): the open goes on."""
    open_store(damaged["path"], readonly=True).close()
    with pytest.raises(DamagedStoreError, match="quick_check"):
        open_store(damaged["path"], readonly=True, quick_check=True)
    before = damaged["path"].read_bytes()
    with pytest.raises(DamagedStoreError, match="quick_check"):
        open_store(damaged["path"], quick_check=True)
    assert damaged["path"].read_bytes() == before


def test_a_healthy_ledger_passes_the_check(built, tmp_path):
    """Every batch command ran on the healthy ledger in ``built``; the check itself too."""
    import shutil

    copy = tmp_path / "ok.sqlite"
    shutil.copy(built["env"]["MEMCITE_DB"], copy)
    conn = open_store(copy, quick_check=True)
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == MEMORIES
    conn.close()
    open_store(copy, readonly=True, quick_check=True).close()
    open_store(tmp_path / "new.sqlite", quick_check=True).close()  # a new file: nothing to check
