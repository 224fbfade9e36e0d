"""``memcite search``: full-text search over the notes, the event logs and Codex's memory folder.

What is searched, seen from one working directory under one Codex home:

- ``notes``: the project's note (``memory/projects/<slug>/memory.md``, used only when its
  ``Project:`` line names this project) and the global note (``memory/global/memory.md``);
  the session's note too when ``--scope session`` names one;
- ``events``: the event log (``events.jsonl``) beside each of those notes, one row per event;
- ``memory``: Codex's memory folder (``MEMORY.md``, ``memory_summary.md``,
  ``rollout_summaries/*.md``, ``skills/**``), one row per line.

The index is an FTS5 table in memcite's database (``search_index``, migration
``m013_search_index``), one row per line (per event), its rowid ``file id << 24 | line``, so
that a file's rows are dropped by one rowid range. ``search_files`` holds each indexed
file's stamp (mtime_ns, size, inode, device): a refresh re-reads only the files whose stamp
changed (or whose rows the index no longer holds in full: a table emptied or dropped by
hand is rebuilt, never answered from) and drops the rows of files gone. Each row carries
its ``owner`` (the Codex home and the project, ``global``, a session or Codex's memory);
a query names the owners of this working directory in SQL, so another project's note and
events are never candidates.

Files are read link-safely and capped (``MemoryRoot``: a link is followed only inside its
folder). Secrets are masked before a line is stored (as the ledger does) and again in what
is printed. The query is untrusted text: each word is quoted as an FTS5 phrase (inner quotes
doubled), all must match, ranked by bm25. Nothing outside memcite's database is written.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass, field

from memcite.errors import InputError, MemciteError

KINDS = ("notes", "events", "memory")
LINE_BITS = 24
MAX_LINE = (1 << LINE_BITS) - 1
MAX_NOTE_FILE_BYTES = 16 * 1024 * 1024
MAX_EVENT_FILE_BYTES = 64 * 1024 * 1024
MAX_ROW_CHARS = 2000  # of one line kept in the index
MAX_SKILL_DEPTH = 4
MAX_SKILL_FILES = 2000
SNIPPET_TOKENS = 24
DEFAULT_LIMIT = 20
MAX_QUERY_TERMS = 32

class SearchUnavailable(MemciteError):
    """This Python's SQLite has no FTS5: search cannot run (exit 2)."""


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Refuse a build without FTS5 clearly; create the tables when missing (an in-memory
    index, or a database migrated by a Python without FTS5)."""
    from memcite.ledger.store import SEARCH_SCHEMA, SEARCH_TOKENIZER, fts5_available, transaction

    if not fts5_available(conn):
        raise SearchUnavailable(
            f"this Python's SQLite ({sqlite3.sqlite_version}) was built without FTS5; "
            "memcite search needs it", hint="use a Python whose sqlite3 has FTS5 (most do)")
    have = {name: sql for name, sql in conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE name IN ('search_files', 'search_index')")}
    if "search_index" in have and SEARCH_TOKENIZER not in (have["search_index"] or ""):
        # made with another tokenizer (before stemming): its rows would never match a stemmed
        # query; built again from the files, which are the source
        with transaction(conn):
            conn.execute("DROP TABLE search_index")
            conn.execute("DELETE FROM search_files")
        del have["search_index"]
    if len(have) < 2:
        with transaction(conn):
            # One table without the other cannot be trusted: stamps without their rows would
            # answer "no match" for ever, rows without their files' ids would be misnamed.
            if "search_files" in have:
                conn.execute("DELETE FROM search_files")
            if "search_index" in have:
                conn.execute("DELETE FROM search_index")
            for statement in SEARCH_SCHEMA:
                conn.execute(statement)


def owner_key(scope: str, home: str, value: str = "") -> str:
    """The owner of a file's rows: the scope, the Codex home and what names it in the scope
    (the canonical project path, a session id; nothing for global and Codex's memory)."""
    return json.dumps([scope, os.path.abspath(home), value], ensure_ascii=False)


# --------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class Source:
    """One folder whose files are indexed under one owner."""

    owner: str
    scope: str  # project | global | session | memory
    folder: str
    kinds: tuple[str, ...]
    project: str | None = None  # a project note is used only when its Project: line says so


def sources_for(location, kinds: tuple[str, ...], scopes: tuple[str, ...], memory_folder: str,
                session: str | None = None) -> list[Source]:
    """What a search from ``location`` (a ``NoteLocation``) covers: the folders of the
    scopes named, and Codex's memory folder."""
    from memcite.readpath.projects import scope_note_dir

    home = location.home
    wanted = tuple(kind for kind in kinds if kind in ("notes", "events"))
    found = []
    if wanted:
        for scope in scopes:
            if scope == "session" and not session:
                continue
            folder = scope_note_dir(home, scope, slug=location.slug, session=session)
            value = {"project": location.project, "session": session or ""}.get(scope, "")
            found.append(Source(owner_key(scope, home, value), scope, folder, wanted,
                                location.project if scope == "project" else None))
    if "memory" in kinds:
        found.append(Source(owner_key("memory", home, os.path.abspath(memory_folder)), "memory",
                            os.path.abspath(memory_folder), ("memory",)))
    return found


def _list_memory_folder(folder: str) -> list[str]:
    """The files of Codex's memory folder search reads, relative to it; no link followed
    while listing (a linked file is opened later only if it stays inside)."""
    names = [name for name in ("MEMORY.md", "memory_summary.md")
             if os.path.lexists(os.path.join(folder, name))]
    try:
        with os.scandir(os.path.join(folder, "rollout_summaries")) as entries:
            names += sorted(f"rollout_summaries/{e.name}" for e in entries if e.name.endswith(".md")
                            and (e.is_file(follow_symlinks=False) or e.is_symlink()))
    except OSError:
        pass
    skills: list[str] = []

    def walk(relative: str, depth: int) -> None:
        try:
            with os.scandir(os.path.join(folder, relative)) as entries:
                listed = sorted(entries, key=lambda e: e.name)
        except OSError:
            return
        for entry in listed:
            if len(skills) >= MAX_SKILL_FILES or entry.name.startswith("."):
                continue
            inside = f"{relative}/{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                if depth < MAX_SKILL_DEPTH:
                    walk(inside, depth + 1)
            elif entry.is_file(follow_symlinks=False) or entry.is_symlink():
                skills.append(inside)

    walk("skills", 1)
    return names + skills


def _files_of(source: Source) -> list[tuple[str, str]]:
    """``(name relative to the folder, kind)`` of each file of ``source`` to index."""
    if source.scope == "memory":
        return [(name, "memory") for name in _list_memory_folder(source.folder)]
    from memcite.notes.storage import NOTE_FILE
    from memcite.readpath.event_keys import EVENTS_FILE

    files = []
    if "notes" in source.kinds:
        files.append((NOTE_FILE, "notes"))
    if "events" in source.kinds:
        files.append((EVENTS_FILE, "events"))
    return files


# --------------------------------------------------------------------------- rows


def _clean(text: str) -> str:
    from memcite.secrets import mask_secrets

    text = text.replace("\x00", "")
    if len(text) > MAX_ROW_CHARS:
        text = text[:MAX_ROW_CHARS]
    return mask_secrets(text)


def _line_rows(text: str) -> list[tuple[int, str]]:
    rows = []
    for number, line in enumerate(text.split("\n"), start=1):
        if number > MAX_LINE:
            break
        if line.strip():
            rows.append((number, _clean(line.rstrip("\r"))))
    return rows


def _event_rows(text: str) -> list[tuple[int, str]]:
    """One row per event: its kind, text and files (the JSON keys are not searched)."""
    from memcite.untrusted import json_lines

    rows = []
    for number, raw, _why in json_lines(text):
        if number > MAX_LINE:
            break
        if not isinstance(raw, dict) or not isinstance(raw.get("text"), str):
            continue
        files = raw.get("files") if isinstance(raw.get("files"), list) else []
        parts = [str(raw.get("id") or ""), str(raw.get("kind") or ""), raw["text"]]
        if files:
            parts.append("(" + ", ".join(str(f) for f in files[:50]) + ")")
        rows.append((number, _clean(" ".join(p for p in parts if p))))
    return rows


def _rows_of(kind: str, text: str, project: str | None) -> list[tuple[int, str]] | None:
    """The rows of one file, or None when it must not be indexed (another project's note)."""
    if kind == "events":
        return _event_rows(text)
    if project is not None and kind == "notes":
        from memcite.readpath.projects import note_project_line

        if note_project_line(text) != project:
            return None  # a slug collision or a moved project: not this project's note
    return _line_rows(text)


# --------------------------------------------------------------------------- refresh


@dataclass
class RefreshStats:
    files_checked: int = 0
    files_indexed: int = 0
    files_dropped: int = 0
    rows_written: int = 0
    skipped: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"files_checked": self.files_checked, "files_indexed": self.files_indexed,
                "files_dropped": self.files_dropped, "rows_written": self.rows_written,
                "skipped": list(self.skipped)}


def _drop(conn: sqlite3.Connection, file_id: int) -> None:
    conn.execute("DELETE FROM search_index WHERE rowid >= ? AND rowid < ?",
                 (file_id << LINE_BITS, (file_id + 1) << LINE_BITS))


def _index_whole(conn: sqlite3.Connection) -> bool:
    """Whether the index holds as many rows as the stamps of all its files say (one count of
    FTS5's row table, no scan of the index): then no file needs its rows counted."""
    try:
        (indexed,) = conn.execute("SELECT count(*) FROM search_index_docsize").fetchone()
    except sqlite3.Error:
        return False  # no such table in this build of FTS5: count file by file
    (stamped,) = conn.execute("SELECT coalesce(sum(rows), 0) FROM search_files").fetchone()
    return indexed == stamped


def _holds_its_rows(conn: sqlite3.Connection, file_id: int, rows: int) -> bool:
    """Whether the index holds the rows its stamp says the file gave: a table emptied or
    rows deleted behind memcite's back make the file read again, never a wrong "no match"."""
    (found,) = conn.execute("SELECT count(*) FROM search_index WHERE rowid >= ? AND rowid < ?",
                            (file_id << LINE_BITS, (file_id + 1) << LINE_BITS)).fetchone()
    return found == rows


def refresh(conn: sqlite3.Connection, sources: list[Source], *, now: int | None = None
            ) -> RefreshStats:
    """Bring the index of ``sources`` up to date: re-read the files whose stamp changed,
    drop the rows of files gone (or no longer to be indexed). One write transaction."""
    import time

    from memcite.ledger.memory_files import INSIDE, MemoryRoot
    from memcite.ledger.store import transaction

    ensure_schema(conn)
    stats = RefreshStats()
    now = int(time.time()) if now is None else now
    with transaction(conn):
        whole = _index_whole(conn)
        for source in sources:
            known = {path: (file_id, kind, stamp[:4], stamp[4])
                     for file_id, path, kind, *stamp in conn.execute(
                         "SELECT id, path, kind, mtime_ns, size, inode, device, rows "
                         "FROM search_files WHERE owner = ?", (source.owner,))}
            seen: set[str] = set()
            with MemoryRoot(source.folder if os.path.isdir(source.folder) else None) as root:
                for name, kind in _files_of(source) if root.real else []:
                    path = os.path.join(source.folder, name)
                    stats.files_checked += 1
                    outcome, stamp, _parts = root.stamp(name)
                    if outcome != INSIDE or stamp is None:
                        if outcome != "missing":
                            stats.skipped.append(f"{path}: a link leading out of its folder")
                        continue
                    device, inode, size, mtime_ns = stamp
                    before = known.get(path)
                    if before is not None and before[1] == kind and \
                            before[2] == [mtime_ns, size, inode, device] and \
                            (whole or _holds_its_rows(conn, before[0], before[3])):
                        seen.add(path)
                        continue
                    cap = MAX_EVENT_FILE_BYTES if kind == "events" else MAX_NOTE_FILE_BYTES
                    outcome, read, stamp = root.read(name, cap, prefix=True)
                    if outcome != INSIDE or read is None or read.data is None or stamp is None:
                        continue
                    if read.too_large:
                        stats.skipped.append(f"{path}: larger than {cap} bytes; only its first "
                                             f"{cap} bytes are searched")
                    if b"\x00" in read.data[:8192]:
                        continue  # not text
                    rows = _rows_of(kind, read.data.decode("utf-8", "replace"), source.project)
                    if rows is None:
                        stats.skipped.append(f"{path}: its Project: line names another project; "
                                             "not searched")
                        continue
                    device, inode, size, mtime_ns = stamp
                    if before is not None:
                        file_id = before[0]
                        _drop(conn, file_id)
                        conn.execute("UPDATE search_files SET kind = ?, mtime_ns = ?, size = ?, "
                                     "inode = ?, device = ?, rows = ?, indexed_at = ? WHERE id = ?",
                                     (kind, mtime_ns, size, inode, device, len(rows), now, file_id))
                    else:
                        for (other,) in conn.execute("SELECT id FROM search_files WHERE path = ?",
                                                     (path,)).fetchall():
                            _drop(conn, other)  # the file was another owner's
                            conn.execute("DELETE FROM search_files WHERE id = ?", (other,))
                        file_id = conn.execute(
                            "INSERT INTO search_files (path, owner, kind, mtime_ns, size, inode, "
                            "device, rows, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (path, source.owner, kind, mtime_ns, size, inode, device, len(rows),
                             now)).lastrowid
                    base = file_id << LINE_BITS
                    conn.executemany(
                        "INSERT INTO search_index (rowid, text, owner, kind) VALUES (?, ?, ?, ?)",
                        [(base | line, text, source.owner, kind) for line, text in rows])
                    stats.files_indexed += 1
                    stats.rows_written += len(rows)
                    seen.add(path)
            for path, (file_id, kind, _stamp, _rows) in known.items():
                if path not in seen and kind in source.kinds:
                    _drop(conn, file_id)
                    conn.execute("DELETE FROM search_files WHERE id = ?", (file_id,))
                    stats.files_dropped += 1
    return stats


# --------------------------------------------------------------------------- query


def fts_query(text: str) -> str | None:
    """The user's words as an FTS5 query: each a quoted phrase (inner ``"`` doubled), all
    required; None when no word is left. No FTS5 syntax of the user's ever reaches SQLite."""
    terms = [term.replace("\x00", "") for term in text.split()][:MAX_QUERY_TERMS]
    quoted = ['"' + term.replace('"', '""') + '"' for term in terms if term]
    return " ".join(quoted) or None


@dataclass(frozen=True)
class Hit:
    file: str
    line: int
    kind: str
    scope: str
    score: float
    snippet: str
    text: str

    def to_json(self) -> dict:
        return {"file": self.file, "line": self.line, "kind": self.kind, "scope": self.scope,
                "score": self.score, "snippet": self.snippet, "text": self.text}


def query(conn: sqlite3.Connection, text: str, sources: list[Source], *,
          kinds: tuple[str, ...] = KINDS, limit: int = DEFAULT_LIMIT) -> list[Hit]:
    """The best ``limit`` rows matching ``text`` among the rows of ``sources`` only (as
    memcite shows text: ``memcite.display.shown``)."""
    from memcite.display import shown

    if not text or not text.strip():
        raise InputError("nothing to search for", hint="give the words to look for")
    if limit < 0:
        raise InputError("--limit: must be 0 or more")
    expression = fts_query(text)
    if expression is None or not sources or limit == 0:
        return []
    owners = [source.owner for source in sources]
    scope_of = {source.owner: source.scope for source in sources}
    kinds = tuple(kind for kind in kinds if kind in KINDS) or KINDS
    marks_owner = ", ".join("?" * len(owners))
    marks_kind = ", ".join("?" * len(kinds))
    sql = (
        "SELECT f.path, i.rowid & ?, i.kind, i.owner, bm25(search_index) AS score, "
        "snippet(search_index, 0, '**', '**', '…', ?), i.text "
        "FROM search_index AS i JOIN search_files AS f ON f.id = (i.rowid >> ?) "
        f"WHERE search_index MATCH ? AND i.owner IN ({marks_owner}) "
        f"AND i.kind IN ({marks_kind}) "
        "ORDER BY score, f.path, i.rowid LIMIT ?"
    )
    try:
        rows = conn.execute(sql, (MAX_LINE, SNIPPET_TOKENS, LINE_BITS, expression, *owners,
                                  *kinds, limit)).fetchall()
    except sqlite3.OperationalError as exc:  # a query FTS5 still refuses: no match, said once
        raise InputError(f"the search words could not be used ({exc})",
                         hint="search for plain words") from None
    return [Hit(path, line, kind, scope_of.get(owner, "?"), round(-score, 6),
                shown(snippet), shown(full[:500]))
            for path, line, kind, owner, score, snippet, full in rows]


def in_memory_index() -> sqlite3.Connection:
    """An index for this run only (memcite's database could not be opened for writing)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    ensure_schema(conn)
    return conn


def _say_nothing(message: str) -> None:
    pass


def open_index(locations, say=_say_nothing):
    """The run's database (``locations``, a ``memcite.paths.Locations``), created as the other
    commands create it; ``(conn, in_memory)``. When it cannot be opened for writing (read-only,
    a folder that cannot be made), the index is built in memory for this run, and that is said
    with ``say``; a damaged one is refused."""
    from memcite.ledger import database
    from memcite.ledger.store import DamagedStoreError, StoreError

    try:
        return database.open_ledger(locations), False
    except DamagedStoreError:
        raise
    except StoreError as error:
        say(f"{error}; searching with an index in memory for this run only")
        return in_memory_index(), True


def run_search(locations, query_text: str, *, cwd: str, kinds: tuple[str, ...],
               scopes: tuple[str, ...], session: str | None, limit: int,
               say=_say_nothing) -> dict:
    """Refresh the index, then query it: the ``--json`` object of ``memcite search`` (the MCP
    search tool returns it too). ``locations`` names the Codex home and the database; ``say``
    tells of an index kept in memory (the object's ``in_memory`` says it too)."""
    from memcite.display import shown
    from memcite.ledger.codex_home import codex_memory_folder
    from memcite.notes.storage import locate_note

    if not query_text or not query_text.strip():
        raise InputError("nothing to search for", hint="give the words to look for")
    if limit < 0:
        raise InputError("--limit: must be 0 or more")
    if not os.path.isdir(cwd):
        raise InputError(f"--cwd: {cwd} is not a folder")
    home = locations.codex_home_path
    location = locate_note(cwd, home)
    try:
        memory = codex_memory_folder(home)
    except Exception:  # noqa: BLE001 - an unreadable config.toml: Codex's default folder
        from memcite.ledger.codex_home import memory_folder

        memory = memory_folder(home)
    sources = sources_for(location, kinds, scopes, memory, session)
    conn, in_memory = open_index(locations, say)
    try:
        ensure_schema(conn)
        stats = refresh(conn, sources)
        hits = query(conn, query_text, sources, kinds=kinds, limit=limit)
    finally:
        conn.close()
    return {"query": shown(query_text), "project": location.project,
            "codex_home": location.home, "memory_folder": os.path.abspath(memory),
            "scopes": list(scopes), "kinds": list(kinds), "limit": limit,
            "in_memory": in_memory, "refresh": stats.to_json(), "count": len(hits),
            "hits": [hit.to_json() for hit in hits]}


__all__ = ["KINDS", "Hit", "RefreshStats", "SearchUnavailable", "Source",
           "ensure_schema", "fts_query", "in_memory_index", "open_index", "owner_key",
           "query", "refresh", "run_search", "sources_for"]
