"""What each consolidation did to the memories in use: pure judgements of two snapshots.

A *run* is a pair of snapshots (``memcite.codex.snapshots``) of one memory folder: the last
one before ``MEMORY.md`` or ``memory_summary.md`` changed, and the one after. Given the
cited ranges of the ledger (each with the SHA-256 of the lines it cited), the forget
requests memcite made, and the time, ``judge_run`` says:

- **lost**: a cited line (cited within the retention window) whose words are gone from
  every file the next session can read (``MEMORY.md``, the summary, the rollout
  summaries); *expected* when a forget request asked to drop one of its memories
  (``forget``) or when Codex's own retention removed the rollout summary of each of its
  memories (``retention``), *unexpected* otherwise;
- **rewritten**: a cited line whose facts changed (a number, a path, a command, a name, a
  version) in the line that replaced it; a line only reworded is not a finding;
- **unsupported**: a new line whose facts appear in no source the run had (raw memories,
  rollout summaries, notes, the earlier ``MEMORY.md`` and summary);
- **came_back**: lines of a memory memcite asked Codex to forget, absent before the run
  and present after it;
- **notes**: for each ad-hoc note new to the run, the new lines that carry it, or that it
  was not absorbed; for memcite's own forget notes, whether the lines of the memories they
  name are gone;
- **growth** and **jobs**: ``MEMORY.md``'s lines, task groups and bytes, the summary's
  tokens against the read path's budget, and Codex's job health.

Everything here is a pure function of the texts, the citations and the time passed in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

DAY = 86_400
SIMILAR = 0.5  # Dice's coefficient of the words: a later line may be the same line, reworded
SAME = 0.7  # ... and is, without a fact in common
COVERED = 0.8  # share of a line's words found in one rollout summary: still readable there
CARRIES = 0.5  # share of a new line's words that come from a note: the line carries it
MIN_SHARED = 3  # words a line shares with one sentence of a note, at the least
MAX_LISTED = 50
APPROX_BYTES_PER_TOKEN = 4
MEMORY_FILE = "MEMORY.md"
SUMMARY_FILE = "memory_summary.md"

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_TICKED = re.compile(r"`([^`\n]*)`")
_TOKEN = re.compile(r"[A-Za-z0-9_./\\~:@+-]+")
_WORD = re.compile(r"[a-z][a-z']{2,}")
_VERSION = re.compile(r"\Av?\d+(?:\.\d+)+\Z", re.I)
_NUMBER = re.compile(r"\A\d+\Z")
_EXTENSION = re.compile(r"\.(?:py|md|js|mjs|ts|tsx|vue|json|toml|ya?ml|sh|bat|ps1|rs|go|txt|cfg"
                        r"|ini|lock|sql|lua|c|h|cpp|java|rb|php|html|css|env|log)\Z", re.I)
_ROOTED = re.compile(r"\A(?:/|~[/\\]|\.\.?[/\\]|[A-Za-z]:[/\\]|\\\\)")
# An identifier with ``_``, camelCase, or an option; an upper-case word alone is emphasis.
_NAME = re.compile(r"\A(?:[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9]|[a-z]+[A-Z]\w*"
                   r"|--[a-z][a-z0-9-]+)\Z")
_STOP = frozenset("the and for with that this from are was were has have had not but you your "
                  "its into than then them they when what which while will would should can "
                  "could use used uses using via per also only each any all one two".split())
_TASK_GROUP = re.compile(r"^#[ \t]+Task Group\b", re.I)
_HEADING = re.compile(r"^#[ \t]+\S")
_KEY_LINE = re.compile(r"^\s*(?:[-*+]\s+)?[a-z_]+:\s")  # applies_to: …, scope: …, desc: …
_TASK_REF = re.compile(r"\[Task \d+\]")  # a task group's own reference, not a fact
_HEADING_ANY = re.compile(r"^#{1,6}[ \t]")


# --------------------------------------------------------------------------- words and facts


def normal(line: str) -> str:
    """A line as compared: bullet and emphasis marks dropped, spaces collapsed, lower case."""
    text = re.sub(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+", "", line)
    return " ".join(text.replace("**", "").split()).lower()


def _strip(token: str) -> str:
    return token.strip(".,;:()[]{}'\"").rstrip("\\/") if not token.endswith(("/", "\\")) \
        else token.strip(".,;:()[]{}'\"")


def _kind(raw: str, following: str) -> str | None:
    """The kind of fact a token is (None: a word, a key such as ``applies_to:``, a thread id)."""
    token = _strip(raw)
    if not token or _UUID.fullmatch(token):
        return None
    if _VERSION.match(token):
        return "version"
    if _NUMBER.match(token):
        return "number"
    if len(token) >= 3 and is_path(token):
        return "path"
    if _NAME.match(token) and not raw.endswith(":") and following != "=":
        return "name"
    return None


def _fact(kind: str, raw: str) -> str:
    token = _strip(raw)
    if kind == "version":
        return "version:" + token.lower().lstrip("v")
    if kind == "number":
        return "number:" + (token.lstrip("0") or "0")
    if kind == "path":
        return "path:" + path_key(token)
    return "name:" + token.lower()


def facts(line: str) -> set[str]:
    """The facts of a line, each ``kind:value``: ``command`` (a backticked span), ``path``,
    ``version``, ``number``, ``name`` (an identifier with ``_``, camelCase, an option; not a
    key before ``:`` or ``=``)."""
    found = set()
    line = _TASK_REF.sub(" ", line)
    for span in _TICKED.findall(line):
        if 2 <= len(span) <= 200:
            found.add("command:" + " ".join(span.split()).lower())
    text = line.replace("`", " ")
    for match in _TOKEN.finditer(text):
        kind = _kind(match.group(0), text[match.end():match.end() + 1])
        if kind:
            found.add(_fact(kind, match.group(0)))
    return found


def identifiers(text: str) -> set[str]:
    """The names of a text, also those inside a path (``a_b/c`` names ``a_b``), as facts."""
    return {"name:" + part.lower() for part in re.split(r"[^\w-]+", text)
            if part and _NAME.match(part)}


def prose_words(line: str) -> set[str]:
    """``words`` of a line less its commands, paths and names: what says the same thing when
    the facts change (two lines about different folders share no path's words)."""
    text = _TICKED.sub(" ", line)
    kept = [m.group(0) for m in _TOKEN.finditer(text)
            if _kind(m.group(0), text[m.end():m.end() + 1]) not in ("path", "name")]
    return words(" ".join(kept))


def is_path(token: str) -> bool:
    """A token that names a file or folder: rooted (``/``, ``~/``, ``./``, a drive), or with a
    file extension, or three parts or more holding a ``.`` or ``_`` (``a/b`` alone is words)."""
    if token.startswith(("http:", "https:")):
        return False
    if _ROOTED.match(token) or _EXTENSION.search(token):
        return True
    parts = [p for p in re.split(r"[/\\]", token) if p]
    return len(parts) >= 3 and any(c in token for c in "._")


def path_key(token: str) -> str:
    """A path as compared: lower case, one backslash for an escaped pair, no ``\\\\?\\``."""
    text = token.replace("\\\\", "\\").lower()
    text = text[4:] if text.startswith("\\\\?\\") else text
    return re.sub(r"\A\\+(?=[a-z]:)", "", text)  # \\?\C:\… read as a token: \C:\…


def words(line: str) -> set[str]:
    """A line's content words (lower case, three letters or more, common words left out)."""
    return {w for w in _WORD.findall(line.lower()) if w not in _STOP}


def similarity(a: set[str], b: set[str]) -> float:
    """Dice's coefficient of two sets of words (0 when either is empty)."""
    if not a or not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


def replaced(old: set[str], new: set[str]) -> bool:
    """Whether a fact was replaced: one kind (number, path...) lost a value and gained
    another. Facts only added or only dropped are detail, not a change of fact."""
    gone = {f.split(":", 1)[0] for f in old - new}
    came = {f.split(":", 1)[0] for f in new - old}
    return bool(gone & came)


_SOURCE_LIST = re.compile(r"^\s*(?:[-*+]\s+)?`?rollout_summaries/|thread_id=", re.I)


def _content_lines(text: str | None) -> list[tuple[int, str]]:
    """``(line number, line)`` of the lines that say something: not blank, not a rule, not an
    entry of a task group's list of its rollout summaries (sources, not memory)."""
    out = []
    for number, line in enumerate((text or "").split("\n"), 1):
        stripped = line.strip()
        if stripped and not re.fullmatch(r"[-=*_#`~ ]+", stripped) \
                and not _SOURCE_LIST.search(line):
            out.append((number, line.rstrip("\r")))
    return out


def section_threads(text: str | None) -> dict[int, set[str]]:
    """Line number -> the thread ids named in its level-1 section (a task group)."""
    lines = (text or "").split("\n")
    out: dict[int, set[str]] = {}
    start = 0
    for index in range(len(lines) + 1):
        if index == len(lines) or (index > start and _HEADING.match(lines[index])):
            ids = {m.lower() for line in lines[start:index] for m in _UUID.findall(line)}
            for number in range(start + 1, index + 1):
                out[number] = ids
            start = index
    return out


def summary_thread(text: str) -> str | None:
    """The thread id a rollout summary names first."""
    match = _UUID.search(text[:4096])
    return match.group(0).lower() if match else None


# --------------------------------------------------------------------------- the views


class View:
    """One snapshot as the judgement reads it (texts already decompressed)."""

    def __init__(self, *, snapshot_id: int | None, taken_at: int, memory: str | None,
                 summary: str | None, raw: str | None = None,
                 rollout_summaries: dict[str, str] | None = None,
                 notes: dict[str, str] | None = None, jobs: dict | None = None,
                 baseline: bool = False, tree: list[str] | None = None) -> None:
        self.snapshot_id = snapshot_id
        self.taken_at = taken_at
        self.memory = memory
        self.summary = summary
        self.raw = raw
        self.rollout_summaries = rollout_summaries or {}
        self.notes = notes or {}
        self.jobs = jobs
        self.baseline = baseline
        self.tree = [path for path in (tree or []) if path]  # the folder's files, relative

    def readable(self) -> dict[str, str]:
        """The files the next session can read, by name."""
        out = {MEMORY_FILE: self.memory or "", SUMMARY_FILE: self.summary or ""}
        for name, text in self.rollout_summaries.items():
            out[f"rollout_summaries/{name}"] = text
        return out


class Cited:
    """A cited range of the ledger: file, lines, hash, the latest citation, its memories."""

    def __init__(self, path: str, line_start: int, line_end: int, lines_sha256: str | None,
                 cited_at: int, threads: Iterable[str] = ()) -> None:
        self.path = path
        self.line_start = line_start
        self.line_end = line_end
        self.lines_sha256 = lines_sha256
        self.cited_at = cited_at
        self.threads = {t.lower() for t in threads}


class Forget:
    """A request memcite made to forget a memory: the thread, when, and its note's name."""

    def __init__(self, thread_id: str, asked_at: int, note: str | None = None) -> None:
        self.thread_id = thread_id.lower()
        self.asked_at = asked_at
        self.note = note


# --------------------------------------------------------------------------- the judgement


def cited_lines(before: View, cited: Iterable[Cited], *, since: int) -> list[dict]:
    """The lines of ``before``'s MEMORY.md and summary that citations since ``since`` point
    at (followed by their hash when they moved), each once, in file order."""
    from memcite.ledger.memory_files import byte_lines
    from memcite.retention.entry_usage import CitedRange, locate_range

    texts = {MEMORY_FILE: before.memory, SUMMARY_FILE: before.summary}
    lines_of = {name: byte_lines(text.encode()) for name, text in texts.items() if text}
    sections = {name: section_threads(text) for name, text in texts.items()}
    found: dict[tuple[str, int], dict] = {}
    for item in cited:
        name = item.path.replace("\\", "/").lstrip("./")
        if item.cited_at < since or name not in lines_of:
            continue
        place = locate_range(lines_of[name], CitedRange(item.line_start, item.line_end,
                                                        item.cited_at, item.lines_sha256))
        if place is None:
            continue
        for number in range(place[0], place[1] + 1):
            text = lines_of[name][number - 1].decode("utf-8", errors="replace")
            if not text.strip() or re.fullmatch(r"[-=*_#`~ ]+", text.strip()) \
                    or _SOURCE_LIST.search(text) or _HEADING_ANY.match(text):
                continue
            key = (name, number)
            entry = found.setdefault(key, {"file": name, "line": number, "text": text,
                                           "last_cited": item.cited_at, "threads": set()})
            entry["last_cited"] = max(entry["last_cited"], item.cited_at)
            entry["threads"] |= item.threads | sections[name].get(number, set())
    return [found[key] for key in sorted(found)]


def _best_match(line: str, candidates: list[tuple[str, int, str, set[str]]]
                ) -> tuple[float, tuple | None]:
    """The candidate (``file, line, text, its prose_words``) most like ``line``, and how much."""
    mine = prose_words(line)
    best, chosen = 0.0, None
    if not mine:
        return best, chosen
    for candidate in candidates:
        theirs = candidate[3]
        if theirs and not mine.isdisjoint(theirs):
            score = similarity(mine, theirs)
            if score > best:
                best, chosen = score, candidate
    return best, chosen


def _source_corpus(before: View, after: View, extra: Iterable[str] = ()) -> tuple[set, str]:
    """The facts (every form a token of theirs could take) and the text (lower case) of every
    source the run had."""
    texts = [before.memory, before.summary, after.raw, before.raw,
             *after.rollout_summaries.values(), *before.rollout_summaries.values(),
             *after.notes.values(), *before.notes.values(), *extra]
    names = [*(f"rollout_summaries/{n}" for n in after.rollout_summaries),
             *(f"rollout_summaries/{n}" for n in before.rollout_summaries),
             *before.tree, *after.tree]
    known: set[str] = set()
    tokens: set[str] = set()
    for text in texts:
        tokens.update(_TOKEN.findall((text or "").replace("`", " ")))
    for raw in tokens:  # every form a fact of a token could take: a superset is harmless
        token = _strip(raw)
        if token:
            lower = token.lower()
            known.update((f"path:{path_key(token)}", f"name:{lower}",
                          f"number:{token.lstrip('0') or '0'}", f"version:{lower.lstrip('v')}"))
    for name in names:  # a file in the memory folder: the agent could read it
        name = name.replace("\\", "/")
        known |= {f"path:{path_key(name)}", f"path:{path_key(name.rsplit('/', 1)[-1])}"}
    corpus = " ".join(" ".join((t or "").split()) for t in texts).lower().replace("\u2026", "...")
    return known, corpus


_COMPACT: dict[str, str] = {}


def _compact(corpus: str) -> str:
    """The corpus without spaces, made once per corpus (the last one only is kept)."""
    if corpus not in _COMPACT:
        _COMPACT.clear()
        _COMPACT[corpus] = corpus.replace(" ", "")
    return _COMPACT[corpus]


def _supported(fact: str, known: set[str], corpus: str) -> bool:
    if fact in known:
        return True
    kind, value = fact.split(":", 1)
    value = value.replace("\u2026", "...")
    if kind in ("command", "path") and value in corpus:
        return True
    if kind == "command":  # its facts are all known, as written elsewhere
        inner = facts(value) - {fact}
        if "".join(value.split()) in _compact(corpus):
            return True
        return bool(inner) and all(_supported(f, known, corpus) for f in inner
                                   if not f.startswith("command:"))
    if kind == "path":
        tail = value.replace("\\", "/").rstrip("/").split("/")[-1]
        return False if not tail else (f"path:{tail}" in known and "/" not in value)
    return False


def _threads_without_summary(threads: set[str], before: View, after: View) -> bool:
    """Whether every memory of ``threads`` had a rollout summary before and has none after."""
    had = {summary_thread(t) for t in before.rollout_summaries.values()}
    has = {summary_thread(t) for t in after.rollout_summaries.values()}
    return bool(threads) and all(t in had and t not in has for t in threads)


def judge_run(before: View, after: View, cited: Iterable[Cited], forgets: Iterable[Forget], *,
              now: int, window_days: int, budget_tokens: int) -> dict:
    """What the run from ``before`` to ``after`` did (see the module's text)."""
    forgets = list(forgets)
    since = now - window_days * DAY
    readable = after.readable()
    kept_lines = {normal(line) for text in readable.values() for line in text.split("\n")}
    candidates: list[tuple] = []  # made at the first cited line not kept as it was
    summary_words = [(name, words(text)) for name, text in readable.items()
                     if name.startswith("rollout_summaries/")]
    asked = {f.thread_id: f for f in forgets if f.asked_at <= after.taken_at}
    lost, rewritten = [], []
    for line in cited_lines(before, cited, since=since):
        if normal(line["text"]) in kept_lines:
            continue
        if not candidates:
            candidates = [(name, number, text, prose_words(text))
                          for name in (MEMORY_FILE, SUMMARY_FILE)
                          for number, text in _content_lines(readable[name])
                          if not _HEADING_ANY.match(text)] or [("", 0, "", set())]
        score, match = _best_match(line["text"], candidates)
        threads = sorted(line["threads"])
        if score >= SIMILAR and match is not None:
            old, new = facts(line["text"]), facts(match[2])
            # the same line: nearly the same words, or half of them and a fact kept
            same = score >= SAME or bool(old & new)
            if same and replaced(old, new):
                rewritten.append({"file": line["file"], "line": line["line"],
                                  "text": line["text"].strip(), "now_file": match[0],
                                  "now_line": match[1], "now_text": match[2].strip(),
                                  "facts_gone": sorted(old - new),
                                  "facts_new": sorted(new - old), "threads": threads,
                                  "last_cited": line["last_cited"]})
            continue
        mine = words(line["text"])
        if mine and any(len(mine & theirs) / len(mine) >= COVERED
                        for _name, theirs in summary_words):
            continue
        if set(threads) & set(asked):
            why = "forget"
        elif _threads_without_summary(set(threads), before, after):
            why = "retention"
        else:
            why = "unexpected"
        lost.append({"file": line["file"], "line": line["line"], "text": line["text"].strip(),
                     "threads": threads, "last_cited": line["last_cited"], "why": why,
                     "expected": why != "unexpected"})
    known, corpus = _source_corpus(before, after)
    before_lines = {normal(line) for text in (before.memory, before.summary)
                    for line in (text or "").split("\n")}
    unsupported, new_lines = [], []
    for name in (MEMORY_FILE, SUMMARY_FILE):
        for number, line in _content_lines(readable[name]):
            if normal(line) in before_lines:
                continue
            new_lines.append((name, number, line))
            missing = sorted(f for f in facts(line) if not _supported(f, known, corpus))
            if missing:
                unsupported.append({"file": name, "line": number, "text": line.strip(),
                                    "facts": missing})
    return {"lost": lost, "rewritten": rewritten, "unsupported": unsupported,
            "came_back": came_back(before, after, forgets),
            "notes": note_receipts(before, after, new_lines, readable),
            "growth": growth(before, after, budget_tokens),
            "jobs": jobs_health(after.jobs)}


def came_back(before: View, after: View, forgets: Iterable[Forget]) -> list[dict]:
    """Lines of memories memcite asked Codex to forget (before the run) that the run put back:
    in ``after``, not in ``before``."""
    out = []
    for name, old, new in ((MEMORY_FILE, before.memory, after.memory),
                           (SUMMARY_FILE, before.summary, after.summary)):
        old_lines = {normal(line) for line in (old or "").split("\n")}
        sections = section_threads(new)
        for forget in forgets:
            if forget.asked_at > after.taken_at:
                continue
            for number, line in _content_lines(new):
                mentions = forget.thread_id in line.lower() or \
                    forget.thread_id in sections.get(number, set())
                if mentions and normal(line) not in old_lines and not _HEADING.match(line):
                    out.append({"file": name, "line": number, "text": line.strip(),
                                "thread": forget.thread_id, "asked_at": forget.asked_at})
    return out


def _note_body(text: str) -> list[str]:
    return [line for _n, line in _content_lines(text)
            if not re.match(r"^\s*(?:#|[a-z_]+:\s)", line)]


def note_receipts(before: View, after: View, new_lines: list[tuple[str, int, str]],
                  readable: dict[str, str]) -> list[dict]:
    """For each note new to the run (absent before, or changed), the new lines of MEMORY.md
    and the summary that carry it; memcite's forget notes: whether the lines of the memories
    they name are gone."""
    out = []
    notes = {**after.notes}
    for name, text in before.notes.items():
        notes.setdefault(name, text)
    for name in sorted(notes):
        text = notes[name]
        if before.notes.get(name) == text:
            continue  # an earlier run had it
        by_memcite = name[20:].startswith("memcite-")
        if by_memcite:
            threads = sorted({m.lower() for m in _UUID.findall(text)})
            left = [{"file": file, "line": number}
                    for file in (MEMORY_FILE, SUMMARY_FILE)
                    for number, line in enumerate(readable[file].split("\n"), 1)
                    if any(t in line.lower() for t in threads)]
            out.append({"note": name, "by_memcite": True, "kind": "forget",
                        "absorbed": not left, "threads": threads, "lines": left[:MAX_LISTED]})
            continue
        body = _note_body(text)
        sentences = [w for w in (words(line) for line in body) if len(w) >= MIN_SHARED]
        note_words = set().union(*(words(line) for line in body)) if body else set()
        note_facts = {f for line in body for f in facts(line) if not f.startswith("number:")}
        note_facts |= identifiers(" ".join(body))
        lines = []
        for file, number, line in new_lines:
            if _HEADING_ANY.match(line) or _KEY_LINE.match(line):
                continue  # a title or a group's header carries no note
            mine = words(line)
            share = len(mine & note_words) / len(mine) if mine else 0.0
            # most of the line is the note's, or most of one of the note's sentences is in it
            # (a long line merging several notes), or a path, command or name of the note
            said = any(len(mine & sentence) >= MIN_SHARED
                       and len(mine & sentence) / len(sentence) >= CARRIES
                       for sentence in sentences)
            if share >= CARRIES or said or ((facts(line) | identifiers(line)) & note_facts):
                lines.append({"file": file, "line": number})
        out.append({"note": name, "by_memcite": False, "kind": "note",
                    "absorbed": bool(lines), "threads": [], "lines": lines[:MAX_LISTED]})
    return out


def growth_of(memory: str | None, summary: str | None, budget_tokens: int) -> dict:
    """Lines, task groups and bytes of ``MEMORY.md``; the summary's tokens (Codex's
    4-bytes rule, after trimming) and whether it fits the read path's budget."""
    from memcite.rust_text import rust_trim

    text = memory or ""
    tokens = -(-len(rust_trim(summary or "").encode()) // APPROX_BYTES_PER_TOKEN)
    return {"lines": len(text.split("\n")) - (1 if text.endswith("\n") else 0) if text else 0,
            "task_groups": sum(1 for line in text.split("\n") if _TASK_GROUP.match(line)),
            "bytes": len(text.encode()), "summary_tokens": tokens,
            "budget_tokens": budget_tokens, "summary_fits": tokens <= budget_tokens}


def growth(before: View, after: View, budget_tokens: int) -> dict:
    """``growth_of`` before and after the run, and whether the run made the summary too long."""
    old = growth_of(before.memory, before.summary, budget_tokens)
    new = growth_of(after.memory, after.summary, budget_tokens)
    return {"before": old, "after": new,
            "lines": new["lines"] - old["lines"], "bytes": new["bytes"] - old["bytes"],
            "task_groups": new["task_groups"] - old["task_groups"],
            "summary_cut": not new["summary_fits"],
            "summary_newly_cut": old["summary_fits"] and not new["summary_fits"]}


def jobs_health(jobs: dict | None) -> dict:
    """Codex's job health as a snapshot kept it: the consolidation's status and error, the
    extraction jobs that succeeded, failed, are retrying, and are dead (no retries left), by
    error kind."""
    if not jobs:
        return {"known": False, "consolidation": None, "error": None, "retries_left": None,
                "succeeded": 0, "failed": 0, "retrying": 0, "dead": 0, "dead_by_error": {}}
    row = jobs.get("consolidation") or {}
    extraction = jobs.get("extraction") or {}
    by_status = extraction.get("by_status") or {}
    dead = extraction.get("dead") or {}
    return {"known": True, "consolidation": row.get("status"), "error": row.get("last_error"),
            "retries_left": row.get("retry_remaining"),
            "succeeded": by_status.get("done", 0), "failed": by_status.get("error", 0),
            "retrying": extraction.get("retrying", 0), "dead": sum(dead.values()),
            "dead_by_error": dict(dead)}


def finding_count(judged: dict) -> int:
    """The findings a person should look at: unexpected losses, rewrites, unsupported lines,
    lines come back, notes not absorbed, a summary newly cut, dead jobs."""
    return (sum(1 for item in judged["lost"] if not item["expected"]) + len(judged["rewritten"])
            + len(judged["unsupported"]) + len(judged["came_back"])
            + sum(1 for note in judged["notes"] if not note["absorbed"])
            + (1 if judged["growth"]["summary_newly_cut"] else 0))


__all__ = ["Cited", "Forget", "View", "came_back", "cited_lines", "facts", "finding_count",
           "growth", "growth_of", "jobs_health", "judge_run", "normal", "note_receipts",
           "section_threads", "words"]
