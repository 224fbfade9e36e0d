"""The checks of Codex's memory folder formats: the summary's ``v1``, ad-hoc note names,
rollout summary headers and names, and ``path:a-b`` pointers.

Pure functions of names and text (the pointer check asks a callback for line counts).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from memcite.citations.thread_ids import normalize_thread_id
from memcite.lint.findings import WARNING, Finding
from memcite.lint.findings import make_finding as _finding

# --------------------------------------------------------------------------- Codex's folder


def check_memory_summary(path: str, text: str, store: str = "v1") -> list[Finding]:
    """``memory_summary.md`` opens with the line ``v1``, exactly; in memory store v2, also
    the four headings, under 10,000 UTF-8 bytes, and well-formed routes."""
    findings = []
    first = text.split("\n", 1)[0].removesuffix("\r")
    if first != "v1":
        shown = first if len(first) <= 40 else first[:40] + "…"
        findings.append(_finding(
            "summary-not-v1", path, 1, 1, f"the first line is {shown!r}, not 'v1'",
            "Codex's consolidation fails when the summary it leaves does not begin with v1 "
            "(Codex still injects the file)"))
    if store == "v2":
        findings.extend(_check_v2_summary(path, text))
    return findings


# Memory store v2's summary, as Codex's v2 consolidation validates it (is_valid_v2_summary in
# codex-rs/memories/write/src/workspace.rs): `v1` first, under 10,000 UTF-8 bytes, each of
# these headings as a whole (trimmed) line, in any order. Its prompt also asks for routes
# `- rollout_summaries/<file> — <sentence>; thread_id=<id>` under `## What's in Memory`
# (not validated by Codex: a broken route only misleads the agent that reads it).
V2_HEADINGS = ("## User Profile", "## User preferences", "## General Tips", "## What's in Memory")
V2_SUMMARY_LIMIT = 10_000
_V2_ROUTE = re.compile(r"^- rollout_summaries/(?P<file>[^\s]+) — (?P<what>.+); "
                       r"thread_id=(?P<thread>\S+)\s*$")


def _check_v2_summary(path: str, text: str) -> list[Finding]:
    findings = []
    lines = text.split("\n")
    size = len(text.encode("utf-8"))
    if size >= V2_SUMMARY_LIMIT:
        findings.append(_finding(
            "summary-v2-size", path, 1, 1,
            f"{size:,} UTF-8 bytes; memory store v2's summary must be under {V2_SUMMARY_LIMIT:,}",
            "Codex's v2 consolidation fails on a longer summary; shorten it"))
    at = {}
    for number, line in enumerate(lines, 1):
        if line.strip() in V2_HEADINGS:  # Rust's str::lines and trim, as Codex compares them
            at.setdefault(line.strip(), number)
    missing = [heading for heading in V2_HEADINGS if heading not in at]
    if missing:
        findings.append(_finding(
            "summary-v2-headings", path, 1, 1,
            f"no {', '.join(repr(h) for h in missing)} heading (memory store v2's summary has "
            f"all of {', '.join(V2_HEADINGS)})",
            "Codex's v2 consolidation fails on a summary without them; restore them"))
    inside = at.get(V2_HEADINGS[-1])
    if inside is None:
        return findings
    for number, line in enumerate(lines[inside:], inside + 1):
        line = line.rstrip("\r")
        if not line.startswith("- rollout_summaries/"):
            continue
        found = _V2_ROUTE.match(line)
        if found is None:
            findings.append(_finding(
                "summary-v2-route", path, number, 1,
                "a route that is not `- rollout_summaries/<file> — <sentence>; thread_id=<id>`",
                "write the file name, an em dash, one sentence, then `; thread_id=` and the "
                "thread's id"))
        elif normalize_thread_id(found["thread"]) is None:
            findings.append(_finding(
                "summary-v2-route", path, number, line.index("thread_id=") + 11,
                f"thread_id={found['thread'][:40]} is not a UUID",
                "give the complete thread id of the rollout the route points to"))
    return findings


def check_import_scope(path: str, text: str) -> list[Finding]:
    """An imported project's ``scope.json``: a JSON object whose ``cwd`` is an absolute path
    (Codex's consolidation scopes every imported file of the project by it)."""
    from memcite.untrusted import loads_json

    try:
        scope = loads_json(text)
    except ValueError as exc:
        return [_finding("import-scope-invalid", path, getattr(exc, "lineno", 1),
                         getattr(exc, "colno", 1), f"not JSON ({exc.msg if hasattr(exc, 'msg') else exc})",
                         "Codex scopes the project's imported memory by scope.json's cwd; import it again")]
    cwd = scope.get("cwd") if isinstance(scope, dict) else None
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        shown = "no cwd" if cwd is None else f"cwd {str(cwd)[:40]!r} is not an absolute path"
        return [_finding("import-scope-invalid", path, 1, 1, f"{shown}",
                         "Codex scopes the project's imported memory by scope.json's cwd; import it again")]
    return []


_ADHOC_PREFIX = re.compile(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-")
_ADHOC_SLUG = re.compile(r"[a-z0-9-]{1,80}")


def adhoc_name_problem(name: str) -> str | None:
    """Why ``name`` breaks Codex's rule for ad-hoc note files, or None when it follows it.

    At most 128 bytes, ending ``.md``, a 20-byte prefix ``YYYY-MM-DDTHH-MM-SS-``,
    then a slug of 1 to 80 bytes of ``[a-z0-9-]``.
    """
    size = len(name.encode("utf-8"))
    if size > 128:
        return f"{size} bytes, more than 128"
    if not name.endswith(".md"):
        return "does not end with .md"
    if not _ADHOC_PREFIX.match(name):
        return "does not start with a UTC time YYYY-MM-DDTHH-MM-SS-"
    slug = name[20:-3]
    if not _ADHOC_SLUG.fullmatch(slug):
        if not slug:
            return "has no slug after the time"
        if len(slug.encode("utf-8")) > 80:
            return "slug longer than 80 bytes"
        return f"slug {slug!r} holds characters other than a-z, 0-9 and -"
    return None


def check_adhoc_name(path: str, name: str) -> list[Finding]:
    problem = adhoc_name_problem(name)
    if problem is None:
        return []
    return [_finding("adhoc-name-invalid", path, 1, 1, f"ad-hoc note name {name!r} {problem}",
                     "name it YYYY-MM-DDTHH-MM-SS-<slug>.md with a slug of a-z, 0-9 and -")]


# A header line is ``key: value``: the key, then the value without the spaces and tabs around
# it. (Matched whole as ``([a-z_][a-z0-9_]*):[ \t]*(.*?)[ \t]*``, a run of spaces inside the
# value took quadratic time; the key is matched and the value stripped instead, the same.)
_HEADER_KEY = re.compile(r"([a-z_][a-z0-9_]*):")
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(?:\.\d+)?(?:[Zz]|[+-]\d\d:\d\d)")
_REQUIRED_HEADER = ("thread_id", "updated_at", "rollout_path", "cwd")
_BASE62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_STEM = re.compile(r"(?P<time>\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d)-(?P<hash>[0-9A-Za-z]{4})(?:-(?P<slug>.*))?")


def summary_stem(thread_id: str) -> str | None:
    """The ``{time}-{hash4}`` Codex names a UUIDv7 thread's summary file with, or None if not v7."""
    digits = thread_id.replace("-", "")
    if len(digits) != 32 or digits[12] != "7":
        return None
    moment = datetime.fromtimestamp(int(digits[:12], 16) / 1000, tz=UTC)
    number = int(digits[-8:], 16) % 62**4
    code = ""
    for _ in range(4):
        number, digit = divmod(number, 62)
        code = _BASE62[digit] + code
    return f"{moment:%Y-%m-%dT%H-%M-%S}-{code}"


def _header(line: str) -> tuple[str, str] | None:
    """``(key, value)`` of a ``key: value`` header line (one line: no newline), or None."""
    match = _HEADER_KEY.match(line)
    if match is None or "\n" in line:
        return None
    return match.group(1), line[match.end():].strip(" \t")


def check_rollout_summary(path: str, name: str, text: str) -> list[Finding]:
    """The header (``thread_id:``, ``updated_at:``, ``rollout_path:``, ``cwd:``, blank line) and name."""
    findings = []
    fields: dict[str, tuple[str, int]] = {}
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the file's last newline ends a line, it does not start one
    ended = False
    for number, raw in enumerate(lines, start=1):
        line = raw.removesuffix("\r")
        if not line.strip():
            if number == 1:
                findings.append(_finding("rollout-summary-header", path, 1, 1,
                                         "the file opens with a blank line, not the header",
                                         "start with thread_id: <uuid>"))
                return findings
            ended = True
            break
        match = _header(line)
        if match is None:
            findings.append(_finding(
                "rollout-summary-header", path, number, 1,
                f"header line {line[:40]!r} is not 'key: value'",
                "end the header with a blank line before the summary"))
            ended = True
            break
        key, value = match
        if key in fields:
            findings.append(_finding("rollout-summary-header", path, number, 1,
                                     f"{key}: given twice (first on line {fields[key][1]})",
                                     "keep one"))
        else:
            fields[key] = (value, number)
    if not ended and fields:
        findings.append(_finding("rollout-summary-header", path, len(lines), 1,
                                 "no blank line after the header, and no summary",
                                 "a blank line separates the header from the summary"))
    missing = [key for key in _REQUIRED_HEADER if key not in fields]
    if missing:
        findings.append(_finding("rollout-summary-header", path, 1, 1,
                                 f"header without {', '.join(k + ':' for k in missing)}",
                                 "Codex writes thread_id:, updated_at:, rollout_path: and cwd:"))
    if "updated_at" in fields:
        value, number = fields["updated_at"]
        if not _RFC3339.fullmatch(value):
            findings.append(_finding("rollout-summary-header", path, number, 13,
                                     f"updated_at: {value!r} is not an RFC 3339 time",
                                     "write it as 2026-01-31T12:00:00Z"))
    if "thread_id" in fields:
        value, number = fields["thread_id"]
        normalized = normalize_thread_id(value)
        if normalized is None:
            findings.append(_finding("rollout-thread-id", path, number, 12,
                                     f"thread_id: {value!r} is not a UUID",
                                     "the thread id is the UUID in the session file's name"))
        elif normalized != value:
            findings.append(_finding("rollout-thread-id", path, number, 12,
                                     f"thread_id: {value!r} is not written as Codex writes it",
                                     f"write {normalized}", severity=WARNING))
        else:
            findings.extend(_check_stem(path, name, normalized))
    return findings


def _check_stem(path: str, name: str, thread_id: str) -> list[Finding]:
    expected = summary_stem(thread_id)
    stem = name.removesuffix(".md")
    match = _STEM.fullmatch(stem)
    if expected is None:
        return []
    if match is None or f"{match.group('time')}-{match.group('hash')}" != expected:
        return [_finding("rollout-summary-name", path, 1, 1,
                         f"file name {name!r} does not start with {expected}, the stem of its thread",
                         "Codex finds a summary by its name; rename it or fix thread_id:")]
    return []


# Pointers: "path:a-b" where path starts in the memory folder.
_POINTER = re.compile(
    r"(?<![\w./-])(?P<path>(?:MEMORY\.md|memory_summary\.md|raw_memories\.md"
    r"|(?:rollout_summaries|skills|extensions)/[\w./-]*[\w])):(?P<start>\d{1,10})-(?P<end>\d{1,10})(?!\d)"
)


def find_pointers(text: str) -> list[tuple[int, int, str, int, int]]:
    """``(line, column, path, start, end)`` for every ``path:a-b`` pointer into the memory folder."""
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        if ":" not in line:
            continue
        for match in _POINTER.finditer(line):
            found.append((number, match.start() + 1, match.group("path"), int(match.group("start")),
                          int(match.group("end"))))
    return found


def check_pointers(path: str, text: str, line_count) -> list[Finding]:
    """Pointers whose file is missing or whose range is outside it.

    ``line_count(relative path)`` is the number of lines of that file in the memory
    folder, or None when there is no such file inside it.
    """
    findings = []
    for line, column, target, start, end in find_pointers(text):
        count = line_count(target)
        shown = f"{target}:{start}-{end}"
        if count is None:
            findings.append(_finding("pointer-missing", path, line, column,
                                     f"{shown} points at a file that is not in the memory folder",
                                     "fix the path or remove the pointer"))
        elif not 1 <= start <= end <= count:
            why = "reversed" if start > end else ("starts at 0" if start == 0 else
                                                  f"past the end ({target} has {count} lines)")
            findings.append(_finding("pointer-range", path, line, column,
                                     f"{shown} points at nothing: the range is {why}",
                                     "update the range to the lines it means"))
    return findings


__all__ = [
    "adhoc_name_problem",
    "check_adhoc_name",
    "check_memory_summary",
    "check_pointers",
    "check_rollout_summary",
    "find_pointers",
    "summary_stem",
]
