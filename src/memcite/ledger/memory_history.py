"""A memory folder's past, from its git history (Codex keeps a git baseline there), read-only.

A cited range is hashed to say what was cited. For a reply recorded long after it
was made (``ingest`` of an old session), the file as it is now says nothing about
what the reply saw: the range is hashed as the file was at the reply's time when
the memory folder is a git repository whose history has it, and not at all
otherwise (the citation is then ``unverified``). Only ``git rev-list``/``git log``
and ``git show`` run, with hooks, pagers, prompts and optional locks off.
"""

from __future__ import annotations

import bisect
import os
import subprocess

from memcite.ledger.memory_files import byte_lines, lines_sha256, locate
from memcite.untrusted import os_safe, program_arguments

MAX_SHOWN_BYTES = 64 * 1024 * 1024
_GIT_TIMEOUT = 20


class MemoryHistory:
    """The git history of one memory folder: each path's commits and each version's lines,
    asked of git at most once."""

    def __init__(self, root: str | os.PathLike | None) -> None:
        self.root = None
        if root is not None and os.path.isdir(os.path.join(os.fspath(root), ".git")):
            self.root = os.path.realpath(os.fspath(root))
        self._commits: dict[str, tuple[list[int], list[str]]] = {}  # path -> (times, shas)
        self._lines: dict[tuple[str, str], list[bytes] | None] = {}

    def _git(self, *args: str) -> bytes | None:
        argv = program_arguments(["git", "-C", self.root, "-c", "core.hooksPath=/dev/null", *args])
        if argv is None:  # a cited path git cannot be given (a NUL byte): no history for it
            return None
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat",
               "GIT_OPTIONAL_LOCKS": "0"}
        try:
            done = subprocess.run(argv, capture_output=True, timeout=_GIT_TIMEOUT, env=env,  # noqa: S603
                                  check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0 or len(done.stdout) > MAX_SHOWN_BYTES:
            return None
        return done.stdout

    def _relative(self, path: str) -> str | None:
        if self.root is None or not os_safe(path) or locate(self.root, path)[0] == "outside_root":
            return None
        return "/".join(p for p in path.replace("\\", "/").split("/") if p not in ("", "."))

    def lines_at(self, path: str, at: int) -> list[bytes] | None:
        """The lines of ``path`` in the last commit made at or before ``at``, or None."""
        relative = self._relative(path)
        if relative is None:
            return None
        if relative not in self._commits:
            out = self._git("log", "--format=%ct %H", "HEAD", "--", relative) or b""
            pairs = sorted((int(t), sha) for t, sha in
                           (line.split() for line in out.decode("ascii", "replace").splitlines()
                            if len(line.split()) == 2 and line.split()[0].isdigit()))
            self._commits[relative] = ([t for t, _ in pairs], [sha for _, sha in pairs])
        times, shas = self._commits[relative]
        index = bisect.bisect_right(times, at) - 1
        if index < 0:
            return None
        key = (shas[index], relative)
        if key not in self._lines:
            shown = self._git("show", f"{shas[index]}:{relative}")
            self._lines[key] = None if shown is None else byte_lines(shown)
        return self._lines[key]

    def ever_had(self, path: str) -> bool:
        """Whether any commit of the history touched ``path`` (the file was there once)."""
        relative = self._relative(path)
        if relative is None:
            return False
        return bool((self._git("log", "--all", "-1", "--format=%ct", "--", relative) or b"").strip())

    def lines_sha256_at(self, path: str, line_start: int, line_end: int, at: int) -> str | None:
        """The hash of the cited range as the history held the file at ``at``, or None."""
        lines = self.lines_at(path, at)
        return None if lines is None else lines_sha256(lines, line_start, line_end)
