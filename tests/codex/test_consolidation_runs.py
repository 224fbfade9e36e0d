"""What each consolidation did to the memories in use (``memcite.codex.consolidation_runs``),
the snapshots it is judged from (``memcite.ledger.snapshots``), and ``memcite consolidation``
on a synthetic home whose second consolidation drops a cited line, changes a number in
another, adds a line with a path found in no source and absorbs an ad-hoc note."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from memcite.audit.memory_quarantine import folder_stamp
from memcite.cli.app import app
from memcite.codex import consolidation_runs as r
from memcite.contracts.generate import models
from memcite.ledger.memory_files import cited_lines_sha256
from memcite.ledger.snapshots import (
    SnapshotStore,
    after_reply,
    consolidation_summary,
    snapshot_folder,
)

runner = CliRunner()
T1 = "11111111-1111-4111-8111-111111111111"
T2 = "22222222-2222-4222-8222-222222222222"
DAY = 86_400
NOW = 1_800_000_000

BEFORE = f"""# Task Group: build tooling
applies_to: cwd=/work/app; reuse_rule=same repository

## Reusable knowledge
- Run the tests with `make check` before every push.
- The staging server answers on port 8443 behind the proxy.
- Release notes live in docs/releases.md and are written by hand.

### rollout_summary_files
- rollout_summaries/2026-01-02-build.md (thread_id={T1})

# Task Group: data loading
applies_to: cwd=/work/etl; reuse_rule=same repository

## Reusable knowledge
- The loader reads batches of 500 rows from the orders table.

### rollout_summary_files
- rollout_summaries/2026-01-03-etl.md (thread_id={T2})
"""
AFTER = BEFORE.replace("before every push", "before each push") \
    .replace("port 8443", "port 9443") \
    .replace("- Release notes live in docs/releases.md and are written by hand.\n",
             "- Deploy keys are kept in /srv/keys/deploy.pem on the build host.\n"
             "- Keep commits small: one change in each commit.\n")
RAW = (f"# Raw memories\n\n## Thread `{T1}`\nThe staging server moved from port 8443 to "
       f"9443.\nRun make check before pushing.\n\n## Thread `{T2}`\nBatches of 500 rows.\n")
SUMMARIES = {"2026-01-02-build.md": f"thread_id: {T1}\nBuild work: make check; staging port "
                                   "8443 then 9443; docs/releases.md is written by hand.\n",
             "2026-01-03-etl.md": f"thread_id: {T2}\nThe loader reads the orders table.\n"}
NOTE_NAME = "2026-01-04T10-00-00-small-commits.md"
NOTE = "Keep commits small: one change in each commit.\n"


def view(memory, *, summaries=SUMMARIES, notes=None, raw=RAW, summary="v1\nA summary.\n",
         taken_at=NOW, jobs=None):
    return r.View(snapshot_id=None, taken_at=taken_at, memory=memory, summary=summary, raw=raw,
                  rollout_summaries=dict(summaries), notes=dict(notes or {}), jobs=jobs)


def cite(text: str, *lines: int, at: int = NOW - DAY, threads=(T1,)) -> list[r.Cited]:
    data = text.encode()
    return [r.Cited("MEMORY.md", n, n, cited_lines_sha256(data, n, n), at, threads)
            for n in lines]


@pytest.mark.parametrize(("line", "expected"), [
    ("- Run `make check` first.", {"command:make check", "name:make"} - {"name:make"}),
    ("port 8443 behind the proxy", {"number:8443"}),
    ("needs python 3.12.1 or later", {"version:3.12.1"}),
    ("config in ~/.config/app/settings.toml", {"path:~/.config/app/settings.toml"}),
    ("set MAX_WORKERS and use --dry-run", {"name:max_workers", "name:--dry-run"}),
    ("call loadOrders before save_batch", {"name:loadorders", "name:save_batch"}),
    ("plain words only here", set()),
    ("Keep it in ONE place, rated LOW", set()),  # upper case is emphasis
    ("hand-holding for copy/label renames", set()),  # compounds and a/b are words
    (r"under \\?\C:\Users\me\app.bat", {r"path:c:\users\me\app.bat"}),
    (f"thread_id={T1}", set()),  # a key, and a thread id: no fact
    ("applies_to: cwd=/srv/app [Task 2]", {"path:/srv/app"}),
])
def test_facts_of_a_line(line, expected):
    assert r.facts(line) == expected


def test_the_four_planted_changes_and_nothing_else():
    judged = r.judge_run(view(BEFORE), view(AFTER, notes={NOTE_NAME: NOTE}),
                         cite(BEFORE, 5, 6, 7, 16), [], now=NOW, window_days=30,
                         budget_tokens=2500)
    assert [(x["line"], x["why"]) for x in judged["lost"]] == [(7, "unexpected")]
    assert judged["lost"][0]["threads"] == [T1]
    assert [(x["line"], x["facts_gone"], x["facts_new"]) for x in judged["rewritten"]] == \
        [(6, ["number:8443"], ["number:9443"])]
    assert [(x["line"], x["facts"]) for x in judged["unsupported"]] == \
        [(7, ["path:/srv/keys/deploy.pem"])]
    assert judged["came_back"] == []
    assert [(n["note"], n["absorbed"], n["lines"]) for n in judged["notes"]] == \
        [(NOTE_NAME, True, [{"file": "MEMORY.md", "line": 8}])]
    assert r.finding_count(judged) == 3
    assert judged["growth"]["lines"] == 1 and judged["growth"]["task_groups"] == 0


@pytest.mark.parametrize(("case", "after", "cited_lines", "forgets", "summaries", "expected"), [
    ("reworded only", BEFORE.replace("every push", "each push"), (5,), [], SUMMARIES, []),
    ("a detail added is no change of fact", BEFORE.replace("behind the proxy", "behind the proxy "
                                                          "on host-a via `nginx -s reload`"),
     (6,), [], SUMMARIES, []),
    ("a line cited too long ago", BEFORE.replace("- The loader reads batches of 500 rows from "
                                                 "the orders table.\n", ""), (), [], SUMMARIES, []),
    ("forget asked", BEFORE.replace("- The loader reads batches of 500 rows from the orders "
                                    "table.\n", ""), (16,), [r.Forget(T2, NOW - 2 * DAY)],
     SUMMARIES, [("lost", "forget")]),
    ("retention removed its summary", BEFORE.replace("- The loader reads batches of 500 rows "
                                                     "from the orders table.\n", ""), (16,), [],
     {"2026-01-02-build.md": SUMMARIES["2026-01-02-build.md"]}, [("lost", "retention")]),
    ("still readable in its rollout summary", BEFORE.replace(
        "- Release notes live in docs/releases.md and are written by hand.\n", ""), (7,), [],
     {**SUMMARIES, "2026-01-02-build.md": "Release notes: docs/releases.md, written by hand, "
                                         "they live there.\n"}, []),
])
def test_cases_of_lost_and_kept(case, after, cited_lines, forgets, summaries, expected):
    judged = r.judge_run(view(BEFORE), view(after, summaries=summaries),
                         cite(BEFORE, *cited_lines, threads=()) if cited_lines else
                         cite(BEFORE, 16, at=NOW - 90 * DAY), forgets, now=NOW,
                         window_days=30, budget_tokens=2500)
    found = [("lost", x["why"]) for x in judged["lost"]] + \
        [("rewritten", None) for _ in judged["rewritten"]]
    assert found == expected, case


def test_a_forgotten_memory_that_comes_back_and_the_receipt_of_memcites_note():
    gone = BEFORE.split("# Task Group: data loading")[0]
    forget = r.Forget(T2, NOW - 3 * DAY, "x.md")
    back = r.judge_run(view(gone), view(BEFORE), [], [forget], now=NOW, window_days=30,
                       budget_tokens=2500)
    assert {x["thread"] for x in back["came_back"]} == {T2}
    assert any("500 rows" in x["text"] for x in back["came_back"])
    note = "2026-01-05T00-00-00-memcite-forget.md"
    asked = r.judge_run(view(BEFORE), view(gone, notes={note: f"Forget thread {T2}.\n"}), [],
                        [forget], now=NOW, window_days=30, budget_tokens=2500)
    assert [(n["kind"], n["absorbed"]) for n in asked["notes"]] == [("forget", True)]
    kept = r.judge_run(view(BEFORE), view(BEFORE + "\n", notes={note: f"Forget {T2}.\n"}), [],
                       [forget], now=NOW, window_days=30, budget_tokens=2500)
    assert [(n["kind"], n["absorbed"]) for n in kept["notes"]] == [("forget", False)]


def test_a_summary_past_the_budget_is_said_to_be_cut():
    long = "v1\n" + "word " * 3000
    judged = r.judge_run(view(BEFORE), view(BEFORE, summary=long), [], [], now=NOW,
                         window_days=30, budget_tokens=2500)
    assert judged["growth"]["summary_cut"] and judged["growth"]["summary_newly_cut"]
    assert r.finding_count(judged) == 1


def test_job_health_names_dead_jobs_by_error():
    jobs = {"consolidation": {"status": "error", "last_error": "failed_agent",
                              "retry_remaining": 2},
            "extraction": {"by_status": {"done": 5, "error": 3}, "retrying": 1,
                           "dead": {"failed_model": 2}}}
    health = r.jobs_health(jobs)
    assert (health["consolidation"], health["error"], health["retries_left"], health["dead"],
            health["dead_by_error"], health["succeeded"]) == \
        ("error", "failed_agent", 2, 2, {"failed_model": 2}, 5)


# --------------------------------------------------------------------------- the snapshots


def home_with(tmp_path, memory: str, notes=None):
    home = tmp_path / "codex"
    folder = home / "memories"
    (folder / "rollout_summaries").mkdir(parents=True, exist_ok=True)
    (folder / "MEMORY.md").write_text(memory)
    (folder / "memory_summary.md").write_text("v1\nA summary.\n")
    (folder / "raw_memories.md").write_text(RAW)
    for name, text in SUMMARIES.items():
        (folder / "rollout_summaries" / name).write_text(text)
    for name, text in (notes or {}).items():
        (folder / "extensions" / "ad_hoc" / "notes").mkdir(parents=True, exist_ok=True)
        (folder / "extensions" / "ad_hoc" / "notes" / name).write_text(text)
    return home


def look(db, home, folder, *, now):
    """The Stop hook's look at the memory folder."""
    return after_reply(db, str(home), str(folder), folder_stamp(str(folder)), now=now)


def test_snapshots_are_content_addressed_compressed_and_pruned(tmp_path):
    home = home_with(tmp_path, BEFORE)
    db = str(tmp_path / "data" / "memcite.sqlite")
    folder = str(home / "memories")
    first = look(db, home, folder, now=NOW)
    assert first["taken"] == 1
    assert look(db, home, folder, now=NOW + 1) is None  # unchanged: nothing
    store = SnapshotStore(snapshot_folder(db))
    entry = store.index()[0]
    assert entry["baseline"] is True
    assert store.text(entry["files"]["MEMORY.md"]) == BEFORE
    assert not any("consolidation-snapshots" in p for p, _d, _f in os.walk(home))
    objects = os.listdir(os.path.join(snapshot_folder(db), "objects"))
    assert all(name.endswith(".z") and len(name) == 66 for name in objects)
    (home / "memories" / "MEMORY.md").write_text(AFTER)
    assert look(db, home, folder, now=NOW + 2)["taken"] == 2
    # the summaries and raw memories did not change: only MEMORY.md's new bytes were added
    assert len(os.listdir(os.path.join(snapshot_folder(db), "objects"))) == len(objects) + 1
    for n in range(6):
        (home / "memories" / "MEMORY.md").write_text(AFTER + "x" * 3000 + str(n))
        look(db, home, folder, now=NOW + 3 + n)
    small = SnapshotStore(snapshot_folder(db), max_bytes=1)
    kept = small._pruned(small.index())
    assert [s["id"] for s in kept] == [7, 8]  # the last two of the folder stay, whatever the limit


def test_a_link_in_the_objects_folder_is_never_followed_or_removed(tmp_path):
    home = home_with(tmp_path, BEFORE)
    db = str(tmp_path / "data" / "memcite.sqlite")
    look(db, home, str(home / "memories"), now=NOW)
    target = tmp_path / "precious.txt"
    target.write_text("keep")
    link = os.path.join(snapshot_folder(db), "objects", "0" * 64 + ".z")
    os.symlink(target, link)
    (home / "memories" / "MEMORY.md").write_text(AFTER)
    look(db, home, str(home / "memories"), now=NOW + 1)
    assert target.read_text() == "keep" and os.path.islink(link)


# --------------------------------------------------------------------------- the command


REPLY = ("Push after make check.\n\n<oai-mem-citation>\n<citation_entries>\n"
         "MEMORY.md:5-7|note=[build tooling]\nMEMORY.md:16-16|note=[loader]\n"
         f"</citation_entries>\n<rollout_ids>\n{T1}\n</rollout_ids>\n</oai-mem-citation>")


def test_consolidation_reports_the_four_changes_and_nothing_else(tmp_path):
    home = home_with(tmp_path, BEFORE)
    db = str(tmp_path / "memcite.sqlite")
    reply = tmp_path / "reply.txt"
    reply.write_text(REPLY)
    done = runner.invoke(app, ["record", "--db", db, "--codex-home", str(home), str(reply)])
    assert done.exit_code == 0, done.output
    first = runner.invoke(app, ["consolidation", "--db", db, "--codex-home", str(home),
                                "--json"])
    out = json.loads(first.stdout)
    models()["consolidation"].model_validate(out)
    runs = out["memory_runs"][0]
    assert (runs["snapshots"], runs["runs"]) == (1, [])
    assert "history of this folder starts" in runs["history_note"]
    (home / "memories" / "MEMORY.md").write_text(AFTER)
    note_folder = home / "memories" / "extensions" / "ad_hoc" / "notes"
    note_folder.mkdir(parents=True)
    (note_folder / NOTE_NAME).write_text(NOTE)
    second = runner.invoke(app, ["consolidation", "--db", db, "--codex-home", str(home),
                                 "--json"])
    assert second.exit_code == 1, second.output
    out = json.loads(second.stdout)
    models()["consolidation"].model_validate(out)
    run = out["memory_runs"][0]["runs"][0]
    assert run["counts"] == {"lost": 1, "lost_unexpected": 1, "rewritten": 1, "unsupported": 1,
                             "came_back": 0, "notes_absorbed": 1, "notes_not_absorbed": 0}
    assert run["lost"][0]["threads"] == [T1]
    assert run["findings"] == 3
    text = runner.invoke(app, ["consolidation", "--db", db, "--codex-home", str(home)]).stdout
    assert "lost in use (UNEXPECTED): MEMORY.md:7" in text
    assert "rewritten: MEMORY.md:6 -> MEMORY.md:6: number:8443 became number:9443" in text
    assert "unsupported: MEMORY.md:7" in text and "path:/srv/keys/deploy.pem" in text
    assert f"note {NOTE_NAME}: absorbed into MEMORY.md:8" in text
    assert "memory store v2: not ready (0 of 20" in text
    history = runner.invoke(app, ["consolidation", "--db", db, "--codex-home", str(home),
                                  "--history", "--json"])
    assert len(json.loads(history.stdout)["memory_runs"][0]["runs"]) == 1
    # stats shows the counts the last judgement kept
    summary = consolidation_summary(db, str(home / "memories"))
    assert (summary["snapshots"], summary["latest_run"]["counts"]["rewritten"]) == (2, 1)



def test_sync_keeps_a_snapshot_beside_the_ledger(tmp_path):
    home = home_with(tmp_path, BEFORE)
    db = str(tmp_path / "memcite.sqlite")
    done = runner.invoke(app, ["sync", "--db", db, "--codex-home", str(home)])
    assert done.exit_code == 0, done.output
    index = SnapshotStore(snapshot_folder(db)).index()
    assert [(s["reason"], s["store"], s["baseline"]) for s in index] == [("sync", "v1", True)]
    again = runner.invoke(app, ["sync", "--db", db, "--codex-home", str(home)])
    assert again.exit_code == 0 and len(SnapshotStore(snapshot_folder(db)).index()) == 1


def test_a_secret_in_a_lost_or_new_line_is_masked_in_text_and_json():
    from memcite.codex.consolidation_history import run_summary
    from memcite.codex.consolidation_text import render_run

    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    before = BEFORE.replace("written by hand.", f"written by hand with {token}.")
    after = before.replace(f"- Release notes live in docs/releases.md and are written by hand "
                           f"with {token}.\n", f"- Push with `gh auth {token}` from /opt/x.\n")
    judged = r.judge_run(view(before), view(after), cite(before, 7), [], now=NOW,
                         window_days=30, budget_tokens=2500)
    run = run_summary({"id": 1, "baseline": True}, {"id": 2, "taken_at": NOW}, judged)
    assert run["lost"] and run["unsupported"]
    text = "".join(render_run(run))
    assert token not in json.dumps(run) and token not in text
    assert "[REDACTED" in text
