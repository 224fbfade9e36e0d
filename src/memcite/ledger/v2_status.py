"""Memory store v2's readiness, as Codex's app server judges it (``memory/status``).

``memory/status`` (0.171, experimental) takes ``minConsolidatedThreads`` (default 20, 1 to
4,096) and answers ``v2ConsolidatedThreads`` and ``v2Ready``: enough distinct threads
consolidated into v2, and a valid v2 ``memory_summary.md``. memcite reads the same from
the files, read-only: the distinct threads of ``memories_v2_1.sqlite``'s
``stage1_outputs`` that its last consolidation took (``selected_for_phase2``), and the v2
summary: a regular UTF-8 file whose first line (trimmed as Codex trims it) is ``v1``,
followed by the four headings its consolidation prompt requires, in order
(``V2_SUMMARY_HEADINGS``; a summary without them fails a v2 consolidation as
``failed_invalid_artifacts``, tests/e2e/test_e2e_consolidation_runs.py).
"""

from __future__ import annotations

import os
import sqlite3

V2_SUMMARY_HEADINGS = ("## User Profile", "## User preferences", "## General Tips",
                       "## What's in Memory")
MIN_CONSOLIDATED_THREADS = 20  # memory/status's minConsolidatedThreads default (1..=4096)


def v2_readiness(locations, *, min_threads: int = MIN_CONSOLIDATED_THREADS) -> dict:
    """Memory store v2's readiness as Codex's app server judges it (``memory/status``):
    distinct threads consolidated into v2 (rows of ``memories_v2_1.sqlite``'s
    ``stage1_outputs`` its last consolidation took) against ``min_threads``, and a valid v2
    ``memory_summary.md`` (a regular UTF-8 file, not blank). Read-only."""
    from memcite.ledger.codex_home import memory_folder, open_codex_db, state_db_path
    from memcite.rust_text import rust_trim

    db = state_db_path(locations.codex_home, locations.sqlite_home, "v2")
    threads, problem = 0, None
    if os.path.isfile(db):
        try:
            conn = open_codex_db(db)
            try:
                columns = {row[1] for row in conn.execute("PRAGMA table_info(stage1_outputs)")}
                if "selected_for_phase2" in columns:
                    threads = conn.execute(
                        "SELECT count(DISTINCT thread_id) FROM stage1_outputs"
                        " WHERE selected_for_phase2 = 1").fetchone()[0]
                elif columns:
                    problem = "stage1_outputs has no selected_for_phase2 (an older Codex)"
            finally:
                conn.close()
        except (sqlite3.Error, Exception) as exc:  # noqa: BLE001 - said, never raised
            problem = f"{db}: cannot read ({exc})"
    summary_path = os.path.join(memory_folder(locations.codex_home, "v2"), "memory_summary.md")
    valid, why = False, "not there"
    try:
        from memcite.untrusted import open_regular

        with os.fdopen(open_regular(summary_path), "rb") as handle:
            data = handle.read(16 * 1024 * 1024)
        try:
            why = summary_problem(rust_trim(data.decode("utf-8"))) or "valid"
            valid = why == "valid"
        except UnicodeDecodeError:
            why = "not UTF-8"
    except FileNotFoundError:
        pass
    except OSError as exc:
        why = f"unreadable ({exc.strerror or exc})"
    ready = valid and threads >= min_threads
    return {"db": db, "db_present": os.path.isfile(db), "consolidated_threads": threads,
            "min_consolidated_threads": min_threads, "summary": summary_path,
            "summary_valid": valid, "summary_state": why, "ready": ready, "problem": problem}


def summary_problem(text: str) -> str | None:
    """What makes a v2 summary (already trimmed) invalid, or None: ``blank``, ``no v1 line``,
    ``missing <heading>``, ``<heading> out of order``."""
    if not text:
        return "blank"
    lines = [line.rstrip() for line in text.split("\n")]
    if lines[0].strip() != "v1":
        return "no v1 line"
    place = 0
    for heading in V2_SUMMARY_HEADINGS:
        if heading not in lines:
            return f"missing {heading}"
        at = lines.index(heading)
        if at < place:
            return f"{heading} out of order"
        place = at
    return None


__all__ = ["MIN_CONSOLIDATED_THREADS", "V2_SUMMARY_HEADINGS", "summary_problem", "v2_readiness"]
