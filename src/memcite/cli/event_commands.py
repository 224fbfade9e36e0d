"""The bodies of ``memcite event add|list|show``: a project's append-only event log.

Free of Typer; each returns the exit code. Refusals (a secret, a sensitive subject not
confirmed) print their reason and exit 3, as the note commands do.
"""

from __future__ import annotations

import os
import time

from memcite.cli.console import dump_json, note
from memcite.cli.note_runs import confirmed as _confirmed
from memcite.cli.note_runs import note_location as _location
from memcite.cli.note_runs import out as _out
from memcite.cli.note_runs import report_tightened as _report_tightened
from memcite.cli.note_runs import run_body as _run


def _event_line(event, hidden: dict[str, str], stale: dict[str, list[str]]) -> str:
    marks = []
    if event.fragile:
        marks.append("fragile")
    if event.supersedes:
        marks.append(f"supersedes {event.supersedes}")
    if event.id in hidden:
        marks.append(f"superseded by {hidden[event.id]}")
    if event.id in stale:
        marks.append("stale: " + "; ".join(stale[event.id]))
    files = f" ({', '.join(event.files)})" if event.files else ""
    tail = f" [{', '.join(marks)}]" if marks else ""
    text = " ".join(event.text.split())
    return f"{event.id} {event.time} {event.kind:<8} {text}{files}{tail}"


def _event_json(event, hidden: dict[str, str], stale: dict[str, list[str]]) -> dict:
    return {**event.to_json(), "superseded_by": hidden.get(event.id),
            "stale": stale.get(event.id, [])}


def add(kind: str | None = None, text: str | None = None, file: list[str] | None = None,
        supersedes: str | None = None, fragile: bool = False, redact: bool = False,
        yes: bool = False, cwd: str | None = None, codex_home: str | None = None,
        json: bool = False, scope: str | None = None,  # noqa: A002
        session: str | None = None) -> int:
    """Append one event to the project's (or the scope's) log."""
    from memcite.errors import InputError
    from memcite.notes import events

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
        event = result.event
        if json:
            dump_json({"log_file": result.log_file, "project": location.project,
                       "scope": location.scope, "event": event.to_json(),
                       "redacted": result.redacted})
            return 0
        for item in result.redacted:
            note(f"redacted {item['kind']} on line {item['line']}")
        _out(f"recorded {event.id} ({event.kind}): {' '.join(event.text.split())}")
        if result.superseded is not None:
            _out(f"supersedes {result.superseded.id} ({result.superseded.kind}), no longer "
                 "shown in recall")
        _out(f"log: {result.log_file} (appended, read back and verified)")
        return 0

    return _run(body, None, json)


def list_events(kind: str | None = None, file: str | None = None, cwd: str | None = None,
                codex_home: str | None = None, json: bool = False,  # noqa: A002
                scope: str | None = None, session: str | None = None) -> int:
    """Print the log's events, oldest first, each marked superseded or stale where it is."""
    from memcite.notes import events

    def body() -> int:
        location = _location(cwd, codex_home, scope, session)
        logged = events.read_events(location)
        wanted = events.project_file(location, file, os.path.abspath(cwd or os.getcwd())) \
            if file is not None else None
        chosen = events.select(logged, kind=kind, file=wanted)
        hidden = events.superseded_by(logged)
        stale = events.stale_events(location.project, chosen)
        if json:
            dump_json({"log_file": events.events_path(location), "project": location.project,
                       "scope": location.scope, "count": len(chosen),
                       "events": [_event_json(e, hidden, stale) for e in chosen]})
            return 0
        if not logged:
            _out(f"No events for {location.project} (looked for {events.events_path(location)}).")
            return 0
        for event in chosen:
            _out(_event_line(event, hidden, stale))
        if not chosen:
            _out("No event matches.")
        return 0

    return _run(body, None, json)


def show(event_id: str | None = None, cwd: str | None = None, codex_home: str | None = None,
         json: bool = False, scope: str | None = None,  # noqa: A002
         session: str | None = None) -> int:
    """Print one event, with what it supersedes and what supersedes it."""
    from memcite.errors import InputError
    from memcite.notes import events

    def body() -> int:
        if not event_id:
            raise InputError("give the event's ID", hint="memcite event list shows the ids")
        location = _location(cwd, codex_home, scope, session)
        logged = events.read_events(location)
        event = events.find_event(logged, event_id)
        hidden = events.superseded_by(logged)
        stale = events.stale_events(location.project, [event])
        if json:
            dump_json({"log_file": events.events_path(location), "project": location.project,
                       "event": _event_json(event, hidden, stale)})
            return 0
        provenance = event.provenance
        confirmed = "yes" if provenance.get("confirmed") else "no (automatic)"
        how = provenance.get("confirmation")
        _out(f"{event.id} ({event.kind}) at {event.time}")
        _out(event.text)
        if event.files:
            _out(f"files: {', '.join(event.files)}" + (" (marked fragile)" if event.fragile
                                                        else ""))
        _out(f"by {provenance.get('who', 'unknown')} via {provenance.get('via', '?')}; confirmed: "
             f"{confirmed}{f' ({how})' if how and provenance.get('confirmed') else ''}")
        if event.supersedes:
            _out(f"supersedes {event.supersedes}")
        if event.id in hidden:
            _out(f"superseded by {hidden[event.id]} (not shown in recall)")
        if event.id in stale:
            _out("stale: " + "; ".join(stale[event.id]))
        return 0

    return _run(body, None, json)


__all__ = ["add", "list_events", "show"]
