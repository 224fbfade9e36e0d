"""The cache of built instructions: JSON files in ``<cache dir>/instructions/``.

Each entry is keyed by the SHA-256 of the memory files' bytes, their paths, the
budget, the tokenizer, the profile and the template version, so a repeated call
reads the files, hashes them and prints, without loading a tokenizer. The caller
chooses the cache directory (the CLI: ``$MEMCITE_CACHE_DIR``, else the user cache
dir); entries are written 0600 in a 0700 folder, and at most ``CACHE_ENTRIES`` are
kept. A damaged entry is rebuilt; a cache that cannot be written is skipped.
"""

from __future__ import annotations

import hashlib
import os

from memcite.readpath.instruction_values import TEMPLATE_VERSION, Instructions, SourceUse

CACHE_ENTRIES = 64


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


def read_cached(cache_dir: str, key: str) -> Instructions | None:
    """The cached result for ``key`` (``cached`` True), or None."""
    path = os.path.join(cache_dir, "instructions", key + ".json")
    try:
        from memcite.untrusted import open_regular  # a FIFO planted there: never a hang

        with open(open_regular(path), encoding="utf-8") as handle:
            raw = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    from memcite.untrusted import loads_json

    try:
        return _from_cache_dict(loads_json(raw))
    except (ValueError, KeyError, TypeError):
        return None  # a damaged entry is rebuilt


def write_cached(cache_dir: str, key: str, result: Instructions) -> None:
    """Store ``result``; a cache that cannot be written is skipped (it only saves time)."""
    import json

    from memcite.durable_files import write_file
    from memcite.errors import MemciteError

    folder = os.path.join(cache_dir, "instructions")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        path = os.path.join(folder, key + ".json")
        write_file(path, json.dumps(_cache_dict(result), ensure_ascii=False).encode("utf-8"),
                   keep_mode=False)
        _cache_prune(folder)
    except (OSError, MemciteError):  # a link planted in the cache is refused, never followed
        return


def _cache_prune(folder: str) -> None:
    from memcite.durable_files import remove_stale_temporaries

    remove_stale_temporaries(folder, dotted=False)  # left by a run that was killed
    entries = [entry for entry in os.scandir(folder) if entry.name.endswith(".json")]
    if len(entries) <= CACHE_ENTRIES:
        return
    entries.sort(key=lambda entry: entry.stat().st_mtime)
    for entry in entries[: len(entries) - CACHE_ENTRIES]:
        try:
            os.unlink(entry.path)
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
