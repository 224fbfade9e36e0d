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

import hashlib
import json
import os

VERSION = "verdicts-2"  # bumped whenever the rules or the finding's shape change
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
    """A key for the parts a verdict depends on."""
    text = json.dumps([VERSION, *parts], sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _copied(findings: list[dict]) -> list[dict]:
    """Copies of findings the audit may change afterwards (their place, project and the
    lists of places and memories; what they nest is never changed)."""
    return [{**found, "places": list(found.get("places") or ()),
             "memories": list(found.get("memories") or ())} for found in findings]


class VerdictCache:
    """The kept verdicts of one Codex home (empty without a cache folder)."""

    def __init__(self, cache_dir: str | None, codex_home: str) -> None:
        self.cache_dir = cache_dir
        self.codex_home = codex_home
        self._old: dict[str, list] = self._load() if cache_dir else {}
        self._new: dict[str, list] = {}
        self.hits = self.misses = 0

    def _load(self) -> dict[str, list]:
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
        return {key: value for key, value in record["verdicts"].items()
                if isinstance(key, str) and isinstance(value, list)
                and all(isinstance(item, dict) for item in value)}

    def get(self, key: str) -> list[dict] | None:
        """The findings kept under ``key`` (copies), or None."""
        found = self._old.get(key)
        if found is None:
            found = self._new.get(key)
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        self._new[key] = found
        return _copied(found)

    def put(self, key: str, findings: list[dict]) -> None:
        self._new[key] = _copied(findings)

    def save(self) -> str | None:
        """Keep the verdicts this audit used; the file's path (None without a cache folder)."""
        if not self.cache_dir:
            return None
        from memcite.durable_files import open_own_folder, replace_file_at

        name = _name(self.codex_home)
        record = {"version": VERSION, "codex_home": os.path.realpath(self.codex_home),
                  "verdicts": self._new}
        fd = open_own_folder(self.cache_dir)  # never a link, never a folder of another user
        try:
            replace_file_at(fd, name, json.dumps(record).encode("utf-8", "surrogatepass"),
                            os.path.join(self.cache_dir, name), 0o600)
        finally:
            os.close(fd)
        return os.path.join(self.cache_dir, name)
