"""Trust in the core loop, through the command line: never judge without usage data, one Codex
home per report, prune that really forgets (and restore that takes it back), and memories
shown by name."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app

NOW = 1_800_000_000
AS_OF = str(NOW)
runner = CliRunner()


@pytest.fixture
def env(tmp_path, monkeypatch, sample_builder, codex_home):
    """The sample Codex home and an empty memcite database folder, pointed at by the
    environment (nothing synced yet)."""
    builder, home = sample_builder, codex_home
    values = {"MEMCITE_DB": str(tmp_path / "memcite.sqlite"), "CODEX_HOME": str(home),
              "MEMCITE_HOME": str(tmp_path), "MEMCITE_CONFIG": str(tmp_path / "none.toml")}
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("CODEX_SQLITE_HOME", raising=False)
    return {"home": home, "builder": builder, "tmp": tmp_path}


def invoke(args):
    return runner.invoke(app, args)


def _move_state_db(home, folder_name="sqlite"):
    """Put memories_1.sqlite where a Codex with sqlite_home keeps it."""
    target = home / folder_name
    target.mkdir()
    shutil.move(str(home / "memories_1.sqlite"), str(target / "memories_1.sqlite"))
    return target


# --------------------------------------------------------------------------- usage data


def test_without_usage_data_nothing_is_judged(env):
    home = env["home"]
    _move_state_db(home)
    result = invoke(["sync"])
    assert result.exit_code == 0, result.output
    assert "WARNING: no usage data" in result.stderr and "sqlite_home" in result.stderr
    assert json.loads(invoke(["sync", "--json"]).stdout)["usage_data"] is False
    for command in (["stats"], ["prune"], ["prune", "--apply"], ["select"]):
        result = invoke([*command, "--as-of", AS_OF])
        assert result.exit_code == 3, (command, result.output)
        assert "usage unknown: nothing judged" in result.stderr
        assert "--judge-without-usage" in result.stderr
    assert not (home / "memories" / "extensions").exists()
    result = invoke(["stats", "--as-of", AS_OF, "--judge-without-usage", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["state_db"] is None


def test_an_inventory_synced_without_usage_data_is_not_judged_until_synced_again(env):
    home = env["home"]
    folder = _move_state_db(home)
    invoke(["sync"])  # the memory folder only
    (home / "config.toml").write_text(f'sqlite_home = "{folder}"\n')
    for command in (["stats"], ["prune"]):
        result = invoke([*command, "--as-of", AS_OF])
        assert result.exit_code == 3, result.output
        assert "last sync" in result.stderr and "run `memcite sync`" in result.stderr
    invoke(["sync"])
    assert invoke(["stats", "--as-of", AS_OF]).exit_code == 0


@pytest.mark.parametrize("how", ["config", "env"])
def test_codex_sqlite_home_is_honoured(env, monkeypatch, how):
    home = env["home"]
    folder = _move_state_db(home)
    if how == "config":
        (home / "config.toml").write_text(f'sqlite_home = "{folder}"\n')
    else:
        monkeypatch.setenv("CODEX_SQLITE_HOME", str(folder))
    result = invoke(["sync", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["usage_data"] is True and report["stage1_rows"] == 33
    assert report["state_db"] == str(folder.resolve() / "memories_1.sqlite")
    assert report["sqlite_home_from"] == ("sqlite_home in config.toml" if how == "config"
                                          else "CODEX_SQLITE_HOME")
    stats = json.loads(invoke(["stats", "--json", "--as-of", AS_OF, "--limit", "0"]).stdout)
    dead = {d["thread_id"] for d in stats["dead"]}
    # user_prefers_short_answers: Codex counted it 30 times, 3 days ago: alive.
    assert env["builder"].thread_id(22) not in dead
    assert stats["totals"]["cited_codex"] > 0


def test_a_codex_home_that_does_not_exist_is_exit_2(env):
    invoke(["sync"])
    for command in (["stats"], ["prune"], ["select"], ["archived"], ["sync"],
                    ["show", env["builder"].thread_id(0)]):
        result = invoke([*command, "--codex-home", str(env["tmp"] / "nowhere")])
        assert result.exit_code == 2, command
        assert "nowhere" in result.output


def test_stats_of_one_home_never_reports_another(env, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")  # wide enough for the paths in full
    invoke(["sync"])
    other = tmp_path / "other_home"
    builder = env["builder"]
    builder.build_codex_home(str(other), now=NOW)
    conn = sqlite3.connect(other / "memories_1.sqlite")
    with conn:  # the other home holds only one memory
        conn.execute("DELETE FROM stage1_outputs WHERE thread_id != ?", (builder.thread_id(0),))
    conn.close()
    shutil.rmtree(other / "memories")
    (other / "memories").mkdir()
    assert invoke(["sync", "--codex-home", str(other)]).exit_code == 0
    mine = json.loads(invoke(["stats", "--json", "--as-of", AS_OF, "--limit", "0",
                              "--codex-home", str(other)]).stdout)
    assert mine["codex_home"] == str(other.resolve())
    assert mine["other_homes"] == [str(env["home"].resolve())]
    assert mine["memories"] == 1 and mine["totals"]["in_codex_table"] == 1
    listed = {d["thread_id"] for d in mine["dead"]} | {t["thread_id"] for t in mine["top"]}
    assert listed <= {builder.thread_id(0)}
    brief = invoke(["stats", "--as-of", AS_OF, "--codex-home", str(other)]).stdout
    assert f"Codex home: {other.resolve()}" in brief and "1 other Codex home" in brief
    text = invoke(["stats", "--as-of", AS_OF, "--codex-home", str(other), "--full"]).stdout
    assert f"in the Codex home {other.resolve()}, as of" in text.splitlines()[0]
    assert "other Codex home" in text
    prune = json.loads(invoke(["prune", "--json", "--as-of", AS_OF, "--limit", "0",
                               "--codex-home", str(other)]).stdout)
    assert {p["thread_id"] for p in prune["prune"]} <= {builder.thread_id(0)}
    # The citation log too: a reply recorded against the other home's folder is not
    # checked against this one's (where its path would be missing).
    (other / "memories" / "only_here.md").write_text("a\nb\n")
    reply = (f"ok\n<oai-mem-citation>\n<citation_entries>\nonly_here.md:1-2|note=[x]\n"
             f"</citation_entries>\n<rollout_ids>\n{builder.thread_id(0)}\n</rollout_ids>\n"
             "</oai-mem-citation>")
    runner.invoke(app, ["record", "--codex-home", str(other), "--at", AS_OF], input=reply)
    theirs = json.loads(invoke(["stats", "--json", "--as-of", AS_OF, "--no-cache",
                                "--codex-home", str(other)]).stdout)
    assert theirs["totals"]["replies"] == 1
    assert theirs["citation_checks"]["outcomes"]["ok"]["entries"] == 1
    ours = json.loads(invoke(["stats", "--json", "--as-of", AS_OF, "--no-cache"]).stdout)
    assert ours["totals"]["replies"] == 0 and ours["citation_checks"]["entries"] == 0
    assert ours["log_scope"] == str((env["home"] / "memories").resolve())


def test_counts_side_by_side_before_and_after_a_sync(env, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCITE_DB", "")
    monkeypatch.setenv("MEMCITE_HOME", str(tmp_path / "fresh"))
    before = invoke(["stats", "--as-of", AS_OF, "--full"]).stdout
    assert "by Codex's counters    24" in before
    monkeypatch.setenv("MEMCITE_DB", str(tmp_path / "memcite.sqlite"))
    invoke(["sync"])
    after = invoke(["stats", "--as-of", AS_OF, "--full"]).stdout
    assert "by memcite's log     0   by Codex's counters    24" in after
    assert "never cited: by memcite's log    36   by Codex's counters     9" in after
    header, most = after.split("Most cited")[1].splitlines()[1:3]
    assert header.split()[2:] == ["memcite", "Codex", "label"]
    assert most.split()[1:3] == ["0", "30"] and "user_prefers_short" in most


# --------------------------------------------------------------------------- Codex's table


def test_prune_in_codex_db_deletes_rows_and_restore_puts_them_back(env):
    invoke(["sync"])
    home = env["home"]
    db_path = home / "memories_1.sqlite"

    def rows():
        conn = sqlite3.connect(db_path)
        try:
            return conn.execute("SELECT * FROM stage1_outputs ORDER BY thread_id").fetchall()
        finally:
            conn.close()

    before = rows()
    preview = json.loads(invoke(["prune", "--rule", "codex", "--as-of", AS_OF, "--json"]).stdout)
    result = invoke(["prune", "--rule", "codex", "--as-of", AS_OF, "--apply", "--in-codex-db",
                     "--include-recent-threads"])
    assert result.exit_code == 0, result.output
    assert "way: Codex's database" in result.stdout
    assert "what Codex still sees: Codex's table no longer has these rows" in result.stdout
    assert len(rows()) == len(before) - len(preview["prune"])
    listed = invoke(["archived"]).stdout
    assert "way codex_db" in listed and preview["prune"][0]["label"] in listed
    result = invoke(["restore", "--all", "--json"])
    assert result.exit_code == 0, result.output
    assert all(item["done"] for item in json.loads(result.stdout)["restored"])
    assert rows() == before


def test_an_unknown_codex_table_is_refused_with_exit_3(env):
    invoke(["sync"])
    db_path = env["home"] / "memories_1.sqlite"
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("ALTER TABLE stage1_outputs ADD COLUMN something_new TEXT")
    conn.close()
    before = db_path.read_bytes()
    result = invoke(["prune", "--rule", "codex", "--as-of", AS_OF, "--apply", "--in-codex-db"])
    assert result.exit_code == 3, result.output
    assert "something_new" in result.stderr and "nothing written" in result.stderr
    assert db_path.read_bytes() == before
    assert json.loads(invoke(["archived", "--json"]).stdout)["requests"] == []


def test_in_codex_db_needs_apply(env):
    invoke(["sync"])
    result = invoke(["prune", "--in-codex-db"])
    assert result.exit_code == 2 and "add --apply" in result.output


# --------------------------------------------------------------------------- show


def test_show_says_what_a_memory_is(env):
    invoke(["sync"])
    builder = env["builder"]
    thread = builder.thread_id(22)
    text = (f"ok\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:1-2|note=[x]\n"
            f"</citation_entries>\n<rollout_ids>\n{thread}\n</rollout_ids>\n"
            "</oai-mem-citation>")
    runner.invoke(app, ["record", "--at", str(NOW - 60)], input=text)
    result = invoke(["show", thread.upper()])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith(f"{thread}  user_prefers_short_answers")
    assert "cwd:" in out and "/home/dev" in out
    assert "memcite's log 1" in out and "Codex's counters 30" in out
    assert "MEMORY.md:1-2  ok" in out
    assert "| # User prefers short answers" in out
    card = json.loads(invoke(["show", thread, "--json"]).stdout)
    assert card["label"] == "user_prefers_short_answers"
    assert card["counts"]["codex"]["usage_count"] == 30
    assert card["citations"][0]["entries"][0]["outcome"] == "ok"
    assert card["times"]["source_updated_at_iso"].endswith("Z")
    result = invoke(["show", "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee"])
    assert result.exit_code == 2 and "no such memory" in result.output
    assert invoke(["show", "nope"]).exit_code == 2


def test_labels_next_to_every_id(env):
    invoke(["sync"])
    for command in (["stats"], ["prune"], ["select"]):
        out = invoke([*command, "--as-of", AS_OF]).stdout
        lines = [line for line in out.splitlines() if line.strip().startswith("019")]
        assert lines, command
        assert all(len(line.split()) >= 2 for line in lines), command
    select = json.loads(invoke(["select", "--json", "--as-of", AS_OF]).stdout)
    assert all(item["label"] not in ("", "-") for item in select["selected"])


# --------------------------------------------------------------------------- hashes taken late


def _git(folder, *args, when):
    import subprocess

    stamp = f"@{when} +0000"
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp,
                        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


@pytest.mark.parametrize("with_history", [True, False])
def test_an_old_ingest_hashed_from_the_file_is_checked_against_history(env, with_history):
    """A reply ingested late before memcite hashed such replies from git: its recorded hash is
    of the file when ingested, so show asks the history again (else says unverified)."""
    from memcite.ledger.memory_files import byte_lines, lines_sha256
    from memcite.ledger.recording import ReplyInput, record_reply
    from memcite.ledger.store import open_store
    from memcite.ledger.sync import sync_codex_home
    from memcite.retention.memory_card import memory_card

    home, builder = env["home"], env["builder"]
    folder = home / "memories"
    memory = folder / "MEMORY.md"
    lines = memory.read_text().split("\n")
    replied = NOW - 30 * 86_400
    if with_history:  # Codex keeps a git baseline of the memory folder
        _git(folder, "init", "-q", when=replied - 100)
        _git(folder, "add", "-A", when=replied - 100)
        _git(folder, "commit", "-qm", "baseline", when=replied - 100)
    cited = lines[1]
    # A consolidation moves the cited line down after the reply was made.
    lines.insert(1, "- a line added later")
    memory.write_text("\n".join(lines))
    if with_history:
        _git(folder, "commit", "-qam", "consolidation", when=replied + 100)
    conn = open_store(env["tmp"] / "memcite.sqlite")
    sync_codex_home(conn, home, now=NOW)
    thread = builder.thread_id(22)
    text = (f"ok\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:2-2|note=[x]\n"
            f"</citation_entries>\n<rollout_ids>\n{thread}\n</rollout_ids>\n"
            "</oai-mem-citation>")
    # Ingested now, long after the reply; as an older memcite did, the hash recorded is of
    # today's line 2.
    record_reply(conn, ReplyInput(text, at=replied, origin="ingest:old.jsonl"),
                 memory_root=folder, now=NOW)
    with conn:
        conn.execute("UPDATE cited_entries SET lines_sha256 = ?",
                     (lines_sha256(byte_lines(memory.read_bytes()), 2, 2),))
    card = memory_card(conn, thread, memory_root=str(folder))
    conn.close()
    entry = card["citations"][0]["entries"][0]
    assert card["citations"][0]["hashed_seconds_after_reply"] == NOW - replied
    if with_history:
        assert entry["basis"].startswith("hash from the memory folder's git history")
        assert entry["outcome"] == "moved" and entry["moved_to"] == [3, 3]
        assert memory.read_text().split("\n")[2] == cited
    else:
        assert entry["outcome"] == "unverified"  # recorded "ok" would claim too much
        assert "no git history" in entry["basis"]
    stats = json.loads(invoke(["stats", "--json", "--as-of", AS_OF]).stdout)
    assert stats["totals"]["replies_hashed_late"] == 1


def test_recording_late_hashes_the_cited_lines_as_history_had_them(env):
    """ingest of an old session: the ledger keeps the hash of what the reply cited (from git),
    so stats' check means "unchanged since cited"; without history, no hash (unverified)."""
    from memcite.ledger.recording import ReplyInput, record_reply
    from memcite.ledger.store import open_store
    from memcite.ledger.sync import sync_codex_home
    from memcite.retention.stats import collect_stats

    home, builder = env["home"], env["builder"]
    folder = home / "memories"
    memory = folder / "MEMORY.md"
    replied = NOW - 30 * 86_400
    _git(folder, "init", "-q", when=replied - 100)
    _git(folder, "add", "-A", when=replied - 100)
    _git(folder, "commit", "-qm", "baseline", when=replied - 100)
    lines = memory.read_text().split("\n")
    lines[1] = "- rewritten after the reply"
    memory.write_text("\n".join(lines))
    _git(folder, "commit", "-qam", "consolidation", when=replied + 100)
    conn = open_store(env["tmp"] / "memcite.sqlite")
    sync_codex_home(conn, home, now=NOW)
    text = ("ok\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:2-2|note=[x]\n"
            "nope.md:1-1|note=[y]\n</citation_entries>\n<rollout_ids>\n"
            f"{builder.thread_id(22)}\n</rollout_ids>\n</oai-mem-citation>")
    record_reply(conn, ReplyInput(text, at=replied, origin="ingest:/s/rollout-old.jsonl"),
                 memory_root=folder, now=NOW)
    record_reply(conn, ReplyInput(text + "\n", at=NOW - 5, origin="ingest:/s/rollout-new.jsonl"),
                 memory_root=folder, now=NOW)
    report = collect_stats(conn, memory_root=folder, as_of=NOW, max_unused_days=30,
                           limit=0).to_dict()
    conn.close()
    outcomes = report["citation_checks"]["outcomes"]
    # The old reply cited the line before it was rewritten: changed since cited. The new
    # one cited it as it is: ok. (From the file now, both would have said ok.)
    assert outcomes["changed"]["entries"] == 1 and outcomes["ok"]["entries"] == 1
    assert outcomes["missing"]["citations"] == 2


def test_recording_late_without_history_keeps_no_hash(env):
    from memcite.ledger.recording import ReplyInput, record_reply
    from memcite.ledger.store import open_store

    folder = env["home"] / "memories"
    conn = open_store(env["tmp"] / "memcite.sqlite")
    text = ("ok\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:2-2|note=[x]\n"
            "</citation_entries>\n<rollout_ids>\n"
            f"{env['builder'].thread_id(22)}\n</rollout_ids>\n</oai-mem-citation>")
    old = "ingest:/s/rollout-old.jsonl"
    record_reply(conn, ReplyInput(text, at=NOW - 86_400, origin=old), memory_root=folder,
                 now=NOW)
    record_reply(conn, ReplyInput(text + "\n", at=NOW - 60, origin=old), memory_root=folder,
                 now=NOW)
    record_reply(conn, ReplyInput(text + "\n\n", at=NOW - 86_400), memory_root=folder,
                 now=NOW)  # `record --at`: the caller's reply, hashed as the file is now
    hashes = [row[0] for row in conn.execute(
        "SELECT lines_sha256 FROM cited_entries ORDER BY reply_id")]
    conn.close()
    assert hashes[0] is None and hashes[1] is not None and hashes[2] is not None
