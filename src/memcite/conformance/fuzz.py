"""``memcite conformance fuzz``: generated replies, another implementation against memcite.

Replies are made by a seeded ``random.Random`` (no new dependency, the same seed gives the
same replies in the same order) from the corpus's replies, mutated: fragments of the
syntax inserted, spans cut or doubled, lines spliced from other cases, CRLF line ends,
code fences, cut-off (unterminated) blocks, odd ids, Unicode, huge entries. Each reply on
which the program and memcite disagree is shrunk (delta debugging, by lines then by
characters, keeping the same disagreement) and written as a corpus case.
"""

from __future__ import annotations

import os
import random
import time

from memcite.conformance.check import compare
from memcite.conformance.corpus import (
    FIELD_RULES,
    READING_FIELDS,
    case_line,
    reply_case,
)
from memcite.conformance.runner import DEFAULT_TIMEOUT, RunResult, run_json
from memcite.display import count
from memcite.errors import InputError

MAX_WRITTEN = 20  # shrunk cases written per run at most
SAME_KIND_SHRUNK = 3  # disagreements of one kind (outcome and fields) shrunk at most
SHRINK_RUNS = 200  # runs of the program per shrink at most
SHRINK_SECONDS = 30.0  # per shrink at most, and no longer than the time left but 5 s
MIN_SHRINK_SECONDS = 5.0
HUGE = 20_000

UUIDS = ("019c6e27-e55b-73d1-87d8-4e01f1f75043", "019c7714-3b77-74d1-9866-e1f484aae2ab",
         "00000000-0000-0000-0000-000000000000")
TAGS = ("<oai-mem-citation>", "</oai-mem-citation>", "<citation_entries>", "</citation_entries>",
        "<rollout_ids>", "</rollout_ids>", "<thread_ids>", "</thread_ids>", "<memory_citation>",
        "</memory_citation>", "<oai-mem-", "<OAI-MEM-CITATION>")
SYNTAX = ("|note=[", "]", "[", ":", "-", "+", "0", "1", "42", "007", "4294967295", "4294967296",
          "99999999999", "MEMORY.md", "a.md", "..", "/", "\\", "C:\\", " ", "\t", "\n", "\r\n",
          "\r", "```\n", "~~~\n", "    ")
ODD_CHARS = ("\u3000", "\u2028", "\u2029", "\x85", "\xa0", "\x0b", "\x0c", "\x1c", "\x1f",
             "\u200b", "\ufeff", "\u202f", "\u1680", "\uff10", "\u0661", "é", "ß", "\U0001f600",
             "\u0301", "\x00", "\x7f", "İ", "ﬁ")


def odd_id(rng: random.Random) -> str:
    """One way of writing an id that Codex reads differently from a plain UUID."""
    uuid = rng.choice(UUIDS)
    digits = uuid.replace("-", "")
    return rng.choice((
        uuid, uuid.upper(), digits, digits.upper(), "{" + uuid + "}", "urn:uuid:" + uuid,
        "URN:UUID:" + uuid, "urn:uuid:" + digits, "{" + digits + "}", uuid[:-1], uuid + "0",
        uuid.replace("-", "_"), " " + uuid + " ", uuid + "\u200b", "\ufeff" + uuid,
        "not-a-uuid", "{" + uuid, uuid.replace("a", "\uff41", 1), "",
    ))


def _entry_line(rng: random.Random) -> str:
    path = rng.choice(("MEMORY.md", "a.md", "skills/x/SKILL.md", "../x.md", "C:\\m\\M.md", ""))
    note = rng.choice(("x", "", "see [docs]", "time 10:30", "naïve ✓"))
    if rng.random() < 0.08:
        if rng.random() < 0.5:
            path = "p" * rng.randrange(1000, HUGE)
        else:
            note = "n" * rng.randrange(1000, HUGE)
    start = rng.choice(("1", "+1", "007", "0", "4294967295", "4294967296", " 3 ", "1.5", "x"))
    end = rng.choice(("2", "+2", "010", "0", "4294967295", "99999999999", " 5", ""))
    return f"{path}:{start}-{end}|note=[{note}]"


def _fresh_block(rng: random.Random) -> str:
    parts = ["<oai-mem-citation>"]
    if rng.random() < 0.8:
        parts += ["<citation_entries>", *(_entry_line(rng) for _ in range(rng.randrange(4))),
                  "</citation_entries>"]
    if rng.random() < 0.8:
        section = "thread_ids" if rng.random() < 0.15 else "rollout_ids"
        parts += [f"<{section}>", *(odd_id(rng) for _ in range(rng.randrange(4))), f"</{section}>"]
    parts.append("</oai-mem-citation>")
    return rng.choice(("\n", "", "\r\n")).join(parts)


def _position(rng: random.Random, text: str) -> int:
    return rng.randrange(len(text) + 1)


def _mutate(rng: random.Random, text: str, donors: list[str]) -> str:
    choice = rng.randrange(12)
    at = _position(rng, text)
    if choice == 0:
        return text[:at] + rng.choice(TAGS) + text[at:]
    if choice == 1:
        return text[:at] + rng.choice(SYNTAX) + text[at:]
    if choice == 2 and text:
        end = min(len(text), at + rng.randrange(1, 40))
        return text[:at] + text[end:]
    if choice == 3 and text:
        end = min(len(text), at + rng.randrange(1, 60))
        return text[:end] + text[at:end] + text[end:]
    if choice == 4 and donors:
        lines = rng.choice(donors).split("\n")
        return text[:at] + rng.choice(lines) + "\n" + text[at:]
    if choice == 5:
        return text.replace("\n", "\r\n")
    if choice == 6:
        fence = rng.choice(("```", "~~~", "````"))
        return f"Example:\n\n{fence}\n{text}\n{fence}\n"
    if choice == 7:
        return text[:at]  # cut short: a block may be left open
    if choice == 8:
        return text[:at] + "\n" + odd_id(rng) + "\n" + text[at:]
    if choice == 9:
        return text[:at] + "".join(rng.choice(ODD_CHARS) for _ in range(rng.randrange(1, 4))) \
            + text[at:]
    if choice == 10:
        return text[:at] + "\n" + _entry_line(rng) + "\n" + text[at:]
    return text[:at] + _fresh_block(rng) + text[at:]


def generate_replies(seed: int, cases: list[dict]):
    """The replies fuzzing tries, in order: the same ``seed`` and corpus, the same replies."""
    rng = random.Random(seed)
    donors = [case["reply"] for case in cases if case["kind"] == "reply"]
    while True:
        roll = rng.random()
        if roll < 0.15 or not donors:
            text = rng.choice(("", "Answer.\n\n", "prose ")) + _fresh_block(rng)
        else:
            text = rng.choice(donors)
        for _ in range(rng.randrange(1, 5)):
            text = _mutate(rng, text, donors)
        yield text


# --------------------------------------------------------------------------- shrinking


def _signature(found: dict | None) -> tuple | None:
    return None if found is None else (found["outcome"], tuple(found["fields"]))


def _pieces(text: str, unit: str) -> list[str]:
    return text.splitlines(keepends=True) if unit == "line" else list(text)


def shrink(text: str, still_fails, max_runs: int = SHRINK_RUNS,
           seconds: float = SHRINK_SECONDS) -> str:
    """A smaller ``text`` for which ``still_fails`` holds (delta debugging on complements).

    Lines first, then characters; ``still_fails`` is called at most ``max_runs`` times and
    not after ``seconds``.
    """
    deadline = time.monotonic() + seconds
    runs = 0
    for unit in ("line", "char"):
        pieces = _pieces(text, unit)
        parts = 2
        while len(pieces) >= 2:
            size = -(-len(pieces) // parts)
            reduced = False
            for start in range(0, len(pieces), size):
                if runs >= max_runs or time.monotonic() >= deadline:
                    return "".join(pieces)
                candidate = pieces[:start] + pieces[start + size:]
                runs += 1
                if still_fails("".join(candidate)):
                    pieces, parts, reduced = candidate, max(parts - 1, 2), True
                    break
            if not reduced:
                if parts >= len(pieces):
                    break
                parts = min(parts * 2, len(pieces))
        text = "".join(pieces)
    return text


# --------------------------------------------------------------------------- the run


def reply_disagreement(reply: str, command: list[str], fields: tuple[str, ...],
                       timeout: float) -> dict | None:
    """The program's disagreement with memcite on ``reply``, or None."""
    case = reply_case("fuzz", reply, "stage-a", "fuzz", "generated")
    result: RunResult = run_json(command, reply.encode("utf-8"), timeout)
    return compare(case, result, fields)


def _written_case(seed: int, index: int, reply: str, found: dict) -> dict:
    rule = FIELD_RULES.get(found["fields"][0], "stage-a") if found["fields"] else "stage-a"
    origin = (f"memcite conformance fuzz --seed {seed}: reply {index}, shrunk; the other "
              f"implementation: {found['outcome']}"
              + (f" on {', '.join(found['fields'])}" if found["fields"] else ""))
    return reply_case(f"fuzz/{seed}-{index}", reply, rule, "fuzz", origin)


def fuzz(command: list[str], cases: list[dict], seed: int = 0, seconds: float = 60.0,
         max_cases: int | None = None, out: str | None = None,
         fields: tuple[str, ...] = READING_FIELDS, timeout: float = DEFAULT_TIMEOUT,
         progress=None) -> dict:
    """Fuzz ``command`` against memcite; the report (the fuzz --json shape)."""
    if out is not None:
        if os.path.exists(out) and not os.path.isdir(out):
            raise InputError(f"--out: {out} exists and is not a folder")
        os.makedirs(out, exist_ok=True)
    started = time.monotonic()
    generated = disagreeing = 0
    kinds: dict[tuple, int] = {}
    written: list[dict] = []
    seen_shrunk: set[str] = set()
    stopped = "seconds"
    for index, reply in enumerate(generate_replies(seed, cases)):
        if max_cases is not None and index >= max_cases:
            stopped = "max-cases"
            break
        if time.monotonic() - started >= seconds:
            break
        generated += 1
        found = reply_disagreement(reply, command, fields, timeout)
        if found is None:
            continue
        disagreeing += 1
        signature = _signature(found)
        kinds[signature] = kinds.get(signature, 0) + 1
        if progress is not None:
            progress(index, found)
        if len(written) >= MAX_WRITTEN or kinds[signature] > SAME_KIND_SHRUNK:
            continue
        if found["outcome"] == "timeout":
            small = reply  # each try would wait for the time limit
        else:
            def still_fails(candidate: str, signature=signature) -> bool:
                return _signature(reply_disagreement(candidate, command, fields,
                                                     timeout)) == signature
            left = seconds - (time.monotonic() - started)
            small = shrink(reply, still_fails,
                           seconds=min(SHRINK_SECONDS, max(MIN_SHRINK_SECONDS, left)))
        if small in seen_shrunk:
            continue
        seen_shrunk.add(small)
        case = _written_case(seed, index, small, found)
        entry = {"case": case["name"], "outcome": found["outcome"], "fields": found["fields"],
                 "reply_chars": len(small), "generated_chars": len(reply), "file": None,
                 "rule": case["rule"]}
        if out is not None:
            path = os.path.join(out, f"fuzz-{seed}-{index}.jsonl")
            from memcite.conformance.corpus import write_text_atomic

            write_text_atomic(path, case_line(case))
            entry["file"] = path
        entry["reply"] = small
        written.append(entry)
    return {"command": list(command), "seed": seed, "fields": list(fields),
            "generated": generated, "disagreements": disagreeing,
            "seconds": round(time.monotonic() - started, 3), "stopped": stopped,
            "shrunk": written}


def fuzz_reader(command: list[str], seconds: float = 60.0, seed: int = 0,
                max_cases: int | None = None, out: str | None = None, fields: str | None = None,
                timeout: float = DEFAULT_TIMEOUT, corpus: str | None = None,
                progress=None) -> dict:
    """``memcite conformance fuzz``'s work: the options checked, ``command`` found, replies
    generated from the corpus (``corpus``, else the shipped one) and compared; the report."""
    from memcite.conformance.check import check_timeout, parse_fields
    from memcite.conformance.corpus import load_cases
    from memcite.conformance.runner import resolve_command

    check_timeout(timeout)
    if not 0 < seconds <= 7 * 24 * 3600:
        raise InputError(f"--seconds: {seconds:g} is not a number of seconds above 0")
    if max_cases is not None and max_cases < 1:
        raise InputError(f"--max-cases: {max_cases} is not 1 or more")
    chosen = parse_fields(fields, "reply")
    command = resolve_command(command)
    cases = load_cases(corpus)
    return fuzz(command, cases, seed=seed, seconds=seconds, max_cases=max_cases, out=out,
                fields=chosen, timeout=timeout, progress=progress)


def progress_line(index: int, found: dict) -> str:
    """The text report's line for one generated reply that disagreed."""
    return (f"reply {index}: {found['outcome']}"
            + (f" on {', '.join(found['fields'])}" if found["fields"] else "") + "\n")


def render_fuzz_summary(report: dict) -> str:
    """The text report's last lines: each case written (shrunk), then the run's counts."""
    text = ""
    for shrunk in report["shrunk"]:
        where = f" -> {shrunk['file']}" if shrunk["file"] else ""
        text += (f"{shrunk['case']}: {shrunk['outcome']}, shrunk from "
                 f"{shrunk['generated_chars']} to {shrunk['reply_chars']} characters{where}\n")
    return text + (f"seed {report['seed']}: {report['generated']} replies in "
                   f"{report['seconds']:g} s, {count(report['disagreements'], 'disagreement')}, "
                   f"{count(len(report['shrunk']), 'case')} written\n")
