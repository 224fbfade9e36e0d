"""The package's layout: one wing per stage of the data, and a module imports only from its own
wing and the wings below (read from every import statement, those inside functions included)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "memcite"

# From the bottom up. "base" is the few shared top-level modules.
WINGS = ("base", "contracts", "citations", "ledger", "readpath", "retention", "judgement", "lint",
         "notes", "audit", "codex", "fleet", "conformance", "demo", "mcp", "cli")
BASE_MODULES = ("__init__", "__main__", "display", "durable_files", "errors", "paths", "rust_text",
                "secrets", "times", "untrusted", "value_classes")
GRAB_BAGS = ("utils", "helpers", "core")


def wing_of(module: str) -> str:
    """The wing of a dotted module name under ``memcite`` (``memcite`` itself is base)."""
    parts = module.split(".")
    assert parts[0] == "memcite", module
    if len(parts) == 1 or parts[1] in BASE_MODULES or parts[1].startswith("__"):
        return "base"
    if parts[1] in WINGS:
        return parts[1]
    raise ValueError(f"{module}: in no wing")


def _lazy_names() -> dict[str, str]:
    """``memcite.__init__``'s public names and the module each is loaded from."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "_HOME" for t in targets):
                return {name: f"memcite.{home}" for name, home in ast.literal_eval(node.value).items()}
    raise AssertionError("memcite/__init__.py has no _HOME table")


def imported_modules(source: str, module: str, is_package: bool = False,
                     lazy_names: dict[str, str] | None = None) -> list[tuple[int, str]]:
    """``(line, memcite module)`` for every import of memcite in ``source``, at any depth.

    ``from memcite.x import y`` counts as importing ``memcite.x.y`` (a module or a name, the
    wing is the same); ``from memcite import NAME`` is followed to where ``memcite`` loads
    NAME from; relative imports are resolved against ``module``.
    """
    lazy_names = lazy_names or {}
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names
                      if alias.name.split(".")[0] == "memcite"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            if origin.split(".")[0] != "memcite":
                continue
            for alias in node.names:
                target = f"{origin}.{alias.name}" if alias.name != "*" else origin
                if origin == "memcite":
                    target = lazy_names.get(alias.name, target)
                found.append((node.lineno, target))
    return found


def import_table() -> dict[str, list[tuple[int, str]]]:
    """Every module of the package and the memcite modules it imports."""
    lazy_names = _lazy_names()
    table = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        table[module] = imported_modules(path.read_text(encoding="utf-8"), module, is_package,
                                         lazy_names)
    return table


def rank_of(wing: str) -> int:
    """A wing's level, from 0 (base) up."""
    return WINGS.index(wing)


def upward_imports(table: dict[str, list[tuple[int, str]]]) -> list[str]:
    """The imports that go to a higher wing (``memcite.__main__`` may start the CLI)."""
    problems = []
    for module, imports in table.items():
        rank = rank_of(wing_of(module))
        for line, target in imports:
            if module == "memcite.__main__" and wing_of(target) == "cli":
                continue
            if rank_of(wing_of(target)) > rank:
                problems.append(f"{module}:{line} imports {target} "
                                f"({wing_of(module)} -> {wing_of(target)})")
    return problems


def import_circles(table: dict[str, list[tuple[int, str]]]) -> list[list[str]]:
    """The groups of modules that import one another in a circle (Tarjan's strongly connected
    components of more than one module), each sorted; imports inside functions count too."""
    modules = set(table)

    def module_of(target: str) -> str | None:  # ``memcite.x.y.name`` -> ``memcite.x.y``
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target or None

    graph = {module: sorted({module_of(t) for _, t in imports} - {None, module, "memcite"})
             for module, imports in table.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in graph.get(module, ()):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(circles)


# --------------------------------------------------------------------------- the package


def test_no_modules_import_one_another_in_a_circle():
    assert import_circles(import_table()) == []


def test_no_module_imports_from_a_higher_wing():
    table = import_table()
    assert len(table) > 30 and sum(len(imports) for imports in table.values()) > 100
    assert upward_imports(table) == []


def test_the_judgement_and_the_audit_stay_below_their_callers():
    """The rules (``memcite.judgement``) import nothing from the audit, Codex's wing or the CLI;
    the audit nothing from Codex's wing (whose hooks and gate run it) or the CLI: what it
    reads of Codex's files is read in ``memcite.ledger``."""
    table = import_table()
    wrong = [f"{module}:{line} imports {target}" for module, imports in table.items()
             for line, target in imports
             if (wing_of(module) == "judgement" and wing_of(target) in ("audit", "codex", "cli"))
             or (wing_of(module) == "audit" and wing_of(target) in ("codex", "cli"))]
    assert wrong == []
    assert {"memcite.judgement.directives", "memcite.audit.memory_audit"} <= set(table)


def test_the_top_level_holds_only_the_base_modules_and_the_wings():
    modules = sorted(path.stem for path in PACKAGE.glob("*.py"))
    assert set(modules) <= set(BASE_MODULES)
    folders = {path.name for path in PACKAGE.iterdir() if path.is_dir() and path.name != "__pycache__"}
    assert folders <= set(WINGS) - {"base"}
    assert all((PACKAGE / folder / "__init__.py").is_file() for folder in folders)
    # nothing deeper than one wing: every module is memcite.<wing>.<module> at most
    assert all(len(path.relative_to(PACKAGE).parts) <= 2 for path in PACKAGE.rglob("*.py"))


def test_no_grab_bag_modules():
    names = {path.stem for path in PACKAGE.rglob("*.py")}
    assert not names & set(GRAB_BAGS)


# --------------------------------------------------------------------------- the checker itself


def test_imports_are_found_at_any_depth_and_in_every_spelling():
    source = (
        "import os\n"
        "import memcite\n"
        "import memcite.ledger.store as store\n"
        "from memcite.citations.models import Reading, Block\n"
        "from memcite import errors, parse_reply\n"
        "from . import rules\n"
        "from ..ledger import sync\n"
        "from lark import Lark\n"
        "def later():\n"
        "    from memcite.cli.app import app\n"
        "    class Inner:\n"
        "        import memcite.notes.scopes\n"
    )
    found = imported_modules(source, "memcite.retention.stats",
                             lazy_names={"parse_reply": "memcite.citations.reading"})
    assert sorted(found) == [
        (2, "memcite"),
        (3, "memcite.ledger.store"),
        (4, "memcite.citations.models.Block"),
        (4, "memcite.citations.models.Reading"),
        (5, "memcite.citations.reading"),
        (5, "memcite.errors"),
        (6, "memcite.retention.rules"),
        (7, "memcite.ledger.sync"),
        (10, "memcite.cli.app.app"),
        (12, "memcite.notes.scopes"),
    ]
    # in a package's __init__, "." is the package itself
    assert imported_modules("from .store import open_store\n", "memcite.ledger", is_package=True) \
        == [(1, "memcite.ledger.store.open_store")]


def test_the_checker_reports_every_upward_import():
    table = {
        "memcite.errors": [(1, "memcite.citations.models")],  # base -> citations: up
        "memcite.paths": [(2, "memcite.rust_text"), (3, "memcite")],  # base -> base
        "memcite.__main__": [(4, "memcite.cli.app")],  # allowed: the entry point
        "memcite.citations.reading": [(5, "memcite.ledger.store")],  # up
        "memcite.ledger.store": [(6, "memcite.citations.models"), (7, "memcite.errors")],
        "memcite.readpath.tokens": [(8, "memcite.readpath.truncation")],  # own wing
        "memcite.retention.stats": [(9, "memcite.notes.scopes")],  # up
        "memcite.notes.lint": [(10, "memcite.retention.rules")],
        "memcite.cli.app": [(11, "memcite.notes.lint"), (12, "memcite.citations")],
        "memcite.ledger.sync": [(13, "memcite.cli.console")],  # up, two wings
    }
    assert upward_imports(table) == [
        "memcite.errors:1 imports memcite.citations.models (base -> citations)",
        "memcite.citations.reading:5 imports memcite.ledger.store (citations -> ledger)",
        "memcite.retention.stats:9 imports memcite.notes.scopes (retention -> notes)",
        "memcite.ledger.sync:13 imports memcite.cli.console (ledger -> cli)",
    ]


def test_a_module_outside_every_wing_is_an_error():
    with pytest.raises(ValueError, match="in no wing"):
        upward_imports({"memcite.helpers": [(1, "memcite.errors")]})
    with pytest.raises(ValueError, match="in no wing"):
        upward_imports({"memcite.cli.app": [(1, "memcite.plugins.x")]})


def test_the_circle_finder_finds_circles_of_any_length_and_nothing_else():
    table = {
        "memcite.a.x": [(1, "memcite.a.y.name")],
        "memcite.a.y": [(2, "memcite.a.z")],
        "memcite.a.z": [(3, "memcite.a.x")],           # x -> y -> z -> x
        "memcite.b.p": [(1, "memcite.b.q")],
        "memcite.b.q": [(1, "memcite.b.p.f")],          # p <-> q, through a name
        "memcite.c.top": [(1, "memcite.a.x"), (2, "memcite")],  # into a circle, not in one
        "memcite.c.self": [(1, "memcite.c.self.name")],  # itself: no circle
    }
    assert import_circles(table) == [["memcite.a.x", "memcite.a.y", "memcite.a.z"],
                                     ["memcite.b.p", "memcite.b.q"]]


def test_no_private_name_crosses_a_module():
    """A ``_name`` is its module's own: a helper another module needs is public (issue 32)."""
    crossing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memcite") \
                    and node.module != module:
                crossing += [f"{module} <- {node.module}.{alias.name}" for alias in node.names
                             if alias.name.startswith("_") and not alias.name.startswith("__")]
    assert crossing == []


def test_no_private_name_is_reached_through_an_imported_module():
    """Nor through the name an import binds: ``from memcite.notes import events`` then
    ``events._check_text(...)`` reaches into another module as much as importing it does."""
    reaching = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memcite"):
                imported |= {alias.asname or alias.name for alias in node.names}
            elif isinstance(node, ast.Import):
                imported |= {alias.asname for alias in node.names
                             if alias.asname and alias.name.startswith("memcite")}
        reaching += [f"{module}:{node.lineno} {node.value.id}.{node.attr}" for node in ast.walk(tree)
                     if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                     and node.value.id in imported and node.attr.startswith("_")
                     and not node.attr.startswith("__")]
    assert reaching == []
