"""`memcite sync`, `record`, `ingest`, `rebuild`: through CliRunner and as real processes."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.demo.loop import load_sample_builder
from memcite_process import run_memcite

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
ROLLOUT = next((CORPUS / "codex_home" / "sessions").rglob("rollout-*.jsonl"))
runner = CliRunner()


BUILDER = load_sample_builder(CORPUS)
KNOWN = BUILDER.thread_id(0)
UNKNOWN = "019c0000-0000-7000-8000-00000000abcd"
REPLY = (
    "The weekly report is a table.\n\n<oai-mem-citation>\n<citation_entries>\n"
    "MEMORY.md:66-67|note=[weekly report format]\n</citation_entries>\n<rollout_ids>\n"
    f"{KNOWN}\n{UNKNOWN}\nnot-a-uuid\n</rollout_ids>\n</oai-mem-citation>"
)
VISIBLE = "The weekly report is a table.\n\n"


@pytest.fixture
def env(sample_env):
    """An isolated environment: a sample Codex home, a database path, a scratch HOME."""
    return sample_env


def run(args, env, stdin: bytes = b"", **extra):
    """``python -m memcite`` as a real process: (exit code, stdout bytes, stderr text)."""
    return run_memcite(args, {**env, **extra}, stdin=stdin)


def invoke(args, env, input=None):  # noqa: A002 - CliRunner's name
    return runner.invoke(app, args, env=env, input=input)


def counts(db):
    conn = sqlite3.connect(db)
    try:
        return dict(conn.execute("SELECT thread_id, usage_count FROM memories"
                                 " WHERE usage_count > 0"))
    finally:
        conn.close()


def test_help_lists_the_ledger_commands():
    result = runner.invoke(app, ["--help"])
    for name in ("sync", "record", "ingest", "rebuild"):
        assert name in result.stdout


def test_sync_prints_what_changed(env):
    result = invoke(["sync"], env)
    assert result.exit_code == 0, result.output
    assert ("33 rows from memories_1.sqlite, 33 raw_memories.md sections and"
            " 33 rollout summary headers") in result.stdout.replace(
        os.path.join(os.path.realpath(env["CODEX_HOME"]), ""), "")
    assert "36 new, 0 changed, 0 unchanged (not rewritten), 0 marked missing" in result.stdout
    # Codex's and memcite's counts side by side, in stats' words.
    assert "cited: by Codex's counters 24 (101 citations), by memcite's log 0" in result.stdout
    again = invoke(["sync", "--json"], env)
    said = json.loads(again.stdout)
    assert (said["inserted"], said["updated"], said["unchanged"]) == (0, 0, 36)
    third = invoke(["sync"], env)
    assert "0 new, 0 changed, 36 unchanged (not rewritten)" in third.stdout


def test_sync_of_a_folder_that_is_no_codex_home_is_exit_2(env, tmp_path):
    (tmp_path / "bare").mkdir()
    result = invoke(["sync", "--codex-home", str(tmp_path / "bare")], env)
    assert result.exit_code == 2
    assert "is not a Codex home" in result.stderr and "npm install -g @openai/codex" in result.stderr


def test_record_prints_the_visible_reply_and_counts(env):
    assert invoke(["sync"], env).exit_code == 0
    code, out, err = run(["record", "-"], env, stdin=REPLY.encode())
    assert code == 0, err
    assert out == VISIBLE.encode()
    assert f"{UNKNOWN} is not a memory in the inventory" in err
    assert "not-a-uuid" in err  # a diagnostic with its line
    assert counts(env["MEMCITE_DB"]) == {KNOWN: 1}


def test_record_twice_counts_once_and_says_so(env, tmp_path):
    invoke(["sync"], env)
    reply = tmp_path / "reply.txt"
    reply.write_text(REPLY)
    code, out, err = run(["record", str(reply)], env)
    # The first run says on stderr what it recorded (stdout is the reply alone).
    assert code == 0 and out == VISIBLE.encode()
    assert re.search(r"memcite: recorded 1 reply \(key [0-9a-f]{16}\): \d+ memory ids? cited, "
                     r"\d+ citations? counted for \d+ memor(y|ies), \d+ cited line ranges?",
                     err), err
    code, out, err = run(["record", str(reply)], env)
    assert code == 0 and out == VISIBLE.encode()
    assert "already recorded" in err and "recorded 1 reply" not in err
    assert counts(env["MEMCITE_DB"]) == {KNOWN: 1}


def test_record_json_gives_the_reading_and_what_was_recorded(env):
    invoke(["sync"], env)
    result = invoke(["record", "--json", "--id", "turn-7", "--at", "2026-01-20T10:00:00Z",
                     "--thread-id", "019bdb5e-1c40-7a21-9c3e-5f0d2b7a4e11", "--cwd", "/w"],
                    env, input=REPLY)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["reading"]["visible"] == VISIBLE
    recorded = data["recorded"]
    assert (recorded["status"], recorded["key"], recorded["key_kind"]) == (
        "recorded", "turn-7", "id")
    assert recorded["replied_at"] == 1_768_903_200
    assert recorded["counted"] == [KNOWN, UNKNOWN]
    assert recorded["unknown_ids"] == [UNKNOWN]
    assert recorded["not_uuid_ids"] == ["not-a-uuid"]
    assert (recorded["entries"], recorded["entries_hashed"]) == (1, 1)
    conn = sqlite3.connect(env["MEMCITE_DB"])
    assert conn.execute("SELECT thread_id, cwd FROM replies").fetchone() == (
        "019bdb5e-1c40-7a21-9c3e-5f0d2b7a4e11", "/w")


def test_record_jsonl_records_each_line_and_reports_bad_ones(env, tmp_path):
    invoke(["sync"], env)
    batch = tmp_path / "replies.jsonl"
    lines = [
        json.dumps({"text": REPLY, "id": "a", "at": 1_700_000_000}),
        "not json",
        json.dumps({"text": "other\n" + REPLY.split("\n", 1)[1], "at": "2026-01-01T00:00:00Z"}),
        json.dumps({"id": "no text"}),
        "",
        json.dumps({"text": REPLY, "id": "a"}),  # the same id again
    ]
    batch.write_text("\n".join(lines) + "\n")
    code, out, err = run(["record", "--jsonl", str(batch)], env)
    assert code == 2  # done with problems: the good lines recorded, the bad ones skipped
    assert f"{batch}:2: not JSON" in err
    assert f'{batch}:4: expected an object with a "text" string' in err
    assert out.decode().startswith("recorded 2 replies (1 already recorded, 0 rejected,"
                                   " 2 lines skipped)")
    assert counts(env["MEMCITE_DB"]) == {KNOWN: 2}


def test_record_jsonl_skips_a_line_over_the_size_limit(env, tmp_path):
    batch = tmp_path / "replies.jsonl"
    lines = [json.dumps({"text": "x" * 5000, "id": "big"}), json.dumps({"text": "ok", "id": "s"})]
    batch.write_text("\n".join(lines) + "\n")
    code, out, err = run(["record", "--jsonl", str(batch), "--max-bytes", "1000"], env)
    assert code == 2
    assert f"{batch}:1: longer than the limit of 1000 bytes" in err
    assert out.decode().startswith("recorded 1 reply (0 already recorded, 0 rejected,"
                                   " 1 line skipped)")


def test_record_jsonl_json_prints_one_object_per_reply(env, tmp_path):
    batch = tmp_path / "replies.jsonl"
    batch.write_text("\n".join(json.dumps({"text": f"r{n}\n" + REPLY, "id": str(n)})
                               for n in range(3)) + "\n")
    result = invoke(["record", "--jsonl", str(batch), "--json"], env)
    assert result.exit_code == 0, result.output
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    assert [o["key"] for o in objects] == ["0", "1", "2"]
    assert all(o["status"] == "recorded" for o in objects)


def test_record_refuses_options_that_do_not_fit_together(env, tmp_path):
    result = invoke(["record", "--jsonl", "-", "--id", "x"], env, input="")
    assert result.exit_code == 2 and "--id" in result.stderr
    code, _, err = run(["record", "--policy", "sometimes", "-"], env)
    assert code == 2 and "sometimes" in err
    code, _, err = run(["record", "--policy", "sometimes", "-"], env, MEMCITE_NO_FASTPATH="1")
    assert code == 2 and "sometimes" in err


def test_record_strict_profile_records_nothing_and_exits_1(env):
    code, _, err = run(["record", "--profile", "strict", "-"], env, stdin=REPLY.encode())
    assert code == 1
    assert "not-a-uuid" in err
    assert not Path(env["MEMCITE_DB"]).exists()  # rejected before the database is opened


@pytest.mark.parametrize("args", [
    ["record", "-"],
    ["record", "--policy", "codex", "--at", "1700000000", "-"],
    ["record", "--json", "--at", "1700000000", "--id", "x", "-"],
])
def test_record_fast_path_and_typer_print_the_same(env, tmp_path, args):
    fast = run(args, env, stdin=REPLY.encode(), MEMCITE_DB=str(tmp_path / "fast.sqlite"))
    slow = run(args, env, stdin=REPLY.encode(), MEMCITE_DB=str(tmp_path / "slow.sqlite"),
               MEMCITE_NO_FASTPATH="1")
    assert fast == slow
    assert fast[0] == 0


def test_record_fast_path_imports_nothing_heavy(env, tmp_path):
    probe = (
        "import sys\nfrom memcite.__main__ import main\n"
        "try:\n    main(['record', '-'])\nexcept SystemExit:\n    pass\n"
        "heavy = {'typer', 'click', 'rich', 'pydantic', 'sqlite_utils', 'tiktoken',"
        " 'platformdirs', 'zstandard'}\n"
        "sys.stderr.write('LOADED=' + ','.join(sorted(heavy & set(sys.modules))))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], input=REPLY.encode(),
                          capture_output=True, env={**os.environ, **env}, timeout=60)
    assert done.stdout == VISIBLE.encode()
    assert done.stderr.decode().rsplit("LOADED=", 1)[1] == ""


def test_record_fast_path_replays_the_grammar_tables_without_lark(env, tmp_path):
    """Once lark's tables are exported (the first reading), recording imports neither lark nor
    what lark and dataclasses cost at start-up."""
    probe = (
        "import sys\nfrom memcite.__main__ import main\n"
        "try:\n    main(['record', '-'])\nexcept SystemExit:\n    pass\n"
        "heavy = {'lark', 'dataclasses', 'inspect', 'logging', 'typing'}\n"
        "sys.stderr.write('LOADED=' + ','.join(sorted(heavy & set(sys.modules))))\n"
    )
    cache = {**os.environ, **env, "MEMCITE_CACHE_DIR": str(tmp_path / "cache")}
    loaded = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", probe], input=REPLY.encode(),
                              capture_output=True, env=cache, timeout=60)
        assert done.stdout == VISIBLE.encode()
        loaded.append(done.stderr.decode().rsplit("LOADED=", 1)[1])
    assert "lark" in loaded[0].split(",")  # nothing cached yet: lark builds and exports
    assert loaded[1] == ""


def test_database_location_follows_db_then_env(env, tmp_path):
    env_no_db = {**env, "MEMCITE_DB": ""}
    # The user data folder (platformdirs, here under XDG_DATA_HOME).
    assert run(["record", "-"], env_no_db, stdin=b"plain")[0] == 0
    assert (tmp_path / "xdg" / "memcite" / "memcite.sqlite").exists()
    # MEMCITE_HOME overrides the folder, MEMCITE_DB the file, --db both.
    assert run(["record", "-"], {**env_no_db, "MEMCITE_HOME": str(tmp_path / "mh")},
               stdin=b"plain")[0] == 0
    assert (tmp_path / "mh" / "memcite.sqlite").exists()
    assert run(["record", "-"], {**env, "MEMCITE_HOME": str(tmp_path / "mh2")},
               stdin=b"plain")[0] == 0
    assert Path(env["MEMCITE_DB"]).exists() and not (tmp_path / "mh2").exists()
    code, _, err = run(["record", "--db", str(tmp_path / "flag.sqlite"), "-"], env,
                       stdin=b"plain")
    assert code == 0, err
    assert (tmp_path / "flag.sqlite").exists()


@pytest.mark.parametrize("command", [["record", "-"], ["sync"], ["rebuild"]])
def test_a_file_that_is_not_a_database_is_exit_2_and_untouched(env, tmp_path, command):
    bogus = tmp_path / "notes.txt"
    bogus.write_text("my notes, not a database\n")
    code, _, err = run([*command], env, stdin=REPLY.encode(), MEMCITE_DB=str(bogus))
    assert code == 2
    assert "not an SQLite database" in err and "Traceback" not in err
    assert bogus.read_text() == "my notes, not a database\n"


def test_ingest_prints_one_line_per_file(env):
    invoke(["sync"], env)
    result = invoke(["ingest", str(ROLLOUT)], env)
    assert result.exit_code == 0, result.output
    assert result.stdout == (f"{ROLLOUT}: 3 replies, 3 recorded, 0 already recorded,"
                             " 3 citations counted, 1 id not in the inventory,"
                             " 1 id not UUIDs\n")
    again = invoke(["ingest", "--json", str(ROLLOUT)], env)
    assert json.loads(again.stdout)["duplicates"] == 3


def test_ingest_of_a_missing_file_is_exit_2_and_goes_on(env, tmp_path):
    result = invoke(["ingest", str(tmp_path / "absent.jsonl"), str(ROLLOUT)], env)
    assert result.exit_code == 2
    assert "absent.jsonl: no such file" in result.stderr
    assert "3 recorded" in result.stdout


@pytest.mark.parametrize("args", [
    ["ingest", str(ROLLOUT)],
    ["ingest", "--json", "--profile", "strict", str(ROLLOUT), str(ROLLOUT)],
    ["ingest", "--since", "1700000000", str(ROLLOUT)],  # refused: --since is for a home
    ["ingest", "--max-bytes", "1000", "/nonexistent/rollout.jsonl", str(ROLLOUT)],
    ["ingest"],  # every session of the home
    ["ingest", "--json"],
])
def test_ingest_fast_path_and_typer_print_the_same(env, tmp_path, args):
    """``ingest`` runs on the fast path (an explicit re-ingest of an unchanged file is one
    look-up, Typer's start-up most of it): both paths print the same bytes, twice (first
    read, then a re-read)."""
    for _ in range(2):
        fast = run(args, env, MEMCITE_DB=str(tmp_path / "fast.sqlite"))
        slow = run(args, env, MEMCITE_DB=str(tmp_path / "slow.sqlite"), MEMCITE_NO_FASTPATH="1")
        assert fast == slow
        assert fast[2].count("Traceback") == 0


def test_ingest_fast_path_imports_nothing_heavy(env, tmp_path):
    probe = (
        "import sys\nfrom memcite.__main__ import main\n"
        f"try:\n    main(['ingest', {str(ROLLOUT)!r}])\nexcept SystemExit:\n    pass\n"
        "heavy = {'typer', 'click', 'rich', 'pydantic', 'sqlite_utils', 'tiktoken',"
        " 'platformdirs'}\n"
        "sys.stderr.write('LOADED=' + ','.join(sorted(heavy & set(sys.modules))))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True,
                          env={**os.environ, **env}, timeout=60)
    assert done.stdout.startswith(f"{ROLLOUT}: 3 replies".encode()), done.stderr
    assert done.stderr.decode().rsplit("LOADED=", 1)[1] == ""


def test_rebuild_check_reports_and_rebuild_fixes(env):
    invoke(["sync"], env)
    invoke(["ingest", str(ROLLOUT)], env)
    assert "the counts match the log" in invoke(["rebuild", "--check"], env).stdout
    conn = sqlite3.connect(env["MEMCITE_DB"])
    conn.execute("UPDATE memories SET usage_count = 9 WHERE thread_id = ?", (KNOWN,))
    conn.commit()
    conn.close()
    check = invoke(["rebuild", "--check"], env)
    assert check.exit_code == 1
    assert f"{KNOWN}: usage_count 9 -> 1" in check.stdout
    fixed = invoke(["rebuild", "--json"], env)
    assert fixed.exit_code == 0 and json.loads(fixed.stdout)["applied"] is True
    assert invoke(["rebuild", "--check"], env).exit_code == 0


def test_the_codex_home_is_left_as_it_was(env):
    home = Path(env["CODEX_HOME"])

    def digest():
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                for p in home.rglob("*") if p.is_file()}

    before = digest()
    invoke(["sync"], env)
    run(["record", "-"], env, stdin=REPLY.encode())
    invoke(["ingest", str(ROLLOUT)], env)
    assert digest() == before


# --------------------------------------------------------------------------- the reply survives


@pytest.mark.parametrize("fast", [True, False], ids=["fast path", "typer"])
def test_record_writes_the_reply_even_when_the_database_cannot_be_used(env, tmp_path, fast):
    fake = tmp_path / "fake.db"
    fake.write_text("not a database\n")
    extra = {} if fast else {"MEMCITE_NO_FASTPATH": "1"}
    code, out, err = run(["record", "-", "--db", str(fake)], env,
                         stdin=b"The agent answer.\n", **extra)
    assert (code, out) == (2, b"The agent answer.\n")
    assert "not an SQLite database" in err and "not recorded" in err
    assert fake.read_text() == "not a database\n"


def test_record_json_with_a_database_error_is_still_one_object(env, tmp_path):
    fake = tmp_path / "fake.db"
    fake.write_text("not a database\n")
    code, out, err = run(["record", "--json", "-", "--db", str(fake)], env,
                         stdin=REPLY.encode())
    assert code == 2 and "not an SQLite database" in err
    (line,) = out.decode().splitlines()
    data = json.loads(line)
    assert data["reading"]["visible"] == VISIBLE and data["recorded"] is None
    assert "not an SQLite database" in data["error"]


def test_record_writes_the_reply_when_the_data_folder_cannot_be_created(env, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("")  # a file where the data folder should go
    code, out, err = run(["record", "-"], {**env, "MEMCITE_DB": ""}, stdin=REPLY.encode(),
                         MEMCITE_HOME=str(blocker / "memcite"))
    assert (code, out) == (2, VISIBLE.encode())
    assert "cannot create memcite's data folder" in err and "Traceback" not in err


# --------------------------------------------------------------------------- nothing created


def _no_db_env(env, tmp_path):
    """``env`` with the default database: memcite.sqlite in the user data folder (XDG_DATA_HOME)."""
    return {**env, "MEMCITE_DB": "", "CODEX_HOME": str(tmp_path / "no-codex")}


def _created(tmp_path) -> list[str]:
    return [str(p) for p in (tmp_path / "xdg", tmp_path / "home") if p.exists()]


@pytest.mark.parametrize("args", [
    ["stats"],
    ["select"],
    ["prune"],
    ["restore", "--all"],
    ["rebuild", "--check"],
    ["sync"],
    ["sync", "--codex-home", "/nonexistent/codex"],
    ["record", "--jsonl", "/nonexistent/replies.jsonl"],
    ["ingest", "/nonexistent/rollout.jsonl"],
], ids=" ".join)
def test_commands_that_read_or_fail_create_no_data_folder(env, tmp_path, args):
    result = invoke(args, _no_db_env(env, tmp_path))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert _created(tmp_path) == []


@pytest.mark.parametrize("args", [
    ["sync", "--codex-home", "/nonexistent/codex"],
    ["record", "--jsonl", "/nonexistent/replies.jsonl"],
    ["ingest", "/nonexistent/rollout.jsonl", "/nonexistent/other.jsonl.zst"],
    ["rebuild", "--check"],
], ids=" ".join)
def test_a_bad_input_creates_no_database(env, args):
    result = invoke(args, env)
    assert result.exit_code == 2
    assert "nonexistent" in result.stderr or "no such database" in result.stderr
    assert not Path(env["MEMCITE_DB"]).exists()


def test_rebuild_check_changes_nothing_not_even_the_schema_version(env):
    assert invoke(["sync"], env).exit_code == 0
    conn = sqlite3.connect(env["MEMCITE_DB"])
    conn.execute("DELETE FROM _memcite_migrations WHERE name != 'm001_initial'")
    conn.execute("PRAGMA user_version = 1")  # as a database of an older memcite
    conn.commit()
    conn.close()
    check = invoke(["rebuild", "--check"], env)
    assert check.exit_code == 0, check.output
    conn = sqlite3.connect(env["MEMCITE_DB"])
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM _memcite_migrations").fetchone()[0] == 1
    conn.close()


def test_a_writing_command_creates_the_default_data_folder(env, tmp_path):
    result = invoke(["sync"], {**env, "MEMCITE_DB": ""})
    assert result.exit_code == 0, result.output
    assert (tmp_path / "xdg" / "memcite" / "memcite.sqlite").exists()


@pytest.mark.parametrize("xdg", ["/tmp/xdg-data", "relative/ignored", "", None])
def test_the_default_data_folder_is_platformdirs_user_data_dir(monkeypatch, xdg):
    import platformdirs

    from memcite.paths import user_data_dir

    monkeypatch.delenv("MEMCITE_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    if xdg is not None:
        monkeypatch.setenv("XDG_DATA_HOME", xdg)
    assert user_data_dir() == platformdirs.user_data_dir("memcite", appauthor=False)


def test_tilde_is_expanded_in_every_location(monkeypatch, tmp_path):
    from memcite import paths

    monkeypatch.setenv("HOME", str(tmp_path))
    environ = {"CODEX_HOME": "~/.codexalt", "MEMCITE_DB": "~/m.sqlite",
               "MEMCITE_CACHE_DIR": "~/cache", "MEMCITE_HOME": "~/data"}
    assert paths.resolve_codex_home(None, environ) == str(tmp_path / ".codexalt")
    assert paths.resolve_codex_home("~/other", environ) == str(tmp_path / "other")
    assert paths.resolve_db_path(None, environ) == str(tmp_path / "m.sqlite")
    assert paths.user_cache_dir(environ) == str(tmp_path / "cache")
    assert paths.user_data_dir(environ) == str(tmp_path / "data")


def test_record_reads_the_reply_once(env, tmp_path, monkeypatch, capsys):
    import memcite.citations.reading as reading_module
    from memcite.cli import ledger_commands

    readings = []
    real = reading_module.parse_reply

    def noted(text, **kwargs):
        readings.append(text)
        return real(text, **kwargs)

    monkeypatch.setattr(reading_module, "parse_reply", noted)
    reply = tmp_path / "reply.txt"
    reply.write_text(REPLY)
    assert ledger_commands.record(str(reply), db=env["MEMCITE_DB"],
                                  codex_home=env["CODEX_HOME"]) == 0
    assert capsys.readouterr().out == VISIBLE
    assert readings == [REPLY]  # printed and recorded from one reading


@pytest.mark.parametrize("piped", [False, True])
def test_record_jsonl_batches_a_file_and_commits_a_pipe_reply_by_reply(env, tmp_path, piped):
    # A file read through is recorded in one transaction per ~100 replies (or 50 ms),
    # replies fed through a pipe one by one: the statements are traced in the process.
    lines = "".join(json.dumps({"text": f"reply {n}\n" + REPLY, "id": f"r{n}"}) + "\n"
                    for n in range(250))
    trace = tmp_path / "trace.sql"
    probe = (
        "import sqlite3, sys\n"
        "from memcite.ledger import store\n"
        "real = store.open_store\n"
        "def traced(*a, **k):\n"
        "    conn = real(*a, **k)\n"
        f"    out = open({str(trace)!r}, 'a')\n"
        "    conn.set_trace_callback(lambda sql: out.write(sql.split()[0] + '\\n') or out.flush())\n"
        "    return conn\n"
        "store.open_store = traced\n"
        "from memcite.__main__ import main\n"
        "main(sys.argv[1:])\n"
    )
    args = ["record", "--jsonl", "-" if piped else str(tmp_path / "batch.jsonl")]
    (tmp_path / "batch.jsonl").write_text(lines)
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, timeout=60,
                          input=lines.encode() if piped else b"",
                          env={**os.environ, **env, "MEMCITE_NO_FASTPATH": ""})
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().startswith("recorded 250 replies")
    commits = trace.read_text().split().count("COMMIT")  # traced once the database is open
    if piped:
        assert commits == 250
    else:
        assert 3 <= commits < 25


def test_warm_stats_json_imports_no_dataclasses_inspect_or_typing(env, tmp_path):
    """A warm ``memcite stats --json`` (the citation tally cached) builds its values without
    ``dataclasses``, which pulls ``inspect`` (and ``ast``, ``dis``...), nor ``typing``: at a
    million memories, start-up is most of what it costs."""
    warm = {**env, "MEMCITE_CACHE_DIR": str(tmp_path / "cache")}
    assert run(["sync"], warm)[0] == 0
    assert run(["record", "--at", "1800000000", "-"], warm, stdin=REPLY.encode())[0] == 0
    args = ["stats", "--json", "--limit", "50", "--as-of", "1800000000"]
    assert run(args, warm)[0] == 0  # the tally is cached
    probe = (
        "import sys\nfrom memcite.__main__ import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
        "heavy = {'dataclasses', 'inspect', 'typing', 'typer', 'pydantic', 'rich'}\n"
        "sys.stderr.write('LOADED=' + ','.join(sorted(heavy & set(sys.modules))))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True,
                          env={**os.environ, **warm}, timeout=60)
    code, out, _ = run(args, warm)
    assert code == 0 and done.stdout == out
    assert json.loads(out)["citation_checks"]["entries"] == 1  # the recorded reply is in it
    assert done.stderr.decode().rsplit("LOADED=", 1)[1] == ""
