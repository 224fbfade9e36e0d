"""Asking Codex to forget (memcite.retention.forget): an ad-hoc note or rows deleted from Codex's
table, journaled so that a crash at any step, two prunes at once or a read-only folder never
leave a lie; restore undoes either."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import sqlite3
import threading

import pytest

from memcite.demo.loop import load_sample_builder
from memcite.ledger.adhoc_notes import NOTES_FOLDER, is_adhoc_note_name
from memcite.ledger.codex_home import locate_codex_home
from memcite.ledger.recording import ReplyInput, record_reply
from memcite.ledger.store import open_store
from memcite.ledger.sync import sync_codex_home
from memcite.retention import forget
from memcite.retention.archive import prune_candidates
from memcite.retention.forget import (
    KNOWN_STAGE1_COLUMNS,
    TEMP_SUFFIX,
    ForgetError,
    ForgetRefused,
    ToForget,
    forget_memories,
    list_requests,
    settle_pending,
    undo_requests,
)
from memcite.retention.rules import cutoff
from memcite.retention.stats import collect_stats

NOW = 1_800_000_000
DAY = 86_400
LIMIT_TIME = cutoff(NOW, 30)


class Crash(Exception):
    """Stands for the process dying at a step."""


@pytest.fixture
def sample(tmp_path):
    builder = load_sample_builder()
    home = tmp_path / "codex_home"
    builder.build_codex_home(str(home), now=NOW)
    db = tmp_path / "memcite.sqlite"
    conn = open_store(db)
    sync_codex_home(conn, home, now=NOW)
    yield conn, home, db, builder
    conn.close()


def _chosen(conn, rule="codex", limit=200):
    return [ToForget(c.thread_id, c.last_used, c.reason) for c in prune_candidates(
        conn, as_of=NOW, max_unused_days=30, rule=rule, limit=limit)]


def _forget(conn, home, chosen, way="note", rule="codex", **extra):
    return forget_memories(conn, chosen, locations=locate_codex_home(home), way=way, rule=rule,
                           max_unused_days=30, limit_time=LIMIT_TIME, now=NOW + 5, **extra)


def _tree(folder) -> dict[str, str]:
    found = {}
    for base, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(base, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, folder)] = hashlib.sha256(handle.read()).hexdigest()
    return found


def _codex_rows(home) -> dict[str, tuple]:
    conn = sqlite3.connect(home / "memories_1.sqlite")
    try:
        return {row[0]: row for row in conn.execute(
            f"SELECT {', '.join(KNOWN_STAGE1_COLUMNS)} FROM stage1_outputs")}
    finally:
        conn.close()


def _notes(home) -> list[str]:
    folder = home / "memories" / NOTES_FOLDER
    return sorted(os.listdir(folder)) if folder.is_dir() else []


def _states(conn) -> dict[str, str]:
    return {r["thread_id"]: r["state"] for r in list_requests(conn)}


# --------------------------------------------------------------------------- the note


def test_a_note_asks_codex_and_nothing_of_codex_changes(sample):
    conn, home, _db, builder = sample
    memory_before = _tree(home / "memories")
    rows_before = _codex_rows(home)
    chosen = _chosen(conn)
    result = _forget(conn, home, chosen)
    assert [m["thread_id"] for m in result.asked] == [c.thread_id for c in chosen]
    names = _notes(home)
    assert len(names) == 1 and is_adhoc_note_name(names[0])
    text = (home / "memories" / NOTES_FOLDER / names[0]).read_text()
    for memory in result.asked:
        assert f"thread `{memory['thread_id']}`" in text
        assert memory["label"] in text and memory["reason"] in text
    # Nothing of Codex's moved or changed: only the note was added.
    after = _tree(home / "memories")
    assert {k: v for k, v in after.items() if not k.startswith("extensions")} == memory_before
    assert _codex_rows(home) == rows_before
    assert set(_states(conn).values()) == {"done"}
    assert "still has these memories" in result.codex_still_sees()
    report = collect_stats(conn, memory_root=home / "memories", as_of=NOW, max_unused_days=30,
                           codex_home=os.path.realpath(home), limit=0)
    assert report.totals["asked_to_forget"] == len(chosen)
    assert all(d["asked_to_forget"] for d in report.dead if d["thread_id"] in _states(conn))
    # Asked once: never offered again.
    assert _chosen(conn) == []


def test_a_memory_cited_while_prune_runs_is_not_asked(sample):
    conn, home, _db, builder = sample
    chosen = _chosen(conn, rule="memcite")
    cited = chosen[0].thread_id
    text = (f"ok\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:1-1|note=[x]\n"
            f"</citation_entries>\n<rollout_ids>\n{cited}\n</rollout_ids>\n</oai-mem-citation>")
    record_reply(conn, ReplyInput(text, at=NOW), memory_root=home / "memories", now=NOW)
    result = _forget(conn, home, chosen, rule="memcite")
    assert cited not in [m["thread_id"] for m in result.asked]
    assert [d for d in result.dropped if d["thread_id"] == cited][0]["why"].startswith(
        "no longer unused")
    assert cited not in (home / "memories" / NOTES_FOLDER / _notes(home)[0]).read_text()
    assert cited not in _states(conn)


@pytest.mark.parametrize("step", ["intent_committed", "note_temp_written", "note_linked",
                                  "note_written", "request_done"])
def test_a_crash_at_any_step_is_settled_by_the_next_run(sample, step):
    conn, home, _db, _builder = sample
    chosen = _chosen(conn)

    def crash(at):
        if at == step:
            raise Crash(at)

    with pytest.raises(Crash):
        _forget(conn, home, chosen, checkpoint=crash)
    settled = settle_pending(conn, now=NOW + 9)
    states = set(_states(conn).values())
    notes = _notes(home)
    assert not [n for n in notes if n.endswith(TEMP_SUFFIX)]  # no partial copy left
    if notes:  # the note is there whole: the request stands, and says so
        assert states == {"done"}
        text = (home / "memories" / NOTES_FOLDER / notes[0]).read_text()
        assert all(c.thread_id in text for c in chosen)
    else:  # never written: never claimed
        assert states == {"rolled_back"}
        assert _chosen(conn) == chosen  # offered again
    assert len(settled) == (0 if step == "request_done" else len(chosen))


def test_a_partial_note_left_by_a_crash_is_removed(sample):
    conn, home, _db, _builder = sample
    chosen = _chosen(conn)[:2]
    with pytest.raises(Crash):
        _forget(conn, home, chosen, checkpoint=lambda at: (_ for _ in ()).throw(Crash(at))
                if at == "intent_committed" else None)
    path = list_requests(conn)[0]["note_path"]
    folder, name = os.path.split(path)
    os.makedirs(folder, exist_ok=True)
    partial = os.path.join(folder, f".{name}{TEMP_SUFFIX}")
    with open(partial, "w") as handle:
        handle.write("# Forget 2 unu")  # cut short
    settle_pending(conn, now=NOW + 9)
    assert not os.path.exists(partial) and not os.path.exists(path)
    assert set(_states(conn).values()) == {"rolled_back"}


def test_a_read_only_folder_asks_nothing_and_says_so(sample, monkeypatch):
    conn, home, _db, _builder = sample
    chosen = _chosen(conn)
    real_open = os.open

    def read_only(path, flags, *args, **kwargs):
        if str(path).endswith(TEMP_SUFFIX):
            raise OSError(errno.EROFS, "Read-only file system")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(forget.os, "open", read_only)
    with pytest.raises(ForgetError, match="nothing was asked"):
        _forget(conn, home, chosen)
    assert _notes(home) == []
    assert set(_states(conn).values()) == {"rolled_back"}
    report = collect_stats(conn, memory_root=home / "memories", as_of=NOW, max_unused_days=30)
    assert report.totals["asked_to_forget"] == 0


def test_two_prunes_at_once_ask_for_each_memory_once(sample):
    conn, home, db, _builder = sample
    chosen = _chosen(conn)
    results, errors = [], []

    def run():
        own = open_store(db)
        try:
            results.append(_forget(own, home, chosen))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            own.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    asked = [m["thread_id"] for r in results for m in r.asked]
    assert sorted(asked) == sorted(c.thread_id for c in chosen)  # each once, none lost
    assert len(_notes(home)) == sum(1 for r in results if r.asked)
    assert list(_states(conn).values()).count("done") == len(chosen)


def test_restore_withdraws_and_retires_an_untouched_note(sample):
    conn, home, _db, _builder = sample
    result = _forget(conn, home, _chosen(conn))
    note = result.note_path
    ids = [r["id"] for r in list_requests(conn)]
    undone = undo_requests(conn, ids[:1], now=NOW + 20)
    assert [u.done for u in undone] == [True]
    assert open(note).read().startswith("# Forget")  # other requests stand: note kept
    undone = undo_requests(conn, ids[1:], now=NOW + 30)
    assert all(u.done for u in undone)
    assert open(note).read().startswith("# Nothing to drop")  # all withdrawn: asks nothing
    withdrawals = [n for n in _notes(home) if "keep" in n]
    assert len(withdrawals) == 2 and all(is_adhoc_note_name(n) for n in withdrawals)
    assert set(_states(conn).values()) == {"withdrawn"}
    assert len(_chosen(conn)) == len(ids)  # offered again


def test_sync_sees_a_forgotten_memory_gone(sample):
    conn, home, _db, _builder = sample
    chosen = _chosen(conn)[:1]
    _forget(conn, home, chosen)
    gone = chosen[0].thread_id
    # Codex's own pruning and consolidation remove it: its row, summary and section.
    codex = sqlite3.connect(home / "memories_1.sqlite")
    with codex:
        codex.execute("DELETE FROM stage1_outputs WHERE thread_id = ?", (gone,))
    codex.close()
    for path in (home / "memories" / "rollout_summaries").iterdir():
        if gone in path.read_text():
            path.unlink()
    raw = home / "memories" / "raw_memories.md"
    raw.write_text(raw.read_text().replace(gone, "0" * 8))
    report = sync_codex_home(conn, home, now=NOW + DAY)
    assert report.forget_requests_seen_gone == 1
    assert _states(conn) == {gone: "forgotten"}
    stats = collect_stats(conn, memory_root=home / "memories", as_of=NOW, max_unused_days=30)
    assert stats.totals["asked_to_forget"] == 0


# --------------------------------------------------------------------------- Codex's table


def test_rows_deleted_as_codex_prunes_saved_and_put_back(sample):
    conn, home, _db, _builder = sample
    before = _codex_rows(home)
    chosen = _chosen(conn)
    result = _forget(conn, home, chosen, way="codex_db", include_recent=True)
    asked = {m["thread_id"] for m in result.asked}
    assert asked == {c.thread_id for c in chosen}
    after = _codex_rows(home)
    assert set(after) == set(before) - asked
    assert all(before[t] == after[t] for t in after)  # nothing else touched
    assert _notes(home) == []
    assert "no longer has these rows" in result.codex_still_sees()
    undone = undo_requests(conn, [r["id"] for r in list_requests(conn)], now=NOW + 50)
    assert all(u.done for u in undone)
    assert _codex_rows(home) == before  # every byte of every row back
    assert set(_states(conn).values()) == {"restored"}


def test_recent_threads_and_rows_used_since_are_not_deleted(sample):
    conn, home, _db, builder = sample
    chosen = _chosen(conn)
    # Codex cites one of them after memcite's sync: its own counters say it is in use.
    used = chosen[0].thread_id
    codex = sqlite3.connect(home / "memories_1.sqlite")
    with codex:
        codex.execute("UPDATE stage1_outputs SET last_usage = ? WHERE thread_id = ?",
                      (NOW, used))
    codex.close()
    result = _forget(conn, home, chosen, way="codex_db", max_rollout_age_days=40)
    why = {d["thread_id"]: d["why"] for d in result.dropped}
    assert why[used].startswith("used in Codex since")
    recent = [c.thread_id for c in chosen
              if _codex_rows(home).get(c.thread_id) and
              _codex_rows(home)[c.thread_id][1] >= NOW + 5 - 40 * DAY]
    assert recent, "the sample has threads updated within 40 days"
    for thread in recent:
        assert "max_rollout_age_days" in why[thread] and thread in _codex_rows(home)
    assert used in _codex_rows(home)


def test_an_unknown_table_shape_is_refused_and_nothing_written(sample):
    conn, home, _db, _builder = sample
    codex = sqlite3.connect(home / "memories_1.sqlite")
    with codex:
        codex.execute("ALTER TABLE stage1_outputs ADD COLUMN rollout_summary_filename TEXT")
    codex.close()
    before = (home / "memories_1.sqlite").read_bytes()
    with pytest.raises(ForgetRefused, match="rollout_summary_filename"):
        _forget(conn, home, _chosen(conn), way="codex_db")
    assert (home / "memories_1.sqlite").read_bytes() == before
    assert list_requests(conn) == []


@pytest.mark.parametrize(("step", "state"), [("intent_committed", "rolled_back"),
                                             ("rows_deleted", "rolled_back"),
                                             ("codex_committed", "done")])
def test_a_crash_while_deleting_rows_is_settled_from_codex_table(sample, step, state):
    conn, home, _db, _builder = sample
    before = _codex_rows(home)
    chosen = _chosen(conn)

    def crash(at):
        if at == step:
            raise Crash(at)

    with pytest.raises(Crash):
        _forget(conn, home, chosen, way="codex_db", include_recent=True, checkpoint=crash)
    settle_pending(conn, now=NOW + 9)
    assert set(_states(conn).values()) == {state}
    rows = _codex_rows(home)
    if state == "done":
        assert not set(rows) & {c.thread_id for c in chosen}
    else:
        assert rows == before


@pytest.mark.parametrize("linked", ["extensions", "extensions/ad_hoc", "extensions/ad_hoc/notes"])
def test_a_link_planted_in_the_notes_folder_is_refused_and_nothing_written_outside(
        sample, tmp_path, linked):
    """Agents write in the memory folder: a link there is never followed out of it."""
    from memcite.durable_files import LinkRefused

    conn, home, _db, _builder = sample
    outside = tmp_path / "outside"
    outside.mkdir()
    planted = home / "memories" / linked
    if planted.exists():
        shutil.rmtree(planted)
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.symlink_to(outside)
    chosen = _chosen(conn)
    with pytest.raises(LinkRefused) as caught:
        _forget(conn, home, chosen)
    assert caught.value.exit_code == 3
    assert list(outside.rglob("*")) == []
    assert set(_states(conn).values()) == {"rolled_back"}
