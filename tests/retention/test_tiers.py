"""Tier-aware retention and usage per entry: the tier windows (a table), `prune --rule tiered`
(preview, apply on memcite's notes with the archive round trip, apply on MEMORY.md as one
journaled ad-hoc note), the usage guard, and `stats`' entries part against its model."""

from __future__ import annotations

import json
import os
import sqlite3
import time

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.contracts.outputs import PruneOutput, StatsOutput
from memcite.ledger.adhoc_notes import NOTES_FOLDER, is_adhoc_note_name
from memcite.ledger.recording import ReplyInput, record_reply
from memcite.ledger.store import open_store
from memcite.notes.operations import location_of_note, restore_note
from memcite.notes.storage import locate_note
from memcite.retention.entries import read_entries
from memcite.retention.entry_report import chain_heads, memory_citations, memory_entries
from memcite.retention.tiers import DEFAULT, TierWindows, judge

DAY = 86_400
NOW = 1_800_000_000
CLASSIC = {"imp_days": 60, "sec_days": 14}  # the fixed windows memcite had before decay
runner = CliRunner()


# --------------------------------------------------------------------------- the windows


@pytest.mark.parametrize(
    ("tier", "last_cited_days", "created_days", "windows", "action", "says"),
    [
        ("CORE", None, 900, DEFAULT, "keep", "never pruned"),
        ("CORE", 400, None, {"core_days": 365}, "review", "unused for 400 days, review after 365"),
        ("IMP", None, 59, CLASSIC, "keep", "used within 60 days"),
        ("IMP", None, 60, CLASSIC, "review", "unused for 60 days, review after 60"),
        ("IMP", 10, 300, DEFAULT, "keep", "last cited 10 days ago"),
        ("IMP", 61, 300, CLASSIC, "review", "last cited 61 days ago"),
        ("SEC", 13, 100, CLASSIC, "keep", "used within 14 days"),
        ("SEC", 14, 100, CLASSIC, "prune", "unused for 14 days, prune after 14"),
        ("SEC", None, 30, DEFAULT, "prune", "never cited, written 30 days ago"),
        ("SEC", None, None, DEFAULT, "keep", "unknown"),
        ("SEC", 1, None, {"sec_days": 0}, "prune", "prune at once"),
        ("SEC", 400, None, {"sec_days": "never"}, "keep", "never pruned"),
        ("IRR", 0, 0, DEFAULT, "prune", "prune at once"),
        ("IRR", None, None, DEFAULT, "prune", "prune at once"),
        ("IRR", 0, None, {"irr_days": 7}, "keep", "used within 7 days"),
        (None, None, 999, DEFAULT, "keep", "no tier"),
    ],
)
def test_tier_windows(tier, last_cited_days, created_days, windows, action, says):
    if isinstance(windows, dict):
        windows = TierWindows.from_config(windows)
    verdict = judge(tier, now=NOW,
                    last_cited=None if last_cited_days is None else NOW - last_cited_days * DAY,
                    created_at=None if created_days is None else NOW - created_days * DAY,
                    windows=windows)
    assert verdict.action == action
    assert says in verdict.reason


@pytest.mark.parametrize("table", [{"sec_days": -1}, {"sec_days": "soon"}, {"sec_days": True},
                                   {"secondary": 3}])
def test_bad_windows_are_refused(table):
    from memcite.errors import InputError

    with pytest.raises(InputError):
        TierWindows.from_config(table)


# --------------------------------------------------------------------------- a Codex home

MEMORY = """# Task Group: payments
applies_to: cwd=/home/dev/payments

## Decisions
- [CORE] Decision: use gRPC + REST gateway — the current API
  Source: s1
  Evidence: e1
  Confidence: HIGH
- [IRR] Decision: use REST API
  superseded_by: Decision: migrate to gRPC
- [IRR] Decision: migrate to gRPC
  superseded_by: Decision: use gRPC + REST gateway
- [IMP] Deploy staging before production
  Source: s2
  Evidence: e2
  Confidence: MEDIUM
- [SEC] The flaky test is retried once
- [SEC] Port 5434 for the local database
- Untiered fact about the build
"""
# line numbers of the entries above
CORE_LINE, REST_LINE, GRPC_LINE, IMP_LINE, SEC_CITED_LINE, SEC_STALE_LINE, PLAIN_LINE = \
    5, 9, 11, 13, 17, 18, 19


def _cite(conn, root, lines: list[int], days_ago: int, key: str) -> None:
    entries = "\n".join(f"MEMORY.md:{n}-{n}|note=[used]" for n in lines)
    text = (f"ok\n<oai-mem-citation>\n<citation_entries>\n{entries}\n</citation_entries>\n"
            "<rollout_ids>\n</rollout_ids>\n</oai-mem-citation>")
    record_reply(conn, ReplyInput(text, id=key, at=NOW - days_ago * DAY), memory_root=root,
                 now=NOW - days_ago * DAY)


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A Codex home whose MEMORY.md has every tier, written 100 days ago, and a ledger in
    which the SEC entry at line 17 was cited 3 days ago and the IMP one 90 days ago."""
    codex = tmp_path / "codex"
    memories = codex / "memories"
    memories.mkdir(parents=True)
    (memories / "MEMORY.md").write_text(MEMORY)
    os.utime(memories / "MEMORY.md", (NOW - 100 * DAY, NOW - 100 * DAY))
    db = tmp_path / "memcite.sqlite"
    conn = open_store(db)
    _cite(conn, memories, [SEC_CITED_LINE], 3, "r1")
    _cite(conn, memories, [IMP_LINE, SEC_CITED_LINE], 90, "r2")
    conn.close()
    for key, value in {"CODEX_HOME": str(codex), "MEMCITE_DB": str(db),
                       "MEMCITE_CONFIG": str(tmp_path / "config.toml")}.items():
        monkeypatch.setenv(key, value)
    return codex, db


def _prune(*args: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["prune", "--rule", "tiered", "--json", "--as-of", str(NOW),
                                 *args])
    assert result.exit_code == 0, result.output
    return result.exit_code, json.loads(result.stdout)


def test_the_preview_lists_every_tiered_entry_and_why(home):
    _, out = _prune()
    PruneOutput.model_validate_json(json.dumps(out))
    got = {(row["line_start"], row["tier"], row["action"]): row for row in out["entries"]}
    assert sorted(got) == sorted([
        (CORE_LINE, "CORE", "keep"), (REST_LINE, "IRR", "prune"), (GRPC_LINE, "IRR", "prune"),
        (IMP_LINE, "IMP", "review"), (SEC_CITED_LINE, "SEC", "keep"),
        (SEC_STALE_LINE, "SEC", "prune")])
    assert out["untiered"] == 1
    assert got[(SEC_CITED_LINE, "SEC", "keep")]["citations"] == 2
    assert "last cited 3 days ago" in got[(SEC_CITED_LINE, "SEC", "keep")]["reason"]
    assert "survival 0.55 at or below 0.6: review (last cited 90 days ago" in \
        got[(IMP_LINE, "IMP", "review")]["reason"]
    assert "never cited, written 100 days ago" in got[(SEC_STALE_LINE, "SEC", "prune")]["reason"]
    assert out["entry_result"] is None and out["applied"] is False
    text = runner.invoke(app, ["prune", "--rule", "tiered", "--as-of", str(NOW)]).stdout
    assert "6 entries with a tier, 4 to act on, 1 without a tier" in text
    assert "nothing changed: this is a preview" in text


def test_apply_on_memory_md_writes_one_journaled_adhoc_note_and_never_edits_it(home):
    codex, db = home
    before = (codex / "memories" / "MEMORY.md").read_bytes()
    _, out = _prune("--apply")
    PruneOutput.model_validate_json(json.dumps(out))
    asked = out["entry_result"]["codex"]
    note = asked["note_path"]
    assert os.path.dirname(note) == str(codex / "memories" / NOTES_FOLDER)
    assert is_adhoc_note_name(os.path.basename(note))
    assert (codex / "memories" / "MEMORY.md").read_bytes() == before
    text = open(note).read()
    assert text.startswith("# Tiered retention: remove 3, review 1 MEMORY.md entries\n")
    remove, review = text.split("## Remove")[1].split("## Review (demote or drop)")
    assert "[SEC] Port 5434 for the local database" in remove
    assert "[IRR] Decision: use REST API" in remove
    assert "[IMP] Deploy staging before production" in review
    assert "- evidence: cited 1 time in the replies memcite recorded; last cited 2026-10-17" \
        in review
    assert "[CORE]" not in text and "[SEC] The flaky test" not in text
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT action, state, note_path FROM entry_requests ORDER BY line_start"
                        ).fetchall()
    conn.close()
    assert rows == [("prune", "done", note), ("prune", "done", note), ("review", "done", note),
                    ("prune", "done", note)]
    # Asked once: a second run asks nothing new and writes no second note.
    _, again = _prune("--apply")
    assert again["entry_result"]["codex"]["note_path"] is None
    assert len(again["entry_result"]["codex"]["dropped"]) == 4
    assert len(os.listdir(codex / "memories" / NOTES_FOLDER)) == 1


def test_a_note_left_pending_by_a_dead_run_is_settled(home):
    codex, db = home
    from memcite.retention import tiered

    conn = open_store(db)
    files = [memory_entries(str(codex / "memories"), memory_citations(conn, None), now=NOW)]
    judged, _ = tiered.judge_entries(files, now=NOW)

    def die(step):
        if step == "intent_committed":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tiered.request_entries(conn, tiered.to_act_on(judged, "codex"), codex_home=str(codex),
                               memory_folder=str(codex / "memories"), now=NOW, checkpoint=die)
    assert {r[0] for r in conn.execute("SELECT state FROM entry_requests")} == {"pending"}
    settled = tiered.settle_entry_requests(conn, now=NOW)
    assert [item["state"] for item in settled] == ["rolled_back"]
    assert not os.path.exists(codex / "memories" / NOTES_FOLDER) or \
        not os.listdir(codex / "memories" / NOTES_FOLDER)
    conn.close()


def test_apply_on_notes_archives_the_entries_and_note_restore_brings_them_back(home, tmp_path):
    codex, db = home
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "config.toml").write_text("[retention.tiers]\nimp_days = 10\n")
    for text, tier in (("Debug flag is FOO_DEBUG=1", "SEC"), ("Old caching idea", "IRR"),
                       ("Use REST for the public API", "CORE"), ("Staging first", "IMP")):
        result = runner.invoke(app, ["note", "save", text, "--section", "state", "--tier", tier,
                                     "--yes", "--cwd", str(project)])
        assert result.exit_code == 0, result.output
    location = locate_note(str(project), str(codex))
    before = open(location.note_file).read()
    # Notes are never cited: their entries count from their Date: line (today), so judge later.
    result = runner.invoke(app, ["prune", "--rule", "tiered", "--json", "--as-of",
                                 str(int(time.time()) + 30 * DAY), "--apply"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    PruneOutput.model_validate_json(result.stdout)
    archived = out["entry_result"]["notes"]["archived"]
    assert sorted(item["title"] for item in archived) == ["Debug flag is FOO_DEBUG=1",
                                                         "Old caching idea"]
    skipped = out["entry_result"]["notes"]["skipped"]
    assert [(item["title"], item["action"]) for item in skipped] == [("Staging first", "review")]
    assert "to review: reported, not archived" in skipped[0]["why"]
    remaining = [e.title for e in read_entries(open(location.note_file).read())]
    assert remaining == ["Use REST for the public API", "Staging first"]
    conn = open_store(db)
    for item in archived:
        assert os.path.dirname(item["archived"]) == location.archive_dir
        restore_note(location_of_note(str(codex), location.note_file),
                     os.path.basename(item["archived"]), now=NOW, today="2027-01-15", conn=conn)
    conn.close()
    after = sorted(e.title for e in read_entries(open(location.note_file).read()))
    assert after == sorted(e.title for e in read_entries(before))


def test_tiered_needs_the_citation_log_unless_judged_anyway(tmp_path, monkeypatch):
    codex = tmp_path / "codex"
    (codex / "memories").mkdir(parents=True)
    (codex / "memories" / "MEMORY.md").write_text(MEMORY)
    monkeypatch.setenv("CODEX_HOME", str(codex))
    monkeypatch.setenv("MEMCITE_DB", str(tmp_path / "memcite.sqlite"))
    monkeypatch.setenv("MEMCITE_CONFIG", str(tmp_path / "config.toml"))
    open_store(tmp_path / "memcite.sqlite").close()  # a ledger with no reply
    refused = runner.invoke(app, ["prune", "--rule", "tiered", "--apply"])
    assert refused.exit_code == 3
    assert "usage unknown" in refused.output and "--judge-without-usage" in refused.output
    assert not (codex / "memories" / NOTES_FOLDER).exists()
    judged = runner.invoke(app, ["prune", "--rule", "tiered", "--judge-without-usage"])
    assert judged.exit_code == 0, judged.output


@pytest.mark.parametrize("option", [["--in-codex-db", "--apply"], ["--max-unused-days", "3"],
                                    ["--include-recent-threads"]])
def test_options_of_the_other_rules_are_refused(home, option):
    result = runner.invoke(app, ["prune", "--rule", "tiered", *option])
    assert result.exit_code == 2
    assert "does not apply to --rule tiered" in result.output


def test_the_default_rules_are_unchanged_by_tiered(home):
    result = runner.invoke(app, ["prune", "--rule", "nope"])
    assert result.exit_code == 2


# --------------------------------------------------------------------------- stats' entries


def test_stats_entries_json_against_the_model(home):
    codex, db = home
    result = runner.invoke(app, ["stats", "--json", "--as-of", str(NOW), "--judge-without-usage"])
    assert result.exit_code == 0, result.output
    entries = StatsOutput.model_validate_json(result.stdout).entries
    assert entries is not None
    assert entries.tiers.model_dump() == {"CORE": 1, "IMP": 1, "SEC": 2, "IRR": 2, "none": 1}
    assert entries.count == 7 and entries.citations == 3
    top = entries.most_relevant[0]
    assert (top.line_start, top.tier, top.citations) == (SEC_CITED_LINE, "SEC", 2)
    assert top.relevance == pytest.approx(0.4 * 0.95 ** 3, abs=1e-6)
    assert entries.least_relevant[0].tier == "IRR"
    assert entries.never_cited_count == 5
    assert [chain.head.title for chain in entries.chains] == \
        ["Decision: use gRPC + REST gateway"]
    assert sorted(r.line_start for r in entries.chains[0].replaced) == [REST_LINE, GRPC_LINE]
    raw = json.loads(result.stdout)["entries"]["most_relevant"][0]
    assert raw["last_cited_iso"] == "2027-01-12T08:00:00Z"


def test_stats_follows_an_entry_moved_by_an_edit_above_it(home):
    codex, db = home
    path = codex / "memories" / "MEMORY.md"
    path.write_text("# Preface\n- [CORE] A new first entry\n\n" + MEMORY)
    result = runner.invoke(app, ["stats", "--json", "--as-of", str(NOW), "--judge-without-usage"])
    entries = json.loads(result.stdout)["entries"]
    moved = {row["line_start"]: row["citations"] for row in entries["most_relevant"]}
    assert moved[SEC_CITED_LINE + 3] == 2
    assert entries["files"][0]["moved"] == 3 and entries["files"][0]["unattributed"] == 0


def test_a_chain_that_loops_has_no_head():
    text = "- [IRR] A\n  superseded_by: B\n- [IRR] B\n  superseded_by: A\n"
    from memcite.retention.entry_report import FileEntries
    from memcite.retention.entry_usage import EntryUsage

    usage = tuple(EntryUsage(e, 0, None, 0.1) for e in read_entries(text))
    chains = chain_heads([FileEntries("m.md", "codex", usage, None)])
    assert [(c["head"], c["loop"], len(c["replaced"])) for c in chains] == [(None, True, 2)]


def test_day_seconds_agrees_with_the_calendar():
    import calendar
    import datetime

    from memcite.retention.entry_report import day_seconds

    day = datetime.date(1600, 1, 1)
    while day.year < 2500:
        assert day_seconds(day.isoformat()) == calendar.timegm(day.timetuple()), day
        day += datetime.timedelta(days=13)
    for bad in ("2026-02-30", "2026-13-01", "2025-02-29", "soon", ""):
        assert day_seconds(bad) is None
    assert day_seconds("2024-02-29 (leap)") == calendar.timegm((2024, 2, 29, 0, 0, 0))
