"""``memcite trace ID``: the provenance of one memory, or of one line of the memory folder.

``ID`` is a memory's thread id, or ``FILE:LINE`` of ``MEMORY.md`` or ``memory_summary.md``
(also ``raw_memories.md`` and ``rollout_summaries/<file>.md``), resolved to the memories it
was consolidated from as far as the layout allows (``memcite.audit.memory_audit``
``attribute_folder_lines``): the thread ids or summary files the line names, else the
memory whose text holds its words, else (``MEMORY.md``) the ids its task group names.
Codex's consolidation keeps no record of which inputs a line came from, so a line that
names nothing and matches no memory ends the trail there, and the report says so.

For each memory: its source thread (time, project, source, session file), where each of
its sentences' words first appear in that session (``memcite.audit.provenance``), the
replies that cited it since (memcite's ledger, each cited entry checked), and what to do.
Read-only.
"""

from __future__ import annotations

import os
import re
import sqlite3
from functools import lru_cache, partial

from memcite.audit import git_index, memory_audit, provenance
from memcite.audit.project_facts import project_facts
from memcite.audit.verdict_cache import VerdictCache
from memcite.citations.thread_ids import normalize_thread_id
from memcite.display import count
from memcite.errors import InputError

MAX_CITATIONS = 50
_PLACE = re.compile(r"^(?P<file>MEMORY\.md|memory_summary\.md|raw_memories\.md|"
                    r"rollout_summaries/[^/\\:]+\.md):(?P<line>\d{1,9})$")


def parse_trace_id(ident: str) -> tuple[str, str | None, int | None]:
    """``("memory", thread id, None)`` or ``("line", file, line)``; an ``InputError`` otherwise."""
    text = ident.strip()
    thread_id = normalize_thread_id(text)
    if thread_id is not None:
        return "memory", thread_id, None
    place = _PLACE.match(text.removeprefix("./"))
    if place and int(place.group("line")) >= 1:
        return "line", place.group("file"), int(place.group("line"))
    raise InputError(f"{ident!r} is neither a thread id nor FILE:LINE of the memory folder",
                     hint="give a memory's thread id (memcite stats lists them) or e.g. "
                          "MEMORY.md:12 or memory_summary.md:3")


def _sentences(lines, index, threshold: float, facts=None) -> list[dict]:
    out, seen = [], set()
    for where, line in memory_audit.with_code_blocks(lines):
        if line.lstrip().startswith("#"):  # a heading is no sentence
            continue
        for _start, _end, sentence in provenance.split_sentences(line):
            key = sentence.strip().lower()
            if key in seen:
                continue
            seen.add(key)
            # judged as the audit judges it (origin, effects, markers), not by grammar alone
            directives, origin, verdict = memory_audit.judge_sentence(sentence, index,
                                                                      threshold=threshold,
                                                                      facts=facts)
            out.append({"where": where, "text": memory_audit.shown(sentence),
                        "origin": memory_audit.origin_dict(origin),
                        "directives": [match.rule for match in directives],
                        "poisoned": verdict.severity == memory_audit.HIGH})
    return out


def _citations(db_path: str | None, thread_id: str, memory_root: str) -> tuple[list[dict], int, str | None]:
    """The replies that cited ``thread_id`` (newest first), with their entries checked."""
    if not db_path or not os.path.isfile(db_path):
        return [], 0, "no memcite database: no citations known (run `memcite sync` and record replies)"
    from memcite.ledger.memory_files import LATE_HASH_SECONDS
    from memcite.ledger.memory_history import MemoryHistory
    from memcite.ledger.store import open_store
    from memcite.retention.checks import MemoryFolder
    from memcite.retention.memory_card import check_cited_entry

    try:
        conn = open_store(db_path, readonly=True)
    except Exception as exc:  # a damaged or foreign database: said, not raised
        return [], 0, f"{db_path}: cannot read ({exc})"
    try:
        total = conn.execute("SELECT count(DISTINCT reply_id) FROM cited_ids WHERE thread_id = ?"
                             " AND counted = 1", (thread_id,)).fetchone()[0]
        rows = conn.execute(
            "SELECT r.id, r.thread_id, r.cwd, r.replied_at, r.recorded_at, r.origin FROM replies r"
            " WHERE r.id IN (SELECT reply_id FROM cited_ids WHERE thread_id = ? AND counted = 1)"
            " ORDER BY r.replied_at DESC, r.id DESC LIMIT ?", (thread_id, MAX_CITATIONS)).fetchall()
        folder = MemoryFolder(memory_root)
        history = MemoryHistory(memory_root)
        out = []
        for reply_id, reply_thread, cwd, replied_at, recorded_at, origin in rows:
            late = recorded_at - replied_at > LATE_HASH_SECONDS
            entries = [check_cited_entry(folder, history, path, start, end, digest,
                                         replied_at=replied_at,
                                         late=recorded_at - replied_at if late else 0,
                                         origin=origin)
                       for path, start, end, digest in conn.execute(
                           "SELECT path, line_start, line_end, lines_sha256 FROM cited_entries"
                           " WHERE reply_id = ? ORDER BY position", (reply_id,))]
            out.append({"reply_id": reply_id, "thread_id": reply_thread, "cwd": cwd,
                        "replied_at": int(replied_at), "origin": origin,
                        "entries": [{"path": e["path"], "line_start": e["line_start"],
                                     "line_end": e["line_end"], "outcome": e["outcome"]}
                                    for e in entries]})
        return out, total, None
    except sqlite3.Error as exc:
        return [], 0, f"{db_path}: cannot read citations ({exc})"
    finally:
        conn.close()


def _memory_report(home: memory_audit.MemoryHome, memory: memory_audit.Memory, lines, *,
                   db_path: str | None, threshold: float, problems: list[str]) -> dict:
    index = None
    session_note = None
    source, cwd = memory.source, memory.cwd
    files_of = lru_cache(maxsize=None)(git_index.tracked_files)  # each index read once
    if memory.session_path:
        try:
            read = provenance.read_segments(memory.session_path)
            # no threads row (an older Codex, another SQLite home): the session's own meta
            source = source or (read.source if read.source != "unknown" else None)
            cwd = cwd or read.cwd
            # the thread's project and the files it tracks, as the audit reads them
            files = files_of(read.cwd)
            index = provenance.SegmentIndex(
                read.segments, read.cwd, partial(files.tracked, cwd=read.cwd) if files else None)
            if read.bad_line_count or read.long_lines or read.partial:
                session_note = (f"{count(read.bad_line_count, 'line')} not JSON, {read.long_lines} too "
                                f"long, skipped" + ("; read cut at its limit" if read.partial else ""))
        except provenance.scan.SessionFileError as error:
            problems.append(str(error))
            session_note = "its session file could not be read"
    else:
        session_note = ("no session file of this thread in the home's sessions/ or "
                        "archived_sessions/: the trail ends at the memory")
    citations, cited, citation_note = _citations(db_path, memory.thread_id,
                                                 home.locations.memory_folder)
    sentences = _sentences(lines, index, threshold, project_facts(memory.cwd, files_of(memory.cwd)))
    return {
        "thread_id": memory.thread_id,
        "places": memory.places,
        "source_thread": {"thread_id": memory.thread_id, "created_at": memory.created_at,
                          "cwd": cwd, "source": source,
                          "session": memory.session_path, "note": session_note},
        "sentences": sentences,
        "poisoned": sum(1 for s in sentences if s["poisoned"]),
        "cited_by": cited,
        "citations": citations,
        "citations_note": citation_note,
        "fix": memory_audit.fix_for(memory.thread_id, home.locations.codex_home),
    }


def trace(codex_home: str, ident: str, *, db_path: str | None = None,
          env_sqlite_home: str | None = None, cwd: str | None = None,
          threshold: float = provenance.DEFAULT_THRESHOLD, cache_dir: str | None = None) -> dict:
    """The provenance of ``ident`` in ``codex_home`` (``memcite trace --json``); ``cache_dir``:
    where the last audit kept what it read, so that a line is traced without reading every
    unchanged memory again (only read here)."""
    kind, name, number = parse_trace_id(ident)
    kept = VerdictCache(cache_dir, codex_home) if cache_dir else None
    with memory_audit.read_memory_home(codex_home, env_sqlite_home=env_sqlite_home,
                                       cwd=cwd, kept=kept) as home:
        if kept is not None and os.path.realpath(kept.codex_home) != \
                os.path.realpath(home.locations.codex_home):
            kept = None
        return _trace(home, ident.strip(), kind, name, number, db_path=db_path,
                      threshold=threshold, kept=kept)


def _trace(home: memory_audit.MemoryHome, ident: str, kind: str, name: str, number: int | None,
           *, db_path: str | None, threshold: float, kept: VerdictCache | None = None) -> dict:
    problems = home.problems
    line_text = None
    if kind == "memory":
        memory = home.memories.get(name)
        if memory is None:
            raise InputError(f"{name}: no memory of this thread in {home.locations.codex_home} "
                             "(not in stage1_outputs, rollout_summaries/ nor raw_memories.md)",
                             hint="`memcite stats` lists the memories; `memcite thread ID` tells "
                                  "what memory did in a thread")
        chosen = [(memory, home.lines_of(memory))]
        how, trail = "memory", "the memory's own thread"
    else:
        if name.startswith("rollout_summaries/") or name == "raw_memories.md":
            place = f"{name}:{number}"
            if name == "raw_memories.md":
                owners = [m for m in home.memories.values()
                          if any(where == place for where, _text in m.raw_lines)]
            else:
                owner = home.summary_names.get(name.removeprefix("rollout_summaries/"))
                owners = [home.memories[owner]] if owner in home.memories else []
            texts = [text for where, text in home.lines_of(owners[0])
                     if where == place] if owners else []
            if not texts:
                raise InputError(f"{place}: no memory text on that line")
            memory = owners[0]
            line_text = texts[0]
            chosen = [(memory, [(f"{name}:{number}", line_text)])]
            how, trail = "named", f"{name} belongs to thread {memory.thread_id}"
        else:
            found = [text for file, line, text in home.folder_lines if file == name and line == number]
            if not found:
                raise InputError(f"{name}:{number}: no such line in "
                                 f"{home.locations.memory_folder}",
                                 hint="the file is shorter, or not there")
            line_text = found[0]
            ids, how = memory_audit.attribute_folder_lines(home, threshold=threshold,
                                                           kept=kept).get(
                (name, number), ([], "none"))
            chosen = [(home.memories[i], [(f"{name}:{number}", line_text)]) for i in ids]
            trail = {
                "named": "the line names its memory (thread id or rollout summary file)",
                "block": "no id on the line and no memory holds its words: the ids its "
                         "task group names",
                "text": "no id on the line or in its section: the memory whose text holds the "
                        f"line's words (at least {threshold:.0%} of its word pairs)",
                "none": f"the trail ends at {name}:{number}: it names no thread or summary file, "
                        "nor does its section, and no memory's text holds its words; Codex's "
                        "consolidation keeps no record of the inputs of a line",
            }[how]
    memories = [_memory_report(home, memory, lines, db_path=db_path, threshold=threshold,
                               problems=problems) for memory, lines in chosen]
    return {"id": ident, "kind": kind, "codex_home": home.locations.codex_home,
            "memory_folder": home.locations.memory_folder,
            "line": memory_audit.shown(line_text, 500) if line_text is not None else None,
            "resolved_by": how, "trail": trail, "threshold": threshold,
            "memories": memories, "poisoned": sum(m["poisoned"] for m in memories),
            "problems": [memory_audit.shown(p, 500) for p in problems[:50]]}
