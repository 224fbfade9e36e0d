"""What switching a project from memory store v1 to v2 would change (``memcite consolidation``).

Codex injects one store's ``memory_summary.md`` into every session, whatever the project
(the read path of ``memcite instructions --profile codex``: trimmed, cut to its budget by
the 4-bytes rule). v1's lives in ``memories/`` beside ``MEMORY.md``; v2's in
``memories_v2/`` beside its rollout summaries, each the memory of one thread. For the
working directory's project (its git work tree, its branch from ``.git/HEAD``, its
``origin`` remote) this tells:

- what each store injects now (tokens, cut or not);
- each v2 memory (a thread with a rollout summary in ``memories_v2/`` or a route of its
  summary) and whom it belongs to, by Codex's ``threads`` table (``cwd``, ``git_branch``,
  ``git_origin_url``; else the rollout summary's own header): ``this_branch``,
  ``other_branch``, ``this_project`` (the branch unknown), ``other_project`` or
  ``unknown``; and whether the injected v2 summary routes to it;
- what exists only in v1: each line of v1's summary and ``MEMORY.md`` that no v2 file
  carries: neither its words (compared as ``normal`` spells lines) nor a thread id or
  rollout summary it or its task group names are in v2. Headings, ``key:`` lines, lists
  of rollout summaries and lines of fewer than three words are structure, not memories.

``switch_change`` is the judgement, a pure function of texts; ``v2_switch_of`` reads them
(read-only: Codex's ``state_*.sqlite`` opened read-only, no git run).
"""

from __future__ import annotations

import os
import re
import sqlite3
from dataclasses import dataclass, field

from memcite.codex.consolidation_runs import normal
from memcite.ledger.cwd_match import git_origin, inside, repository_key

SCOPES = ("this_branch", "this_project", "other_branch", "other_project", "unknown")
MAX_LISTED = 50  # v1-only lines and v2 memories listed in --json (the counts are whole)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_SUMMARY_NAME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-[0-9A-Za-z]{4}(?:-[0-9a-z_]+)?")
_TASK_GROUP = re.compile(r"^#[ \t]+Task Group\b:?\s*(.*)$", re.I)
_HEADING = re.compile(r"^#{1,6}[ \t]")
_KEY_LINE = re.compile(r"^\s*(?:[-*+]\s+)?[a-z_]+:\s")
_STRUCTURE = re.compile(r"^\s*(?:[-*+]\s+)?(?:rollout_summaries/|thread_id=|\[Task \d+\]\s*$)")
_WORDS = re.compile(r"[A-Za-z]{2,}")
MAX_HEAD_BYTES = 4096


@dataclass(frozen=True)
class StoreSide:
    """What one store's folder holds, as read: the summary Codex injects (None: nothing),
    the whole summary, ``MEMORY.md`` (v1), and the rollout summaries by file name, each
    ``(header fields, text)``."""

    store: str
    folder: str
    present: bool
    injected: str | None = None
    tokens: int = 0
    truncated: bool = False
    omitted_tokens: int = 0
    summary: str | None = None
    memory: str | None = None
    rollout_summaries: dict = field(default_factory=dict)
    problem: str | None = None

    def to_dict(self) -> dict:
        return {"store": self.store, "folder": self.folder, "present": self.present,
                "injects": self.injected is not None, "tokens": self.tokens,
                "truncated": self.truncated, "omitted_tokens": self.omitted_tokens,
                "rollout_summaries": len(self.rollout_summaries), "problem": self.problem}


@dataclass(frozen=True)
class Project:
    """The working directory's project: its root, branch and ``origin`` URL (None: unknown)."""

    cwd: str
    root: str
    branch: str | None
    origin: str | None


# --------------------------------------------------------------------------- the judgement


def scope_of(thread: dict, project: Project) -> str:
    """Whom a v2 memory belongs to, from its thread's ``cwd``, ``git_branch`` and
    ``git_origin_url``: the same ``origin`` (both known) or a ``cwd`` inside the project
    makes it this project's; then its branch decides."""
    mine, theirs = repository_key(project.origin), repository_key(thread.get("git_origin_url"))
    cwd = thread.get("cwd")
    if mine and theirs:
        same = mine == theirs
    elif cwd:
        same = inside(cwd, project.root)
    else:
        return "unknown"
    if not same:
        return "other_project"
    branch = thread.get("git_branch")
    if not branch or not project.branch:
        return "this_project"
    return "this_branch" if branch == project.branch else "other_branch"


def _content(line: str) -> bool:
    """Whether a line is a memory (not a heading, a ``key:`` line, a list of sources)."""
    if not line.strip() or _HEADING.match(line) or _KEY_LINE.match(line) \
            or _STRUCTURE.match(line):
        return False
    return len(_WORDS.findall(_UUID.sub(" ", line))) >= 3


def _names(text: str) -> tuple[set[str], set[str]]:
    """The thread ids (lower case) and rollout summary stems a text names."""
    return ({m.lower() for m in _UUID.findall(text)}, set(_SUMMARY_NAME.findall(text)))


def _v1_lines(file: str, text: str | None) -> list[dict]:
    """The content lines of a v1 file, each with its task group and the names it and its
    group carry."""
    if not text:
        return []
    groups: list[dict] = []
    group = None
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        found = _TASK_GROUP.match(line) if file == "MEMORY.md" else None
        if found:
            group = {"title": found.group(1).strip() or line.strip("# ").strip(), "line": number,
                     "threads": set(), "summaries": set()}
            groups.append(group)
            continue
        threads, summaries = _names(line)
        if group is not None:
            group["threads"] |= threads
            group["summaries"] |= summaries
        if _content(line):
            out.append({"file": file, "line": number, "text": line.strip(), "group": group,
                        "threads": threads, "summaries": summaries})
    return out


def switch_change(v1: StoreSide, v2: StoreSide, project: Project, threads: dict[str, dict],
                  *, store_read: str = "v1") -> dict:
    """What switching ``project`` from v1 to v2 would change: each store's injection, the v2
    memories by scope, and the v1 lines no v2 file carries (the ``v2_switch`` of
    ``consolidation --json``). ``threads``: Codex's ``threads`` rows by id (``cwd``,
    ``git_branch``, ``git_origin_url``). Pure."""
    from memcite.secrets import mask_secrets

    # v2's memories: its rollout summaries, and the threads its summary routes to
    memories: dict[str, dict] = {}
    for name, (header, _text) in sorted(v2.rollout_summaries.items()):
        thread = (header.get("thread_id") or "").strip().lower()
        if thread:
            memories.setdefault(thread, {"thread_id": thread, "rollout_summary": name,
                                         "header": header})
    for thread in sorted(_names(v2.summary or "")[0]):
        memories.setdefault(thread, {"thread_id": thread, "rollout_summary": None, "header": {}})
    injected_threads = _names(v2.injected or "")[0]
    listed = []
    counts = dict.fromkeys(SCOPES, 0)
    injected_counts = dict.fromkeys(SCOPES, 0)
    for thread, item in memories.items():
        row = threads.get(thread)
        source = "threads" if row else "rollout_summary" if item["header"] else None
        info = {key: (row or item["header"]).get(key) or None
                for key in ("cwd", "git_branch", "git_origin_url")}
        scope = scope_of(info, project)
        counts[scope] += 1
        routed = thread in injected_threads
        injected_counts[scope] += routed
        listed.append({"thread_id": thread, "rollout_summary": item["rollout_summary"], **info,
                       "from": source, "scope": scope, "injected": routed})
    order = {scope: n for n, scope in enumerate(SCOPES)}
    listed.sort(key=lambda m: (order[m["scope"]], not m["injected"], m["thread_id"]))

    # what v1 has that no v2 file carries
    v2_texts = [v2.summary or "", *(text for _h, text in v2.rollout_summaries.values())]
    corpus = "\n".join(normal(line) for text in v2_texts for line in text.split("\n"))
    v2_threads = set(memories)
    v2_names = {_SUMMARY_NAME.match(name).group(0) for name in v2.rollout_summaries
                if _SUMMARY_NAME.match(name)} | _names("\n".join(v2_texts))[1]
    injected_v1 = {normal(line) for line in (v1.injected or "").split("\n")}
    only = []
    groups: dict[int, dict] = {}
    for item in _v1_lines("memory_summary.md", v1.summary) + _v1_lines("MEMORY.md", v1.memory):
        group = item["group"] or {"threads": set(), "summaries": set()}
        named_threads = item["threads"] | group["threads"]
        named_summaries = item["summaries"] | group["summaries"]
        words = normal(item["text"]).rstrip(".;:,")
        if (words and words in corpus) or named_threads & v2_threads \
                or named_summaries & v2_names:
            continue
        entry = {"file": item["file"], "line": item["line"], "text": mask_secrets(item["text"]),
                 "task_group": item["group"]["title"] if item["group"] else None,
                 "threads": sorted(named_threads),
                 "injected": item["file"] == "memory_summary.md"
                 and normal(item["text"]) in injected_v1}
        only.append(entry)
        if item["group"] is not None:
            key = item["group"]["line"]
            groups.setdefault(key, {"title": mask_secrets(item["group"]["title"]), "line": key,
                                    "threads": sorted(item["group"]["threads"]), "lines": 0})
            groups[key]["lines"] += 1
    return {
        "cwd": project.cwd, "project_root": project.root, "git_branch": project.branch,
        "git_origin_url": mask_secrets(project.origin) if project.origin else None,
        "store_read": store_read, "v1": v1.to_dict(), "v2": v2.to_dict(),
        "v2_memories": listed[:MAX_LISTED], "v2_counts": counts,
        "v2_injected_counts": injected_counts,
        "v1_only": only[:MAX_LISTED],
        "v1_only_counts": {
            "lines": len(only),
            "summary_lines": sum(1 for x in only if x["file"] == "memory_summary.md"),
            "injected_lines": sum(1 for x in only if x["injected"]),
            "memory_lines": sum(1 for x in only if x["file"] == "MEMORY.md"),
            "task_groups": len(groups)},
        "v1_only_task_groups": list(groups.values())[:MAX_LISTED],
    }


# --------------------------------------------------------------------------- reading


def git_branch(root: str) -> str | None:
    """The branch checked out in the git work tree at ``root`` (``.git/HEAD``'s
    ``ref: refs/heads/<name>``, through a worktree's ``.git`` file), None when detached or
    not a repository. Read as text, no git run."""
    dot_git = os.path.join(root, ".git")
    try:
        if os.path.isfile(dot_git):
            with open(dot_git, encoding="utf-8", errors="replace") as handle:
                line = handle.read(MAX_HEAD_BYTES).strip()
            if not line.startswith("gitdir:"):
                return None
            dot_git = os.path.join(root, line.split(":", 1)[1].strip())
        with open(os.path.join(dot_git, "HEAD"), encoding="utf-8", errors="replace") as handle:
            head = handle.read(MAX_HEAD_BYTES).strip()
    except OSError:
        return None
    return head[len("ref: refs/heads/"):] or None if head.startswith("ref: refs/heads/") \
        else None


def project_of(cwd: str) -> Project:
    """The project of ``cwd``: its git work tree root (``cwd`` outside git), branch, origin."""
    from memcite.readpath.projects import find_project_root

    root = find_project_root(cwd)
    return Project(os.path.abspath(cwd), root, git_branch(root), git_origin(root))


def thread_rows(sqlite_home: str) -> dict[str, dict]:
    """``cwd``, ``git_branch`` and ``git_origin_url`` of each thread in Codex's newest
    ``state_N.sqlite`` (opened read-only); {} when it or those columns are missing."""
    from memcite.errors import MemciteError
    from memcite.ledger.codex_home import newest_state_db, open_codex_db

    newest = newest_state_db(sqlite_home)
    if newest is None:
        return {}
    try:
        conn = open_codex_db(newest)
    except MemciteError:
        return {}
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(threads)")}
        wanted = [c for c in ("cwd", "git_branch", "git_origin_url") if c in columns]
        if "id" not in columns or not wanted:
            return {}
        rows = conn.execute(f"SELECT id, {', '.join(wanted)} FROM threads").fetchall()
    except sqlite3.Error:
        return {}
    finally:
        conn.close()
    return {row[0].lower(): {k: v if isinstance(v, str) else None
                             for k, v in zip(wanted, row[1:], strict=True)}
            for row in rows if isinstance(row[0], str)}


def _read_text(path: str, root: str) -> str | None:
    from memcite.errors import InputError
    from memcite.readpath.instructions import read_memory_file

    try:
        data = read_memory_file(path, root)
    except InputError:
        return None
    return data.decode("utf-8", "replace") if data is not None else None


def read_side(codex_home: str, store: str) -> StoreSide:
    """One store's folder as ``switch_change`` needs it: the summary as Codex's read path
    injects it (``build_instructions``, profile ``codex``), the files, the rollout summaries."""
    from memcite.errors import InputError
    from memcite.ledger.codex_home import ROLLOUT_SUMMARIES, memory_folder
    from memcite.readpath.instructions import build_instructions

    folder = memory_folder(codex_home, store)
    if not os.path.isdir(folder):
        return StoreSide(store, folder, False)
    problem = None
    try:
        result = build_instructions(folder, profile="codex", store=store)
    except InputError as exc:
        result, problem = None, str(exc)
    summaries = {}
    summary_dir = os.path.join(folder, ROLLOUT_SUMMARIES)
    if os.path.isdir(summary_dir):
        for name in sorted(os.listdir(summary_dir)):
            if name.endswith(".md"):
                text = _read_text(os.path.join(summary_dir, name), folder)
                if text is not None:
                    summaries[name] = (_header(text), text)
    source = result.sources[0] if result is not None and result.sources else None
    return StoreSide(
        store, folder, True, injected=result.summary if result is not None else None,
        tokens=result.used if result is not None else 0,
        truncated=bool(result and result.truncated),
        omitted_tokens=source.omitted_tokens if source else 0,
        summary=_read_text(os.path.join(folder, "memory_summary.md"), folder),
        memory=_read_text(os.path.join(folder, "MEMORY.md"), folder) if store == "v1" else None,
        rollout_summaries=summaries, problem=problem)


def _header(text: str) -> dict:
    """A rollout summary's header fields (``thread_id:``, ``cwd:``, ``git_branch:``…)."""
    fields = {}
    for line in text.split("\n"):
        if not line.strip():
            if fields:
                break
            continue
        found = re.match(r"^([a-z_]+):\s?(.*)$", line)
        if not found:
            break
        fields.setdefault(found.group(1), found.group(2).strip())
    return fields


def v2_switch_of(locations, cwd: str) -> dict:
    """``switch_change`` for the project of ``cwd`` in the Codex home of ``locations``
    (a ``CodexLocations``), read-only."""
    return switch_change(read_side(locations.codex_home, "v1"),
                         read_side(locations.codex_home, "v2"), project_of(cwd),
                         thread_rows(locations.sqlite_home), store_read=locations.store)


def wanted(locations) -> bool:
    """Whether the home has a v2 store to switch to: its folder, or v2 configured (read, or
    consolidated through ``dual_write``)."""
    from memcite.ledger.codex_home import memory_folder

    return locations.store == "v2" or locations.dual_write \
        or os.path.isdir(memory_folder(locations.codex_home, "v2"))


# --------------------------------------------------------------------------- text

SCOPE_WORDS = {"this_branch": "this branch", "this_project": "this project (branch unknown)",
               "other_branch": "another branch of this project", "other_project": "other projects",
               "unknown": "no project known"}
SHOWN = 10


def _injects(side: dict) -> str:
    if not side["present"]:
        return "no folder"
    if not side["injects"]:
        return "nothing (no summary to inject)" + (f"; {side['problem']}" if side["problem"] else "")
    cut = f", cut: {side['omitted_tokens']} tokens left out" if side["truncated"] else ""
    return f"its summary, {side['tokens']} tokens{cut}"


def render_switch(change: dict) -> list[str]:
    """``memcite consolidation``'s lines on what switching to v2 would change."""
    from memcite.display import count

    branch = change["git_branch"] or "no branch known"
    lines = [f"\nswitching {change['project_root']} ({branch}) from store v1 to v2 "
             f"(Codex reads {change['store_read']} now):\n",
             f"  v1 injects {_injects(change['v1'])}\n",
             f"  v2 injects {_injects(change['v2'])}\n"]
    counts, routed = change["v2_counts"], change["v2_injected_counts"]
    total = sum(counts.values())
    if total:
        parts = [f"{counts[s]} {SCOPE_WORDS[s]}" + (f" ({routed[s]} routed in its summary)"
                                                    if routed[s] else "")
                 for s in SCOPES if counts[s]]
        lines.append(f"  v2 holds {count(total, 'memory', 'memories')}: {', '.join(parts)}\n")
    else:
        lines.append("  v2 holds no memory yet\n")
    only = change["v1_only_counts"]
    if not only["lines"]:
        lines.append("  only in v1: nothing (every memory line of v1 is carried by a v2 file)\n")
        return lines
    lines.append(f"  only in v1 (no v2 file carries them): {count(only['lines'], 'line')} "
                 f"({only['summary_lines']} of the summary, {only['injected_lines']} of them "
                 f"injected today; {only['memory_lines']} of MEMORY.md in "
                 f"{count(only['task_groups'], 'task group')})\n")
    for item in change["v1_only"][:SHOWN]:
        text = item["text"] if len(item["text"]) <= 90 else item["text"][:87] + "..."
        lines.append(f"    {item['file']}:{item['line']}: {text}\n")
    if only["lines"] > SHOWN:
        lines.append(f"    ... and {only['lines'] - SHOWN} more (--json lists "
                     f"{len(change['v1_only'])})\n")
    return lines


__all__ = ["SCOPES", "Project", "StoreSide", "git_branch", "project_of", "read_side",
           "render_switch", "scope_of", "switch_change", "thread_rows", "v2_switch_of", "wanted"]
