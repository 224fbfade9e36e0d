"""Which project a working directory belongs to, and where its note lives (docs/memory-layout.md §2).

The slug rule is pure (``project_slug`` of a canonical path); finding the git
work tree and reading the note are the only I/O, in ``find_project_root`` and
``read_project_note``. A note is used only when its ``Project:`` line equals the
canonical project path exactly; otherwise it belongs to another project (a
slug collision or a moved project) and is reported, never read into context.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass

from memcite.errors import InputError
from memcite.rust_text import rust_trim

SCOPES = ("session", "project", "global")  # the note scopes, most specific first
_SESSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")

_NAME_LIMIT = 40
_HASH_CHARS = 12


def canonical_path(path: str | os.PathLike) -> str:
    """Absolute, symlinks resolved, no trailing slash (the root stays ``/``)."""
    resolved = os.path.realpath(os.fspath(path))
    stripped = resolved.rstrip(os.sep)
    return stripped or resolved


def find_project_root(cwd: str | os.PathLike) -> str:
    """The canonical root of the git work tree containing ``cwd``, or ``cwd`` itself outside git.

    A work tree root is the nearest directory holding ``.git`` (a directory, or
    the file a linked work tree or submodule has).
    """
    start = canonical_path(cwd)
    directory = start
    while True:
        if os.path.lexists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return start
        directory = parent


def sanitize_project_name(name: str) -> str:
    """Lower-case, each run outside ``[a-z0-9]`` to one ``-``, ends stripped, cut to 40, ``-`` stripped again.

    The second strip keeps a cut from leaving a trailing ``-`` (which would make
    ``--`` before the hash in the slug).
    """
    out: list[str] = []
    for char in name.lower():
        if "a" <= char <= "z" or "0" <= char <= "9":
            out.append(char)
        elif not out or out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-")[:_NAME_LIMIT].rstrip("-") or "project"


def project_slug(project_path: str) -> str:
    """``<sanitized name>-<12 hex of SHA-256(path)>`` for a canonical project path."""
    digest = hashlib.sha256(project_path.encode("utf-8", "surrogateescape")).hexdigest()
    name = os.path.basename(project_path) or project_path
    return f"{sanitize_project_name(name)}-{digest[:_HASH_CHARS]}"


def project_note_path(codex_home: str | os.PathLike, slug: str) -> str:
    """``<home>/memory/projects/<slug>/memory.md``."""
    return os.path.join(os.fspath(codex_home), "memory", "projects", slug, "memory.md")


def note_project_line(text: str) -> str | None:
    """The value of the note's first ``Project:`` line (trimmed), or None when it has none."""
    for line in text.split("\n"):
        if line.startswith("Project:"):
            from memcite.readpath.note_format import project_from_line

            return project_from_line(rust_trim(line[len("Project:") :]))
    return None


@dataclass(frozen=True)
class ProjectNote:
    """The note found for a working directory, or why there is none to use.

    ``status``: ``found`` (``text`` is set), ``missing`` (no note), or
    ``collision`` (a note whose ``Project:`` is another path or absent; not used).
    """

    project_root: str
    slug: str
    path: str
    status: str
    recorded_project: str | None = None
    data: bytes | None = None  # raw bytes of a found or colliding note

    @property
    def problem(self) -> str | None:
        """A sentence for the user when the note exists but cannot be used."""
        if self.status != "collision":
            return None
        if self.recorded_project is None:
            return (
                f"{self.path}: the project note has no 'Project:' line, so it cannot be checked "
                f"against {self.project_root}; not used (add 'Project: {self.project_root}')"
            )
        return (
            f"{self.path}: the project note belongs to {self.recorded_project!r}, not "
            f"{self.project_root!r} (a slug collision or a moved project); not used"
        )


def check_note(project_root: str, slug: str, path: str, text: str, data: bytes) -> ProjectNote:
    """Classify a note's text against the project it was looked up for."""
    recorded = note_project_line(text)
    status = "found" if recorded == project_root else "collision"
    return ProjectNote(project_root, slug, path, status, recorded, data)


# --------------------------------------------------------------------------- scopes
# Where the global and session notes live beside the project notes (docs/memory-layout.md).


def check_session_id(session: str) -> str:
    """A session id usable as a folder name: letters, digits, ``.``, ``_``, ``-``; 1-128 chars."""
    from memcite.secrets import mask_secrets

    masked = mask_secrets(session or "")
    if masked != (session or ""):  # it would be a folder name, a note's line and a log's key
        raise InputError(f"--session: {masked!r} looks like a secret, not a session id; "
                         "nothing was written")
    if not _SESSION_RE.match(session or "") or session in (".", ".."):
        raise InputError(f"--session: {session!r} is not a session id (letters, digits, '.', "
                         "'_' and '-', at most 128, starting with a letter or digit)")
    return session


def check_scope(scope: str, session: str | None) -> None:
    """Refuse an unknown scope, and the session scope without a session id (exit 2)."""
    if scope not in SCOPES:
        raise InputError(f"--scope: {scope!r} is not one of global, project, session")
    if scope == "session":
        if not session:
            raise InputError("the session scope needs a session id",
                             hint="pass --session ID or set MEMCITE_SESSION")
        check_session_id(session)


def parse_scopes(value: str) -> tuple[str, ...]:
    """``global,session`` → the scopes named, most specific first, each once (exit 2 if unknown)."""
    named = [part.strip() for part in value.split(",") if part.strip()]
    if not named:
        raise InputError("--scopes: name at least one of global, project, session")
    for scope in named:
        if scope not in SCOPES:
            raise InputError(f"--scopes: {scope!r} is not one of global, project, session")
    return tuple(scope for scope in SCOPES if scope in named)


def scope_note_dir(home: str, scope: str, *, slug: str, session: str | None = None) -> str:
    """The folder of a scope's ``memory.md`` under the Codex home ``home``."""
    memory = os.path.join(home, "memory")
    if scope == "global":
        return os.path.join(memory, "global")
    if scope == "session":
        return os.path.join(memory, "sessions", session or "")
    return os.path.join(memory, "projects", slug)


def scope_archive_dir(home: str, scope: str, *, slug: str, session: str | None = None) -> str:
    """Where a scope's archived notes and entries go: ``archive/<slug>``, ``archive/global``,
    ``archive/sessions/<id>`` (a session id could look like a project slug, so it has a folder
    of its own)."""
    archive = os.path.join(home, "memory", "archive")
    if scope == "global":
        return os.path.join(archive, "global")
    if scope == "session":
        return os.path.join(archive, "sessions", session or "")
    return os.path.join(archive, slug)
