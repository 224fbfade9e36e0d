"""`memcite stats` as a person reads it: a three-line summary first, every line within the
terminal's width, one vocabulary with `show`, one count of each thing, explained."""

from __future__ import annotations

import io
import json
import os
import re

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.demo.loop import demo_paths, run_demo
from memcite.retention.stats import fill_weeks
from memcite.retention.stats_text import columns as _columns
from memcite.retention.stats_text import print_stats, text_width
from memcite.retention.stats_text import print_weeks as _print_weeks

NOW = 1_800_000_000
DAY = 86_400
# A date cut short by the ellipsis (the report cuts labels, never a date).
# A date column cut short; a label that holds a date-like name (a cut
# ``rollout_summaries/2025-12-…`` entry of MEMORY.md) is a label, and labels may be cut.
CUT_DATE = re.compile(r"(?<![\w/-])\d{4}-(\d{0,2}|\d\d-\d?)(…|\.\.\.)")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo's Codex home and database, as `memcite demo --keep` leaves them."""
    folder = str(tmp_path_factory.mktemp("demo"))
    run_demo(folder, now=NOW, out=io.StringIO())
    paths = demo_paths(folder)
    return {"folder": folder, "home": paths["CODEX_HOME"], "db": paths["MEMCITE_DB"]}


def run(args, **env):
    """``memcite ARGS`` in-process (Typer's CliRunner, ``env`` laid over the test's world):
    what is read here is the report's text, which the fast path prints byte for byte the same
    (test_cli_retention's fast-path test), so no process is started for it."""
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, (result.stderr, result.exception)
    return result.stdout


def stats(demo, *more, columns="80", **env):
    """The demo's stats as its step prints them (at ``columns``), and as --json."""
    args = ["stats", "--db", demo["db"], "--codex-home", demo["home"], "--as-of", str(NOW),
            "--max-unused-days", "30", "--limit", "10", "--full", *more]
    env = {"MEMCITE_CACHE_DIR": os.path.join(demo["folder"], "cache"), **env}
    text = run(args, COLUMNS=columns, **env)
    return text, json.loads(run([*args, "--json"], **env))


def section(text: str, title: str) -> list[str]:
    """The lines of the section whose title starts with ``title`` (up to the blank line)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i]), len(lines))
    return lines[start + 1 : end]


# --------------------------------------------------------------------------- the width


@pytest.mark.parametrize("columns", [80, 60])
def test_every_line_fits_the_width_and_no_date_is_cut(demo, columns):
    text, report = stats(demo, columns=str(columns))
    wide, _ = stats(demo, columns="200")
    lines = text.splitlines()
    assert len(lines) > 50  # the whole report, not an error
    too_long = [line for line in lines if _columns(line) > columns]
    assert not too_long
    assert not [line for line in lines if CUT_DATE.search(line)]
    # Every date of the wide report is still there, whole (labels are cut, dates never).
    dates = re.compile(r"\b\d{4}-\d\d-\d\d\b")
    optional = {d["reason"].removeprefix("not cited since ") for d in report["dead"]}
    optional |= {t["last_used_iso"][:10] for t in report["top"]}
    # Only the optional columns (the dead's last citation, the most cited's last use) are
    # left out when narrow.
    assert set(dates.findall(wide)) - set(dates.findall(text)) <= optional
    # Labels are cut with an ellipsis, not wrapped: each listed memory is still on its line.
    rows = section(text, "Dead memories")
    for dead in report["dead"]:
        (line,) = [line for line in rows if dead["thread_id"] in line]
        assert dead["label"][:5] in line


def test_the_width_is_the_terminals_else_80(monkeypatch):
    monkeypatch.setenv("COLUMNS", "123")
    assert text_width(io.StringIO()) == 123
    monkeypatch.setenv("COLUMNS", "10")
    assert text_width(io.StringIO()) == 40  # never narrower than that
    monkeypatch.delenv("COLUMNS")
    assert text_width(io.StringIO()) == 80  # not a terminal


# --------------------------------------------------------------------------- the summary


def test_the_report_opens_with_three_lines_memories_dead_and_what_next(demo):
    text, report = stats(demo)
    first, second, third, blank = text.splitlines()[:4]
    assert re.fullmatch(r"36 memories in the Codex home …\S+/codex_home, as of 2027-01-15", first)
    assert report["memories"] == 36
    # The path is cut at a folder boundary, never in the middle of a name.
    shown = first.split("…", 1)[1].rsplit(", as of", 1)[0]
    assert shown.startswith("/") and report["codex_home"].endswith(shown)
    wide, _ = stats(demo, columns="400")
    assert wide.splitlines()[0] == (
        f"36 memories in the Codex home {report['codex_home']}, as of 2027-01-15")
    assert second == f"{report['dead_count']} dead: unused for more than 30 days (rule memcite)"
    assert report["dead_count"] > 0
    # The command repeats this run's options: without them it would judge another home.
    assert third.startswith("next: memcite prune --max-unused-days 30 --db ")
    assert blank == ""
    assert wide.splitlines()[2] == (
        f"next: memcite prune --max-unused-days 30 --db {demo['db']} --codex-home {demo['home']}"
        f" --as-of {NOW}  (previews asking Codex to forget them)")


def test_what_to_run_next_follows_the_state(demo, tmp_path):
    home_db = os.path.join(demo["home"], "memories_1.sqlite")
    before = os.stat(home_db)
    try:  # Codex wrote its table after the last sync: sync first
        os.utime(home_db, ns=(before.st_atime_ns, before.st_mtime_ns + 10 ** 12))
        # Wide enough for the whole line whatever the length of the temporary folder's path
        # (the paths are in it: at a fixed width a long TMPDIR would have them cut).
        text, _ = stats(demo, columns=str(200 + len(demo["db"]) + len(demo["home"])))
        assert text.splitlines()[2].startswith(
            f"next: memcite sync --db {demo['db']} --codex-home {demo['home']}  (Codex's table "
            "changed after the last sync, ")
    finally:
        os.utime(home_db, ns=(before.st_atime_ns, before.st_mtime_ns))
    text, report = stats(demo, "--max-unused-days", "1000")
    assert report["dead_count"] == 0
    assert text.splitlines()[1] == "none dead: none unused for more than 1000 days (rule memcite)"
    assert text.splitlines()[2].startswith("next: nothing needed")


def test_the_summary_of_a_report_without_replies_asks_for_doctor(demo):
    _, report = stats(demo)
    from memcite.retention.stats import StatsReport

    assert report["totals"]["replies"] > 0
    empty = StatsReport(NOW, "memcite", 30, None, "memcite",
                        {**report["totals"], "replies": 0, "dead": 0}, [], 0, [], [], [],
                        _checks(), [], [])
    empty.codex_home = report["codex_home"]
    out = io.StringIO()
    print_stats(empty, out, width=80, full=True)
    assert out.getvalue().splitlines()[2] == (
        "next: memcite doctor  (no replies recorded yet: is the hook set up?)")


def _checks():
    from memcite.retention.checks import CitationChecks

    return CitationChecks()


# --------------------------------------------------------------------------- one count, explained


def test_the_totals_say_what_each_count_counts(demo):
    text, report = stats(demo, columns="200")
    totals = report["totals"]
    checks = report["citation_checks"]
    assert (f"citations {totals['citations']} in {totals['replies']} replies (memory ids cited; "
            f"Codex's counters add up to {totals['codex_citations']})") in text
    assert (f"cited line ranges {checks['citations']} ({checks['entries']} distinct) in the same "
            "replies, checked below") in text
    assert f"Citation checks: {checks['citations']} cited line ranges ({checks['entries']} " \
           "distinct)" in text
    # The two are different things, and the demo shows both differ: said, not left to guess.
    assert totals["citations"] != checks["citations"]
    # memcite's log and Codex's counters differ on the demo: one line says which is which.
    assert totals["cited_memcite"] != totals["cited_codex"]
    flat = " ".join(text.split())
    assert ("which is which: memcite's log counts the replies memcite read and checked; Codex's "
            "counters also count replies memcite never saw") in flat
    assert "an id cited in two spellings twice" in flat


def test_the_dash_in_the_codex_column_is_explained_once(demo):
    text, report = stats(demo)
    assert any(d["codex_usage_count"] is None for d in report["dead"])
    assert text.count("(Codex -: Codex's counter is empty: Codex never counted a use of it)") == 1
    rows = section(text, "Dead memories")
    assert rows[0].split() == ["thread", "id", "unused", "memcite", "Codex", "label"]
    assert any(row.split()[4] == "-" for row in rows[1:] if row.startswith("  019"))


# --------------------------------------------------------------------------- entries


def _places(rows: list[str]) -> list[str]:
    return [re.search(r"\S+\.md:\d+", row).group(0) for row in rows]


@pytest.mark.parametrize("limit", ["3", "0"])
def test_most_relevant_lists_cited_entries_only_and_least_never_repeats_them(demo, limit):
    text, report = stats(demo, "--limit", limit, columns="200")
    most = section(text, "Most relevant cited entries")
    never = _places(section(text, "Entries never cited"))
    assert most and never
    assert all(int(re.search(r"(\d+) cit\.", row).group(1)) > 0 for row in most)
    assert not set(_places(most)) & set(never)
    cited = [e for e in report["entries"]["most_relevant"] if e["citations"]]
    if limit == "0":  # every cited entry once, in the one list
        assert "Least relevant" not in text
        assert len(most) == len({(e["path"], e["line_start"]) for e in
                                 report["entries"]["least_relevant"] if e["citations"]})
    else:
        least = section(text, "Least relevant cited entries")
        assert len(most) == 3 and len(least) == 3 and len(cited) == 3
        assert not set(_places(most)) & set(_places(least))
        relevance = [float(row.split()[0]) for row in least]
        assert relevance == sorted(relevance)  # least first
        assert max(relevance) <= min(float(row.split()[0]) for row in most)


def test_relevance_split_keeps_each_entry_once():
    from memcite.retention.entries import read_entries
    from memcite.retention.entry_report import FileEntries, relevance_split
    from memcite.retention.entry_usage import EntryUsage

    entries = read_entries("".join(f"- entry {n}\n" for n in range(5)))
    usage = tuple(EntryUsage(e, n % 3, 100 if n % 3 else None, 1.0 / (n + 1))
                  for n, e in enumerate(entries))
    files = [FileEntries("MEMORY.md", "codex", usage, None)]
    most, least = relevance_split(files, limit=2)
    cited = [u.entry.line_start for u in usage if u.citations]
    assert [r["line_start"] for r in most] == cited[:2]
    assert [r["line_start"] for r in least] == list(reversed(cited[2:]))
    assert relevance_split(files, limit=10) == ([r for r in most + list(reversed(least))], [])


# --------------------------------------------------------------------------- the weekly chart


def _weeks(counts: list[int]) -> list[dict]:
    return fill_weeks([(2900 + i, n) for i, n in enumerate(counts) if n],
                      first=2900, last=2900 + len(counts) - 1)


@pytest.mark.parametrize(("width", "expected"), [
    (120, r"Citations per week, 2025-08-04 to 2025-09-15: 2 of 7 weeks had any, at most 5 "
          r"\(week of 2025-09-08\)"),
    (80, r"Citations per week: 2 of 7 weeks had any, at most 5 \(week of 2025-09-08\)")])
def test_a_chart_of_mostly_empty_weeks_is_one_line(width, expected):
    out = io.StringIO()
    _print_weeks(_weeks([0, 3, 0, 0, 0, 5, 0]), out, width=width)
    lines = out.getvalue().strip("\n").splitlines()
    assert len(lines) == 1
    assert re.fullmatch(expected, lines[0])
    assert "█" not in out.getvalue()


@pytest.mark.parametrize("counts", [[0, 3, 0, 1], [2, 1, 2, 5, 4]], ids=["half", "full"])
def test_a_chart_of_busy_weeks_is_drawn_within_the_width(counts):
    out = io.StringIO()
    _print_weeks(_weeks(counts), out, width=60)
    lines = out.getvalue().splitlines()
    assert any(line.split()[:2] == ["week", "of"] for line in lines)
    rows = [line for line in lines if re.match(r" \d{4}-\d\d-\d\d ", line)]
    assert len(rows) == len(counts)
    assert all(_columns(line) <= 60 for line in lines)


def test_the_demos_chart_is_shown_and_a_sparse_one_is_not(demo):
    text, report = stats(demo)
    weeks = report["weeks"]
    assert 2 * sum(1 for w in weeks if w["citations"]) >= len(weeks)
    assert "week of" in text
    bars = re.compile(r"^ \d{4}-\d\d-\d\d +\d+ ", re.MULTILINE)
    assert len(bars.findall(text)) == len(weeks)
    sparse, _ = stats(demo, "--since", str(NOW - 40 * 7 * DAY))
    assert not bars.findall(sparse)
    assert re.search(r"^Citations per week\b.*: \d+ of \d+ weeks had any", sparse, re.MULTILINE)


# --------------------------------------------------------------------------- stats and show


@pytest.fixture
def late(tmp_path, monkeypatch):
    """A synced sample home; a reply recorded (`record --at`) 30 days after it was made, then
    its cited line edited."""
    from memcite.demo.loop import load_sample_builder
    from memcite.ledger.recording import ReplyInput, record_reply
    from memcite.ledger.store import open_store
    from memcite.ledger.sync import sync_codex_home

    builder = load_sample_builder()
    home = tmp_path / "codex_home"
    builder.build_codex_home(str(home), now=NOW)
    conn = open_store(tmp_path / "memcite.sqlite")
    sync_codex_home(conn, home, now=NOW)
    thread = builder.thread_id(2)
    text = ("x\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:5-5|note=[t]\n"
            f"</citation_entries>\n<rollout_ids>\n{thread}\n</rollout_ids>\n</oai-mem-citation>")
    record_reply(conn, ReplyInput(text, at=NOW - 30 * DAY), memory_root=home / "memories",
                 now=NOW)
    conn.close()
    memory = home / "memories" / "MEMORY.md"
    lines = memory.read_text().split("\n")
    lines[4] += " (edited)"
    memory.write_text("\n".join(lines))
    for key, value in {"MEMCITE_DB": str(tmp_path / "memcite.sqlite"), "CODEX_HOME": str(home),
                       "MEMCITE_HOME": str(tmp_path), "COLUMNS": "100",
                       "MEMCITE_CONFIG": str(tmp_path / "none.toml")}.items():
        monkeypatch.setenv(key, value)
    return thread


def test_stats_and_show_say_the_same_of_one_citation(late):
    from memcite.retention.checks import OUTCOME_MEANING

    stats_json = json.loads(run(["stats", "--json", "--as-of", str(NOW), "--no-cache"]))
    outcomes = {k: v["citations"] for k, v in stats_json["citation_checks"]["outcomes"].items()
                if v["citations"]}
    assert outcomes == {"changed": 1}
    card = json.loads(run(["show", late, "--json"]))
    (entry,) = card["citations"][0]["entries"]
    assert entry["outcome"] == "changed"  # the same word stats counts it under
    assert entry["basis"] == "hash taken when the reply was recorded, 30 days after it was made"
    shown = run(["show", late])
    assert "MEMORY.md:5-5  changed" in shown
    assert "against the hash taken when the reply was recorded, 30 days after it was made" in shown
    assert f"(changed: {OUTCOME_MEANING['changed']})" in shown
    text = run(["stats", "--as-of", str(NOW), "--no-cache", "--full"])
    (row,) = [line for line in text.splitlines() if line.startswith("  changed ")]
    assert row.split()[1:3] == ["1", "1"] and row.endswith(OUTCOME_MEANING["changed"])
    prose = " ".join(text.split())
    assert "each compared with its hash, taken when its reply was recorded" in prose
    assert "1 reply was recorded over an hour after being made" in prose


# --------------------------------------------------------------------------- the default view


def brief(demo, *more, columns="80"):
    """The demo's stats in the default view (no --full)."""
    args = ["stats", "--db", demo["db"], "--codex-home", demo["home"], "--as-of", str(NOW),
            "--max-unused-days", "30", *more]
    return run(args, COLUMNS=columns, MEMCITE_CACHE_DIR=os.path.join(demo["folder"], "cache"))


def test_the_default_view_opens_with_the_verdict_and_the_one_command_to_act(demo):
    text = brief(demo)
    _, report = stats(demo)
    first, second = text.splitlines()[:2]
    assert first.startswith(f"{report['dead_count']} of {report['totals']['memories']} memories "
                            "are dead: unused for more than 30 days")
    assert second.startswith("next: memcite prune --max-unused-days 30 ")
    assert len(text.splitlines()) <= 50
    assert text.rstrip().endswith("citations per week")  # says where the full tables are


@pytest.mark.parametrize("word", ["store v1", "stage1_outputs", "rule memcite", "by memcite's log",
                                  "outside_root", "out_of_range", "Totals"])
def test_the_default_view_speaks_the_users_words(demo, word):
    assert word not in brief(demo)
    assert word in brief(demo, "--full") or word in ("stage1_outputs", "out_of_range")


def test_each_count_appears_once_with_one_line_on_the_two_sources(demo):
    text = brief(demo)
    _, report = stats(demo)
    t = report["totals"]
    counts = section(text, "Counts:")
    joined = " ".join(" ".join(counts).split())
    assert f"used, by Codex's own count: {t['cited_codex']} memories, {t['codex_citations']} times" \
        in joined
    assert f"seen by memcite: {t['replies']} replies citing {t['cited_memcite']} memories " \
           f"{t['citations']} times" in joined
    assert joined.count("Codex counts every use of a memory; memcite only the replies it read") == 1
    assert "cited:" not in text and "never cited:" not in text  # the full view's double rows


def test_a_dead_memory_codex_used_is_listed_with_its_uses_and_why(demo):
    text = brief(demo)
    report = json.loads(brief(demo, "--json"))
    used = [d for d in report["dead"] if d["codex_usage_count"]]
    assert used  # the demo has dead memories Codex counted uses of
    rows = section(text, "Dead memories")
    for dead in used:
        (row,) = [line for line in rows if line.startswith(f"  {dead['thread_id']}")]
        assert row.split()[1:4] == [str(dead["days_unused"]), "d", str(dead["codex_usage_count"])]
    note = " ".join(line.strip() for line in rows if not line.startswith("  0"))
    assert f"{len(used)} of them were used, but the last use is older than 30 days" in note


@pytest.mark.parametrize("flag", ["--full", "--verbose"])
def test_full_and_verbose_give_every_table(demo, flag):
    text = brief(demo, flag)
    assert "Citation checks:" in text and "MEMORY.md sections" in text and "Totals" in text


def test_the_default_view_fits_narrow_terminals(demo):
    for columns in ("50", "80", "120"):
        for line in brief(demo, columns=columns).splitlines():
            assert len(line) <= int(columns), line
