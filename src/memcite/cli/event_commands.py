"""The bodies of ``memcite event add|list|show``: a project's append-only event log.

Free of Typer; each returns the exit code. Refusals (a secret, a sensitive subject not
confirmed) print their reason and exit 3, as the note commands do.
"""

from __future__ import annotations

import os
import sys
import time

from memcite.cli.console import dump_json
from memcite.cli.note_runs import confirmed as _confirmed
from memcite.cli.note_runs import note_location as _location
from memcite.cli.note_runs import report_tightened as _report_tightened
from memcite.cli.note_runs import run_body as _run
from memcite.cli.note_runs import write_lines as _write_lines


def add(kind: str | None = None, text: str | None = None, file: list[str] | None = None,
        supersedes: str | None = None, fragile: bool = False, redact: bool = False,
        yes: bool = False, cwd: str | None = None, codex_home: str | None = None,
        json: bool = False, scope: str | None = None,  # noqa: A002
        session: str | None = None) -> int:
    """Append one event to the project's (or the scope's) log."""
    from memcite.errors import InputError
    from memcite.notes import events, render

    def body() -> int:
        if kind is None:
            raise InputError("--kind is required", hint="--kind " + "|".join(events.KINDS))
        content = text
        if content == "-":
            from memcite.cli.inputs import decode_utf8, read_bytes

            content = decode_utf8(read_bytes("-", max_bytes=1 << 16), name="stdin")
        if not content:
            raise InputError("nothing to record", hint="give TEXT, or - for stdin")
        location = _location(cwd, codex_home, scope, session)
        folder = os.path.abspath(cwd or os.getcwd())
        now = time.time()
        result = _confirmed(lambda who: events.add_event(
            location, kind=kind, text=content, files=file or [], supersedes=supersedes,
            fragile=fragile, via="cli", confirmed_by=who, redact=redact, now=now, cwd=folder),
            yes)
        _report_tightened(result.tightened)
        if json:
            dump_json(render.added_event_json(location, result))
        else:
            _write_lines(render.added_event_lines(result))
        return 0

    return _run(body, None, json)


def list_events(kind: str | None = None, file: str | None = None, cwd: str | None = None,
                codex_home: str | None = None, json: bool = False,  # noqa: A002
                scope: str | None = None, session: str | None = None) -> int:
    """Print the log's events, oldest first, each marked superseded or stale where it is."""
    from memcite.notes import render
    from memcite.notes.events import view_events

    def body() -> int:
        location = _location(cwd, codex_home, scope, session)
        view = view_events(location, kind=kind, file=file,
                           cwd=os.path.abspath(cwd or os.getcwd()))
        if json:
            dump_json(render.events_json(location, view))
        else:
            sys.stdout.write(render.render_events(location, view))
        return 0

    return _run(body, None, json)


def show(event_id: str | None = None, cwd: str | None = None, codex_home: str | None = None,
         json: bool = False, scope: str | None = None,  # noqa: A002
         session: str | None = None) -> int:
    """Print one event, with what it supersedes and what supersedes it."""
    from memcite.errors import InputError
    from memcite.notes import render
    from memcite.notes.events import view_events

    def body() -> int:
        if not event_id:
            raise InputError("give the event's ID", hint="memcite event list shows the ids")
        location = _location(cwd, codex_home, scope, session)
        view = view_events(location, event_id=event_id)
        if json:
            dump_json(render.event_show_json(location, view))
        else:
            sys.stdout.write(render.render_event(view))
        return 0

    return _run(body, None, json)


__all__ = ["add", "list_events", "show"]
