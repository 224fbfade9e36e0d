"""Usage per MEMORY.md entry (memcite.retention.entry_usage) and supersession chain heads: tables and
the property that attribution follows an entry across edits above it."""

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcite.retention.entries import read_entries
from memcite.retention.entry_usage import CitedRange, attribute_citations, locate_range, relevance
from memcite.retention.supersession import EntryIndex, Located, live_head

DAY = 86_400
MEMORY = (
    "# Task Group: api\n"              # 1
    "\n"                                # 2
    "## Decisions\n"                    # 3
    "- [CORE] Use WAL\n"                # 4
    "  Source: s\n"                     # 5
    "- [SEC] Retry flaky tests once\n"  # 6
    "- Ports: db on 5433\n"             # 7
)


def _sha(text: str, start: int, end: int) -> str:
    return hashlib.sha256("\n".join(text.split("\n")[start - 1 : end]).encode()).hexdigest()


def _counts(data: str, citations, now=100 * DAY):
    result = attribute_citations(data.encode(), citations, now=now)
    return [(u.entry.title, u.citations) for u in result.entries], result.moved, result.unattributed


@pytest.mark.parametrize(
    "start, end, expected, unattributed",
    [
        (4, 5, [1, 0, 0], 0),   # exactly one entry
        (5, 5, [1, 0, 0], 0),   # a provenance line belongs to its entry
        (4, 7, [1, 1, 1], 0),   # a range over three entries counts for each
        (1, 3, [0, 0, 0], 1),   # headings only: no entry
        (6, 9, [0, 0, 0], 1),   # past the end
        (5, 4, [0, 0, 0], 1),   # reversed
        (0, 1, [0, 0, 0], 1),   # starts at 0
    ],
)
def test_ranges_count_for_the_entries_they_cover(start, end, expected, unattributed):
    counts, moved, lost = _counts(MEMORY, [CitedRange(start, end, 10 * DAY)])
    assert [c for _, c in counts] == expected
    assert (moved, lost) == (0, unattributed)


def test_a_range_follows_its_lines_when_the_file_changes_above():
    cited = CitedRange(6, 6, 10 * DAY, _sha(MEMORY, 6, 6))
    edited = MEMORY.replace("## Decisions\n", "## Decisions\n- New entry\n  Source: t\n")
    counts, moved, lost = _counts(edited, [cited])
    assert counts == [("New entry", 0), ("Use WAL", 0), ("Retry flaky tests once", 1), ("Ports: db on 5433", 0)]
    assert (moved, lost) == (1, 0)


def test_a_range_whose_lines_changed_is_unattributed():
    cited = CitedRange(6, 6, 10 * DAY, _sha(MEMORY, 6, 6))
    counts, moved, lost = _counts(MEMORY.replace("once", "twice"), [cited])
    assert [c for _, c in counts] == [0, 0, 0] and (moved, lost) == (0, 1)


def test_the_nearest_copy_wins():
    text = "- a\n- same\n- b\n- c\n- same\n"
    lines = [line.encode() for line in text.split("\n")[:-1]]
    digest = _sha(text, 2, 2)
    assert locate_range(lines, CitedRange(4, 4, 0, digest)) == (5, 5)
    assert locate_range(lines, CitedRange(3, 3, 0, digest)) == (2, 2)


def test_last_cited_and_relevance():
    now = 100 * DAY
    result = attribute_citations(MEMORY.encode(), [CitedRange(4, 4, 90 * DAY), CitedRange(4, 4, 80 * DAY)],
                                 now=now, created_at=50 * DAY)
    wal, retry, ports = result.entries
    assert (wal.citations, wal.last_cited, wal.tier) == (2, 90 * DAY, "CORE")
    assert wal.relevance == pytest.approx(1.0 * 0.95 ** 10)
    assert retry.relevance == pytest.approx(0.4 * 0.95 ** 50)  # never cited: since created
    assert ports.relevance == pytest.approx(0.5 * 0.95 ** 50)
    assert wal.to_dict() == {"line_start": 4, "line_end": 5, "title": "Use WAL", "id": None, "tier": "CORE",
                             "citations": 2, "last_cited": 90 * DAY, "relevance": round(0.95 ** 10, 6)}


@pytest.mark.parametrize(
    "tier, last, created, expected",
    [("CORE", 10 * DAY, None, 1.0), ("CORE", 0, None, 0.95 ** 10), ("IMP", None, None, 0.7), ("SEC", DAY, None, 0.4 * 0.95 ** 9),
     ("IRR", None, 0, 0.1 * 0.95 ** 10), (None, 20 * DAY, 0, 0.5), (None, 30 * DAY, 0, 0.5)],
)
def test_relevance_table(tier, last, created, expected):
    assert relevance(tier, last, created, 10 * DAY) == pytest.approx(expected)


_text = st.text(alphabet="abcdefgh ", min_size=1, max_size=12).map(str.strip).filter(bool)


@given(
    st.lists(st.tuples(_text, st.booleans()), min_size=1, max_size=10, unique_by=lambda e: e[0]),
    st.data(),
)
def test_attribution_survives_insertions_and_deletions_above_the_entry(entries, data):
    def render(items):
        out = ["# Group", "## Section"]
        for number, (text, with_source) in items:
            out.append(f"- entry {number}: {text}")
            if with_source:
                out.append(f"  Source: s{number}")
        return "\n".join(out) + "\n"

    numbered = list(enumerate(entries))
    k = data.draw(st.integers(0, len(numbered) - 1))
    before = render(numbered)
    target = read_entries(before)[k]
    cited = CitedRange(target.line_start, target.line_end, 5 * DAY,
                       _sha(before, target.line_start, target.line_end))
    above, below = numbered[:k], numbered[k:]
    kept = [item for item in above if data.draw(st.booleans())]  # deletions above
    inserted = [(100 + i, (f"inserted {i}", data.draw(st.booleans())))
                for i in range(data.draw(st.integers(0, 4)))]  # insertions above
    position = data.draw(st.integers(0, len(kept)))
    after = render(kept[:position] + inserted + kept[position:] + below)
    result = attribute_citations(after.encode(), [cited], now=10 * DAY)
    counted = [(u.entry.text, u.citations) for u in result.entries if u.citations]
    assert counted == [(target.text, 1)]
    assert result.unattributed == 0


def test_live_head_of_chains():
    text = ("- [IRR] A\n  superseded_by: B\n- [IRR] B\n  superseded_by: C\n- C\n"
            "- [IRR] X\n  superseded_by: Y\n- [IRR] Y\n  superseded_by: X\n- [IRR] D\n  superseded_by: nowhere\n")
    entries = read_entries(text)
    index = EntryIndex([("m", entries)])
    heads = {e.title: live_head(index, Located("m", e)) for e in entries}
    assert {title: head.entry.title if head else None for title, head in heads.items()} == {
        "A": "C", "B": "C", "C": "C", "X": None, "Y": None, "D": "D"}


# --------------------------------------------------------------------------- memory store v2

V2_SUMMARY = """v1
## User Profile
A developer.

## User preferences
- short answers

## General Tips
- see rollout_summaries/tips.md for the long version

## What's in Memory
### /home/dev/app
#### 2026-11-01
- rollout_summaries/2026-11-01T10-00-00-abcd-flaky.md — the flaky test (a race); thread_id=019b76da-a800-7de5-8c3e-9e72e44926e8
  - PR: #42
- rollout_summaries/2026-11-02T10-00-00-efgh-deploy.md — the deploy; thread_id=019b76a3-9a91-7f98-8541-21849548e142
### Older Memory Topics
#### /home/dev/old
- rollout_summaries/2026-11-01T10-00-00-abcd-flaky.md — the same rollout, named again; thread_id=019b76da-a800-7de5-8c3e-9e72e44926e8
"""


def test_v2_citations_of_a_rollout_summary_count_for_every_route_naming_it():
    from memcite.retention.entry_usage import attribute_routes

    flaky, deploy = "2026-11-01T10-00-00-abcd-flaky.md", "2026-11-02T10-00-00-efgh-deploy.md"
    found = attribute_routes(V2_SUMMARY.encode(), [
        (flaky, CitedRange(1, 4, 1_000, None, 2)),
        (flaky, CitedRange(9, 12, 3_000)),
        ("gone.md", CitedRange(1, 2, 2_000)),
    ], now=10_000)
    by_line = {usage.entry.line_start: (usage.citations, usage.last_cited) for usage in found.entries}
    assert by_line[14] == (3, 3_000)  # the route of the flaky test: 2 + 1 citations
    assert by_line[19] == (3, 3_000)  # the older topic naming the same file
    assert by_line[16] == (0, None)  # the deploy, never cited
    assert next(u for u in found.entries if deploy in u.entry.title).entry.line_start == 16
    assert found.unattributed == 1  # gone.md: no route names it
    assert by_line[9] == (0, None)  # a tip mentioning a file is an entry; tips.md was not cited
