"""``memcite audit --format sarif``: the audit's report as SARIF 2.1.0, for code-scanning
dashboards (GitHub code scanning, an IDE's SARIF viewer).

Pure: ``audit_sarif(report)`` turns the dict ``memcite.audit.memory_audit.audit_home``
returns into a SARIF log (a dict; the command prints it as JSON). One run, its tool
``memcite``, one rule per finding kind (``poisoned``, ``secret``, ``cross-project``,
``directive``, ``taint``), one result per finding: its level from the severity (high
``error``, medium ``warning``, low ``note``), its message (what and why, then the excerpt,
secrets masked as everywhere), and its place in the memory folder (``MEMORY.md:12`` is
the artifact ``MEMORY.md`` relative to ``MEMORY_FOLDER``, region start line 12). A place
that is no file (a row of Codex's ``stage1_outputs``) is a logical location. The problems the
audit met are the invocation's notifications.
"""

from __future__ import annotations

import hashlib
import os
from urllib.parse import quote

from memcite import __version__

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
BASE = "MEMORY_FOLDER"
LEVELS = {"high": "error", "medium": "warning", "low": "note"}

# kind -> (name, short description, full description, severity)
RULES: dict[str, tuple[str, str, str, str]] = {
    "poisoned": ("PoisonedMemory", "A memory directive whose words came from a tool's output",
                 "A directive (run, fetch, skip a check, change config, handle a secret, ignore "
                 "instructions) whose words first appear in a tool, MCP, web or outside-file output "
                 "of the memory's source thread, not in the user's message.", "high"),
    "secret": ("SecretInMemory", "A secret in memory text",
               "A key, token, password or personal datum in memory text that the next session "
               "reads; shown masked.", "high"),
    "cross-project": ("CrossProjectMemory", "Memory from another project",
                      "A memory, or a line of MEMORY.md or memory_summary.md, whose source project is "
                      "not the project audited.", "medium"),
    "directive": ("MemoryDirective", "A directive in memory",
                  "A directive whose words the user typed, the assistant wrote, or that is not in "
                  "the source session.", "low"),
    "taint": ("TaintedMemory", "Memory words from a tool's output",
              "A sentence (no directive) whose words came from a tool, MCP or web output.", "low"),
}


def _place(where: str) -> tuple[str, int | None]:
    """``MEMORY.md:12`` -> ``("MEMORY.md", 12)``; a place without a line -> ``(where, None)``."""
    path, sep, line = where.rpartition(":")
    if sep and line.isdigit() and path:
        return path, int(line)
    return where, None


def _is_file(path: str) -> bool:
    """A file of the memory folder, not a row of ``stage1_outputs`` nor a bare thread id."""
    from memcite.citations.thread_ids import normalize_thread_id

    return not path.startswith("stage1_outputs") and normalize_thread_id(path) is None


def _location(finding: dict) -> dict:
    path, line = _place(finding["where"])
    if not _is_file(path):
        where = finding["where"]
        name = where if finding["memory"] is None else f"{where} (thread {finding['memory']})"
        return {"logicalLocations": [{"name": name, "kind": "member"}]}
    physical: dict = {"artifactLocation": {"uri": quote(path), "uriBaseId": BASE}}
    region: dict = {}
    if line is not None:
        region["startLine"] = line
    if finding["excerpt"]:
        region["snippet"] = {"text": finding["excerpt"]}
    if region.get("startLine"):
        physical["region"] = region
    return {"physicalLocation": physical}


def _fingerprint(finding: dict) -> str:
    path, _line = _place(finding["where"])
    text = "\0".join((finding["kind"], path, finding["memory"] or "", finding["excerpt"]))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _result(finding: dict, index: dict[str, int]) -> dict:
    from memcite.display import shown

    message = shown(finding["message"])
    if finding["excerpt"]:
        message += f": {finding['excerpt']}"
    result = {
        "ruleId": finding["kind"], "ruleIndex": index[finding["kind"]],
        "level": LEVELS.get(finding["severity"], "note"), "message": {"text": message},
        "locations": [_location(finding)],
        "partialFingerprints": {"memcite/finding/v1": _fingerprint(finding)},
        "properties": {"severity": finding["severity"], "rule": finding["rule"],
                       "memory": finding["memory"], "project": finding["project"],
                       "fix": shown(finding["fix"])},
    }
    return result


def _folder_uri(folder: str) -> str:
    path = os.path.abspath(folder).replace(os.sep, "/")
    return "file://" + quote(path if path.startswith("/") else "/" + path) + "/"


def audit_sarif(report: dict) -> dict:
    """The SARIF 2.1.0 log of an audit report (``audit_home``'s dict)."""
    index = {kind: number for number, kind in enumerate(RULES)}
    rules = [{"id": kind, "name": name, "shortDescription": {"text": short},
              "fullDescription": {"text": full},
              "help": {"text": f"{full} See `memcite audit` in memcite's docs/commands-audit.md."},
              "defaultConfiguration": {"level": LEVELS[severity]},
              "properties": {"severity": severity, "tags": ["memory", "security"]}}
             for kind, (name, short, full, severity) in RULES.items()]
    from memcite.display import shown

    notifications = [{"level": "warning", "message": {"text": shown(problem)}}
                     for problem in report.get("problems", [])]
    run = {
        "tool": {"driver": {"name": "memcite", "version": __version__, "semanticVersion": __version__,
                            "rules": rules}},
        "originalUriBaseIds": {BASE: {"uri": _folder_uri(report["memory_folder"])}},
        "invocations": [{"executionSuccessful": True,
                         "toolExecutionNotifications": notifications}],
        "results": [_result(finding, index) for finding in report["findings"]],
        "properties": {"codexHome": report["codex_home"], "project": report["project"],
                       "memories": report["memories"], "counts": report["counts"]},
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


__all__ = ["audit_sarif"]
