"""The usage report (memcite.retention.stats, .checks, .tally): citation checks, sections, the whole report from
memcite's ledger and straight from Codex's database."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcite.demo.loop import load_sample_builder
from memcite.ledger.memory_files import cited_lines_sha256
from memcite.ledger.recording import ReplyInput, record_reply
from memcite.ledger.store import open_store
from memcite.ledger.sync import sync_codex_home
from memcite.retention import stats as stats_module
from memcite.retention.checks import (
    MemoryFolder,
    Section,
    check_citations,
    check_entry,
    count_section_citations,
    markdown_sections,
    moved_to,
)
from memcite.retention.stats import collect_codex_stats, collect_stats

NOW = 1_800_000_000
DAY = 86_400


def _sha(data: bytes, start: int, end: int) -> str | None:
    return cited_lines_sha256(data, start, end)


@pytest.fixture
def folder(tmp_path):
    """A memory folder with a file, a blank line, a link inside and a link leading out."""
    root = tmp_path / "memories"
    root.mkdir()
    (root / "MEMORY.md").write_bytes(b"# A\nalpha\n\n## B\nbeta\r\ngamma\n")
    (root / "sub").mkdir()
    (root / "sub" / "n.md").write_bytes(b"one\ntwo\n")
    outside = tmp_path / "secret.md"
    outside.write_bytes(b"secret\n")
    (root / "out.md").symlink_to(outside)
    (root / "in.md").symlink_to(root / "sub" / "n.md")
    return root


MEMORY = b"# A\nalpha\n\n## B\nbeta\r\ngamma\n"


@pytest.mark.parametrize(("path", "start", "end", "digest", "outcome"), [
    ("MEMORY.md", 1, 2, _sha(MEMORY, 1, 2), "ok"),
    ("./MEMORY.md", 5, 6, _sha(MEMORY, 5, 6), "ok"),  # CRLF line as the ledger hashes it
    ("MEMORY.md", 1, 2, None, "unverified"),
    ("MEMORY.md", 1, 2, "0" * 64, "changed"),
    ("MEMORY.md", 3, 3, _sha(MEMORY, 3, 3), "blank"),
    # The cited lines stand elsewhere now: moved, whether the old range changed, went
    # blank or ran past the end.
    ("MEMORY.md", 1, 1, _sha(MEMORY, 2, 2), "moved"),
    ("MEMORY.md", 3, 3, _sha(MEMORY, 5, 5), "moved"),
    ("MEMORY.md", 6, 7, _sha(MEMORY, 5, 6), "moved"),
    ("MEMORY.md", 5, 6, _sha(b"beta\r\ngamma\nalpha\n", 2, 3), "changed"),  # never stood there
    ("MEMORY.md", 6, 7, None, "out_of_range"),
    ("MEMORY.md", 0, 1, None, "out_of_range"),
    ("MEMORY.md", 3, 2, None, "out_of_range"),
    ("nope.md", 1, 1, None, "missing"),
    ("sub", 1, 1, None, "missing"),  # a folder
    ("../secret.md", 1, 1, None, "outside_root"),
    ("sub/../../secret.md", 1, 1, None, "outside_root"),
    ("/etc/passwd", 1, 1, None, "outside_root"),
    ("C:/x.md", 1, 1, None, "outside_root"),
    ("out.md", 1, 1, None, "outside_root"),  # a symlink leading out
    ("in.md", 1, 2, _sha(b"one\ntwo\n", 1, 2), "ok"),  # a symlink staying inside
    ("", 1, 1, None, "outside_root"),
])
def test_check_entry_outcomes(folder, path, start, end, digest, outcome):
    assert check_entry(MemoryFolder(folder), path, start, end, digest) == outcome


@pytest.mark.parametrize(("start", "end", "digest", "now_at"), [
    (1, 1, _sha(MEMORY, 2, 2), (2, 2)),
    (6, 7, _sha(MEMORY, 5, 6), (5, 6)),
    (1, 2, _sha(MEMORY, 1, 2), (1, 2)),  # not moved: where it was cited
    (1, 1, "0" * 64, None),
])
def test_moved_lines_report_their_new_range(folder, start, end, digest, now_at):
    assert moved_to(MemoryFolder(folder), "MEMORY.md", start, end, digest) == now_at


def record_opens(monkeypatch) -> list[str]:
    """Every path ``os.open`` opens from now on, made absolute (``dir_fd`` followed)."""
    opened: list[str] = []
    real_open = os.open

    def recording_open(path, flags, mode=0o777, *, dir_fd=None):
        base = os.readlink(f"/proc/self/fd/{dir_fd}") if dir_fd is not None else os.getcwd()
        opened.append(os.path.normpath(os.path.join(base, os.fspath(path))))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", recording_open)
    return opened


def test_nothing_outside_the_root_is_opened_and_each_file_once(folder, monkeypatch):
    opened = record_opens(monkeypatch)
    rows = [("MEMORY.md", 1, 2, None, 3), ("MEMORY.md", 4, 5, None, 1),
            ("out.md", 1, 1, None, 1), ("../secret.md", 1, 1, None, 1),
            ("sub/n.md", 1, 1, None, 2), ("in.md", 2, 2, None, 1)] * 50
    memory_folder = MemoryFolder(folder)
    checks = check_citations(rows, memory_folder)
    root = os.path.realpath(folder)
    assert opened and all(path == root or path.startswith(root + os.sep) for path in opened)
    assert checks.files_read == 2
    assert checks.entries == 300 and checks.citations == 450
    assert checks.outcomes["outside_root"] == {"entries": 100, "citations": 100}
    assert checks.broken == 100
    assert checks.worst[0].outcome == "outside_root"


def test_check_uses_the_ledgers_hash(folder):
    data = (folder / "MEMORY.md").read_bytes()
    files = MemoryFolder(folder)
    for start in range(1, 7):
        for end in range(start, 7):
            digest = cited_lines_sha256(data, start, end)
            assert check_entry(files, "MEMORY.md", start, end, digest) in ("ok", "blank")


def test_markdown_sections_nest_skip_fences_and_end_at_the_next_heading():
    lines = [b"# One", b"text", b"```", b"# not a heading", b"```", b"## Two", b"x",
             b"# Three ##", b"y"]
    sections = markdown_sections(lines)
    assert [(s.title, s.path, s.level, s.line, s.end_line) for s in sections] == [
        ("One", "One", 1, 1, 5), ("Two", "One > Two", 2, 6, 7), ("Three", "Three", 1, 8, 9)]


def test_section_citations_count_every_overlapped_section():
    sections = [Section("a", "a", 1, 1, 3), Section("b", "b", 1, 4, 6),
                Section("c", "c", 1, 7, 9)]
    count_section_citations(sections, [(2, 2, 1), (3, 4, 2), (9, 20, 5), (100, 101, 7)])
    assert [s.citations for s in sections] == [3, 2, 5]


@given(st.lists(st.tuples(st.integers(1, 30), st.integers(1, 30), st.integers(1, 3)),
                max_size=20))
def test_section_counts_match_a_brute_force_overlap(ranges):
    sections = [Section(str(i), str(i), 1, i, i + 4) for i in range(1, 30, 5)]
    count_section_citations(sections, ranges)
    for section in sections:
        expected = sum(n for a, b, n in ranges
                       if min(a, b) <= section.end_line and max(a, b) >= section.line)
        assert section.citations == expected


# --------------------------------------------------------------------------- the whole report


@pytest.fixture
def ledger(tmp_path):
    """The sample Codex home synced into a memcite database, with a few replies recorded."""
    builder = load_sample_builder()
    home = tmp_path / "codex_home"
    builder.build_codex_home(str(home), now=NOW)
    conn = open_store(tmp_path / "memcite.sqlite")
    sync_codex_home(conn, home, now=NOW)
    root = home / "memories"
    t = builder.thread_id

    def reply(entries, ids, days_ago):
        text = ("ok\n<oai-mem-citation>\n<citation_entries>\n" + "\n".join(entries)
                + "\n</citation_entries>\n<rollout_ids>\n" + "\n".join(ids)
                + "\n</rollout_ids>\n</oai-mem-citation>")
        record_reply(conn, ReplyInput(text, at=NOW - days_ago * DAY), memory_root=root, now=NOW)

    reply(["MEMORY.md:4-7|note=[tests]"], [t(2), t(3)], 20)
    reply(["MEMORY.md:5-5|note=[tests]"], [t(2)], 3)
    reply(["MEMORY.md:39-39|note=[port]", "../x.md:1-1|note=[out]"], [t(6), "nope"], 2)
    reply(["MEMORY.md:1000-1001|note=[far]"], ["0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee"], 1)
    yield conn, home, builder
    conn.close()


def test_report_totals_dead_top_unknown_and_checks(ledger):
    conn, home, builder = ledger
    report = collect_stats(conn, memory_root=home / "memories", as_of=NOW, max_unused_days=30,
                           limit=0).to_dict()
    assert report["memories"] == 36
    assert report["totals"]["replies"] == 4
    assert report["totals"]["citations"] == 5  # 2 + 1 + 1 known, 1 unknown
    assert report["unknown_ids"] == [{"thread_id": "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee",
                                      "citations": 1}]
    assert report["not_uuid_ids"] == [{"rollout_id": "nope", "citations": 1}]
    # Most cited by whichever count saw more, both counts side by side, with a label.
    top = {t["thread_id"]: t for t in report["top"]}
    assert report["top"][0]["thread_id"] == builder.thread_id(22)  # Codex counted 30
    assert report["top"][0]["codex_usage_count"] == 30
    assert report["top"][0]["label"] == "user_prefers_short_answers"
    assert top[builder.thread_id(2)]["usage_count"] == 2
    assert top[builder.thread_id(2)]["codex_usage_count"] == 1  # a sample session's reply
    keys = [max(t["usage_count"], t["codex_usage_count"] or 0) for t in report["top"]]
    assert keys == sorted(keys, reverse=True)
    assert report["totals"]["cited_memcite"] == 3
    assert report["totals"]["cited_codex"] == sum(
        1 for row in builder.sample_rows(NOW) if row["usage_count"])
    # docker_compose_ports (45 days old, Codex use 40 days ago) was cited 2 days ago: alive.
    dead_ids = [d["thread_id"] for d in report["dead"]]
    assert builder.thread_id(6) not in dead_ids
    assert builder.thread_id(28) in dead_ids  # old_jenkins_setup, 300 days, never cited
    assert report["dead"] == sorted(report["dead"], key=lambda d: (d["last_used"],
                                                                   d["thread_id"]))
    assert report["dead_count"] == len(report["dead"])
    outcomes = report["citation_checks"]["outcomes"]
    assert outcomes["ok"]["entries"] == 3
    assert outcomes["outside_root"]["entries"] == 1
    assert outcomes["out_of_range"]["entries"] == 1
    sections = {s["path"]: s["citations"] for s in report["sections"]}
    assert sections["Task Group: memcite development > Testing"] == 2
    assert sections["Task Group: payments-api > Local development"] == 1
    assert sections["Task Group: infrastructure > CI"] == 0


def test_an_edited_line_is_reported_as_changed(ledger):
    conn, home, _ = ledger
    memory = home / "memories" / "MEMORY.md"
    lines = memory.read_text().split("\n")
    lines[38] = "- port 5434 now"
    memory.write_text("\n".join(lines))
    report = collect_stats(conn, memory_root=home / "memories", as_of=NOW, max_unused_days=30)
    worst = [(e.path, e.outcome) for e in report.citation_checks.worst]
    assert ("MEMORY.md", "changed") in worst


def test_since_limits_the_log_parts_and_limit_cuts_lists(ledger):
    conn, home, _ = ledger
    report = collect_stats(conn, memory_root=home / "memories", as_of=NOW, max_unused_days=30,
                           since=NOW - 5 * DAY, limit=2, weeks=True)
    assert report.totals["replies"] == 3
    assert report.totals["citations"] == 3
    assert len(report.dead) == 2 and report.dead_count > 2
    assert sum(w["citations"] for w in report.weeks) == 3


def test_codex_rule_uses_codex_counters(ledger):
    conn, home, builder = ledger
    report = collect_stats(conn, memory_root=home / "memories", as_of=NOW, max_unused_days=30,
                           rule="codex", limit=0)
    dead_ids = [d["thread_id"] for d in report.dead]
    assert builder.thread_id(6) in dead_ids  # memcite's citation 2 days ago does not count
    assert report.top[0]["thread_id"] == builder.thread_id(22)  # 30 uses in Codex


def test_report_straight_from_codex_database(tmp_path):
    builder = load_sample_builder()
    home = tmp_path / "home"
    builder.build_codex_home(str(home), now=NOW)
    db = home / "memories_1.sqlite"
    before = db.read_bytes()
    report = collect_codex_stats(db, memory_root=home / "memories", as_of=NOW,
                                 max_unused_days=30, limit=0)
    assert db.read_bytes() == before
    assert sorted(os.listdir(home)) == ["memories", "memories_1.sqlite"]
    assert report.totals["memories"] == 33
    assert report.source == "codex"
    expected_dead = [row["thread_id"] for row in builder.sample_rows(NOW)
                     if max(row["last_usage"] or 0, row["source_updated_at"]) < NOW - 30 * DAY]
    assert sorted(d["thread_id"] for d in report.dead) == sorted(expected_dead)
    # No citation log: no sections or checks that would claim nothing was ever cited.
    assert report.citation_log is False and report.to_dict()["citation_log"] is False
    assert report.sections == [] and report.citation_checks.entries == 0
    assert report.top[0]["codex_usage_count"] == 30


def test_codex_rule_judges_only_rows_of_codex_table(ledger):
    conn, home, builder = ledger
    report = collect_stats(conn, memory_root=home / "memories", as_of=NOW, max_unused_days=30,
                           rule="codex", limit=0)
    in_table = {row["thread_id"] for row in builder.sample_rows(NOW)}
    expected = {tid for tid in in_table if conn.execute(
        "SELECT coalesce(codex_last_usage, source_updated_at) < ? FROM memories"
        " WHERE thread_id = ?", (NOW - 30 * DAY, tid)).fetchone()[0]}
    assert {d["thread_id"] for d in report.dead} == expected
    assert report.dead_count == len(expected)
    assert report.totals["in_codex_table"] == 33 and report.totals["memories"] == 36
    assert report.totals["never_cited"] == 33 - report.totals["cited"]


def test_memories_gone_from_codex_are_counted_apart(ledger):
    conn, home, builder = ledger
    gone = [builder.thread_id(28), builder.thread_id(2)]  # old and never cited; cited twice
    conn.execute("UPDATE memories SET missing_since = ? WHERE thread_id IN (?, ?)",
                 (NOW, *gone))
    for rule in ("memcite", "codex"):
        report = collect_stats(conn, memory_root=home / "memories", as_of=NOW,
                               max_unused_days=30, rule=rule, limit=0)
        assert report.totals["gone_from_codex"] == 2
        assert report.totals["memories"] == 34 and report.totals["in_codex_table"] == 31
        assert not set(gone) & {d["thread_id"] for d in report.dead}
        assert report.dead_count == len(report.dead)
        assert not set(gone) & {t["thread_id"] for t in report.top}
    report = collect_stats(conn, memory_root=home / "memories", as_of=NOW, max_unused_days=30,
                           limit=0)
    assert report.totals["cited"] == 2  # t(3) and t(6); t(2) is gone
    assert report.totals["never_cited"] == 34 - 2


def test_cached_log_parts_are_reused_until_a_reply_or_a_cited_file_changes(ledger, tmp_path):
    conn, home, builder = ledger
    root = home / "memories"
    cache = tmp_path / "cache"

    def run():
        folder = MemoryFolder(root)
        report = collect_stats(conn, memory_root=root, as_of=NOW, max_unused_days=30,
                               cache_dir=cache, folder=folder)
        return report, folder.files_read

    first, read = run()
    assert read >= 1 and len(os.listdir(cache)) == 1
    second, read = run()
    assert read == 0  # served from the cache
    assert second.to_dict()["citation_checks"] | {"files_read": 0} == \
        first.to_dict()["citation_checks"] | {"files_read": 0}
    assert second.to_dict()["sections"] == first.to_dict()["sections"]
    # A cited line edited: checked again, and now changed.
    memory = root / "MEMORY.md"
    memory.write_text(memory.read_text().replace("Run the suite", "Run all tests"))
    third, read = run()
    assert read >= 1
    assert third.citation_checks.outcomes["changed"]["entries"] >= 1
    # A new reply: checked again.
    record_reply(conn, ReplyInput("x\n<oai-mem-citation>\n<citation_entries>\n"
                                  "gone.md:1-1|note=[n]\n</citation_entries>\n<rollout_ids>\n"
                                  "</rollout_ids>\n</oai-mem-citation>", at=NOW),
                 memory_root=root, now=NOW)
    fourth, read = run()
    assert fourth.citation_checks.outcomes["missing"]["entries"] == 1



def test_a_fifo_planted_as_the_stats_cache_is_not_waited_on(ledger, tmp_path):
    """The cache file replaced by a FIFO (a plain open would block for a writer): the tally is
    counted afresh, the same as before, and the FIFO replaced by a cache file again."""
    conn, home, _ = ledger
    root = home / "memories"
    cache = tmp_path / "cache"
    first = collect_stats(conn, memory_root=root, as_of=NOW, max_unused_days=30, cache_dir=cache)
    (cached,) = cache.iterdir()
    cached.unlink()
    os.mkfifo(cached)
    folder = MemoryFolder(root)
    again = collect_stats(conn, memory_root=root, as_of=NOW, max_unused_days=30,
                          cache_dir=cache, folder=folder)
    assert folder.files_read >= 1  # counted afresh, not served from the FIFO
    assert again.to_dict()["citation_checks"] | {"files_read": 0} == \
        first.to_dict()["citation_checks"] | {"files_read": 0}
    assert cached.is_file()

_ENTRY_CHOICES = [
    "MEMORY.md:4-7|note=[tests]", "MEMORY.md:5-5|note=[tests]", "MEMORY.md:39-39|note=[port]",
    "MEMORY.md:1000-1001|note=[far]", "MEMORY.md:3-3|note=[blank?]", "../x.md:1-1|note=[out]",
    "/etc/passwd:1-1|note=[abs]", "gone.md:1-2|note=[missing]", "MEMORY.md:9-2|note=[reversed]",
]
# thread numbers of the sample home (known after its sync), an id no home has, not a UUID
_ID_CHOICES = [2, 3, 6, "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee", "not-a-uuid", "NOT-A-UUID"]


@given(
    batches=st.lists(
        st.lists(st.tuples(st.lists(st.sampled_from(_ENTRY_CHOICES), min_size=1, max_size=4),
                           st.lists(st.sampled_from(_ID_CHOICES), max_size=3)),
                 min_size=1, max_size=4),
        min_size=1, max_size=3),
    sync_after=st.sampled_from([None, 0, 1]),
    edit_between=st.booleans(),
    limit=st.sampled_from([0, 1, 3]),
    since_days=st.sampled_from([None, 5]),
)
def test_the_cached_tally_brought_up_to_date_equals_a_full_count(
        tmp_path_factory, sample_builder, empty_ledger_copy, batches, sync_after, edit_between,
        limit, since_days):
    """Whatever is recorded or synced between two reports, bringing the cached tally up
    to date gives exactly the report a full count gives."""
    tmp_path = tmp_path_factory.mktemp("incremental")
    builder = sample_builder  # loaded once, not per example
    home = tmp_path / "codex_home"
    builder.build_codex_home(str(home), now=NOW)
    root = home / "memories"
    conn = open_store(empty_ledger_copy(tmp_path / "memcite.sqlite"))  # copied, not migrated
    cache = tmp_path / "cache"
    since = None if since_days is None else NOW - since_days * DAY
    serial = iter(range(10_000))

    def record(entries, ids):
        number = next(serial)
        ids = [builder.thread_id(i) if isinstance(i, int) else i for i in ids]
        text = ("ok\n<oai-mem-citation>\n<citation_entries>\n" + "\n".join(entries)
                + "\n</citation_entries>\n<rollout_ids>\n" + "\n".join(ids)
                + "\n</rollout_ids>\n</oai-mem-citation>")
        record_reply(conn, ReplyInput(text, id=f"r{number}", at=NOW - (number % 9) * DAY),
                     memory_root=root, now=NOW)

    def report(cache_dir):
        return collect_stats(conn, memory_root=root, as_of=NOW, max_unused_days=30,
                             since=since, limit=limit, cache_dir=cache_dir).to_dict()

    def comparable(result):
        checks = dict(result["citation_checks"], files_read=None)
        return (checks, result["files"], result["sections"], result["unknown_ids"],
                result["not_uuid_ids"], result["totals"])

    for index, batch in enumerate(batches):
        for entries, ids in batch:
            record(entries, ids)
        if edit_between and index == 1:  # a cited line edited (the cache's stamps must notice)
            memory = root / "MEMORY.md"
            memory.write_bytes(memory.read_bytes().replace(b"\n", b" \n", 1))
        if sync_after == index:  # ids cited before the sync become known memories
            sync_codex_home(conn, home, now=NOW)
        assert comparable(report(cache)) == comparable(report(None))
    conn.close()


def test_out_of_scope_count_uses_its_partial_index(tmp_path):
    """stats._OUT_OF_SCOPE and migration m003's index WHERE must stay word for word equal."""
    conn = open_store(tmp_path / "m.sqlite")
    plan = conn.execute(
        f"EXPLAIN QUERY PLAN SELECT count(*) FROM memories WHERE {stats_module._OUT_OF_SCOPE}"
    ).fetchall()
    assert any("memories_outside_codex" in row[-1] for row in plan), plan
