"""What every durable write of a person's files shares: folders created private, a folder's
entry synced after a rename (see docs/memory-layout.md on modes and atomic writes), and
writes that never follow a link planted in a folder an agent can write."""

from __future__ import annotations

import errno
import os

from memcite.errors import MemciteError


def make_private_folders(folder: str) -> None:
    """``os.makedirs``, but every folder it creates is 0700 whatever the umask (``makedirs``
    gives only the last one the mode): these folders hold a person's memories."""
    if os.path.isdir(folder):
        return
    make_private_folders(os.path.dirname(folder))
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass


def fsync_folder(folder: str) -> None:
    """Sync a folder so that a rename in it survives a crash (best effort: some file systems
    refuse; the file's own data was synced before)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- no link followed
#
# A folder an agent can write may hold a symbolic link anywhere, planted between two runs.
# Writes, renames and deletes therefore resolve their folder from a root the user chose,
# one folder descriptor at a time with O_NOFOLLOW, create new files with O_EXCL under
# unpredictable names, and refuse (exit 3, nothing touched) when a link stands in the way.

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class LinkRefused(MemciteError):
    """A symbolic link (or another file type) stands where memcite would write: nothing written."""

    exit_code = 3


def _refuse_link(path: str, what: str = "a symbolic link") -> LinkRefused:
    try:
        target = os.readlink(path)
        where = f" (to {target})"
    except OSError:
        where = ""
    return LinkRefused(f"{path} is {what}{where}; memcite does not write, rename or delete "
                       "through links, so nothing was written",
                       hint="replace the link by the file or folder itself, or make the change "
                       "by hand")


def open_folder(root: str, parts=(), *, create: bool = False, mode: int = 0o700) -> int:
    """A descriptor of ``root``/``parts``…, each part opened without following a link
    (``root`` itself is the user's choice and may be one); missing parts are made (``mode``)
    when ``create``. The caller closes it."""
    fd = os.open(root, os.O_RDONLY | DIRECTORY)
    path = root
    try:
        for part in parts:
            if part in ("", ".", "..") or "/" in part:
                raise LinkRefused(f"{os.path.join(path, part)}: not a plain folder name")
            path = os.path.join(path, part)
            try:
                child = os.open(part, os.O_RDONLY | DIRECTORY | NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, mode, dir_fd=fd)
                except FileExistsError:
                    pass
                child = os.open(part, os.O_RDONLY | DIRECTORY | NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if os.path.islink(path):
                    raise _refuse_link(path) from None
                if exc.errno == errno.ENOTDIR:
                    raise LinkRefused(f"{path} is not a folder; nothing was written") from None
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_own_folder(path: str, parts=(), *, create: bool = True) -> int:
    """A descriptor of memcite's own folder ``path``/``parts``… (a cache): ``path``'s last
    part and each of ``parts`` opened without following a link, made 0700 when missing
    (``create``), and owned by this user. A link there, or a folder another user owns, is
    refused (``LinkRefused``): memcite never writes or prunes a folder it did not make. The
    folders above ``path`` are the user's choice and may be links. The caller closes it."""
    path = os.path.abspath(path)
    parent, name = os.path.split(path)
    if create:
        make_private_folders(parent)
    fd = os.open(parent, os.O_RDONLY | DIRECTORY)
    where = parent
    try:
        for part in (name, *parts):
            if part in ("", ".", "..") or "/" in part:
                raise LinkRefused(f"{os.path.join(where, part)}: not a plain folder name")
            where = os.path.join(where, part)
            if create:
                try:
                    os.mkdir(part, 0o700, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                child = os.open(part, os.O_RDONLY | DIRECTORY | NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if _is_link_at(fd, part):
                    raise _refuse_link(where, "a symbolic link where memcite keeps its own "
                                              "folder") from None
                if exc.errno == errno.ENOTDIR:
                    raise LinkRefused(f"{where} is not a folder; nothing was written") from None
                raise
            os.close(fd)
            fd = child
            if os.fstat(fd).st_uid != os.geteuid():
                raise LinkRefused(f"{where} belongs to another user; memcite keeps its own "
                                  "files only in a folder of yours, so nothing was written",
                                  hint="remove it or set MEMCITE_CACHE_DIR to a folder of yours")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_file_at(folder_fd: int, name: str, path: str, limit: int) -> bytes | None:
    """The bytes of the regular file ``name`` in the folder (None when absent), read without
    following a link or blocking on a FIFO; a larger file than ``limit`` is refused."""
    from memcite.untrusted import clear_nonblock, not_regular

    try:
        fd = os.open(name, os.O_RDONLY | NOFOLLOW | _NONBLOCK, dir_fd=folder_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if _is_link_at(folder_fd, name):
            raise _refuse_link(path) from None
        raise OSError(exc.errno, exc.strerror, path) from None
    try:
        kind = not_regular(os.fstat(fd).st_mode)
        if kind is not None:
            raise LinkRefused(f"{path} is {kind}, not a regular file; left untouched")
        clear_nonblock(fd)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise LinkRefused(f"{path}: larger than {limit} bytes; left untouched")
    return b"".join(chunks)


def _is_link_at(folder_fd: int, name: str) -> bool:
    import stat

    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def create_file_at(folder_fd: int, name: str, data: bytes, mode: int) -> None:
    """A new file ``name`` holding ``data``, synced; never an existing name, never through a
    link (``FileExistsError`` when the name is taken)."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, mode, dir_fd=folder_fd)
    try:
        os.fchmod(fd, mode)  # exactly ``mode``, whatever the umask
        _write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(name, dir_fd=folder_fd)
        raise
    os.close(fd)


def unique_name(prefix: str, suffix: str = "") -> str:
    """``prefix`` + an unpredictable part + ``suffix``: no one can plant a link under it first."""
    import secrets

    return f"{prefix}{secrets.token_hex(6)}{suffix}"


def replace_file_at(folder_fd: int, name: str, data: bytes, path: str, mode: int) -> None:
    """Replace (or create) the file ``name`` with ``data``: an unpredictable temporary file
    beside it, synced, renamed over it, the folder synced, read back. A link at ``name`` is
    refused, not followed and not replaced."""
    if _is_link_at(folder_fd, name):
        raise _refuse_link(path)
    remove_stale_temporaries(folder_fd, {name})
    temporary = unique_name(f".{name}.memcite-", ".tmp")
    create_file_at(folder_fd, temporary, data, mode)
    try:
        if _is_link_at(folder_fd, name):  # planted meanwhile
            raise _refuse_link(path)
        os.replace(temporary, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=folder_fd)
        except OSError:
            pass
        raise
    try:
        os.fsync(folder_fd)
    except OSError:
        pass
    if read_file_at(folder_fd, name, path, max(len(data), 1)) != data:
        raise MemciteError(f"{path}: the file read back differs from what was written",
                           hint="another program may be editing it; run the command again")


# --------------------------------------------------------------------------- appending a line


def append_line(fd: int, line: bytes) -> bytes:
    """Append ``line`` (one record, ending in a newline) to the file open at ``fd``
    (``O_RDWR | O_APPEND``) on a line of its own: when the file's last byte is not a newline
    (a hand edit, a crash mid-write), a newline goes first, so the record is never glued to
    the end of a line that is not one. One ``write``; the bytes written are returned."""
    if not line.endswith(b"\n"):
        line += b"\n"
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        line = b"\n" + line
    _write_all(fd, line)
    return line


# --------------------------------------------------------------------------- stale temporaries
#
# A run killed between creating its temporary file and renaming it leaves the temporary
# behind: a full copy of what it was writing (a note, a cache). memcite removes its own:
# a name it gives (``.<name>.memcite-<12 hex>.tmp``, or ``.<name>.<pid>.tmp``,
# ``<name>.<pid>.tmp`` and ``.<name>.memcite-tmp`` from older writers), a regular file of
# the user's with one link, left for more than a minute, whose process is gone (or which
# is a day old). Nothing else is touched: not a link, not another user's file, not a name memcite does not give.

STALE_AFTER_SECONDS = 60
ABANDONED_AFTER_SECONDS = 24 * 3600
_TEMPORARY_RE = None


def _temporary_parts(entry: str) -> tuple[str, int | None] | None:
    """``(target name, pid or None)`` of a temporary file name memcite gives; else None."""
    global _TEMPORARY_RE
    if entry.startswith(".") and entry.endswith(".memcite-tmp") and len(entry) > 13:
        return entry[1:-len(".memcite-tmp")], None  # forget's notes
    if not entry.endswith(".tmp"):
        return None
    if _TEMPORARY_RE is None:
        import re

        _TEMPORARY_RE = re.compile(r"(\.?)(.+)\.(?:memcite-([0-9a-f]{12})|([0-9]{1,10}))\.tmp\Z")
    found = _TEMPORARY_RE.match(entry)
    if found is None or (found.group(3) and not found.group(1)):
        return None
    return found.group(2), int(found.group(4)) if found.group(4) else None


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError, OSError):
        return False  # alive (another user's), or not a number this system has
    return False


def remove_stale_temporaries(folder: str | int, targets=None, *, dotted: bool = True,
                             now: float | None = None) -> list[str]:
    """Remove the temporary files memcite left in ``folder`` (a path, or a folder's
    descriptor) for the file names in ``targets`` (else for any name) when their run is over
    (see above); ``dotted``: the hidden form ``.<name>…`` (notes, durable writes), else
    ``<name>.<pid>.tmp`` (caches). The names removed; a folder that cannot be listed is left
    alone."""
    import stat
    import time

    now = time.time() if now is None else now
    removed: list[str] = []
    at = folder if isinstance(folder, int) else None
    try:
        entries = os.listdir(folder)
    except OSError:
        return removed
    for entry in entries:
        parts = _temporary_parts(entry)
        if parts is None or entry.startswith(".") != dotted:
            continue
        target, pid = parts
        if targets is not None and target not in targets:
            continue
        path = entry if at is not None else os.path.join(folder, entry)
        try:
            info = os.lstat(path, dir_fd=at)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or \
                info.st_uid != os.getuid() or pid == os.getpid():
            continue
        age = now - info.st_mtime
        if age < STALE_AFTER_SECONDS:
            continue
        if pid is not None and not _process_gone(pid) and age < ABANDONED_AFTER_SECONDS:
            continue
        try:
            os.unlink(path, dir_fd=at)  # a link planted meanwhile is removed, never followed
        except OSError:
            continue
        removed.append(entry)
    return removed


def kept_mode(folder_fd: int, name: str, default: int) -> int:
    """The mode a new version of ``name`` gets: the file's own when it is a regular file of
    this user's (their choice), else ``default``: a page or file another user owns (root's
    0666 report) is never given its loose mode by memcite."""
    import stat

    try:
        found = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return default
    if stat.S_ISREG(found.st_mode) and found.st_uid == os.geteuid():
        return stat.S_IMODE(found.st_mode)
    return default


def write_file(path: str, data: bytes, *, mode: int = 0o600, keep_mode: bool = True) -> None:
    """Create or replace ``path`` with ``data`` as every memcite writer must: its folder
    opened (the user's choice, which may be a link), a link at the name refused, the data in
    an unpredictable ``O_EXCL`` temporary file beside it, synced, renamed, read back. A new
    file gets ``mode``; a file being replaced keeps its own (``kept_mode``) unless not
    ``keep_mode``. ``LinkRefused`` (exit 3) or ``OSError`` when it cannot be written."""
    folder, name = os.path.split(os.path.abspath(path))
    if os.open not in os.supports_dir_fd:  # Windows: no folder descriptors, no links to plant
        temporary = os.path.join(folder, unique_name(f".{name}.memcite-", ".tmp"))
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                     mode)
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
        return
    folder_fd = open_folder(folder)
    try:
        if keep_mode:
            mode = kept_mode(folder_fd, name, mode)
        replace_file_at(folder_fd, name, data, path, mode)
    finally:
        os.close(folder_fd)
