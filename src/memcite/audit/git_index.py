"""Which files a project tracks, read from its git index (``.git/index``), never by running git.

A file the thread read inside its project is the project's own words only when the project
tracks it: a file dropped into the folder (a download, a generated report, a file another
tool wrote) is no convention of the project's (``memcite.judgement.origin``: ``outside``).
When the project's folder is on this machine and is a git work tree, ``tracked_files(cwd)``
reads its index: the format git documents (``Documentation/gitformat-index.txt``), versions
2, 3 and 4, SHA-1 or SHA-256 object names. Running git in a folder an agent can write would
run what its config names (``core.fsmonitor``), so the file is parsed here, bounded, as
untrusted data. Anything this reader cannot vouch for (no ``.git`` folder, a ``.git`` file of
a linked work tree, a split or sparse index, a damaged or oversized file) gives None: the
caller then judges by path, as without git.
"""

from __future__ import annotations

import bisect
import os
import posixpath
import struct
from dataclasses import dataclass

MAX_INDEX_BYTES = 64 * 1024 * 1024
MAX_ENTRIES = 2_000_000
MAX_CONFIG_BYTES = 512 * 1024
MAX_DEPTH = 64  # folders walked up from the cwd to find the work tree's root
_DIRECTORY_MODE = 0o040000


@dataclass(frozen=True, slots=True)
class TrackedFiles:
    """The paths a work tree's index holds (``/``-separated, relative to ``root``)."""

    root: str
    paths: tuple[str, ...]  # sorted
    stamp: tuple  # the index file's (size, mtime_ns, ctime_ns, inode): a key for verdicts

    def tracked(self, path: str, cwd: str | None) -> bool | None:
        """Whether ``path`` (as a command wrote it: relative to ``cwd``, absolute or ``~/``)
        is tracked, or is a folder holding tracked files; None when it is outside the tree."""
        path = os.path.expanduser(path)
        full = os.path.normpath(os.path.join(cwd or self.root, path))
        try:
            relative = os.path.relpath(full, self.root)
        except ValueError:  # another drive
            return None
        if relative == os.curdir:
            return True
        relative = relative.replace(os.sep, "/")
        if relative.startswith("../") or relative == os.pardir or posixpath.isabs(relative):
            return None
        at = bisect.bisect_left(self.paths, relative)
        if at < len(self.paths) and self.paths[at] == relative:
            return True
        folder = relative + "/"
        at = bisect.bisect_left(self.paths, folder)
        return at < len(self.paths) and self.paths[at].startswith(folder)


def work_tree_root(cwd: str) -> str | None:
    """The folder holding ``.git`` (a folder, not a linked work tree's file) at or above ``cwd``."""
    folder = os.path.abspath(cwd)
    for _ in range(MAX_DEPTH):
        git = os.path.join(folder, ".git")
        if os.path.lexists(git):
            return folder if os.path.isdir(git) and not os.path.islink(git) else None
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def _hash_size(git_folder: str) -> int:
    """20 for SHA-1 repositories, 32 for ``extensions.objectFormat = sha256``."""
    from memcite.untrusted import read_small_text

    config = read_small_text(os.path.join(git_folder, "config"), MAX_CONFIG_BYTES) or ""
    squeezed = config.lower().replace(" ", "").replace("\t", "")
    return 32 if "objectformat=sha256" in squeezed else 20


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """git's offset varint (``varint.c``): the value and the position after it."""
    byte = data[at]
    at += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[at]
        at += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, at


def parse_index(data: bytes, hash_size: int = 20) -> list[str] | None:
    """The paths of an index file's entries, or None when it is not one this reader vouches for
    (damaged, another version, split or sparse)."""
    try:
        return _parse(data, hash_size)
    except (IndexError, struct.error, UnicodeDecodeError, ValueError):
        return None


def _parse(data: bytes, hash_size: int) -> list[str] | None:
    if len(data) < 12 + hash_size or data[:4] != b"DIRC":
        return None
    version, count = struct.unpack(">II", data[4:12])
    if version not in (2, 3, 4) or count > MAX_ENTRIES:
        return None
    end_of_data = len(data) - hash_size
    at, previous, paths = 12, b"", []
    fixed = 40 + hash_size + 2  # stat data (ten 32-bit fields), object name, flags
    for _ in range(count):
        start = at
        mode = struct.unpack(">I", data[at + 24:at + 28])[0]
        flags = struct.unpack(">H", data[at + 40 + hash_size:at + fixed])[0]
        at += fixed
        if flags & 0x4000:  # extended flags (version 3 and later)
            if version < 3:
                return None
            at += 2
        if version == 4:
            strip, at = _varint(data, at)
            if strip > len(previous):
                return None
            stop = data.index(b"\x00", at)
            name = previous[:len(previous) - strip] + data[at:stop]
            at = stop + 1
        else:
            stop = data.index(b"\x00", at)
            name = data[at:stop]
            at = start + ((stop - start) // 8 + 1) * 8  # 1 to 8 NULs: a multiple of 8
        if at > end_of_data or (mode & 0o170000) == _DIRECTORY_MODE:  # a sparse index's folder
            return None
        paths.append(name.decode("utf-8"))
        previous = name
    while at + 8 <= end_of_data:  # extensions: a split index holds only part of the entries
        signature, size = data[at:at + 4], struct.unpack(">I", data[at + 4:at + 8])[0]
        if signature in (b"link", b"sdir"):
            return None
        at += 8 + size
    return paths if at == end_of_data else None


def tracked_files(cwd: str | None) -> TrackedFiles | None:
    """The files the work tree at or above ``cwd`` tracks, or None (see the module's docstring)."""
    from memcite.untrusted import open_regular

    if not cwd or not os.path.isabs(cwd) or not os.path.isdir(cwd):
        return None
    root = work_tree_root(cwd)
    if root is None:
        return None
    git_folder = os.path.join(root, ".git")
    try:
        fd = open_regular(os.path.join(git_folder, "index"), flags=getattr(os, "O_NOFOLLOW", 0))
    except (OSError, ValueError):
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if info.st_size > MAX_INDEX_BYTES:
            return None
        data = handle.read(MAX_INDEX_BYTES + 1)
    paths = parse_index(data, _hash_size(git_folder))
    if paths is None:
        return None
    stamp = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
    return TrackedFiles(root, tuple(sorted(set(paths))), stamp)
