"""The files of a memory folder as citations see them: opening a cited path without ever
leaving the folder, a file's lines by Rust's rule, and the hash of a range.

One module for the ledger (which hashes the cited lines when a reply is recorded),
the stats (which check them later) and sync (which reads the folder's own files), so
that all agree by construction. Light on purpose: ``memcite stats`` imports it on its
cold path.

Opening is race-free (``MemoryRoot``): the folder is held by a directory handle, a
cited path is opened from it one component at a time with ``O_NOFOLLOW`` (``openat``
through ``dir_fd``), and the file opened is checked with ``fstat`` (a regular file,
never a device, a FIFO or a folder) before a byte is read. A symlink is followed only
when its target, resolved the same way, stays inside the folder; so swapping a folder
for a symlink while memcite runs can make a path fail, never open a file outside.
Reads are capped (``read_capped``) and say when a file was larger than the cap.
"""

from __future__ import annotations

import errno
import os
import stat as stat_module
from array import array
from bisect import bisect_right
from itertools import accumulate, islice

from memcite.untrusted import CLOEXEC, NONBLOCK, clear_nonblock, open_regular  # noqa: F401 - open_regular: importable from here too

try:  # CPython's own SHA-256: the digests of hashlib's, without loading OpenSSL (~5 ms at start)
    from _sha256 import sha256  # 3.11
except ImportError:  # pragma: no cover - another Python
    try:
        from _sha2 import sha256  # 3.12 and later
    except ImportError:
        from hashlib import sha256

TYPE_CHECKING = False  # ``typing`` is for type checkers only: importing it costs start-up
if TYPE_CHECKING:
    from collections.abc import Iterator

# What ``locate`` (and ``MemoryRoot.open``) say of a cited path.
INSIDE = "ok"
OUTSIDE = "outside_root"
MISSING = "missing"

MAX_FILE_BYTES = 64 * 1024 * 1024  # what a citation check or a hash reads of one file
MAX_SYMLINKS = 40  # as Linux's own limit on links followed while resolving one path
_READ_CHUNK = 1 << 20

_SAFE = os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY")


# --------------------------------------------------------------------------- lines and hashes


def byte_lines(data: bytes) -> list[bytes]:
    """Rust's ``str::lines`` on bytes: split on LF, drop one CR before it, no empty last line."""
    if not data:
        return []
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return [line[:-1] if line.endswith(b"\r") else line for line in lines]


def lines_sha256(lines, line_start: int, line_end: int) -> str | None:
    """SHA-256 (hex) of ``lines[line_start..line_end]`` (1-based, inclusive) joined by LF;
    None when the range is reversed, starts at 0 or runs past the end."""
    if not 1 <= line_start <= line_end <= len(lines):
        return None
    if isinstance(lines, FileLines):
        return sha256(lines.span(line_start, line_end)).hexdigest()
    return sha256(b"\n".join(lines[line_start - 1 : line_end])).hexdigest()


def cited_lines_sha256(data: bytes, line_start: int, line_end: int) -> str | None:
    """``lines_sha256`` of a file's bytes: the hash the ledger records for a cited range."""
    return lines_sha256(FileLines(data), line_start, line_end)


class FileLines:
    """The lines of a file's bytes (``byte_lines``) without a Python object per line.

    Keeps the bytes and one 4- or 8-byte offset per line: a 64 MiB file of one-character
    lines costs about 200 MB rather than 2 GB. Sliced (``lines[a:b]``) and iterated like
    the list ``byte_lines`` returns.
    """

    __slots__ = ("data", "_ends")

    def __init__(self, data: bytes) -> None:
        self.data = data
        ends = array("I" if len(data) < 2**32 else "Q")
        # Per chunk, so that the temporary list of pieces stays small; each LF's offset is
        # the end of its line (a piece running over two chunks only moves the next LF).
        for start in range(0, len(data), _READ_CHUNK):
            pieces = data[start : start + _READ_CHUNK].split(b"\n")
            pieces.pop()
            ends.extend(islice(accumulate(map((1).__add__, map(len, pieces)),
                                          initial=start - 1), 1, None))
        if data and not data.endswith(b"\n"):  # a last line without LF
            ends.append(len(data))
        self._ends = ends  # the offset just past each line (its LF excluded)

    def __len__(self) -> int:
        return len(self._ends)

    def _line(self, index: int) -> bytes:
        start = self._ends[index - 1] + 1 if index else 0
        line = self.data[start : self._ends[index]]
        return line[:-1] if line.endswith(b"\r") else line

    def __getitem__(self, item):
        if isinstance(item, slice):
            return [self._line(i) for i in range(*item.indices(len(self)))]
        if item < 0:
            item += len(self)
        if not 0 <= item < len(self):
            raise IndexError("line index out of range")
        return self._line(item)

    def __iter__(self):
        for index in range(len(self)):
            yield self._line(index)

    def span(self, line_start: int, line_end: int) -> bytes:
        """Lines ``line_start..line_end`` (1-based, inclusive, within the file) joined by LF:
        one slice of the bytes, unless a CR in it may end a line (then line by line)."""
        begin = self._ends[line_start - 2] + 1 if line_start > 1 else 0
        chunk = self.data[begin : self._ends[line_end - 1]]
        if b"\r" in chunk:
            return b"\n".join(self[line_start - 1 : line_end])
        return chunk

    def windows(self, length: int) -> Iterator[bytes]:
        """``span(start, start + length - 1)`` for every start from the first line on, in
        order (none when ``length`` is below 1 or longer than the file)."""
        count = len(self) - length + 1
        if length < 1 or count < 1:
            return iter(())
        if b"\r" in self.data:
            return (b"\n".join(self[start : start + length]) for start in range(count))
        data, ends = self.data, self._ends
        starts = [0, *map((1).__add__, ends[: count - 1])]
        return map(data.__getitem__, map(slice, starts, ends[length - 1 :]))

    def line_number_at(self, offset: int) -> int:
        """The 1-based number of the line holding byte ``offset``."""
        return bisect_right(self._ends, offset - 1) + 1 if offset else 1


# --------------------------------------------------------------------------- reading, bounded


class ReadResult:
    """What a capped read got: the bytes, or None with ``too_large`` (the file's size)."""

    __slots__ = ("data", "size", "too_large")

    def __init__(self, data: bytes | None, size: int, too_large: bool) -> None:
        self.data = data
        self.size = size
        self.too_large = too_large


def read_capped(fd: int, max_bytes: int = MAX_FILE_BYTES, *, prefix: bool = False) -> ReadResult:
    """Read an open file to its end, at most ``max_bytes``; more than that is not kept.

    A larger file gives ``too_large`` with no data, or with ``prefix`` its first
    ``max_bytes`` (``size`` is then the file's size as ``fstat`` tells it).
    """
    parts = []
    total = 0
    while True:
        chunk = os.read(fd, min(_READ_CHUNK, max_bytes + 1 - total))
        if not chunk:
            break
        total += len(chunk)
        if total > max_bytes:
            if not prefix:
                return ReadResult(None, total, True)
            parts.append(chunk)
            data = b"".join(parts)[:max_bytes]
            return ReadResult(data, max(os.fstat(fd).st_size, total), True)
        parts.append(chunk)
    return ReadResult(b"".join(parts), total, False)


# --------------------------------------------------------------------------- the memory root


def split_cited_path(path: str) -> list[str] | None:
    """The components of a cited path, or None when its spelling alone leads outside the
    folder (empty, absolute, a drive, any ``..``)."""
    if not path or path.startswith(("/", "\\")) or os.path.isabs(path):
        return None
    parts = path.replace("\\", "/").split("/")
    if ".." in parts or (len(parts[0]) >= 2 and parts[0][1] == ":"):
        return None
    return [part for part in parts if part not in ("", ".")]


class MemoryRoot:
    """A handle on a memory folder: cited paths are opened inside it and nowhere else.

    ``real`` is the folder's real path (None when it is not a folder). Use as a context
    manager, or ``close()``: it holds a file descriptor.
    """

    def __init__(self, root: str | os.PathLike | None) -> None:
        self.real: str | None = None
        self._fd: int | None = None
        if root is None:
            return
        try:
            root = os.fspath(root)
            if _SAFE:
                self._fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | CLOEXEC)
                self.real = os.path.realpath(root)
            elif os.path.isdir(root):
                self.real = os.path.realpath(root)
        except (OSError, ValueError):
            self._fd = None
            self.real = None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> MemoryRoot:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: S110 - interpreter shutdown
            pass

    def open(self, path: str) -> tuple[str, int | None, list[str] | None]:
        """``(outcome, fd, parts)``: ``ok`` with an open fd on the regular file and its
        components as resolved inside the folder; else ``outside_root`` or ``missing``."""
        if self.real is None or "\x00" in path:  # a NUL byte names no file
            return MISSING, None, None
        parts = split_cited_path(path)
        if parts is None:
            return OUTSIDE, None, None
        if not parts:
            return MISSING, None, None
        try:
            return self._walk(parts) if _SAFE else self._open_by_name(parts)
        except (OSError, ValueError):  # ValueError: a name the file system cannot encode
            return MISSING, None, None

    def read(self, path: str, max_bytes: int = MAX_FILE_BYTES, *, prefix: bool = False
             ) -> tuple[str, ReadResult | None, tuple | None]:
        """``(outcome, read, stamp)``: the file's bytes read with a cap (see ``read_capped``),
        and its ``(dev, ino, size, mtime_ns)`` as opened."""
        outcome, fd, _parts = self.open(path)
        if fd is None:
            return outcome, None, None
        try:
            read, stamp = read_opened(fd, max_bytes, prefix=prefix)
            return outcome, read, stamp
        except OSError:
            return MISSING, None, None
        finally:
            os.close(fd)

    def stamp(self, path: str) -> tuple[str, tuple | None, list[str] | None]:
        """``(outcome, stamp, parts)`` of a cited path, reading nothing."""
        outcome, fd, parts = self.open(path)
        if fd is None:
            return outcome, None, None
        try:
            return outcome, _stamp(os.fstat(fd)), parts
        except OSError:
            return MISSING, None, None
        finally:
            os.close(fd)

    def _walk(self, parts: list[str]) -> tuple[str, int | None, list[str] | None]:
        """Open ``parts`` from the root, one component at a time, links resolved inside."""
        links = 0
        done: list[str] = []  # components opened so far, each a real folder in the root
        todo = list(parts)
        dir_fds = [os.dup(self._fd)]
        try:
            while todo:
                name = todo.pop(0)
                last = not todo
                flags = os.O_RDONLY | os.O_NOFOLLOW | CLOEXEC | NONBLOCK
                if not last:
                    flags |= os.O_DIRECTORY
                try:
                    fd = os.open(name, flags, dir_fd=dir_fds[-1])
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                        return MISSING, None, None
                    try:
                        target = os.readlink(name, dir_fd=dir_fds[-1])
                    except OSError:
                        return MISSING, None, None  # not a link: a file where a folder should be
                    links += 1
                    if links > MAX_SYMLINKS:
                        return MISSING, None, None
                    resolved = self._link_target(done, target)
                    if resolved is None:
                        return OUTSIDE, None, None
                    # Start again from the root with the link's target in place of the link.
                    todo = resolved + todo
                    done = []
                    for fd in dir_fds[1:]:
                        os.close(fd)
                    del dir_fds[1:]
                    if not todo:
                        return MISSING, None, None  # the link leads to the root itself
                    continue
                if last:
                    st = os.fstat(fd)
                    if not stat_module.S_ISREG(st.st_mode):
                        os.close(fd)
                        return MISSING, None, None
                    clear_nonblock(fd)
                    return INSIDE, fd, [*done, name]
                dir_fds.append(fd)
                done.append(name)
            return MISSING, None, None
        finally:
            for fd in dir_fds:
                os.close(fd)

    def _link_target(self, done: list[str], target: str) -> list[str] | None:
        """A link's target as components from the root, or None when it leads out."""
        if "\x00" in target or not target:
            return None
        if os.path.isabs(target):
            real = self.real.rstrip(os.sep) + os.sep
            if not target.startswith(real):
                return None
            pieces = target[len(real):].split("/")
            base: list[str] = []
        else:
            pieces = target.split("/")
            base = list(done)
        for piece in pieces:
            if piece in ("", "."):
                continue
            if piece == "..":
                if not base:
                    return None  # above the root
                base.pop()
            else:
                base.append(piece)
        return base

    def _open_by_name(self, parts: list[str]) -> tuple[str, int | None, list[str] | None]:
        """Where ``openat`` is missing (Windows): resolve by real path, then open."""
        real = os.path.realpath(os.path.join(self.real, *parts))
        inside = self.real.rstrip(os.sep) + os.sep
        if not real.startswith(inside):
            return OUTSIDE, None, None
        try:
            return INSIDE, open_regular(real), os.path.relpath(real, self.real).split(os.sep)
        except OSError:
            return MISSING, None, None


def _stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def read_opened(fd: int, max_bytes: int = MAX_FILE_BYTES, *, prefix: bool = False
                ) -> tuple[ReadResult, tuple[int, int, int, int]]:
    """A file opened by ``MemoryRoot.open`` read with a cap (see ``read_capped``; nothing is
    read when ``fstat`` already tells it is larger), and its ``(dev, ino, size, mtime_ns)``.
    Raises ``OSError``; the caller closes ``fd``."""
    st = os.fstat(fd)
    if st.st_size > max_bytes and not prefix:  # too large already: nothing to read
        return ReadResult(None, st.st_size, True), _stamp(st)
    return read_capped(fd, max_bytes, prefix=prefix), _stamp(st)


def locate(real_root: str, path: str) -> tuple[str, str | None]:
    """Where cited ``path`` leads in the memory folder whose real path is ``real_root``.

    ``("ok", real path)`` for a regular file inside the folder; ``("outside_root", None)``
    for an empty or absolute path, a drive, any ``..`` component, or a symlink leading
    out; ``("missing", None)`` otherwise. The path is opened the safe way
    (``MemoryRoot``) and closed again; nothing is read.
    """
    with MemoryRoot(real_root) as root:
        outcome, fd, parts = root.open(path)
        if fd is None:
            return outcome, None
        os.close(fd)
        return INSIDE, os.path.join(root.real, *parts)


def resolve_cited_path(root: str | os.PathLike, path: str) -> str | None:
    """The real path of a regular file ``path`` inside the memory folder ``root``, or None.

    Nothing outside ``root`` is ever opened (see ``MemoryRoot``).
    """
    return locate(os.path.realpath(os.fspath(root)), path)[1]


# A reply recorded this long after it was made had its cited ranges hashed from the memory
# folder's git history at the reply's time (memcite.ledger.memory_history), not from now.
LATE_HASH_SECONDS = 3600
