"""The text ``memcite thread`` prints: a thread's memory report, or what memory costs.

Pure functions of the reports ``memcite.codex.thread.thread_report`` and
``memcite.codex.memory_cost.memory_cost`` return (the same dicts ``--json`` prints), masked
and escaped as memcite shows text (``memcite.display.shown``).
"""

from __future__ import annotations

import time

from memcite.display import count, shown

__all__ = ["OUTCOME_WORDS", "render_cost", "render_thread"]

OUTCOME_WORDS = {"recorded": "the hash memcite took when it recorded the reply",
                 "history": "the memory folder's git history at the reply's time"}


def _when(seconds: int | None) -> str:
    if seconds is None:
        return "time unknown"
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds))


def _yes(value: bool | None) -> str:
    return "unknown" if value is None else "yes" if value else "no"


def render_thread(report: dict) -> str:
    """What ``memcite thread ID`` (or ``--last``) prints of ``thread_report``'s report."""
    memory = report["memory"]
    lines = [f"thread {report['thread_id']} ({report['source']}, {_when(report['created_at'])})"
             f" in {report['cwd'] or 'an unknown folder'}",
             f"session file: {report['session_file']}"]
    if report["parent_thread_id"]:
        lines.append(f"subagent of thread {report['parent_thread_id']}")
    if memory["injected"]:
        cut = (f"cut by {memory['truncated_tokens']} tokens (Codex keeps 2,500)"
               if memory["truncated"] else "not cut")
        lines.append(f"memory message: injected, {memory['tokens']} tokens by Codex's 4-bytes "
                     f"rule (the summary {memory['summary_tokens']} tokens, {cut}; store "
                     f"{memory['store']})")
        current = memory["current"]
        if memory["matches_current"]:
            lines.append("  the summary is the one Codex would inject now")
        elif current["summary_sha256"] is None:
            lines.append("  Codex would inject no summary now (none in "
                         f"{current['memory_folder']})")
        else:
            lines.append(f"  the summary differs from the one Codex would inject now "
                         f"({current['summary_tokens']} tokens, store {current['store']})")
    else:
        lines.append("memory message: not injected")
    eligible = report["eligibility"]
    lines.append(f"could get memory: {_yes(eligible['could_get_memory'])} ([features] memories "
                 f"{'on' if eligible['feature'] else 'off'}, [memories] use_memories "
                 f"{'on' if eligible['use_memories'] else 'off'}, as config.toml says now; "
                 f"store {eligible['store']}: {eligible['store_from']})")
    generation = report["generation"]
    lines.append(f"Codex makes a memory from it: {_yes(generation['will_generate'])} "
                 f"({generation['explanation']})")
    if generation["memory_exists"]:
        lines.append("  Codex's memories database has a memory of this thread")
    citations = report["citations"]
    lines.append(f"replies: {citations['replies']}, citing memory: {citations['cited_replies']}")
    for row in citations["threads"]:
        known = {None: "", True: "; in Codex's table", False: "; not in Codex's table"}
        lines.append(f"  memory {row['thread_id']}: "
                     f"{count(row['replies'], 'reply', 'replies')}{known[row['in_codex']]}")
    if citations["entries"]:
        from memcite.retention.checks import OUTCOME_MEANING

        lines.append(f"cited entries, checked against {citations['memory_folder']}:")
        for row in citations["entries"]:
            lines.append(f"  {row['path']}:{row['line_start']}-{row['line_end']} "
                         f"({count(row['citations'], 'citation')}): "
                         f"{row['outcome']}, {OUTCOME_MEANING[row['outcome']]}"
                         + (f" (against {OUTCOME_WORDS[row['basis']]})"
                            if row["basis"] != "none" else ""))
    if report["reason"]:
        setting = f"; set {report['setting']}" if report["setting"] else ""
        label = "how memory was used" if report["citations"]["cited_replies"] \
            else "why memory was not used"
        lines.append(f"{label}: {report['reason']}{setting}")
    for warning in report["warnings"]:
        lines.append(f"warning: {warning}")
    return shown("\n".join(lines)) + "\n"


def render_cost(report: dict) -> str:
    """What ``memcite thread --cost`` prints of ``memory_cost``'s report."""
    totals = report["totals"]
    since = f" since {_when(report['since'])}" if report["since"] is not None else ""
    lines = [f"memory message{since}: {totals['tokens']} tokens added to "
             f"{totals['threads_with_memory']} of {totals['threads']} threads "
             f"({totals['injections']} injections, Codex's 4-bytes rule); resent with "
             f"{totals['requests']} model requests: {totals['resent_tokens']} input tokens at "
             "most (prompt caching makes most of them cheap)"]
    if report["by_day"]:
        lines.append("per day (UTC):")
        for row in report["by_day"]:
            lines.append(f"  {row['day']}  {row['tokens']:>9} tokens  {row['resent_tokens']:>11} "
                         f"resent  {row['threads_with_memory']}/{row['threads']} threads")
    if report["by_project"]:
        lines.append("per working folder:")
        for row in report["by_project"]:
            lines.append(f"  {row['tokens']:>9} tokens  {row['resent_tokens']:>11} resent  "
                         f"{row['threads_with_memory']}/{row['threads']} threads  "
                         f"{row['cwd'] or '(unknown)'}")
    for jobs in report["jobs"]:
        if not jobs["found"]:
            continue
        if jobs["error"]:
            lines.append(f"memory jobs ({jobs['store']}): {jobs['error']}")
            continue
        kinds = ", ".join(f"{row['kind']} {row['status']}: {row['rows']}" for row in jobs["by_kind"])
        lines.append(f"memory jobs ({jobs['store']}, {jobs['db']}): {count(jobs['rows'], 'row')}"
                     f"{': ' + kinds if kinds else ''}")
    files = report["files"]
    lines.append(f"session files: {files['read']} read"
                 + (f", {files['skipped_old']} last written before --since" if files["skipped_old"]
                    else "")
                 + (f", {files['partial']} read in part (too large)" if files["partial"] else "")
                 + (f", {files['unreadable']} unreadable" if files["unreadable"] else ""))
    lines += [f"warning: {problem}" for problem in files["problems"]]
    return shown("\n".join(lines)) + "\n"
