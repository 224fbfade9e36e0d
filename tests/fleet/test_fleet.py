"""The fleet: ledgers pushed to a real PostgreSQL, and ``stats --db postgresql://…`` over them.

The contract test pushes two machines' ledgers and checks that the fleet's report equals the
report of one ledger holding both (every reply of each, the Codex counters of both added up),
field for field, except the fields only one machine has (its paths, its MEMORY.md entries).
The server is real (``pg_server_url`` in conftest.py); each test gets a database of its own.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import uuid

import pytest

from memcite.cli import retention_commands
from memcite.demo.loop import load_sample_builder
from memcite.fleet.connection import FleetError, connect, mask_password
from memcite.fleet.push import push_ledger
from memcite.fleet.schema import MIGRATIONS, applied, migrate, month_of
from memcite.ledger.recording import ReplyInput, record_reply
from memcite.ledger.store import open_store
from memcite.ledger.sync import sync_codex_home
from memcite.retention.checks import MemoryFolder
from memcite.retention.stats import inventory_knew

psycopg = pytest.importorskip("psycopg", reason="the fleet needs psycopg (pip install '.[test]')")

BUILDER = load_sample_builder()
NOW = 1_800_000_000  # 2027-01-15
HOUR = 3600
MEMCITE = [sys.executable, "-m", "memcite"]
# What only one machine's report can say: its paths, its files' entries, which store it read.
# (the audit and the consolidation snapshots are one machine's memory folder: absent over a
# fleet server, by contract)
MACHINE_LOCAL = ("codex_home", "state_db", "other_homes", "log_scope", "store", "entries",
                 "fleet", "audit", "consolidation")
MACHINE_LOCAL_CHECKS = ("memory_root", "files_read", "skipped")


@pytest.fixture
def fleet_url(pg_server_url):
    """A fresh database on the test server, dropped afterwards."""
    name = f"fleet_{uuid.uuid4().hex[:12]}"
    admin = psycopg.connect(pg_server_url, autocommit=True)
    admin.execute(f"CREATE DATABASE {name}")
    base = pg_server_url.rsplit("/", 1)[0]
    yield f"{base}/{name}"
    admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
    admin.close()


def _citation(entries: list[str], threads: list[str]) -> str:
    return ("<oai-mem-citation>\n<citation_entries>\n" + "\n".join(entries)
            + "\n</citation_entries>\n<rollout_ids>\n" + "\n".join(threads)
            + "\n</rollout_ids>\n</oai-mem-citation>")


T = BUILDER.thread_id
UNKNOWN = "019c0000-0000-7000-8000-00000000beef"
# (hours before NOW, cwd, entries, cited threads): a machine's replies. They span two months
# (partitions), cite known and unknown ids, an id that is not a UUID, and lines that check ok,
# out of range, missing, outside the folder.
REPLIES_A = [
    (5, "/home/dev/memcite", ["MEMORY.md:4-7|note=[tests]"], [T(2), T(3)]),
    (30, "/home/dev/memcite", ["MEMORY.md:12-14|note=[wal]", "MEMORY.md:800-800|note=[far]"],
     [T(3)]),
    (24 * 20, "/home/dev/infra", ["MEMORY.md:49-50|note=[flaky]"], [T(8), UNKNOWN]),
    (24 * 40, "/home/dev/infra", ["missing.md:1-2|note=[gone]"], ["not-a-uuid"]),
]
REPLIES_B = [
    (2, "/home/dev/payments-api", ["MEMORY.md:30-32|note=[release]"], [T(5), T(7)]),
    (24 * 3, "/home/dev/memcite", ["MEMORY.md:4-7|note=[tests]"], [T(2)]),
    (24 * 35, "/home/dev/infra", ["MEMORY.md:900-901|note=[too far]", "../secret.md:1-1|note=[x]"],
     [T(10), UNKNOWN]),
]


def _home(folder, *, scale: int = 1, shift: int = 0, rows_from=None) -> str:
    """A copy of the sample Codex home with Codex's counters multiplied by ``scale`` and its
    last uses moved by ``shift`` seconds (each machine's Codex counted its own replies);
    ``rows_from``: several machines' counters added up (their last uses, the latest)."""
    home = BUILDER.build_codex_home(str(folder), now=NOW)
    db = os.path.join(home, "memories_1.sqlite")
    conn = sqlite3.connect(db)
    if rows_from is None:
        conn.execute("UPDATE stage1_outputs SET usage_count = usage_count * ?,"
                     " last_usage = last_usage + ?", (scale, shift))
    else:
        for thread, count, last in rows_from:
            conn.execute("UPDATE stage1_outputs SET usage_count = ?, last_usage = ?"
                         " WHERE thread_id = ?", (count, last, thread))
    conn.commit()
    conn.close()
    return home


def _counters(home: str) -> dict[str, tuple]:
    conn = sqlite3.connect(os.path.join(home, "memories_1.sqlite"))
    try:
        return {t: (n, last) for t, n, last in conn.execute(
            "SELECT thread_id, usage_count, last_usage FROM stage1_outputs")}
    finally:
        conn.close()


def _added_up(*homes: str) -> list[tuple]:
    """Codex's counters of several homes as one: counts added, the latest last use."""
    tables = [_counters(home) for home in homes]
    merged = []
    for thread in tables[0]:
        counts = [t[thread][0] for t in tables if t[thread][0] is not None]
        lasts = [t[thread][1] for t in tables if t[thread][1] is not None]
        merged.append((thread, sum(counts) if counts else None, max(lasts) if lasts else None))
    return merged


def _ledger(path, home: str, replies: list, prefix: str) -> str:
    conn = open_store(str(path))
    sync_codex_home(conn, home, now=NOW)
    _record(conn, home, replies, prefix)
    conn.close()
    return str(path)


def _record(conn, home: str, replies: list, prefix: str) -> None:
    for index, (hours, cwd, entries, threads) in enumerate(replies):
        at = NOW - hours * HOUR
        text = f"Reply {prefix}{index}.\n" + _citation(entries, threads)
        record_reply(conn, ReplyInput(text, id=f"{prefix}-{index}", at=at, cwd=cwd),
                     memory_root=os.path.join(home, "memories"), now=at + 60)


def _push(ledger: str, home: str, url: str, machine: str, **options):
    local = open_store(ledger, readonly=True)
    server = connect(url, autocommit=True)
    folder = MemoryFolder(os.path.join(home, "memories"),
                          known_once=inventory_knew(local, os.path.realpath(home)))
    try:
        return push_ledger(local, server, server_name="test", machine=machine,
                           ledger=os.path.realpath(ledger), folder=folder, now=NOW, **options)
    finally:
        folder.close()
        server.close()
        local.close()


def _stats(capsys, db: str, home: str | None = None, **options) -> dict:
    capsys.readouterr()
    code = retention_commands.stats(db, home, None, options.pop("rule", "memcite"),
                                    str(NOW), options.pop("since", None), options.pop("limit", 0),
                                    True, True, **options)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def _comparable(report: dict) -> dict:
    report = {k: v for k, v in report.items() if k not in MACHINE_LOCAL}
    report["citation_checks"] = {k: v for k, v in report["citation_checks"].items()
                                 if k not in MACHINE_LOCAL_CHECKS}
    return report


@pytest.fixture
def two_machines(tmp_path):
    """Machine A's and B's ledgers, and one ledger holding both (the reference)."""
    home_a = _home(tmp_path / "home_a")
    home_b = _home(tmp_path / "home_b", scale=2, shift=-HOUR)
    home_ab = _home(tmp_path / "home_ab", rows_from=_added_up(home_a, home_b))
    ledger_a = _ledger(tmp_path / "a.sqlite", home_a, REPLIES_A, "a")
    ledger_b = _ledger(tmp_path / "b.sqlite", home_b, REPLIES_B, "b")
    both = open_store(str(tmp_path / "ab.sqlite"))
    sync_codex_home(both, home_ab, now=NOW)
    _record(both, home_ab, REPLIES_A, "a")
    _record(both, home_ab, REPLIES_B, "b")
    both.close()
    return {"a": (ledger_a, home_a), "b": (ledger_b, home_b),
            "ab": (str(tmp_path / "ab.sqlite"), home_ab)}


# --------------------------------------------------------------------------- the contract


@pytest.mark.parametrize("options", [{}, {"rule": "codex"}, {"since": str(NOW - 24 * 30 * HOUR)},
                                     {"limit": 2}])
def test_the_fleet_report_equals_the_report_of_one_ledger_holding_both(two_machines, fleet_url,
                                                                        capsys, options):
    for machine in ("a", "b"):
        _push(*two_machines[machine], fleet_url, machine)
    fleet = _stats(capsys, fleet_url, **dict(options))
    one = _stats(capsys, two_machines["ab"][0], two_machines["ab"][1], **dict(options))
    assert _comparable(fleet) == _comparable(one)
    assert fleet["fleet"]["machines"] == ["a", "b"]
    # Not an empty agreement: both machines' replies, counters and checks are in it.
    assert fleet["totals"]["replies"] == (len(REPLIES_A) + len(REPLIES_B)
                                          if "since" not in options else 5)
    assert fleet["totals"]["codex_citations"] > 0 and fleet["top"]
    assert fleet["citation_checks"]["broken"] > 0


def test_one_machine_s_fleet_report_equals_its_own(two_machines, fleet_url, capsys):
    for machine in ("a", "b"):
        _push(*two_machines[machine], fleet_url, machine)
    for machine in ("a", "b"):
        fleet = _stats(capsys, fleet_url, machine=machine)
        own = _stats(capsys, *two_machines[machine])
        assert _comparable(fleet) == _comparable(own)
        assert fleet["fleet"]["machine"] == machine


def test_a_project_keeps_to_its_replies_and_memories(two_machines, fleet_url, capsys):
    for machine in ("a", "b"):
        _push(*two_machines[machine], fleet_url, machine)
    report = _stats(capsys, fleet_url, project="/home/dev/infra")
    infra = [r for r in REPLIES_A + REPLIES_B if r[1] == "/home/dev/infra"]
    assert report["totals"]["replies"] == len(infra)
    assert report["totals"]["citations"] == sum(
        1 for r in infra for t in r[3] if t != "not-a-uuid")
    everything = _stats(capsys, fleet_url)
    assert 0 < report["totals"]["memories"] < everything["totals"]["memories"]


# --------------------------------------------------------------------------- pushing


def _server_counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("fleet_replies", "fleet_cited_ids", "fleet_cited_entries",
                              "fleet_memories")}


def _local_counts(ledger: str) -> dict[str, int]:
    conn = sqlite3.connect(ledger)
    try:
        return {f"fleet_{t}": conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("replies", "cited_ids", "cited_entries", "memories")}
    finally:
        conn.close()


def test_a_second_push_with_nothing_new_sends_nothing(two_machines, fleet_url):
    first = _push(*two_machines["a"], fleet_url, "a")
    assert first.replies == len(REPLIES_A) and first.memories == 36
    assert _server_counts(fleet_url) == _local_counts(two_machines["a"][0])
    again = _push(*two_machines["a"], fleet_url, "a")
    assert again.up_to_date and (again.replies, again.citations, again.memories) == (0, 0, 0)
    assert _server_counts(fleet_url) == _local_counts(two_machines["a"][0])


def test_a_new_reply_pushes_that_reply_and_the_memories_it_cited(two_machines, fleet_url):
    ledger, home = two_machines["a"]
    _push(ledger, home, fleet_url, "a")
    conn = open_store(ledger)
    _record(conn, home, [(1, "/home/dev/memcite", ["MEMORY.md:12-14|note=[wal]"], [T(3), T(4)])],
            "late")
    conn.close()
    report = _push(ledger, home, fleet_url, "a")
    assert (report.replies, report.citations, report.entries) == (1, 2, 1)
    assert report.memories == 2  # the two cited memories' counts changed, nothing else
    with psycopg.connect(fleet_url) as server:
        assert server.execute("SELECT usage_count FROM fleet_memories WHERE thread_id = %s",
                              (T(4),)).fetchone()[0] == 1


def test_a_push_killed_midway_and_run_again_counts_nothing_twice(two_machines, fleet_url,
                                                                 capsys):
    ledger, home = two_machines["a"]

    def die_after_the_second_batch(report, last):
        if report.batches == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _push(ledger, home, fleet_url, "a", batch_replies=1, progress=die_after_the_second_batch)
    with psycopg.connect(fleet_url) as server:
        assert server.execute("SELECT count(*) FROM fleet_replies").fetchone()[0] == 2
        assert server.execute("SELECT last_reply_id FROM fleet_ledgers").fetchone()[0] == 2
    rest = _push(ledger, home, fleet_url, "a", batch_replies=1)
    assert rest.replies == len(REPLIES_A) - 2 and rest.from_reply == 2
    assert _server_counts(fleet_url) == _local_counts(ledger)
    assert _comparable(_stats(capsys, fleet_url)) == _comparable(_stats(capsys, ledger, home))


@pytest.mark.parametrize("lose", ["the cursor", "the ledger's ids"])
def test_a_lost_cursor_or_a_rebuilt_ledger_is_reconciled_without_doubles(two_machines, fleet_url,
                                                                         lose, tmp_path):
    ledger, home = two_machines["a"]
    _push(ledger, home, fleet_url, "a")
    if lose == "the cursor":
        with psycopg.connect(fleet_url) as server:
            server.execute("UPDATE fleet_ledgers SET last_reply_id = 0, last_reply_key = NULL")
    else:  # the same replies under other row ids: the cursor's id names another reply
        conn = sqlite3.connect(ledger)
        conn.execute("UPDATE replies SET reply_key = reply_key || '-renamed' WHERE id = ?",
                     (len(REPLIES_A),))
        conn.execute("UPDATE replies SET reply_key = 'a-3' WHERE reply_key = 'a-3-renamed'")
        conn.commit()
        with psycopg.connect(fleet_url) as server:
            server.execute("UPDATE fleet_ledgers SET last_reply_key = 'someone else'")
        conn.close()
    report = _push(ledger, home, fleet_url, "a")
    assert report.reconciled and report.from_reply == 0
    assert _server_counts(fleet_url) == _local_counts(ledger)


def test_a_dry_run_writes_nothing_on_the_server(two_machines, fleet_url):
    report = _push(*two_machines["a"], fleet_url, "a", dry_run=True)
    assert report.dry_run and report.replies == len(REPLIES_A) and report.memories == 36
    with psycopg.connect(fleet_url) as server:
        assert server.execute("SELECT to_regclass('fleet_replies')").fetchone()[0] is None
    _push(*two_machines["a"], fleet_url, "a")
    again = _push(*two_machines["a"], fleet_url, "a", dry_run=True)
    assert again.up_to_date and again.replies == 0


def test_the_log_is_partitioned_by_month(two_machines, fleet_url):
    _push(*two_machines["a"], fleet_url, "a")
    with psycopg.connect(fleet_url) as server:
        placed = dict(server.execute(
            "SELECT tableoid::regclass::text, count(*) FROM fleet_replies GROUP BY 1").fetchall())
    months = {month_of(NOW - r[0] * HOUR) for r in REPLIES_A}
    assert set(placed) == {f"fleet_replies_{y:04d}_{m:02d}" for y, m in months}
    assert len(placed) >= 2 and sum(placed.values()) == len(REPLIES_A)


def test_a_reply_before_1970_lands_in_the_default_partition(tmp_path, fleet_url):
    home = _home(tmp_path / "home")
    ledger = _ledger(tmp_path / "l.sqlite", home, [], "x")
    conn = open_store(ledger)
    record_reply(conn, ReplyInput("old\n" + _citation(["MEMORY.md:4-7|note=[a\x00b]"], [T(2)]),
                                  id="old", at=-86_400), memory_root=os.path.join(home, "memories"),
                 now=NOW)
    conn.close()
    report = _push(ledger, home, fleet_url, "x")
    assert report.replies == 1 and report.entries == 1
    with psycopg.connect(fleet_url) as server:
        where = server.execute("SELECT tableoid::regclass::text FROM fleet_replies").fetchone()[0]
        note = server.execute("SELECT note FROM fleet_cited_entries").fetchone()[0]
    assert where == "fleet_replies_default"
    assert "\x00" not in note


def test_the_server_schema_is_named_migrations_applied_once(fleet_url):
    conn = connect(fleet_url, autocommit=True)
    try:
        assert applied(conn) == []
        assert migrate(conn) == [m.__name__ for m in MIGRATIONS]
        assert migrate(conn) == []
        assert applied(conn) == sorted(m.__name__ for m in MIGRATIONS)
    finally:
        conn.close()


# --------------------------------------------------------------------------- the password


@pytest.mark.parametrize(("text", "shown"), [
    ("postgresql://u:hunter2@h:5432/db", "postgresql://u:***@h:5432/db"),
    ("postgres://u:p%40ss@h/db?sslmode=require", "postgres://u:***@h/db?sslmode=require"),
    ("host=h password=hunter2 dbname=x", "host=h password=*** dbname=x"),
    ("host=h password='a b c' dbname=x", "host=h password=*** dbname=x"),
    ("postgresql://h/db?password=hunter2&user=u", "postgresql://h/db?password=***&user=u"),
    ("postgresql://u@h/db", "postgresql://u@h/db"),
])
def test_a_password_in_a_connection_string_is_masked(text, shown):
    assert mask_password(text) == shown


def test_a_wrong_password_is_an_error_without_the_password(fleet_url):
    wrong = re.sub(r"(://memcite:)[^@]*@", r"\1WrongSecret99@", fleet_url)
    assert "WrongSecret99" in wrong
    with pytest.raises(FleetError) as raised:
        connect(wrong)
    assert "WrongSecret99" not in str(raised.value) and "***" in str(raised.value)


def test_push_and_fleet_stats_on_the_command_line(two_machines, fleet_url, tmp_path):
    ledger, home = two_machines["a"]
    password = fleet_url.split("memcite:", 1)[1].split("@", 1)[0]
    env = {**os.environ, "MEMCITE_CONFIG": str(tmp_path / "none.toml")}

    def run(*args):
        return subprocess.run([*MEMCITE, *args], capture_output=True, text=True, env=env,
                              timeout=120)

    done = run("push", "--to", fleet_url, "--db", ledger, "--codex-home", home, "--machine",
               "ci-7", "--json")
    assert done.returncode == 0, done.stderr
    pushed = json.loads(done.stdout)
    assert pushed["replies"] == len(REPLIES_A) and pushed["machine"] == "ci-7"
    again = run("push", "--to", fleet_url, "--db", ledger, "--codex-home", home, "--machine",
                "ci-7")
    assert again.returncode == 0 and "Nothing new to push" in again.stdout
    text = run("stats", "--db", fleet_url, "--as-of", str(NOW))
    assert text.returncode == 0, text.stderr
    assert "across 1 machine of the fleet" in text.stdout
    for output in (done, again, text):
        assert password not in output.stdout + output.stderr
    assert "***" in done.stdout  # the server, named without its password
    unknown = run("stats", "--db", fleet_url, "--machine", "nobody", "--json")
    assert unknown.returncode == 2 and "no machine named 'nobody'" in unknown.stderr
    assert "ci-7" in unknown.stderr
    local = run("stats", "--db", ledger, "--machine", "ci-7")
    assert local.returncode == 2 and "fleet server" in local.stderr
    nowhere = run("push", "--db", ledger, "--codex-home", home)
    assert nowhere.returncode == 2 and "no PostgreSQL server named" in nowhere.stderr


def test_a_server_without_fleet_tables_says_to_push_first(fleet_url, capsys):
    code = retention_commands.stats(fleet_url, None, None, "memcite", str(NOW), None, 20, True,
                                    True)
    assert code == 2
    assert "memcite push" in capsys.readouterr().err


def test_the_config_names_the_server(two_machines, fleet_url, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f'[fleet]\nurl = "{fleet_url}"\nmachine = "from-config"\n')
    ledger, home = two_machines["a"]
    done = subprocess.run([*MEMCITE, "push", "--db", ledger, "--codex-home", home, "--json"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MEMCITE_CONFIG": str(config)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["machine"] == "from-config"
    config.write_text('[fleet]\nurls = "x"\n')
    bad = subprocess.run([*MEMCITE, "push", "--db", ledger], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "MEMCITE_CONFIG": str(config)})
    assert bad.returncode == 2 and "fleet.urls: unknown key; did you mean fleet.url?" in bad.stderr


def test_the_html_report_of_the_fleet(two_machines, fleet_url, tmp_path, capsys):
    for machine in ("a", "b"):
        _push(*two_machines[machine], fleet_url, machine)
    page = tmp_path / "fleet.html"
    env = {**os.environ, "MEMCITE_CONFIG": str(tmp_path / "none.toml")}
    done = subprocess.run([*MEMCITE, "report", "--db", fleet_url, "--html", str(page), "--as-of",
                           str(NOW)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    stats = _stats(capsys, fleet_url)
    assert f"{stats['totals']['memories']} memories, {stats['totals']['dead']} dead" in done.stdout
    html = page.read_text(encoding="utf-8")
    assert "Memory use across 2 machines of the fleet" in html
    assert "machines: a, b" in html
    assert fleet_url.split("memcite:", 1)[1].split("@", 1)[0] not in html + done.stdout


def test_a_damaged_ledger_is_an_error_and_the_server_is_left_alone(fleet_url, tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x07" * 4000)
    done = subprocess.run([*MEMCITE, "push", "--to", fleet_url, "--db", str(bad)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MEMCITE_CONFIG": str(tmp_path / "none.toml")})
    assert done.returncode in (2, 3) and "Traceback" not in done.stderr, done.stderr
    assert str(bad) in done.stderr
    with psycopg.connect(fleet_url) as server:
        assert server.execute("SELECT to_regclass('fleet_replies')").fetchone()[0] is None


def test_the_root_folder_as_project_keeps_everything(two_machines, fleet_url, capsys):
    _push(*two_machines["a"], fleet_url, "a")
    assert _comparable(_stats(capsys, fleet_url, project="/")) == \
        _comparable(_stats(capsys, fleet_url))
