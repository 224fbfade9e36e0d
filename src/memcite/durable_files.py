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
