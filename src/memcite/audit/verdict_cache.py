"""The audit's verdicts, kept per memory so that a second audit reads only what changed.

An audit's cost is reading each memory's source session; its verdict on a memory depends
only on the memory's text, its project and source, the session file (stamped by size and
modification time) and the rules. ``VerdictCache`` keeps, per memory, what the audit read of
its text and its findings under keys made of those (``memory``/``put_memory``), and the
findings of each line of ``MEMORY.md``/``memory_summary.md`` (``get``/``put``); the audit asks
it first and reads a session only on a miss. The file (``audit-verdicts-<home hash>.json`` in
memcite's cache folder) keeps the entries the last audit used, nothing else, and is not
written again when they are all as read. It is untrusted: read bounded, a damaged or foreign
file reads as empty, an entry not of the shape the audit writes is a miss, written
atomically and never through a link (``memcite.durable_files``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from array import array
from dataclasses import dataclass

VERSION = "verdicts-10"  # bumped whenever the rules or the finding's shape change
MAX_BYTES = 128 * 1024 * 1024


def _name(codex_home: str) -> str:
    digest = hashlib.sha256(os.path.realpath(codex_home).encode("utf-8", "surrogateescape"))
    return f"audit-verdicts-{digest.hexdigest()[:16]}.json"


def key_of(*parts: object) -> str:
    """A key for the parts a verdict depends on (text, numbers, None, and lists of them)."""
    text = repr((VERSION, parts))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


# A finding is kept as a row of its values in this order, without what it says of its memory
# (its project, source, session and fix: ``finding_of`` fills them in as the memory is now,
# so a moved session or a new project is never told stale).
ROW = ("kind", "severity", "memory", "where", "rule", "excerpt", "origin", "message", "places",
       "memories", "certain", "judgement")
_KINDS = frozenset({"poisoned", "secret", "cross-project", "directive", "taint"})
_ORIGIN = ("kind", "line", "tool", "call_id", "detail", "share", "tainted")  # origin_dict's
_JUDGEMENT = ("severity", "certain", "trust", "placed", "effects", "markers", "why")  # as_dict's


def row_of(found: dict) -> list:
    """A finding as it is kept (``ROW``)."""
    return [found[name] for name in ROW]


def finding_of(row: list, project: str | None, source: str | None, session: str | None,
               fix: str) -> dict:
    """A kept finding, with what it says of its memory, its keys in the order the audit
    prints them (``memory_audit._finding``'s); its lists are its own."""
    return {"kind": row[0], "severity": row[1], "memory": row[2], "where": row[3],
            "project": project, "source": source, "session": session, "rule": row[4],
            "excerpt": row[5], "origin": row[6], "message": row[7], "fix": fix,
            "places": list(row[8]), "memories": list(row[9]), "certain": row[10],
            "judgement": row[11]}


def _texts(value: object) -> bool:
    return type(value) is list and all(type(item) is str for item in value)


def _valid_origin(origin: object) -> bool:
    if origin is None:
        return True
    return type(origin) is dict and tuple(origin) == _ORIGIN \
        and type(origin["kind"]) is str and type(origin["line"]) is int \
        and all(value is None or type(value) is str
                for value in (origin["tool"], origin["call_id"], origin["detail"])) \
        and type(origin["share"]) in (int, float) and type(origin["tainted"]) is bool


def _valid_judgement(judgement: object) -> bool:
    if judgement is None:
        return True
    return type(judgement) is dict and tuple(judgement) == _JUDGEMENT \
        and type(judgement["effects"]) is list \
        and all(type(effect) is dict for effect in judgement["effects"]) \
        and _texts(judgement["markers"]) and type(judgement["why"]) is str


def valid_rows(rows: object) -> bool:
    """Whether ``rows`` are kept findings as the audit writes them (the file is untrusted:
    anything else is a miss, never a crash): a known kind, its place, severity, excerpt and
    message as text, its memory and rule text or None, its places and memories lists of
    text, its origin and judgement as the audit makes them (or None)."""
    if type(rows) is not list:
        return False
    for row in rows:
        if type(row) is not list or len(row) != len(ROW):
            return False
        kind, level, memory, where, rule, excerpt, origin, message, places, memories, certain, \
            judgement = row
        if kind not in _KINDS or type(level) is not str or type(where) is not str \
                or type(excerpt) is not str or type(message) is not str \
                or not (memory is None or type(memory) is str) \
                or not (rule is None or type(rule) is str) or type(certain) is not bool \
                or not _texts(places) or not _texts(memories) or not _valid_origin(origin) \
                or not _valid_judgement(judgement):
            return False
    return True


@dataclass(frozen=True)
class MemoryText:
    """What the audit needs of a memory's text once it is read: its hash (``text``, what a
    user's decision holds for), its hash with each line's place (``placed``), the hashes of
    its masked word pairs (``grams``: where the folder's lines are traced) and its first
    masked line (``first``). Never the text itself, and never a secret: the pairs are of the
    masked text."""

    text: str
    placed: str
    grams: frozenset
    first: str


@dataclass(slots=True)
class KeptMemory:
    """What an earlier audit kept of a memory: what it read of its text, and its findings
    (``rows``)."""

    text: MemoryText
    _record: list

    def rows(self) -> tuple[list, list] | None:
        """The rows of its secrets' findings and of its sentences', or None when they are not
        of the audit's shape."""
        record = self._record
        if not valid_rows(record[6]) or not valid_rows(record[7]):
            return None
        return record[6], record[7]


# A memory's record: [key, placed key, text, placed, grams, first, secrets' rows, sentences'
# rows]; its findings are kept under both keys (``memory``)
_RECORD = 8


SECTIONS = ("memories", "headers", "verdicts")  # a line of the file: [section, key, value]


class VerdictCache:
    """The kept verdicts of one Codex home (empty without a cache folder): each memory's
    (``memory``), each folder line's (``get``), and what the audit read of each rollout
    summary's header (``old_headers``), so that an unchanged memory is not read again.

    The file is JSON Lines: a first line naming its version and home, then one line per
    entry, ``[section, key, value]``; a line that is not one is left out. An entry kept as it
    was read is written again as the line it was read from (not encoded again)."""

    def __init__(self, cache_dir: str | None, codex_home: str) -> None:
        self.cache_dir = cache_dir
        self.codex_home = codex_home
        self._lines: dict[tuple[str, str], str] = {}  # each entry's line as read
        sections = self._load() if cache_dir else None
        self._read = sections is not None
        sections = sections or {}
        self._old_memories: dict[str, list] = sections.get("memories", {})
        self.old_headers: dict[str, list] = sections.get("headers", {})
        self._old: dict[str, list] = sections.get("verdicts", {})
        self._memories: dict[str, list] = {}
        self.headers: dict[str, list] = {}  # this audit's, kept for the next
        self._new: dict[str, list] = {}

    def _load(self) -> dict[str, dict[str, list]] | None:
        from memcite.untrusted import loads_json, open_regular

        path = os.path.join(self.cache_dir, _name(self.codex_home))
        try:
            with os.fdopen(open_regular(path), "rb") as handle:
                data = handle.read(MAX_BYTES + 1)
            if len(data) > MAX_BYTES:
                return None
            head, _newline, rest = data.decode("utf-8").partition("\n")
            record = loads_json(head)
        except (OSError, ValueError):  # (UnicodeDecodeError is a ValueError)
            return None
        if not isinstance(record, dict) or record.get("version") != VERSION \
                or record.get("codex_home") != os.path.realpath(self.codex_home):
            return None
        sections: dict[str, dict[str, list]] = {name: {} for name in SECTIONS}
        decode = json.JSONDecoder().raw_decode
        for line in rest.split("\n"):
            try:
                entry, end = decode(line)
            except (ValueError, RecursionError):
                continue
            if end == len(line) and type(entry) is list and len(entry) == 3 \
                    and entry[0] in sections and type(entry[1]) is str and type(entry[2]) is list:
                sections[entry[0]][entry[1]] = entry[2]
                self._lines[entry[0], entry[1]] = line
        return sections

    def get(self, key: str, valid=valid_rows) -> list | None:
        """What is kept under ``key`` (a folder line's findings as rows; ``valid``: the check of
        another kind of entry, its secret or its placing), or None; never to be changed."""
        found = self._old.get(key)
        if found is None:
            found = self._new.get(key)
        if found is None or not valid(found):
            return None
        self._new[key] = found
        return found

    def put(self, key: str, value: list) -> None:
        """Keep ``value`` under ``key`` (findings: ``row_of`` each)."""
        self._new[key] = value

    def memory(self, thread_id: str, *, key: str | None = None, placed_key: str | None = None
               ) -> KeptMemory | None:
        """What an earlier audit kept of a memory, when its findings still hold, else None:
        it was kept under ``key`` (``memory_audit.memory_key``: its text known by its files'
        stamps, without reading it) or under ``placed_key`` (its text read again, hashed with
        its places)."""
        kept = self._old_memories.get(thread_id)
        if kept is None or len(kept) != _RECORD or not (
                (key is not None and kept[0] == key) or
                (placed_key is not None and kept[1] == placed_key)):
            return None
        if type(kept[1]) is not str or type(kept[2]) is not str or type(kept[3]) is not str \
                or type(kept[5]) is not str:
            return None
        try:
            grams = _grams_of(kept[4])
        except (TypeError, ValueError):
            return None
        return KeptMemory(MemoryText(kept[2], kept[3], grams, kept[5]), kept)

    def text(self, thread_id: str, key: str | None) -> MemoryText | None:
        """What an earlier audit read of a memory kept under ``key`` (``memory``), or None."""
        kept = self.memory(thread_id, key=key) if key is not None else None
        return kept.text if kept is not None else None

    def old_placed(self, thread_id: str) -> str | None:
        """The ``placed`` hash an earlier audit kept for a memory's text, or None."""
        kept = self._old_memories.get(thread_id)
        return kept[3] if len(kept or ()) == _RECORD and type(kept[3]) is str else None

    def keep_memory(self, thread_id: str, kept: KeptMemory, key: str | None) -> None:
        """Keep what an earlier audit kept of a memory, as it was, under ``key`` now."""
        record = kept._record
        self._memories[thread_id] = record if record[0] == key else [key, *record[1:]]

    def put_memory(self, thread_id: str, key: str | None, placed_key: str, text: MemoryText,
                   secrets: list, findings: list) -> None:
        """Keep what the audit read of a memory and its findings (rows) under ``key`` (None:
        its text is read again next time) and ``placed_key``."""
        self._memories[thread_id] = [key, placed_key, text.text, text.placed,
                                     _grams_text(text.grams), text.first, secrets, findings]

    def save(self) -> str | None:
        """Keep the verdicts this audit used; the file's path (None without a cache folder).
        When they are all as read, the file stays as it is."""
        if not self.cache_dir:
            return None
        from memcite.durable_files import open_own_folder, replace_file_at

        name = _name(self.codex_home)
        kept = (("memories", self._memories, self._old_memories),
                ("headers", self.headers, self.old_headers), ("verdicts", self._new, self._old))
        if self._read and all(new == old for _section, new, old in kept):
            return os.path.join(self.cache_dir, name)
        lines = [json.dumps({"version": VERSION, "codex_home": os.path.realpath(self.codex_home)})]
        for section, new, old in kept:
            lines.extend(self._lines[section, key] if old.get(key) is value
                         else json.dumps([section, key, value]) for key, value in new.items())
        fd = open_own_folder(self.cache_dir)  # never a link, never a folder of another user
        try:
            replace_file_at(fd, name, "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n",
                            os.path.join(self.cache_dir, name), 0o600)
        finally:
            os.close(fd)
        return os.path.join(self.cache_dir, name)


def _grams_text(grams) -> str:
    return base64.b64encode(array("I", sorted(grams)).tobytes()).decode("ascii")


def _grams_of(text: object) -> frozenset:
    if not isinstance(text, str):
        raise TypeError("not text")
    data = binascii.a2b_base64(text, strict_mode=True)
    if len(data) % 4:
        raise ValueError("not a list of 32-bit numbers")
    return frozenset(memoryview(data).cast("I"))
