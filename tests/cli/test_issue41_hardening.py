"""Issue 41, each class reproduced as an attacker would and kept: a cited path no program can
be given, integer options past any sensible bound, kept audit counts that lie, a cache folder
that is a link, a ledger damaged under a held connection, a subreaper that ends others' processes.
Each test fails on the code before the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

A = "019b7635-7fb3-7cf8-8f11-6f64065672e0"


def block(entries: list[str], ids: list[str]) -> str:
    return ("Done.\n<oai-mem-citation>\n<citation_entries>\n" + "\n".join(entries)
            + "\n</citation_entries>\n<rollout_ids>\n" + "\n".join(ids)
            + "\n</rollout_ids>\n</oai-mem-citation>")


def run(args, env: dict, stdin: bytes = b"", timeout: float = 60, cwd=None):
    """``python -m memcite`` as a real process."""
    done = subprocess.run([sys.executable, "-m", "memcite", *args], input=stdin,
                          capture_output=True, env={**os.environ, **env}, timeout=timeout, cwd=cwd)
    return done.returncode, done.stdout.decode("utf-8", "replace"), \
        done.stderr.decode("utf-8", "replace")


def git(folder, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), "-c", "user.email=m@example.invalid",
                    "-c", "user.name=m", *args], check=True, capture_output=True)


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "codex"
    memories = home / "memories"
    memories.mkdir(parents=True)
    (memories / "MEMORY.md").write_text("# Memory\nline two\n")
    git(memories, "init", "-q")
    git(memories, "add", "-A")
    git(memories, "commit", "-qm", "baseline")
    return {"CODEX_HOME": str(home), "MEMCITE_DB": str(tmp_path / "m.sqlite"),
            "MEMCITE_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path / "home"),
            "MEMCITE_NO_FASTPATH": ""}


# --------------------------------------------------------------------------- 1. NUL in a cited path

# Cited paths no program can be given, or that a program could take for an option.
HOSTILE_PATHS = [
    "MEM\x00ORY.md",           # a NUL byte: ValueError from subprocess on main
    "notes/\x00",              # a NUL byte alone in the last part
    "\ud800.md",               # a lone surrogate (a JSON escape): UnicodeEncodeError on main
    "-c.md",                   # shaped like an option
    "--output=MEMORY.md",      # an option with a value
]


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_a_hostile_cited_path_never_reaches_git_and_stats_stays_usable(env, tmp_path, path):
    batch = tmp_path / "batch.jsonl"
    batch.write_text(json.dumps({"text": block([f"{path}:1-1|note=[x]", "MEMORY.md:1-1|note=[ok]"],
                                               [A]), "id": "r1"}) + "\n")
    code, _, err = run(["record", "--jsonl", str(batch)], env)
    assert code == 0, err
    for _ in range(2):  # every later stats, not only the first
        code, out, err = run(["stats", "--json", "--judge-without-usage"], env)
        assert code == 0, err
        assert "Traceback" not in err
        assert json.loads(out)["citation_checks"]["citations"] == 2
    code, _, err = run(["report", "--judge-without-usage", "--html", str(tmp_path / "r.html")], env)
    assert code == 0, err
    assert "Traceback" not in err


@pytest.mark.parametrize(("value", "safe"), [
    ("MEMORY.md", True), ("a b/c", True), ("\udcff", True),  # a non-UTF-8 byte of a file name
    ("a\x00b", False), ("\x00", False), ("\ud800", False), ("x\udbff", False), ("", True),
])
def test_os_safe_says_what_the_os_can_be_given(value, safe):
    from memcite.untrusted import os_safe, program_arguments

    assert os_safe(value) is safe
    assert (program_arguments(["git", "log", "--", value]) is not None) is safe


@pytest.mark.parametrize("path", ["MEM\x00ORY.md", "\ud800"])
def test_every_git_caller_does_without_git_for_a_path_it_cannot_pass(tmp_path, path):
    from memcite.codex import consolidation
    from memcite.ledger.memory_history import MemoryHistory
    from memcite.readpath.event_log import staleness

    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("one\n")
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "one")
    history = MemoryHistory(folder)
    assert history.ever_had(path) is False
    assert history.lines_at(path, 2**40) is None
    assert history.lines_sha256_at(path, 1, 1, 2**40) is None
    assert history.ever_had("MEMORY.md") is True
    later = 2**33  # written after every commit: only the unnameable file is said gone
    assert staleness(str(folder), [("k", later, [path, "MEMORY.md"])]) == {"k": [f"gone {path}"]}
    assert consolidation._git(str(folder), "log", "--", path) is None


# --------------------------------------------------------------------------- 2. bounded numbers

HUGE = "99999999999999999999"


def _walk(command, path=()):
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _walk(sub, (*path, name))


def _number_options():
    """(command words, option, kind) for every option taking a number or a time."""
    from typer.main import get_command

    from memcite.cli.app import app

    found = []
    for path, command in _walk(get_command(app)):
        if hasattr(command, "commands"):
            continue
        for param in command.params:
            if param.param_type_name != "option" or getattr(param, "is_flag", False):
                continue
            if param.metavar in ("N", "TIME"):
                found.append((" ".join(path), param.opts[0], param.metavar, param.min))
    return found


NUMBER_OPTIONS = _number_options()
# What each command needs besides the option, so that only the option can be wrong.
NEEDS = {"show": [A], "thread": [A], "conformance check": ["--", "cat"],
         "conformance fuzz": ["--", "cat"], "push": ["--to", "postgresql://u@127.0.0.1:9/x"],
         "restore": ["--all"]}


def test_the_walk_finds_every_number_option():
    names = {(command, option) for command, option, _, _ in NUMBER_OPTIONS}
    assert {("restore", "--since"), ("stats", "--limit"), ("parse", "--max-bytes"),
            ("conformance fuzz", "--seed"), ("mcp", "--confirm-ttl"), ("select", "--n"),
            ("push", "--batch"), ("record", "--at")} <= names
    assert len(names) >= 30


def _bad_values(kind: str, low) -> list[str]:
    values = [HUGE, "-" + HUGE, "1e400"]
    if kind == "N" and low is not None and low >= 0:
        values.append("-1")
    if kind == "TIME":
        values += ["10000-01-01", "nan", "inf"]
    return values


@pytest.mark.parametrize(("command", "option", "kind", "low"), NUMBER_OPTIONS,
                         ids=[f"{c}:{o}" for c, o, _, _ in NUMBER_OPTIONS])
def test_every_number_option_refuses_what_is_out_of_range_with_exit_2(tmp_path, monkeypatch,
                                                                      command, option, kind, low):
    from typer.testing import CliRunner

    from memcite.cli.app import app

    (tmp_path / "codex" / "memories").mkdir(parents=True)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("MEMCITE_DB", str(tmp_path / "m.sqlite"))
    monkeypatch.setenv("MEMCITE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    extra = NEEDS.get(command, [])
    tail = extra if extra[:1] == ["--"] else []
    head = [] if tail else extra
    for value in _bad_values(kind, low):
        args = [*command.split(), *head, f"{option}={value}", *tail]
        result = CliRunner().invoke(app, args, input="Done.\n")
        shown = f"{args}: {result.output}"
        assert result.exit_code == 2, shown
        assert isinstance(result.exception, SystemExit), (shown, result.exc_info)
        assert option in result.output, shown


@pytest.mark.parametrize("name", sorted(__import__("memcite.cli.fastpath", fromlist=["x"])
                                        .FAST_COMMANDS))
def test_the_fast_path_hands_every_out_of_range_number_to_typer(name):
    from memcite.cli.fastpath import FAST_COMMANDS, parse_args

    spec = FAST_COMMANDS[name]
    for option, kind in spec.options.items():
        if kind is str or hasattr(kind, "choices"):
            continue
        for value in (HUGE, "-" + HUGE, "-1", "1e400", "nan"):
            assert parse_args(spec, [option, value]) is None, (name, option, value)


@pytest.mark.parametrize("args", [
    ["restore", "--since", HUGE],
    ["stats", "--limit", HUGE, "--judge-without-usage"],
    ["stats", "--as-of", HUGE, "--judge-without-usage"],
    ["search", "x", "--limit", HUGE],
    ["parse", "--max-bytes", "100000000000"],
    ["record", "--at", HUGE],
])
@pytest.mark.parametrize("fast", ["", "1"])
def test_an_overflowing_number_by_hand_is_a_message_not_a_traceback(env, args, fast):
    code, _, err = run(["record"], env, stdin=block(["MEMORY.md:1-1|note=[x]"], [A]).encode())
    assert code == 0, err
    code, _, err = run(args, {**env, "MEMCITE_NO_FASTPATH": fast}, stdin=b"hi\n")
    assert code == 2, err
    assert "Traceback" not in err, err
    assert any(arg in err for arg in args[1:] if arg.startswith("--")), err  # names the option


# --------------------------------------------------------------------------- 3. kept audit counts


@pytest.fixture
def audited(tmp_path, monkeypatch):
    """A Codex home of 12 memories, audited once; (home, the kept counts file)."""
    from memcite.retention.audit_counts import _name
    from poisoned_home import build_home

    codex = tmp_path / "codex"
    build_home(codex, 12)
    monkeypatch.setenv("CODEX_HOME", str(codex))
    monkeypatch.setenv("MEMCITE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MEMCITE_DB", raising=False)
    monkeypatch.setenv("MEMCITE_HOME", str(tmp_path / "memcite-home"))
    assert _cli("audit").exit_code == 1  # it finds the planted poison
    kept = tmp_path / "cache" / _name(str(codex))
    assert kept.is_file()
    return codex, kept


def _cli(*args):
    from typer.testing import CliRunner

    from memcite.cli.app import app

    return CliRunner().invoke(app, list(args))


def _audit_shown() -> dict:
    result = _cli("stats", "--json", "--judge-without-usage")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["audit"]


# A value put in the kept file by hand -> read as no audit. None: the field is removed.
HOSTILE_COUNTS = [
    ("at", "1e400"), ("at", "Infinity"), ("at", "-Infinity"), ("at", "NaN"),
    ("at", "99999999999999"), ("at", "-99999999999999"), ("at", "1.5"), ("at", "true"),
    ("memories", "NaN"), ("memories", "-1"), ("memories", "1e308"), ("high", "1e308"),
    ("high", "3.0"), ("counts.poisoned", "Infinity"), ("counts.poisoned", "-5"),
    ("counts.secret", "10000000000000000000000"), ("codex_home", '"/elsewhere"'),
    ("version", None), ("stamp", "7"),
]


@pytest.mark.parametrize(("field", "value"), HOSTILE_COUNTS)
def test_kept_counts_that_are_not_whole_counts_and_times_in_range_read_as_no_audit(
        audited, field, value):
    _codex, kept = audited
    record = json.loads(kept.read_text())
    assert _audit_shown()["at"] == record["at"]
    text = json.dumps(record)
    key = field.split(".")[-1]
    old = json.dumps(record["counts"][key] if "." in field else record[field])
    if value is None:
        text = text.replace(f'"{key}": {old}, ', "")
    else:
        text = text.replace(f'"{key}": {old}', f'"{key}": {value}', 1)
    kept.write_text(text)
    assert _audit_shown()["at"] is None
    for command in (["stats", "--judge-without-usage"], ["doctor"],
                    ["report", "--judge-without-usage", "--html", str(kept.parent / "r.html")]):
        result = _cli(*command)
        assert isinstance(result.exception, SystemExit | None), (command, result.exc_info)
        assert "Traceback" not in result.output


def _rewrite_summary_in_place(codex: Path) -> None:
    summary = sorted((codex / "memories" / "rollout_summaries").iterdir())[0]
    before = summary.stat()
    data = bytearray(summary.read_bytes())
    data[-2] = ord("X") if data[-2] != ord("X") else ord("Y")
    with open(summary, "r+b") as handle:  # same inode, same size
        handle.write(bytes(data))
    os.utime(summary, ns=(before.st_atime_ns, before.st_mtime_ns))  # and its old time


def _row_left_in_the_wal(codex: Path) -> None:
    """A new stage-1 row committed to memories_1.sqlite's WAL by a process that is still
    running (Codex), so never checkpointed into the file."""
    script = (
        "import sqlite3, sys, os\n"
        "c = sqlite3.connect(sys.argv[1]); c.execute('pragma wal_autocheckpoint=0')\n"
        "row = list(c.execute('select * from stage1_outputs limit 1').fetchone())\n"
        "row[0] = '019b7635-7fb3-7cf8-8f11-6f6406567299'\n"
        "c.execute('insert into stage1_outputs values (%s)' % ','.join('?' * len(row)), row)\n"
        "c.commit(); os._exit(0)\n")
    subprocess.run([sys.executable, "-c", script, str(codex / "memories_1.sqlite")], check=True)
    assert (codex / "memories_1.sqlite-wal").stat().st_size > 0


def _wal_mode(codex: Path) -> None:
    import sqlite3

    with sqlite3.connect(codex / "memories_1.sqlite") as conn:
        conn.execute("pragma journal_mode=wal")


@pytest.mark.parametrize("change", [_rewrite_summary_in_place, _row_left_in_the_wal])
def test_a_change_the_audit_could_not_have_seen_makes_it_stale(audited, change):
    codex, _kept = audited
    if change is _row_left_in_the_wal:
        _wal_mode(codex)
        assert _cli("audit").exit_code == 1
    assert _audit_shown()["current"] is True
    change(codex)
    shown = _audit_shown()
    assert shown["at"] is not None and shown["current"] is False


def test_the_counts_of_another_home_are_not_shown_as_this_home_s(audited, tmp_path):
    import shutil

    codex, kept = audited
    other = tmp_path / "other"
    shutil.copytree(codex, other)
    result = _cli("audit", "--codex-home", str(other))
    assert result.exit_code == 1
    from memcite.retention.audit_counts import _name

    theirs = kept.parent / _name(str(other))
    kept.write_bytes(theirs.read_bytes())  # the other home's counts under this home's name
    assert _audit_shown()["at"] is None


@pytest.mark.parametrize("target", ["file", "folder", "missing"])
def test_a_link_at_the_counts_file_s_name_is_refused_with_a_message(audited, tmp_path, target):
    _codex, kept = audited
    victim = tmp_path / "victim"
    victim.mkdir()
    pointed = {"file": victim / "x.json", "folder": victim, "missing": victim / "none"}[target]
    if target == "file":
        pointed.write_text(kept.read_text())
    kept.unlink()
    kept.symlink_to(pointed)
    result = _cli("audit", "--json")
    assert result.exit_code == 1, result.output
    problems = json.loads(result.output)["problems"]
    assert any("symbolic link" in p and "not kept" in p for p in problems), problems
    assert kept.is_symlink() and sorted(p.name for p in victim.iterdir()) == \
        (["x.json"] if target == "file" else [])
    assert _audit_shown()["at"] is None  # what the link leads to is not read either


# --------------------------------------------------------------------------- 4. caches


def _user_folder(folder: Path) -> dict[str, bytes]:
    """A folder of the user's with JSON files and files named like temporaries, all old."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {f"precious{i}.json": f'{{"mine": {i}}}'.encode() for i in range(3)}
    files.update({"report.12345.tmp": b"draft", "notes.1.tmp": b"draft",
                  f".{'a' * 64}.json.99.tmp": b"not memcite's form",
                  f"{'b' * 63}.json": b"63 hex digits"})
    for name, data in files.items():
        (folder / name).write_bytes(data)
        os.utime(folder / name, (1_000_000_000, 1_000_000_000))
    return files


def _instructions_runs(count: int) -> None:
    from memcite.cli.readpath_commands import instructions

    for budget in range(100, 100 + count):
        assert instructions(budget=budget) == 0


def _cache_env(tmp_path, monkeypatch) -> Path:
    codex = tmp_path / "codex"
    (codex / "memories").mkdir(parents=True)
    (codex / "memories" / "memory_summary.md").write_text("- Run the linter before a commit.\n")
    monkeypatch.setenv("CODEX_HOME", str(codex))
    monkeypatch.setenv("MEMCITE_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    return tmp_path / "cache"


@pytest.mark.parametrize("linked", ["instructions", "cache"])
def test_a_cache_folder_that_is_a_link_is_neither_written_nor_pruned(tmp_path, monkeypatch,
                                                                     capsys, linked):
    cache = _cache_env(tmp_path, monkeypatch)
    files = _user_folder(tmp_path / "user")
    if linked == "instructions":
        (cache / "instructions").symlink_to(tmp_path / "user")
    else:  # memcite's cache folder itself, planted as a link to a folder of the user's
        cache.rmdir()
        cache.symlink_to(tmp_path / "user")
    _instructions_runs(70)
    out = capsys.readouterr().out
    assert "Run the linter" in out  # the command works, without a cache
    assert {p.name: p.read_bytes() for p in (tmp_path / "user").iterdir()} == files


def test_pruning_removes_only_the_names_memcite_gives(tmp_path, monkeypatch, capsys):
    cache = _cache_env(tmp_path, monkeypatch)
    files = _user_folder(cache / "instructions")  # the user's files inside memcite's folder
    killed = cache / "instructions" / f".{'c' * 64}.json.memcite-0123456789ab.tmp"
    killed.write_text("{}")
    os.utime(killed, (1_000_000_000, 1_000_000_000))
    _instructions_runs(70)
    capsys.readouterr()
    left = {p.name for p in (cache / "instructions").iterdir()}
    assert set(files) <= left  # none of the user's files, whatever they look like
    assert killed.name not in left  # a killed run's temporary goes
    ours = [name for name in left if name not in files]
    assert len(ours) == 64 and all(len(name) == 69 and name.endswith(".json") for name in ours)


def test_a_cache_folder_of_another_user_is_refused(tmp_path, monkeypatch):
    from memcite import durable_files
    from memcite.errors import MemciteError

    real = os.geteuid()
    monkeypatch.setattr(durable_files.os, "geteuid", lambda: real + 1)
    with pytest.raises(MemciteError, match="belongs to another user"):
        durable_files.open_own_folder(str(tmp_path / "cache"), ("instructions",))


# --------------------------------------------------------------------------- 5. checked ledger


def _memo_ledger(tmp_path: Path) -> Path:
    from memcite.ledger.store import open_store, transaction

    path = tmp_path / "memcite.sqlite"
    conn = open_store(path)
    with transaction(conn):
        conn.executemany("INSERT INTO memories (thread_id, source, first_synced_at, synced_at)"
                         " VALUES (?, 'stage1_outputs', 1, 1)",
                         [(f"019c0000-0000-7000-8000-{n:012x}",) for n in range(2000)])
    conn.close()
    return path


def _damage_page(path: Path, keep_time: bool = False) -> None:
    """Zero a page only ``quick_check`` notices (tests/ledger/test_quick_check_memo.py's way)."""
    import sqlite3

    info = path.stat()
    data = path.read_bytes()
    page = int.from_bytes(data[16:18], "big")
    pages = len(data) // page
    for number in sorted(range(2, pages), key=lambda n: abs(n - pages // 2)):
        damaged = bytearray(data)
        damaged[page * (number - 1): page * number] = bytes(page)
        with open(path, "r+b") as handle:  # in place, as another program would
            handle.write(bytes(damaged))
        probe = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            found = probe.execute("PRAGMA quick_check").fetchall() != [("ok",)]
        except sqlite3.DatabaseError:
            found = True
        finally:
            probe.close()
        if found:
            break
    if keep_time:
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def _another_writer(path: Path) -> None:
    from memcite.ledger.store import open_store, transaction

    other = open_store(path)  # as ``record`` opens it: no check
    with transaction(other):
        other.execute("UPDATE memories SET usage_count = 7 WHERE rowid = 3")
    other.close()


# What happens while a batch command holds its checked connection (at a prompt), and
# whether the next batch command must check the whole file again (True: it must).
HELD = [
    ("nothing", lambda path: None, False),
    ("a page damaged", _damage_page, True),
    ("a page damaged, its time set back", lambda path: _damage_page(path, keep_time=True), True),
    ("another connection's write", _another_writer, True),
]


@pytest.mark.parametrize("own_write", [False, True], ids=["reads only", "after its own write"])
@pytest.mark.parametrize(("what", "change", "checked_again"), HELD, ids=[h[0] for h in HELD])
def test_checked_is_noted_only_when_the_connection_s_own_writes_were_the_last_change(
        tmp_path, monkeypatch, what, change, checked_again, own_write):
    from memcite.ledger import store
    from memcite.ledger.store import DamagedStoreError, open_store, transaction

    path = _memo_ledger(tmp_path)
    open_store(path, quick_check=True).close()  # checked once, noted
    ran: list[str] = []
    real = store.check_integrity
    monkeypatch.setattr(store, "check_integrity",
                        lambda conn, where="": (ran.append(where), real(conn, where))[1])
    held = open_store(path, quick_check=True)  # a batch command, as noted: no check
    assert ran == []
    if own_write:
        with transaction(held):
            held.execute("UPDATE memories SET usage_count = 2 WHERE rowid = 1")
    change(path)
    held.close()
    damaged = "damaged" in what
    if damaged:
        with pytest.raises(DamagedStoreError, match="quick_check"):
            open_store(path, quick_check=True)
    else:
        open_store(path, quick_check=True).close()
    assert (len(ran) == 1) is checked_again


def test_sync_after_damage_under_a_held_connection_refuses_the_ledger(tmp_path):
    from memcite.ledger.store import open_store

    path = _memo_ledger(tmp_path)
    codex = tmp_path / "codex"
    (codex / "memories" / "rollout_summaries").mkdir(parents=True)
    environ = {"CODEX_HOME": str(codex), "MEMCITE_DB": str(path), "HOME": str(tmp_path)}
    code, _, err = run(["sync"], environ)
    assert code == 0, err
    held = open_store(path, quick_check=True)  # `sync` or `prune --apply` waiting at a prompt
    _damage_page(path)
    held.close()
    before = path.read_bytes()
    code, _, err = run(["sync"], environ)
    assert code == 3, err
    assert "damaged" in err and path.read_bytes() == before


# --------------------------------------------------------------------------- 6. the subreaper


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


SLEEPER = "import time; time.sleep(60)"
# The program under test: leaves a child of its own in a session of its own, answers late.
PROGRAM = ("import os, subprocess, sys, time; sys.stdin.read()\n"
           f"p = subprocess.Popen([sys.executable, '-c', {SLEEPER!r}], start_new_session=True)\n"
           "open(os.environ['OWN_PID_FILE'], 'w').write(str(p.pid))\n"
           "time.sleep(1.5); print('{}')\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's")
@pytest.mark.parametrize("outsider_session", ["same", "its own"])
def test_the_subreaper_ends_only_the_program_s_processes(tmp_path, monkeypatch,
                                                          outsider_session):
    from memcite.conformance.runner import run_program

    own_file = tmp_path / "own"
    monkeypatch.setenv("OWN_PID_FILE", str(own_file))
    # A helper of a wrapper (not the program's): its child is handed to this process when
    # the helper ends, in the middle of the run.
    helper = subprocess.Popen(
        [sys.executable, "-c",
         "import subprocess, sys, time\n"
         f"p = subprocess.Popen([sys.executable, '-c', {SLEEPER!r}], "
         f"start_new_session={outsider_session == 'its own'})\n"
         "print(p.pid, flush=True); time.sleep(0.7)\n"],
        stdout=subprocess.PIPE, env={k: v for k, v in os.environ.items() if k != "OWN_PID_FILE"})
    outsider = int(helper.stdout.readline())
    try:
        outcome, out, _err, code = run_program([sys.executable, "-c", PROGRAM], b"x", timeout=20)
        helper.wait()
        assert outcome == "ok" and code == 0 and out.strip() == b"{}"
        own = int(own_file.read_text())
        assert not _alive(own), "the program's own process outlived the run"
        assert _alive(outsider), "a process from elsewhere was killed"
        with open(f"/proc/{outsider}/stat", "rb") as handle:  # it was handed to this process
            assert int(handle.read().rsplit(b")", 1)[1].split()[1]) == os.getpid()
    finally:
        helper.stdout.close()
        try:
            os.kill(outsider, 9)
            os.waitpid(outsider, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
