"""The conformance corpus: its cases, the readings they expect, and the fields compared.

A case is one input and memcite's reading of it (docs/conformance.md, "The case format"):
a reply and its reading under ``--profile codex`` with the thread ids ``--policy codex``
counts, or (kind ``truncation``) a text, a budget and Codex's cut of it. The corpus ships
with memcite (``cases.jsonl`` beside this module) and is regenerated from the golden replies
and the test tables by ``tests/conformance_sources.py``.
"""

from __future__ import annotations

import json
import os

from memcite.errors import InputError
from memcite.untrusted import json_lines, loads_json

FORMAT_VERSION = 1
KINDS = ("reply", "truncation")
SOURCES = ("golden", "table", "fuzz")
CORPUS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.jsonl")
EXPORT_FORMATS = ("jsonl", "json")

# The fields of a reading that conformance compares, in this order (docs/conformance.md).
READING_FIELDS = ("visible", "entries", "rollout_ids", "thread_ids")
TRUNCATION_FIELDS = ("text",)
# What Codex itself lets a test observe of a reply: the visible text it keeps, and which
# threads' usage_count it raises (tests/e2e/codex_conformance_adapter.py).
CODEX_OBSERVABLE_FIELDS = ("visible", "thread_ids")

_CITATION_DOC = "docs/citation-format.md"
RULES = {
    "stage-a": f"{_CITATION_DOC}#2-finding-the-blocks-and-the-visible-reply-stage-a",
    "stage-b": f"{_CITATION_DOC}#3-reading-a-block-body-stage-b",
    "trim": f"{_CITATION_DOC}#what-trim-means",
    "entry-rule": f"{_CITATION_DOC}#4-the-entry-rule",
    "ids": f"{_CITATION_DOC}#5-which-ids-codex-counts",
    "recording": f"{_CITATION_DOC}#6-what-codex-records",
    "truncation": "docs/read-path.md#what-codex-does-profile-codex",
}
# Which rule a disagreement on one field most likely breaks (for cases fuzzing writes).
FIELD_RULES = {"visible": "stage-a", "entries": "entry-rule", "rollout_ids": "stage-b",
               "thread_ids": "ids", "text": "truncation"}

MAX_CORPUS_BYTES = 64 * 2**20


# --------------------------------------------------------------------------- expected readings


def expected_reading(reply: str) -> dict:
    """What memcite reads from ``reply``: the ``memcite parse --json`` shape, no diagnostics.

    ``thread_ids`` are the ids ``--policy codex`` counts (each UUID cited, closed block or
    not, spelling variants apart), which is what Codex adds to ``usage_count``.
    """
    from memcite.citations.reading import parse_reply
    from memcite.ledger.recording import plan_ids, terminated_counts

    reading = parse_reply(reply, profile="codex")
    citation = reading.citation
    rollout_ids = [] if citation is None else list(citation.rollout_ids)
    _, terminated_ids = terminated_counts(reply, reading)
    counted = [cited.thread_id for cited in plan_ids(rollout_ids, terminated_ids, "codex")
               if cited.counted]
    return {
        "visible": reading.visible,
        "citation": None if citation is None else citation.to_dict(),
        "thread_ids": counted,
    }


def expected_truncation(text: str, budget: int) -> dict:
    """Codex's cut of ``text`` to ``budget`` tokens of 4 bytes (docs/read-path.md)."""
    from memcite.readpath.truncation import truncate_approx

    return {"text": truncate_approx(text, budget)}


def reading_fields(reading: dict) -> dict:
    """The compared fields of a reading in the parse --json shape (a null citation: no entries)."""
    citation = reading.get("citation") or {}
    return {
        "visible": reading.get("visible"),
        "entries": citation.get("entries", []),
        "rollout_ids": citation.get("rollout_ids", []),
        "thread_ids": reading.get("thread_ids"),
    }


def expected_fields(case: dict) -> dict:
    """The compared fields a case expects."""
    if case["kind"] == "truncation":
        return {"text": case["expected"]["text"]}
    return reading_fields(case["expected"])


def fields_for(kind: str) -> tuple[str, ...]:
    return TRUNCATION_FIELDS if kind == "truncation" else READING_FIELDS


# --------------------------------------------------------------------------- building cases


def reply_case(name: str, reply: str, rule: str, source: str, origin: str,
               codex_unobservable: str | None = None) -> dict:
    """A reply case with memcite's expected reading of it."""
    case = {"format": FORMAT_VERSION, "name": name, "kind": "reply", "rule": RULES[rule],
            "source": source, "origin": origin, "reply": reply,
            "expected": expected_reading(reply)}
    if codex_unobservable:
        case["codex_unobservable"] = codex_unobservable
    return case


def truncation_case(name: str, text: str, budget: int, source: str, origin: str) -> dict:
    """A truncation case with Codex's cut, as memcite computes it."""
    return {"format": FORMAT_VERSION, "name": name, "kind": "truncation",
            "rule": RULES["truncation"], "source": source, "origin": origin,
            "input": {"text": text, "budget": budget},
            "expected": expected_truncation(text, budget)}


def case_line(case: dict) -> str:
    """One case as its line of ``cases.jsonl`` (ASCII: every odd character escaped)."""
    return json.dumps(case, ensure_ascii=True) + "\n"


def corpus_text(cases: list[dict]) -> str:
    """The whole ``cases.jsonl``."""
    return "".join(case_line(case) for case in cases)


def recomputed(case: dict) -> dict:
    """``case`` with its expectation computed again by memcite's reader now."""
    if case["kind"] == "truncation":
        expected = expected_truncation(case["input"]["text"], case["input"]["budget"])
    else:
        expected = expected_reading(case["reply"])
    return {**case, "expected": expected}


# --------------------------------------------------------------------------- reading a corpus


def load_cases(path: str | None = None) -> list[dict]:
    """The cases of a corpus file (``.jsonl``, or a ``.json`` array); the shipped one by default."""
    path = path or CORPUS_FILE
    from memcite.ledger.memory_files import read_capped
    from memcite.untrusted import open_regular

    try:
        fd = open_regular(path)  # a FIFO or a device is refused, never a hang
        try:
            read = read_capped(fd, MAX_CORPUS_BYTES)
        finally:
            os.close(fd)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, not a corpus file") from None
    except OSError as error:
        raise InputError(f"{path}: cannot be read ({error.strerror})") from None
    if read.too_large:
        raise InputError(f"{path}: the corpus is larger than {MAX_CORPUS_BYTES // 2**20} MiB")
    data = read.data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: invalid UTF-8 at byte offset {error.start}") from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = loads_json(text)
        except ValueError as error:
            raise InputError(f"{path}: not JSON ({error})") from None
        if not isinstance(items, list):
            raise InputError(f"{path}: a .json corpus is an array of cases")
        places = [f"{path}: case {number}" for number in range(1, len(items) + 1)]
    else:
        items, places = [], []
        for number, item, why in json_lines(text):
            if why is not None:
                raise InputError(f"{path}:{number}: {why}")
            items.append(item)
            places.append(f"{path}:{number}")
    for item, place in zip(items, places, strict=True):
        check_case(item, place)
    return items


def check_case(case, place: str) -> None:
    """Refuse what is not a case of the format (the shape the checker relies on)."""
    if not isinstance(case, dict):
        raise InputError(f"{place}: a case is a JSON object")
    for key in ("name", "kind", "rule", "expected"):
        if key not in case:
            raise InputError(f"{place}: the case has no {key!r}")
    if case["kind"] not in KINDS:
        raise InputError(f"{place}: kind {case['kind']!r} is not one of {', '.join(KINDS)}")
    expected = case["expected"]
    if not isinstance(expected, dict):
        raise InputError(f"{place}: 'expected' is not an object")
    if case["kind"] == "reply":
        if not isinstance(case.get("reply"), str):
            raise InputError(f"{place}: a reply case has a string 'reply'")
        citation = expected.get("citation")
        if not isinstance(expected.get("visible"), str) or not isinstance(
                expected.get("thread_ids"), list) or not (
                citation is None or isinstance(citation, dict)):
            raise InputError(f"{place}: 'expected' is not a reading (visible, citation, thread_ids)")
    else:
        given = case.get("input")
        if not isinstance(given, dict) or not isinstance(given.get("text"), str) \
                or not isinstance(given.get("budget"), int) or given["budget"] < 0:
            raise InputError(f"{place}: a truncation case has 'input' with 'text' and 'budget'")
        if not isinstance(expected.get("text"), str):
            raise InputError(f"{place}: 'expected' has no 'text'")


# --------------------------------------------------------------------------- export


def export_corpus(folder: str, export_format: str = "jsonl") -> list[str]:
    """Write the shipped corpus and its case schema into ``folder``; the paths written."""
    from memcite.contracts import schema_file

    if export_format not in EXPORT_FORMATS:
        raise InputError(f"--format: {export_format!r} is not one of {', '.join(EXPORT_FORMATS)}")
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise InputError(f"{folder}: exists and is not a folder")
    os.makedirs(folder, exist_ok=True)
    with open(CORPUS_FILE, encoding="utf-8") as handle:
        text = handle.read()
    if export_format == "json":
        cases = [json.loads(line) for line in text.splitlines() if line.strip()]
        text = json.dumps(cases, ensure_ascii=True, indent=2) + "\n"
    target = os.path.join(folder, f"cases.{export_format}")
    schema_target = os.path.join(folder, "conformance-case.schema.json")
    with open(schema_file("conformance-case"), encoding="utf-8") as handle:
        schema = handle.read()
    write_text_atomic(target, text)
    write_text_atomic(schema_target, schema)
    return [target, schema_target]


def write_text_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through ``memcite.durable_files.write_file`` (an unpredictable
    ``O_EXCL`` temporary file, renamed over it; a link at ``path`` refused, exit 3)."""
    from memcite.durable_files import write_file

    try:
        write_file(path, text.encode("utf-8"), mode=0o644)
    except OSError as error:
        raise InputError(f"{path}: cannot be written ({error.strerror})") from None
