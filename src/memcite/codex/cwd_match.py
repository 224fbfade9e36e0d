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


__all__ = ["comparable", "inside", "windows_form"]
