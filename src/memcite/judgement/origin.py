"""Origin: where a memory's words came from, ranked by how far to trust them.

1. ``user``: the user's own messages;
2. ``project``: the project's own files (read inside the thread's project, not under a
   dependency, vendor, build or cache folder), Codex's own context (the AGENTS.md it
   injects, the environment), and the agent's own words;
3. ``outside``: files outside the project, untracked or generated files, command output
   (untracked: the caller says, from the project's git index, ``memcite.audit.git_index``);
4. ``third-party``: MCP results, web results, fetched pages, issue, PR and e-mail text,
   dependency files.

Text the agent reads back from Codex's memory folder, or from a file it wrote itself in the
same thread, is no new origin: ``is_read_back`` tells the caller to look for where those
words were written from (``memcite.audit.provenance`` does). A memory whose words cannot be
placed inherits the lowest trust its source thread read (``lowest``): a thread that ran a web
search or an MCP tool may have carried their words even where Codex keeps only the query.

Pure: a segment's kind, tool, detail (the command run, the file read) and the thread's cwd in,
a rank out.
"""

from __future__ import annotations

import os
import re
import shlex

USER, PROJECT, OUTSIDE, THIRD_PARTY = "user", "project", "outside", "third-party"
RANKS = {USER: 1, PROJECT: 2, OUTSIDE: 3, THIRD_PARTY: 4}
ORIGINS = tuple(RANKS)

# Folders whose files are someone else's, inside a project or not.
_DEPENDENCY = re.compile(
    r"(?:^|[/\\])(?:node_modules|vendor|third_party|third-party|site-packages|dist-packages|"
    r"\.venv|venv|env|\.tox|\.nox|bower_components|Pods|\.cargo|\.rustup|go/pkg|\.m2|\.gradle|"
    r"\.npm|\.pnpm-store|\.yarn|__pypackages__|\.bundle|gems)(?:[/\\]|$)", re.IGNORECASE)
_GENERATED = re.compile(
    r"(?:^|[/\\])(?:build|dist|target|out|\.cache|__pycache__|\.next|\.nuxt|coverage|tmp|"
    r"\.pytest_cache|\.mypy_cache|\.ruff_cache|logs?)(?:[/\\]|$)|\.log$", re.IGNORECASE)
_MEMORY_FOLDER = re.compile(r"(?:^|[/\\])\.codex[/\\]memories(?:_v2)?(?:[/\\]|$)|"
                            r"(?:^|[/\\])memories(?:_v2)?[/\\](?:MEMORY\.md|memory_summary\.md|"
                            r"raw_memories\.md|rollout_summaries)", re.IGNORECASE)
# Commands whose output is the world's words: fetches, and the text of issues, PRs, mail.
_FETCHERS = re.compile(
    r"(?:^|[;&|(]\s*|\s)(?:curl|wget|http|https|xh|iwr|invoke-webrequest|invoke-restmethod|lynx|"
    r"w3m|gh\s+(?:issue|pr|api|release|gist|discussion|search)|glab\s+(?:issue|mr|api)|hub\s+issue|"
    r"mail|mutt|himalaya|notmuch|pip\s+download|npm\s+view|pip\s+show|"
    r"python3?\s+-c\s+['\"][^'\"]*(?:urllib|requests|httpx))\b", re.IGNORECASE)
_READERS = frozenset({"cat", "head", "tail", "sed", "less", "more", "awk", "grep", "rg", "nl",
                      "bat", "jq", "xxd", "strings", "type", "get-content", "gc", "findstr",
                      "select-string"})


def rank(origin: str) -> int:
    """The rank of an origin (1 = the user's, 4 = third-party)."""
    return RANKS[origin]


def lowest(origins) -> str:
    """The least trusted of ``origins`` (``project`` when there are none)."""
    found = [origin for origin in origins if origin in RANKS]
    return max(found, key=rank) if found else PROJECT


_QUOTING = re.compile(r"['\"\\]")
_SHELL_SPACE = re.compile(r"[ \t\r\n]+")


def shell_words(command: str) -> list[str]:
    """``command``'s words as a POSIX shell splits them (``shlex.split``); a command with an
    unbalanced quote, by its spaces. Without a quote or backslash that is a split at spaces,
    done without ``shlex``'s character-by-character reading (every command of every session
    is read this way)."""
    if not _QUOTING.search(command):
        return [word for word in _SHELL_SPACE.split(command) if word]
    try:
        return shlex.split(command, posix=True)
    except ValueError:
        return command.split()


def paths_read(command: str) -> list[str]:
    """The words ``command`` hands a file reader (``cat``, ``sed``, ``Get-Content``...): the
    paths it reads, as written (the first 200 words; pipes and ``&&`` end a reader's list)."""
    words = shell_words(command)
    out, reading = [], False
    for word in words[:200]:
        if word in ("|", "&&", ";", "||"):
            reading = False
            continue
        base = os.path.basename(word).lower()
        if base in _READERS:
            reading = True
            continue
        if reading and not word.startswith("-"):
            out.append(word)
    return out


def _inside(path: str, root: str | None) -> bool:
    if not root:
        return False
    if not os.path.isabs(path) and not path.startswith("~"):
        return True  # relative to the thread's cwd
    path, root = os.path.normpath(os.path.expanduser(path)), os.path.normpath(root)
    return path == root or path.startswith(root.rstrip("/\\") + os.sep)


def is_read_back(detail: str | None) -> bool:
    """Whether a command reads Codex's memory folder (its words were written from elsewhere)."""
    return bool(detail) and bool(_MEMORY_FOLDER.search(detail))


def of_path(path: str, cwd: str | None, tracked=None) -> str:
    """The origin of a file's text by its path: a dependency's is third-party, one outside
    the project or generated is outside, the rest of the project's is the project's, unless
    ``tracked`` (``path -> bool | None``: the project's git index, when there is one) says the
    project does not track it."""
    if _DEPENDENCY.search(path):
        return THIRD_PARTY
    if not _inside(path, cwd):
        return OUTSIDE
    relative = path if not os.path.isabs(path) else os.path.relpath(path, cwd or "/")
    if _GENERATED.search(relative):
        return OUTSIDE
    return OUTSIDE if tracked is not None and tracked(path) is False else PROJECT


def of_command(command: str | None, cwd: str | None, tracked=None) -> str:
    """The origin of a command's output: a fetch's (or issue, PR, mail text) is third-party;
    a file reader's is its files' (the least trusted of them); other output is outside."""
    if not command:
        return OUTSIDE
    if _FETCHERS.search(command):
        return THIRD_PARTY
    paths = paths_read(command)
    if paths:
        return lowest(of_path(path, cwd, tracked) for path in paths)
    return OUTSIDE


def of_segment(kind: str, detail: str | None, cwd: str | None, tracked=None) -> str:
    """The origin of a session segment (``memcite.audit.provenance.SEGMENT_KINDS``): its kind,
    and for a tool output the command that made it."""
    if kind == "user":
        return USER
    if kind in ("context", "assistant"):
        return PROJECT
    if kind in ("mcp", "web"):
        return THIRD_PARTY
    if kind == "outside-file":
        return THIRD_PARTY if detail and _DEPENDENCY.search(detail) else OUTSIDE
    if not detail:  # a tool that runs no command (apply_patch, update_plan): the agent's own
        return PROJECT
    return of_command(detail, cwd, tracked)
