"""``memcite.times``: the one definition of the ISO 8601 and day forms of a Unix time."""

from __future__ import annotations

import pytest

from memcite.times import iso_utc, utc_day


@pytest.mark.parametrize(("seconds", "iso", "day"), [
    (0, "1970-01-01T00:00:00Z", "1970-01-01"),
    (1_800_000_000, "2027-01-15T08:00:00Z", "2027-01-15"),
    (1_800_000_000.9, "2027-01-15T08:00:00Z", "2027-01-15"),  # seconds, never rounded up
    (None, None, None),
    (10 ** 20, None, None),  # beyond year 9999: no date rather than an error
    (253_402_300_800, None, None),  # 10000-01-01
])
def test_iso_and_day(seconds, iso, day):
    assert iso_utc(seconds) == iso
    assert utc_day(seconds) == day
