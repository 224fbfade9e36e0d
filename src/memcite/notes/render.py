"""What the note commands print: pure functions of the notes' results and locations.

Each returns the text for stdout, or, where a command's output mixes stdout and its notes on
stderr, the lines in order as ``(stream, text)`` pairs: ``"out"`` (stdout), ``"note"``
(stderr, after ``memcite: ``) or ``"err"`` (stderr, as given). The command line writes them;
the MCP server and the tests can read them without running a command. Whatever comes from a
note or a person goes through ``memcite.display.shown`` here.
"""

from __future__ import annotations

import os

from memcite.display import count

OUT, NOTE, ERR = "out", "note", "err"

SCOPE_WORDS = {"project": "this project's note", "global": "the global note",
               "session": "this session's note"}


def _entries(count: int) -> str:
    return f"entr{'y' if count == 1 else 'ies'}"


def _again(location) -> str:
    """The options that name the note's scope again (none for the project's)."""
    return "" if location.scope == "project" else f" --scope {location.scope}"


# --------------------------------------------------------------------------- path


def render_path(location, exists: bool) -> str:
    """``memcite note path``: where the note lives, and whether it exists."""
    lines = [f"project folder: {location.project_folder}",
             f"canonical path: {location.project}",
             f"slug:           {location.slug}"]
    if location.scope != "project":
        lines.append(f"scope:          {location.scope}"
                     + (f" (session {location.session})" if location.session else ""))
    lines.append(f"note:           {location.note_file} ({'exists' if exists else 'none yet'})")
    lines.append(f"archive:        {location.archive_dir}")
    return "".join(line + "\n" for line in lines)


# --------------------------------------------------------------------------- save


def save_json(result) -> dict:
    """``memcite note save --json``."""
    return {
        "note_file": result.location.note_file, "project": result.location.project,
        "slug": result.location.slug, "scope": result.location.scope,
        "written": result.written, "dry_run": not result.written,
        "entries": result.outcomes, "adopted": result.adopted, "redacted": result.redactions,
        "archived": result.archived, "tightened": result.tightened,
        **({"text": result.text} if not result.written else {}),
    }


def save_lines(result) -> list[tuple[str, str]]:
    """``memcite note save``'s text."""
    if not result.written:
        text = result.text if result.text.endswith("\n") else result.text + "\n"
        return [(OUT, text[:-1]), (NOTE, "dry run: nothing was written")]
    lines = []
    words = {"save": "saved", "update": "updated", "unchanged": "unchanged (already there)"}
    for outcome in result.outcomes:
        lines.append((OUT, f"{words[outcome['action']]} [{outcome['id']}] in {outcome['section']}: "
                           f"{outcome['text']}"))
    lines += [(NOTE, f"a hand-written entry was given the id {entry_id}")
              for entry_id in result.adopted]
    lines += [(NOTE, f"redacted {item['kind']} on line {item['line']} of entry {item['entry']}")
              for item in result.redactions]
    lines += [(NOTE, f"the previous version is kept in {path}") for path in result.archived]
    if all(outcome["action"] == "unchanged" for outcome in result.outcomes) and not result.adopted:
        lines.append((OUT, f"note: {result.location.note_file} (nothing to change)"))
    else:
        lines.append((OUT, f"note: {result.location.note_file} (read back and verified)"))
    location = result.location
    # Outside a git work tree the project is the folder itself: say so, since a note saved in
    # the wrong folder (a home folder, `/`) is easy to miss.
    if location.scope == "project" and not os.path.lexists(os.path.join(location.project, ".git")):
        lines.append((NOTE, f"the project is {location.project} (no git work tree above it: the "
                            "folder itself); run from the repository, or pass --cwd, to save the "
                            "note of another project"))
    return lines


# --------------------------------------------------------------------------- recall


def _missing_for(recalled, entry, key: str = "missing_paths") -> list[str]:
    for item in recalled.entries:
        if item["id"] == entry.id and item["text"] == entry.text:
            return item.get(key, [])
    return []



def recall_json(recalled, location) -> dict:
    """``memcite note recall --json``: the note's entries as shown (with the recall notice)."""
    from memcite.notes.operations import RECALL_FRAME, shown_entries

    return {
        "project": location.project, "note_file": location.note_file,
        "exists": recalled.note is not None,
        "updated": recalled.note.updated if recalled.note else None,
        "notice": RECALL_FRAME if recalled.note else None,
        "entries": shown_entries(recalled.entries),
        "events": recalled.events,
    }

def render_recall(recalled, location, check: bool, frame: str) -> str:
    """``memcite note recall``: the note under ``frame`` (what it is and is not), each entry with
    its age, then the event log's projection; or that there is no note."""
    from memcite.display import shown  # a hand-edited note: masked, as search masks it
    from memcite.notes.model import Entry

    lines: list[str] = []
    out = lines.append
    if recalled.note is None:
        if location.scope == "project":
            out(f"No project note for {location.project} (looked for {location.note_file}).")
        else:
            out(f"No {location.scope} note (looked for {location.note_file}).")
        return "".join(line + "\n" for line in lines) + _projection(recalled)
    by_id = {item["id"]: item for item in recalled.entries if item["id"]}
    if location.scope == "project":
        out(f"Project note for {location.project}")
    elif location.scope == "global":
        out("Global note (facts about the user, for every project)")
    else:
        out(f"Session note for the session {location.session}")
    out(f"Source: {location.note_file} (updated {recalled.note.updated or 'unknown'})")
    out(frame)
    extra = [line for line in recalled.note.preamble if line.strip()
             and not line.startswith(("# ", "Project:", "Scope:", "Session:", "Updated:"))]
    if extra:
        out("")
        for line in extra:
            out(shown(line))
    for section in recalled.note.sections:
        if not any(isinstance(item, Entry) or item.strip() for item in section.items):
            continue  # an empty section: no heading with nothing under it
        out("")
        out(shown(section.heading))
        for item in section.items:
            if not isinstance(item, Entry):
                if item.strip():
                    out(shown(item))
                continue
            info = by_id.get(item.id, {})
            age = info.get("age_days")
            notes_ = [f"{count(age, 'day')} old"] if age is not None else []
            if info.get("expired"):
                notes_.append(f"expired {item.get('Expires')}")
            when = f" ({', '.join(notes_)})" if notes_ else ""
            label = item.id or "no id yet"
            out(f"{item.marker} [{label}] {shown(item.text)}{when}")
            for line in item.body:
                out(shown(line))
            if check:
                for gone in _missing_for(recalled, item):
                    out(f"  ! possibly stale: {gone} is not in the project now")
                for why in _missing_for(recalled, item, "stale"):
                    if why.startswith("changed "):
                        out(f"  ! possibly stale: {why[8:]} changed in git since this entry")
    return "".join(line + "\n" for line in lines) + _projection(recalled)


def _projection(recalled) -> str:
    """The event log's projection, after the note (``memcite.notes.events``)."""
    if not recalled.events:
        return ""
    from memcite.notes.events import events_path, render_projection

    text = render_projection(recalled.events)
    if not text:
        return ""
    from memcite.display import shown

    return f"\nEvents: {events_path(recalled.location)} (evidence, as the note)\n" + shown(text)


# --------------------------------------------------------------------------- list


def render_note_list(listed: list[dict]) -> str:
    """``memcite note list``: each project's slug and its ``Updated:`` date."""
    if not listed:
        return "No project notes.\n"
    return "".join(f"{item['slug']}  {item['updated'] or '-'}\n" for item in listed)


def scope_list_json(location, listed: list[dict]) -> dict:
    """``memcite note list --scope S --json``."""
    return {"scope": location.scope, "session": location.session,
            "note_file": location.note_file, "entries": listed}


def render_scope_list(location, listed: list[dict]) -> str:
    """``memcite note list --scope S``: one line per entry (id, section, topic, date, provenance)."""
    if not listed:
        return f"No entries in {SCOPE_WORDS[location.scope]} ({location.note_file}).\n"
    lines = []
    for item in listed:
        how = "confirmed" if item["confirmed"] else "automatic"
        provenance = ", ".join(part for part in (
            item["via"] and f"via {item['via']}", how,
            item["source"] and f"source {item['source']}") if part)
        lines.append(f"{item['id'] or '(no id)'}  {item['section'] or '-':<9}  "
                     f"{item['topic'] or '-'}  {item['date'] or '-'}  {provenance}\n")
    return "".join(lines)


# --------------------------------------------------------------------------- forget, restore, purge


def forget_json(location, entry_id: str | None, result) -> dict:
    """``memcite note forget --json``."""
    name = os.path.basename(result.archived)
    return {"project": location.project, "scope": location.scope, "entry_id": entry_id,
            "archived": result.archived, "restore": f"memcite note restore {name}{_again(location)}",
            "tightened": result.tightened}


def render_forget(location, entry_id: str | None, result) -> str:
    """``memcite note forget``: where the note (or entry) went, and how to bring it back."""
    what = f"entry {entry_id}" if entry_id else "the note"
    name = os.path.basename(result.archived)
    return (f"moved {what} to {result.archived}\n"
            f"nothing was deleted; bring it back with: memcite note restore {name}"
            f"{_again(location)}\n")


def restore_json(location, result) -> dict:
    """``memcite note restore --json``."""
    return {"project": location.project, "note_file": location.note_file,
            "source": result.source, "restored": result.restored, "kept": result.kept,
            "replaced_to": result.replaced_to, "tightened": result.tightened}


def restore_lines(location, result) -> list[tuple[str, str]]:
    """``memcite note restore``'s text."""
    lines = []
    if result.replaced_to:
        lines.append((OUT, f"the active note was archived first: {result.replaced_to}"))
    lines.append((OUT, f"restored {len(result.restored)} {_entries(len(result.restored))} "
                       f"from {result.source} into {location.note_file}"))
    lines += [(NOTE, f"entry {entry_id} is in the active note with other content; the active one "
                     "kept") for entry_id in result.kept]
    lines.append((OUT, "the archived file stays in the archive"))
    return lines


def check_in_archive(target_path: str, location) -> None:
    """Refuse a purge of a file outside the archive of the scope named with ``--scope``."""
    from memcite.errors import InputError

    if os.path.realpath(os.path.dirname(target_path)) != os.path.realpath(location.archive_dir):
        raise InputError(f"{target_path}: not in the {location.scope} archive "
                         f"({location.archive_dir})")


# --------------------------------------------------------------------------- log


def log_json(location, entry_id: str | None, rows: list[dict]) -> dict:
    """``memcite note log --json``."""
    return {"project": location.project, "slug": location.slug,
            "scope": location.scope, "entry_id": entry_id, "log": rows}


def render_log(location, entry_id: str | None, rows: list[dict], several_notes: bool) -> str:
    """``memcite note log``: one line per logged change (``several_notes``: each names its note)."""
    if not rows:
        return (f"No logged changes for {location.project}"
                + (f" entry {entry_id}." if entry_id else ".") + "\n")
    lines = []
    for row in rows:
        what = f"[{row['entry_id']}]" if row["entry_id"] else "(note)"
        before = (row["hash_before"] or "-")[:12]
        after = (row["hash_after"] or "-")[:12]
        where = f"  {row['file']}" if row["file"] else ""
        note_of = f"{row['slug']}  " if several_notes else ""
        lines.append(f"{row['at_iso']}  {note_of}{row['command']:<7} {row['action']:<9} {what:<8}  "
                     f"{before} -> {after}  confirmed: {row['confirmed_by']} by {row['user']}"
                     f"{where}\n")
    return "".join(lines)


# --------------------------------------------------------------------------- scopes


def render_plan(plan) -> str:
    """What a move would do (for stderr): the entry, where from, where to, what to look at."""
    text = (f"memcite: {plan.command} [{plan.entry_id}]\n"
            f"  from: {plan.source.scope} ({plan.source.note_file})\n"
            f"  to:   {plan.target.scope} ({plan.target.note_file})\n")
    text += "".join(f"  | {line}\n" for line in plan.entry.lines())
    return text + "".join(f"  ! {concern}\n" for concern in plan.concerns)


def render_move(plan, result) -> str:
    """``memcite note promote|demote``: the move done."""
    return (f"moved [{plan.entry_id}] from {plan.source.scope} to {plan.target.scope} "
            f"({plan.target.note_file}); confirmed by {result.confirmed_by}, logged\n")


def end_session_json(session_id: str, result) -> dict:
    """``memcite note end-session --json``."""
    return {"session": session_id, "note_file": result.location.note_file,
            "archived": result.archived, "entries": result.entries}


def render_end_session(session_id: str, result) -> str:
    """``memcite note end-session``: what was archived, and how to bring it back."""
    if result.archived is None:
        return (f"the session {session_id} has no note ({result.location.note_file}); "
                "nothing to archive\n")
    return (f"archived the session {session_id}'s note with {len(result.entries)} "
            f"{_entries(len(result.entries))} not promoted: {result.archived}\n"
            "nothing was deleted; bring it back with: memcite note restore "
            f"{os.path.basename(result.archived)} --scope session --session {session_id}\n")


# --------------------------------------------------------------------------- export and import


def export_summary(location, result) -> str:
    """The note ``memcite note export`` ends with (on stderr): what it exported."""
    return (f"exported {result.entries} {_entries(result.entries)} and "
            f"{count(result.events, 'event')} of "
            f"{SCOPE_WORDS[location.scope]} ({location.note_file})")


def import_json(result, dry_run: bool) -> dict:
    """``memcite note import --json``."""
    return {"source": result.source, "dry_run": dry_run, "header": result.header,
            "counts": result.counts(), "lines": result.outcomes}


def import_lines(name: str, result, dry_run: bool) -> list[tuple[str, str]]:
    """``memcite note import``'s text: each line's outcome (a refusal on stderr), then counts."""
    lines = []
    for outcome in result.outcomes:
        what = f"{outcome['kind'] or 'line'} {outcome['id'] or ''}".rstrip()
        if outcome["action"] == "refused":
            lines.append((ERR, f"memcite: {name}: line {outcome['line']}: refused "
                               f"({outcome['reason']}): {outcome['message']}"))
        elif outcome["action"] == "skipped":
            lines.append((OUT, f"line {outcome['line']}: skipped {what}: {outcome['message']}"))
        else:
            lines.append((OUT, f"line {outcome['line']}: {what}: {outcome['message']}"))
    counts = result.counts()
    verb = "would import" if dry_run else "imported"
    lines.append((OUT, f"{name}: {verb} {counts['imported']}, skipped {counts['skipped']} (already "
                       f"there), refused {counts['refused']}"))
    if dry_run:
        lines.append((NOTE, "dry run: nothing was written"))
    return lines


# --------------------------------------------------------------------------- events


def event_line(event, hidden: dict[str, str], stale: dict[str, list[str]]) -> str:
    """One event in ``memcite event list``: id, time, kind, text, files, and its marks."""
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


def event_json(event, hidden: dict[str, str], stale: dict[str, list[str]]) -> dict:
    """One event in ``--json``, with what supersedes it and what is stale."""
    return {**event.to_json(), "superseded_by": hidden.get(event.id),
            "stale": stale.get(event.id, [])}


def added_event_json(location, result) -> dict:
    """``memcite event add --json``."""
    return {"log_file": result.log_file, "project": location.project,
            "scope": location.scope, "event": result.event.to_json(),
            "redacted": result.redacted}


def added_event_lines(result) -> list[tuple[str, str]]:
    """``memcite event add``'s text."""
    event = result.event
    lines = [(NOTE, f"redacted {item['kind']} on line {item['line']}") for item in result.redacted]
    lines.append((OUT, f"recorded {event.id} ({event.kind}): {' '.join(event.text.split())}"))
    if result.superseded is not None:
        lines.append((OUT, f"supersedes {result.superseded.id} ({result.superseded.kind}), no "
                           "longer shown in recall"))
    lines.append((OUT, f"log: {result.log_file} (appended, read back and verified)"))
    return lines


def events_json(location, view) -> dict:
    """``memcite event list --json``."""
    return {"log_file": view.log_file, "project": location.project,
            "scope": location.scope, "count": len(view.chosen),
            "events": [event_json(e, view.hidden, view.stale) for e in view.chosen]}


def render_events(location, view) -> str:
    """``memcite event list``: one line per chosen event, or why there is none."""
    if not view.logged:
        return f"No events for {location.project} (looked for {view.log_file}).\n"
    text = "".join(event_line(event, view.hidden, view.stale) + "\n" for event in view.chosen)
    return text if view.chosen else text + "No event matches.\n"


def event_show_json(location, view) -> dict:
    """``memcite event show ID --json``."""
    return {"log_file": view.log_file, "project": location.project,
            "event": event_json(view.chosen[0], view.hidden, view.stale)}


def render_event(view) -> str:
    """``memcite event show ID``: the event, its provenance, and its place in the chain."""
    event, hidden, stale = view.chosen[0], view.hidden, view.stale
    provenance = event.provenance
    confirmed = "yes" if provenance.get("confirmed") else "no (automatic)"
    how = provenance.get("confirmation")
    lines = [f"{event.id} ({event.kind}) at {event.time}", event.text]
    if event.files:
        lines.append(f"files: {', '.join(event.files)}" + (" (marked fragile)" if event.fragile
                                                            else ""))
    lines.append(f"by {provenance.get('who', 'unknown')} via {provenance.get('via', '?')}; "
                 f"confirmed: {confirmed}"
                 f"{f' ({how})' if how and provenance.get('confirmed') else ''}")
    if event.supersedes:
        lines.append(f"supersedes {event.supersedes}")
    if event.id in hidden:
        lines.append(f"superseded by {hidden[event.id]} (not shown in recall)")
    if event.id in stale:
        lines.append("stale: " + "; ".join(stale[event.id]))
    return "".join(line + "\n" for line in lines)
