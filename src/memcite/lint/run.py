"""``memcite lint`` as a library: find the memory files under some paths, read them, run every check.

The thin part with I/O: files are read whole up to ``MAX_FILE_BYTES``, regular
files only, and a file that cannot be read is a finding, not a failure.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from memcite.display import count
from memcite.errors import InputError
from memcite.lint.entry_checks import check_entry_files
from memcite.lint.findings import ERROR, WARNING, Finding, sort_findings
from memcite.lint.findings import make_finding as _finding
from memcite.lint.folder_checks import (
    check_adhoc_name,
    check_import_scope,
    check_memory_summary,
    check_pointers,
    check_rollout_summary,
)
from memcite.untrusted import NotRegularFile, open_regular

V2_FOLDER = "memories_v2"  # Codex's memory store v2 (memcite.ledger.codex_home.MEMORY_STORES)

MAX_FILE_BYTES = 16 * 1024 * 1024


# --------------------------------------------------------------------------- files and folders


def default_paths(codex_home: str) -> list[str]:
    """What lint checks when no path is given: Codex's memory folder (of the store Codex reads)
    and memcite's notes folder, under the resolved Codex home ``codex_home``."""
    from memcite.ledger.codex_home import codex_memory_folder

    return [codex_memory_folder(codex_home), os.path.join(codex_home, "memory")]


@dataclass(frozen=True, slots=True)
class LintReport:
    """What ``lint_paths`` found, and how many files it read."""

    findings: tuple[Finding, ...]
    files: int

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == WARNING)


_CODEX_MARKERS = ("MEMORY.md", "memory_summary.md", "raw_memories.md", "rollout_summaries")
_SKIPPED_DIRS = ("archive", "skills", ".git")


# Codex imports another agent's memory (Claude Code's) here, one folder per project with a
# scope.json whose "cwd" scopes every file in it; the files keep that agent's own format.
IMPORTED = ("extensions", "external_agent_import", "resources")


def _imported_project(parts: tuple[str, ...]) -> bool:
    """Whether ``parts`` (a folder inside a linted folder) is one imported project's folder."""
    return len(parts) >= 4 and parts[-4:-1] == IMPORTED


def _kind(parts: tuple[str, ...], codex_folder: bool) -> str | None:
    """What a file is, from its path inside a linted folder: which checks it gets (None: none)."""
    name = parts[-1]
    if name.startswith("."):
        return None
    if len(parts) >= 4 and IMPORTED in (parts[i:i + 3] for i in range(len(parts) - 3)):
        # Another agent's memory, in its own format: only the project's scope.json is Codex's.
        return "import-scope" if name == "scope.json" and _imported_project(parts[:-1]) else None
    if parts[-4:-1] == ("extensions", "ad_hoc", "notes"):
        return "adhoc"
    if not name.endswith(".md"):
        return None
    if name == "memory_summary.md":
        return "summary"
    if name == "MEMORY.md":
        return "memory"
    if len(parts) >= 2 and parts[-2] == "rollout_summaries":
        return "rollout"
    if codex_folder or name == "raw_memories.md":
        return None
    return "entries"


def _read(path: str) -> tuple[str | None, str]:
    """``(text, "")`` of a regular file, or ``(None, why it could not be read)``."""
    try:  # opened without blocking: a FIFO or a device is refused, never waited on
        with os.fdopen(open_regular(path), "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return None, "no such file (or a dangling link)"
    except NotRegularFile as exc:
        return None, exc.strerror
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}"
    if len(data) > MAX_FILE_BYTES:
        return None, f"larger than {MAX_FILE_BYTES} bytes, not read"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        # read as Codex reads it, each invalid sequence as U+FFFD; said, never skipped whole
        text = data.decode("utf-8", "replace")
        bad = text.count("\ufffd") - data.count("\ufffd".encode())
        line = data.count(b"\n", 0, exc.start) + 1
        return text, (f"not valid UTF-8 in {count(bad, 'place')} (the first at line {line}, "
                      f"byte {exc.start}); read with U+FFFD in their place")


def collect_files(path: str) -> list[tuple[str, str]]:
    """``(shown path, kind)`` of every file ``lint`` checks under ``path`` (a file or folder).

    Kinds: ``memory``, ``summary``, ``rollout``, ``adhoc``, ``entries``, and two that
    are reported rather than read: ``link-out`` (a symbolic link leading out of the
    folder) and ``unlisted`` (a folder that could not be listed).
    """
    if not os.path.isdir(path):
        parts = tuple(os.path.normpath(path).split(os.sep))
        return [(path, _kind(parts, False) or "entries")]
    try:
        names = set(os.listdir(path))
    except OSError:
        return [(path, "unlisted")]
    codex_folder = any(marker in names for marker in _CODEX_MARKERS)
    real_root = os.path.realpath(path).rstrip(os.sep) + os.sep
    found = []
    for folder, dirs, files in os.walk(path):
        rel = os.path.relpath(folder, path)
        parts = () if rel == "." else tuple(rel.split(os.sep))
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        if _imported_project(parts) and "scope.json" not in files:
            found.append((os.path.join(folder, "scope.json"), "import-scope-missing"))
        for name in sorted(files):
            kind = _kind((*parts, name), codex_folder)
            if kind is None:
                continue
            full = os.path.join(folder, name)
            if os.path.islink(full) and not os.path.realpath(full).startswith(real_root):
                kind = "link-out"
            found.append((full, kind))
    return found


def _line_counter(root: str):
    from memcite.ledger.memory_files import byte_lines, locate

    real_root = os.path.realpath(root)
    cache: dict[str, int | None] = {}

    def count(relative: str) -> int | None:
        if relative not in cache:
            status, real = locate(real_root, relative)
            if real is None:
                cache[relative] = None
            else:
                try:  # regular when located, but it may have been replaced since
                    with os.fdopen(open_regular(real), "rb") as handle:
                        cache[relative] = len(byte_lines(handle.read(MAX_FILE_BYTES)))
                except OSError:
                    cache[relative] = None
        return cache[relative]

    return count


def lint_files(files: Sequence[tuple[str, str]]) -> LintReport:
    """Run the checks on ``(path, kind)`` pairs (see ``collect_files``)."""
    findings: list[Finding] = []
    entry_files: list[tuple[str, str]] = []
    counters: dict[str, object] = {}
    for path, kind in files:
        if kind in ("link-out", "unlisted"):
            why = "a link leading out of the folder, not followed" if kind == "link-out" else \
                "a folder that cannot be listed"
            findings.append(_finding("file-unreadable", path, 1, 1, why, "fix or remove it"))
            continue
        if kind == "adhoc":
            findings.extend(check_adhoc_name(path, os.path.basename(path)))
            continue
        if kind == "import-scope-missing":
            findings.append(_finding(
                "import-scope-invalid", path, 1, 1,
                "an imported project's folder without scope.json",
                "Codex scopes the project's imported memory by scope.json's cwd; import it again"))
            continue
        text, why = _read(path)
        if text is None:
            findings.append(_finding("file-unreadable", path, 1, 1, f"{why}", "fix or remove the file"))
            continue
        if why:  # read with replacement characters: said, and checked like any other
            line = int(why.split("the first at line ", 1)[1].split(",", 1)[0])
            findings.append(_finding("file-not-utf8", path, line, 1, why,
                                     "save the file as UTF-8 (the U+FFFD characters mark the bytes)"))
        if kind in ("memory", "entries"):
            entry_files.append((path, text))
        if kind == "summary":
            store = "v2" if os.path.basename(os.path.dirname(os.path.abspath(path))) \
                == V2_FOLDER else "v1"
            findings.extend(check_memory_summary(path, text, store))
        if kind in ("memory", "summary"):
            base = os.path.dirname(path) or "."
            counter = counters.setdefault(base, _line_counter(base))
            findings.extend(check_pointers(path, text, counter))
        if kind == "rollout":
            findings.extend(check_rollout_summary(path, os.path.basename(path), text))
        if kind == "import-scope":
            findings.extend(check_import_scope(path, text))
    findings.extend(check_entry_files(entry_files))
    return LintReport(tuple(sort_findings(findings)), len(files))


def lint_paths(paths: Sequence[str]) -> LintReport:
    """Lint files and folders: a Codex memory folder, memcite's notes folder, or single files."""
    files: list[tuple[str, str]] = []
    seen: set[str] = set()
    for path in paths:
        for item in collect_files(path):
            real = os.path.realpath(item[0])
            if real not in seen:
                seen.add(real)
                files.append(item)
    return lint_files(files)


def lint_targets(paths: Sequence[str] | None, defaults: Sequence[str]) -> tuple[list[str], LintReport]:
    """``memcite lint``'s work: the paths named (each must exist), else those of ``defaults``
    that are folders; what was linted, and the report (no target: an empty report)."""
    if paths:
        for path in paths:
            if not os.path.exists(path):
                raise InputError(f"{path}: no such file or folder",
                                 hint="name a memory folder or file, or give no path for the defaults")
        targets = list(paths)
    else:
        targets = [path for path in defaults if os.path.isdir(path)]
    return targets, lint_paths(targets)


def lint_touched(touched: Sequence[str], roots: Sequence[str], strict: bool) -> list[Finding]:
    """The hook mode's work: lint the folders of the memory files a tool just touched (each
    file's root among ``roots``, else its own folder) and keep the findings in those files
    (errors only, warnings too when ``strict``)."""
    real_roots = [os.path.realpath(root) for root in roots]
    folders: list[str] = []
    for path in touched:
        if not os.path.isfile(path):
            continue
        root = next((r for r in real_roots if path.startswith(r.rstrip(os.sep) + os.sep)), None)
        folder = root or os.path.dirname(path)
        if folder not in folders:
            folders.append(folder)
    if not folders:
        return []
    report = lint_paths(folders)
    wanted = set(touched)
    return [f for f in report.findings if os.path.realpath(f.path) in wanted
            and (strict or f.severity == "error")]


__all__ = ["MAX_FILE_BYTES", "LintReport", "collect_files", "default_paths", "lint_files", "lint_paths",
           "lint_targets", "lint_touched"]
