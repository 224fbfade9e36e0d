"""Reading a project's event log (``events.jsonl`` beside the scope's note), and what is
derived from it: supersession, staleness, the projection recall and the instructions show,
and the gate index. Writing it is ``memcite.notes.events``.

- The projection (``project``): open issues, the last decisions, failed attempts and fixes
  per file, fragile files; superseded events hidden; a pure function of the log and the
  staleness found (the same inputs give the same bytes).
- Staleness (``stale_events``, ``stale_note_entries``): an event or note entry naming files
  is stale when a file is gone, or git history has a commit touching it after the entry was
  written (one ``git log`` for all of them; no git: only gone files count).
- The gate index (``gate_index``): per file, its recent failures, fixes and fragile marks,
  sharded by the file's name; and the failed approaches (commands in backticks of failure
  events). Bounded whatever the size of the log.
"""

from __future__ import annotations

import datetime as _dt
import errno
import os
import re
import stat
import subprocess
from dataclasses import dataclass, field

from memcite.errors import InputError
from memcite.readpath.event_keys import EVENTS_FILE, shard_name

KINDS = ("decision", "attempt", "failure", "fix", "issue", "note")
MAX_LOG_BYTES = 256 * 1024 * 1024
# What the gate index keeps per file, and of failed approaches: bounded, whatever the log.
GATE_PER_FILE = 5
GATE_APPROACHES = 200
# What the projection shows.
PROJECTION_ISSUES = 10
PROJECTION_DECISIONS = 5
PROJECTION_FILES = 10
PROJECTION_PER_FILE = 3
_ID_RE = re.compile(r"ev-[0-9a-z]{8}\Z")
_COMMAND_RE = re.compile(r"`([^`\n]{3,200})`")


def is_event_id(value: str) -> bool:
    return bool(_ID_RE.match(value))


def shown_value(value: str) -> str:
    from memcite.secrets import mask, scan

    return repr(value) if len(value) <= 60 and not scan(value) else mask(value)


# --------------------------------------------------------------------------- events


@dataclass
class Event:
    id: str
    time: str  # ISO 8601 UTC
    epoch: int
    kind: str
    text: str
    files: list[str] = field(default_factory=list)
    supersedes: str | None = None
    fragile: bool = False
    provenance: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"id": self.id, "time": self.time, "epoch": self.epoch, "kind": self.kind,
                "text": self.text, "files": list(self.files), "supersedes": self.supersedes,
                "fragile": self.fragile, "provenance": dict(self.provenance)}

    @classmethod
    def from_json(cls, raw: dict) -> Event | None:
        """An event read back from the log; None for a line that is not one."""
        try:
            event = cls(str(raw["id"]), str(raw["time"]), int(raw["epoch"]), str(raw["kind"]),
                        str(raw["text"]), [str(f) for f in raw.get("files") or []],
                        raw.get("supersedes") if isinstance(raw.get("supersedes"), str) else None,
                        bool(raw.get("fragile")),
                        raw.get("provenance") if isinstance(raw.get("provenance"), dict) else {})
        except (KeyError, TypeError, ValueError, OverflowError):
            return None
        return event if event.kind in KINDS and is_event_id(event.id) else None

    def commands(self) -> list[str]:
        """The commands (in backticks) its text names: the approach a failure records."""
        return [normalize_command(found) for found in _COMMAND_RE.findall(self.text)]


def normalize_command(command: str) -> str:
    return " ".join(command.split())


def read_events(location_or_path) -> list[Event]:
    """The log's events, oldest first; a line that is not an event is skipped."""
    path = location_or_path if isinstance(location_or_path, str) else \
        os.path.join(location_or_path.project_dir, EVENTS_FILE)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return []
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(f"{path}: a symbolic link, not an event log; left alone") from None
        raise InputError(f"{path}: the event log cannot be read ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise InputError(f"{path}: not a regular file; left alone")
        from memcite.untrusted import clear_nonblock

        clear_nonblock(handle.fileno())
        data = handle.read(MAX_LOG_BYTES + 1)
    if len(data) > MAX_LOG_BYTES:
        raise InputError(f"{path}: larger than {MAX_LOG_BYTES} bytes; not an event log memcite "
                         "reads")
    from memcite.untrusted import json_lines

    events = []
    for _number, raw, _why in json_lines(data):
        event = Event.from_json(raw) if isinstance(raw, dict) else None
        if event is not None:
            events.append(event)
    return events


def event_of_line(line: bytes) -> Event | None:
    """The event one line of the log holds, as ``read_events`` reads it; None if it holds none."""
    from memcite.untrusted import json_lines

    for _number, raw, _why in json_lines(line):
        return Event.from_json(raw) if isinstance(raw, dict) else None
    return None


def superseded_by(events: list[Event]) -> dict[str, str]:
    """Each superseded event's id -> the id of the (last) event superseding it."""
    found: dict[str, str] = {}
    for event in events:
        if event.supersedes:
            found[event.supersedes] = event.id
    return found


def current(events: list[Event]) -> list[Event]:
    """The events no later event supersedes, oldest first."""
    hidden = superseded_by(events)
    return [event for event in events if event.id not in hidden]


def select(events: list[Event], *, kind: str | None = None, file: str | None = None) -> list[Event]:
    if kind is not None and kind not in KINDS:
        raise InputError(f"--kind: {shown_value(kind)} is not one of {', '.join(KINDS)}")
    return [event for event in events if (kind is None or event.kind == kind)
            and (file is None or file in event.files)]


def find_event(events: list[Event], event_id: str) -> Event:
    if not isinstance(event_id, str) or not is_event_id(event_id):
        raise InputError(f"{shown_value(str(event_id))} is not an event id (ev- and 8 letters or "
                         "digits, as event list shows)")
    for event in events:
        if event.id == event_id:
            return event
    raise InputError(f"no event {event_id} in this log", hint="memcite event list shows the ids")


# --------------------------------------------------------------------------- staleness


def _git_changes(project: str, since: int, files: set[str]) -> dict[str, int] | None:
    """Each of ``files`` -> the time of the last commit touching it after ``since``; None when
    the project is not a git work tree (or git cannot tell)."""
    from memcite.untrusted import program_arguments

    if not files or not os.path.lexists(os.path.join(project, ".git")):
        return None
    argv = program_arguments(["git", "-C", project, "log", f"--since={since}", "--format=%x00%ct",
                              "--name-only", "--no-renames", "-z", "--", *sorted(files)])
    if argv is None:
        return None
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    try:
        done = subprocess.run(  # noqa: S603 - checked arguments, no shell
            argv, capture_output=True, timeout=10, env=env, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    changed: dict[str, int] = {}
    when = 0
    for part in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        part = part.strip("\n")
        if not part:
            continue
        if part.isdigit() and len(part) >= 9:
            when = int(part)
            continue
        name = part
        if name in files and when > changed.get(name, 0):
            changed[name] = when
    return changed


def staleness(project: str, items: list[tuple[str, int, list[str]]]) -> dict[str, list[str]]:
    """For ``(key, written_at, files)``: the keys that are stale -> why (``gone FILE``,
    ``changed FILE``). One git call for all of them."""
    from memcite.untrusted import os_safe

    found: dict[str, list[str]] = {}
    files = {name for _, _, named in items for name in named if os_safe(name)}
    oldest = min((written for _, written, named in items if named), default=None)
    changes = _git_changes(project, oldest, files) if oldest is not None else None
    for key, written, named in items:
        reasons = []
        for name in named:
            if not os.path.lexists(os.path.join(project, name)):
                reasons.append(f"gone {name}")
            elif changes is not None and changes.get(name, 0) > written:
                reasons.append(f"changed {name}")
        if reasons:
            found[key] = reasons
    return found


def stale_events(project: str, events: list[Event]) -> dict[str, list[str]]:
    return staleness(project, [(event.id, event.epoch, event.files) for event in events
                               if event.files])


def _end_of_day(date: str | None) -> int | None:
    try:
        day = _dt.date.fromisoformat((date or "")[:10])
    except ValueError:
        return None
    return int(_dt.datetime(day.year, day.month, day.day, tzinfo=_dt.UTC).timestamp()) + 86400


def stale_note_entries(project: str, entries: list[dict]) -> dict[str, list[str]]:
    """Recalled note entries (``id``, ``date``, ``files``) that are stale."""
    items = []
    for entry in entries:
        written = _end_of_day(entry.get("date"))
        if entry.get("id") and entry.get("files") and written is not None:
            items.append((entry["id"], written, entry["files"]))
    return staleness(project, items)


def note_entry_files(project: str, text: str) -> list[str]:
    """The project files a note entry names (in backticks or shaped like ``dir/file.ext``)."""
    candidates = re.findall(r"`([^`\s]+)`", text)
    candidates += re.findall(r"(?<![\w/.:~-])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8})(?![\w/])",
                             text)
    found = []
    root = project.rstrip("/")
    for candidate in candidates:
        candidate = candidate.rstrip(".,:;")
        if "://" in candidate or candidate.startswith("-") or "/" not in candidate \
                and "." not in candidate:
            continue
        full = os.path.normpath(os.path.join(project, os.path.expanduser(candidate)))
        if not full.startswith(root + "/"):
            continue
        relative = full[len(root) + 1:]
        if "/" not in candidate and not os.path.splitext(candidate)[1]:
            continue
        if relative not in found:
            found.append(relative)
    return found


# --------------------------------------------------------------------------- projection


def _brief(event: Event, stale: dict[str, list[str]]) -> dict:
    item = {"id": event.id, "time": event.time, "kind": event.kind, "text": event.text,
            "files": list(event.files)}
    if event.id in stale:
        item["stale"] = list(stale[event.id])
    return item


def project(events: list[Event], stale: dict[str, list[str]] | None = None) -> dict:
    """The log's projection: a pure function of the events (in log order) and staleness."""
    stale = stale or {}
    live = current(events)
    issues = [event for event in live if event.kind == "issue"][-PROJECTION_ISSUES:]
    decisions = [event for event in live if event.kind == "decision"][-PROJECTION_DECISIONS:]
    per_file: dict[str, dict] = {}
    order: dict[str, int] = {}
    for index, event in enumerate(live):
        for name in event.files:
            if event.kind in ("failure", "fix") or event.fragile:
                entry = per_file.setdefault(name, {"file": name, "fragile": False,
                                                   "failures": [], "fixes": []})
                order[name] = index
                if event.fragile:
                    entry["fragile"] = True
                if event.kind == "failure":
                    entry["failures"].append(event)
                elif event.kind == "fix":
                    entry["fixes"].append(event)
    latest = sorted(per_file, key=lambda name: (-order[name], name))[:PROJECTION_FILES]
    files = []
    for name in latest:
        entry = per_file[name]
        files.append({"file": name, "fragile": entry["fragile"],
                      "failures": [_brief(e, stale) for e in
                                   entry["failures"][-PROJECTION_PER_FILE:]],
                      "fixes": [_brief(e, stale) for e in entry["fixes"][-PROJECTION_PER_FILE:]]})
    return {"events": len(events), "superseded": len(events) - len(live),
            "open_issues": [_brief(e, stale) for e in reversed(issues)],
            "decisions": [_brief(e, stale) for e in reversed(decisions)],
            "files": files}


def _line(item: dict) -> str:
    files = f" ({', '.join(item['files'])})" if item["files"] else ""
    stale = f" [stale: {'; '.join(item['stale'])}]" if item.get("stale") else ""
    text = " ".join(item["text"].split())
    return f"[{item['id']}] {text}{files} — {item['time'][:10]}{stale}"


PROJECTION_HEADING = "## Event log"


def render_projection(projection: dict) -> str:
    """The projection as a note section (bullets), as recall and the instructions show it;
    empty when nothing is left to show."""
    lines = []
    for item in projection["open_issues"]:
        lines.append(f"- Open issue {_line(item)}")
    for item in projection["decisions"]:
        lines.append(f"- Decision {_line(item)}")
    for entry in projection["files"]:
        parts = ["fragile"] if entry["fragile"] else []
        parts += [f"failed {_line(item)}" for item in entry["failures"]]
        parts += [f"fixed by {_line(item)}" for item in entry["fixes"]]
        lines.append(f"- `{entry['file']}`: " + "; ".join(parts))
    if not lines:
        return ""
    hidden = projection["superseded"]
    head = (f"{PROJECTION_HEADING} ({projection['events']} events; {hidden} superseded, not "
            "shown; `memcite event list` has them all)")
    return head + "\n" + "\n".join(lines) + "\n"


def projection_of(location_dir: str, project_root: str, *, check: bool = True) -> dict | None:
    """The projection of the log in ``location_dir`` (None when there is no log)."""
    path = os.path.join(location_dir, EVENTS_FILE)
    if not os.path.isfile(path):
        return None
    events = read_events(path)
    if not events:
        return None
    stale = stale_events(project_root, current(events)) if check else {}
    return project(events, stale)


# --------------------------------------------------------------------------- gate index


def gate_index(events: list[Event]) -> tuple[dict[str, dict], list[dict]]:
    """What the gate needs: per shard, each file's recent failures, fixes and fragile marks;
    and the failed approaches (failure events' commands), newest last."""
    live = current(events)
    shards: dict[str, dict] = {}
    approaches = []
    for event in live:
        brief = {"id": event.id, "time": event.time, "text": event.text[:300]}
        if event.kind == "failure":
            commands = event.commands()
            if commands:
                approaches.append({**brief, "commands": commands, "files": event.files})
        for name in event.files:
            if not (event.kind in ("failure", "fix") or event.fragile):
                continue
            shard = shards.setdefault(shard_name(name), {})
            entry = shard.setdefault(name, {"fragile": [], "failures": [], "fixes": []})
            if event.fragile:
                entry["fragile"] = (entry["fragile"] + [brief])[-GATE_PER_FILE:]
            if event.kind == "failure":
                entry["failures"] = (entry["failures"] + [brief])[-GATE_PER_FILE:]
            elif event.kind == "fix":
                entry["fixes"] = (entry["fixes"] + [brief])[-GATE_PER_FILE:]
    return shards, approaches[-GATE_APPROACHES:]


