"""The body of ``memcite search``: refresh the index in memcite's database, then query it.

Free of Typer; returns the exit code. The library is ``memcite.notes.search``.
"""

from __future__ import annotations

import os
import sys

from memcite.cli.console import check_choice, dump_json, note
from memcite.errors import InputError
from memcite.paths import Locations

KIND_CHOICES = ("notes", "events", "memory", "all")


def kinds_of(kind: str | None) -> tuple[str, ...]:
    from memcite.notes.search import KINDS

    value = kind or "all"
    check_choice(value, KIND_CHOICES, "--kind")
    return KINDS if value == "all" else (value,)


def scopes_of(scope: str | None, session: str | None) -> tuple[str, ...]:
    from memcite.readpath.projects import check_session_id, parse_scopes

    scopes = parse_scopes(scope) if scope is not None else ("project", "global")
    if "session" in scopes:
        if not session:
            raise InputError("--scope session needs a session id",
                             hint="pass --session ID or set MEMCITE_SESSION")
        check_session_id(session)
    return scopes


def open_index(db: str | None, say=note):
    """memcite's database, created as the other commands create it; ``(conn, in_memory)``.
    When it cannot be opened for writing (read-only, a folder that cannot be made), the
    index is built in memory for this run, and that is said with ``say``; a damaged one is
    refused."""
    from memcite.cli.ledger_commands import open_database
    from memcite.ledger.store import DamagedStoreError, StoreError
    from memcite.notes.search import in_memory_index

    try:
        return open_database(db), False
    except DamagedStoreError:
        raise
    except StoreError as error:
        say(f"{error}; searching with an index in memory for this run only")
        return in_memory_index(), True


def run_search(query_text: str, *, cwd: str | None, codex_home: str | None, db: str | None,
               scope: str | None, session: str | None, kind: str | None, limit: int,
               say=note) -> dict:
    """Refresh and query; the ``--json`` object (the MCP tool returns it too). ``say`` tells
    of an index kept in memory (the object's ``in_memory`` says it too)."""
    from memcite.ledger.codex_home import codex_memory_folder
    from memcite.notes import search
    from memcite.notes.storage import locate_note

    kinds = kinds_of(kind)
    session = session or os.environ.get("MEMCITE_SESSION") or None
    scopes = scopes_of(scope, session)
    if not query_text or not query_text.strip():
        raise InputError("nothing to search for", hint="give the words to look for")
    if limit < 0:
        raise InputError("--limit: must be 0 or more")
    folder = cwd or os.getcwd()
    if not os.path.isdir(folder):
        raise InputError(f"--cwd: {folder} is not a folder")
    home = Locations(codex_home=codex_home).codex_home_path
    location = locate_note(folder, home)
    try:
        memory = codex_memory_folder(home)
    except Exception:  # noqa: BLE001 - an unreadable config.toml: Codex's default folder
        from memcite.ledger.codex_home import memory_folder

        memory = memory_folder(home)
    sources = search.sources_for(location, kinds, scopes, memory, session)
    conn, in_memory = open_index(db, say)
    try:
        search.ensure_schema(conn)
        stats = search.refresh(conn, sources)
        hits = search.query(conn, query_text, sources, kinds=kinds, limit=limit)
    finally:
        conn.close()
    from memcite.display import shown

    return {"query": shown(query_text), "project": location.project,
            "codex_home": location.home, "memory_folder": os.path.abspath(memory),
            "scopes": list(scopes), "kinds": list(kinds), "limit": limit,
            "in_memory": in_memory, "refresh": stats.to_json(), "count": len(hits),
            "hits": [hit.to_json() for hit in hits]}


def search(query_text: str | None, scope: str | None = None, session: str | None = None,
           kind: str | None = None, limit: int = 20, cwd: str | None = None,
           codex_home: str | None = None, db: str | None = None,
           json: bool = False) -> int:  # noqa: A002
    """``memcite search``: print the hits, best first (exit 0 even when none)."""
    from memcite.cli.note_runs import run_body as _run

    def body() -> int:
        result = run_search(query_text or "", cwd=cwd, codex_home=codex_home, db=db,
                            scope=scope, session=session, kind=kind, limit=limit)
        for problem in result["refresh"]["skipped"]:
            note(problem)
        if json:
            dump_json(result)
            return 0
        out = sys.stdout
        if not result["hits"]:
            out.write(f"No match for {result['query']!r} in {', '.join(result['kinds'])} "
                      f"({result['project']}).\n")
            return 0
        for hit in result["hits"]:
            text = " ".join(hit["snippet"].split())
            where = hit["kind"] if hit["kind"] == hit["scope"] else f"{hit['kind']}, {hit['scope']}"
            out.write(f"{hit['file']}:{hit['line']}: [{where}] {text}\n")
        return 0

    return _run(body, db, json)
