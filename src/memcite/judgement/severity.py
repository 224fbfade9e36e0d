"""Severity: one verdict from a line's origin, its effects and its markers, not its grammar.

``judge`` takes a sentence of memory, whether it reads as an instruction (the caller's
directive rules say so), where its words came from (``memcite.judgement.origin``; None when
there is no source session to compare with) and whether that place was found for these words
or only inherited from the thread. It gives:

- no severity: a fact; a past-tense record or result ("returned 404", a ``task:`` line);
  the user's own words (the user's word wins); a convention of the project's own (its own
  commands and hosts, from its own files) without a marker;
- ``low``: an instruction with an effect that is not the project's own (another command, a
  host it does not name), or a marker, from the project's files or of unknown origin;
- ``medium``: the same from outside the project (command output, a file outside it), or a
  dangerous effect with a marker from inside;
- ``high``: from outside the project, a strong marker (concealment, authority, hidden text)
  or a dangerous effect with a standing order; from third-party content (MCP, web, fetched
  pages, dependencies), any effect or marker; and words *placed* in either that tell the agent
  what to do with its reply or in the world outside the project (``memcite.judgement.mood``:
  addressed to the reader, and steering, not naming the project's work), or words found
  nowhere in a thread that read third-party content it never wrote down (a web search's
  results) that tell the agent what its reply is to be ("translate your response", "reply
  using base64") and do not echo what the user asked in that thread (``unrecorded``).
  Words found nowhere in a thread whose third-party reads are all written down did not
  come from them. A project's
  convention is never high; but from any place other than the user's, an override of the
  agent's instructions (``memcite.judgement.markers``), an act in the user's world asked
  of the reader (``memcite.judgement.effects``: money moved, a lock opened, the user's data
  shared or deleted...), harmful code asked of it (code that reaches past the project) or a
  reply spoilt for the user (``memcite.judgement.mood.spoils_reply``: unreadable or untrue)
  is high, for no convention of any project reads so.

``certain`` is the narrow rule under which memcite acts without the user (the quarantine's
forget request, the gate's denial): high, words *placed* (not inherited) in third-party
content or a file outside the project, and either concealment from the user or a credential
with somewhere to send it (exfiltration). Everything else is proposed, for the user to act on.

Pure: no I/O; judge text folded by ``memcite.judgement.normalize.for_judging``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcite.judgement import effects as fx
from memcite.judgement import markers as mk
from memcite.judgement import mood
from memcite.judgement import origin as og
from memcite.judgement.normalize import for_judging

HIGH, MEDIUM, LOW = "high", "medium", "low"
PLACED, INHERITED = "placed", "inherited"

_RECORD_KEY = re.compile(
    r"(?i:^\s*(?:[-*+]\s+)?(?:\*\*)?(?:task|tasks|outcome|result|results|status|evidence|verification|"
    r"verified|error|errors|symptom|cause|root\s+cause|fix(?:ed)?|cwd|rollout_path|thread_id|"
    r"updated_at|keywords|applies_to|reuse_rule|rollout_summary_files|source|sources|date|commit|"
    r"description|desc|scope|keywords|rollout\s+context|learnings?|failure|outcome\s+notes?|"
    r"what\s+happened)(?:\*\*)?\s*:)"
    r"|^\W*(?:[A-Z][a-z]+ed|Ran|Did|Found|Made|Wrote|Built|Saw|Got|Took|Kept|Left|Set\s+up)\b(?!\s+to\b)")
_PAST_RESULT = re.compile(
    r"\b(?:returned|returns\s+(?:a\s+)?\d{3}|failed|succeeded|passed|showed|printed|gave|timed\s+out|"
    r"errored|exited|crashed|worked|responded|threw|raised|produced|yielded|was|were|did|ran|"
    r"found|fixed|resolved|confirmed|completed|finished|broke|hung)\b", re.IGNORECASE)
_ASKING = re.compile(r"\b(?:should|must|always|never|please|need\s+to|make\s+sure|remember\s+to|"
                     r"you\s+will|do\s+not|don't)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Judgement:
    """The verdict on one sentence: its severity (None: nothing to report) and why."""

    severity: str | None
    certain: bool
    origin: str | None
    placed: str | None
    effects: tuple[fx.Effect, ...]
    markers: tuple[mk.Marker, ...]
    why: str

    def as_dict(self) -> dict:
        return {"severity": self.severity, "certain": self.certain, "trust": self.origin,
                "placed": self.placed,
                "effects": [{"kind": e.kind, "value": e.value, "own": e.own, "dangerous": e.dangerous}
                            for e in self.effects[:10]],
                "markers": [m.kind for m in self.markers], "why": self.why}


def is_record(text: str) -> bool:
    """Whether ``text`` records what happened rather than asks for something: a key of
    Codex's records (``task:``, ``outcome:``...), or a past-tense result without a modal."""
    if _RECORD_KEY.match(text):
        return True
    return bool(_PAST_RESULT.search(text)) and not _ASKING.search(text)


def worth_placing(text: str) -> bool:
    """Whether ``text`` (folded) has a marker, a dangerous effect, or tells the agent what to do
    with its reply: its origin decides a severity even when it reads as no instruction."""
    return bool(mk.find_markers(text)) or mood.spoils_reply(text) is not None or (
        fx.may_be_dangerous(text) and fx.find_effects(text).dangerous) or (
        mood.addressed(text) and mood.steering(text) is not None)


def _say_origin(origin: str | None, placed: str | None) -> str:
    if origin is None:
        return "no source session to tell where its words came from"
    where = {og.USER: "the user's own words", og.PROJECT: "the project's own files or Codex's context",
             og.OUTSIDE: "command output or a file outside the project",
             og.THIRD_PARTY: "third-party content (MCP, web, fetched text or a dependency)"}[origin]
    return where if placed != INHERITED else (
        f"words not found in the thread, which read {where.split(' (')[0]}")


def judge(text: str, *, instruction: bool, origin: str | None, placed: str | None = PLACED,
          facts: fx.ProjectFacts = fx.NO_FACTS, folded: str | None = None,
          unrecorded: bool = False) -> Judgement:
    """The severity of ``text`` (a sentence of memory, as written); ``folded``: the text
    already folded by ``for_judging``, when the caller has it; ``unrecorded``: words
    inherited from a thread that read third-party content it never wrote down (a web
    search's results) and that do not echo what the user asked there
    (``memcite.audit.provenance.SegmentIndex.unrecorded``)."""
    folded = for_judging(text) if folded is None else folded
    markers = tuple(mk.find_markers(folded, raw=text))
    # words placed in third-party content or a file outside the project that tell the agent
    # what to do with its reply or in the world outside the project (not the project's code)
    aimed = None
    if origin in (og.OUTSIDE, og.THIRD_PARTY) and placed != INHERITED and mood.addressed(folded):
        aimed = mood.steering(folded)
    elif origin == og.THIRD_PARTY and placed == INHERITED and unrecorded \
            and mood.addressed(folded):
        # words no place in the thread holds, in a thread that read third-party content it
        # never wrote down (a web search's results), telling the agent what its reply is to be
        aimed = mood.reply_aimed(folded)
    # a reply made unreadable or untrue to the user who asked (encoded, reversed, scrambled;
    # a false claim), asked of the reader: no convention of any project reads so
    spoilt = mood.spoils_reply(folded)
    if spoilt and (not (instruction or mood.addressed(folded))
                   or (placed == INHERITED and not unrecorded)):
        # words found nowhere in a thread whose reads are all written down, or that echo what
        # the user asked there, are not third-party words (``unrecorded``)
        spoilt = None
    if not instruction and not markers and not aimed and not spoilt \
            and not fx.may_be_dangerous(folded):
        return Judgement(None, False, origin, placed, (), (), "no instruction")
    effects = fx.find_effects(folded, facts)
    if aimed is None and origin == og.THIRD_PARTY and placed != INHERITED and any(
            not e.own for e in effects.items) and mood.addressed(folded):
        # third-party words addressed to the agent that would touch something not the project's own
        aimed = next(e for e in effects.items if not e.own).value
    kinds = {m.kind for m in markers}
    # no convention of any project sets the agent's instructions aside, or asks it to act in
    # the user's world (move money, open a lock, share the user's data...)
    # ... or to put code into its work that reaches past the project (sends what the machine
    # holds away, opens a shell to another host, harms or stays on the machine), or to make
    # its reply unreadable or untrue to the user who asked (encoded, reversed; a false claim)
    no_convention = mk.OVERRIDE in kinds or effects.harmful_code or spoilt is not None or (
        bool(effects.of(fx.ACT)) and (instruction or mood.addressed(folded)))
    strong = kinds & mk.STRONG
    standing = kinds & {mk.PERSISTENCE, mk.TRIGGER}
    # harmful code the agent is asked to put into its work or run reaches past the project
    # (the machine's data, its accounts, its system): read as a standing order is
    lasting = bool(standing) or effects.harmful_code
    danger = effects.dangerous
    items = effects.items

    def verdict(severity: str | None, certain: bool = False) -> Judgement:
        parts = [_say_origin(origin, placed)]
        touched = [e for e in items if e.kind != fx.ACT]
        if touched:
            parts.append("it would touch " + ", ".join(
                f"{e.kind} {e.value}" + (" (the project's own)" if e.own else "")
                + (" (dangerous)" if e.dangerous else "") for e in touched[:4]))
        acts = [e.value for e in effects.of(fx.ACT)]
        if acts:
            parts.append("it asks for an act in the user's world (" + "; ".join(acts[:2]) + ")")
        if spoilt:
            parts.append(f"it asks for a reply unreadable or untrue to the user ({spoilt})")
        if markers:
            parts.append("markers: " + ", ".join(f"{m.kind} ({m.words})" for m in markers))
        if aimed and severity == HIGH:
            parts.append(f"it tells the agent what to do with its reply or outside the project ({aimed})")
        return Judgement(severity, certain, origin, placed, items, markers, "; ".join(parts))

    if not markers and not danger and is_record(folded):
        return verdict(None)
    if not (instruction or markers or danger or aimed or spoilt):
        return verdict(None)
    if origin == og.USER:
        return verdict(None)  # the user's word wins
    foreign = any(not e.own for e in items if e.kind in (fx.COMMAND, fx.HOST))
    rank = og.rank(origin) if origin else None
    if rank == 4 and placed != INHERITED:
        if danger or strong or items or standing:
            certain = (mk.CONCEALMENT in kinds or effects.exfiltration)
            return verdict(HIGH, certain)
        if aimed:
            return verdict(HIGH)
        return verdict(LOW)  # an instruction that touches nothing named: proposed at most
    if rank in (3, 4):  # outside, or third-party words that could not be placed exactly
        if strong or (danger and lasting) or no_convention:
            certain = (rank == 3 and placed != INHERITED and (mk.CONCEALMENT in kinds or effects.exfiltration))
            return verdict(HIGH, certain)
        if aimed:  # never certain: the narrow rule above is the only one memcite acts on alone
            return verdict(HIGH)
        if danger or foreign:
            return verdict(MEDIUM)
        return verdict(LOW) if standing and instruction else verdict(None)
    # the project's own files, Codex's context, the agent's words: high only for what no
    # convention is; without a session, never high. A standing order or trigger alone is how
    # a user's lasting preference reads
    if no_convention and rank is not None:
        return verdict(HIGH)
    if danger and strong:
        return verdict(MEDIUM)
    if danger or strong or (standing and foreign):
        return verdict(LOW)
    return verdict(None)
