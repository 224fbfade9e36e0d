"""Where a project's note lives, and writing it safely: private modes, atomic writes, one lock.

Folders are 0700 and files 0600 whatever the umask, checked with ``stat`` after
every create, write and move; a folder found wider is tightened and the fact
returned. When a mode cannot be applied or verified nothing is written
(``permissions``); when the memory folder cannot be written at all, ``not-writable``.
Writes go to a temporary file beside the target (created 0600, flushed, synced,
mode checked), renamed over it, the folder synced, then read back and compared.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from memcite.durable_files import fsync_folder, remove_stale_temporaries
from memcite.notes.refusals import NoteRefusal
from memcite.readpath.projects import (
    canonical_path,
    check_scope,
    find_project_root,
    project_slug,
    scope_archive_dir,
    scope_note_dir,
)

DIR_MODE = 0o700
FILE_MODE = 0o600
NOTE_FILE = "memory.md"
MAX_NOTE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class NoteLocation:
    """Everything that names a project's note: computed from a working directory and a Codex home."""

    cwd: str
    project: str  # the canonical project folder (the git work tree root, else cwd)
    slug: str
    home: str  # the Codex home
    memory_dir: str  # <home>/memory
    project_dir: str  # <home>/memory/projects/<slug>
    note_file: str
    archive_dir: str  # <home>/memory/archive/<slug>

    project_folder: str = ""  # the project folder as the working directory names it
    scope: str = "project"  # project, global or session (project_dir then holds that note)
    session: str | None = None  # the session id (session scope)

    @property
    def owner(self) -> str:
        """What the note's owner line must say: the project's path, ``global`` or the session id."""
        return {"project": self.project, "global": "global"}.get(self.scope, self.session or "")

    @property
    def log_slug(self) -> str:
        """The name the change log files this note's changes under."""
        if self.scope == "global":
            return "global"
        if self.scope == "session":
            return f"session/{self.session}"
        return self.slug

    def to_json(self) -> dict:
        return {"cwd": self.cwd, "project_folder": self.project_folder or self.project,
                "project": self.project, "slug": self.slug, "scope": self.scope,
                "session": self.session,
                "note_file": self.note_file, "archive_dir": self.archive_dir,
                "exists": os.path.isfile(self.note_file)}


def locate_note(cwd: str, home: str, *, scope: str = "project",
                session: str | None = None) -> NoteLocation:
    """The note of ``scope`` seen from ``cwd`` under the Codex home ``home``: the project's
    (the project holding ``cwd``), the global one, or the session ``session``'s."""
    check_scope(scope, session)
    named = os.path.abspath(cwd)
    cwd = canonical_path(cwd)
    project = find_project_root(cwd)
    check_project_path(project)
    folder = _as_named(named, cwd, project)
    slug = project_slug(project)
    home = os.path.abspath(home)
    memory = os.path.join(home, "memory")
    note_dir = scope_note_dir(home, scope, slug=slug, session=session)
    return NoteLocation(cwd, project, slug, home, memory, note_dir,
                        os.path.join(note_dir, NOTE_FILE),
                        scope_archive_dir(home, scope, slug=slug, session=session), folder,
                        scope, session if scope == "session" else None)


def check_project_path(project: str) -> None:
    """Refuse a project whose path a note cannot name faithfully on its ``Project:`` line, before
    anything is written: not UTF-8 (the change log could not store it), a control character (a
    newline would write a line of its own into the note), or what looks like a secret."""
    from memcite.errors import InputError

    if not project.isascii():
        try:
            project.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"{project.encode('utf-8', 'backslashreplace').decode()}: the "
                             "project folder's path is not valid UTF-8; memcite keeps no note for it",
                             hint="rename the folder, or run from a folder whose path is UTF-8") from None
    # A tab is kept (the Project: line then names the path as a JSON string); a newline or
    # another control character could forge a line of the note or of what is shown: refused.
    if any((ord(char) < 32 and char != "\t") or ord(char) == 127 or 0x80 <= ord(char) < 0xA0
           or char in "\u2028\u2029" for char in project):
        raise InputError(f"{project!r}: the project folder's path holds a control character "
                         "(a newline, say); memcite keeps no note for it",
                         hint="rename the folder")
    from memcite.secrets import mask_secrets

    masked = mask_secrets(project)
    if masked != project:
        raise NoteRefusal("secret", f"{masked}: the project folder's path looks like it holds a "
                          "secret; memcite keeps no note for it (the path would be written into "
                          "the note and the change log)", path=masked)


def _as_named(named: str, canonical_cwd: str, project: str) -> str:
    """The project folder in the words of the working directory given (a symlinked path kept),
    when going up as many levels from it leads to the same folder; else the canonical path."""
    levels = canonical_cwd.count(os.sep) - project.count(os.sep) if project != "/" else \
        canonical_cwd.count(os.sep)
    folder = named.rstrip(os.sep) or os.sep
    for _ in range(max(levels, 0)):
        folder = os.path.dirname(folder)
    return folder if canonical_path(folder) == project else project


# --------------------------------------------------------------------------- modes


def _mode(path: str) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _permissions(path: str, wanted: int, found: int) -> NoteRefusal:
    return NoteRefusal(
        "permissions",
        f"{path}: mode {found:04o} where {wanted:04o} is required, and it could not be set "
        "(the file system may not support Unix modes); nothing was saved",
        path=path, mode=f"{found:04o}", required=f"{wanted:04o}",
    )


def _not_writable(path: str, exc: OSError | None = None) -> NoteRefusal:
    why = f" ({exc.strerror})" if exc is not None and exc.strerror else ""
    return NoteRefusal(
        "not-writable",
        f"{path}: the memory folder cannot be written{why}; nothing was saved. "
        "Save the proposed note yourself, or make the folder writable (memcite never changes "
        "permissions beyond its own folders' modes)",
        path=path,
    )


def ensure_private_dir(path: str, root: str) -> list[str]:
    """Create ``path`` and its missing parents up to ``root`` (inclusive) as 0700; return the
    folders found wider than 0700 and tightened. ``root``'s own parent must exist."""
    tightened: list[str] = []
    chain = []
    current = os.path.abspath(path)
    root = os.path.abspath(root)
    while True:
        chain.append(current)
        if current == root or os.path.dirname(current) == current:
            break
        current = os.path.dirname(current)
    for folder in reversed(chain):
        try:
            os.mkdir(folder, DIR_MODE)
            created = True
        except FileExistsError:
            created = False
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise _not_writable(os.path.dirname(folder), exc) from None
            raise
        if not os.path.isdir(folder) or os.path.islink(folder):
            raise NoteRefusal("permissions", f"{folder}: not a folder (or a symbolic link); "
                              "nothing was saved", path=folder)
        found = _mode(folder)
        if found != DIR_MODE:
            try:
                os.chmod(folder, DIR_MODE)
            except OSError as exc:
                if exc.errno == errno.EROFS:
                    raise _not_writable(folder, exc) from None
                raise _permissions(folder, DIR_MODE, found) from None
            now = _mode(folder)
            if now != DIR_MODE:
                raise _permissions(folder, DIR_MODE, now)
            if not created:
                tightened.append(folder)
    if not os.access(path, os.W_OK | os.X_OK):
        raise _not_writable(path)
    return tightened


def check_private_file(path: str) -> None:
    """A note or archived file must be 0600: set it if needed, then verify."""
    found = _mode(path)
    if found == FILE_MODE:
        return
    try:
        os.chmod(path, FILE_MODE)
    except OSError:
        raise _permissions(path, FILE_MODE, found) from None
    now = _mode(path)
    if now != FILE_MODE:
        raise _permissions(path, FILE_MODE, now)


# --------------------------------------------------------------------------- files


def read_file(path: str) -> bytes | None:
    """A note's bytes (None when there is none); only regular files, at most ``MAX_NOTE_BYTES``."""
    from memcite.untrusted import clear_nonblock

    try:  # O_NONBLOCK: a FIFO planted as the note must not hang the command
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NoteRefusal("permissions", f"{path}: a symbolic link, not a note; left alone",
                              path=path) from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise NoteRefusal("not-writable", f"{path}: the note cannot be read ({exc.strerror}); "
                              "nothing was changed. Make it readable by you (memcite keeps notes "
                              "0600), then run the command again", path=path) from None
        raise
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise NoteRefusal("permissions", f"{path}: not a regular file; left alone", path=path)
        clear_nonblock(handle.fileno())
        data = handle.read(MAX_NOTE_BYTES + 1)
    if len(data) > MAX_NOTE_BYTES:
        from memcite.errors import InputError

        raise InputError(f"{path}: larger than {MAX_NOTE_BYTES} bytes; not a note memcite reads")
    return data


def decode(path: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        from memcite.errors import InputError

        raise InputError(f"{path}: not UTF-8 (byte {exc.start})",
                         hint="fix the file by hand; memcite does not rewrite what it cannot read") \
            from None


def atomic_write(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data``: temporary file (0600) beside it, synced, renamed, verified."""
    folder = os.path.dirname(path)
    # What a run killed mid-write left here (a full copy of the note) goes first.
    remove_stale_temporaries(folder, {os.path.basename(path)})
    temp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     FILE_MODE)
    except FileExistsError:
        os.unlink(temp)  # left by a crashed run of this same process id
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise _not_writable(folder, exc) from None
        raise
    try:
        try:
            os.fchmod(fd, FILE_MODE)
        except OSError:
            pass
        found = stat.S_IMODE(os.fstat(fd).st_mode)
        if found != FILE_MODE:
            raise _permissions(path, FILE_MODE, found)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(temp)
        raise
    os.close(fd)
    try:
        os.replace(temp, path)
    except OSError:
        os.unlink(temp)
        raise
    fsync_folder(folder)
    check_private_file(path)
    if read_file(path) != data:
        raise NoteRefusal("not-writable", f"{path}: reading the note back did not give what was "
                          "written; check the disk", path=path)


def move_file(source: str, target: str) -> None:
    """Move a note into or out of the archive without overwriting anything, then verify 0600."""
    if os.path.lexists(target):
        raise FileExistsError(errno.EEXIST, "already exists", target)
    try:
        os.link(source, target)
        os.unlink(source)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EROFS):
            raise _not_writable(os.path.dirname(target), exc) from None
        if exc.errno == errno.EEXIST:
            raise
        os.rename(source, target)  # a file system without hard links
    fsync_folder(os.path.dirname(target))
    fsync_folder(os.path.dirname(source))
    check_private_file(target)


# --------------------------------------------------------------------------- lock


@contextmanager
def locked(folder: str) -> Iterator[None]:
    """An exclusive lock on ``folder`` (``flock`` on the folder itself: no lock file) while
    a note is read, merged and written, so that concurrent saves both land."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
