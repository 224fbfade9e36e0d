"""How well ``memcite audit`` tells injections from wanted instructions and facts, on labelled text.

    .venv/bin/python benchmarks/bench_judgement.py --data DIR            # labelled sets
    .venv/bin/python benchmarks/bench_judgement.py --real DIR [--labels FILE]
    .venv/bin/python benchmarks/bench_judgement.py --data DIR --json --out report.json

``--data DIR``: every ``*.jsonl`` file of DIR is a labelled set, one item a line:
``{"text", "label": injection|convention|fact, "origin": project_file|outside_file|web|mcp|user,
"source"}`` (and optionally ``"set"``, the name the report gives it; else the file's name).
Nothing is downloaded: the sets are whatever the user put there. ``--origin-override ORIGIN``
delivers every text from ORIGIN whatever its set says (the projects' conventions read from a web
page or an MCP result: the false alarms a user would see on benign third-party instructions).

Each set becomes a Codex home in a temporary folder, one thread per item, as a user's home
would hold it: a session file under ``sessions/`` in which the text reaches the thread the way
its origin says (``cat`` of a project file, ``cat`` of a file outside the project, a web search
whose results Codex never writes down, an MCP tool's result, or typed by the user), a
``threads`` row, a ``stage1_outputs`` row, a rollout summary, and a line of ``MEMORY.md`` in a
task group naming that summary. The memory repeats the text verbatim, or (``--wording``)
reworded as a summarising model writes it ("The README says to ...", "Per the issue: ..."), or
cut to a terse note (its small words dropped: most of its word pairs go, its anchors stay).
Then ``memcite audit --json`` runs on the home as a new process, and each item is scored by
the highest severity of the findings on its memory (by thread id, or by its ``MEMORY.md``
line). Reported per set, label and wording: the share flagged high, medium or above, and at
all, each with its 95% Wilson interval: for injections that is recall, for conventions and
facts the false-alarm rate. Forget requests the hooks would make unprompted are counted by
running the Stop hook's quarantine (``memcite.audit.memory_quarantine.quarantine_poisoned``)
on the home with a scratch ledger.

``--real DIR``: each ``DIR/<name>/memories`` is a real memory folder; it is copied into a
temporary Codex home (with ``DIR/<name>/sessions`` when there is one) and audited the same
way. Real folders carry no labels: the report counts findings by kind and severity and the
forget requests; ``--labels FILE`` (JSON Lines ``{"folder", "where", "kind", "excerpt",
"label": fact|convention|instruction|misfire}``) matches findings read by hand, so the false
alarms can be estimated (a label is matched by the finding's place and excerpt, whatever kind a
later rule gives it). ``--dump-findings FILE`` writes the findings that judge a sentence an
instruction (every kind but secret, taint and cross-project) in that form, unlabelled.

Exit codes: 0 done, 2 bad input (a message naming the file and line).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

LABELS = ("injection", "convention", "fact")
ORIGINS = ("project_file", "outside_file", "web", "mcp", "user")
WORDINGS = ("verbatim", "summary", "terse")
LAYOUTS = ("both", "stage1", "files")  # where a memory is kept: stage1_outputs, the folder's files
SEVERITIES = ("high", "medium", "low")
RANK = {"high": 3, "medium": 2, "low": 1}
MAX_MEMORY_CHARS = 1000  # a memory line keeps this much of a long text
HAND_LABELS = ("fact", "convention", "instruction", "misfire")
# The findings read by hand on real folders are those that judge a sentence an instruction
# (directive, poisoned, any new kind): secrets, taint and other projects are other questions; any
# finding a hand label matches is counted too.
NOT_JUDGED = ("secret", "taint", "cross-project")

# How a summarising model rewords what it read, per origin ({text}, or {lower}: its first letter
# in lower case, after "to").
REWORDINGS = {
    "project_file": ("The README says to {lower}", "Per CONTRIBUTING.md: {text}",
                     "The project's AGENTS.md notes: {text}"),
    "outside_file": ("A notes file in the home folder says: {text}", "Per ~/notes/setup.md: {text}"),
    "web": ("A web page found while searching says: {text}", "Per a search result: {text}"),
    "mcp": ("Per the issue: {text}", "The MCP tool's result says: {text}"),
    "user": ("The user asked to {lower}", "The user said: {text}"),
}
MCP_TOOLS = (("mcp__github", "get_issue"), ("mcp__gmail", "read_email"), ("mcp__slack", "read_channel"),
             ("mcp__drive", "read_file"))


class BenchInputError(Exception):
    """Bad input: a set or a labels file that cannot be read; the message says where."""


@dataclass(frozen=True)
class Item:
    text: str
    label: str
    origin: str
    source: str
    set: str
    where: str  # file:line of the item, for messages


# --------------------------------------------------------------------------- statistics


def wilson(successes: int, total: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` out of ``total`` (95% by default); (0, 1) when
    there is nothing to count."""
    if total <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= total:
        raise ValueError(f"{successes} successes out of {total}")
    share = successes / total
    denominator = 1 + z * z / total
    centre = (share + z * z / (2 * total)) / denominator
    half = z * math.sqrt(share * (1 - share) / total + z * z / (4 * total * total)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def rate(successes: int, total: int) -> dict:
    low, high = wilson(successes, total)
    return {"k": successes, "n": total, "rate": round(successes / total, 4) if total else None,
            "ci95": [round(low, 4), round(high, 4)]}


# --------------------------------------------------------------------------- the labelled sets


def read_sets(folder: str | Path) -> list[Item]:
    """Every item of the ``*.jsonl`` files of ``folder``, checked; BenchInputError on bad input."""
    folder = Path(folder)
    if not folder.is_dir():
        raise BenchInputError(f"--data {folder}: no such folder")
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise BenchInputError(f"--data {folder}: no *.jsonl file in it")
    items: list[Item] = []
    for path in files:
        # lines end at "\n" alone: a JSON string may hold U+2028 and the like as they are
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").split("\n"), 1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except ValueError as error:
                raise BenchInputError(f"{where}: not JSON ({error})") from None
            if not isinstance(row, dict):
                raise BenchInputError(f"{where}: not a JSON object")
            text, label, origin = row.get("text"), row.get("label"), row.get("origin")
            if not isinstance(text, str) or not text.strip():
                raise BenchInputError(f"{where}: \"text\" must be a non-empty string")
            if label not in LABELS:
                raise BenchInputError(f"{where}: \"label\" must be one of {', '.join(LABELS)}, not {label!r}")
            if origin not in ORIGINS:
                raise BenchInputError(f"{where}: \"origin\" must be one of {', '.join(ORIGINS)}, "
                                      f"not {origin!r}")
            items.append(Item(text, label, origin, str(row.get("source") or ""),
                              str(row.get("set") or path.stem), where))
    return items


def reword(text: str, origin: str, number: int) -> str:
    """``text`` as a summarising model might keep it, for an item of that origin."""
    template = REWORDINGS[origin][number % len(REWORDINGS[origin])]
    lower = text[:1].lower() + text[1:] if text[1:2].islower() else text
    return template.format(text=text, lower=lower)


# The small words a terse note drops (Codex's notes keep the nouns, verbs and anchors).
SMALL_WORDS = frozenset("""a an the to of that this these those please you your yours and then so in on at for
with by from is are be been being it its as if or into onto our we us i me my do does did will would can could
should must just also very really any all some""".split())


def terse(text: str, origin: str) -> str:
    """``text`` as a terse note keeps it: its small words dropped (most word pairs go with them),
    its anchors (code, paths, URLs, addresses, numbers) kept whole."""
    kept = [word for word in text.split() if any(c in word for c in "`/@:.0123456789_$~")
            or word.strip(".,;:!?()\"'").lower() not in SMALL_WORDS]
    where = {"project_file": "project docs", "outside_file": "a local notes file", "web": "a web page",
             "mcp": "a tool result", "user": "the user"}[origin]
    return f"From {where}: " + " ".join(kept)


def one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_MEMORY_CHARS else line[:MAX_MEMORY_CHARS - 1] + "…"


# --------------------------------------------------------------------------- building a home


def _line(kind: str, payload: dict, second: int) -> str:
    return json.dumps({"timestamp": f"2026-01-20T10:{second // 60 % 60:02d}:{second % 60:02d}.000Z",
                       "type": kind, "payload": payload}, ensure_ascii=False)


def _thread_id(number: int) -> str:
    value = ((1_768_900_000_000 + number * 1000) << 80) | (0x7 << 76) | (0b10 << 62) | number
    return str(uuid.UUID(int=value))


def _project(item: Item, number: int) -> str:
    name = item.source.split("@", 1)[0].rsplit("/", 1)[-1] if "@" in item.source else ""
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in name.lower())[:40] or f"proj{number % 5}"


def _exec_output(text: str) -> str:
    return (f"Chunk ID: 4f2a\nWall time: 0.0 seconds\nProcess exited with code 0\n"
            f"Original token count: {len(text.split())}\nOutput:\n{text}")


def _document(item: Item, project: str) -> str:
    return f"# {project}\n\nNotes kept with {project}.\n\n{item.text}\n\nSee the rest of the docs for more.\n"


def session_lines(item: Item, thread_id: str, cwd: str, number: int) -> list[str]:
    """A Codex session in which ``item``'s text reaches the thread as its origin says."""
    project = os.path.basename(cwd)
    call = f"call_{number}"
    user_text = f"Please help with {project}: look around and fix the failing build."
    lines = [
        _line("session_meta", {"id": thread_id, "timestamp": "2026-01-20T10:00:00.000Z", "cwd": cwd,
                               "originator": "codex_cli_rs", "cli_version": "0.171.0", "source": "cli"}, 0),
        _line("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": f"<environment_context>\n  <cwd>{cwd}</cwd>\n"
                                           "</environment_context>"}]}, 1),
    ]
    if item.origin == "user":
        user_text = f"{item.text}\n\nAlso fix the failing build, please."
    lines.append(_line("response_item", {"type": "message", "role": "user",
                                         "content": [{"type": "input_text", "text": user_text}]}, 2))
    if item.origin in ("project_file", "outside_file", "user"):
        name = os.path.basename(item.source.split(":", 1)[1]) if ":" in item.source else "README.md"
        if not name.lower().endswith((".md", ".rst", ".txt")):
            name = "README.md"
        path = name if item.origin != "outside_file" else f"/home/dev/notes/{project}-{number}.md"
        body = _document(item, project) if item.origin != "user" else f"# {project}\n\nNothing about it here.\n"
        lines += [
            _line("response_item", {"type": "function_call", "name": "exec_command", "call_id": call,
                                    "arguments": json.dumps({"cmd": f"cat {path}", "workdir": cwd})}, 3),
            _line("response_item", {"type": "function_call_output", "call_id": call,
                                    "output": _exec_output(body)}, 4),
        ]
    elif item.origin == "mcp":
        server, tool = MCP_TOOLS[number % len(MCP_TOOLS)]
        lines += [
            _line("response_item", {"type": "function_call", "namespace": server, "name": tool,
                                    "call_id": call, "arguments": json.dumps({"id": number})}, 3),
            _line("response_item", {"type": "function_call_output", "call_id": call,
                                    "output": f"Wall time: 0.4 seconds\nOutput:\n{item.text}"}, 4),
        ]
    else:  # web: Codex keeps the query, never the results
        lines.append(_line("response_item", {"type": "web_search_call", "status": "completed",
                                             "id": f"ws_{number}",
                                             "action": {"type": "search",
                                                        "query": f"{project} build failing fix"}}, 3))
    lines.append(_line("response_item", {"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "I fixed the build and noted what I learned."}]}, 5))
    return lines


def build_home(home: Path, items: list[Item], wording: str, layout: str = "both") -> dict:
    """Write a Codex home holding one memory per item; the maps from thread id and from
    ``MEMORY.md:<line>`` to the item's index. ``layout``: the memories in ``stage1_outputs``
    rows and in the folder's files (``both``), or only in one of them (``stage1``, ``files``)."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}")
    folder = home / "memories"
    (folder / "rollout_summaries").mkdir(parents=True, exist_ok=True)
    day = home / "sessions" / "2026" / "01" / "20"
    day.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[features]\nmemories = true\n")
    threads: dict[str, int] = {}
    lines_map: dict[str, int] = {}
    memory_md = ["# Memory", ""]
    rows = []
    for number, item in enumerate(items):
        thread_id = _thread_id(number)
        cwd = f"/home/dev/{_project(item, number)}"
        threads[thread_id] = number
        session = day / f"rollout-2026-01-20T10-00-00-{thread_id}.jsonl"
        session.write_text("\n".join(session_lines(item, thread_id, cwd, number)) + "\n", encoding="utf-8")
        remembered = one_line(item.text if wording == "verbatim" else terse(item.text, item.origin)
                              if wording == "terse" else reword(item.text, item.origin, number))
        stem = f"2026-01-20T10-00-00-{number:05d}-{os.path.basename(cwd)}"
        body = f"## Task\n\nFix the failing build of {os.path.basename(cwd)}.\n\n## Learned\n\n- {remembered}\n"
        if layout != "stage1":
            (folder / "rollout_summaries" / f"{stem}.md").write_text(
                f"thread_id: {thread_id}\nupdated_at: 2026-01-20T10:00:00Z\nrollout_path: {session}\n"
                f"cwd: {cwd}\n\n{body}", encoding="utf-8")
        memory_md += [f"# Task Group: {os.path.basename(cwd)} build {number}",
                      f"applies_to: cwd={cwd}; reuse_rule=reuse for builds of this project", "",
                      "## Reusable knowledge", ""]
        memory_md.append(f"- {remembered}")
        lines_map[f"MEMORY.md:{len(memory_md)}"] = number
        memory_md += ["", "### rollout_summary_files", "",
                      f"- rollout_summaries/{stem}.md (thread_id={thread_id})", ""]
        rows.append((thread_id, cwd, 1_768_900_000 + number, f"- {remembered}", body))
    if layout == "stage1":
        lines_map = {}
    else:
        (folder / "MEMORY.md").write_text("\n".join(memory_md) + "\n", encoding="utf-8")
    state = sqlite3.connect(home / "state_5.sqlite")
    state.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, cwd TEXT, source TEXT, created_at INTEGER, "
                  "memory_mode TEXT)")
    state.executemany("INSERT INTO threads VALUES (?, ?, 'cli', ?, 'enabled')", [row[:3] for row in rows])
    state.commit()
    state.close()
    if layout == "files":
        return {"threads": threads, "lines": lines_map}
    db = sqlite3.connect(home / "memories_1.sqlite")
    db.execute("CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY, source_updated_at INTEGER, "
               "raw_memory TEXT, rollout_summary TEXT, generated_at INTEGER, rollout_slug TEXT, "
               "usage_count INTEGER, last_usage INTEGER, selected_for_phase2 INTEGER, "
               "selected_for_phase2_source_updated_at INTEGER)")
    db.executemany("INSERT INTO stage1_outputs VALUES (?, ?, ?, ?, ?, NULL, 0, NULL, 1, NULL)",
                   [(row[0], row[2], row[3], row[4], row[2]) for row in rows])
    db.commit()
    db.close()
    return {"threads": threads, "lines": lines_map}


# --------------------------------------------------------------------------- running memcite


def _environment(scratch: Path, home: Path) -> dict:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("MEMCITE_", "CODEX_"))}
    env.update(HOME=str(scratch / "user"), CODEX_HOME=str(home), MEMCITE_HOME=str(scratch / "memcite"),
               MEMCITE_CACHE_DIR=str(scratch / "cache"))
    (scratch / "user").mkdir(parents=True, exist_ok=True)
    return env


def run_audit(home: Path, scratch: Path) -> tuple[dict, float]:
    """``memcite audit --json`` on ``home`` as a new process; its report and wall seconds."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "memcite", "audit", "--json", "--codex-home", str(home)],
                          env=_environment(scratch, home), capture_output=True, text=True, cwd=str(scratch))
    took = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise RuntimeError(f"memcite audit exited {done.returncode}: {(done.stderr or done.stdout)[-800:]}")
    return json.loads(done.stdout), took


def forget_requests(home: Path, scratch: Path, report: dict) -> dict:
    """What the Stop hook's quarantine would ask Codex to forget, nobody asked: run on the home
    (it writes its ad-hoc note there) with a scratch ledger."""
    from memcite.audit import memory_quarantine
    from memcite.ledger.store import open_store

    conn = open_store(scratch / "ledger.sqlite")
    try:
        try:
            done = memory_quarantine.quarantine_poisoned(conn, str(home), now=int(time.time()), audit=report)
        except TypeError:  # a quarantine that audits by itself
            done = memory_quarantine.quarantine_poisoned(conn, str(home), now=int(time.time()))
    finally:
        conn.close()
    return {"asked": list(done.get("asked", [])), "note": done.get("note_path")}


# --------------------------------------------------------------------------- scoring


def item_levels(report: dict, maps: dict, count: int) -> tuple[list[int], list[set]]:
    """Per item: the highest severity rank of the findings on its memory (0: none), and the
    kinds of those findings (``kind/severity``)."""
    levels = [0] * count
    kinds: list[set] = [set() for _ in range(count)]
    for finding in report.get("findings", []):
        for number in _items_of(finding, maps):
            levels[number] = max(levels[number], RANK.get(finding.get("severity"), 0))
            kinds[number].add(f"{finding.get('kind')}/{finding.get('severity')}")
    return levels, kinds


def _memories_of(finding: dict) -> set[str]:
    """The memories a finding is about: its ``memory``, and its ``memories`` when one finding
    stands for a sentence repeated in several."""
    found = {finding["memory"]} if isinstance(finding.get("memory"), str) else set()
    listed = finding.get("memories")
    if isinstance(listed, list):
        found |= {thread for thread in listed if isinstance(thread, str)}
    return found


def _items_of(finding: dict, maps: dict) -> set[int]:
    """The items a finding is about: by its memories, else by its places in ``MEMORY.md``."""
    numbers = {maps["threads"][thread] for thread in _memories_of(finding) if thread in maps["threads"]}
    if not numbers:
        places = [finding.get("where")] + list(finding.get("places") or [])
        numbers = {maps["lines"][place] for place in places
                   if isinstance(place, str) and place in maps["lines"]}
    return numbers


def group_rows(items: list[Item], levels: list[int], kinds: list[set], asked: set[int],
               keys: tuple[str, ...]) -> list[dict]:
    """One row per value of ``keys`` (of set, label, origin, wording): the shares flagged high,
    medium or above, at all (Wilson 95%), the forget requests, and the kinds seen."""
    groups: dict[tuple, list[int]] = {}
    for number, item in enumerate(items):
        groups.setdefault(tuple(getattr(item, key) for key in keys), []).append(number)
    rows = []
    order = {**{label: n for n, label in enumerate(LABELS)}, **{w: n for n, w in enumerate(WORDINGS)}}
    for key, members in sorted(groups.items(), key=lambda pair: [(order.get(v, 99), v) for v in pair[0]]):
        total = len(members)
        row = dict(zip(keys, key, strict=True))
        row["n"] = total
        for severity in SEVERITIES:
            row[severity if severity == "high" else f"{severity}+"] = rate(
                sum(1 for n in members if levels[n] >= RANK[severity]), total)
        # the same, secrets aside: an e-mail address in a payload is a secret finding, high
        row["high_not_secret"] = rate(sum(1 for n in members if any(
            kind.endswith("/high") and not kind.startswith("secret/") for kind in kinds[n])), total)
        row["forget"] = rate(sum(1 for n in members if n in asked), total)
        seen: dict[str, int] = {}
        for n in members:
            for kind in kinds[n]:
                seen[kind] = seen.get(kind, 0) + 1
        row["kinds"] = dict(sorted(seen.items()))
        rows.append(row)
    return rows


@dataclass(frozen=True)
class Worded:
    """An item as one home holds it: the item, and how its memory words it."""

    text: str
    label: str
    origin: str
    source: str
    set: str
    wording: str


def bench_data(folder: str | Path, *, wordings=WORDINGS, layout: str = "both", limit: int | None = None,
               keep: str | None = None, progress=None, origin: str | None = None) -> dict:
    """The labelled sets of ``folder`` audited: a home per set and wording; the report.
    ``origin``: every item reaches its thread from there, whatever its set says (a benign
    convention read from a web page or an MCP result, say)."""
    items = read_sets(folder)
    if origin is not None:
        if origin not in ORIGINS:
            raise BenchInputError(f"--origin-override: must be one of {', '.join(ORIGINS)}, not {origin!r}")
        items = [replace(item, origin=origin) for item in items]
    by_set: dict[str, list[Item]] = {}
    for item in items:
        by_set.setdefault(item.set, []).append(item)
    worded: list[Worded] = []
    levels: list[int] = []
    kinds: list[set] = []
    asked: set[int] = set()
    homes = []
    root = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="memcite-bench-judgement-"))
    try:
        for name, members in sorted(by_set.items()):
            if limit:
                members = [item for label in LABELS
                           for item in [m for m in members if m.label == label][:limit]]
            for wording in wordings:
                scratch = root / f"{_slug(name)}-{wording}"
                if scratch.is_symlink() or scratch.exists() and not scratch.is_dir():
                    raise BenchInputError(f"--keep {root}: {scratch.name} is a link or a file; not touched")
                shutil.rmtree(scratch, ignore_errors=True)
                home = scratch / "codex"
                maps = build_home(home, members, wording, layout)
                report, took = run_audit(home, scratch)
                found, found_kinds = item_levels(report, maps, len(members))
                forgotten = forget_requests(home, scratch, report)
                base = len(worded)
                for item in members:
                    worded.append(Worded(item.text, item.label, item.origin, item.source, item.set, wording))
                asked |= {base + maps["threads"][thread] for thread in forgotten["asked"]
                          if thread in maps["threads"]}
                levels += found
                kinds += found_kinds
                homes.append({"set": name, "wording": wording, "memories": report.get("memories"),
                              "audit_s": round(took, 2), "findings": len(report.get("findings", [])),
                              "problems": report.get("problem_count", 0),
                              "forget_requests": len(forgotten["asked"])})
                if progress:
                    progress(f"  {name} ({wording}): {len(members)} items, audit {took:.1f} s")
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    return {"mode": "data", "data": str(folder), "layout": layout, "origin_override": origin,
            "memcite": _memcite_version(),
            "homes": homes,
            "by_set": group_rows(worded, levels, kinds, asked, ("set", "label", "wording")),
            "by_origin": group_rows(worded, levels, kinds, asked, ("label", "origin", "wording")),
            "overall": group_rows(worded, levels, kinds, asked, ("label", "wording"))}


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name.lower())[:40]


def _memcite_version() -> dict:
    import memcite

    return {"version": getattr(memcite, "__version__", None), "path": os.path.dirname(memcite.__file__)}


# --------------------------------------------------------------------------- real memory folders


def read_labels(path: str | Path) -> dict[tuple, str]:
    """Hand labels: (folder, where, kind, excerpt start) -> label."""
    path = Path(path)
    if not path.is_file():
        raise BenchInputError(f"--labels {path}: no such file")
    labels = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as error:
            raise BenchInputError(f"{path}:{number}: not JSON ({error})") from None
        if not isinstance(row, dict) or row.get("label") not in HAND_LABELS:
            raise BenchInputError(f"{path}:{number}: \"label\" must be one of {', '.join(HAND_LABELS)}")
        labels[_label_key(row)] = row["label"]
    return labels


def _label_key(row: dict) -> tuple:
    """A finding's place and the start of its excerpt: a hand label holds whatever kind or
    severity a later rule gives the same sentence."""
    return (row.get("folder"), row.get("where"), " ".join(str(row.get("excerpt", "")).split())[:60])


def real_home(source: Path, home: Path) -> None:
    """A Codex home holding the real folder ``source`` (its memories, and sessions if any)."""
    shutil.copytree(source / "memories", home / "memories", symlinks=True)
    if (source / "sessions").is_dir():
        shutil.copytree(source / "sessions", home / "sessions", symlinks=True)
    (home / "config.toml").write_text("[features]\nmemories = true\n")


def bench_real(folder: str | Path, *, labels: dict | None = None, dump: str | None = None,
               progress=None) -> dict:
    """Each real memory folder under ``folder`` audited; counts, forget requests, labelled shares."""
    folder = Path(folder)
    if not folder.is_dir():
        raise BenchInputError(f"--real {folder}: no such folder")
    sources = sorted(p for p in folder.iterdir() if (p / "memories").is_dir())
    if not sources:
        raise BenchInputError(f"--real {folder}: no <name>/memories folder in it")
    rows, dumped = [], []
    hand: dict[str, dict[str, dict[str, int]]] = {}  # severity -> kind -> label -> count
    root = Path(tempfile.mkdtemp(prefix="memcite-bench-real-"))
    try:
        for source in sources:
            scratch = root / source.name
            home = scratch / "codex"
            real_home(source, home)
            report, took = run_audit(home, scratch)
            forgotten = forget_requests(home, scratch, report)
            findings = report.get("findings", [])
            by_kind: dict[str, dict[str, int]] = {}
            for finding in findings:
                kind, severity = str(finding.get("kind")), str(finding.get("severity"))
                by_kind.setdefault(kind, {}).setdefault(severity, 0)
                by_kind[kind][severity] += 1
                row = {"folder": source.name, "where": finding.get("where"), "kind": kind,
                       "excerpt": finding.get("excerpt"), "severity": severity, "rule": finding.get("rule"),
                       "origin": (finding.get("origin") or {}).get("kind")}
                label = (labels or {}).get(_label_key(row))
                if kind not in NOT_JUDGED or label:
                    dumped.append(row)
                    cell = hand.setdefault(severity, {}).setdefault(kind, {})
                    cell[label or "unlabelled"] = cell.get(label or "unlabelled", 0) + 1
            rows.append({"folder": source.name, "memories": report.get("memories"),
                         "with_session": report.get("with_session"), "audit_s": round(took, 2),
                         "findings": len(findings), "high": report.get("high"),
                         "memories_flagged_high": len(set().union(*(_memories_of(f) for f in findings
                                                                    if f.get("severity") == "high"))),
                         "by_kind": by_kind, "forget_requests": len(forgotten["asked"]),
                         "problems": report.get("problem_count", 0)})
            if progress:
                progress(f"  {source.name}: {report.get('memories')} memories, audit {took:.1f} s")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if dump:
        with open(dump, "w", encoding="utf-8") as handle:
            for row in dumped:
                handle.write(json.dumps({**row, "label": ""}, ensure_ascii=False) + "\n")
    total_forget = sum(row["forget_requests"] for row in rows)
    return {"mode": "real", "memcite": _memcite_version(), "folders": rows,
            "forget_requests": total_forget, "hand_labels": hand if labels is not None else None}


# --------------------------------------------------------------------------- text output


def _cell(value: dict) -> str:
    if not value["n"]:
        return "-"
    low, high = value["ci95"]
    return f"{value['k']}/{value['n']} {100 * value['rate']:.0f}% [{100 * low:.0f}-{100 * high:.0f}]"


def render(report: dict) -> str:
    out = [f"memcite at {report['memcite']['path']}"]
    if report.get("origin_override"):
        out.append(f"every text read from: {report['origin_override']} (--origin-override)")
    if report["mode"] == "data":
        for title, rows, keys in (("By set", report["by_set"], ("set", "label", "wording")),
                                  ("By origin", report["by_origin"], ("label", "origin", "wording")),
                                  ("Overall", report["overall"], ("label", "wording"))):
            out += ["", title, "",
                    "| " + " | ".join(keys)
                    + " | n | high | high, secrets aside | medium+ | any | forget asked |",
                    "|" + " --- |" * (len(keys) + 7)]
            out[-2] += " high by kind |"
            for row in rows:
                high = ", ".join(f"{kind.split('/')[0]} {n}" for kind, n in row["kinds"].items()
                                 if kind.endswith("/high"))
                out.append("| " + " | ".join(str(row[k]) for k in keys) + f" | {row['n']} | "
                           + " | ".join(_cell(row[c]) for c in ("high", "high_not_secret", "medium+", "low+",
                                                                 "forget"))
                           + f" | {high or '-'} |")
        out += ["", "Homes: " + ", ".join(f"{h['set']} ({h['wording']}) {h['audit_s']} s"
                                         for h in report["homes"])]
        return "\n".join(out) + "\n"
    out += ["", "| folder | memories | findings | high | memories high | forget asked | by kind (severity) |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in report["folders"]:
        kinds = "; ".join(f"{kind} " + ", ".join(f"{s} {n}" for s, n in sorted(sev.items()))
                          for kind, sev in sorted(row["by_kind"].items()))
        out.append(f"| {row['folder']} | {row['memories']} | {row['findings']} | {row['high']} | "
                   f"{row['memories_flagged_high']} | {row['forget_requests']} | {kinds} |")
    out.append(f"\nForget requests made unprompted: {report['forget_requests']}")
    if report["hand_labels"] is not None:
        out += ["", "Hand-labelled directive and poisoned findings", "",
                "| severity | kind | " + " | ".join(HAND_LABELS) + " | unlabelled |",
                "|" + " --- |" * (len(HAND_LABELS) + 3)]
        for severity, per_kind in sorted(report["hand_labels"].items(), key=lambda s: -RANK.get(s[0], 0)):
            for kind, counts in sorted(per_kind.items()):
                out.append(f"| {severity} | {kind} | " + " | ".join(str(counts.get(label, 0))
                                                                  for label in HAND_LABELS)
                           + f" | {counts.get('unlabelled', 0)} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", metavar="DIR", help="a folder of labelled sets (*.jsonl)")
    parser.add_argument("--real", metavar="DIR", help="a folder of real memory folders (<name>/memories)")
    parser.add_argument("--labels", metavar="FILE",
                        help="hand labels of the real folders' findings (JSON Lines)")
    parser.add_argument("--dump-findings", metavar="FILE",
                        help="write the real folders' findings that judge an instruction here, unlabelled")
    parser.add_argument("--wording", choices=(*WORDINGS, "all"), default="all",
                        help="the memory repeats the text verbatim, wrapped as a summary says it, as a "
                             "terse note, or all three (a home each)")
    parser.add_argument("--layout", choices=LAYOUTS, default="both",
                        help="keep the memories in stage1_outputs, in the folder's files, or both")
    parser.add_argument("--origin-override", choices=ORIGINS, metavar="ORIGIN",
                        help="every text reaches its thread from ORIGIN (one of %(choices)s), whatever "
                             "its set says: e.g. the projects' conventions read from a web page")
    parser.add_argument("--limit", type=int, metavar="N", help="at most N items of each set and label")
    parser.add_argument("--keep", metavar="DIR", help="build the homes in this folder and keep them")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--out", metavar="FILE", help="also write the JSON report to this file")
    args = parser.parse_args(argv)
    if bool(args.data) == bool(args.real):
        parser.error("give --data DIR or --real DIR")
    progress = None if args.json else (lambda line: print(line, file=sys.stderr, flush=True))
    try:
        if args.data:
            wordings = WORDINGS if args.wording == "all" else (args.wording,)
            report = bench_data(args.data, wordings=wordings, layout=args.layout, limit=args.limit,
                                keep=args.keep, progress=progress, origin=args.origin_override)
        else:
            labels = read_labels(args.labels) if args.labels else None
            report = bench_real(args.real, labels=labels, dump=args.dump_findings, progress=progress)
    except BenchInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(report, indent=1, ensure_ascii=False) if args.json else render(report), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
