"""``stats`` ranks thousands of unknown ids to show fifty: most cited first, then by name."""

from __future__ import annotations

from heapq import nsmallest

from hypothesis import given
from hypothesis import strategies as st

from memcite.retention.stats import _most_first, _ranked


def _plain(counts: dict[str, int], limit: int) -> list[tuple[str, int]]:
    ranked = sorted(counts.items(), key=_most_first)
    return ranked[:limit] if limit else ranked


@given(st.dictionaries(st.text(max_size=6), st.integers(1, 6), max_size=80), st.integers(0, 90))
def test_ranked_is_the_plain_sort_cut_to_the_limit(counts, limit):
    assert _ranked(counts, limit) == _plain(counts, limit)


def test_ties_at_the_cut_are_taken_by_name():
    counts = {"b": 1, "a": 1, "z": 3, "c": 1, "y": 2}
    assert _ranked(counts, 3) == [("z", 3), ("y", 2), ("a", 1)]
    assert _ranked(counts, 3) == nsmallest(3, counts.items(), key=_most_first)
