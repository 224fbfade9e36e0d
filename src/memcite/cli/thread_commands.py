"""The body of ``memcite thread``: one thread's memory report, or what memory costs (``--cost``).

Typer-free like the other ``*_commands`` modules (``memcite.cli.thread_app`` declares the
options); returns the exit code: 0 done, 2 bad input or no such thread.
"""

from __future__ import annotations

import os
import sys
import time

from memcite.cli.console import dump_json, report_error
from memcite.errors import InputError, MemciteError

OUTCOME_WORDS = {"recorded": "the hash memcite took when it recorded the reply",
                 "history": "the memory folder's git history at the reply's time"}


def _since(value: str | None) -> int | None:
    if value is None:
        return None
    if value.strip().isdigit():
        return int(value)
    from memcite.ledger.recording import parse_time

    return parse_time(value, what="--since")


def thread(
    thread_id: str | None = None,
    last: bool = False,
    cost: bool = False,
    since: str | None = None,
    codex_home: str | None = None,
    db: str | None = None,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
    cwd: str | None = None,
    now: int | None = None,
) -> int:
    """Print one thread's memory report (``thread_id``, or ``last``), or with ``cost`` what
    memory cost across the home's threads."""
    now = int(time.time()) if now is None else now
    cwd = cwd or os.getcwd()
    try:
        chosen = sum(bool(x) for x in (thread_id, last, cost))
        if chosen != 1:
            raise InputError("give one of: a thread ID, --last, or --cost",
                             hint="`memcite thread --last` reports the newest thread of this "
                                  "project")
        if since is not None and not cost:
            raise InputError("--since goes with --cost")
        from memcite.paths import Locations

        located = Locations(db=db, codex_home=codex_home)
        home = located.codex_home_path
        env_sqlite = located.codex_sqlite_home_env
        if cost:
            from memcite.codex.memory_cost import memory_cost
            from memcite.ledger.codex_home import locate_codex_home

            where = locate_codex_home(home, env_sqlite_home=env_sqlite, cwd=cwd)
            report = memory_cost(where.codex_home, since=_since(since), now=now,
                                 sqlite_home=where.sqlite_home)
            if json:
                dump_json(report)
            else:
                _print_cost(report, sys.stdout)
            return 0
        from memcite.codex.thread import thread_report
        from memcite.readpath.projects import find_project_root

        report = thread_report(home, thread_id, last_in=find_project_root(cwd) if last else None,
                               db_path=located.db_path, env_sqlite_home=env_sqlite,
                               cwd=cwd, now=now)
    except MemciteError as error:
        return report_error(error)
    except OSError as exc:
        return report_error(MemciteError(f"{exc.filename or 'thread'}: {exc.strerror or exc}"))
    if json:
        dump_json(report)
    else:
        _print_thread(report, sys.stdout)
    return 0


def _when(seconds: int | None) -> str:
    if seconds is None:
        return "time unknown"
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds))


def _yes(value: bool | None) -> str:
    return "unknown" if value is None else "yes" if value else "no"


def _print_thread(report: dict, out) -> None:
    from memcite.cli.console import masked

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
        lines.append(f"  memory {row['thread_id']}: {row['replies']} "
                     f"repl{'y' if row['replies'] == 1 else 'ies'}{known[row['in_codex']]}")
    if citations["entries"]:
        from memcite.retention.checks import OUTCOME_MEANING

        lines.append(f"cited entries, checked against {citations['memory_folder']}:")
        for row in citations["entries"]:
            lines.append(f"  {row['path']}:{row['line_start']}-{row['line_end']} "
                         f"({row['citations']} citation{'' if row['citations'] == 1 else 's'}): "
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
    out.write(masked("\n".join(lines)) + "\n")


def _print_cost(report: dict, out) -> None:
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
        lines.append(f"memory jobs ({jobs['store']}, {jobs['db']}): {jobs['rows']} row(s)"
                     f"{': ' + kinds if kinds else ''}")
    files = report["files"]
    lines.append(f"session files: {files['read']} read"
                 + (f", {files['skipped_old']} last written before --since" if files["skipped_old"]
                    else "")
                 + (f", {files['partial']} read in part (too large)" if files["partial"] else "")
                 + (f", {files['unreadable']} unreadable" if files["unreadable"] else ""))
    lines += [f"warning: {problem}" for problem in files["problems"]]
    from memcite.cli.console import masked

    out.write(masked("\n".join(lines)) + "\n")
