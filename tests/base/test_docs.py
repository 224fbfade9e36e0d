"""The docs/ pages stay in the repository, linked, and true to the code they describe:
every command and every option is in the command reference, once."""

import ast
import json
import re
import tomllib
from collections import Counter
from pathlib import Path

import pytest
from typer.main import get_command

from memcite.cli.app import app
from memcite.readpath.truncation import truncate_approx

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
CITATION_DOC = DOCS / "citation-format.md"
# The command reference: an overview (help, exit codes, what all commands share) and one
# page per wing, each command in one section: ### `memcite NAME`, then its synopsis.
OVERVIEW = DOCS / "commands.md"
REFERENCE = sorted(DOCS.glob("commands-*.md"))

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


def test_the_sdist_ships_the_docs():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "docs" in pyproject["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]


# --------------------------------------------------------------------------- command reference

HEADING = re.compile(r"^### `memcite ([a-z][a-z-]*(?: [a-z][a-z-]*)*)`$", re.MULTILINE)
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def _commands() -> dict:
    """Every command by its full name, sub-commands of groups included (``note save``)."""
    found = {}
    for name, command in get_command(app).commands.items():
        if hasattr(command, "commands"):  # a group (typer may bundle its own click)
            for sub, subcommand in command.commands.items():
                found[f"{name} {sub}"] = subcommand
        else:
            found[name] = command
    return found


def _options(command) -> set[str]:
    """The long option names of a command (names only: the help texts are the code's)."""
    return {option for param in command.params
            for option in [*param.opts, *getattr(param, "secondary_opts", [])]
            if option.startswith("--") and option != "--help"}


def _sections() -> list[tuple[str, Path, str]]:
    """(command name, page, section text) for each ``### `memcite NAME``` heading of the
    reference pages; a section runs to the next ``##`` or ``###`` heading (``####`` stays in)."""
    found = []
    for page in REFERENCE:
        text = page.read_text(encoding="utf-8")
        # fenced code blanked out, same length: a `### ` line inside a block is no heading
        text_without_code = re.sub(r"^```.*?^```", lambda m: re.sub(r"[^\n]", " ", m.group()), text,
                                   flags=re.MULTILINE | re.DOTALL)
        starts = [m.start() for m in re.finditer(r"^#{2,3} ", text_without_code, re.MULTILINE)]
        for match in HEADING.finditer(text_without_code):
            end = next((start for start in starts if start > match.start()), len(text))
            found.append((match.group(1), page, text[match.start():end]))
    return found


def _synopsis(section: str) -> str:
    """The first fenced block of a section, which must be its usage line(s)."""
    block = re.search(r"^```text\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert block, section.splitlines()[0] + ": no ```text synopsis"
    return block.group(1)


def test_the_reference_has_its_pages():
    assert OVERVIEW.is_file()
    assert len(REFERENCE) >= 7
    assert len(_sections()) == len(_commands())


def test_every_command_has_exactly_one_section():
    named = Counter(name for name, _, _ in _sections())
    twice = sorted(name for name, count in named.items() if count > 1)
    assert twice == [], f"documented in more than one section: {twice}"
    assert set(named) <= set(_commands()), sorted(set(named) - set(_commands()))
    missing = sorted(set(_commands()) - set(named))
    assert missing == [], f"commands with no section in docs/commands-*.md: {missing}"


def test_each_synopsis_is_the_usage_of_its_command():
    for name, page, section in _sections():
        lines = [line for line in _synopsis(section).splitlines() if line.strip()]
        assert lines and all(line.startswith(f"memcite {name}") for line in lines), (page.name, name)


def test_each_synopsis_names_every_option_of_its_command_once():
    commands = _commands()
    for name, page, section in _sections():
        named = Counter(OPTION.findall(_synopsis(section)))
        options = _options(commands[name])
        missing = sorted(options - set(named))
        unknown = sorted(set(named) - options - {"--help"})
        repeated = sorted(option for option, count in named.items() if count > 1)
        assert missing == [], f"{page.name}: memcite {name}: {missing} not in its synopsis"
        assert unknown == [], f"{page.name}: memcite {name}: no such option {unknown}"
        assert repeated == [], f"{page.name}: memcite {name}: {repeated} more than once"


def _shared_options(page: Path) -> set[str]:
    """The options a page explains once for all its commands: the bullets (``- `--db PATH```)
    of its section headed "Options shared by ..." or "Options every ... takes"."""
    text = page.read_text(encoding="utf-8")
    match = re.search(r"^## Options (?:shared|every)[^\n]*\n(.*?)(?=^## |\Z)", text,
                      re.MULTILINE | re.DOTALL)
    if not match:
        return set()
    bullets = re.findall(r"^- (`--[^\n]*)", match.group(1), re.MULTILINE)
    return {option for bullet in bullets for option in OPTION.findall(bullet.split(":", 1)[0])}


def test_the_shared_options_are_explained_once():
    shared = _shared_options(OVERVIEW)
    assert {"--db", "--codex-home", "--json"} <= shared
    for page in REFERENCE:
        assert not shared & _shared_options(page), page.name  # not again on a page


def test_every_option_is_explained_in_its_section_or_once_for_all():
    """Beyond the synopsis: each option is said something of in its command's section,
    unless the overview or the command's page explains it for every command."""
    commands = _commands()
    overview = _shared_options(OVERVIEW)
    for name, page, section in _sections():
        body = section.replace(_synopsis(section), "", 1)
        unexplained = sorted(
            option for option in _options(commands[name]) - overview - _shared_options(page)
            if not re.search(rf"(?<![\w-]){option}(?![\w-])", body))
        assert unexplained == [], f"{page.name}: memcite {name}: {unexplained} only in the synopsis"


def test_the_top_level_options_are_in_the_reference():
    overview = OVERVIEW.read_text(encoding="utf-8")
    for option in _options(get_command(app)):
        assert f"memcite {option}" in overview, option


def test_the_overview_links_every_command_section():
    linked = set(_relative_links(OVERVIEW))
    for name, page, _ in _sections():
        target = f"{page.name}#{_anchor(f'`memcite {name}`')}"
        assert target in linked, f"docs/commands.md does not link {target}"
    assert {page.name for page in REFERENCE} <= {t.split("#")[0] for t in linked}


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


def test_commands_json_lists_every_schema_memcite_schema_lists():
    """Issue 40: docs/commands-json.md named 16 schemas while `memcite schema` listed 28."""
    import json as json_module

    from typer.testing import CliRunner

    from memcite.cli.app import app

    done = CliRunner().invoke(app, ["schema", "--json"])
    listed = [entry["name"] for entry in json_module.loads(done.stdout)["schemas"]]
    text = (DOCS / "commands-json.md").read_text(encoding="utf-8")
    documented = re.findall(r"^\| `([a-z0-9-]+)` \|", text, re.MULTILINE)
    assert documented == listed  # every one, in the command's order, once
