"""Counts read as a person says them: "1 file", "2 files", never "file(s)" (issue 33)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from memcite.display import count

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "memcite"


@pytest.mark.parametrize(("number", "word", "many", "expected"), [
    (0, "file", None, "0 files"),
    (1, "file", None, "1 file"),
    (2, "file", None, "2 files"),
    (1, "memory", "memories", "1 memory"),
    (3, "memory", "memories", "3 memories"),
    (0, "reply", "replies", "0 replies"),
    (1, "session file", None, "1 session file"),
    (33, "raw_memories.md section", None, "33 raw_memories.md sections"),
    (-1, "day", None, "-1 days"),
    (1, "reply was", "replies were", "1 reply was"),
    (2, "reply was", "replies were", "2 replies were"),
])
def test_count_says_the_number_and_the_word_in_the_plural_unless_one(number, word, many, expected):
    assert count(number, word, many) == expected


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def test_no_string_in_the_source_leaves_a_plural_to_the_reader():
    """Every string literal (an f-string's text parts too; docstrings aside) is free of ``(s)``:
    a count goes through ``memcite.display.count``."""
    left = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and "(s)" in node.value and id(node) not in docstrings):
                left.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value.strip()[:60]!r}")
    assert not left, "use memcite.display.count:\n" + "\n".join(left)
