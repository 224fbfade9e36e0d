"""The docs/ pages stay in the repository, linked, and true to the code they describe."""

import ast
import json
import re
from pathlib import Path

import pytest

from memcite.readpath.truncation import truncate_approx

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
CITATION_DOC = DOCS / "citation-format.md"

# Spelled in two halves so that this file does not mention them itself.
FORBIDDEN = ("shared" + "/spec", ".." + "/shared")
SEARCHED = ("README.md", "docs", "src", "tests", "benchmarks", "corpus", "grammar")
SKIPPED_PARTS = {"__pycache__", ".venv", ".hypothesis", ".pytest_cache"}

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
KEBAB = re.compile(r"^[a-z]+(?:-[a-z0-9]+)+$")


def _repository_files():
    for name in SEARCHED:
        top = ROOT / name
        candidates = [top] if top.is_file() else sorted(top.rglob("*"))
        for path in candidates:
            if path.is_file() and not SKIPPED_PARTS & set(path.relative_to(ROOT).parts):
                yield path


def _markdown_files():
    return [README, *sorted(DOCS.glob("*.md"))]


def _relative_links(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [
        target for target in LINK.findall(text)
        if not re.match(r"^[a-z][a-z0-9+.-]*:", target)  # http:, https:, mailto:
    ]


def _anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)  # no fenced code
    return {_anchor(m) for m in re.findall(r"^#{1,6} +(.+?) *#*$", text, flags=re.MULTILINE)}


# --------------------------------------------------------------------------- no outside spec


def test_the_searched_folders_hold_files():
    files = list(_repository_files())
    assert len(files) > 50
    assert CITATION_DOC in files


@pytest.mark.parametrize("needle", FORBIDDEN)
def test_nothing_points_outside_the_repository(needle):
    offenders = []
    for path in _repository_files():
        data = path.read_bytes()
        if needle.encode() in data:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == [], f"{needle!r} is mentioned in: {offenders} (link to docs/ instead)"


# --------------------------------------------------------------------------- links


def test_the_readme_links_every_docs_page():
    linked = {
        (README.parent / target.split("#")[0]).resolve()
        for target in _relative_links(README)
        if target.startswith("docs/")
    }
    pages = {page.resolve() for page in DOCS.glob("*.md")}
    assert len(pages) >= 6
    assert all(page.is_file() for page in linked if page.suffix == ".md"), linked
    assert pages <= linked | {(DOCS / "README.md").resolve()} | {
        (DOCS / target.split("#")[0]).resolve() for target in _relative_links(DOCS / "README.md")
    }
    assert (DOCS / "README.md").resolve() in linked


def test_the_docs_index_lists_every_page():
    listed = {(DOCS / t.split("#")[0]).resolve() for t in _relative_links(DOCS / "README.md")}
    pages = {page.resolve() for page in DOCS.glob("*.md") if page.name != "README.md"}
    assert pages <= listed


@pytest.mark.parametrize("page", _markdown_files(), ids=lambda p: p.name)
def test_every_relative_link_resolves(page):
    broken = []
    for target in _relative_links(page):
        file_part, _, anchor = target.partition("#")
        destination = (page.parent / file_part).resolve() if file_part else page
        if not destination.exists():
            broken.append(target)
        elif anchor and destination.suffix == ".md" and anchor not in _anchors(destination):
            broken.append(target)
    assert broken == [], f"{page.name}: links that lead nowhere: {broken}"


def test_the_anchor_rule_on_known_headings():
    assert _anchor("What \"trim\" means") == "what-trim-means"
    assert _anchor("2. Project notes") == "2-project-notes"
    assert _anchor("Codex's settings") == "codexs-settings"
    assert _anchor("The `Stop` event") == "the-stop-event"


# --------------------------------------------------------------------------- diagnostic codes


def _emitted_codes() -> set[str]:
    """Codes in the reader's source: first argument of ``.warn``, second of ``Diagnostic``,
    first of a (code, message) pair."""
    codes = set()
    for module in sorted((ROOT / "src" / "memcite" / "citations").glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            candidate = None
            if isinstance(node, ast.Call):
                function = node.func
                if isinstance(function, ast.Attribute) and function.attr == "warn" and node.args:
                    candidate = node.args[0]
                elif isinstance(function, ast.Name) and function.id == "Diagnostic" \
                        and len(node.args) > 1:
                    candidate = node.args[1]
            elif isinstance(node, ast.Tuple) and len(node.elts) == 2 \
                    and isinstance(node.elts[1], ast.Constant | ast.JoinedStr):
                candidate = node.elts[0]
            if isinstance(candidate, ast.Constant) and isinstance(candidate.value, str) \
                    and KEBAB.match(candidate.value):
                codes.add(candidate.value)
    return codes


def _golden_diagnostics() -> set[tuple[str, str]]:
    found = set()
    for expected in (ROOT / "corpus" / "replies").glob("*.expected.json"):
        for diagnostic in json.loads(expected.read_text(encoding="utf-8"))["diagnostics"]:
            found.add((diagnostic["code"], diagnostic["severity"]))
    return found


def _documented_codes() -> dict[str, str]:
    """code -> severity, from the rows of the diagnostic tables of citation-format.md."""
    text = CITATION_DOC.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z0-9-]+)` \| (info|warning|error) \|", text, re.MULTILINE)
    return dict(rows)


def test_the_code_collection_finds_what_the_corpus_shows():
    emitted = _emitted_codes()
    assert len(emitted) >= 20
    assert {code for code, _ in _golden_diagnostics()} <= emitted


def test_every_code_the_reader_emits_is_documented():
    text = CITATION_DOC.read_text(encoding="utf-8")
    missing = sorted(code for code in _emitted_codes() if f"`{code}`" not in text)
    assert missing == [], f"diagnostic codes not in docs/citation-format.md: {missing}"


def test_the_diagnostic_tables_match_the_code():
    documented = _documented_codes()
    assert set(documented) == _emitted_codes()
    for code, severity in _golden_diagnostics():
        assert documented[code] == severity, code


# --------------------------------------------------------------------------- examples


def _truncation_examples() -> list[tuple[str, int, str]]:
    text = (DOCS / "read-path.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\s*\| `([^`]+)` \| ([\d,]+) \| `([^`]+)` \|$", text, re.MULTILINE)
    return [(source, int(budget.replace(",", "")), result) for source, budget, result in rows]


def test_the_read_path_examples_are_codex_truncation():
    examples = _truncation_examples()
    assert len(examples) == 3
    for source, budget, result in examples:
        assert truncate_approx(source, budget) == result
