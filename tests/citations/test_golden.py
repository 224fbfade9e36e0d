"""Golden files: each reply in corpus/replies/ beside its expected reading (NAME.expected.json).

Set MEMCITE_UPDATE_GOLDEN=1 to rewrite the expected files, then review the diff.
"""

import json
import os
from pathlib import Path

import pytest

from memcite import parse_reply
from plain_reader import plain_read

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "replies"
REPLIES = sorted(CORPUS.glob("*.txt"))


def test_the_corpus_is_large_enough():
    assert len(REPLIES) >= 30


@pytest.mark.parametrize("path", REPLIES, ids=[p.stem for p in REPLIES])
def test_golden_reading(path):
    text = path.read_bytes().decode("utf-8")
    got = parse_reply(text).to_dict()
    expected_path = path.with_suffix(".expected.json")
    if os.environ.get("MEMCITE_UPDATE_GOLDEN"):
        expected_path.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    expected = json.loads(expected_path.read_text(encoding="utf-8"))
    assert got == expected


@pytest.mark.parametrize("path", REPLIES, ids=[p.stem for p in REPLIES])
def test_golden_agrees_with_plain_reading(path):
    text = path.read_bytes().decode("utf-8")
    expected = json.loads(path.with_suffix(".expected.json").read_text(encoding="utf-8"))
    plain = plain_read(text)
    assert expected["visible"] == plain["visible"]
    assert expected["thread_ids"] == plain["thread_ids"]
    if plain["citation"] is None:
        assert expected["citation"] is None
    else:
        assert [tuple(e.values()) for e in expected["citation"]["entries"]] == plain["citation"]["entries"]
        assert expected["citation"]["rollout_ids"] == plain["citation"]["rollout_ids"]
