"""``quick_check`` runs once per change of the ledger, not once per batch command.

A clean check is noted beside the database (``<db>-checked``: the file's device, inode,
size and times); a batch command that finds the file as noted skips the check, and the
close of its connection notes the file again after its own writes. Any other change of
the file (a ``record`` without the check, a damaged page written from outside) moves its
times, and the next batch command checks the whole file again.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from memcite.ledger import store
from memcite.ledger.store import CHECKED_SUFFIX, DamagedStoreError, open_store, transaction


@pytest.fixture
def checks(monkeypatch) -> list[str]:
    """The paths ``quick_check`` ran on (through the read-only connection of a writer)."""
    ran: list[str] = []
    real = store.check_integrity

    def counting(conn, path="the database"):
        ran.append(path)
        return real(conn, path)

    monkeypatch.setattr(store, "check_integrity", counting)
    return ran


def _ledger(tmp_path: Path, rows: int = 2000) -> Path:
    path = tmp_path / "memcite.sqlite"
    conn = open_store(path)
    with transaction(conn):
        conn.executemany(
            "INSERT INTO memories (thread_id, source, first_synced_at, synced_at)"
            " VALUES (?, 'stage1_outputs', 1, 1)",
            [(f"019c0000-0000-7000-8000-{n:012x}",) for n in range(rows)])
    conn.close()
    return path


def _damage(path: Path) -> None:
    """Zero a page in the middle that only ``quick_check`` notices (not the header nor the
    schema), as ``tests/ledger/test_quick_check.py`` does."""
    data = path.read_bytes()
    page = int.from_bytes(data[16:18], "big")
    pages = len(data) // page
    for number in sorted(range(2, pages), key=lambda n: abs(n - pages // 2)):
        damaged = bytearray(data)
        damaged[page * (number - 1): page * number] = bytes(page)
        path.write_bytes(bytes(damaged))
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            schema_ok = bool(conn.execute("SELECT count(*) FROM sqlite_master").fetchone())
            found = conn.execute("PRAGMA quick_check").fetchall() != [("ok",)]
        except sqlite3.DatabaseError:
            schema_ok, found = False, True
        finally:
            conn.close()
        if schema_ok and found:
            return
    raise AssertionError("no page whose damage only quick_check sees")


def test_a_second_batch_open_of_an_unchanged_ledger_skips_the_check(tmp_path, checks):
    path = _ledger(tmp_path)
    open_store(path, quick_check=True).close()
    assert checks == [str(path)]
    assert (tmp_path / ("memcite.sqlite" + CHECKED_SUFFIX)).is_file()
    assert oct(os.stat(tmp_path / ("memcite.sqlite" + CHECKED_SUFFIX)).st_mode & 0o777) == "0o600"
    open_store(path, quick_check=True).close()
    open_store(path, readonly=True, quick_check=True).close()
    assert checks == [str(path)]  # once for the three


def test_a_ledger_damaged_after_a_clean_check_is_still_refused(tmp_path, checks):
    path = _ledger(tmp_path)
    open_store(path, quick_check=True).close()
    _damage(path)
    before = path.read_bytes()
    with pytest.raises(DamagedStoreError, match="quick_check"):
        open_store(path, quick_check=True)
    assert path.read_bytes() == before
    with pytest.raises(DamagedStoreError, match="quick_check"):
        open_store(path, readonly=True, quick_check=True)
    assert len(checks) == 3  # the clean one, then each refusal


def test_damage_written_back_with_the_old_modification_time_is_found(tmp_path, checks):
    """``os.utime`` can put the modification time back; the change time it cannot."""
    path = _ledger(tmp_path)
    open_store(path, quick_check=True).close()
    info = os.stat(path)
    _damage(path)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    with pytest.raises(DamagedStoreError, match="quick_check"):
        open_store(path, quick_check=True)


def test_a_write_without_the_check_means_the_next_batch_command_checks(tmp_path, checks):
    path = _ledger(tmp_path)
    open_store(path, quick_check=True).close()
    conn = open_store(path)  # as ``record`` opens it
    with transaction(conn):
        conn.execute("UPDATE memories SET usage_count = 1 WHERE rowid = 1")
    conn.close()
    open_store(path, quick_check=True).close()
    assert len(checks) == 2


def test_a_checked_writer_notes_its_own_writes_when_it_closes(tmp_path, checks):
    path = _ledger(tmp_path)
    conn = open_store(path, quick_check=True)
    with transaction(conn):
        conn.execute("UPDATE memories SET usage_count = 2 WHERE rowid = 1")
    conn.close()
    open_store(path, quick_check=True).close()
    assert len(checks) == 1


def test_a_writer_closed_inside_a_transaction_notes_nothing(tmp_path, checks):
    path = _ledger(tmp_path)
    conn = open_store(path, quick_check=True)
    with transaction(conn):
        conn.execute("UPDATE memories SET usage_count = 3 WHERE rowid = 1")
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE memories SET usage_count = 4 WHERE rowid = 1")
    conn.close()  # the last one rolled back by SQLite; the first one not noted
    open_store(path, quick_check=True).close()
    assert len(checks) == 2


def test_a_wrong_or_foreign_note_means_a_check(tmp_path, checks):
    path = _ledger(tmp_path)
    note = tmp_path / ("memcite.sqlite" + CHECKED_SUFFIX)
    note.write_text("memcite-quick-check 1 0 0 0 0 0\n")
    open_store(path, quick_check=True).close()
    assert len(checks) == 1
    note.write_bytes(b"\xff" * 100_000)  # too large, not UTF-8: no trust, no crash
    open_store(path, quick_check=True).close()
    assert len(checks) == 2


def test_a_link_at_the_note_is_neither_trusted_nor_written_through(tmp_path, checks):
    path = _ledger(tmp_path)
    open_store(path, quick_check=True).close()
    note = tmp_path / ("memcite.sqlite" + CHECKED_SUFFIX)
    target = tmp_path / "elsewhere"
    target.write_bytes(note.read_bytes())
    note.unlink()
    note.symlink_to(target)
    kept = target.read_bytes()
    open_store(path, quick_check=True).close()
    assert len(checks) == 1 + 1  # the link's content is not trusted
    assert note.is_symlink() and target.read_bytes() == kept


def test_a_ledger_with_frames_in_its_wal_is_always_checked(tmp_path, checks):
    path = _ledger(tmp_path)
    open_store(path, quick_check=True).close()
    writer = open_store(path)  # another process at work: its frames stay in the -wal
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    with transaction(writer):
        writer.execute("UPDATE memories SET usage_count = 4 WHERE rowid = 1")
    try:
        open_store(path, quick_check=True).close()
        open_store(path, quick_check=True).close()
    finally:
        writer.close()
    assert len(checks) == 3


def test_a_read_only_open_trusts_the_note_but_writes_none(tmp_path, checks):
    path = _ledger(tmp_path)
    note = tmp_path / ("memcite.sqlite" + CHECKED_SUFFIX)
    open_store(path, readonly=True, quick_check=True).close()
    assert not note.exists()  # `rebuild --check` creates nothing
    open_store(path, readonly=True, quick_check=True).close()
    assert len(checks) == 2
    open_store(path, quick_check=True).close()  # a writer notes it
    open_store(path, readonly=True, quick_check=True).close()
    assert len(checks) == 3
