"""What ``memcite consolidation`` prints: ``render_text`` of a ``ConsolidationReport``
(``memcite.codex.consolidation``), a pure function of the report (its ``checked_at`` is the
time the report speaks of).
"""

from __future__ import annotations

from memcite.codex.consolidation import RUN_NOW, span, waiting, when
from memcite.display import count, shown

NOTES_SHOWN = 10  # notes of others already in the baseline, in the text report
STATE_WORDS = {
    "never": "no run recorded yet",
    "pending": "new input queued",
    "running": "running",
    "stuck": "stuck (its lease ran out mid-run)",
    "failed": "failed",
    "succeeded": "succeeded",
}


def _job_line(state: dict, when, span, now: int) -> list[str]:
    word = STATE_WORDS.get(state["state"], state["state"])
    lines = []
    if state["state"] == "never":
        lines.append(f"consolidation (phase 2): {word}")
    elif state["state"] == "succeeded":
        lines.append(f"consolidation (phase 2): {word} at {when(state['finished'])} "
                     f"({span(now - state['finished'])} ago)")
    elif state["state"] == "failed":
        lines.append(f"consolidation (phase 2): {word} at {when(state['finished'])}: "
                     f"{state['error'] or '?'}")
        if state.get("error_meaning"):
            lines.append(f"  {state['error_meaning']}")
        if state.get("error_detail"):
            lines.append(f"  {state['error_detail']}")
    elif state["state"] in ("running", "stuck"):
        lines.append(f"consolidation (phase 2): {word}, started {when(state['started'])}, "
                     f"lease until {when(state['lease_until'])}"
                     + (f" (session {state['worker']})" if state.get("worker") else ""))
    else:
        lines.append(f"consolidation (phase 2): {word} (status {state['status']}); the last "
                     f"run ended {when(state['finished'])}"
                     + (f" with {state['error']}" if state.get("error") else ""))
    if state["state"] != "never":
        succeeded = state.get("succeeded")
        if state["state"] != "succeeded":
            source = {"job": "its job row", "baseline": "the memory folder's git baseline, "
                      "made again after each success"}.get(state.get("succeeded_from") or "")
            lines.append(f"  last success: {when(succeeded)} ({source})" if succeeded
                         else "  last success: not recorded (the job row keeps its last run "
                              "only)")
        if state.get("retries_left") is not None and state.get("error"):
            lines.append(f"  retries left: {state['retries_left']} (Codex counts them down; "
                         "0.171 still retries a consolidation an hour after each failure)")
    if state.get("backoff"):
        lines.append(f"  back-off in force until {when(state['retry_after'])}")
    next_run, why = when(state["next_run"]), state["next_run_why"]
    # The reason may name the time already ("... (until T)"): never twice, never nested.
    lines.append(f"  next run possible: {why}" if next_run in why
                 else f"  next run possible: {next_run} ({why})")
    return lines



def render_text(report) -> str:
    """The text report of ``memcite consolidation`` (a ``ConsolidationReport``)."""
    parts: list[str] = []
    out = parts.append
    now = report.checked_at
    loc = report.locations
    out(f"Codex's memory consolidation in {loc.codex_home} (as of {when(now)})\n")
    out(f"Codex reads memory store {loc.store} ({loc.store_from})"
        + (f"; dual_write: it consolidates {', '.join(s.store for s in report.stores if s.consolidated)}"
           if loc.dual_write else "") + "\n")
    for store in report.stores:
        role = ("read and consolidated by Codex" if store.read else
                "consolidated by Codex (dual_write)" if store.consolidated else
                "not consolidated by Codex now (no dual_write)")
        out(f"\nstore {store.store} ({store.folder}): {role}\n")
        if not store.db_present:
            out(f"  {store.db}: not there (Codex writes it once memories are on)\n")
        for line in _job_line(store.consolidation, when, span, now):
            out(f"  {line}\n")
        extraction = store.extraction or {}
        if extraction.get("jobs"):
            counts = ", ".join(f"{n} {s}" for s, n in extraction["by_status"].items())
            jobs = extraction["jobs"]
            out(f"  extraction (phase 1): {count(jobs, 'thread job')}: {counts}; last "
                f"success {when(extraction['succeeded'])}\n")
            for item in extraction["failures"][:5]:
                out(f"    failed: thread {item['thread_id']} at {when(item['finished'])}: "
                    f"{item['error'] or '?'} (retry after {when(item['retry_after'])}, "
                    f"{item['retries_left']} retries left)\n")
            if extraction["failed"] > 5:
                out(f"    ... and {extraction['failed'] - 5} more failed (--json lists "
                    f"{len(extraction['failures'])})\n")
            for thread in extraction["stuck_threads"][:5]:
                out(f"    stuck: thread {thread} holds a lease past its time\n")
        else:
            out("  extraction (phase 1): no thread job recorded\n")
        inputs = store.inputs
        if inputs and inputs.get("known"):
            filtered = (f" ({inputs['not_enabled']} passed over: their thread's memory_mode is "
                        "not enabled)" if inputs["not_enabled"] else "") if inputs["threads_known"] \
                else " (Codex's threads table was not found: memory_mode not checked)"
            out(f"  inputs: {count(inputs['rows'], 'memory', 'memories')} in Codex's database; "
                f"the last consolidation read {inputs['selected']} of them, the next would read "
                f"{inputs['next']}: {inputs['new']} new, {inputs['changed']} changed since read, "
                f"{inputs['dropped']} dropped{filtered}\n")
        elif inputs is not None:
            out(f"  inputs: {count(inputs['rows'], 'memory', 'memories')} in Codex's database "
                "(its selection columns are missing: an older Codex)\n")
        baseline, diff = store.baseline, store.diff
        if baseline and baseline.present:
            out(f"  git baseline: {(baseline.commit or '?')[:12]} of {when(baseline.committed)}"
                + (f" ({baseline.problem})" if baseline.problem else "") + "\n")
        elif store.folder_present:
            out("  git baseline: none yet (Codex makes one at its first consolidation)\n")
        if diff and diff.present:
            out(f"  {diff.written and when(diff.written)}: phase2_workspace_diff.md of a run "
                f"that has not succeeded lists {count(len(diff.paths), 'change')}\n")
        if store.notes:
            # every note not in the baseline, and memcite's; the newest NOTES_SHOWN of the others
            others = [n for n in store.notes if n["seen_by"] == "baseline" and not n["by_memcite"]]
            shown = [n for n in store.notes if n not in others] + others[-NOTES_SHOWN:]
            hidden = len(store.notes) - len(shown)
            out(f"  ad-hoc notes ({len(store.notes)}):\n")
            for note in sorted(shown, key=lambda n: n["name"]):
                who = "memcite" if note["by_memcite"] else "other"
                if note["seen_by"] == "baseline":
                    seen = f"absorbed: in the baseline of {when(note['seen'])}"
                elif note["seen_by"] == "workspace_diff":
                    seen = f"seen by the run of {when(note['seen'])}, which has not succeeded"
                else:
                    seen = "not seen by a consolidation yet" + (
                        " (changed since it was)" if note["changed_since_seen"] else "")
                out(f"    {note['name']}  [{who}]  {seen}\n")
            if hidden:
                out(f"    ... and {hidden} older notes of others, absorbed (--json lists them)\n")
        if store.consolidated:
            pending = waiting(store)
            out(f"  waiting for the next consolidation: {', '.join(pending) or 'nothing'}\n")
    for item in report.memory_runs:
        parts.extend(render_runs(item, history=report.history))
    if report.v2_readiness is not None:
        out(v2_line(report.v2_readiness) + "\n")
    if report.v2_switch is not None:
        from memcite.codex.v2_switch import render_switch

        parts.extend(render_switch(report.v2_switch))
    problems = report.problems
    out("\n")
    if problems:
        out(f"warnings ({len(problems)}):\n")
        for problem in problems:
            out(f"  - [{problem['kind']}] {problem['message']}\n")
            if problem.get("detail"):
                out(f"    {problem['detail']}\n")
            if problem.get("fix"):
                out(f"    fix: {problem['fix']}\n")
    else:
        out(f"no warnings (a consolidation not succeeded for over {report.stale_hours} h while "
            f"something waits would be one; {report.stale_hours_from})\n")
    out(f"\nto run one now: {RUN_NOW}\n")
    return "".join(parts)


WHY_LOST = {"forget": "expected: a forget request asked", "retention": "expected: Codex's "
            "retention removed its source", "unexpected": "UNEXPECTED"}
SHOWN = 10  # lines shown per kind of finding


def v2_line(ready: dict) -> str:
    """One line on memory store v2's readiness (``memory/status``'s judgement)."""
    state = "ready" if ready["ready"] else "not ready"
    return (f"memory store v2: {state} ({ready['consolidated_threads']} of "
            f"{ready['min_consolidated_threads']} distinct threads consolidated into v2; its "
            f"memory_summary.md: {ready['summary_state']})"
            + (f"; {ready['problem']}" if ready.get("problem") else ""))


def _threads(threads: list[str]) -> str:
    return f" [{', '.join(threads[:3])}{', ...' if len(threads) > 3 else ''}]" if threads else ""


def render_run(run: dict) -> list[str]:
    """The lines of one judged run."""
    out = []
    start = "memcite's first snapshot (baseline)" if run["from_baseline"] else \
        f"snapshot {run['before_snapshot']}"
    out.append(f"  run seen {when(run['after_taken_at'])} (from {start} to snapshot "
               f"{run['after_snapshot']}): {count(run['findings'], 'finding')}\n")
    for item in run["lost"][:SHOWN]:
        out.append(f"    lost in use ({WHY_LOST[item['why']]}): {item['file']}:{item['line']} "
                   f"{shown(repr(item['text']))}{_threads(item['threads'])}\n")
    for item in run["rewritten"][:SHOWN]:
        out.append(f"    rewritten: {item['file']}:{item['line']} -> {item['now_file']}:"
                   f"{item['now_line']}: {shown(', '.join(item['facts_gone']) or '-')} became "
                   f"{shown(', '.join(item['facts_new']) or '-')}{_threads(item['threads'])}\n")
    for item in run["unsupported"][:SHOWN]:
        out.append(f"    unsupported: {item['file']}:{item['line']} {shown(repr(item['text']))}: "
                   f"{shown(', '.join(item['facts']))} in no source of the run\n")
    for item in run["came_back"][:SHOWN]:
        out.append(f"    came back: {item['file']}:{item['line']} of {item['thread']}, asked "
                   f"to forget {when(item['asked_at'])}\n")
    for note in run["notes"][:SHOWN]:
        places = ", ".join(f"{p['file']}:{p['line']}" for p in note["lines"][:5])
        if note["kind"] == "forget":
            text = "done: no line of its memories is left" if note["absorbed"] else \
                f"not done: its memories are still at {places}"
        else:
            text = f"absorbed into {places}" if note["absorbed"] else "not absorbed"
        out.append(f"    note {shown(note['note'])}: {text}\n")
    hidden = sum(max(0, len(run[k]) - SHOWN) for k in ("lost", "rewritten", "unsupported",
                                                       "came_back", "notes"))
    if hidden:
        out.append(f"    ... and {hidden} more (--json lists them)\n")
    growth = run["growth"]
    after = growth["after"]
    out.append(f"    growth: MEMORY.md {after['lines']} lines ({growth['lines']:+d}), "
               f"{count(after['task_groups'], 'task group')} ({growth['task_groups']:+d}), "
               f"{after['bytes']} bytes ({growth['bytes']:+d}); summary {after['summary_tokens']}"
               f" of {after['budget_tokens']} tokens"
               + (" (too long: the read path cuts it)" if growth["summary_cut"] else "") + "\n")
    jobs = run["jobs"]
    if jobs["known"]:
        dead = ", ".join(f"{n} {k}" for k, n in jobs["dead_by_error"].items())
        out.append(f"    jobs: consolidation {jobs['consolidation'] or '-'}"
                   + (f" ({jobs['error']}, {jobs['retries_left']} retries left)"
                      if jobs["error"] else "")
                   + f"; extraction {jobs['succeeded']} done, {jobs['failed']} failed "
                   f"({jobs['retrying']} retrying, {jobs['dead']} dead"
                   + (f": {dead}" if dead else "") + ")\n")
    return out


def render_runs(item: dict, *, history: bool) -> list[str]:
    """The part of one store: memcite's snapshots and the runs they show."""
    out = [f"\nwhat consolidations did in store {item['store']} "
           f"({count(item['snapshots'], 'snapshot')} kept by memcite):\n"]
    if item.get("problem"):
        out.append(f"  {item['problem']}\n")
    if item.get("history_note"):
        out.append(f"  {item['history_note']}\n")
    if not item["runs"]:
        out.append("  no run seen yet: memcite compares the folder's next change with its "
                   "last snapshot\n")
    for run in item["runs"] if history else item["runs"][:1]:
        out.extend(render_run(run))
    return out


__all__ = ["NOTES_SHOWN", "STATE_WORDS", "render_run", "render_runs", "render_text", "v2_line"]
