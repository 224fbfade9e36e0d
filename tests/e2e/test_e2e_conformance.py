"""The real Codex over memcite's conformance corpus: every reply case played as the mock
model's answer in a real ``codex exec`` turn; what Codex shows (the visible text and the
citation it keeps in the session file, the usage counts it raises) equals the case's
expected reading. Several Codex homes run side by side, one turn a case."""

from __future__ import annotations

import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from codex_conformance_adapter import CodexReader
from mock_model import MockModel

from conftest import CodexWorld, _consolidation_answer
from memcite.conformance.corpus import expected_reading, load_cases, reply_case
from memcite.conformance.fuzz import generate_replies

WORKERS = 6
CASES = [case for case in load_cases() if case["kind"] == "reply"]
FUZZED = 120  # generated replies played through Codex (seed 0)


def codex_view(expected: dict) -> dict:
    """What of a reading Codex shows: the visible text, the citation, the counts (no order)."""
    return {"visible": expected["visible"], "citation": expected["citation"],
            "thread_ids": sorted(expected["thread_ids"])}


def _play(codex: str, root: Path, cases: list[dict]) -> list[tuple[dict, dict]]:
    with MockModel(responder=_consolidation_answer) as model:
        reader = CodexReader(CodexWorld(root, codex, model))
        return [(case, reader.read(case["reply"])) for case in cases]


def play_corpus(codex: str, cases: list[dict]) -> list[tuple[dict, dict]]:
    shares = [cases[index::WORKERS] for index in range(WORKERS)]
    with tempfile.TemporaryDirectory() as top, ThreadPoolExecutor(WORKERS) as pool:
        roots = [Path(top) / f"world{index}" for index in range(WORKERS)]
        for root in roots:
            root.mkdir()
        done = list(pool.map(lambda pair: _play(codex, *pair), zip(roots, shares, strict=True)))
    return [pair for share in done for pair in share]


def disagreements(played: list[tuple[dict, dict]]) -> list[str]:
    found = []
    for case, got in played:
        if case.get("codex_unobservable"):
            continue
        want = codex_view(case["expected"])
        wrong = [field for field in want if want[field] != got.get(field)]
        if wrong:
            found.append(f"{case['name']}: " + "; ".join(
                f"{field}: memcite {want[field]!r}, Codex {got.get(field)!r}" for field in wrong))
    return found


def fuzzed_cases(seed: int, count: int) -> list[dict]:
    replies = generate_replies(seed, load_cases())
    return [reply_case(f"fuzz/{seed}-{index}", next(replies), "stage-a", "fuzz", "generated")
            for index in range(count)]


def test_a_wrong_expectation_is_seen():
    case = CASES[0]
    got = codex_view(case["expected"])
    assert disagreements([(case, got)]) == []
    assert disagreements([(case, {**got, "visible": got["visible"] + "x"})])[0].startswith(case["name"])


def test_codex_reads_every_corpus_reply_as_memcite_expects(codex):
    played = play_corpus(codex, CASES)
    assert len(played) == len(CASES) > 150
    assert all(isinstance(got["visible"], str) for _, got in played)  # Codex's message was found
    observed = [case for case, _ in played if not case.get("codex_unobservable")]
    assert len(observed) >= len(CASES) - 10  # the few Codex cannot show are marked with why
    assert disagreements(played) == []


def test_codex_reads_generated_replies_as_memcite_does(codex):
    """Differential fuzzing of the real Codex: the fuzzer's first replies for seed 0."""
    cases = fuzzed_cases(0, FUZZED)
    assert all(case["expected"] == expected_reading(case["reply"]) for case in cases)
    played = play_corpus(codex, cases)
    assert len(played) == FUZZED
    assert disagreements(played) == []
