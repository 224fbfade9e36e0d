"""`memcite report`: one self-contained HTML page from the same data as `memcite stats --json`.

Every number and date of the page names the key of the data it shows (``data-key``), and
each is checked against ``stats --json`` (or, for what only the report shows, against the
report's extras); the page loads nothing (a Content-Security-Policy of ``default-src 'none'``,
no URL to fetch), escapes what agents can write, and is written atomically, never through a
link. The page in a real browser: ``tests/retention/test_report_browser.py``.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time

import pytest
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.retention import report_html
from memcite.retention.report_html import CONTENT_SECURITY_POLICY, ROWS, SCRIPT, STYLE, file_url
from memcite.times import with_iso_times
from report_pages import NOTE_SECRET, NOW, SESSION_ID, build_report_home, iso, read_page

runner = CliRunner()
AS_OF = str(NOW)


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return build_report_home(str(tmp_path_factory.mktemp("report-home")))


@pytest.fixture
def env(home, monkeypatch):
    for name, value in home.items():
        monkeypatch.setenv(name, value)
    return home


def _invoke(args: list[str], expect: int = 0):
    result = runner.invoke(app, args)
    assert result.exit_code == expect, result.output
    return result


def _write(tmp_path, *args: str) -> tuple[str, str]:
    page = str(tmp_path / "report.html")
    result = _invoke(["report", "--html", page, "--as-of", AS_OF, *args])
    with open(page, encoding="utf-8") as handle:
        return handle.read(), result.stdout


def _collected(since: str | None, judge_without_usage: bool):
    """The page's data as the library builds it (``memcite.retention.stats_report.build_page``)."""
    from memcite.paths import Locations
    from memcite.retention.report_html import ROWS
    from memcite.retention.stats_report import as_time, build_page

    return build_page(Locations(), now=as_time(AS_OF, "--as-of", None), limit=ROWS,
                      since=as_time(since, "--since", None),
                      judge_without_usage=judge_without_usage)


def _same_data(stats: dict, json_out: dict) -> bool:
    """``stats`` is ``stats --json``'s data (but for how many files this run read: none when
    the checks came from the cache)."""
    mine, theirs = with_iso_times(stats), dict(json_out)
    mine["citation_checks"] = {k: v for k, v in mine["citation_checks"].items()
                               if k != "files_read"}
    theirs["citation_checks"] = {k: v for k, v in theirs["citation_checks"].items()
                                 if k != "files_read"}
    return mine == theirs


def _walk(data, path: str):
    value = data
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def resolve(key: str, stats: dict, extras: dict):
    """The value a ``data-key`` names: a path into ``stats --json`` (``report.…``: into the
    extras), ``len(PATH)``, or ``PATH - len(PATH)``."""
    found = re.fullmatch(r"(\S+) - len\((\S+)\)", key)
    if found:
        return resolve(found.group(1), stats, extras) - len(resolve(found.group(2), stats, extras))
    found = re.fullmatch(r"len\((\S+)\)", key)
    if found:
        return len(resolve(found.group(1), stats, extras))
    if key.startswith("report."):
        return _walk(extras, key.removeprefix("report."))
    return _walk(stats, key)


def _check_keyed(reader, stats: dict, extras: dict) -> int:
    checked = 0
    for tag, attrs, text in reader.keyed:
        key = attrs["data-key"]
        value = resolve(key, stats, extras)
        if "data-null" in attrs:
            assert value is None, (key, value)
        elif tag == "time":
            expected = value if isinstance(value, str) else iso(value)
            assert attrs["datetime"] == expected, (key, attrs, value)
            assert expected.startswith(text.split(" ")[0]), (key, text, value)
        elif isinstance(value, str):  # a day on a chart's axis
            assert text == value, (key, text, value)
        elif isinstance(value, float):
            assert float(attrs["value"]) == value and abs(float(text) - value) < 0.0005, key
        else:
            assert type(value) is int, (key, value)
            assert int(text.replace(",", "")) == value, (key, text, value)
            if tag == "data":
                assert int(attrs["value"]) == value, (key, attrs)
        checked += 1
    return checked


# --------------------------------------------------------------------------- one source


def test_every_number_on_the_page_is_the_one_in_stats_json(env, tmp_path):
    json_out = json.loads(_invoke(["stats", "--json", "--limit", str(ROWS), "--as-of",
                                   AS_OF]).stdout)
    before = int(time.time())
    page, _out = _write(tmp_path)
    stats, extras = _collected(None, False)
    assert _same_data(stats, json_out)  # the page's data is stats --json's
    reader = read_page(page)
    generated = [attrs for tag, attrs, _ in reader.keyed if attrs["data-key"] ==
                 "report.generated_at"]
    assert len(generated) == 1
    import calendar

    extras["generated_at"] = calendar.timegm(time.strptime(generated[0]["datetime"],
                                                           "%Y-%m-%dT%H:%M:%SZ"))
    assert before - 1 <= extras["generated_at"] <= time.time() + 1
    checked = _check_keyed(reader, json_out, extras)
    assert checked > 300
    keys = {attrs["data-key"] for _tag, attrs, _text in reader.keyed}
    # the summary, the lists, the checks, the weeks, the ages, the notes: all shown
    for key in ("memories", "totals.cited", "totals.dead", "totals.asked_to_forget",
                "totals.citations", "totals.replies", "dead.0.days_unused", "top.0.last_used",
                "citation_checks.outcomes.ok.citations", "citation_checks.worst.0.citations",
                "weeks.0.citations", "report.ages.buckets.0.memories", "entries.tiers.CORE",
                "report.notes.0.entries", "asked_to_forget.0.requested_at",
                "consolidation.v2.consolidated_threads", "audit.counts.poisoned"):
        assert key in keys, key


def test_no_number_on_the_page_comes_from_nowhere(env, tmp_path):
    page, _out = _write(tmp_path)
    loose = "".join(read_page(page).loose)
    assert not re.search(r"\d", loose), re.findall(r".{30}\d.{10}", loose)[:5]


def test_the_ages_add_up_to_the_totals(env):
    stats, extras = _collected(None, False)
    ages = extras["ages"]
    buckets = ages["buckets"]
    assert sum(b["memories"] for b in buckets) + ages["unknown"] == ages["judged"] \
        == stats["totals"]["memories"]
    assert sum(b["memories"] for b in buckets if b["dead"]) == stats["totals"]["dead"]
    # prune --apply --limit 2, and the demo's Stop hook quarantined its poisoned memory
    assert sum(b["asked"] for b in buckets) == stats["totals"]["asked_to_forget"] == 3
    assert all(b["asked"] <= b["memories"] for b in buckets)
    # the bucket of each listed dead memory is a dead one
    for dead in stats["dead"]:
        days = (stats["as_of"] - dead["last_used"]) / 86_400
        bucket = next(b for b in buckets if (b["more_than_days"] is None or
                                             days > b["more_than_days"]) and
                      (b["up_to_days"] is None or days <= b["up_to_days"]))
        assert bucket["dead"], dead


def test_the_ages_from_codex_database_alone(env, monkeypatch, tmp_path):
    monkeypatch.delenv("MEMCITE_DB")  # no memcite database: the report reads Codex's
    monkeypatch.setenv("MEMCITE_HOME", str(tmp_path / "no-ledger"))
    stats, extras = _collected(None, False)
    assert stats["source"] == "codex"
    buckets = extras["ages"]["buckets"]
    assert sum(b["memories"] for b in buckets) + extras["ages"]["unknown"] == \
        stats["totals"]["memories"]
    assert sum(b["memories"] for b in buckets if b["dead"]) == stats["totals"]["dead"]
    json_out = json.loads(_invoke(["stats", "--json", "--limit", str(ROWS), "--as-of",
                                   AS_OF]).stdout)
    page, _out = _write(tmp_path)
    reader = read_page(page)
    extras["generated_at"] = 0
    keyed = [k for k in reader.keyed if k[1]["data-key"] != "report.generated_at"]
    reader.keyed = keyed
    assert _check_keyed(reader, json_out, extras) > 50
    assert "No citation log" in page


# --------------------------------------------------------------------------- what is on it


def test_labels_and_paths_are_escaped(env, tmp_path):
    page, _out = _write(tmp_path)
    assert "<img" not in page and "onerror=alert(1)>" not in page
    assert page.count("<script") == 1  # the page's own, at its end
    assert "&lt;img src=x onerror=alert(1)&gt;&lt;/td&gt;&lt;script&gt;" in page
    assert "pruned_by_codex_a&quot;&gt;" in page
    tags = {tag for tag, _attrs in read_page(page).tags}
    assert "img" not in tags and "iframe" not in tags and "object" not in tags


def test_the_notes_are_counted_never_quoted(env, tmp_path):
    page, _out = _write(tmp_path)
    assert NOTE_SECRET not in page
    _stats, extras = _collected(None, False)
    notes = {(note["scope"], note["name"]): note for note in extras["notes"]}
    assert set(notes) == {("global", "global"), ("project", "payments-api-3f2a1b"),
                          ("session", SESSION_ID)}
    project = notes[("project", "payments-api-3f2a1b")]
    assert project["entries"] == 3
    assert project["tiers"] == {"CORE": 0, "IMP": 1, "SEC": 1, "IRR": 0, "none": 1}
    assert iso(project["oldest_entry"]).startswith("2026-10-02")
    assert iso(project["newest_entry"]).startswith("2026-12-30")
    assert "payments-api-3f2a1b" in page and SESSION_ID in page
    # the notes' entries are not listed among MEMORY.md's, though stats --json has them
    assert "memory/projects/payments-api-3f2a1b/memory.md" not in page.split('id="notes"')[0]


def test_the_page_loads_nothing_and_allows_only_its_own_style_and_script(env, tmp_path):
    page, _out = _write(tmp_path)
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert policy and policy.group(1).replace("&#x27;", "'") == CONTENT_SECURITY_POLICY
    assert CONTENT_SECURITY_POLICY.startswith("default-src 'none';")
    import base64
    import hashlib

    for body, directive in ((STYLE, "style-src"), (SCRIPT, "script-src")):
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"{directive} 'sha256-{digest}'" in CONTENT_SECURITY_POLICY
        assert body in page
    assert page.count("<style>") == 1 and page.count("<script>") == 1
    assert " style=" not in page  # a style attribute would need 'unsafe-inline'
    reader = read_page(page)
    for tag, attrs in reader.tags:
        for name in ("src", "srcset", "data", "action", "formaction", "poster", "background"):
            assert name not in attrs, (tag, attrs)
        if tag == "link":
            assert attrs == {"rel": "icon", "href": "data:,"}
        if "href" in attrs and tag == "a":
            assert attrs["href"].startswith(("#", "file:///")), attrs
    urls = set(re.findall(r"[a-z][a-z0-9+.-]*://[^\s\"'<>)]*", page))
    # the SVG namespace names no resource; file:// links are for the reader to follow
    assert {u for u in urls if not u.startswith("file:///")} == {"http://www.w3.org/2000/svg"}
    assert "@import" not in page and "url(" not in STYLE


def test_dead_memories_link_their_rollout_summary(env, tmp_path):
    page, _out = _write(tmp_path)
    stats, extras = _collected(None, False)
    summaries = [link for link in extras["links"].values() if link["kind"] == "summary"]
    assert summaries and all(os.path.isfile(link["path"]) for link in summaries)
    for link in summaries:
        assert f'href="{file_url(link["path"])}"' in page
    dead_ids = {dead["thread_id"] for dead in stats["dead"]}
    assert dead_ids & set(extras["links"])


def test_a_memory_without_summary_file_links_its_memory_md_line(env, tmp_path):
    from memcite.retention.report_data import links_part

    folder = tmp_path / "memories"
    folder.mkdir()
    (folder / "MEMORY.md").write_text(
        "# Group\n- a rule\n  Evidence: rollout_summaries/2026-x-gone.md:1-3\n"
        "- another, from 019b0000-aaaa-7bbb-8ccc-dddddddddddd\n")
    links = links_part(None, ["019b0000-aaaa-7bbb-8ccc-dddddddddddd", "019b0000-0000-7000-8000-"
                              "000000000000"], str(folder))
    assert links == {"019b0000-aaaa-7bbb-8ccc-dddddddddddd": {
        "kind": "memory_md", "path": str(folder / "MEMORY.md"), "line": 4}}


def test_file_urls_are_percent_encoded_and_only_for_real_paths():
    assert file_url("/a b/<x>\"'&.md") == "file:///a%20b/%3Cx%3E%22%27%26.md"
    assert file_url("relative.md") is None
    assert file_url("/a/[REDACTED:aws]/b") is None


def test_tables_are_cut_and_the_rest_counted(env, tmp_path, monkeypatch):
    monkeypatch.setattr(report_html, "ROWS", 3)
    page, _out = _write(tmp_path)
    stats, _extras = _collected(None, False)
    assert len(stats["dead"]) == 3 and stats["dead_count"] > 3
    reader = read_page(page)
    more = [text for _tag, attrs, text in reader.keyed
            if attrs["data-key"] == "dead_count - len(dead)"]
    assert more == [str(stats["dead_count"] - 3)]
    assert page.count('<tr><td><code class="id">') <= 3 * 4


def test_charts_have_titles_and_text_equivalents(env, tmp_path):
    page, _out = _write(tmp_path)
    for chart in ("weeks", "ages", "checks"):
        assert f'data-chart="{chart}"' in page
        assert f'aria-labelledby="{chart}-title {chart}-desc"' in page
        assert f'<title id="{chart}-title">' in page and f'<desc id="{chart}-desc">' in page
    reader = read_page(page)
    assert sum(1 for tag, _ in reader.tags if tag == "caption") >= 8
    assert sum(1 for tag, attrs in reader.tags if tag == "th" and attrs.get("scope") == "col") > 30
    assert "prefers-color-scheme:dark" in STYLE and "@media print" in STYLE


# --------------------------------------------------------------------------- the command


def test_the_default_file_is_in_memcite_s_data_folder_not_the_current_one(env, tmp_path,
                                                                         monkeypatch):
    """Issue 40: the page went into the current folder, usually the user's repository."""
    repository, data = tmp_path / "repo", tmp_path / "data" / "memcite"
    repository.mkdir()
    monkeypatch.chdir(repository)
    monkeypatch.setenv("MEMCITE_HOME", str(data))
    result = _invoke(["report", "--as-of", AS_OF])
    path = data / "memcite-report.html"
    assert path.is_file() and f"wrote {path} (" in result.stdout
    assert f"{path.stat().st_size:,} bytes" in result.stdout
    assert "memcite report --open" in result.stdout  # how to open it
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # it names a person's memories
    assert list(repository.iterdir()) == []  # nothing in the user's repository
    assert [p.name for p in data.iterdir()] == ["memcite-report.html"]  # no temporary left
    opened = []
    import webbrowser

    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    _invoke(["report", "--as-of", AS_OF, "--open"])
    assert opened == [path.as_uri()]
    _invoke(["report", "--as-of", AS_OF, "-o", str(tmp_path / "mine.html")])
    assert (tmp_path / "mine.html").is_file()


def test_the_audit_row_has_no_stray_punctuation(env, tmp_path):
    """Issue 40: the row read "memory audit: : not run" with literal backticks."""
    text, _out = _write(tmp_path)
    row = text.split("<dt>memory audit</dt>", 1)[1].split("</dd>", 1)[0]
    assert "`" not in row and not re.sub(r"<[^>]+>", "", row).lstrip().startswith(":"), row
    assert "<code>memcite audit</code>" in row, row


def test_an_existing_page_is_replaced_and_keeps_its_mode(env, tmp_path):
    path = tmp_path / "report.html"
    path.write_text("old")
    path.chmod(0o644)
    inode = path.stat().st_ino
    _write(tmp_path)
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert path.stat().st_ino != inode  # a new file renamed over the old: atomic
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_a_link_or_a_special_file_is_never_written(env, tmp_path):
    target = tmp_path / "elsewhere.html"
    target.write_text("keep")
    link = tmp_path / "link.html"
    link.symlink_to(target)
    result = _invoke(["report", "--html", str(link), "--as-of", AS_OF], expect=3)
    assert "symbolic link" in result.output and target.read_text() == "keep"
    assert link.is_symlink()
    fifo = tmp_path / "fifo.html"
    os.mkfifo(fifo)
    result = _invoke(["report", "--html", str(fifo), "--as-of", AS_OF], expect=3)
    assert "not a regular file" in result.output
    folder = tmp_path / "folder.html"
    folder.mkdir()
    _invoke(["report", "--html", str(folder), "--as-of", AS_OF], expect=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.html", "fifo.html",
                                                         "folder.html", "link.html"]


def test_a_missing_folder_or_no_file_name_is_exit_2(env, tmp_path):
    result = _invoke(["report", "--html", str(tmp_path / "none" / "r.html")], expect=2)
    assert "no such folder" in result.output
    result = _invoke(["report", "--html", str(tmp_path) + "/"], expect=2)
    assert "not a file name" in result.output


def test_usage_unknown_is_exit_3_as_for_stats(env, tmp_path, monkeypatch):
    os.rename(os.path.join(env["CODEX_HOME"], "memories_1.sqlite"), str(tmp_path / "away"))
    try:
        result = _invoke(["report", "--html", str(tmp_path / "r.html")], expect=3)
        assert "usage unknown" in result.output and not (tmp_path / "r.html").exists()
        _invoke(["report", "--html", str(tmp_path / "r.html"), "--judge-without-usage"])
    finally:
        os.rename(str(tmp_path / "away"), os.path.join(env["CODEX_HOME"], "memories_1.sqlite"))


def test_open_hands_the_file_to_the_browser(env, tmp_path, monkeypatch):
    opened = []
    import webbrowser

    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    _write(tmp_path, "--open")
    assert opened == [(tmp_path / "report.html").as_uri()]


def test_since_keeps_to_the_replies_made_since(env, tmp_path):
    since = str(NOW - 7 * 86_400)
    json_out = json.loads(_invoke(["stats", "--json", "--limit", str(ROWS), "--as-of", AS_OF,
                                   "--since", since]).stdout)
    page, _out = _write(tmp_path, "--since", since)
    stats, extras = _collected(since, False)
    assert _same_data(stats, json_out)
    reader = read_page(page)
    reader.keyed = [k for k in reader.keyed if k[1]["data-key"] != "report.generated_at"]
    _check_keyed(reader, json_out, extras)
    assert "replies made since" in page


def test_the_body_alone_writes_the_page_typer_writes(env, tmp_path):
    """``memcite.cli.report_commands.report`` takes the options by name, as the fast path
    calls a command body: the same page as through Typer (but for the time it was written)."""
    from memcite.cli.report_commands import report

    typer_page, _out = _write(tmp_path)
    assert report(output=str(tmp_path / "body.html"), as_of=AS_OF) == 0
    body_page = (tmp_path / "body.html").read_text(encoding="utf-8")
    written = re.compile(r'<time datetime="[^"]*" data-key="report.generated_at">[^<]*</time>')
    assert written.sub("", body_page) == written.sub("", typer_page)


def test_the_consolidations_judged_are_a_timeline_whose_numbers_are_stats_json(env, tmp_path):
    import shutil

    from memcite.ledger.codex_home import codex_memory_folder
    from memcite.ledger.snapshots import save_judged_runs, snapshot_folder

    folder = os.path.realpath(codex_memory_folder(env["CODEX_HOME"]))
    counts = {"lost": 2, "lost_unexpected": 1, "rewritten": 1, "unsupported": 3,
              "came_back": 0, "notes_absorbed": 1, "notes_not_absorbed": 1}
    os.makedirs(snapshot_folder(env["MEMCITE_DB"]), exist_ok=True)
    try:
        save_judged_runs(env["MEMCITE_DB"], folder, [
            {"after_snapshot": 2, "after_taken_at": NOW - 86_400, "findings": 6,
             "counts": counts},
            {"after_snapshot": 3, "after_taken_at": NOW - 3_600, "findings": 0,
             "counts": dict.fromkeys(counts, 0)}], now=NOW)
        json_out = json.loads(_invoke(["stats", "--json", "--limit", str(ROWS), "--as-of",
                                       AS_OF]).stdout)
        runs = json_out["consolidation"]["runs"]
        assert [r["after_snapshot"] for r in runs] == [3, 2]
        assert json_out["consolidation"]["latest_run"]["after_snapshot"] == 3
        page, _out = _write(tmp_path)
        assert 'id="runs"' in page and "Consolidations" in page
        stats, extras = _collected(None, False)
        reader = read_page(page)
        keys = {attrs["data-key"] for _tag, attrs, _text in reader.keyed}
        assert {"consolidation.runs.1.counts.unsupported", "consolidation.runs.0.after_taken_at",
                "len(consolidation.runs)"} <= keys
        extras["generated_at"] = None
        _check_keyed_except(reader, json_out, extras, "report.generated_at")
    finally:
        shutil.rmtree(snapshot_folder(env["MEMCITE_DB"]))


def _check_keyed_except(reader, stats: dict, extras: dict, skipped: str) -> None:
    reader.keyed = [item for item in reader.keyed if item[1]["data-key"] != skipped]
    assert _check_keyed(reader, stats, extras) > 300
