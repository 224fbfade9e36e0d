"""Golden folders: each case in corpus/lint/ is a Codex home (memories/ and/or memory/) beside the
findings `memcite lint` must report for it (expected.txt, paths relative to the case).

Set MEMCITE_UPDATE_GOLDEN=1 to rewrite the expected files, then review the diff.
"""

import os
import re
from collections import Counter
from pathlib import Path

import pytest

from memcite.lint.findings import CODES
from memcite.lint.run import lint_paths

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "lint"
CASES = sorted(p for p in CORPUS.iterdir() if p.is_dir())
CLEAN = {"clean_home", "clean_notes_only"}


def _lint(case: Path) -> str:
    roots = [str(case / name) for name in ("memories", "memories_v2", "memory")
             if (case / name).is_dir()]
    report = lint_paths(roots)
    lines = []
    for f in report.findings:
        path = os.path.relpath(f.path, case)
        lines.append(f"{path}:{f.line}:{f.column}: {f.severity}: {f.message} [{f.code}]")
        lines.append(f"  hint: {f.hint}")
    return "".join(line + "\n" for line in lines)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_findings(case):
    got = _lint(case)
    expected_path = case / "expected.txt"
    if os.environ.get("MEMCITE_UPDATE_GOLDEN"):
        expected_path.write_text(got, encoding="utf-8")
    assert got == expected_path.read_text(encoding="utf-8")


def test_clean_folders_have_no_findings():
    for name in CLEAN:
        assert (CORPUS / name / "expected.txt").read_text(encoding="utf-8") == ""
        assert lint_paths([str(CORPUS / name / "memories"), str(CORPUS / name / "memory")]
                          if (CORPUS / name / "memories").is_dir() else [str(CORPUS / name / "memory")]
                          ).findings == ()


def test_every_code_is_found_at_least_twice():
    counts = Counter()
    for case in CASES:
        counts.update(re.findall(r" \[([a-z0-9-]+)\]$", (case / "expected.txt").read_text(encoding="utf-8"),
                                 re.MULTILINE))
    assert {code: counts[code] for code in CODES if counts[code] < 2} == {}
