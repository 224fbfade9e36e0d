"""The checks of memcite.lint: tables of memory files and the findings they give, supersession shapes,
Codex's folder formats, and properties of the ad-hoc note name."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hang_guard import no_hang
from memcite.ledger.adhoc_notes import adhoc_note_name
from memcite.lint.entry_checks import check_entry_files
from memcite.lint.findings import CODES
from memcite.lint.folder_checks import (
    adhoc_name_problem,
    check_memory_summary,
    check_pointers,
    check_rollout_summary,
    find_pointers,
    summary_stem,
)
from memcite.lint.run import collect_files, lint_paths

PROVENANCE = "  Source: s1\n  Evidence: e1\n  Confidence: HIGH\n"


def codes(text, path="MEMORY.md"):
    return [(f.code, f.line) for f in check_entry_files([(path, text)])]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("- [CORE] fine\n" + PROVENANCE, []),
        ("- [CROE] x\n", [("tier-unknown", 1)]),
        ("- [core] x\n", [("tier-unknown", 1)]),
        ("[IMPORTANT] x\n", [("tier-unknown", 1)]),
        ("- [WIP] x\n- [TODO] y\n", []),  # bracket words that look like no tier are left alone
        ("- x\n  Tier: TOP\n", [("tier-unknown", 2)]),
        ("- [SEC] x\n  Tier: IRR\n", [("tier-conflict", 2)]),
        ("- [SEC] x\n  Tier: SEC\n", []),
        ("- [IMP] x\n", [("provenance-missing", 1)]),
        ("- [IMP] x\n  Source: s\n  Evidence: e\n", [("provenance-missing", 1)]),
        ("- [CORE] x\n  Source: s\n  Evidence: e\n  Confidence: sure\n", [("confidence-invalid", 4)]),
        ("- [CORE] x\n  Source:\n  Evidence: e\n  Confidence: LOW\n", [("provenance-missing", 1)]),
        ("- [SEC] x\n- [IRR] y\n- z\n", []),  # provenance is asked of CORE and IMP only
        ("- x\n  Tier: IMP\n", [("provenance-missing", 1)]),
    ],
)
def test_tier_and_provenance_checks(text, expected):
    assert codes(text) == expected


def test_core_limit_warns_near_it_and_fails_past_it():
    def core(n):
        return "".join(f"- [CORE] rule {i}\n{PROVENANCE}" for i in range(n))

    assert codes(core(71)) == []
    assert codes(core(72)) == [("tier-core-near-limit", 71 * 4 + 1)]
    assert codes(core(80)) == [("tier-core-near-limit", 71 * 4 + 1)]
    assert codes(core(81)) == [("tier-core-near-limit", 71 * 4 + 1), ("tier-core-limit", 80 * 4 + 1)]


def _irr(title, *targets):
    return f"- [IRR] {title}\n" + "".join(f"  superseded_by: {t}\n" for t in targets)


# name, text, expected (code, line) findings
SUPERSESSION_SHAPES = [
    ("chain", _irr("Decision: Use REST", "Decision: Use gRPC") + _irr("Decision: Use gRPC", "Gateway")
     + "- Gateway — gRPC and a REST gateway\n", []),
    ("chain by id", "- `a1b2` Use REST\n  Tier: IRR\n  superseded_by: c3d4\n- `c3d4` Use gRPC\n", []),
    ("chain by id with #", _irr("Old", "#new1") + "- New <!-- id: new1 -->\n", []),
    ("chain across a heading", "## A\n" + _irr("Old", "New") + "## B\n- New\n", []),
    ("merge (two into one)", _irr("A", "C") + _irr("B", "C") + "- C\n", []),
    ("loop of two", _irr("A", "B") + _irr("B", "A"), [("supersession-loop", 2)]),
    ("loop of three", _irr("A", "B") + _irr("B", "C") + _irr("C", "A"), [("supersession-loop", 2)]),
    ("self loop", _irr("A", "A"), [("supersession-loop", 2)]),
    ("chain into a loop", _irr("Z", "A") + _irr("A", "B") + _irr("B", "A"), [("supersession-loop", 4)]),
    ("fork", _irr("A", "B", "C") + "- B\n- C\n", [("superseded-twice", 3)]),
    ("fork by the same target twice", _irr("A", "B", "B") + "- B\n", []),
    ("dangling", _irr("A", "Nothing like it"), [("supersession-dangling", 2)]),
    ("empty value", _irr("A", ""), [("supersession-dangling", 2)]),
    ("not IRR", "- [IMP] A\n" + "  superseded_by: B\n" + PROVENANCE + "- B\n", [("superseded-not-irr", 1)]),
    ("no tier", "- A\n  superseded_by: B\n- B\n", [("superseded-not-irr", 1)]),
]


@pytest.mark.parametrize("name, text, expected", SUPERSESSION_SHAPES, ids=[s[0] for s in SUPERSESSION_SHAPES])
def test_supersession_shapes(name, text, expected):
    assert codes(text) == expected


def test_supersession_resolves_in_another_file():
    files = [("a.md", _irr("Old", "New")), ("b.md", "- New\n")]
    assert check_entry_files(files) == []
    assert [f.code for f in check_entry_files(files[:1])] == ["supersession-dangling"]


def test_a_loop_is_reported_once_with_its_chain():
    (finding,) = check_entry_files([("m.md", _irr("A", "B") + _irr("B", "C") + _irr("C", "A"))])
    assert finding.message == "superseded_by: chain loops: 'A' → 'B' → 'C' → 'A'"
    assert (finding.line, finding.column) == (2, 3)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("- Decision: Use WAL\n- Decision: use  WAL.\n", [("duplicate-decision", 2)]),
        ("- [IRR] Decision: Use WAL\n  superseded_by: wal2\n- Decision: Use WAL {#wal2}\n", []),
        ("## Durable decisions\n- Use WAL — fast\n- Use WAL — it is fast\n", [("duplicate-decision", 3)]),
        ("## Current state\n- Use WAL — fast\n- Use WAL — it is fast\n", []),  # not decisions
        ("- Decision: A\n- Decision: B\n", []),
        ("- Decision: A\n- Decision: A\n- Decision: A\n", [("duplicate-decision", 2), ("duplicate-decision", 3)]),
    ],
)
def test_duplicate_decisions(text, expected):
    assert codes(text) == expected


def test_duplicates_in_two_files_are_not_compared():
    assert check_entry_files([("a.md", "- Decision: A\n"), ("b.md", "- Decision: A\n")]) == []


def test_every_code_has_a_known_severity():
    assert {severity for severity, _ in CODES.values()} == {"error", "warning"}
    assert all(code == code.lower() and " " not in code for code in CODES)


# --------------------------------------------------------------------------- Codex's folder


@pytest.mark.parametrize(
    "text, ok",
    [("v1\n## User Profile\n", True), ("v1", True), ("v1\r\nx", True), ("", False), ("v1 \n", False),
     ("V1\n", False), ("\nv1\n", False), ("v2\n", False), ("# Memory\nv1\n", False)],
)
def test_memory_summary_first_line(text, ok):
    assert (check_memory_summary("s.md", text) == []) == ok


@pytest.mark.parametrize(
    "name, ok",
    [
        ("2026-01-02T03-04-05-x.md", True),
        ("2026-01-02T03-04-05-retire-old-deploy-notes.md", True),
        ("2026-01-02T03-04-05-" + "a" * 80 + ".md", True),
        ("2026-01-02T03-04-05-" + "a" * 81 + ".md", False),
        ("2026-01-02T03-04-05-.md", False),
        ("2026-01-02T03-04-05-Upper.md", False),
        ("2026-01-02T03-04-05-under_score.md", False),
        ("2026-01-02T03-04-05-x.txt", False),
        ("2026-01-02 03-04-05-x.md", False),
        ("2026-01-02T03:04:05-x.md", False),
        ("26-01-02T03-04-05-x.md", False),
        ("notes.md", False),
        ("2026-01-02T03-04-05-é.md", False),
    ],
)
def test_adhoc_note_names(name, ok):
    assert (adhoc_name_problem(name) is None) == ok


@given(st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(9999, 12, 30),
                    timezones=st.sampled_from([None, UTC, timezone(timedelta(hours=-7))])),
       st.text(max_size=200))
def test_the_adhoc_note_name_always_passes_codex_rule(now, slug):
    name = adhoc_note_name(now, slug)
    assert adhoc_name_problem(name) is None, name


def test_adhoc_note_name_is_in_utc_and_keeps_the_words():
    now = datetime(2026, 3, 1, 12, 0, 0, tzinfo=timezone(timedelta(hours=2)))
    assert adhoc_note_name(now, "Retire [IRR] entries!") == "2026-03-01T10-00-00-retire-irr-entries.md"
    assert adhoc_note_name(now, "***") == "2026-03-01T10-00-00-note.md"


def test_summary_stem_follows_codex():
    assert summary_stem("0194f5a6-89ab-7cde-8123-456789abcdef") == "2025-02-11T15-35-19-jqmb"
    assert summary_stem("0194f5a6-89ab-4cde-8123-456789abcdef") is None  # not a UUIDv7


GOOD_HEADER = ("thread_id: 0194f5a6-89ab-7cde-8123-456789abcdef\nupdated_at: 2026-01-02T03:04:05Z\n"
               "rollout_path: /r.jsonl\ncwd: /w\n")
GOOD_NAME = "2025-02-11T15-35-19-jqmb-slug.md"


@pytest.mark.parametrize(
    "name, text, expected",
    [
        (GOOD_NAME, GOOD_HEADER + "\nsummary\n", []),
        (GOOD_NAME, GOOD_HEADER + "git_branch: main\nfuture_key: x\n\nsummary\n", []),
        ("2025-02-11T15-35-19-jqmb.md", GOOD_HEADER + "\nsummary\n", []),
        (GOOD_NAME, GOOD_HEADER, [("rollout-summary-header", 4)]),
        (GOOD_NAME, "", [("rollout-summary-header", 1)]),
        (GOOD_NAME, "\n" + GOOD_HEADER, [("rollout-summary-header", 1)]),
        (GOOD_NAME, GOOD_HEADER.replace("cwd: /w\n", "") + "\nx\n", [("rollout-summary-header", 1)]),
        (GOOD_NAME, GOOD_HEADER + "# Summary\nx\n", [("rollout-summary-header", 5)]),
        (GOOD_NAME, GOOD_HEADER + "cwd: /again\n\nx\n", [("rollout-summary-header", 5)]),
        (GOOD_NAME, GOOD_HEADER.replace("2026-01-02T03:04:05Z", "yesterday") + "\nx\n",
         [("rollout-summary-header", 2)]),
        (GOOD_NAME, GOOD_HEADER.replace("0194f5a6-89ab-7cde-8123-456789abcdef", "thread-1") + "\nx\n",
         [("rollout-thread-id", 1)]),
        (GOOD_NAME, GOOD_HEADER.replace("0194f5a6-89ab-7cde", "0194F5A6-89AB-7CDE") + "\nx\n",
         [("rollout-thread-id", 1)]),
        ("2025-02-11T15-35-19-zzzz-slug.md", GOOD_HEADER + "\nx\n", [("rollout-summary-name", 1)]),
        ("summary.md", GOOD_HEADER + "\nx\n", [("rollout-summary-name", 1)]),
    ],
)
def test_rollout_summary_headers(name, text, expected):
    assert [(f.code, f.line) for f in check_rollout_summary(name, name, text)] == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("see MEMORY.md:1-2 and rollout_summaries/a.md:3-4.", [(1, 5, "MEMORY.md", 1, 2),
                                                             (1, 23, "rollout_summaries/a.md", 3, 4)]),
        ("skills/deploy/SKILL.md:10-20", [(1, 1, "skills/deploy/SKILL.md", 10, 20)]),
        ("src/app.py:1-2 and docs/MEMORY.md:1-2 and /abs/MEMORY.md:1-2", []),  # not in the memory folder
        ("MEMORY.md:5 and MEMORY.md:a-b", []),
        ("x\n`memory_summary.md:0-1`", [(2, 2, "memory_summary.md", 0, 1)]),
    ],
)
def test_find_pointers(text, expected):
    assert find_pointers(text) == expected


def test_pointer_checks():
    sizes = {"MEMORY.md": 10}
    text = "MEMORY.md:1-10 MEMORY.md:10-11 MEMORY.md:0-1 MEMORY.md:5-4 rollout_summaries/gone.md:1-2"
    found = [(f.code, f.column) for f in check_pointers("M", text, sizes.get)]
    assert found == [("pointer-range", 16), ("pointer-range", 32), ("pointer-range", 46),
                     ("pointer-missing", 60)]


# --------------------------------------------------------------------------- files and folders


def test_a_codex_folder_checks_only_codex_files(tmp_path):
    (tmp_path / "MEMORY.md").write_text("- [CROE] x\n")
    (tmp_path / "memory_summary.md").write_text("v1\n")
    (tmp_path / "raw_memories.md").write_text("- [CROE] not an entry file\n")
    (tmp_path / "notes.md").write_text("- [CROE] unknown file in Codex's folder\n")
    (tmp_path / "skills" / "s").mkdir(parents=True)
    (tmp_path / "skills" / "s" / "SKILL.md").write_text("- [CROE] skill\n")
    notes = tmp_path / "extensions" / "ad_hoc" / "notes"
    notes.mkdir(parents=True)
    (notes / "bad name.md").write_text("x")
    (notes / ".hidden").write_text("x")
    kinds = sorted((p.removeprefix(str(tmp_path)), k) for p, k in collect_files(str(tmp_path)))
    assert kinds == [("/MEMORY.md", "memory"), ("/extensions/ad_hoc/notes/bad name.md", "adhoc"),
                     ("/memory_summary.md", "summary")]


def test_a_notes_folder_reads_every_note_but_the_archive(tmp_path):
    (tmp_path / "projects" / "p-1").mkdir(parents=True)
    (tmp_path / "projects" / "p-1" / "memory.md").write_text("# Project memory\n- [core] x\n")
    (tmp_path / "archive" / "p-1").mkdir(parents=True)
    (tmp_path / "archive" / "p-1" / "memory.md").write_text("- [core] old\n")
    report = lint_paths([str(tmp_path)])
    assert report.files == 1
    assert [(f.code, f.line) for f in report.findings] == [("tier-unknown", 2)]


def test_a_file_not_utf8_is_read_with_replacement_said_and_checked(tmp_path):
    (tmp_path / "bad.md").write_bytes(b"- fine\n- [CROE] \xff and \xfe\xfd\n")
    (tmp_path / "good.md").write_text("- [core] x\n")
    report = lint_paths([str(tmp_path)])
    assert [(f.path.rsplit("/", 1)[1], f.code, f.line) for f in report.findings] == [
        ("bad.md", "file-not-utf8", 2), ("bad.md", "tier-unknown", 2), ("good.md", "tier-unknown", 1)]
    assert "not valid UTF-8 in 3 places" in report.findings[0].message


def test_a_codex_memory_md_not_utf8_is_checked_not_skipped(tmp_path):
    folder = tmp_path / "memories"
    folder.mkdir()
    (folder / "MEMORY.md").write_bytes("# Task Group: orchard\n\n- pump \u6c34".encode()[:-1]
                                       + b"\n- see rollout_summaries/gone.md:1-2\n")
    report = lint_paths([str(folder)])
    assert [(f.code, f.line) for f in report.findings] == [("file-not-utf8", 3),
                                                          ("pointer-missing", 4)]


def test_unreadable_files_are_findings_and_the_rest_goes_on(tmp_path):
    (tmp_path / "big.md").write_bytes(b"- x\n" * 10)
    (tmp_path / "good.md").write_text("- [core] x\n")
    import memcite.lint.run as run

    limit, run.MAX_FILE_BYTES = run.MAX_FILE_BYTES, 20
    try:
        report = lint_paths([str(tmp_path)])
    finally:
        run.MAX_FILE_BYTES = limit
    assert [(f.path.rsplit("/", 1)[1], f.code) for f in report.findings] == [
        ("big.md", "file-unreadable"), ("good.md", "tier-unknown")]


def test_the_same_file_twice_is_linted_once(tmp_path):
    (tmp_path / "m.md").write_text("- [core] x\n")
    report = lint_paths([str(tmp_path), str(tmp_path / "m.md")])
    assert report.files == 1 and len(report.findings) == 1


def test_the_sample_codex_home_is_clean():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "corpus" / "codex_home" / "memories"
    report = lint_paths([str(root)])
    assert report.files > 10 and report.findings == ()


def test_links_out_of_the_folder_are_not_followed(tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("- [CROE] secret content\n")
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "inside.md").write_text("- fine\n")
    (folder / "link.md").symlink_to(outside)
    (folder / "inner.md").symlink_to(folder / "inside.md")
    report = lint_paths([str(folder)])
    assert [(f.path.rsplit("/", 1)[1], f.code, f.message) for f in report.findings] == [
        ("link.md", "file-unreadable", "a link leading out of the folder, not followed")]


# --------------------------------------------------------------------------- long lines
# Speed targets live in benchmarks/bench_long_lines.py; these check that the linear forms give
# what the patterns they replaced gave, and guard (with a generous alarm) against a hang.

import os  # noqa: E402
import re  # noqa: E402

from memcite.lint import folder_checks, hook_paths  # noqa: E402

OLD_HEADER = re.compile(r"([a-z_][a-z0-9_]*):[ \t]*(.*?)[ \t]*")
OLD_PATCH_HEADER = re.compile(r"^\*\*\* (?:Update File|Add File|Delete File|Move to):[ \t]*(.+?)[ \t]*$",
                              re.MULTILINE)
HEADERISH = st.lists(st.sampled_from(["a", "k", "_", "1", "A", ":", " ", "\t", "\r", "x y", "é", "-"]),
                     max_size=20).map("".join)


@given(HEADERISH)
def test_a_header_line_is_split_as_the_pattern_did(line):
    old = OLD_HEADER.fullmatch(line)
    assert folder_checks._header(line) == (old.groups() if old else None)


PATCHISH = st.lists(st.sampled_from(["*** Update File:", "*** Move to:", "*** Add File: ", "*** x:", " ", "\t",
                                     "\n", "\r\n", "a", "b.md", "/", "*"]), max_size=16).map("".join)


@given(PATCHISH)
def test_patch_headers_are_read_as_the_pattern_did(text):
    old = [match.group(1) for match in OLD_PATCH_HEADER.finditer(text)]
    new = [path for match in hook_paths._PATCH_HEADER.finditer(text)
           if (path := hook_paths._patch_path(match.group(1)))]
    assert new == old


def test_a_rollout_header_with_a_long_run_of_spaces(tmp_path):
    # The pattern took 0.9 s at 20,000 spaces and grew with the square: minutes here.
    spaces = " " * 300_000
    text = f"thread_id: a{spaces}b\nupdated_at: 2026-01-02T03:04:05Z\nrollout_path: /r\ncwd: /w{spaces}\n\nx\n"
    with no_hang():
        findings = check_rollout_summary("r.md", GOOD_NAME, text)
    assert [(f.code, f.line) for f in findings] == [("rollout-thread-id", 1)]
    assert findings[0].message == f"thread_id: {'a' + spaces + 'b'!r} is not a UUID"


def test_a_patch_header_with_a_long_run_of_spaces(tmp_path):
    # The pattern took 12 s at 80,000 spaces and grew with the square.
    name = "a" + " " * 300_000 + "b.md"
    payload = {"tool_input": {"patch": f"*** Begin Patch\n*** Update File: {name}  \n@@\n"}}
    with no_hang():
        assert hook_paths.candidate_paths(payload) == [name]


needs_path_max = pytest.mark.skipif(hook_paths._PATH_MAX is None or os.sep != "/",
                                    reason="PATH_MAX unknown here")


@needs_path_max
def test_realpath_of_paths_past_path_max_is_os_realpath(tmp_path):
    limit = hook_paths._PATH_MAX
    (tmp_path / "d").mkdir()
    (tmp_path / "up").symlink_to(tmp_path)  # resolves to a shorter path: more can be looked up
    (tmp_path / "root").symlink_to("/")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    long_target = str(tmp_path / "d") + "/x" * ((limit - len(str(tmp_path)) - 100) // 2)
    (tmp_path / "long").symlink_to(long_target)  # resolves to a path near PATH_MAX
    (tmp_path / "relative").symlink_to("d/../up/d")
    names = ["d", "up", "root", "loop", "dangling", "long", "relative", "x", "y" * 300, "é" * 40, "memories"]
    rng = __import__("random").Random(5)
    for _ in range(60):
        parts = [rng.choice(names) for _ in range(rng.randint(1, limit // 2))]
        path = os.path.normpath(str(tmp_path) + "/" + "/".join(parts))
        assert hook_paths._realpath(path) == os.path.realpath(path), path[:200]


@needs_path_max
def test_a_very_long_path_in_a_payload(tmp_path):
    # os.path.realpath took 31 s on these 1.3 MB (650,000 names): it builds the path anew per name.
    root = tmp_path / "memories"
    root.mkdir()
    word = str(root) + "/" + "a/" * 650_000 + "MEMORY.md"
    payload = {"tool_input": {"command": f"cat {word}"}, "cwd": str(tmp_path)}
    with no_hang():
        touched = hook_paths.touched_memory_files(payload, [str(root)])
    assert touched == [os.path.realpath(str(root)) + "/" + "a/" * 650_000 + "MEMORY.md"]
