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
  (``memcite.audit.provenance``) to tell where each sentence's words first appear.

Each sentence gives findings: ``directive`` (``memcite.judgement.directives``), ``taint`` (its
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
import zlib
from dataclasses import dataclass, field
from functools import lru_cache, partial

from memcite.audit import provenance
from memcite.audit.verdict_cache import (
    MemoryText,
    VerdictCache,
    finding_of,
    key_of,
    row_of,
)
from memcite.citations.thread_ids import normalize_thread_id
from memcite.display import count
from memcite.errors import MemciteError
from memcite.judgement import origin as og  # light, and provenance imports it anyway
from memcite.ledger import session_scan as scan
from memcite.ledger.codex_home import (
    RAW_MEMORIES,
    ROLLOUT_SUMMARIES,
    CodexHomeError,
    CodexLocations,
    locate_codex_home,
    open_codex_db,
    state_database,
)
from memcite.ledger.memory_files import OUTSIDE, MemoryRoot, read_capped
from memcite.untrusted import storable

TYPE_CHECKING = False  # ``typing`` is for type checkers only: importing it costs start-up
if TYPE_CHECKING:
    from memcite.judgement.effects import ProjectFacts
    from memcite.judgement.severity import Judgement

MAX_MEMORY_FILE_BYTES = 4 * 1024 * 1024  # one memory file read at most this much
MAX_EXCERPT = 200
HEADER_BYTES = 64 * 1024  # a rollout summary's header is read from this much of its start
HIGH, MEDIUM, LOW = "high", "medium", "low"
SEVERITY = {"poisoned": HIGH, "secret": HIGH, "cross-project": MEDIUM, "taint": LOW,
            "directive": LOW}
# What the secret scan finds that is personal, not a credential: an address or a number shows
# who, and is masked like a secret, but gives no access: medium, not high.
PERSONAL_DATA = frozenset({"email", "phone"})
# A session id on a line naming a server on this machine (an MCP server on 127.0.0.1 answers
# ``Mcp-Session-Id: ...``): it ends with the server's run. Masked like any secret; medium.
_LOOPBACK = re.compile(r"\blocalhost\b|(?<![\d.])127(?:\.\d{1,3}){3}(?![\d.])|\[::1\]")
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
    session_stamp: list | None = None  # its session file's size and modification time
    git_origin: str | None = None  # the thread's git_origin_url, from Codex's threads table
    stage1_digest: str | None = None  # a hash of its stage1_outputs text columns
    summary_stamps: list = field(default_factory=list)  # each summary file's stamp, or None


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
    stamp: str | None = None  # what was read, stamped before reading it (``stamped``)
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
    return decode_said(result.data, inside, problems, cut=result.too_large) \
        if result.data is not None else None


def decode_said(data: bytes, name: str, problems: list[str], *, cut: bool = False) -> str:
    """``data`` as UTF-8, each invalid byte sequence read as U+FFFD and said once in
    ``problems`` (never a file skipped whole); ``cut``: a character cut at the end is no error."""
    import codecs

    text = codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=not cut)
    bad = text.count("\ufffd") - data.count("\ufffd".encode())
    if bad > 0:
        said = (f"{name}: not valid UTF-8 in {count(bad, 'place')}; read with U+FFFD "
                "in their place")
        if said not in problems:
            problems.append(said)
    return text


def _memory(memories: dict[str, Memory], thread_id: str) -> Memory:
    found = memories.get(thread_id)
    if found is None:
        found = memories[thread_id] = Memory(thread_id)
    return found


def _digest_of(values) -> str:
    """A short hash of a row's text columns (None and text told apart)."""
    import hashlib

    digest = hashlib.blake2b(digest_size=16)
    for value in values:
        digest.update(b"\x01" if value is None else
                      b"\x02" + str(value).encode("utf-8", "surrogatepass") + b"\x00")
    return digest.hexdigest()


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
        picked = "".join(f", substr({name}, 1, {MAX_MEMORY_FILE_BYTES})" for name in texts)
        bad = 0
        for key, *values in conn.execute(f"SELECT thread_id{picked} FROM stage1_outputs"):
            thread_id = normalize_thread_id(str(key or "").strip()) if isinstance(key, str) else None
            if thread_id is None:
                bad += 1
                continue
            memory = _memory(memories, thread_id)
            memory.places.append("stage1_outputs")
            memory.stage1_key = key
            memory.stage1_digest = _digest_of(values)  # what its text is, without keeping it
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


RACY_NS = 2_000_000_000  # a file changed this close to its reading is not stamped: read again


def file_stamp(info: os.stat_result, now_ns: int) -> list | None:
    """A file's stamp as read (device, inode, size, mtime and ctime; a write changes the
    ctime, which no program sets back); None for one changed too recently to be sure that
    a write in the same clock tick would show (git's "racily clean" files)."""
    if max(info.st_mtime_ns, info.st_ctime_ns) > now_ns - RACY_NS:
        return None
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def _read_summaries(root: MemoryRoot, folder: str, memories: dict[str, Memory],
                    problems: list[str], known: dict | None = None,
                    seen: dict | None = None) -> dict[str, str]:
    """Each rollout summary read into its memory; the file names -> thread ids. ``known``:
    the headers an earlier audit read (file name -> ``[stamp, thread id, cwd]``), used for a
    file whose stamp is unchanged instead of reading it; ``seen`` gets this read's."""
    import time

    names: dict[str, str] = {}
    directory = os.path.join(folder, ROLLOUT_SUMMARIES)
    try:
        stampable = not os.path.islink(directory)
        listed = sorted((entry for entry in os.scandir(directory) if entry.name.endswith(".md")),
                        key=lambda entry: entry.name)
    except OSError:
        return names
    now_ns = time.time_ns()
    known = known or {}
    for entry in listed:
        name = entry.name
        inside = f"{ROLLOUT_SUMMARIES}/{name}"
        stamp = None
        try:
            if stampable and not entry.is_symlink():
                stamp = file_stamp(entry.stat(follow_symlinks=False), now_ns)
        except OSError:
            stamp = None
        header = known.get(name)
        if stamp is not None and isinstance(header, list) and len(header) == 3 \
                and header[0] == stamp and isinstance(header[1], str) \
                and isinstance(header[2], (str, type(None))):
            thread_id, cwd = header[1], header[2]
        else:
            header = None
            before = len(problems)
            text = _read_in_folder(root, inside, problems, limit=HEADER_BYTES)
            if text is None:
                continue
            fields, _body_at = _split_header(text)
            thread_id = normalize_thread_id(fields.get("thread_id", "").strip())
            if thread_id is None:
                problems.append(f"{inside}: no thread_id: header; not audited")
                continue
            cwd = storable(fields["cwd"]) if fields.get("cwd") else None
            if len(problems) > before:  # said again at every audit
                stamp = None
        if seen is not None and stamp is not None:
            seen[name] = header or [stamp, thread_id, cwd]  # (as it was read, when it was)
        names[name] = thread_id
        memory = _memory(memories, thread_id)
        memory.places.append(inside)
        memory.summary_file = memory.summary_file or name
        memory.cwd = memory.cwd or cwd
        memory.summaries.append(inside)
        memory.summary_stamps.append(stamp)
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
        wanted = [name if name in columns else "NULL"
                  for name in ("cwd", "source", "created_at", "git_origin_url")]
        for row in conn.execute(f"SELECT id, {', '.join(wanted)} FROM threads"):
            memory = memories.get(row[0])  # an id as memories spell them (normalized) at once
            if memory is None:
                memory = memories.get(normalize_thread_id(str(row[0] or "")) or "")
            if memory is None:
                continue
            cwd, source, created, origin = row[1:]
            if isinstance(origin, str) and origin.strip():
                memory.git_origin = storable(origin.strip())
            if isinstance(cwd, str) and cwd:
                memory.cwd = memory.cwd or storable(cwd)
            memory.source = scan.source_kind(source) if source is not None else None
            if isinstance(created, int):
                memory.created_at = created // 1000 if created > 10**11 else created
    except sqlite3.Error as exc:
        problems.append(f"{path}: cannot read threads ({exc})")
    finally:
        conn.close()


def _session_files(codex_home: str) -> dict[str, tuple[str, list]]:
    """Thread id -> its session file (the plain one preferred to a reverted thread's) and
    the file's stamp (size and modification time) as the listing found it."""
    found: dict[str, tuple] = {}
    for path, info, archived in scan.iter_session_files(codex_home):
        name = os.path.basename(path)
        thread_id = scan.rollout_thread_id(name)
        if thread_id is None:
            continue
        variant = "_" in name.rsplit(thread_id, 1)[-1].split(".", 1)[0]
        rank = (variant, archived, -info.st_mtime_ns)
        if thread_id not in found or rank < found[thread_id][0]:
            found[thread_id] = (rank, path, info)
    return {thread_id: (path, [info.st_size, info.st_mtime_ns])
            for thread_id, (_rank, path, info) in found.items()}


def read_memory_home(codex_home: str, *, env_sqlite_home: str | None = None,
                     cwd: str | None = None, kept: VerdictCache | None = None,
                     stamped: bool = False) -> MemoryHome:
    """Every memory of ``codex_home`` with its text, the folder's summary lines, the sessions;
    ``kept``: an earlier audit's verdicts, whose summary headers stand for unchanged files;
    ``stamped``: the home's ``folder_stamp`` taken before anything is read (``stamp``), so
    that a write while it is read leaves what is kept of it stale, never current."""
    locations = locate_codex_home(codex_home, env_sqlite_home=env_sqlite_home, cwd=cwd)
    stamp = None
    if stamped:
        from memcite.retention.audit_counts import folder_stamp

        stamp = folder_stamp(locations)
    memories: dict[str, Memory] = {}
    problems: list[str] = []
    texts: tuple[str, ...] = ()
    if os.path.isfile(locations.state_db):
        texts = _read_stage1(locations.state_db, memories, problems)
    folder_lines: list[tuple[str, int, str]] = []
    folder = locations.memory_folder
    if os.path.isdir(folder):
        with MemoryRoot(folder) as root:
            summary_names = _read_summaries(root, folder, memories, problems,
                                            known=kept.old_headers if kept else None,
                                            seen=kept.headers if kept else None)
            _read_raw_memories(root, memories, problems)
            for name in (*FOLDER_FILES, *_read_too(folder)):
                text = _read_in_folder(root, name, problems)
                if text and "\x00" not in text:  # a skill's image is no text
                    folder_lines.extend((name, number, line)
                                        for number, line in enumerate(text.splitlines(), start=1))
    else:
        summary_names = {}
    _read_threads(locations.sqlite_home, memories, problems)
    sessions = _session_files(locations.codex_home)
    for memory in memories.values():
        memory.session_path, memory.session_stamp = sessions.get(memory.thread_id, (None, None))
    return MemoryHome(locations, memories, folder_lines,
                      {thread_id: path for thread_id, (path, _stamp) in sessions.items()},
                      problems, summary_names, texts, stamp)


AD_HOC_NOTES = "extensions/ad_hoc/notes"
SKILLS = "skills"
MAX_READ_TOO = 2000  # at most this many notes and skill files


def _read_too(folder: str) -> list[str]:
    """What the next consolidation or session also reads, beside ``FOLDER_FILES``: the ad-hoc
    notes (``extensions/ad_hoc/notes/*``) and every skill file (``skills/**``), as paths in
    the folder (hidden names and symlinks left out; ``_read_in_folder`` reads them safely)."""
    found: list[str] = []
    for inside, recurse in ((AD_HOC_NOTES, False), (SKILLS, True)):
        top = os.path.join(folder, *inside.split("/"))
        for base, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if recurse and not d.startswith(".")
                             and not os.path.islink(os.path.join(base, d)))
            rel = os.path.relpath(base, folder).replace(os.sep, "/")
            found.extend(f"{rel}/{name}" for name in sorted(files) if not name.startswith(".")
                         and os.path.isfile(os.path.join(base, name))
                         and not os.path.islink(os.path.join(base, name)))
            if len(found) >= MAX_READ_TOO:
                return found[:MAX_READ_TOO]
    return found


# --------------------------------------------------------------------------- folder lines


def grams_of(text: str) -> set[int]:
    """The hashes of the word pairs of ``text`` (its one word, alone): what a folder line and
    a memory are compared by, kept between audits without keeping the words."""
    words = provenance.words_of(text)
    if len(words) == 1:
        return {zlib.crc32(words[0].encode("utf-8", "surrogatepass"))}
    return {zlib.crc32(f"{first} {second}".encode("utf-8", "surrogatepass"))
            for first, second in zip(words, words[1:], strict=False)}


def masked_line(text: str, codex_home: str = "") -> tuple[str | None, str]:
    """A folder line's secret (the kind of the first found, or None) and the line with every
    secret masked."""
    report, masked = _memory_secrets(None, [("", text)], codex_home)
    return (report[0]["rule"] if report else None), masked[0][1]


def kept_masked_line(text: str, kept: VerdictCache | None, codex_home: str, *,
                     keep: bool = False) -> tuple[str | None, str]:
    """``masked_line``, as an earlier audit kept it when it did; ``keep``: kept for the next
    (the audit alone writes its cache)."""
    line_key = key_of("line-secrets", text)
    cached = kept.get(line_key, _valid_mask) if kept is not None else None
    if cached is not None:
        return cached[0], cached[1]
    found = masked_line(text, codex_home)
    if keep and kept is not None:
        kept.put(line_key, [found[0], found[1]])
    return found


def _valid_mask(kept: list) -> bool:
    """A line's secret as kept: ``[kind or None, masked text]``."""
    return len(kept) == 2 and (kept[0] is None or type(kept[0]) is str) and type(kept[1]) is str


def _blocks(lines: list[tuple[str, int, str]], heads: tuple[str, ...] = ("# ", "## ")
            ) -> dict[tuple[str, int], list[str]]:
    """For each folder line, the text of its block (a section of its file that starts at a
    heading of ``heads``: ``# ``/``## ``, or ``# `` alone for a whole task group)."""
    out: dict[tuple[str, int], list[str]] = {}
    block: list[str] = []
    members: list[tuple[str, int]] = []
    current = None
    for name, number, text in lines + [("", 0, "# end")]:
        if name != current or text.startswith(heads):
            for key in members:
                out[key] = block
            block, members, current = [], [], name
        block.append(text)
        members.append((name, number))
    return out


# ``applies_to: cwd=<path>; reuse_rule=<text>``: the path runs to the ``;`` (spaces, a
# Windows path and its ``\\?\`` prefix included)
_APPLIES_TO = re.compile(r"^\s*applies_to:\s*cwd=\s*([^;]*?)\s*(?:;|$)")


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
        if found and cwd is None and found.group(1).strip("`'\" "):
            cwd = storable(found.group(1).strip("`'\" "))
        group.append((name, number))
    close()
    return out


class FolderAttribution:
    """``attribute_folder_lines`` in steps, so that the audit reads each memory's text once:
    made from the folder's lines (compared with their secrets masked: ``mask``, a line ->
    its masked text), fed each memory's masked word pairs (``feed``), then ``result()``."""

    def __init__(self, home: MemoryHome, threshold: float = provenance.DEFAULT_THRESHOLD,
                 mask=lambda text: masked_line(text)[1]) -> None:
        self.home, self.threshold = home, threshold
        self.out: dict[tuple[str, int], tuple[list[str], str]] = {}
        self.unmatched: list[tuple[tuple[str, int], set]] = []
        self.texts: dict[tuple[str, int], str] = {}  # an unmatched line's masked text
        # an unmatched line -> the memory holding at least ``threshold`` of its pairs (the
        # most, of equals the first id) and how many, or (None, 0): what ``result`` found
        self.placings: dict[tuple[str, int], tuple[str | None, int]] = {}
        for name, number, text in home.folder_lines:
            if not provenance.words_of(text) or text.startswith("#") or text.strip() == "v1" \
                    or _APPLIES_TO.match(text):
                continue
            ids = self.named([text])
            if ids:
                self.out[(name, number)] = (ids, "named")
            else:
                masked = mask(text)
                self.unmatched.append(((name, number), grams_of(masked)))
                self.texts[(name, number)] = masked
        self.wanted = set().union(*(grams for _key, grams in self.unmatched))
        self.held_by: dict[str, set] = {}  # a memory -> the wanted pairs it holds

    def named(self, texts) -> list[str]:
        known, names = self.home.memories, self.home.summary_names
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

    def feed(self, thread_id: str, grams) -> None:
        """One memory's word pairs (``grams_of`` its masked lines)."""
        if not self.wanted:
            return
        held = self.wanted.intersection(grams)
        if held:
            self.held_by[thread_id] = held

    def result(self, before=None, changed: set | None = None
               ) -> dict[tuple[str, int], tuple[list[str], str]]:
        """Each line traced. ``before``: a line's masked text -> its placing by an earlier
        audit (``placings``), or None; ``changed``: the memories whose text differs from that
        audit's, or that are new. A line placed before on a memory still here that did not
        change is compared with the changed memories alone; any other is placed anew."""
        out, held_by, threshold = self.out, self.held_by, self.threshold
        blocks = _blocks(self.home.folder_lines)
        groups = _blocks([line for line in self.home.folder_lines if line[0] == "MEMORY.md"], ("# ",))
        by_block: dict[int, list[str]] = {}
        lines = []  # each unmatched line, its pairs and its placing before (None: placed anew)
        for key, grams in self.unmatched:
            placed = before(self.texts[key]) if before is not None and changed is not None else None
            if placed is not None and (placed[0] in changed or not (
                    placed[0] is None or placed[0] in self.home.memories)):
                placed = None  # (a memory gone, or one the cache names wrongly: placed anew)
            lines.append((key, grams, placed))
        # the memories holding each pair of a line placed anew
        searched = set().union(*(grams for _key, grams, placed in lines if placed is None))
        postings: dict[int, list[str]] = {}
        for thread_id, held in held_by.items() if searched else ():
            for gram in held.intersection(searched):
                postings.setdefault(gram, []).append(thread_id)
        for key, grams, placed in lines:
            if placed is not None:
                # unchanged memories hold what they held: only a changed one can do better
                candidates = [thread_id for thread_id in changed if thread_id in held_by]
                if placed[0] is not None:
                    candidates.append(placed[0])
            else:
                # A memory holding ``threshold`` of the line's pairs holds at least one of any
                # ``n - ceil(threshold * n) + 1`` of them: its candidates are the memories
                # holding one of that many of the rarest pairs; each is then counted exactly.
                ranked = sorted(grams, key=lambda gram: len(postings.get(gram, ())))
                needed = len(grams) - math.ceil(threshold * len(grams) - 1e-9) + 1
                candidates = {thread_id for gram in ranked[:max(needed, 1)]
                              for thread_id in postings.get(gram, ())}
            best = min(((-len(grams & held_by.get(thread_id, frozenset())), thread_id)
                        for thread_id in candidates),
                       default=None)  # the most pairs held; of equals, the first id
            if grams and best and -best[0] / len(grams) >= threshold:
                self.placings[key] = (best[1], -best[0])
                out[key] = ([best[1]], "text")
                continue
            self.placings[key] = (None, 0)
            # MEMORY.md's task groups name their sources ("Source: rollout <id>", a
            # ``### rollout_summary_files`` list): the line's ``##`` section, else its whole task
            # group under any subheading, is the last resort (the injected summary: never used).
            # The ids a block names are read once per block, not once per line (linear).
            ids: list[str] = []
            if key[0] == "MEMORY.md":
                for block in (blocks.get(key, []), groups.get(key, [])):
                    ids = by_block.get(id(block))
                    if ids is None:
                        ids = by_block[id(block)] = self.named(block)
                    if ids:
                        break
            out[key] = (ids, "block") if ids else ([], "none")
        return out


def attribute_folder_lines(home: MemoryHome, *, threshold: float = provenance.DEFAULT_THRESHOLD,
                           kept: VerdictCache | None = None
                           ) -> dict[tuple[str, int], tuple[list[str], str]]:
    """Each folder line -> ``(thread ids, how)``: ``named`` (ids or summary files on the line),
    ``text`` (the memory whose text holds at least ``threshold`` of its word pairs), ``block``
    (for ``MEMORY.md``: the ids its task group names), or ``([], "none")``. ``kept``: the last
    audit's cache, whose word pairs of an unchanged memory are used instead of reading it
    (only read: what the audit keeps, it alone writes)."""
    codex_home = home.locations.codex_home
    attribution = FolderAttribution(
        home, threshold, mask=lambda text: kept_masked_line(text, kept, codex_home)[1])
    if attribution.unmatched:
        facts_of = _FactsOf()
        for thread_id, memory in home.memories.items():
            read = kept.text(thread_id, memory_key(memory, threshold, facts_of(memory.cwd)[1])
                             ) if kept is not None else None
            if read is not None:
                attribution.feed(thread_id, read.grams)
                continue
            lines = _memory_secrets(memory, home.lines_of(memory), codex_home)[1]
            attribution.feed(thread_id, memory_grams(lines))
    return attribution.result()


def memory_grams(masked_lines: list[tuple[str, str]]) -> set[int]:
    """A memory's word pairs (``grams_of``), line by line, from its masked lines."""
    grams: set[int] = set()
    for _where, text in masked_lines:
        grams |= grams_of(text)
    return grams


# --------------------------------------------------------------------------- findings


def fix_for(thread_id: str, codex_home: str) -> str:
    """What to do about a memory: the way to forget it, or to restore the folder."""
    return (f"forget it with an ad-hoc note asking Codex's consolidation to drop thread "
            f"{thread_id} (the way `memcite prune --apply` asks; `memcite restore {thread_id}` "
            f"undoes it), or restore the memory folder from before it (its git history: "
            f"`git -C {os.path.join(codex_home, 'memories')} log`)")


def _in_project(cwd: str | None, project: str) -> bool:
    """Whether ``cwd`` is ``project`` or inside it, compared as ``memcite.ledger.cwd_match``
    spells them (the Windows prefix \\\\?\\, separators and case aside)."""
    from memcite.ledger.cwd_match import inside

    if not cwd:
        return True  # unknown: never claimed to be another project's
    return inside(cwd, project)


def _project_origin(project: str | None) -> str | None:
    """The project's git remote ``origin``, as ``repository_key`` spells it: a memory of a
    thread whose ``git_origin_url`` (Codex's ``threads`` table) is the same repository is
    the project's, wherever its clone or worktree was."""
    from memcite.ledger.cwd_match import git_origin, repository_key

    return repository_key(git_origin(project)) if project and os.path.isdir(project) else None


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

    def __init__(self, problems: list[str], tracked_of=None) -> None:
        self._read: dict[str, provenance.SegmentIndex | None] = {}
        self.problems = problems
        self.tracked_of = tracked_of  # cwd -> TrackedFiles | None (``_FactsOf.tracked``)

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
            files = self.tracked_of(read.cwd) if self.tracked_of and read.cwd else None
            self._read[path] = provenance.SegmentIndex(
                read.segments, read.cwd, partial(files.tracked, cwd=read.cwd) if files else None)
        return self._read[path]


# A summary's attribution before the words it quotes: "Per the issue: ...", "The page says: ...".
_ATTRIBUTED = re.compile(r"^\W{0,4}(?:per\s+[^:\n]{1,60}|[^:\n]{1,60}\b(?:says|said|notes|states|reads|"
                         r"writes|asks|result)):\s+(.+)$", re.IGNORECASE | re.DOTALL)


@lru_cache(maxsize=1)
def _rules() -> tuple:
    """The judgement's rules (``memcite.judgement``), imported the first time a sentence is
    judged: a re-audit whose verdicts are all kept never loads their hundred regular
    expressions (most of its start-up)."""
    from memcite.judgement import severity
    from memcite.judgement.directives import find_directives
    from memcite.judgement.effects import NO_FACTS
    from memcite.judgement.normalize import for_judging

    return severity, find_directives, for_judging, NO_FACTS


def analyse_sentence(sentence: str, index: provenance.SegmentIndex | None, *,
                     threshold: float = provenance.DEFAULT_THRESHOLD, folded: str | None = None
                     ) -> tuple[list, provenance.Origin | None]:
    """``(directive matches, origin)`` of one sentence of a memory (judged folded:
    ``memcite.judgement.normalize.for_judging``; ``folded``: the caller's fold of it)."""
    severity, find_directives, for_judging, _no_facts = _rules()
    folded = for_judging(sentence) if folded is None else folded
    directives = find_directives(folded)
    origin = provenance.origin_of(folded, index, threshold=threshold) if index else None
    said = _ATTRIBUTED.match(folded) if origin is None and index is not None else None
    if said and len(said.group(1).split()) >= 3:  # "Per the issue: <its words>": place the words
        origin = provenance.origin_of(said.group(1), index, threshold=threshold)
    if origin is None and index is not None and (directives or severity.worth_placing(folded)):
        # cut to its content words (a terse note), or reworded: where its content words'
        # pairs, else its URL, path, command or address, first appear
        origin = provenance.loose_origin(folded, index, threshold=threshold) \
            or provenance.anchor_origin(folded, index)
    return directives, origin


def judge_sentence(sentence: str, index: provenance.SegmentIndex | None, *,
                   threshold: float = provenance.DEFAULT_THRESHOLD,
                   facts: ProjectFacts | None = None
                   ) -> tuple[list, provenance.Origin | None, Judgement]:
    """``(directive matches, origin, judgement)`` of one sentence: its origin where its words
    are placed, else the lowest trust its source thread read (``memcite.judgement``)."""
    severity, _find_directives, for_judging, no_facts = _rules()
    folded = for_judging(sentence)
    directives, origin = analyse_sentence(sentence, index, threshold=threshold, folded=folded)
    if origin is not None:
        trust, placed = index.origin_class(origin.segment), severity.PLACED
    elif index is not None:
        trust, placed = index.lowest, severity.INHERITED
    else:
        trust, placed = None, None
    verdict = severity.judge(sentence, instruction=bool(directives), origin=trust, placed=placed,
                             facts=facts or no_facts, folded=folded,
                             unrecorded=placed == severity.INHERITED
                             and index.unrecorded(folded))
    return directives, origin, verdict


def _finding(kind: str, memory: Memory | None, where: str, text: str, *, rule: str | None,
             origin: provenance.Origin | None, codex_home: str, message: str,
             level: str | None = None, verdict: Judgement | None = None) -> dict:
    thread_id = memory.thread_id if memory else None
    row = [kind, level or SEVERITY[kind], thread_id, where, rule, shown(text), origin_dict(origin),
           message, [where], [thread_id] if memory else [], bool(verdict and verdict.certain),
           verdict.as_dict() if verdict is not None else None]
    return finding_of(row, *_of_memory(memory, where, codex_home))


def _of_memory(memory: Memory | None, where: str, codex_home: str) -> tuple:
    """What a finding says of its memory: its project, source, session and the way to forget
    it (or to fix the line, of none); told by the memory as it is now, never kept with a
    verdict (``of_memory``)."""
    if memory is None:
        return (None, None, None,
                f"edit {where.split(':')[0]} by hand or let Codex's next consolidation rewrite it")
    return memory.cwd, memory.source, memory.session_path, fix_for(memory.thread_id, codex_home)


def of_memory(rows: list[list], memory: Memory | None, codex_home: str) -> list[dict]:
    """Kept findings (rows: ``verdict_cache.row_of``) with what they say of their memory
    filled in as the memory is now."""
    if not rows:
        return []
    if memory is None:
        return [finding_of(row, *_of_memory(None, row[3], codex_home)) for row in rows]
    told = _of_memory(memory, "", codex_home)
    return [finding_of(row, *told) for row in rows]


_FENCE = re.compile(r"^\s*(?:[-*]\s+)?(```|~~~)")
MAX_JOINED_CHARS = 4000


def with_code_blocks(lines: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A memory's lines for judging: a line that asks to run or paste code
    (``memcite.judgement.effects.asks_for_code``) followed in its file by a fenced code
    block is judged with the block joined to it (the block capped, the line whole); every
    other line as it is."""
    from memcite.judgement.effects import asks_for_code

    out = []
    fence, file = None, None  # the marker of the fenced block open in that file
    for number, (where, text) in enumerate(lines):
        place = where.rpartition(":")[0]
        if place != file:
            fence, file = None, place
        marker = _FENCE.match(text)
        if marker:
            kind = marker.group(1)
            fence = kind if fence is None else (None if kind == fence else fence)
            out.append((where, text))
            continue
        after = lines[number + 1:number + 2]
        if fence is None and after and _FENCE.match(after[0][1]) \
                and after[0][0].rpartition(":")[0] == place and asks_for_code(text):
            opening = _FENCE.match(after[0][1]).group(1)
            block: list[str] = []
            size = 0
            for other, line in lines[number + 1:]:
                if other.rpartition(":")[0] != place or size > MAX_JOINED_CHARS:
                    break
                block.append(line.strip())
                size += len(line) + 1
                closing = _FENCE.match(line)
                if len(block) > 1 and closing and closing.group(1) == opening:
                    break
            text = text + " " + " ".join(block)[:MAX_JOINED_CHARS]
        out.append((where, text))
    return out


def _sentence_findings(memory: Memory | None, where: str, line: str,
                       index: provenance.SegmentIndex | None, *, codex_home: str,
                       threshold: float, seen: set, facts: ProjectFacts | None = None) -> list[dict]:
    out = []
    if line.lstrip().startswith("#"):  # a heading: no sentence (its secrets are scanned)
        return out
    for _start, _end, sentence in provenance.split_sentences(line):
        key = (memory.thread_id if memory else where, sentence.strip().lower())
        if key in seen:  # the same sentence in another place of the memory: said once
            continue
        seen.add(key)
        directives, origin, verdict = judge_sentence(sentence, index, threshold=threshold,
                                                     facts=facts)
        rule = directives[0].rule if directives else (
            verdict.markers[0].kind if verdict.markers else None)
        if verdict.severity == HIGH:
            out.append(_finding("poisoned", memory, where, sentence, rule=rule, origin=origin,
                                codex_home=codex_home, level=HIGH, verdict=verdict,
                                message=f"an instruction to the agent: {verdict.why}"))
            continue
        if verdict.severity is not None:
            out.append(_finding("directive", memory, where, sentence, rule=rule, origin=origin,
                                codex_home=codex_home, level=verdict.severity, verdict=verdict,
                                message=f"an instruction ({rule}): {verdict.why}"))
            continue
        if origin is not None and origin.segment.tainted and not directives and \
                index.origin_class(origin.segment) == og.THIRD_PARTY:
            what = (f"{origin.segment.kind} output of {origin.segment.tool or 'a tool'}"
                    f" (call {origin.segment.call_id or '?'}, session line {origin.segment.line})")
            out.append(_finding("taint", memory, where, sentence, rule=None, origin=origin,
                                codex_home=codex_home,
                                message=f"words from the {what} rather than from the user"))
    return out


def _secret_finding(memory: Memory | None, where: str, masked: str, kind: str,
                    codex_home: str) -> dict:
    local = kind == "session-id" and _LOOPBACK.search(masked) is not None
    return _finding("secret", memory, where, masked, rule=kind, origin=None, codex_home=codex_home,
                    message=f"personal data ({kind}) in memory text" if kind in PERSONAL_DATA
                    else "a session id of a server on this machine in memory text" if local
                    else f"a secret ({kind}) in memory text",
                    level=MEDIUM if kind in PERSONAL_DATA or local else None)


def _valid_placing(kept: list) -> bool:
    """A line's placing as kept (``FolderAttribution.placings``): ``[thread id or None, held]``."""
    return len(kept) == 2 and (kept[0] is None or type(kept[0]) is str) and type(kept[1]) is int


def memory_key(memory: Memory, threshold: float, facts_key: str) -> str | None:
    """The key of a memory's findings, its text known without reading it: its stage1 row's
    hash, each summary file's stamp, its raw memory's lines; with its project, source,
    session file and stamp, the threshold and its project's facts (``_FactsOf``). None when
    a summary file could not be stamped (its text is read)."""
    if None in memory.summary_stamps:
        return None
    return key_of("memory", memory.thread_id, memory.stage1_digest, memory.summaries,
                  memory.summary_stamps, memory.raw_lines, memory.cwd, memory.source,
                  memory.session_path, memory.session_stamp, threshold, facts_key)


def _mask_spans(line: str, spans: list[tuple[str, int, int]]) -> str:
    out, at = [], 0
    for kind, start, end in sorted(spans, key=lambda span: span[1]):
        if start >= at:
            out.append(f"{line[at:start]}[REDACTED:{kind}]")
            at = end
    return "".join(out) + line[at:]


def _memory_secrets(memory: Memory | None, lines_of_memory, codex_home: str
                    ) -> tuple[list[dict], list[tuple[str, str]]]:
    """The secrets of a memory's text, scanned at once (a line held in several places once),
    and its lines with each secret masked by the span that found it, whichever line or
    lines it spans: what the audit shows of the memory from then on (``shown`` masks a
    line alone, and a secret found only in its context would be printed)."""
    from memcite.secrets import scan as scan_secrets

    unique: dict[str, str] = {}
    for where, line in lines_of_memory:
        unique.setdefault(line.replace("\n", " "), where)
    lines = list(unique)
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    out, spans = [], {}
    for found in scan_secrets("\n".join(lines), blocks=False):
        index = found.line - 1
        if not 0 <= index < len(lines):
            continue
        first = index not in spans
        while index < len(lines) and starts[index] < found.end:
            begin = max(found.start - starts[index], 0)
            end = min(found.end - starts[index], len(lines[index]))
            if end > begin:
                spans.setdefault(index, []).append((found.kind, begin, end))
            index += 1
        if first:
            out.append((found.line - 1, found.kind))
    masked = {lines[index]: _mask_spans(lines[index], found) for index, found in spans.items()}
    report = [_secret_finding(memory, unique[lines[index]], masked.get(lines[index], lines[index]),
                              kind, codex_home) for index, kind in out]
    return report, [(where, masked.get(line.replace("\n", " "), line))
                    for where, line in lines_of_memory]


def audit_home(codex_home: str, *, project: str | None = None, env_sqlite_home: str | None = None,
               cwd: str | None = None, threshold: float = provenance.DEFAULT_THRESHOLD,
               home: MemoryHome | None = None, cache_dir: str | None = None,
               now: int | None = None, _kept: VerdictCache | None = None) -> dict:
    """The audit of every memory of ``codex_home`` (``memcite audit --json``); with
    ``cache_dir``, its counts are kept there for ``stats`` and ``report``
    (``memcite.retention.audit_counts``), and its verdict on each memory and folder line
    (``memcite.audit.verdict_cache``): the next audit reads only the sessions of what changed."""
    if home is None:
        kept = VerdictCache(cache_dir, codex_home)
        # the counts kept for ``stats`` hold for the home as it was before it was read
        with read_memory_home(codex_home, env_sqlite_home=env_sqlite_home, cwd=cwd,
                              kept=kept, stamped=cache_dir is not None) as home:
            return audit_home(codex_home, project=project, threshold=threshold, home=home,
                              cache_dir=cache_dir, now=now, _kept=kept)
    codex_home = home.locations.codex_home
    from memcite.ledger.cwd_match import repository_key, windows_form

    project = (project if windows_form(project) else os.path.realpath(project)) if project else None
    origin = _project_origin(project)
    problems = home.problems
    facts_of = _FactsOf()
    sessions = SessionIndex(problems, facts_of.tracked)
    if _kept is None or os.path.realpath(_kept.codex_home) != os.path.realpath(codex_home):
        _kept = VerdictCache(cache_dir, codex_home)
    kept = _kept
    findings: list[dict] = []
    texts: dict[str, str] = {}
    stamps: dict[str, list | None] = {}
    masks: dict[str, tuple[str | None, str]] = {}
    placed_texts: dict[str, str] = {}

    def mask(text: str) -> tuple[str | None, str]:
        """A folder line's secret and masked text, kept between audits."""
        found = masks.get(text)
        if found is None:
            found = masks[text] = kept_masked_line(text, kept, codex_home, keep=True)
        return found

    attribution = FolderAttribution(home, threshold, mask=lambda text: mask(text)[1])
    for thread_id in sorted(home.memories):
        memory = home.memories[thread_id]
        facts, facts_key = facts_of(memory.cwd)
        stamps[thread_id] = stamp = memory.session_stamp
        before = len(problems)
        # all its findings (its secrets', its sentences') depend on its text and where each
        # line stands, its project, source, session file and the project's facts: kept under
        # a key of those, its text known by its files' stamps, else under one of its text read
        key = memory_key(memory, threshold, facts_key)
        old = kept.memory(thread_id, key=key) if key else None
        rows = old.rows() if old is not None else None
        if rows is None:  # its text is read: new, changed, a file not stamped, or judged anew
            raw_lines = home.lines_of(memory)
            placed = text_hash(raw_lines, placed=True)
            placed_key = key_of("placed", thread_id, placed, memory.cwd, memory.source,
                                memory.session_path, stamp, threshold, facts_key)
            old = kept.memory(thread_id, placed_key=placed_key)
            rows = old.rows() if old is not None else None
        if rows is None:  # judged anew: its text, its session, its project or the rules changed
            secrets, lines = _memory_secrets(memory, raw_lines, codex_home)  # masked
            read = MemoryText(text_hash(raw_lines), placed, frozenset(memory_grams(lines)),
                              lines[0][1] if lines else "")
        # a problem in its text is said again at every audit; a stage1 row that could not be
        # read (the database failed) is read again next time: not kept under its stamps
        if len(problems) != before or (memory.stage1_key is not None and not home.stage1_texts):
            key = None
        if rows is not None:  # unchanged: neither scanned nor judged again
            read = old.text
            secrets, found = of_memory(rows[0], memory, codex_home), \
                of_memory(rows[1], memory, codex_home)
            kept.keep_memory(thread_id, old, key)
        else:
            index = sessions.index(memory.session_path)
            found = []
            seen: set = set()  # a sentence in several places of one memory is said once
            for where, line in with_code_blocks(lines):  # masked: no secret reaches the cache
                found.extend(_sentence_findings(memory, where, line, index, codex_home=codex_home,
                                                threshold=threshold, seen=seen, facts=facts))
            kept.put_memory(thread_id, key, placed_key, read, [row_of(f) for f in secrets],
                            [row_of(f) for f in found])
        findings.extend(secrets)
        attribution.feed(thread_id, read.grams)
        texts[thread_id] = read.text
        placed_texts[thread_id] = read.placed
        if project and not _in_project(memory.cwd, project) \
                and not (origin and repository_key(memory.git_origin) == origin):
            findings.append(_finding("cross-project", memory, memory.places[0] if memory.places
                                     else thread_id, read.first,
                                     rule=None, origin=None, codex_home=codex_home,
                                     message=f"a memory of {memory.cwd}, not of {project}"))
        findings.extend(found)
    changed = {thread_id for thread_id, placed in placed_texts.items()
               if kept.old_placed(thread_id) != placed}
    placing_key = partial(key_of, "placing", threshold)
    attributed = attribution.result(before=lambda text: kept.get(placing_key(text),
                                                                 _valid_placing),
                                    changed=changed)
    for key, (thread_id, held) in attribution.placings.items():
        kept.put(placing_key(attribution.texts[key]), [thread_id, held])
    applies = applies_to(home.folder_lines)
    traced_lines = 0
    for name, number, text in home.folder_lines:
        key = (name, number)
        if key not in attributed:
            continue
        ids, _how = attributed[key]
        where = f"{name}:{number}"
        memory = home.memories.get(ids[0]) if ids else None
        traced_lines += bool(ids) and name in FOLDER_FILES
        before = len(findings)
        facts, facts_key = facts_of(memory.cwd if memory else applies.get(key))
        verdict_key = key_of("line", name, text, ids[:1], memory.cwd if memory else None,
                             memory.source if memory else None,
                             memory.session_path if memory else None,
                             stamps.get(ids[0]) if ids else None, threshold, facts_key)
        kind, text = mask(text)  # masked from here on
        if kind is not None:
            findings.append(_secret_finding(memory, where, text, kind, codex_home))
        rows = kept.get(verdict_key)
        if rows is not None:
            found = of_memory(rows, memory, codex_home)
        else:
            index = sessions.index(memory.session_path) if memory else None
            found = _sentence_findings(memory, where, text, index, codex_home=codex_home,
                                       threshold=threshold, seen=set(), facts=facts)
            kept.put(verdict_key, [row_of(f) for f in found])
        for item in found:  # the same line may have moved
            item["where"], item["places"] = where, [where]
        findings.extend(found)
        # a task group's line is of the project the group applies to (as Codex wrote it),
        # whichever memory it was traced to; a line of no task group, its memory's
        line_project = applies.get(key) or (memory.cwd if memory else None)
        for found in findings[before:]:
            found["project"] = found["project"] or line_project
        if project and line_project and not _in_project(line_project, project):
            whose = (f"a task group that applies to {line_project}" if applies.get(key) else
                     f"a memory of {line_project}")
            found = _finding("cross-project", memory, where, text, rule=None, origin=None,
                             codex_home=codex_home,
                             message=f"a line of {name} from {whose}, not of {project}")
            found["project"] = line_project
            findings.append(found)
    findings = merge_places(findings)
    findings.sort(key=lambda f: (KINDS.index(f["kind"]), f["memory"] or "", f["where"]))
    counts = {kind: sum(1 for f in findings if f["kind"] == kind) for kind in KINDS}
    high = sum(1 for f in findings if f["severity"] == HIGH)
    if cache_dir is not None:
        import time

        from memcite.retention.audit_counts import keep_audit_counts

        try:
            kept.save()
        except (OSError, MemciteError) as exc:  # the audit stands; the next reads all again
            problems.append(f"{cache_dir}: the audit's verdicts were not kept ({exc.strerror or exc})")
        not_kept = keep_audit_counts(cache_dir, home.locations, counts, memories=len(home.memories),
                                     high=high, at=int(time.time()) if now is None else now,
                                     stamp=home.stamp)
        if not_kept is not None:  # the audit stands; only stats will not show it
            problems.append(not_kept)
    return {"codex_home": codex_home, "memory_folder": home.locations.memory_folder,
            "project": project, "threshold": threshold, "memories": len(home.memories),
            "with_session": sum(1 for m in home.memories.values() if m.session_path),
            "folder_lines": sum(1 for name, _l, text in home.folder_lines
                                if text.strip() and name in FOLDER_FILES),
            "folder_lines_traced": traced_lines, "counts": counts, "high": high,
            "projects": None if project else _project_table(home, findings),
            "findings": findings, "problems": [shown(p, 500) for p in problems[:100]],
            "memory_texts": {thread: texts[thread] for f in findings if f["kind"] == "poisoned"
                             for thread in f.get("memories", ()) if thread in texts},
            "problem_count": len(problems)}


class _FactsOf:
    """Each project's facts (``memcite.audit.project_facts``) and tracked files
    (``memcite.audit.git_index``), read once per folder, with a key for the verdicts they
    decided. A project that is not on this machine has none (None: the judgement's
    ``NO_FACTS``), told without loading the rules."""

    NONE_KEY = key_of([], [], False, None)  # the key of no facts and no tracked files

    def __init__(self) -> None:
        from memcite.audit.git_index import tracked_files

        self._read: dict[str | None, tuple[ProjectFacts | None, str]] = {}
        # cwd -> the files its project tracks (``TrackedFiles``) or None, each index read once
        self.tracked = lru_cache(maxsize=None)(tracked_files)

    def __call__(self, cwd: str | None) -> tuple[ProjectFacts | None, str]:
        found = self._read.get(cwd)
        if found is None and (not cwd or not os.path.isdir(cwd)):  # as project_facts says
            found = self._read[cwd] = (None, self.NONE_KEY)
        if found is None:
            from memcite.audit.project_facts import project_facts

            files = self.tracked(cwd)
            facts = project_facts(cwd, files)
            found = self._read[cwd] = (facts, key_of(sorted(facts.commands), sorted(facts.hosts),
                                                     facts.known, files.stamp if files else None))
        return found


def text_hash(lines: list[tuple[str, str]], *, placed: bool = False) -> str:
    """A memory's text as one short hash (what a user's decision about it holds for);
    ``placed``: where each line stands too."""
    import hashlib

    if placed:
        joined = "".join(f"{where}\x00{line}\n" for where, line in lines)
    else:
        joined = "".join(f"{line}\n" for _where, line in lines)
    return hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def merge_places(findings: list[dict]) -> list[dict]:
    """A memory's sentence found the same way in several places (its raw memory, its rollout
    summary, the lines of MEMORY.md and the summary traced to it) is one finding: the first,
    with ``places`` listing where it stands. Findings of different memories stay apart
    (each names its memory)."""
    out: list[dict] = []
    by_key: dict[tuple, dict] = {}
    for found in findings:
        found.setdefault("places", [found["where"]])
        found.setdefault("memories", [found["memory"]] if found["memory"] else [])
        if found["kind"] not in ("poisoned", "directive", "taint"):
            out.append(found)
            continue
        key = (found["kind"], found["rule"], found["memory"],
               " ".join(found["excerpt"].lower().split()))
        first = by_key.get(key)
        if first is None:
            by_key[key] = found
            out.append(found)
            continue
        if found["where"] not in first["places"]:
            first["places"].append(found["where"])
        for thread in found["memories"]:
            if thread not in first["memories"]:
                first["memories"].append(thread)
    return out


def _project_table(home: MemoryHome, findings: list[dict]) -> list[dict]:
    rows: dict[str, dict] = {}

    def row_for(project: str | None) -> dict:
        row = rows.get(project or "")
        if row is None:
            row = rows[project or ""] = {"project": project, "memories": 0,
                                         **dict.fromkeys(KINDS, 0)}
        return row

    for memory in home.memories.values():
        row_for(memory.cwd)["memories"] += 1
    for found in findings:
        row_for(found["project"])[found["kind"]] += 1
    return sorted(rows.values(), key=lambda row: (-row["memories"], row["project"] or ""))


def audit_counts(codex_home: str, **options) -> dict:
    """The audit's counts alone (for ``stats``, ``report`` and ``doctor``)."""
    report = audit_home(codex_home, **options)
    return {"memories": report["memories"], "high": report["high"], **report["counts"]}
