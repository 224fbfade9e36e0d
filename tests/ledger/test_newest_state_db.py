"""Codex's newest thread database is the highest ``state_N.sqlite``, by number."""

from memcite.ledger.codex_home import newest_state_db


def test_the_highest_number_wins_not_the_last_name(tmp_path):
    for name in ("state_5.sqlite", "state_12.sqlite", "state_9.sqlite", "state_x.sqlite",
                 "state_13.sqlite-wal", "logs_20.sqlite"):
        (tmp_path / name).write_bytes(b"")
    assert newest_state_db(tmp_path) == str(tmp_path / "state_12.sqlite")


def test_none_without_one_and_a_glob_character_in_the_folder_is_literal(tmp_path):
    assert newest_state_db(tmp_path) is None
    odd = tmp_path / "a[b]*"
    odd.mkdir()
    (odd / "state_1.sqlite").write_bytes(b"")
    (tmp_path / "ab").mkdir()
    (tmp_path / "ab" / "state_7.sqlite").write_bytes(b"")
    assert newest_state_db(odd) == str(odd / "state_1.sqlite")
