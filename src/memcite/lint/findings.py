"""What ``memcite lint`` reports: one ``Finding`` per problem, each with a stable code.

``CODES`` lists every code with its severity and meaning; a code never changes
meaning, and a new check gets a new code (docs/commands-lint.md lists them all).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

ERROR = "error"
WARNING = "warning"

# code -> (severity, what it means). A code never changes meaning; new checks get new codes.
CODES: dict[str, tuple[str, str]] = {
    "tier-unknown": (ERROR, "a tier prefix or Tier: value that is no tier ([CROE], [core], Tier: TOP)"),
    "tier-conflict": (WARNING, "the prefix and the Tier: line name different tiers"),
    "tier-core-limit": (ERROR, "more than 80 CORE entries in one file"),
    "tier-core-near-limit": (WARNING, "72 to 80 CORE entries in one file: review some for demotion"),
    "superseded-not-irr": (WARNING, "an entry with superseded_by: that is not marked [IRR]"),
    "supersession-dangling": (ERROR, "a superseded_by: value that names no entry (by id or title)"),
    "supersession-loop": (ERROR, "a superseded_by: chain that comes back to where it started"),
    "superseded-twice": (ERROR, "an entry superseded by two different entries (a fork)"),
    "duplicate-decision": (ERROR, "two live entries state the same decision, no chain between them"),
    "provenance-missing": (WARNING, "a CORE or IMP entry without Source:, Evidence: or Confidence:"),
    "confidence-invalid": (WARNING, "a Confidence: value other than HIGH, MEDIUM or LOW"),
    "summary-not-v1": (ERROR, "memory_summary.md whose first line is not exactly v1"),
    "summary-v2-headings": (ERROR, "a memory store v2 summary without its four headings"),
    "summary-v2-size": (ERROR, "a memory store v2 summary of 10,000 UTF-8 bytes or more"),
    "summary-v2-route": (ERROR, "a v2 summary route not `- rollout_summaries/<file> — …; thread_id=<id>`"),
    "import-scope-invalid": (ERROR, "an imported project's scope.json: missing, not JSON, no absolute cwd"),
    "adhoc-name-invalid": (ERROR, "an ad-hoc note file name that breaks Codex's rule"),
    "rollout-summary-header": (ERROR, "a rollout summary whose header is malformed"),
    "rollout-thread-id": (ERROR, "a rollout summary whose thread_id is not a UUID"),
    "rollout-summary-name": (WARNING, "a rollout summary file named otherwise than Codex names it"),
    "pointer-range": (ERROR, "a path:a-b pointer whose lines are not in the file"),
    "pointer-missing": (ERROR, "a path:a-b pointer to a memory file that does not exist"),
    "file-unreadable": (ERROR, "a memory file that could not be read (too large, I/O)"),
    "file-not-utf8": (WARNING, "a memory file with invalid UTF-8, read with U+FFFD in its place"),
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: where (file, 1-based line and column), what, and what to do."""

    code: str
    severity: str
    path: str
    line: int
    column: int
    message: str
    hint: str = ""

    def to_dict(self) -> dict:
        return {"code": self.code, "severity": self.severity, "path": self.path, "line": self.line,
                "column": self.column, "message": self.message, "hint": self.hint}


def make_finding(code: str, path: str, line: int, column: int, message: str, hint: str = "",
                 severity: str | None = None) -> Finding:
    """A finding of ``code``, with the code's usual severity unless ``severity`` is given."""
    return Finding(code, severity or CODES[code][0], path, line, column, message, hint)


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in reading order: by file, line, column, then code."""
    return sorted(findings, key=lambda f: (f.path, f.line, f.column, f.code, f.message))


__all__ = ["CODES", "ERROR", "WARNING", "Finding", "make_finding", "sort_findings"]
