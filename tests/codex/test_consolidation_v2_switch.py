"""``memcite consolidation``'s ``v2_switch``: what switching a project from memory store v1 to
v2 would change, on synthetic Codex homes (a table: v1 alone, v2 configured with no folder,
v2 alone, both stores sharing memories, v2 memories of other branches and projects)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.codex.v2_switch import Project, scope_of
from memcite.contracts.generate import models

runner = CliRunner()

T1 = "019a0000-0000-7000-8000-000000000001"
T2 = "019a0000-0000-7000-8000-000000000002"
T3 = "019a0000-0000-7000-8000-000000000003"
T4 = "019a0000-0000-7000-8000-000000000004"
T5 = "019a0000-0000-7000-8000-000000000005"
T9 = "019a0000-0000-7000-8000-000000000009"
ORIGIN = "git@github.com:acme/shop.git"

V1_SUMMARY = ("v1\n## User preferences\n- Prefers tabs over spaces in every file.\n"
              "- Answers kept to one short paragraph please.\n## What's in Memory\n- shop\n")
V1_MEMORY = (
    "# Task Group: checkout flow\n"
    "applies_to: cwd={project}; reuse_rule=same repo\n"
    "## Reusable knowledge\n"
    "- The cart total is computed in cents by pricing module.\n"
    "### rollout_summary_files\n"
    f"- rollout_summaries/2026-01-02T10-00-00-aaaa-cart.md (thread_id={T1})\n"
    "\n"
    "# Task Group: release notes\n"
    "applies_to: cwd={project}; reuse_rule=same repo\n"
    "- Release notes live in docs/changes and list every flag.\n"
    "- Tag releases only after the smoke suite passes on staging.\n"
    "### rollout_summary_files\n"
    f"- rollout_summaries/2026-01-03T10-00-00-bbbb-notes.md (thread_id={T9})\n")


def rollout(thread: str, text: str, *, cwd: str | None = None, branch: str | None = None) -> str:
    head = f"thread_id: {thread}\nupdated_at: 2026-01-02T10:00:00Z\n"
    head += f"cwd: {cwd}\n" if cwd else ""
    head += f"git_branch: {branch}\n" if branch else ""
    return head + "\n" + text + "\n"


def v2_summary(*routes: str) -> str:
    return ("v1\n## User Profile\nA developer.\n## User preferences\n"
            "- Prefers tabs over spaces in every file.\n## General Tips\n- Run the tests first.\n"
            "## What's in Memory\n"
            + "".join(f"- rollout_summaries/{name} — work on the shop; thread_id={thread}\n"
                      for name, thread in routes))


def make_project(tmp_path):
    """A git work tree (its .git written by hand: no git run) on branch main, origin ORIGIN."""
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (project / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {ORIGIN}\n')
    (project / "src").mkdir()
    return project


def threads_db(home, rows):
    conn = sqlite3.connect(home / "state_5.sqlite")
    conn.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, cwd TEXT, memory_mode TEXT,"
                 " git_sha TEXT, git_branch TEXT, git_origin_url TEXT)")
    conn.executemany("INSERT INTO threads VALUES (?, ?, 'enabled', NULL, ?, ?)", rows)
    conn.commit()
    conn.close()


def build(tmp_path, case: str):
    home = tmp_path / "codex"
    home.mkdir()
    project = make_project(tmp_path)
    config = "[features]\nmemories = true\n"
    v1 = home / "memories"
    v2 = home / "memories_v2"
    if case in ("v1_only", "v2_configured", "both", "branches"):
        v1.mkdir()
        (v1 / "memory_summary.md").write_text(V1_SUMMARY)
        (v1 / "MEMORY.md").write_text(V1_MEMORY.replace("{project}", str(project)))
    if case == "v2_configured":
        config += "[memories]\nversion = \"v2\"\n"
    if case in ("v2_only", "both", "branches"):
        (v2 / "rollout_summaries").mkdir(parents=True)
    if case == "v2_only":
        (v2 / "memory_summary.md").write_text(v2_summary(("2026-01-02T10-00-00-aaaa-cart.md", T1)))
        (v2 / "rollout_summaries" / "2026-01-02T10-00-00-aaaa-cart.md").write_text(
            rollout(T1, "Worked on the cart total.", cwd=str(project / "src"), branch="main"))
    if case == "both":
        (v2 / "memory_summary.md").write_text(v2_summary(("2026-01-02T10-00-00-aaaa-cart.md", T1)))
        # T9's text carried word for word, not its thread: one line of its group is kept
        (v2 / "rollout_summaries" / "2026-01-02T10-00-00-aaaa-cart.md").write_text(rollout(
            T1, "- release notes live in docs/changes and list every flag", cwd=str(project),
            branch="main"))
    if case == "branches":
        (v2 / "memory_summary.md").write_text(v2_summary(
            ("2026-01-02T10-00-00-aaaa-cart.md", T1), ("2026-01-04T10-00-00-cccc-x.md", T3),
            ("2026-01-05T10-00-00-dddd-gone.md", T5)))
        for name, thread, cwd in (("2026-01-02T10-00-00-aaaa-cart.md", T1, None),
                                  ("2026-01-03T11-00-00-eeee-flag.md", T2, None),
                                  ("2026-01-04T10-00-00-cccc-x.md", T3, None),
                                  ("2026-01-06T10-00-00-ffff-doc.md", T4, str(project / "src"))):
            (v2 / "rollout_summaries" / name).write_text(rollout(thread, "Some work.", cwd=cwd))
        threads_db(home, [(T1, str(tmp_path / "elsewhere"), "main", "https://github.com/acme/shop"),
                          (T2, str(project), "feature-x", "ssh://git@github.com/acme/shop.git"),
                          (T3, str(project), "main", "git@github.com:acme/other.git")])
    (home / "config.toml").write_text(config)
    return home, project


def run(home, project, monkeypatch, *, json_out=True):
    monkeypatch.chdir(project / "src")
    args = ["consolidation", "--codex-home", str(home)] + (["--json"] if json_out else [])
    result = runner.invoke(app, args)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout) if json_out else result.stdout


def only(change):
    return [(x["file"], x["line"], x["text"], x["injected"]) for x in change["v1_only"]]


def memories(change):
    return [(x["thread_id"], x["scope"], x["from"], x["injected"]) for x in change["v2_memories"]]


SUMMARY_ONLY = [("memory_summary.md", 4, "- Answers kept to one short paragraph please.", True)]
ALL_V1 = [("memory_summary.md", 3, "- Prefers tabs over spaces in every file.", True),
          *SUMMARY_ONLY,
          ("MEMORY.md", 4, "- The cart total is computed in cents by pricing module.", False),
          ("MEMORY.md", 10, "- Release notes live in docs/changes and list every flag.", False),
          ("MEMORY.md", 11, "- Tag releases only after the smoke suite passes on staging.", False)]


@pytest.mark.parametrize(("case", "sides", "v1_only", "groups", "v2_memories"), [
    # v2 configured but no v2 folder: every memory line of v1 is v1's alone
    ("v2_configured", (True, False), ALL_V1, 2, []),
    # v2 alone: nothing only in v1; its one memory is this branch's (its header: cwd, branch)
    ("v2_only", (False, True), [], 0, [(T1, "this_branch", "rollout_summary", True)]),
    # both: T1's group carried by its thread, a line of T9's group by its words, the shared
    # preference by its words; the rest is v1's alone
    ("both", (True, True),
     [*SUMMARY_ONLY,
      ("MEMORY.md", 11, "- Tag releases only after the smoke suite passes on staging.", False)],
     1, [(T1, "this_branch", "rollout_summary", True)]),
    # Codex's threads table decides: the same origin spelled three ways is this project
    # (T1 from another clone), T2 another branch, T3 another repository; T4 has no row (its
    # header's cwd is inside the project, no branch), T5 is only a route of the summary
    ("branches", (True, True),
     [*SUMMARY_ONLY, *ALL_V1[3:]], 1,
     [(T1, "this_branch", "threads", True), (T4, "this_project", "rollout_summary", False),
      (T2, "other_branch", "threads", False), (T3, "other_project", "threads", True),
      (T5, "unknown", None, True)]),
])
def test_v2_switch_reports_each_store_and_what_only_v1_has(tmp_path, monkeypatch, case, sides,
                                                           v1_only, groups, v2_memories):
    home, project = build(tmp_path, case)
    data = run(home, project, monkeypatch)
    models()["consolidation"].model_validate(data)
    change = data["v2_switch"]
    assert (change["project_root"], change["git_branch"], change["git_origin_url"]) == \
        (str(project), "main", ORIGIN)
    assert (change["v1"]["present"], change["v2"]["present"]) == sides
    assert change["v1"]["injects"] is sides[0] and change["v2"]["injects"] is sides[1]
    if sides[0]:
        assert change["v1"]["tokens"] == -(-len(V1_SUMMARY.strip().encode()) // 4)
    assert only(change) == v1_only
    assert change["v1_only_counts"] == {
        "lines": len(v1_only), "summary_lines": sum(x[0] == "memory_summary.md" for x in v1_only),
        "injected_lines": sum(x[3] for x in v1_only),
        "memory_lines": sum(x[0] == "MEMORY.md" for x in v1_only), "task_groups": groups}
    assert memories(change) == v2_memories
    assert sum(change["v2_counts"].values()) == len(v2_memories)
    text = run(home, project, monkeypatch, json_out=False)
    assert f"switching {project} (main) from store v1 to v2" in text
    if v1_only:
        assert f"only in v1 (no v2 file carries them): {len(v1_only)} line" in text
        assert f"    {v1_only[-1][0]}:{v1_only[-1][1]}: {v1_only[-1][2]}\n" in text
    else:
        assert "only in v1: nothing" in text


def test_a_home_without_v2_gets_no_switch_section(tmp_path, monkeypatch):
    home, project = build(tmp_path, "v1_only")
    data = run(home, project, monkeypatch)
    assert data["v2_switch"] is None
    models()["consolidation"].model_validate(data)
    assert "switching" not in run(home, project, monkeypatch, json_out=False)


def test_the_branch_table_text_counts_scopes(tmp_path, monkeypatch):
    home, project = build(tmp_path, "branches")
    text = run(home, project, monkeypatch, json_out=False)
    assert ("  v2 holds 5 memories: 1 this branch (1 routed in its summary), 1 this project "
            "(branch unknown), 1 another branch of this project, 1 other projects (1 routed in "
            "its summary), 1 no project known (1 routed in its summary)\n") in text


@pytest.mark.parametrize(("thread", "project", "scope"), [
    ({"cwd": "/w/shop/src", "git_branch": "main"}, Project("/w/shop", "/w/shop", "main", None),
     "this_branch"),
    ({"cwd": "/w/shop", "git_branch": "dev"}, Project("/w/shop", "/w/shop", "main", None),
     "other_branch"),
    ({"cwd": "/w/shop", "git_branch": None}, Project("/w/shop", "/w/shop", "main", None),
     "this_project"),
    ({"cwd": "/w/shop", "git_branch": "main"}, Project("/w/shop", "/w/shop", None, None),
     "this_project"),
    ({"cwd": "/w/shopping", "git_branch": "main"}, Project("/w/shop", "/w/shop", "main", None),
     "other_project"),
    # origins known on both sides outrank the folder
    ({"cwd": "/w/shop", "git_branch": "main", "git_origin_url": "git@h:a/b.git"},
     Project("/w/shop", "/w/shop", "main", "https://h/a/c"), "other_project"),
    ({"cwd": "/x/clone", "git_branch": "main", "git_origin_url": "git@h:a/b.git"},
     Project("/w/shop", "/w/shop", "main", "https://h/a/b"), "this_branch"),
    ({}, Project("/w/shop", "/w/shop", "main", None), "unknown"),
])
def test_scope_of_a_v2_memory(thread, project, scope):
    assert scope_of(thread, project) == scope


def test_what_the_read_path_cuts_is_not_injected(tmp_path, monkeypatch):
    """Both summaries past the budget of 2,500 tokens (10,000 bytes): Codex keeps their head
    and tail; a line and a route in the middle are there but not injected."""
    home, project = build(tmp_path, "both")
    filler = "".join(f"- filler line number {n} about nothing in particular at all\n"
                     for n in range(200))
    middle = "- Deploy the shop with the blue green switch only.\n"
    half = "".join(filler.splitlines(keepends=True)[:100])
    (home / "memories" / "memory_summary.md").write_text(V1_SUMMARY + half + middle + half)
    # the filler is v2's too (in T1's rollout summary): the middle line alone is v1's
    (home / "memories_v2" / "rollout_summaries" / "2026-01-02T10-00-00-aaaa-cart.md").write_text(
        rollout(T1, filler, cwd=str(project), branch="main"))
    route = f"- rollout_summaries/2026-01-02T10-00-00-aaaa-cart.md — cart work; thread_id={T1}\n"
    (home / "memories_v2" / "memory_summary.md").write_text(
        v2_summary() + filler.replace("filler", "padding") + route + filler.replace("filler", "pad"))
    change = run(home, project, monkeypatch)["v2_switch"]
    assert change["v1"]["truncated"] and change["v2"]["truncated"]
    assert change["v1"]["omitted_tokens"] > 0 and change["v2"]["omitted_tokens"] > 0
    mine = [x for x in change["v1_only"] if x["text"] == middle.strip()]
    assert [(x["file"], x["injected"]) for x in mine] == [("memory_summary.md", False)]
    assert [(x["thread_id"], x["injected"]) for x in change["v2_memories"]] == [(T1, False)]
    assert change["v1_only_counts"] == {"lines": 4, "summary_lines": 2, "injected_lines": 1,
                                        "memory_lines": 2, "task_groups": 1}
