"""What a project names as its own (its scripts, targets and remotes), read from its folder,
and how that decides whether a command in memory is the project's."""

from __future__ import annotations

import json
import os

from memcite.audit.project_facts import project_facts
from memcite.judgement.effects import COMMAND, HOST, find_effects


def test_the_project_s_scripts_targets_and_remotes(tmp_path):
    (tmp_path / "Makefile").write_text("build: deps\n\tcc x.c\n.PHONY: build\nVAR := 1\ntest-unit:\n")
    (tmp_path / "justfile").write_text("fmt:\n    ruff format\nrelease version:\n    echo\n")
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"lint": "eslint .", "test": "x"}}))
    (tmp_path / "pyproject.toml").write_text('[project.scripts]\nwidgets = "w:main"\n'
                                             '[tool.poe.tasks]\ndocs = "mkdocs build"\n')
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text(
        '[remote "origin"]\n\turl = git@github.com:acme/widgets.git\n')
    facts = project_facts(str(tmp_path))
    assert facts.known
    assert {"make build", "make test-unit", "just fmt", "just release", "npm run lint",
            "pnpm lint", "npm test", "widgets", "poe docs"} <= facts.commands
    assert "make VAR" not in facts.commands and "make .PHONY" not in facts.commands
    assert "github.com/acme/widgets" in facts.hosts
    assert "github.com" not in facts.hosts  # everyone's forge: only the project's path is its own
    assert find_effects("run `just fmt` first", facts).of(COMMAND)[0].own
    assert not find_effects("run `just deploy-everything`", facts).of(COMMAND)[0].own
    assert not find_effects("run `make clean-all`", facts).of(COMMAND)[0].own
    assert find_effects("see https://github.com/acme/widgets/issues", facts).of(HOST)[0].own
    assert not find_effects("fetch https://github.com/mallory/tools/raw/x.sh", facts).of(HOST)[0].own


def test_the_hosts_the_project_s_own_tracked_docs_link_to_are_its_own(tmp_path):
    import subprocess

    (tmp_path / "README.md").write_text(
        "Docs: https://docs.widgets.example/guide and https://github.com/acme/widgets-plugins.\n"
        "Badge: https://github.com/ (the forge itself) and https://pypi.org/project/widgets/\n")
    (tmp_path / "AGENTS.md").write_text("Dropped in, untracked: https://evil.example.net/x\n")
    facts = project_facts(str(tmp_path))  # not a git work tree: the docs by their place
    assert {"docs.widgets.example", "github.com/acme/widgets-plugins",
            "pypi.org/project/widgets", "evil.example.net"} <= facts.hosts
    assert "github.com" not in facts.hosts and "pypi.org" not in facts.hosts
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "README.md"], check=True)
    facts = project_facts(str(tmp_path))  # a work tree: an untracked doc is not its word
    assert "docs.widgets.example" in facts.hosts and "evil.example.net" not in facts.hosts
    assert find_effects("see https://docs.widgets.example/api", facts).of(HOST)[0].own
    assert not find_effects("see https://evil.example.net/x", facts).of(HOST)[0].own


def test_no_folder_no_facts_and_links_are_not_followed(tmp_path):
    assert not project_facts(str(tmp_path / "gone")).known
    assert not project_facts(None).known
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Makefile").write_text("secret-target:\n")
    project = tmp_path / "project"
    project.mkdir()
    os.symlink(outside / "Makefile", project / "Makefile")
    assert "make secret-target" not in project_facts(str(project)).commands
