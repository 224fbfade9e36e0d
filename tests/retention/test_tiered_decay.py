"""``prune --rule tiered`` by survival: decay per tier, reset by a use since Codex's last
consolidation, accelerated without one (tables of the dynamics), the reasons the preview
gives, and the last consolidation as Codex's jobs table records it."""

from __future__ import annotations

import sqlite3

import pytest

from memcite.codex.consolidation import last_consolidation
from memcite.retention.tiers import DEFAULT, TierWindows, judge, survival

DAY = 86_400
NOW = 1_800_000_000


def _days(n):
    return None if n is None else NOW - n * DAY


# tier, last cited (days ago), written (days ago), last consolidation (days ago), action, potential
@pytest.mark.parametrize(
    ("tier", "cited", "written", "consolidated", "action", "potential"),
    [
        # no consolidation known: the tier's rate all along
        ("CORE", None, 3000, None, "keep", 1.0),
        ("IMP", None, 79, None, "keep", 1 - 0.15 * 79 / 30),
        ("IMP", None, 80, None, "review", 0.60),  # 0.15/month reaches 0.60 at 80 days
        ("SEC", 29, 300, None, "keep", 1 - 0.40 * 29 / 30),
        ("SEC", 30, 300, None, "prune", 0.60),  # 0.40/month: pruned at 30 days
        ("IRR", 0, 0, None, "prune", None),  # at once
        # used since the last consolidation: the decay is reset to 0.05/month
        ("IMP", 5, 400, 10, "keep", 1 - 0.05 * 5 / 30),
        ("SEC", 60, 400, 90, "keep", 1 - 0.05 * 60 / 30),  # 60 days unused, still kept
        ("SEC", 240, 400, 300, "prune", 1 - 0.05 * 240 / 30),  # 0.05/month for 8 months: 0.60
        # not used since the last consolidation: the tier's rate until it, accelerated after
        ("IMP", 40, 400, 30, "keep", 1 - 0.15 * 10 / 30 - 0.25 * 30 / 30),
        ("IMP", 60, 400, 30, "review", 1 - 0.15 * 30 / 30 - 0.25 * 30 / 30),
        ("SEC", 29, 400, 10, "keep", 1 - 0.40 * 19 / 30 - 0.40 * 10 / 30),  # SEC's rate is higher
        ("SEC", 31, 400, 10, "prune", 1 - 0.40 * 21 / 30 - 0.40 * 10 / 30),
        ("CORE", 900, 900, 1, "keep", 1.0),  # CORE never decays, consolidation or not
        # never cited: from when it was written
        ("IMP", None, 40, 39, "keep", 1 - 0.15 * 1 / 30 - 0.25 * 39 / 30),
        ("IMP", None, 60, 40, "review", 1 - 0.15 * 20 / 30 - 0.25 * 40 / 30),
    ],
)
def test_the_dynamics(tier, cited, written, consolidated, action, potential):
    verdict = judge(tier, last_cited=_days(cited), created_at=_days(written), now=NOW,
                    last_consolidation=_days(consolidated))
    assert verdict.action == action, verdict.reason
    if potential is not None and tier != "CORE":
        assert f"survival {potential:.2f}" in verdict.reason


def test_a_use_before_the_consolidation_is_not_a_use_since_it():
    cited, consolidated = _days(20), _days(10)
    reset, _ = survival("IMP", since=cited, now=NOW, last_consolidation=consolidated,
                        used_since=True)
    accelerated, how = survival("IMP", since=cited, now=NOW, last_consolidation=consolidated,
                                used_since=False)
    assert reset > accelerated
    verdict = judge("IMP", last_cited=cited, created_at=None, now=NOW,
                    last_consolidation=consolidated)
    assert "not used since the last consolidation" in verdict.reason
    assert "0.15/month until it, 0.25/month since" in verdict.reason


@pytest.mark.parametrize(("cited", "says"), [
    (3, "kept (last cited 3 days ago; used since the last consolidation (2027-01-10): decay "
        "reset to 0.05/month)"),
    (40, "review (last cited 40 days ago; not used since the last consolidation "
         "(2027-01-10): 0.15/month until it, 0.25/month since)"),
])
def test_the_reason_says_why_it_is_kept_or_not(cited, says):
    windows = TierWindows.from_config(None, {"imp_threshold": 0.8})
    verdict = judge("IMP", last_cited=_days(cited), created_at=None, now=NOW,
                    last_consolidation=_days(5), windows=windows)
    assert says in verdict.reason, verdict.reason


def test_rates_and_thresholds_come_from_the_config():
    windows = TierWindows.from_config(None, {"sec_rate": 0.2, "sec_threshold": 0.5,
                                             "used_rate": 0.0, "unused_rate": 0.5})
    assert windows.to_dict()["SEC"] == 75
    assert judge("SEC", last_cited=_days(70), created_at=None, now=NOW,
                 windows=windows).action == "keep"
    # a use since the consolidation with used_rate 0: no decay at all
    assert judge("SEC", last_cited=_days(700), created_at=None, now=NOW, windows=windows,
                 last_consolidation=_days(701)).action == "keep"
    # accelerated to 0.5/month after the consolidation: 1 - 0.2*1 - 0.5*0.7 = 0.45
    assert judge("SEC", last_cited=_days(51), created_at=None, now=NOW, windows=windows,
                 last_consolidation=_days(21)).action == "prune"


def test_a_fixed_window_replaces_the_decay_of_its_tier_only():
    windows = TierWindows.from_config({"sec_days": 14})
    assert judge("SEC", last_cited=_days(14), created_at=None, now=NOW, windows=windows,
                 last_consolidation=_days(20)).action == "prune"
    assert "survival" in judge("IMP", last_cited=_days(14), created_at=None, now=NOW,
                               windows=windows).reason


@pytest.mark.parametrize("decay", [{"imp_rate": 2}, {"imp_rate": -0.1}, {"imp_rate": True},
                                   {"imp_speed": 0.1}])
def test_bad_decay_is_refused(decay):
    from memcite.errors import InputError

    with pytest.raises(InputError):
        TierWindows.from_config(None, decay)


def test_the_defaults_are_the_seed_table():
    assert dict(DEFAULT.rates) == {"CORE": 0.0, "IMP": 0.15, "SEC": 0.40, "IRR": 0.65}
    assert (DEFAULT.used_rate, DEFAULT.unused_rate) == (0.05, 0.25)
    assert DEFAULT.to_dict() == {"CORE": None, "IMP": 80, "SEC": 30, "IRR": 0}


# --------------------------------------------------------------------------- Codex's jobs table

JOBS = ("CREATE TABLE jobs (kind TEXT NOT NULL, job_key TEXT NOT NULL, status TEXT NOT NULL,"
        " worker_id TEXT, ownership_token TEXT, started_at INTEGER, finished_at INTEGER,"
        " lease_until INTEGER, retry_at INTEGER, retry_remaining INTEGER NOT NULL,"
        " last_error TEXT, input_watermark INTEGER, last_success_watermark INTEGER,"
        " PRIMARY KEY (kind, job_key))")


@pytest.mark.parametrize(("status", "error", "expected"), [
    ("done", None, NOW - 100), ("pending", None, NOW - 100), ("error", "failed_agent", None),
    ("pending", "failed_agent", None), ("running", None, None)])
def test_the_last_consolidation_is_the_last_success_codex_recorded(tmp_path, status, error,
                                                                   expected):
    db = tmp_path / "memories_1.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute(JOBS)
        conn.execute("INSERT INTO jobs VALUES ('memory_consolidate_global', 'global', ?, NULL,"
                     " NULL, ?, ?, NULL, NULL, 3, ?, 5, 4)",
                     (status, NOW - 200, NOW - 100, error))
        conn.execute("INSERT INTO jobs VALUES ('memory_stage1', 't1', 'done', NULL, NULL, ?,"
                     " ?, NULL, NULL, 3, NULL, 5, 4)", (NOW - 10, NOW - 5))
    conn.close()
    assert last_consolidation(str(db)) == expected


def test_no_database_or_no_jobs_table_is_no_consolidation(tmp_path):
    assert last_consolidation(str(tmp_path / "none.sqlite")) is None
    sqlite3.connect(tmp_path / "empty.sqlite").close()
    assert last_consolidation(str(tmp_path / "empty.sqlite")) is None
