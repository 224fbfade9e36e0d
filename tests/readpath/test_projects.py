"""The project slug rule, finding the git work tree, and checking a note's ``Project:`` line."""

from __future__ import annotations

import hashlib
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcite.readpath.projects import (
    canonical_path,
    check_note,
    find_project_root,
    note_project_line,
    project_note_path,
    project_slug,
    sanitize_project_name,
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("payments-api", "payments-api"),
        ("Payments API", "payments-api"),
        ("My Project (2024)!", "my-project-2024"),
        ("__init__", "init"),
        ("a..b__c", "a-b-c"),  # a run of several characters becomes one "-"
        ("--a--b--", "a-b"),
        ("!!!", "project"),  # nothing left
        ("", "project"),
        ("Ünïcode", "n-code"),  # non-ASCII letters are outside [a-z0-9]
        ("x" * 50, "x" * 40),  # cut to 40 characters
        ("日本", "project"),
        # cut after stripping, then trailing "-" removed again: a slug never holds "--"
        ("a" * 39 + "_b", "a" * 39),
        ("a" * 38 + "__b", "a" * 38 + "-b"),
        ("a" * 39 + "__bc", "a" * 39),
        ("a" * 40 + "_b", "a" * 40),
        ("a" * 41, "a" * 40),
        ("-" * 45 + "ab", "ab"),
        ("ab" + "-" * 45 + "cd", "ab-cd"),
    ],
)
def test_sanitize_project_name(name, expected):
    assert sanitize_project_name(name) == expected


@pytest.mark.parametrize(
    ("path", "slug"),
    [
        ("/home/user/src/payments-api", "payments-api-67f4ed43ee39"),
        ("/srv/My Project (2024)!", "my-project-2024-61dc991c0cce"),
        ("/", "project-8a5edab28263"),
    ],
)
def test_project_slug_table(path, slug):
    assert project_slug(path) == slug


@given(st.text(alphabet=st.characters(exclude_categories=("Cs",)), min_size=1).map(lambda s: "/" + s))
def test_project_slug_is_name_dash_12_hex_of_the_path(path):
    slug = project_slug(path)
    name, _, digest = slug.rpartition("-")
    assert digest == hashlib.sha256(path.encode("utf-8")).hexdigest()[:12]
    assert name == sanitize_project_name(os.path.basename(path) or path)
    assert len(name) <= 40 and name == name.lower()
    assert "--" not in slug and not name.endswith("-") and not name.startswith("-")


def test_project_note_path():
    assert project_note_path("/home/u/.codex", "p-0123456789ab") == (
        "/home/u/.codex/memory/projects/p-0123456789ab/memory.md"
    )


def test_canonical_path_resolves_symlinks_and_drops_trailing_slash(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert canonical_path(str(link) + "/") == os.path.realpath(real)
    assert canonical_path("/") == "/"


def test_project_root_is_the_git_work_tree_root(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    deep = tmp_path / "repo" / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_project_root(deep) == canonical_path(tmp_path / "repo")


def test_a_git_file_marks_a_linked_work_tree(tmp_path):
    tree = tmp_path / "worktree"
    (tree / "sub").mkdir(parents=True)
    (tree / ".git").write_text("gitdir: /elsewhere/.git/worktrees/w\n")
    assert find_project_root(tree / "sub") == canonical_path(tree)


def test_outside_git_the_directory_itself_is_the_project(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    # tmp_path is not inside a git work tree on the test machines; guard anyway
    if find_project_root(tmp_path) != canonical_path(tmp_path):
        pytest.skip("the temporary directory is inside a git work tree")
    assert find_project_root(plain) == canonical_path(plain)


def test_a_symlinked_working_directory_maps_to_the_real_project(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(tmp_path / "repo")
    assert find_project_root(tmp_path / "alias") == canonical_path(tmp_path / "repo")
    assert project_slug(find_project_root(tmp_path / "alias")) == project_slug(
        canonical_path(tmp_path / "repo")
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("# Project memory\n\nProject: /a/b\nUpdated: 2026-01-01\n", "/a/b"),
        ("Project:   /a/b  \n", "/a/b"),  # trimmed
        ("Project:/a/b\r\n", "/a/b"),
        ("# Project memory\n", None),
        ("  Project: /a/b\n", None),  # must start the line
        ("Project: /first\nProject: /second\n", "/first"),
    ],
)
def test_note_project_line(text, value):
    assert note_project_line(text) == value


def test_check_note_found_and_collisions():
    text = "# Project memory\n\nProject: /a/b\n"
    found = check_note("/a/b", "b-1", "/h/memory.md", text, text.encode())
    assert found.status == "found" and found.problem is None
    moved = check_note("/a/c", "c-1", "/h/memory.md", text, text.encode())
    assert moved.status == "collision"
    assert "belongs to '/a/b', not '/a/c'" in moved.problem
    nameless = check_note("/a/b", "b-1", "/h/memory.md", "# Project memory\n", b"")
    assert nameless.status == "collision"
    assert "no 'Project:' line" in nameless.problem and "Project: /a/b" in nameless.problem


def test_trailing_slash_in_project_line_is_not_the_same_path():
    text = "Project: /a/b/\n"
    assert check_note("/a/b", "b-1", "/h/memory.md", text, text.encode()).status == "collision"
