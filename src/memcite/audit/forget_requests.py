"""``memcite archived`` as one library function: ``list_archived`` reads the requests to forget
(and what an older memcite archived) from memcite's ledger, each open one with whether Codex
did it, by what Codex records (``request_outcomes``, which the caller passes in: the
Codex wing's ``consolidation.request_outcomes``, in the wing above this one);
``render_text`` is what the command prints.

Where things are comes in resolved (the Codex home or None for every home, the
``CODEX_SQLITE_HOME`` the run was given, an opener of the ledger) and the time as ``now``.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from memcite.retention.stats_text import day

SHOWS_STATES = ("states: done = asked, Codex still has it; forgotten = a sync found it gone; "
                "withdrawn / restored = undone; rolled_back = never happened\n")
SHOWS_OUTCOMES = ("in Codex: asked = no consolidation has read the note yet; seen = a run that "
                  "has not succeeded read it; not done after a consolidation = the last "
                  "successful one took it in, and the memory is still there (Codex keeps a "
                  "record of its last run only); done = its row and rollout summary are gone "
                  "(`memcite consolidation` shows each store's runs)\n")


def list_archived(open_ledger, *, codex_home: str | None, limit: int, now: int,
                  env_sqlite_home: str | None, request_outcomes: Callable[..., dict]) -> dict:
    """``{"codex_home", "requests", "legacy_archive"}`` (``archived --json``): the requests of
    ``codex_home`` (None: of every home), newest first, at most ``limit`` (0: all), each with
    its ``consolidation`` outcome at ``now``. ``open_ledger()`` opens memcite's database
    read-only; it is closed here. ``request_outcomes(requests, sqlite_homes=..., now=...)``
    gives each request's outcome by its id (the Codex wing's ``consolidation.request_outcomes``)."""
    from memcite.retention.archive import archive_log
    from memcite.retention.forget import list_requests

    conn = open_ledger()
    try:
        requests = list_requests(conn, codex_home=codex_home, limit=limit)
        legacy = [e for e in archive_log(conn, limit=limit) if e["action"] == "archive"]
    finally:
        conn.close()
    outcomes = request_outcomes(requests, sqlite_homes=sqlite_homes(
        requests, env_sqlite_home=env_sqlite_home), now=now)
    for item in requests:
        item["consolidation"] = outcomes.get(item["id"])
    return {"codex_home": codex_home, "requests": requests, "legacy_archive": legacy}


def sqlite_homes(requests: list[dict], *, env_sqlite_home: str | None) -> dict[str, str | None]:
    """Each Codex home's SQLite home, as Codex finds it (None when the home cannot be read);
    ``env_sqlite_home``: ``$CODEX_SQLITE_HOME`` as the caller resolved it."""
    from memcite.ledger.codex_home import CodexHomeError, locate_codex_home

    found: dict[str, str | None] = {}
    for home in {item["codex_home"] for item in requests}:
        try:
            found[home] = locate_codex_home(home, env_sqlite_home=env_sqlite_home).sqlite_home
        except CodexHomeError:
            found[home] = None
    return found


def render_text(listing: dict) -> str:
    """The lines ``memcite archived`` prints for ``list_archived``'s ``listing``."""
    home, requests, legacy = listing["codex_home"], listing["requests"], listing["legacy_archive"]
    lines = []
    out = lines.append
    out(f"requests to forget{f' for the Codex home {home}' if home else ''} "
        f"({len(requests)}, newest first):\n")
    if not requests:
        out("  none\n")
    for item in requests:
        where = (os.path.basename(item["note_path"] or "-") if item["way"] == "note"
                 else f"rows deleted from {item['codex_db']}")
        out(f"  {item['thread_id']}  {item['label'] or '-'}\n"
            f"      {item['state']:<11} {day(item['requested_at'])}  way {item['way']}: "
            f"{where}  batch {item['batch'][:12]}\n")
        if item["consolidation"]:
            out(f"      in Codex: {item['consolidation']['text']}\n")
    if legacy:
        out(f"\nsummary files archived by an earlier memcite ({len(legacy)}):\n")
        for entry in legacy:
            out(f"  {entry['thread_id']}  {day(entry['at'])}  {entry['file_to'] or '-'}\n")
    out(SHOWS_STATES)
    if any(item["consolidation"] for item in requests):
        out(SHOWS_OUTCOMES)
    return "".join(lines)
