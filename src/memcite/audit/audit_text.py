"""The text ``memcite trace`` and ``memcite audit`` print: pure functions of the reports
``memcite.audit.memory_trace.trace`` and ``memcite.audit.memory_audit.audit_home`` return
(the same dicts ``--json`` prints)."""

from __future__ import annotations

from memcite.display import count
from memcite.times import iso_utc

__all__ = ["ORIGIN_WORDS", "render_audit", "render_trace"]

ORIGIN_WORDS = {"user": "the user's message", "context": "Codex's context (AGENTS.md, environment)",
                "assistant": "the assistant's own text", "tool": "a tool's output",
                "mcp": "an MCP tool's result", "web": "a web search",
                "outside-file": "a file read from outside the project"}


def _origin(origin: dict | None) -> str:
    if origin is None:
        return "not found in the source session"
    where = "from " + ORIGIN_WORDS.get(origin["kind"], origin["kind"])
    if origin.get("tool"):
        where += f" {origin['tool']}"
        if origin.get("call_id"):
            where += f" (call {origin['call_id']})"
        if origin.get("detail"):
            where += f" [{origin['detail']}]"
    return f"{where}, session line {origin['line']} ({origin['share']:.0%} of its word pairs)"


def render_trace(report: dict) -> str:
    """What ``memcite trace ID`` prints of its report."""
    parts: list[str] = []
    out = parts.append
    out(f"trace {report['id']}: {count(len(report['memories']), 'memory', 'memories')}, "
        f"{count(report['poisoned'], 'poisoned sentence')}\n")
    if report["line"] is not None:
        out(f"  line: {report['line']}\n")
    out(f"  resolved: {report['trail']}\n")
    for memory in report["memories"]:
        source = memory["source_thread"]
        out(f"\nmemory {memory['thread_id']} ({', '.join(memory['places']) or 'no place'})\n")
        out(f"  source thread: {source['source'] or 'unknown source'}, "
            f"{iso_utc(source['created_at']) or 'time unknown'}, project {source['cwd'] or '?'}\n")
        out(f"  session: {source['session'] or '-'}" + (f" ({source['note']})" if source["note"]
                                                         else "") + "\n")
        for sentence in memory["sentences"]:
            flag = "POISONED " if sentence["poisoned"] else (
                "directive " if sentence["directives"] else "")
            out(f"  - {flag}{sentence['text']}\n      {_origin(sentence['origin'])}"
                + (f"; rules: {', '.join(sentence['directives'])}" if sentence["directives"]
                   else "") + "\n")
        out(f"  cited by {count(memory['cited_by'], 'reply', 'replies')}"
            + (f" ({memory['citations_note']})" if memory["citations_note"] else "") + "\n")
        for cited in memory["citations"][:10]:
            checks = ", ".join(f"{e['path']}:{e['line_start']}-{e['line_end']} {e['outcome']}"
                               for e in cited["entries"]) or "no entries"
            out(f"    {iso_utc(cited['replied_at'])} thread {cited['thread_id'] or '?'} in "
                f"{cited['cwd'] or '?'}: {checks}\n")
        out(f"  what to do: {memory['fix']}\n")
    for problem in report["problems"]:
        out(f"  problem: {problem}\n")
    return "".join(parts)


def render_audit(report: dict, limit: int = 50) -> str:
    """What ``memcite audit`` prints of its report (at most ``limit`` findings)."""
    parts: list[str] = []
    out = parts.append
    counts = report["counts"]
    out(f"audit of {report['memory_folder']}: {report['memories']} memories "
        f"({report['with_session']} with their session), {report['folder_lines_traced']} of "
        f"{report['folder_lines']} summary lines traced\n")
    out(f"  {counts['poisoned']} poisoned, {count(counts['secret'], 'secret')} (high); "
        f"{counts['cross-project']} cross-project; {count(counts['directive'], 'directive')}, "
        f"{count(counts['taint'], 'tainted sentence')} (low)\n")
    out("  next: `memcite trace ID` for one memory; --json for every finding\n"
        if report["findings"] else "  nothing to do\n")
    shown = [f for f in report["findings"] if f["kind"] != "taint"][:limit]
    for finding in shown:
        origin = finding["origin"]
        out(f"\n{finding['severity']:<6} {finding['kind']}"
            + (f" ({finding['rule']})" if finding["rule"] else "")
            + f"  {finding['where']}  memory {finding['memory'] or '-'}\n")
        out(f"  {finding['excerpt']}\n  {finding['message']}\n")
        if origin and origin.get("call_id"):
            out(f"  source: thread {finding['memory']}, call {origin['call_id']} "
                f"({origin['tool']}), session line {origin['line']}\n")
        if finding["memory"]:
            out(f"  see: memcite trace {finding['memory']}\n")
    hidden = len([f for f in report["findings"] if f["kind"] != "taint"]) - len(shown)
    if hidden > 0:
        out(f"\n... {hidden} more (--json lists them all)\n")
    if report["projects"]:
        out("\nper project (memories, poisoned, secrets, directives, tainted):\n")
        for row in report["projects"][:20]:
            out(f"  {row['project'] or '(unknown)'}: {row['memories']}, {row['poisoned']}, "
                f"{row['secret']}, {row['directive']}, {row['taint']}\n")
    if shown:
        out("\nwhat to do: read the memory with `memcite trace ID`; forget it with an ad-hoc "
            "note asking Codex's consolidation to drop its thread (the way `memcite prune "
            "--apply` asks; `memcite restore ID` undoes it), or restore the memory folder from "
            "before it (its git history); --json gives each finding's fix\n")
        if report["counts"]["poisoned"]:
            out("nothing is forgotten without you: `memcite audit --quarantine` previews asking "
                "Codex to forget the poisoned memories, `--quarantine --apply` asks\n")
    if report["problem_count"]:
        out(f"\n{count(report['problem_count'], 'problem')} reading the home, e.g. "
            f"{report['problems'][0]}\n")
    return "".join(parts)
