"""The audit's verdicts, kept per memory so that a second audit reads only what changed.

An audit's cost is reading each memory's source session; its verdict on a memory depends
only on the memory's text, its project and source, the session file (stamped by size and
modification time) and the rules. ``VerdictCache`` keeps, under a key made of those, the
findings of each memory and of each line of ``MEMORY.md``/``memory_summary.md``; the audit
asks it first and reads a session only on a miss. The file
(``audit-verdicts-<home hash>.json`` in memcite's cache folder) keeps the entries the last
audit used, nothing else. It is untrusted: read bounded, a damaged or foreign file reads as
empty, written atomically and never through a link (``memcite.durable_files``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from array import array
from dataclasses import dataclass

VERSION = "verdicts-7"  # bumped whenever the rules or the finding's shape change
MAX_BYTES = 128 * 1024 * 1024


def _name(codex_home: str) -> str:
    digest = hashlib.sha256(os.path.realpath(codex_home).encode("utf-8", "surrogateescape"))
    return f"audit-verdicts-{digest.hexdigest()[:16]}.json"


def session_stamp(path: str | None) -> list | None:
    """A session file's size and modification time (None: none, or unreadable)."""
    if not path:
        return None
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return [info.st_size, info.st_mtime_ns]


def key_of(*parts: object) -> str:
    """A key for the parts a verdict depends on (text, numbers, None, and lists of them)."""
    text = repr((VERSION, parts))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


_OF_MEMORY = frozenset({"project", "source", "session", "fix"})  # memory_audit.MEMORY_FIELDS


def _copied(findings: list[dict]) -> list[dict]:
    """Copies of findings the audit may change afterwards (their place, project and the
    lists of places and memories; what they nest is never changed)."""
    return [{**found, "places": list(found.get("places") or ()),
             "memories": list(found.get("memories") or ())} for found in findings]


class VerdictCache:
    """The kept verdicts of one Codex home (empty without a cache folder), with what the
    audit read of each memory's text (``text``) and each rollout summary's header
    (``old_headers``), so that an unchanged memory is not read again."""

    def __init__(self, cache_dir: str | None, codex_home: str) -> None:
        self.cache_dir = cache_dir
        self.codex_home = codex_home
        record = self._load() if cache_dir else {}
        self._old: dict[str, list] = _entries(record.get("verdicts"), list)
        self.old_headers: dict[str, list] = _entries(record.get("headers"), list)
        self._old_texts: dict[str, list] = _entries(record.get("texts"), list)
        self._new: dict[str, list] = {}
        self.headers: dict[str, list] = {}  # this audit's, kept for the next
        self._texts: dict[str, list] = {}
        self.hits = self.misses = 0

    def _load(self) -> dict:
        from memcite.untrusted import loads_json, open_regular

        path = os.path.join(self.cache_dir, _name(self.codex_home))
        try:
            with os.fdopen(open_regular(path), "rb") as handle:
                data = handle.read(MAX_BYTES + 1)
            record = loads_json(data) if len(data) <= MAX_BYTES else None
        except (OSError, ValueError):
            return {}
        if not isinstance(record, dict) or record.get("version") != VERSION \
                or record.get("codex_home") != os.path.realpath(self.codex_home) \
                or not isinstance(record.get("verdicts"), dict):
            return {}
        return record

    def get(self, key: str, *, findings: bool = True) -> list[dict] | None:
        """The findings kept under ``key`` (copies), or None; ``findings=False``: other
        entries kept the same way (a line's secret, its placing)."""
        found = self._old.get(key)
        if found is None:
            found = self._new.get(key)
        if found is None or not all(_valid(item, findings) for item in found):
            self.misses += 1
            return None
        self.hits += 1
        self._new[key] = found
        return _copied(found)

    def put(self, key: str, findings: list[dict]) -> None:
        """Keep ``findings`` under ``key``, without what they say of their memory (its
        project, source, session and fix: ``memory_audit.of_memory`` fills them in again
        as the memory is then, so a moved session or a new project is never told stale)."""
        self._new[key] = [{name: value for name, value in found.items() if name not in _OF_MEMORY}
                          for found in _copied(findings)]

    def text(self, thread_id: str, *, parts: str | None = None, placed: str | None = None
             ) -> MemoryText | None:
        """What an earlier audit read of a memory that is unchanged, or None: its parts
        (``parts``: its stage1 row's hash, its summary files' stamps, its raw memory's lines)
        are the same, or its text read again (``placed``: its hash with places) is."""
        kept = self._old_texts.get(thread_id) or self._texts.get(thread_id)
        if kept is None or len(kept) != 5 or not (
                (parts is not None and kept[0] == parts) or
                (placed is not None and kept[2] == placed)):
            return None
        try:
            found = MemoryText(kept[1], kept[2], _grams_of(kept[3]), kept[4])
        except (TypeError, ValueError):
            return None
        if not all(isinstance(value, str) for value in (found.text, found.placed, found.first)):
            return None
        return found

    def old_placed(self, thread_id: str) -> str | None:
        """The ``placed`` hash an earlier audit kept for a memory's text, or None."""
        kept = self._old_texts.get(thread_id)
        return kept[2] if len(kept or ()) == 5 and isinstance(kept[2], str) else None

    def put_text(self, thread_id: str, parts: str | None, text: MemoryText) -> None:
        kept = self._old_texts.get(thread_id)
        if kept is not None and kept[0] == parts and kept[2] == text.placed:
            self._texts[thread_id] = kept  # as read: not encoded again
            return
        self._texts[thread_id] = [parts, text.text, text.placed, _grams_text(text.grams),
                                  text.first]

    def save(self) -> str | None:
        """Keep the verdicts this audit used; the file's path (None without a cache folder)."""
        if not self.cache_dir:
            return None
        from memcite.durable_files import open_own_folder, replace_file_at

        name = _name(self.codex_home)
        record = {"version": VERSION, "codex_home": os.path.realpath(self.codex_home),
                  "verdicts": self._new, "headers": self.headers, "texts": self._texts}
        fd = open_own_folder(self.cache_dir)  # never a link, never a folder of another user
        try:
            replace_file_at(fd, name, json.dumps(record).encode("utf-8", "surrogatepass"),
                            os.path.join(self.cache_dir, name), 0o600)
        finally:
            os.close(fd)
        return os.path.join(self.cache_dir, name)


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


_KINDS = frozenset({"poisoned", "secret", "cross-project", "directive", "taint"})


def _valid(item: object, finding: bool = True) -> bool:
    """A kept entry as the audit writes them (the file is untrusted: anything else is a miss);
    a finding has its kind, place, severity, excerpt and message."""
    if not isinstance(item, dict) or not all(
            isinstance(item.get(name, []), list) and all(isinstance(v, str) for v in item.get(name, []))
            for name in ("places", "memories")):
        return False
    return not finding or (item.get("kind") in _KINDS and all(
        isinstance(item.get(name), str) for name in ("where", "severity", "excerpt", "message")))


def _entries(value: object, kind: type) -> dict:
    if not isinstance(value, dict):
        return {}
    return {key: item for key, item in value.items()
            if isinstance(key, str) and isinstance(item, kind)}


def _grams_text(grams) -> str:
    return base64.b64encode(array("I", sorted(grams)).tobytes()).decode("ascii")


def _grams_of(text: object) -> frozenset:
    if not isinstance(text, str):
        raise TypeError("not text")
    data = base64.b64decode(text.encode("ascii"), validate=True)
    if len(data) % 4:
        raise ValueError("not a list of 32-bit numbers")
    grams = array("I")
    grams.frombytes(data)
    return frozenset(grams)
