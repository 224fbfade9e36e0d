"""Project folders compared as Codex's files write them, on any system.

A thread's ``cwd`` comes from the machine that ran it: a POSIX path, or a Windows one
(``Z:\\Smart School ERP``), often with Windows' extended-length prefix ``\\\\?\\`` that Rust's
``std::fs::canonicalize`` adds (``\\\\?\\C:\\work``, ``\\\\?\\UNC\\server\\share``). A task group of
``MEMORY.md`` names its folder as the consolidation model wrote it, usually without the
prefix. Two spellings name the same folder when they are equal once the prefix is dropped,
separators are one kind and (for a Windows path, whose file system ignores case) case is
folded. Pure functions: nothing here touches the file system.
"""

from __future__ import annotations

import posixpath
import re

_DRIVE = re.compile(r"^[A-Za-z]:(?:[\\/]|$)")


def windows_form(path: str) -> bool:
    """Whether ``path`` is written as a Windows path: a drive (``C:\\``) or a UNC name."""
    path = path.strip()
    return bool(_DRIVE.match(path)) or path.startswith(("\\\\", "//?/"))


def comparable(path: str) -> str:
    """``path`` in one spelling per folder: the ``\\\\?\\`` prefix dropped, separators and case
    folded for a Windows path, ``normpath`` for a POSIX one; quotes and backticks around it and
    a trailing separator left out."""
    path = path.strip().strip("`'\"").strip()
    for prefix, keep in (("\\\\?\\UNC\\", "\\\\"), ("//?/UNC/", "\\\\"), ("\\\\?\\", ""),
                         ("//?/", ""), ("\\\\.\\", "")):
        if path[:len(prefix)].upper() == prefix.upper():
            path = keep + path[len(prefix):]
            break
    if not windows_form(path):
        return posixpath.normpath(path) if path else ""
    unc = path.startswith(("\\\\", "//"))
    parts = [part for part in re.split(r"[\\/]+", path) if part and part != "."]
    out: list[str] = []
    for part in parts:
        if part == ".." and out and not _DRIVE.match(out[-1] + "\\"):
            out.pop()
        elif part != "..":
            out.append(part)
    joined = "\\".join(out)
    if unc:
        return "\\\\" + joined.casefold()
    if len(out) == 1:  # the drive alone: C:\
        joined += "\\"
    return joined.casefold()


def inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or a folder inside it, each as ``comparable`` spells it."""
    path, root = comparable(path), comparable(root)
    if not path or not root:
        return False
    if path == root:
        return True
    sep = "\\" if windows_form(root) or root.startswith("\\\\") else "/"
    return path.startswith(root.rstrip(sep) + sep)


MAX_GIT_CONFIG = 256 * 1024


def git_origin(folder: str) -> str | None:
    """The ``origin`` remote's URL of the git repository at ``folder`` (its ``.git/config``,
    or a worktree's through its ``.git`` file's ``gitdir:``), read as text, no git run; None
    when there is none. Reads at most ``MAX_GIT_CONFIG`` bytes of each file."""
    import os

    dot_git = os.path.join(folder, ".git")
    try:
        if os.path.isfile(dot_git):
            with open(dot_git, encoding="utf-8", errors="replace") as handle:
                line = handle.read(4096).strip()
            if not line.startswith("gitdir:"):
                return None
            gitdir = os.path.join(folder, line.split(":", 1)[1].strip())
            common = os.path.join(gitdir, "commondir")
            if os.path.isfile(common):
                with open(common, encoding="utf-8", errors="replace") as handle:
                    gitdir = os.path.join(gitdir, handle.read(4096).strip())
            dot_git = gitdir
        with open(os.path.join(dot_git, "config"), encoding="utf-8", errors="replace") as handle:
            text = handle.read(MAX_GIT_CONFIG)
    except OSError:
        return None
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line
        elif section is not None and re.fullmatch(r'\[remote\s+"origin"\]', section) \
                and re.match(r"url\s*=", line):
            return line.split("=", 1)[1].strip() or None
    return None


def repository_key(url: str | None) -> str | None:
    """A remote URL as one spelling per repository: ``git@host:org/repo.git``,
    ``https://user@host/org/repo`` and ``ssh://git@host/org/repo/`` are ``host/org/repo``
    (the host's case folded)."""
    if not url or not url.strip():
        return None
    url = url.strip()
    scp = re.fullmatch(r"(?:[^@/\s]+@)?([^:/\s]+):(?!//)(.+)", url)
    if scp and "://" not in url:
        host, path = scp.groups()
    else:
        rest = url.split("://", 1)[-1]
        host, _, path = rest.partition("/")
        host = host.rsplit("@", 1)[-1].split(":", 1)[0]
    path = path.strip("/").removesuffix(".git").strip("/")
    return f"{host.casefold()}/{path}" if host and path else None


__all__ = ["comparable", "git_origin", "inside", "repository_key", "windows_form"]
