"""``memcite conformance check``: another implementation against the corpus, case by case.

For each case the program gets the input on stdin (the reply's UTF-8 bytes; for a
truncation case the JSON object ``{"text", "budget"}``) and prints its reading as JSON; the
compared fields of that reading must equal the case's. Pure comparison functions, and
``check_corpus`` that runs them; printing is the CLI's.
"""

from __future__ import annotations

import json

from memcite.conformance.corpus import (
    KINDS,
    READING_FIELDS,
    TRUNCATION_FIELDS,
    expected_fields,
    fields_for,
)
from memcite.conformance.runner import DEFAULT_TIMEOUT, RunResult, run_json
from memcite.errors import InputError

SHOWN_CHARS = 100


def input_bytes(case: dict) -> bytes:
    """What the program reads on stdin for ``case``."""
    if case["kind"] == "truncation":
        return json.dumps(case["input"], ensure_ascii=False).encode("utf-8")
    return case["reply"].encode("utf-8")


def _entry_ok(entry) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("path"), str) \
        and isinstance(entry.get("note"), str) \
        and all(isinstance(entry.get(key), int) and not isinstance(entry.get(key), bool)
                for key in ("line_start", "line_end"))


def got_fields(output: dict, kind: str, fields: tuple[str, ...]) -> tuple[dict | None, str | None]:
    """The compared fields of the program's output, or (None, why the shape is wrong)."""
    if kind == "truncation":
        text = output.get("text")
        return ({"text": text}, None) if isinstance(text, str) else (None, "no string 'text'")
    got: dict = {}
    if "visible" in fields:
        if not isinstance(output.get("visible"), str):
            return None, "no string 'visible'"
        got["visible"] = output["visible"]
    if "entries" in fields or "rollout_ids" in fields:
        citation = output.get("citation")
        if citation is None:
            citation = {}
        if not isinstance(citation, dict):
            return None, "'citation' is neither an object nor null"
        entries = citation.get("entries", [])
        rollout_ids = citation.get("rollout_ids", [])
        if "entries" in fields:
            if not isinstance(entries, list) or not all(_entry_ok(e) for e in entries):
                return None, "'citation.entries' is not a list of {path, line_start, line_end, note}"
            got["entries"] = [{key: e[key] for key in ("path", "line_start", "line_end", "note")}
                              for e in entries]
        if "rollout_ids" in fields:
            if not isinstance(rollout_ids, list) or not all(isinstance(i, str) for i in rollout_ids):
                return None, "'citation.rollout_ids' is not a list of strings"
            got["rollout_ids"] = rollout_ids
    if "thread_ids" in fields:
        thread_ids = output.get("thread_ids")
        if not isinstance(thread_ids, list) or not all(isinstance(i, str) for i in thread_ids):
            return None, "no list of strings 'thread_ids'"
        got["thread_ids"] = thread_ids
    return got, None


def differing(expected: dict, got: dict, fields: tuple[str, ...]) -> list[str]:
    """The compared fields whose values differ, in ``fields`` order."""
    return [field for field in fields if field in expected and expected[field] != got.get(field)]


def compare(case: dict, result: RunResult, fields: tuple[str, ...]) -> dict | None:
    """The disagreement of one case (a dict), or None when the program agrees."""
    kind_fields = tuple(f for f in fields if f in fields_for(case["kind"])) or fields_for(case["kind"])
    expected = {k: v for k, v in expected_fields(case).items() if k in kind_fields}
    found = {"case": case["name"], "rule": case["rule"], "outcome": result.outcome,
             "fields": [], "expected": expected, "got": None, "detail": result.detail}
    if result.outcome != "ok":
        return found
    got, problem = got_fields(result.output, case["kind"], kind_fields)
    if got is None:
        return {**found, "outcome": "bad-shape", "detail": problem}
    wrong = differing(expected, got, kind_fields)
    if not wrong:
        return None
    return {**found, "outcome": "differs", "fields": wrong,
            "expected": {k: expected[k] for k in wrong}, "got": {k: got[k] for k in wrong}}


def parse_fields(text: str | None, kind: str) -> tuple[str, ...]:
    """``--fields a,b``: the compared fields, checked against the kind's (all by default)."""
    allowed = fields_for(kind)
    if not text:
        return allowed
    chosen = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [f for f in chosen if f not in allowed]
    if unknown or not chosen:
        raise InputError(f"--fields: {', '.join(unknown) or repr(text)} is not among "
                         f"{', '.join(allowed)}")
    return tuple(f for f in allowed if f in chosen)


# A program that timed out on this many cases in a row answers none: the run stops, saying
# so, instead of waiting --timeout on each of the corpus's cases (174 x 10 s: 29 minutes).
MAX_CONSECUTIVE_TIMEOUTS = 3


def check_corpus(cases: list[dict], command: list[str], kind: str = "reply",
                 fields: tuple[str, ...] = READING_FIELDS, timeout: float = DEFAULT_TIMEOUT,
                 progress=None) -> dict:
    """Run ``command`` on every case of ``kind``; the report (the check --json shape).

    After ``MAX_CONSECUTIVE_TIMEOUTS`` time-outs in a row the run stops (``stopped``:
    ``timeouts``) and the cases left are counted in ``not_run``."""
    if kind not in KINDS:
        raise InputError(f"--kind: {kind!r} is not one of {', '.join(KINDS)}")
    if kind == "truncation" and fields == READING_FIELDS:
        fields = TRUNCATION_FIELDS
    chosen = [case for case in cases if case["kind"] == kind]
    disagreements = []
    run = in_a_row = 0
    stopped = None
    for case in chosen:
        result = run_json(command, input_bytes(case), timeout)
        run += 1
        found = compare(case, result, fields)
        if found is not None:
            disagreements.append(found)
        if progress is not None:
            progress(case, found)
        in_a_row = in_a_row + 1 if result.outcome == "timeout" else 0
        if in_a_row >= MAX_CONSECUTIVE_TIMEOUTS and run < len(chosen):
            stopped = "timeouts"
            break
    failed = sum(1 for d in disagreements if d["outcome"] != "differs")
    return {"command": list(command), "kind": kind, "fields": list(fields),
            "cases": run, "agreed": run - len(disagreements),
            "differed": len(disagreements) - failed, "failed": failed,
            "skipped": len(cases) - len(chosen), "not_run": len(chosen) - run,
            "stopped": stopped, "timeouts_in_a_row": in_a_row,
            "disagreements": disagreements}


MAX_TIMEOUT = 3600.0


def check_timeout(timeout: float) -> None:
    """Refuse a ``--timeout`` that is not a number of seconds above 0 and at most an hour."""
    if not 0 < timeout <= MAX_TIMEOUT:
        raise InputError(f"--timeout: {timeout:g} is not a number of seconds above 0 and at most "
                         f"{MAX_TIMEOUT:g}")


def check_reader(command: list[str], corpus: str | None = None, kind: str = "reply",
                 fields: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 progress=None) -> dict:
    """``memcite conformance check``'s work: the options checked, ``command`` found, the corpus
    (``corpus``, else the shipped one) run through it; the report, naming its corpus."""
    from memcite.conformance.corpus import CORPUS_FILE, load_cases
    from memcite.conformance.runner import resolve_command

    check_timeout(timeout)
    chosen = parse_fields(fields, kind)
    command = resolve_command(command)
    cases = load_cases(corpus)
    report = check_corpus(cases, command, kind, chosen, timeout, progress)
    return {"corpus": corpus or CORPUS_FILE, **report}


def render_check_summary(report: dict, timeout: float) -> str:
    """The text report's last lines: the counts, and why the run stopped early if it did."""
    text = (f"{report['cases']} {report['kind']} cases: {report['agreed']} agree, "
            f"{report['differed']} differ, {report['failed']} failed "
            f"({', '.join(report['fields'])} compared)\n")
    if report["stopped"] == "timeouts":
        text += (f"stopped: the program timed out on {report['timeouts_in_a_row']} cases in a "
                 f"row (--timeout {timeout:g} s each), so it answers none; "
                 f"{report['not_run']} cases not run. Check that it reads stdin to its end and "
                 "prints one JSON object, then run again\n")
    return text


def shown(value, limit: int = SHOWN_CHARS) -> str:
    """A value in one short line, for the text report."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= limit else text[:limit] + "…"


def disagreement_lines(found: dict) -> list[str]:
    """How the text report prints one disagreement."""
    head = f"{found['case']}: {found['outcome']}  ({found['rule']})"
    if found["outcome"] != "differs":
        return [head, f"  {found['detail']}"]
    lines = [head]
    for field in found["fields"]:
        lines.append(f"  {field}: expected {shown(found['expected'][field])}")
        lines.append(f"  {' ' * len(field)}       got {shown(found['got'][field])}")
    return lines
