"""The commands' text and work as library functions, called without the command line: what the
note, event, lint, conformance and schema commands print comes from their wings."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from memcite.conformance.check import check_timeout, render_check_summary
from memcite.conformance.fuzz import progress_line, render_fuzz_summary
from memcite.contracts import SCHEMAS, render_schema_list, shipped_schema
from memcite.errors import InputError
from memcite.lint.findings import make_finding
from memcite.lint.output import counted, render_findings, report_json, summary_line
from memcite.lint.run import LintReport, lint_targets
from memcite.notes import render
from memcite.notes.operations import save_drafts
from memcite.notes.storage import locate_note


@pytest.fixture
def location(tmp_path):
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    return locate_note(str(project), str(home))


def test_note_path_text_names_each_place(location):
    text = render.render_path(location, False)
    assert text.splitlines() == [
        f"project folder: {location.project_folder}", f"canonical path: {location.project}",
        f"slug:           {location.slug}", f"note:           {location.note_file} (none yet)",
        f"archive:        {location.archive_dir}"]


def test_a_dry_run_save_prints_the_note_and_says_nothing_was_written(location):
    result = SimpleNamespace(written=False, text="# Project memory", location=location)
    assert render.save_lines(result) == [("out", "# Project memory"),
                                         ("note", "dry run: nothing was written")]


def test_a_draft_file_gives_its_entries_the_options_they_lack(location):
    drafts = save_drafts("# Project memory\n\n## Durable decisions\n- use uv\n", from_file=True,
                         project=location.project, section=None, topic="tooling")
    assert [(d.text, d.topic) for d in drafts] == [("use uv", "tooling")]
    with pytest.raises(InputError, match="--section is required"):
        save_drafts("one entry", from_file=False, project=location.project, section=None)


def test_an_empty_log_and_an_empty_scope_say_so(location):
    assert render.render_log(location, None, [], False) == \
        f"No logged changes for {location.project}.\n"
    assert render.render_scope_list(location, []) == \
        f"No entries in this project's note ({location.note_file}).\n"
    assert render.render_note_list([]) == "No project notes.\n"


def test_lint_text_github_and_json_of_one_finding(tmp_path):
    finding = make_finding("summary-not-v1", "a,b:c.md", 1, 1, "first line\nis not v1", "fix it")
    report = LintReport((finding,), 1)
    assert render_findings([finding]).endswith("[summary-not-v1]\n  hint: fix it\n")
    github = render_findings([finding], "github")
    assert github.startswith("::error file=a%2Cb%3Ac.md,line=1,col=1,title=memcite summary-not-v1::")
    assert "first line%0Ais not v1 (fix it)" in github
    assert summary_line(report) == "1 error, 0 warnings in 1 file"
    assert report_json(report, ["x"], 12.7)["checked_at"] == 12 and counted(report, False) == 1


def test_lint_targets_are_the_paths_named_else_the_defaults_that_exist(tmp_path):
    with pytest.raises(InputError, match="no such file or folder"):
        lint_targets([str(tmp_path / "nope")], [])
    folder = tmp_path / "memories"
    folder.mkdir()
    targets, report = lint_targets(None, [str(folder), str(tmp_path / "absent")])
    assert targets == [str(folder)] and report.files == 0


def test_conformance_texts_and_the_timeout_check():
    report = {"cases": 3, "kind": "reply", "agreed": 1, "differed": 1, "failed": 1,
              "fields": ["visible"], "stopped": "timeouts", "timeouts_in_a_row": 3, "not_run": 9}
    text = render_check_summary(report, 2.5)
    assert text.startswith("3 reply cases: 1 agree, 1 differ, 1 failed (visible compared)\n")
    assert "(--timeout 2.5 s each)" in text and "9 cases not run" in text
    assert progress_line(4, {"outcome": "differs", "fields": ["ids"]}) == "reply 4: differs on ids\n"
    assert render_fuzz_summary({"shrunk": [], "seed": 1, "generated": 2, "seconds": 0.5,
                                "disagreements": 0}).endswith("0 cases written\n")
    with pytest.raises(InputError, match="--timeout"):
        check_timeout(0)


def test_the_shipped_schemas_are_listed_and_read_without_building_them():
    assert len(render_schema_list().splitlines()) == len(SCHEMAS)
    assert shipped_schema("lint").lstrip().startswith("{")
    with pytest.raises(InputError, match="no schema named"):
        shipped_schema("nope")
