"""Where the conformance corpus comes from: the golden replies and the test tables, with the
expectations written by hand beside each (src/memcite/conformance/cases.jsonl is its output).

    python tests/conformance_sources.py        # rewrite the shipped corpus, then review the diff

Each source item is (case, hand), ``hand`` being what the golden file or the table row says
by itself of the case: a dict of compared fields (``visible``, ``entries``, ``rollout_ids``,
``thread_ids``, ``entry_paths``, ``text``) and their values. tests/test_conformance_corpus.py
checks that the corpus is this module's output, that memcite still reads each case so, and
that every hand-written expectation holds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from memcite.conformance.corpus import (  # noqa: E402
    CORPUS_FILE,
    RULES,
    corpus_text,
    load_cases,
    reply_case,
    truncation_case,
)

O, C = "<oai-mem-citation>", "</oai-mem-citation>"  # noqa: E741
GOLDEN = ROOT / "corpus" / "replies"
# Cases `memcite conformance fuzz --out` wrote (against the toys of tests/conformance_toys.py),
# each with what its reply says by hand.
FUZZED = ROOT / "corpus" / "conformance_fuzz"
FUZZ_HAND = {
    # U+001F is not White_Space: Rust's trim keeps it, Python's str.strip() does not
    "fuzz/1-117": {"rollout_ids": ["\x1f"], "thread_ids": [], "visible": ""},
    # U+2028 does not end a line of a section (Python's str.splitlines() splits at it)
    "fuzz/port-0-13": {"rollout_ids": ["x\u2028ut"], "entries": [], "visible": ""},
    # U+001C after the note is not trimmed: the line does not end with "]"
    "fuzz/port-0-15": {"entries": [], "rollout_ids": [], "visible": ""},
    # 99999999999 is above u32: no entry (Python's int() takes it)
    "fuzz/port-0-28": {"entries": [], "rollout_ids": [], "visible": ""},
}

# What Codex lets a test see of a reply is its visible text and the usage counts it raises;
# a case none of whose expectations shows there is marked (tests/e2e/test_e2e_conformance.py).
UNOBSERVABLE = {}


def _golden_rule(stem: str) -> str:
    for prefix, rule in (("entry_", "entry-rule"), ("entries_", "entry-rule"),
                         ("stage_a_", "stage-a"), ("stage_b_", "stage-b"), ("ids_", "ids")):
        if stem.startswith(prefix):
            return rule
    return "stage-a"


def golden_sources():
    for path in sorted(GOLDEN.glob("*.txt")):
        reply = path.read_bytes().decode("utf-8")
        expected = json.loads(path.with_suffix(".expected.json").read_text(encoding="utf-8"))
        citation = expected["citation"] or {"entries": [], "rollout_ids": []}
        hand = {"visible": expected["visible"], "entries": citation["entries"],
                "rollout_ids": citation["rollout_ids"], "thread_ids": expected["thread_ids"]}
        yield reply_case(f"golden/{path.stem}", reply, _golden_rule(path.stem), "golden",
                         f"corpus/replies/{path.name}"), hand


def _entries(rows):
    return [{"path": p, "line_start": s, "line_end": e, "note": n} for p, s, e, n in rows]


def _param_rows(function) -> list:
    """The rows of a test's ``@pytest.mark.parametrize`` table."""
    (mark,) = [mark for mark in function.pytestmark if mark.name == "parametrize"]
    return list(mark.args[1])


def spec_table_sources():
    from base import test_spec_tables as spec

    origin = "tests/base/test_spec_tables.py"
    for number, (line, expected) in enumerate(spec.ENTRY_TABLE, 1):
        reply = f"{O}\n<citation_entries>\n{line}\n</citation_entries>\n{C}"
        yield reply_case(f"table/entry-rule/{number:02d}", reply, "entry-rule", "table",
                         f"{origin} ENTRY_TABLE row {number}"), \
            {"entries": _entries([] if expected is None else [expected])}
    for number, (text, visible) in enumerate(spec.STAGE_A, 1):
        yield reply_case(f"table/stage-a/{number:02d}", text, "stage-a", "table",
                         f"{origin} STAGE_A row {number}"), {"visible": visible}
    for number, (body, ids) in enumerate(spec.STAGE_B_IDS, 1):
        yield reply_case(f"table/stage-b-ids/{number:02d}", f"{O}{body}{C}", "stage-b", "table",
                         f"{origin} STAGE_B_IDS row {number}"), {"rollout_ids": ids or []}
    for number, (body, paths) in enumerate(spec.STAGE_B_ENTRIES, 1):
        yield reply_case(f"table/stage-b-entries/{number:02d}", f"{O}{body}{C}", "stage-b",
                         "table", f"{origin} STAGE_B_ENTRIES row {number}"), {"entry_paths": paths}
    for number, (rollout_id, counted) in enumerate(spec.ID_TABLE, 1):
        reply = f"{O}<rollout_ids>\n{rollout_id}\n</rollout_ids>{C}"
        yield reply_case(f"table/ids/{number:02d}", reply, "ids", "table",
                         f"{origin} ID_TABLE row {number}"), \
            {"rollout_ids": [rollout_id], "thread_ids": [] if counted is None else [counted]}
    for number, char in enumerate(_param_rows(spec.test_rust_whitespace_is_trimmed), 1):
        reply = f"{O}\n<citation_entries>\n{char}a.md:1-2|note=[x]{char}\n</citation_entries>\n{C}"
        yield reply_case(f"table/trim/whitespace-{number:02d}", reply, "trim", "table",
                         f"{origin} test_rust_whitespace_is_trimmed U+{ord(char):04X}"), \
            {"entries": _entries([("a.md", 1, 2, "x")])}
    for number, char in enumerate(_param_rows(spec.test_not_rust_whitespace_is_kept), 1):
        where = f"{origin} test_not_rust_whitespace_is_kept U+{ord(char):04X}"
        reply = f"{O}\n<citation_entries>\na.md:1-2|note=[x]{char}\n</citation_entries>\n{C}"
        yield reply_case(f"table/trim/not-whitespace-{number:02d}-after", reply, "trim", "table",
                         where), {"entries": []}
        reply = f"{O}\n<citation_entries>\n{char}a.md:1-2|note=[x]\n</citation_entries>\n{C}"
        yield reply_case(f"table/trim/not-whitespace-{number:02d}-before", reply, "trim", "table",
                         where), {"entries": _entries([(f"{char}a.md", 1, 2, "x")])}


def truncation_sources():
    from readpath import test_truncation as truncation

    origin = "tests/readpath/test_truncation.py"
    rows = [("SPEC_EXAMPLES", row) for row in truncation.SPEC_EXAMPLES]
    rows += [("test_approx_edge_cases", row) for row in _param_rows(truncation.test_approx_edge_cases)]
    for number, (table, (text, budget, expected)) in enumerate(rows, 1):
        yield truncation_case(f"table/truncation/{number:02d}", text, budget, "table",
                              f"{origin} {table}"), {"text": expected}


def fuzz_sources():
    rule_keys = {link: key for key, link in RULES.items()}
    for path in sorted(FUZZED.glob("*.jsonl")):
        for found in load_cases(str(path)):
            yield reply_case(found["name"], found["reply"], rule_keys[found["rule"]], "fuzz",
                             found["origin"]), FUZZ_HAND.get(found["name"], {})


def sources():
    """Every (case, hand-written expectation), in the corpus's order."""
    items = [*golden_sources(), *spec_table_sources(), *truncation_sources(), *fuzz_sources()]
    for case, _ in items:
        reason = UNOBSERVABLE.get(case["name"])
        if reason:
            case["codex_unobservable"] = reason
    return items


def cases() -> list[dict]:
    return [case for case, _ in sources()]


def main() -> None:
    text = corpus_text(cases())
    Path(CORPUS_FILE).write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {text.count(chr(10))} cases to {CORPUS_FILE}")


if __name__ == "__main__":
    main()
