"""Developer instructions built from the memory folder: the result, reading memory files, and
``build_instructions``, which reads the files and hands them to one of two profiles.

``build_instructions`` reads ``memory_summary.md`` (and, for the ``memcite``
profile, the working directory's project note), fits them to a token budget
and wraps them in the instructions template (``memcite.readpath.template``).
Profiles (docs/read-path.md):

- ``codex`` (``memcite.readpath.codex_profile``): exactly the summary Codex
  injects: trimmed, cut in the middle by the 4-bytes rule; nothing when it is
  missing, unreadable, not UTF-8 or empty.
- ``memcite`` (``memcite.readpath.memcite_profile``): exact tokens; this
  project's note first, then the global summary, inside one budget, cut at
  section boundaries, and the instructions say what was cut and which file holds
  the rest.

The budget covers the text between the ``MEMORY_SUMMARY`` markers; the fixed
template around it is not counted (as in Codex), and ``--explain``
(``memcite.readpath.explain``) shows it. With a cache folder, results are kept
by ``memcite.readpath.instructions_cache``, so a repeated call reads the files,
hashes them and prints: only this module and the cache's are loaded then.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from memcite.errors import InputError, MemciteError
from memcite.ledger.memory_files import MAX_FILE_BYTES, OUTSIDE, MemoryRoot
from memcite.readpath.instruction_values import (  # noqa: F401 - also this module's names
    DEFAULT_BUDGET,
    SUMMARY_FILE,
    TEMPLATE_VERSION,
    Instructions,
    ScopeNote,
    SourceUse,
)

PROFILES = ("memcite", "codex")
# Part of every cache key: bump it when the template or a profile's output changes.
MAX_MEMORY_FILE_BYTES = MAX_FILE_BYTES  # what memcite reads of a summary or a project note
# The memcite profile keeps a head of the summary: it reads at most this much of a larger one.
MAX_SUMMARY_PREFIX_BYTES = 4 * 1024 * 1024


class MemoryFileError(InputError):
    """A memory file memcite refuses to read (a symlink leading outside its folder) (exit 2)."""


class MemoryFileTooLarge(MemoryFileError):
    """A memory file larger than memcite reads (``MAX_MEMORY_FILE_BYTES``) (exit 2)."""


# -- reading memory files -------------------------------------------------------------------


class Prefix(bytes):
    """The first bytes of a memory file too large to read whole; ``unread`` bytes follow."""

    unread: int = 0


def read_memory_file(path: str, root: str, max_bytes: int = MAX_MEMORY_FILE_BYTES, *,
                     prefix: bool = False) -> bytes | None:
    """The bytes of ``path``, None when it does not exist; refuses one whose real place is outside
    ``root`` (a symlink leading out of the memory folder), one that is not a regular file (a
    FIFO, a device) and one larger than ``max_bytes`` (with ``prefix``, its first
    ``max_bytes`` are returned instead, as a ``Prefix`` that says how much was left unread).

    Opened from a handle on ``root``, one component at a time (``MemoryRoot``), so that a
    folder swapped for a symlink meanwhile cannot lead the read outside.
    """
    if not os.path.lexists(path):
        return None
    inside = os.path.relpath(path, root)
    with MemoryRoot(root) as folder:
        outcome, read, _stamp = folder.read(inside, max_bytes, prefix=prefix)
    if outcome == OUTSIDE:
        raise MemoryFileError(
            f"{path}: a symlink leading outside {root} (to {os.path.realpath(path)}); refused",
            hint="replace the symlink by the file itself, or name the folder that holds it "
            "with --memory-root",
        )
    if read is None:
        if not os.path.lexists(path):
            return None
        if os.path.isdir(path):
            raise InputError(f"{path}: is a directory, not a memory file")
        raise InputError(f"{path}: not a regular file (a FIFO, a device or a dangling link); "
                         "not read")
    if read.too_large and prefix:
        cut = _char_boundary(read.data)
        head = Prefix(read.data[:cut])
        head.unread = read.size - cut
        return head
    if read.too_large:
        raise MemoryFileTooLarge(
            f"{path}: larger than the limit of {max_bytes} bytes; not read",
            hint="a memory file this large cannot be what the agent should read; trim it",
        )
    return read.data


def _char_boundary(data: bytes) -> int:
    """The length of ``data`` without a UTF-8 sequence cut short at its end."""
    start = len(data)
    while start > 0 and len(data) - start < 4 and data[start - 1] & 0xC0 == 0x80:
        start -= 1
    if start == 0:
        return len(data)
    lead = data[start - 1]
    need = 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    return start - 1 if len(data) - (start - 1) < need else len(data)


# -- the entry point ------------------------------------------------------------------------


def build_instructions(
    memory_root: str | os.PathLike,
    *,
    profile: str = "memcite",
    budget: int = DEFAULT_BUDGET,
    tokenizer_name: str | None = None,
    load_tokenizer: Callable[[], object] | None = None,
    codex_home: str | os.PathLike | None = None,
    cwd: str | os.PathLike | None = None,
    errors: str = "strict",
    cache_dir: str | os.PathLike | None = None,
    scopes: tuple[str, ...] | None = None,
    session: str | None = None,
    today: str | None = None,
    store: str = "v1",
) -> Instructions:
    """The developer instructions for ``memory_root`` (and, for ``memcite``, the project of ``cwd``).

    ``tokenizer_name`` defaults to ``approx`` for ``codex`` and ``o200k_base`` otherwise;
    ``load_tokenizer`` is called only when the result is not in the cache;
    ``codex_home`` and ``cwd`` locate the project note (``memcite`` profile);
    ``cache_dir`` None means no cache;
    ``scopes`` (``memcite``): which scopes to read, default session (when ``session`` is
    given), project and global; the summary counts as global; ``today`` (``YYYY-MM-DD``,
    default: today in UTC) dates the relevance of note entries; ``store``: the Codex memory
    store ``memory_root`` belongs to (``v2``: the ``codex`` profile renders Codex's v2 read path).
    """
    if profile not in PROFILES:
        raise InputError(f"unknown profile {profile!r}: use one of {', '.join(PROFILES)}")
    if budget < 0:
        raise InputError(f"the budget must be 0 or more tokens, not {budget}")
    if tokenizer_name is None:
        tokenizer_name = "approx" if profile == "codex" else "o200k_base"
    if load_tokenizer is None:
        from memcite.readpath.tokens import get_tokenizer

        def load_tokenizer():
            return get_tokenizer(tokenizer_name)

    memory_root = os.path.abspath(os.fspath(memory_root))
    summary_path = os.path.join(memory_root, SUMMARY_FILE)
    summary_data = _read_summary(summary_path, memory_root, profile)
    notes: list = []
    if scopes is None:
        scopes = ("session", "project", "global") if session else ("project", "global")
    if "session" in scopes and not session:
        raise InputError("--scopes: the session scope needs a session id",
                         hint="pass --session ID or set MEMCITE_SESSION")
    if today is None:
        import time

        today = time.strftime("%Y-%m-%d", time.gmtime())
    if profile == "memcite" and codex_home is not None and cwd is not None:
        notes = _read_scope_notes(os.path.abspath(os.fspath(codex_home)), cwd, scopes, session)
    with_summary = "global" in scopes
    if profile == "memcite" and not with_summary:
        summary_data = None
    cache = None
    if cache_dir is not None:
        from memcite.readpath import instructions_cache as cache

        key = cache.cache_key(
            profile, budget, tokenizer_name, errors, memory_root, summary_data, notes,
            today if notes else "", store,
        )
        cached = cache.read_cached(os.fspath(cache_dir), key)
        if cached is not None:
            return cached
    if profile == "codex":
        from memcite.readpath.codex_profile import build_codex

        result = build_codex(memory_root, summary_data, budget, tokenizer_name, load_tokenizer,
                             store)
    else:
        from memcite.readpath.memcite_profile import build_memcite

        result = build_memcite(
            memory_root,
            summary_data,
            notes,
            budget,
            tokenizer_name,
            load_tokenizer,
            errors,
            today=today,
            with_summary=with_summary,
        )
    if store != "v1":
        import dataclasses

        result = dataclasses.replace(result, store=store)
    if cache is not None:
        cache.write_cached(os.fspath(cache_dir), key, result)
    return result


def _read_scope_notes(home: str, cwd, scopes: tuple[str, ...], session: str | None) -> list:
    """Each scope's note (its bytes, None when there is none), most specific first."""
    from memcite.readpath.projects import (
        check_session_id,
        find_project_root,
        project_slug,
        scope_note_dir,
    )

    project_root = find_project_root(cwd)
    slug = project_slug(project_root)
    if session:
        check_session_id(session)
    notes = []
    for scope in scopes:
        path = os.path.join(scope_note_dir(home, scope, slug=slug, session=session), "memory.md")
        owner = {"project": project_root, "global": "global"}.get(scope, session or "")
        data = read_memory_file(path, os.path.join(home, "memory"))
        data = _with_events(data, os.path.dirname(path), project_root, scope, owner)
        notes.append(ScopeNote(scope, path, data, owner, slug))
    return notes


def _with_events(data: bytes | None, folder: str, project_root: str, scope: str,
                 owner: str) -> bytes | None:
    """The note's bytes with the projection of the event log beside it appended as its last
    section (``memcite.readpath.event_log``), so that it shares the note's budget and scope rules."""
    if not os.path.isfile(os.path.join(folder, "events.jsonl")):
        return data
    try:
        from memcite.readpath.event_log import projection_of, render_projection

        projection = projection_of(folder, project_root)
    except (MemciteError, OSError, ValueError):
        return data  # an unreadable log leaves the note as it is
    text = render_projection(projection) if projection else ""
    if not text:
        return data
    if data is None:
        from memcite.readpath.note_format import project_line_value

        header = {"project": f"Project: {project_line_value(owner)}",
                  "global": "Scope: global"}.get(scope, f"Session: {owner}")
        data = f"# Project memory\n\n{header}\n".encode()
    return data.rstrip(b"\n") + b"\n\n" + text.encode("utf-8", "surrogateescape")


def _read_summary(path: str, root: str, profile: str) -> bytes | None:
    if profile != "codex":  # memcite keeps a head of the summary: a prefix is enough
        return read_memory_file(path, root, MAX_SUMMARY_PREFIX_BYTES, prefix=True)
    try:
        return read_memory_file(path, root)
    except MemoryFileError:
        raise
    except InputError:
        return None  # unreadable: Codex injects nothing


# --------------------------------------------------------------------------- the command's work


def tokenizer_loader(name: str, bpe_file: str | None, tiktoken_cache_dir: str | None):
    """A loader of the tokenizer ``name`` (called only when it is needed: a cached result
    never imports ``memcite.readpath.tokens``)."""
    def load():
        from memcite.readpath.tokens import get_tokenizer

        return get_tokenizer(name, bpe_file=bpe_file, tiktoken_cache_dir=tiktoken_cache_dir)

    return load


def instructions_for(codex_home: str, *, memory_root: str | None, cwd: str | None, budget: int,
                     tokenizer_name: str, profile: str, errors: str, bpe_file: str | None,
                     tiktoken_cache_dir: str | None, cache_dir: str | None,
                     scopes: tuple[str, ...] | None, session: str | None, today: str,
                     warn: Callable[[str], None]) -> tuple[Instructions, list[str]]:
    """``memcite instructions``'s work: the memory root (``memory_root``, else the folder of the
    store Codex reads under ``codex_home``), then ``build_instructions`` for ``cwd`` (None: the
    working directory). Returns the result and the problems found on the way (each also given
    to ``warn`` as it is found), which ``--json`` lists before the reader's warnings."""
    store = "v1"
    if memory_root:
        root = os.path.expanduser(memory_root)
        where = f"--memory-root {root}"
    else:
        from memcite.ledger.codex_home import memory_folder, memory_store, read_codex_config

        # The store Codex reads: [memories] version in config.toml (v1 unless "v2").
        store, why = memory_store(read_codex_config(codex_home)) if os.path.isdir(codex_home) \
            else ("v1", "")
        root = memory_folder(codex_home, store)
        where = (f"the memory root {root} ($CODEX_HOME/{os.path.basename(root)}: memory "
                 f"store {store}{', ' + why if why else ''})")
    if cwd is not None and not os.path.isdir(cwd):
        raise InputError(f"--cwd {cwd}: no such directory")
    problems = []
    if not os.path.isdir(root):
        problems.append(f"{where}: no such folder; no memory summary to inject "
                        "(pass the folder holding memory_summary.md with --memory-root)")
        warn(problems[-1])
    result = build_instructions(
        root, profile=profile, budget=budget, tokenizer_name=tokenizer_name,
        load_tokenizer=tokenizer_loader(tokenizer_name, bpe_file, tiktoken_cache_dir),
        codex_home=codex_home, cwd=cwd if cwd is not None else os.getcwd(), errors=errors,
        cache_dir=cache_dir, scopes=scopes, session=session, today=today, store=store)
    return result, problems

