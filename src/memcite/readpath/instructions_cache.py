"""The cache of built instructions: JSON files in ``<cache dir>/instructions/``.

Each entry is keyed by the SHA-256 of the memory files' bytes, their paths, the
budget, the tokenizer, the profile and the template version, so a repeated call
reads the files, hashes them and prints, without loading a tokenizer. The caller
chooses the cache directory (the CLI: ``$MEMCITE_CACHE_DIR``, else the user cache
dir); entries are written 0600 in a 0700 folder, and at most ``CACHE_ENTRIES`` are
kept. A damaged entry is rebuilt; a cache that cannot be written is skipped. The folder
is memcite's own: a link there, or a folder another user owns, is neither read, written
nor pruned, and pruning removes only the names this module gives.
"""

from __future__ import annotations

import hashlib
import os
import re

from memcite.readpath.instruction_values import TEMPLATE_VERSION, Instructions, SourceUse

CACHE_ENTRIES = 64
FOLDER = "instructions"


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def cache_key(profile, budget, tokenizer_name, errors, memory_root, summary, notes, today="",
              store="v1"):
    """The key of one result: a hash of everything the instructions depend on."""
    parts = [
        "memcite-instructions",
        TEMPLATE_VERSION,
        profile,
        str(budget),
        tokenizer_name,
        errors,
        memory_root,
        _digest(summary) or "-",
        str(getattr(summary, "unread", 0)),  # a prefix: what followed it matters too
    ]
    if store != "v1":  # keys of v1 results stay as they were
        parts.append(f"store={store}")
    for note in notes:  # the scoped notes (memcite profile); relevance depends on the day
        parts += [note.scope, note.owner, note.path, _digest(note.data) or "-"]
    if notes:
        parts.append(today)
    joined = "\0".join(parts).encode("utf-8", "surrogateescape")
    return hashlib.sha256(joined).hexdigest()


_KEY = re.compile(r"[0-9a-f]{64}\Z")
_ENTRY = re.compile(r"([0-9a-f]{64})\.json\Z")
# What write_file leaves of an entry when its run is killed (durable_files.unique_name).
_TEMPORARY = re.compile(r"\.([0-9a-f]{64}\.json)\.memcite-[0-9a-f]{12}\.tmp\Z")
MAX_ENTRY_BYTES = 16 * 1024 * 1024


def read_cached(cache_dir: str, key: str) -> Instructions | None:
    """The cached result for ``key`` (``cached`` True), or None; read only from memcite's own
    folder (``durable_files.open_own_folder``), never through a link."""
    from memcite.durable_files import open_own_folder, read_file_at
    from memcite.errors import MemciteError
    from memcite.untrusted import loads_json

    if not _KEY.match(key):
        return None
    path = os.path.join(cache_dir, FOLDER, key + ".json")
    try:
        fd = open_own_folder(cache_dir, (FOLDER,), create=False)
    except (OSError, MemciteError):
        return None
    try:
        raw = read_file_at(fd, key + ".json", path, MAX_ENTRY_BYTES)
        return None if raw is None else _from_cache_dict(loads_json(raw.decode("utf-8")))
    except (OSError, MemciteError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None  # a damaged entry is rebuilt
    finally:
        os.close(fd)


def write_cached(cache_dir: str, key: str, result: Instructions) -> None:
    """Store ``result`` in memcite's own folder (a link or another user's folder there is
    refused: nothing cached); a cache that cannot be written is skipped (it only saves
    time)."""
    import json

    from memcite.durable_files import open_own_folder, replace_file_at
    from memcite.errors import MemciteError

    if not _KEY.match(key):
        return
    try:
        fd = open_own_folder(cache_dir, (FOLDER,))
    except (OSError, MemciteError):
        return
    try:
        data = json.dumps(_cache_dict(result), ensure_ascii=False).encode("utf-8")
        replace_file_at(fd, key + ".json", data, os.path.join(cache_dir, FOLDER, key + ".json"),
                        0o600)
        _cache_prune(fd)
    except (OSError, MemciteError):  # a link planted in the cache is refused, never followed
        return
    finally:
        os.close(fd)


def _cache_prune(folder_fd: int) -> None:
    """Keep the newest ``CACHE_ENTRIES`` entries: only names memcite gives (``<64 hex>.json``
    and their temporaries, ``.<64 hex>.json.memcite-<12 hex>.tmp``), regular files of this
    user's with one link; nothing else in the folder is touched."""
    import stat

    from memcite.durable_files import remove_stale_temporaries

    names = os.listdir(folder_fd)
    targets = {found.group(1) for found in map(_TEMPORARY.match, names) if found}
    if targets:
        remove_stale_temporaries(folder_fd, targets)  # left by a run that was killed
    entries = []
    for name in names:
        if not _ENTRY.match(name):
            continue
        try:
            info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and info.st_uid == os.geteuid():
            entries.append((info.st_mtime_ns, name))
    if len(entries) <= CACHE_ENTRIES:
        return
    entries.sort()
    for _mtime, name in entries[: len(entries) - CACHE_ENTRIES]:
        try:
            os.unlink(name, dir_fd=folder_fd)
        except OSError:
            pass


def _cache_dict(result: Instructions) -> dict:
    return {**result.to_dict(), "template_tokens": result.template_tokens}


def _from_cache_dict(data: dict) -> Instructions:
    return Instructions(
        instructions=data["instructions"],
        summary=data["summary"],
        truncated=data["truncated"],
        budget=data["tokens"]["budget"],
        used=data["tokens"]["used"],
        sources=tuple(SourceUse.from_dict(s) for s in data["sources"]),
        profile=data["profile"],
        tokenizer=data["tokenizer"],
        template_tokens=data["template_tokens"],
        warnings=tuple(data["warnings"]),
        cached=True,
        overrides=tuple(data.get("overrides", ())),
        compacted=tuple(data.get("compacted", ())),
        store=data.get("store", "v1"),
    )
