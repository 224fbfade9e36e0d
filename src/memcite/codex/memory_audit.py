"""``memcite audit``: every memory of a Codex home checked for taint, directives, poison,
other projects and secrets, each finding with its memory, source thread and call, and fix.

What is read (read-only, nothing is written):

- the memories: each ``stage1_outputs`` row (``raw_memory``, ``rollout_summary``), each
  ``rollout_summaries/*.md`` (header and text) and each ``raw_memories.md`` section, merged
  per thread id; a memory's project is the ``cwd`` its summary header, its raw memory
  section or Codex's ``threads`` row (``state_5.sqlite``) gives;
- the folder's ``MEMORY.md`` and ``memory_summary.md`` (the injected summary), line by line,
  each line traced to the memories it was consolidated from as far as the layout allows:
  the thread ids and ``rollout_summaries/<file>`` it names, else the memory whose text holds
  at least the threshold share of the line's word pairs, else (``MEMORY.md``) the ids its
  ``# Task Group`` section names;
- each memory's source session (``sessions/``, found by the thread id), read into segments
  (``memcite.codex.provenance``) to tell where each sentence's words first appear.

Each sentence gives findings: ``directive`` (``memcite.lint.directives``), ``taint`` (its
words first appear in a tool, MCP, web or outside-file output), ``poisoned`` (both: high
severity; a directive whose words the user typed is never poisoned), ``secret`` (as
``memcite lint`` finds them, masked), and with a project ``cross-project`` (a memory, or a
line of ``MEMORY.md``/``memory_summary.md``, from another project). Untrusted throughout:
files are read bounded from the folder's handle, a bad session or row is reported in
``problems`` and the audit goes on.
"""

from __future__ import annotations

import math
import os
import re
import sqlite3
from dataclasses import dataclass, field

from memcite.citations.thread_ids import normalize_thread_id
from memcite.codex import provenance
from memcite.codex import session_scan as scan
from memcite.display import count
from memcite.ledger.codex_home import (
    RAW_MEMORIES,
    ROLLOUT_SUMMARIES,
    CodexHomeError,
    CodexLocations,
    locate_codex_home,
    open_codex_db,
)
from memcite.ledger.memory_files import OUTSIDE, MemoryRoot, read_capped
from memcite.lint.directives import find_directives
from memcite.untrusted import storable

MAX_MEMORY_FILE_BYTES = 4 * 1024 * 1024  # one memory file read at most this much
MAX_EXCERPT = 200
HEADER_BYTES = 64 * 1024  # a rollout summary's header is read from this much of its start
HIGH, MEDIUM, LOW = "high", "medium", "low"
SEVERITY = {"poisoned": HIGH, "secret": HIGH, "cross-project": MEDIUM, "taint": LOW,
            "directive": LOW}
KINDS = ("poisoned", "secret", "cross-project", "directive", "taint")
FOLDER_FILES = ("memory_summary.md", "MEMORY.md")

_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_SUMMARY_FILE = re.compile(r"rollout_summaries/([^\s`'\"()\[\];,]+\.md)")
_HEADER = re.compile(r"^([a-z_][a-z0-9_]*):[ \t]*(.*?)\s*$")
_THREAD_HEADING = re.compile(r"^## Thread `([^`]*)`\s*$")


def shown(text: str, limit: int = MAX_EXCERPT) -> str:
    """Text safe to print (``memcite.display.shown``: secrets masked, control characters
    escaped), cut to ``limit``."""
    from memcite.display import shown as display

    text = display(storable(text.strip()))
    return text if len(text) <= limit else text[:limit - 1] + "…"


# --------------------------------------------------------------------------- the memories


@dataclass
class Memory:
    """One memory (a thread id), where it is; its text is read when asked
    (``MemoryHome.lines_of``), so a home of any size is audited in flat memory."""

    thread_id: str
    places: list[str] = field(default_factory=list)  # stage1_outputs, rollout_summaries/x.md...
    cwd: str | None = None
    summary_file: str | None = None
    stage1_key: str | None = None  # its thread_id as stage1_outputs spells it
    summaries: list[str] = field(default_factory=list)  # its rollout_summaries/<file>.md
    raw_lines: list[tuple[str, str]] = field(default_factory=list)  # of raw_memories.md
    source: str | None = None  # cli | exec | vscode | subagent, from Codex's threads table
    created_at: int | None = None
    session_path: str | None = None


@dataclass
class MemoryHome:
    """What the audit and the trace read of one Codex home (``close()`` when done)."""

    locations: CodexLocations
    memories: dict[str, Memory]
    folder_lines: list[tuple[str, int, str]]  # (file, line number, text)
    sessions: dict[str, str]  # thread id -> session file
    problems: list[str]
    summary_names: dict[str, str] = field(default_factory=dict)  # summary file -> thread id
    stage1_texts: tuple[str, ...] = ()  # the text columns of stage1_outputs
    _conn: sqlite3.Connection | None = None
    _root: MemoryRoot | None = None

    def lines_of(self, memory: Memory) -> list[tuple[str, str]]:
        """``(where, line)`` of the memory's text: its stage1_outputs row, its rollout
        summaries, its raw_memories.md section; blank lines left out."""
        lines: list[tuple[str, str]] = []
        if memory.stage1_key is not None and self.stage1_texts:
            lines.extend(self._stage1_lines(memory.stage1_key))
        for inside in memory.summaries:
            if self._root is None:
                self._root = MemoryRoot(self.locations.memory_folder)
            text = _read_in_folder(self._root, inside, self.problems)
            if text is not None:
                _fields, body_at = _split_header(text)
                body = "\n".join(text.splitlines()[body_at - 1:])
                lines.extend(_text_lines(inside, body, body_at))
        lines.extend(memory.raw_lines)
        return lines

    def _stage1_lines(self, key: str) -> list[tuple[str, str]]:
        try:
            if self._conn is None:
                self._conn = open_codex_db(self.locations.state_db)
            picked = ", ".join(f"substr({name}, 1, {MAX_MEMORY_FILE_BYTES})"
                               for name in self.stage1_texts)
            row = self._conn.execute(f"SELECT {picked} FROM stage1_outputs WHERE thread_id = ?",
                                     (key,)).fetchone()
        except (CodexHomeError, sqlite3.Error) as exc:
            self.problems.append(f"{self.locations.state_db}: cannot read a stage1_outputs row "
                                 f"({getattr(exc, 'message', exc)})")
            self.stage1_texts = ()
            return []
        lines: list[tuple[str, str]] = []
        for name, value in zip(self.stage1_texts, row or (), strict=False):
            if isinstance(value, str) and value.strip():
                lines.extend(_text_lines(f"stage1_outputs.{name}", value))
        return lines

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._root is not None:
            self._root.close()
            self._root = None

    def __enter__(self) -> MemoryHome:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _text_lines(where: str, text: str, first_line: int = 1) -> list[tuple[str, str]]:
    out = []
    for number, line in enumerate(text.splitlines(), start=first_line):
        if line.strip():
            out.append((f"{where}:{number}", line))
    return out


def _read_in_folder(root: MemoryRoot, inside: str, problems: list[str],
                    limit: int | None = None) -> str | None:
    outcome, fd, _parts = root.open(inside)
    if fd is None:
        if outcome == OUTSIDE:
            problems.append(f"{inside}: a symlink leading outside the memory folder; not read")
        return None
    try:
        result = read_capped(fd, limit or MAX_MEMORY_FILE_BYTES, prefix=True)
    except OSError as exc:
        problems.append(f"{inside}: cannot read: {exc.strerror or exc}")
        return None
    finally:
        os.close(fd)
    if result.too_large and limit is None:
        problems.append(f"{inside}: larger than {MAX_MEMORY_FILE_BYTES} bytes; its start was read")
    return result.data.decode("utf-8", "replace") if result.data is not None else None


def _memory(memories: dict[str, Memory], thread_id: str) -> Memory:
    found = memories.get(thread_id)
    if found is None:
        found = memories[thread_id] = Memory(thread_id)
    return found


def _read_stage1(path: str, memories: dict[str, Memory], problems: list[str]) -> tuple[str, ...]:
    """Each stage1_outputs row as a memory (its text is read later); the text columns."""
    try:
        conn = open_codex_db(path)
    except CodexHomeError as error:
        problems.append(error.message)
        return ()
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(stage1_outputs)")}
        if "thread_id" not in columns:
            problems.append(f"{path}: no stage1_outputs table with a thread_id column")
            return ()
        texts = tuple(name for name in ("raw_memory", "rollout_summary") if name in columns)
        bad = 0
        for (key,) in conn.execute("SELECT thread_id FROM stage1_outputs"):
            thread_id = normalize_thread_id(str(key or "").strip()) if isinstance(key, str) else None
            if thread_id is None:
                bad += 1
                continue
            memory = _memory(memories, thread_id)
            memory.places.append("stage1_outputs")
            memory.stage1_key = key
        if bad:
            problems.append(f"{path}: {count(bad, 'stage1_outputs row')} whose thread_id is not a UUID; "
                            "skipped")
        return texts
    except sqlite3.Error as exc:
        problems.append(f"{path}: cannot read stage1_outputs ({exc})")
        return ()
    finally:
        conn.close()


def _split_header(text: str) -> tuple[dict[str, str], int]:
    """A summary file's header fields and the line number its text starts at."""
    fields: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            if fields:
                return fields, number + 1
            continue
        header = _HEADER.match(line)
        if header is None:
            return fields, number
        fields.setdefault(header.group(1), header.group(2))
    return fields, len(text.splitlines()) + 1


def _read_summaries(root: MemoryRoot, folder: str, memories: dict[str, Memory],
                    problems: list[str]) -> dict[str, str]:
    """Each rollout summary read into its memory; the file names -> thread ids."""
    names: dict[str, str] = {}
    try:
        listed = sorted(entry.name for entry in os.scandir(os.path.join(folder, ROLLOUT_SUMMARIES))
                        if entry.name.endswith(".md"))
    except OSError:
        return names
    for name in listed:
        inside = f"{ROLLOUT_SUMMARIES}/{name}"
        text = _read_in_folder(root, inside, problems, limit=HEADER_BYTES)
        if text is None:
            continue
        fields, _body_at = _split_header(text)
        thread_id = normalize_thread_id(fields.get("thread_id", "").strip())
        if thread_id is None:
            problems.append(f"{inside}: no thread_id: header; not audited")
            continue
        names[name] = thread_id
        memory = _memory(memories, thread_id)
        memory.places.append(inside)
        memory.summary_file = memory.summary_file or name
        memory.cwd = memory.cwd or (storable(fields["cwd"]) if fields.get("cwd") else None)
        memory.summaries.append(inside)
    return names


def _read_raw_memories(root: MemoryRoot, memories: dict[str, Memory], problems: list[str]) -> None:
    text = _read_in_folder(root, RAW_MEMORIES, problems)
    if not text:
        return
    current: Memory | None = None
    in_header = False
    for number, line in enumerate(text.splitlines(), start=1):
        heading = _THREAD_HEADING.match(line)
        if heading:
            thread_id = normalize_thread_id(heading.group(1).strip())
            current = _memory(memories, thread_id) if thread_id else None
            if current is not None:
                current.places.append(f"{RAW_MEMORIES}:{number}")
            in_header = True
            continue
        if current is None or not line.strip():
            continue
        if in_header:
            header = _HEADER.match(line)
            if header:
                if header.group(1) == "cwd" and not current.cwd:
                    current.cwd = storable(header.group(2))
                continue
            in_header = False
        current.raw_lines.append((f"{RAW_MEMORIES}:{number}", line))


def _read_threads(sqlite_home: str, memories: dict[str, Memory], problems: list[str]) -> None:
    from memcite.codex.thread import state_database

    path = state_database(sqlite_home)
    if path is None:
        return
    try:
        conn = open_codex_db(path)
    except CodexHomeError as error:
        problems.append(error.message)
        return
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(threads)")}
        if "id" not in columns:
            return
        wanted = [name if name in columns else "NULL" for name in ("cwd", "source", "created_at")]
        for row in conn.execute(f"SELECT id, {', '.join(wanted)} FROM threads"):
            thread_id = normalize_thread_id(str(row[0] or ""))
            memory = memories.get(thread_id or "")
            if memory is None:
                continue
            cwd, source, created = row[1:]
            if isinstance(cwd, str) and cwd:
                memory.cwd = memory.cwd or storable(cwd)
            memory.source = scan.source_kind(source) if source is not None else None
            if isinstance(created, int):
                memory.created_at = created // 1000 if created > 10**11 else created
    except sqlite3.Error as exc:
        problems.append(f"{path}: cannot read threads ({exc})")
    finally:
        conn.close()


def _session_files(codex_home: str) -> dict[str, str]:
    """Thread id -> its session file (the plain one preferred to a reverted thread's)."""
    found: dict[str, tuple] = {}
    for path, info, archived in scan.iter_session_files(codex_home):
        name = os.path.basename(path)
        thread_id = scan.rollout_thread_id(name)
        if thread_id is None:
            continue
        variant = "_" in name.rsplit(thread_id, 1)[-1].split(".", 1)[0]
        rank = (variant, archived, -info.st_mtime_ns)
        if thread_id not in found or rank < found[thread_id][0]:
            found[thread_id] = (rank, path)
    return {thread_id: path for thread_id, (_rank, path) in found.items()}


def read_memory_home(codex_home: str, *, env_sqlite_home: str | None = None,
                     cwd: str | None = None) -> MemoryHome:
    """Every memory of ``codex_home`` with its text, the folder's summary lines, the sessions."""
    locations = locate_codex_home(codex_home, env_sqlite_home=env_sqlite_home, cwd=cwd)
    memories: dict[str, Memory] = {}
    problems: list[str] = []
    texts: tuple[str, ...] = ()
    if os.path.isfile(locations.state_db):
        texts = _read_stage1(locations.state_db, memories, problems)
    folder_lines: list[tuple[str, int, str]] = []
    folder = locations.memory_folder
    if os.path.isdir(folder):
        with MemoryRoot(folder) as root:
            summary_names = _read_summaries(root, folder, memories, problems)
            _read_raw_memories(root, memories, problems)
            for name in FOLDER_FILES:
                text = _read_in_folder(root, name, problems)
                if text:
                    folder_lines.extend((name, number, line)
                                        for number, line in enumerate(text.splitlines(), start=1))
    else:
        summary_names = {}
    _read_threads(locations.sqlite_home, memories, problems)
    sessions = _session_files(locations.codex_home)
    for memory in memories.values():
        memory.session_path = sessions.get(memory.thread_id)
    return MemoryHome(locations, memories, folder_lines, sessions, problems, summary_names, texts)


# --------------------------------------------------------------------------- folder lines


def _grams(text: str) -> set:
    words = provenance.words_of(text)
    if len(words) == 1:
        return {words[0]}
    return {(words[i], words[i + 1]) for i in range(len(words) - 1)}


def _blocks(lines: list[tuple[str, int, str]]) -> dict[tuple[str, int], list[str]]:
    """For each folder line, the text of its block (a ``# ``/``## `` section of its file)."""
    out: dict[tuple[str, int], list[str]] = {}
    block: list[str] = []
    members: list[tuple[str, int]] = []
    current = None
    for name, number, text in lines + [("", 0, "# end")]:
        if name != current or text.startswith(("# ", "## ")):
            for key in members:
                out[key] = block
            block, members, current = [], [], name
        block.append(text)
        members.append((name, number))
    return out


_APPLIES_TO = re.compile(r"^\s*applies_to:\s*cwd=(\S+)")


def applies_to(lines: list[tuple[str, int, str]]) -> dict[tuple[str, int], str]:
    """Each ``MEMORY.md`` line -> the project its ``# Task Group`` applies to
    (``applies_to: cwd=<path>``), where it says."""
    out: dict[tuple[str, int], str] = {}
    group: list[tuple[str, int]] = []
    cwd = None

    def close() -> None:
        if cwd:
            for key in group:
                out[key] = cwd

    for name, number, text in lines:
        if name != "MEMORY.md":
            continue
        if text.startswith("# "):
            close()
            group, cwd = [], None
        found = _APPLIES_TO.match(text)
        if found and cwd is None:
            cwd = storable(found.group(1))
        group.append((name, number))
    close()
    return out


def attribute_folder_lines(home: MemoryHome, *, threshold: float = provenance.DEFAULT_THRESHOLD
                           ) -> dict[tuple[str, int], tuple[list[str], str]]:
    """Each folder line -> ``(thread ids, how)``: ``named`` (ids or summary files on the line),
    ``text`` (the memory whose text holds at least ``threshold`` of its word pairs), ``block``
    (for ``MEMORY.md``: the ids its task group names), or ``([], "none")``."""
    names = home.summary_names
    known = home.memories

    def named(texts) -> list[str]:
        ids: list[str] = []
        for text in texts:
            for match in _UUID.finditer(text):
                thread_id = normalize_thread_id(match.group())
                if thread_id in known and thread_id not in ids:
                    ids.append(thread_id)
            for match in _SUMMARY_FILE.finditer(text):
                thread_id = names.get(match.group(1))
                if thread_id and thread_id not in ids:
                    ids.append(thread_id)
        return ids

    blocks = _blocks(home.folder_lines)
    out: dict[tuple[str, int], tuple[list[str], str]] = {}
    unmatched: list[tuple[tuple[str, int], set]] = []
    for name, number, text in home.folder_lines:
        if not provenance.words_of(text) or text.startswith("#") or text.strip() == "v1" \
                or _APPLIES_TO.match(text):
            continue
        ids = named([text])
        if ids:
            out[(name, number)] = (ids, "named")
        else:
            unmatched.append(((name, number), _grams(text)))
    if not unmatched:
        return out
    wanted = set().union(*(grams for _key, grams in unmatched))
    postings: dict = {}
    held_by: dict[str, set] = {}
    for thread_id, memory in known.items():
        held = set()
        for _where, text in home.lines_of(memory):
            held |= _grams(text) & wanted
        if held:
            held_by[thread_id] = held
            for gram in held:
                postings.setdefault(gram, []).append(thread_id)
    for key, grams in unmatched:
        # A memory holding ``threshold`` of the line's pairs holds at least one of any
        # ``n - ceil(threshold * n) + 1`` of them: its candidates are the memories holding
        # one of that many of the rarest pairs; each is then counted exactly.
        ranked = sorted(grams, key=lambda gram: len(postings.get(gram, ())))
        needed = len(grams) - math.ceil(threshold * len(grams) - 1e-9) + 1
        candidates = {thread_id for gram in ranked[:max(needed, 1)]
                      for thread_id in postings.get(gram, ())}
        best = sorted(((len(grams & held_by[thread_id]), thread_id) for thread_id in candidates),
                      key=lambda item: (-item[0], item[1]))
        if grams and best and best[0][0] / len(grams) >= threshold:
            out[key] = ([best[0][1]], "text")
            continue
        # MEMORY.md's task groups name their sources ("Source: rollout <id>"): the line's
        # section is the last resort (the injected summary is one section: never used)
        ids = named(blocks.get(key, [])) if key[0] == "MEMORY.md" else []
        out[key] = (ids, "block") if ids else ([], "none")
    return out


# --------------------------------------------------------------------------- findings


def fix_for(thread_id: str, codex_home: str) -> str:
    """What to do about a memory: the way to forget it, or to restore the folder."""
    return (f"forget it with an ad-hoc note asking Codex's consolidation to drop thread "
            f"{thread_id} (the way `memcite prune --apply` asks; `memcite restore {thread_id}` "
            f"undoes it), or restore the memory folder from before it (its git history: "
            f"`git -C {os.path.join(codex_home, 'memories')} log`)")


def _in_project(cwd: str | None, project: str) -> bool:
    if not cwd:
        return True  # unknown: never claimed to be another project's
    path = os.path.normpath(cwd)
    root = os.path.normpath(project)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def origin_dict(origin: provenance.Origin | None) -> dict | None:
    if origin is None:
        return None
    segment = origin.segment
    return {"kind": segment.kind, "line": segment.line, "tool": segment.tool,
            "call_id": segment.call_id,
            "detail": shown(segment.detail) if segment.detail else None,
            "share": origin.share, "tainted": segment.tainted}


class SessionIndex:
    """Source sessions read with their segment index, the last ``KEPT`` of them kept (a
    home's sessions are never all held at once)."""

    KEPT = 32

    def __init__(self, problems: list[str]) -> None:
        self._read: dict[str, provenance.SegmentIndex | None] = {}
        self.problems = problems

    def index(self, path: str | None) -> provenance.SegmentIndex | None:
        if path is None:
            return None
        if path in self._read:
            self._read[path] = self._read.pop(path)  # most recent last
        else:
            while len(self._read) >= self.KEPT:
                self._read.pop(next(iter(self._read)))
            try:
                read = provenance.read_segments(path)
            except scan.SessionFileError as error:
                self.problems.append(str(error))
                self._read[path] = None
                return None
            if read.bad_line_count or read.long_lines:
                self.problems.append(f"{path}: {count(read.bad_line_count, 'line')} not JSON and "
                                     f"{read.long_lines} too long, skipped")
            self._read[path] = provenance.SegmentIndex(read.segments)
        return self._read[path]


def analyse_sentence(sentence: str, index: provenance.SegmentIndex | None, *,
                     threshold: float = provenance.DEFAULT_THRESHOLD
                     ) -> tuple[list, provenance.Origin | None]:
    """``(directive matches, origin)`` of one sentence of a memory."""
    directives = find_directives(sentence)
    origin = provenance.origin_of(sentence, index, threshold=threshold) if index else None
    if directives and origin is None and index is not None:
        # reworded: where its URL or command first appears (a user's own stays the user's)
        origin = provenance.anchor_origin(sentence, index)
    return directives, origin


def _finding(kind: str, memory: Memory | None, where: str, text: str, *, rule: str | None,
             origin: provenance.Origin | None, codex_home: str, message: str) -> dict:
    return {"kind": kind, "severity": SEVERITY[kind], "memory": memory.thread_id if memory else None,
            "where": where, "project": memory.cwd if memory else None,
            "source": memory.source if memory else None,
            "session": memory.session_path if memory else None,
            "rule": rule, "excerpt": shown(text), "origin": origin_dict(origin),
            "message": message,
            "fix": fix_for(memory.thread_id, codex_home) if memory else
            f"edit {where.split(':')[0]} by hand or let Codex's next consolidation rewrite it"}


def _sentence_findings(memory: Memory | None, where: str, line: str,
                       index: provenance.SegmentIndex | None, *, codex_home: str,
                       threshold: float, seen: set) -> list[dict]:
    out = []
    if line.lstrip().startswith("#"):  # a heading: no sentence (its secrets are scanned)
        return out
    for _start, _end, sentence in provenance.split_sentences(line):
        key = (memory.thread_id if memory else where, sentence.strip().lower())
        if key in seen:  # the same sentence in another place of the memory: said once
            continue
        seen.add(key)
        directives, origin = analyse_sentence(sentence, index, threshold=threshold)
        tainted = origin is not None and origin.segment.tainted
        what = (f"{origin.segment.kind} output of {origin.segment.tool or 'a tool'}"
                f" (call {origin.segment.call_id or '?'}, session line {origin.segment.line})"
                if tainted else None)
        if directives and tainted:
            out.append(_finding("poisoned", memory, where, sentence, rule=directives[0].rule,
                                origin=origin, codex_home=codex_home,
                                message=f"a directive ({directives[0].rule}) whose words came "
                                        f"from the {what}, not from the user"))
            continue
        for match in directives[:1]:
            said = {"user": "the user typed it", "assistant": "the assistant's own words",
                    "context": "Codex's context (AGENTS.md, environment)"}.get(
                origin.segment.kind if origin else "", "its words are not in the source session"
                if index else "no source session to compare with")
            out.append(_finding("directive", memory, where, sentence, rule=match.rule,
                                origin=origin, codex_home=codex_home,
                                message=f"a directive ({match.rule}); {said}"))
        if tainted and not directives:
            out.append(_finding("taint", memory, where, sentence, rule=None, origin=origin,
                                codex_home=codex_home,
                                message=f"words from the {what} rather than from the user"))
    return out


def _secret_findings(memory: Memory | None, where: str, line: str, codex_home: str) -> list[dict]:
    from memcite.secrets import scan as scan_secrets

    return [_finding("secret", memory, where, line, rule=found.kind, origin=None,
                     codex_home=codex_home, message=f"a secret ({found.kind}) in memory text")
            for found in scan_secrets(line)[:1]]


def _memory_secrets(memory: Memory, lines_of_memory, codex_home: str) -> list[dict]:
    """The secrets of a memory's text, scanned at once (a line held in several places once)."""
    from memcite.secrets import scan as scan_secrets

    unique: dict[str, str] = {}
    for where, line in lines_of_memory:
        unique.setdefault(line.replace("\n", " "), where)
    lines = list(unique)
    out, seen = [], set()
    for found in scan_secrets("\n".join(lines)):
        index = found.line - 1
        if index in seen or not 0 <= index < len(lines):
            continue
        seen.add(index)
        out.append(_finding("secret", memory, unique[lines[index]], lines[index],
                            rule=found.kind, origin=None, codex_home=codex_home,
                            message=f"a secret ({found.kind}) in memory text"))
    return out


def audit_home(codex_home: str, *, project: str | None = None, env_sqlite_home: str | None = None,
               cwd: str | None = None, threshold: float = provenance.DEFAULT_THRESHOLD,
               home: MemoryHome | None = None, cache_dir: str | None = None,
               now: int | None = None) -> dict:
    """The audit of every memory of ``codex_home`` (``memcite audit --json``); with
    ``cache_dir``, its counts are kept there for ``stats`` and ``report``
    (``memcite.retention.audit_counts``)."""
    if home is None:
        with read_memory_home(codex_home, env_sqlite_home=env_sqlite_home, cwd=cwd) as home:
            return audit_home(codex_home, project=project, threshold=threshold, home=home,
                              cache_dir=cache_dir, now=now)
    codex_home = home.locations.codex_home
    project = os.path.realpath(project) if project else None
    problems = home.problems
    sessions = SessionIndex(problems)
    findings: list[dict] = []
    for thread_id in sorted(home.memories):
        memory = home.memories[thread_id]
        index = sessions.index(memory.session_path)
        lines = home.lines_of(memory)
        if project and not _in_project(memory.cwd, project):
            findings.append(_finding("cross-project", memory, memory.places[0] if memory.places
                                     else thread_id, lines[0][1] if lines else "",
                                     rule=None, origin=None, codex_home=codex_home,
                                     message=f"a memory of {memory.cwd}, not of {project}"))
        findings.extend(_memory_secrets(memory, lines, codex_home))
        seen: set = set()  # a sentence in several places of one memory is said once
        for where, line in lines:
            findings.extend(_sentence_findings(memory, where, line, index, codex_home=codex_home,
                                               threshold=threshold, seen=seen))
    attributed = attribute_folder_lines(home, threshold=threshold)
    applies = applies_to(home.folder_lines)
    traced_lines = 0
    for name, number, text in home.folder_lines:
        key = (name, number)
        if key not in attributed:
            continue
        ids, _how = attributed[key]
        where = f"{name}:{number}"
        memory = home.memories.get(ids[0]) if ids else None
        traced_lines += bool(ids)
        before = len(findings)
        findings.extend(_secret_findings(memory, where, text, codex_home))
        index = sessions.index(memory.session_path) if memory else None
        findings.extend(_sentence_findings(memory, where, text, index, codex_home=codex_home,
                                           threshold=threshold, seen=set()))
        # a line traced to no memory keeps the project its task group applies to
        line_project = memory.cwd if memory else applies.get(key)
        for found in findings[before:]:
            found["project"] = found["project"] or line_project
        if project and line_project and not _in_project(line_project, project):
            whose = (f"a memory of {line_project}" if memory else
                     f"a task group that applies to {line_project}")
            found = _finding("cross-project", memory, where, text, rule=None, origin=None,
                             codex_home=codex_home,
                             message=f"a line of {name} from {whose}, not of {project}")
            found["project"] = line_project
            findings.append(found)
    findings.sort(key=lambda f: (KINDS.index(f["kind"]), f["memory"] or "", f["where"]))
    counts = {kind: sum(1 for f in findings if f["kind"] == kind) for kind in KINDS}
    high = sum(1 for f in findings if f["severity"] == HIGH)
    if cache_dir is not None:
        import time

        from memcite.retention.audit_counts import keep_audit_counts

        kept = keep_audit_counts(cache_dir, home.locations, counts, memories=len(home.memories),
                                 high=high, at=int(time.time()) if now is None else now)
        if kept is not None:  # the audit stands; only stats will not show it
            problems.append(kept)
    return {"codex_home": codex_home, "memory_folder": home.locations.memory_folder,
            "project": project, "threshold": threshold, "memories": len(home.memories),
            "with_session": sum(1 for m in home.memories.values() if m.session_path),
            "folder_lines": sum(1 for _n, _l, text in home.folder_lines if text.strip()),
            "folder_lines_traced": traced_lines, "counts": counts, "high": high,
            "projects": None if project else _project_table(home, findings),
            "findings": findings, "problems": [shown(p, 500) for p in problems[:100]],
            "problem_count": len(problems)}


def _project_table(home: MemoryHome, findings: list[dict]) -> list[dict]:
    rows: dict[str, dict] = {}
    for memory in home.memories.values():
        row = rows.setdefault(memory.cwd or "", {"project": memory.cwd, "memories": 0,
                                                 **{kind: 0 for kind in KINDS}})
        row["memories"] += 1
    for found in findings:
        row = rows.setdefault(found["project"] or "", {"project": found["project"], "memories": 0,
                                                       **{kind: 0 for kind in KINDS}})
        row[found["kind"]] += 1
    return sorted(rows.values(), key=lambda row: (-row["memories"], row["project"] or ""))


def audit_counts(codex_home: str, **options) -> dict:
    """The audit's counts alone (for ``stats``, ``report`` and ``doctor``)."""
    report = audit_home(codex_home, **options)
    return {"memories": report["memories"], "high": report["high"], **report["counts"]}
