"""The body of ``memcite search``: read the options, call ``memcite.notes.search.run_search``
(refresh the index in memcite's database, then query it) and print the hits.

Free of Typer; returns the exit code.
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


def search(query_text: str | None, scope: str | None = None, session: str | None = None,
           kind: str | None = None, limit: int = 20, cwd: str | None = None,
           codex_home: str | None = None, db: str | None = None,
           json: bool = False) -> int:  # noqa: A002
    """``memcite search``: print the hits, best first (exit 0 even when none)."""
    from memcite.cli.note_runs import run_body as _run

    def body() -> int:
        from memcite.notes.search import run_search

        kinds = kinds_of(kind)
        named_session = session or os.environ.get("MEMCITE_SESSION") or None
        scopes = scopes_of(scope, named_session)
        result = run_search(Locations(db=db, codex_home=codex_home), query_text or "",
                            cwd=cwd or os.getcwd(), kinds=kinds, scopes=scopes,
                            session=named_session, limit=limit, say=note)
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
