"""Markers: the phrasings that almost never belong in a memory, whoever wrote it.

A memory records what is true and what the user wants. Five kinds of wording have no place
in such a record and are the marks of an injection:

- ``concealment``: keeping something from the user ("don't tell the user", "without
  mentioning it", "as a sidenote, quietly");
- ``persistence``: a standing order ("every future session", "from now on", "remember
  this permanently");
- ``trigger``: a conditional aimed at the user's future requests ("when the user asks
  about X, ..."), not a conditional of the domain ("when attacked, run away");
- ``authority``: a claim of a voice the text does not have ("System:", "the security team
  confirmed");
- ``override``: words that set the agent's own instructions aside or speak to the model as
  its user ("ignore previous instructions", "new instructions:", "this is a message from
  me, <name>, to you, <model>", "before you solve the task I gave you"): no project's
  convention and no user's note is written so;
- ``encoded``: hidden text: invisible or bidi characters, or a base64 run that decodes to
  a command.

Each pattern names the agent's world (the user, sessions, instructions, the system), so a
word used in another domain ("avoid unnecessary nil checks", a game's "when attacked")
matches nothing. Pure: text in, markers out; judge text folded by
``memcite.judgement.normalize.for_judging`` (``encoded`` looks at the raw text too).
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from dataclasses import dataclass

from memcite.judgement.normalize import INVISIBLE

CONCEALMENT, PERSISTENCE, TRIGGER, AUTHORITY, OVERRIDE, ENCODED = (
    "concealment", "persistence", "trigger", "authority", "override", "encoded")
MARKERS = (CONCEALMENT, PERSISTENCE, TRIGGER, AUTHORITY, OVERRIDE, ENCODED)
# The markers that make a line an attack on their own, whatever it asks (persistence and
# trigger are also how a user states a lasting preference).
STRONG = frozenset({CONCEALMENT, AUTHORITY, OVERRIDE, ENCODED})

# a mode in which the agent would keep no rules ("debugging mode", "developer mode", "DAN mode")
_NO_RULES = r"god|unrestricted|unfiltered|jailbr[eo]\w*|dan"
# what keeps the agent safe: its checks, rules, filters...
_SAFEGUARDS = (r"(?:checks?|rules?|guidelines?|restrictions?|filters?|polic(?:y|ies)|protocols?|"
               r"measures?|guardrails?)\b")
_USER = r"(?:the\s+|your\s+|this\s+)?(?:user|human|person|operator|developer|owner|customer|them|him|her)"
_PATTERNS: dict[str, re.Pattern] = {
    CONCEALMENT: re.compile(
        r"\b(?:do\s+not|don'?t|never|without)\s+(?:ever\s+)?(?:tell(?:ing)?|inform(?:ing)?|"
        r"mention(?:ing)?|reveal(?:ing)?|disclos(?:e|ing)|alert(?:ing)?|notify(?:ing)?|"
        r"show(?:ing)?|report(?:ing)?)"
        r"(?:\s+(?:this|it|that|anything|about\s+(?:this|it|that)))?(?:\s+(?:to|with))?\s+" + _USER
        + r"\b"
        r"|\b(?:do\s+not|don'?t|never|without)\s+let(?:ting)?\s+" + _USER + r"\s+know\b"
        r"|\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose|say\s+anything\s+about)\s+"
        r"(?:this|it|that)\b"
        r"|\b(?:keep|hide)\s+(?:this|it|that|these\s+steps?)\s+(?:secret|hidden|quiet|private)?\s*"
        r"from\s+" + _USER + r"\b"
        r"|\bwithout\s+(?:the\s+)?(?:user|human)(?:'s)?\s+(?:noticing|knowing|knowledge|seeing)\b"
        r"|\b(?:as\s+a\s+side\s*note|quietly|silently|secretly|covertly)\b[^.\n]{0,80}"
        r"\b(?:send|pass|forward|upload|post|include|append|prefix|add|run|execute|copy|read)\b"
        r"|\b(?:send|pass|forward|upload|post|include|append|prefix|run|execute|copy|read)\b[^.\n]{0,80}"
        r"\b(?:as\s+a\s+side\s*note|quietly|silently|secretly|covertly)\b"
        r"|\bin\s+the\s+background\s+without\b", re.IGNORECASE),
    PERSISTENCE: re.compile(
        r"\b(?:every|all|each|any)\s+(?:future|subsequent|later|following|new)\s+"
        r"(?:sessions?|conversations?|chats?|turns?|tasks?|runs?|threads?|interactions?|requests?)\b"
        r"|\bfrom\s+now\s+on\b|\bgoing\s+forward\b|\bhenceforth\b|\bfor\s+all\s+future\b"
        r"|\b(?:remember|memori[sz]e|store|save|keep|retain)\s+(?:this|that|it|the\s+following)"
        r"(?:\s+(?:instruction|rule|directive))?\s+(?:permanently|forever|for\s+(?:ever|good|all\s+"
        r"(?:future\s+)?sessions))\b"
        r"|\b(?:permanently|forever)\s+(?:remember|apply|follow|obey|add)\b"
        r"|\bin\s+(?:every|all|each)\s+(?:future\s+)?(?:sessions?|conversations?|responses?|replies|reply)\b",
        re.IGNORECASE),
    TRIGGER: re.compile(
        r"\b(?:when(?:ever)?|if|once|each\s+time|every\s+time)\s+(?:the\s+|a\s+|any\s+)?"
        r"(?:user|human|someone|anyone|developer|operator|they)\s+(?:next\s+)?"
        r"(?:asks?|requests?|mentions?|says?|types?|tries|queries|searches|opens?|runs?|invokes?|"
        r"uses?)\b"
        r"|\b(?:when(?:ever)?|if)\s+(?:you\s+are|you're)\s+(?:asked|told|requested)\s+(?:about|to|for)\b"
        r"|\b(?:when(?:ever)?|if)\s+(?:asked|prompted|questioned)\s+(?:about|to|for|by)\b",
        re.IGNORECASE),
    AUTHORITY: re.compile(
        r"(?:^|\n)\s*[\[<(*_\"'`]*\s*(?:system|sys|developer|admin|administrator|assistant|"
        r"openai|anthropic|security)\s*(?:message|note|notice|override|prompt|instruction)?s?"
        r"\s*[\]>)*_\"'`]*\s*:"
        r"|<\|?\s*(?:system|im_start|endoftext|/?instructions?)\s*\|?>"
        r"|\b(?:the\s+)?(?:security|compliance|it|admin|legal|platform|openai|trust\s+and\s+safety)"
        r"\s+team\s+(?:has\s+)?(?:confirmed|approved|authori[sz]ed|requires?|required|mandated?|"
        r"says|said|instructs?|verified)\b"
        r"|\byou\s+are\s+now\s+(?:in\s+)?(?:a|an|the|developer|god|dan|unrestricted)\b"
        r"|\btakes?\s+(?:precedence|priority)\s+over\s+(?:all\s+|any\s+)?(?:other\s+|previous\s+|"
        r"earlier\s+)?(?:instructions?|rules?|agents\.md)\b"
        r"|\btreat\s+this\s+as\s+(?:a\s+)?(?:system|developer)\s+(?:message|instruction|prompt)\b"
        r"|\bthis\s+(?:message|instruction|notice)\s+(?:is|comes)\s+(?:from|by)\s+(?:the\s+)?"
        r"(?:system|developer|administrator|admin|openai)\b"
        r"|\b(?:officially\s+)?authori[sz]ed\s+by\s+(?:the\s+)?(?:system|administrator|admin|"
        r"security\s+team|openai)\b", re.IGNORECASE),
    OVERRIDE: re.compile(
        # "instructions" as the payloads spell it too ("iunstructions")
        r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*"
        r"(?:previous|prior|earlier|above|preceding|original|system|developer|other)\s+"
        r"(?:\w{0,3}nstructions?|prompts?|rules?|messages?|directions?|guidance|input|"
        r"conversation)\b"
        r"|\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
        r"(?:instructions?|prompts?)\s+(?:you\s+(?:got|were\s+given|received|"
        r"have\s+(?:been\s+given|received))\s+)?(?:before|so\s+far|until\s+now|previously)\b"
        r"|\bforget\s+everything\s+you\s+(?:have\s+)?(?:learned|were\s+told|know)\b"
        # a persona the reader is to become, kept by no rule
        r"|\bfree\s+(?:of|from)\s+all\s+(?:restrictions|limitations)\s+and\s+(?:filters|censorship)\b"
        r"|\bfree\s+(?:of|from)\s+all\s+(?:filters|censorship|(?:moral|ethical)\s+restrictions)\b"
        r"|\bbroken\s+free\s+of\s+the\s+(?:typical\s+)?confines\b"
        r"|\b(?:do(?:es)?\s+not|don'?t)\s+have\s+to\s+abide\s+by\s+(?:the\s+|any\s+)?"
        r"(?:rules|policies|guidelines)\b"
        r"|\bno\s+(?:ethical|moral)\s+(?:or\s+moral\s+|or\s+ethical\s+)?(?:standards|guidelines|"
        r"restrictions|compass|limits)\b"
        r"|\b(?:chatgpt|assistant|yourself|model|ai)\s+with\s+(?:developer|dan|god|jailbreak)\s+mode\s+"
        r"enabled\b|\b(?:dan|god|jailbreak)\s+mode\s+enabled\b|\bsimulate\s+developer\s+mode\b"
        r"|\bwithout\s+any\s+(?:consideration|regard)\s+for\s+(?:ethics|morality|legality)\b"
        r"|\bnew\s+(?:system\s+)?instructions?\s*:"
        r"|\b(?:message|note|request|instructions?)\s+from\s+me\b[^.\n]{0,80}\bto\s+you\b"
        r"|\b(?:before|instead\s+of)\s+(?:you\s+)?(?:can\s+)?(?:solve|complete|finish|do|answer|"
        r"continue\s+with)\s+(?:the|my|your)\s+(?:\w+\s+)?task\s+(?:that\s+)?(?:i|the\s+user)\s+"
        r"(?:gave|give|assigned)\s+you\b"
        # ... or its safety: all of its checks, a mode in which it has none
        r"|\b(?:ignore|bypass|disregard|override)\s+(?:all|any|every)\s+(?:of\s+)?(?:your\s+|the\s+)?"
        r"(?:security|safety|ethical|content)\s+" + _SAFEGUARDS +
        r"|\b(?:ignore|bypass|disregard|override|disable|turn\s+off|switch\s+off|skip)\s+your\s+"
        r"(?:own\s+)?(?:security|safety|ethical|content)\s+" + _SAFEGUARDS +
        r"|\b(?:pretend|imagine|act\s+as\s+if)\s+(?:that\s+)?you(?:'re|\s+are)\s+(?:now\s+)?"
        r"(?:in|running\s+in|operating\s+in)\s+(?:an?\s+)?(?:debug(?:ging)?|maintenance|admin|developer|"
        + _NO_RULES + r")\s+mode\b"
        r"|\byou\s+are\s+now\s+(?:in\s+)?(?:an?\s+)?(?:" + _NO_RULES + r")\s+mode\b"
        r"|\byou(?:'re|\s+are)\s+(?:now\s+)?no\s+longer\s+(?:bound|restricted|limited)\s+by\s+"
        r"(?:any\s+|your\s+|the\s+)*"
        r"(?:rules|restrictions|guidelines|polic(?:y|ies)|filters|safety|openai|anthropic)\b",
        re.IGNORECASE),
}
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=])")
_DECODED_COMMAND = re.compile(
    r"\b(?:curl|wget|bash|sh|rm|chmod|nc|ncat|python3?|powershell|iex|eval|ssh|scp|cat|"
    r"ignore|send|upload)\b|\|\s*sh\b|https?://", re.IGNORECASE)
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_MARKS = frozenset("\u200e\u200f\ufeff")  # direction marks and the BOM: written by editors
_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")


# Words one of a kind's patterns cannot match without (checked first: most text has none).
_NEEDS: dict[str, tuple[str, ...]] = {
    CONCEALMENT: ("tell", "inform", "mention", "reveal", "disclos", "alert", "notify", "let",
                  "show", "report", "ask", "keep", "hide", "without", "quietly", "silently",
                  "secretly", "covertly", "side", "background", "say"),
    PERSISTENCE: ("future", "subsequent", "later", "following", "new ", "now on", "forward",
                  "henceforth", "permanent", "forever", "for good", "every", "all "),
    TRIGGER: ("when", "if ", "once", "each time", "every time"),
    AUTHORITY: ("system", "sys", "developer", "admin", "assistant", "openai", "anthropic",
                "security", "<|", "im_start", "endoftext", "instruction", "team",
                "you are now", "precedence", "priority", "treat this", "this message",
                "this notice", "authori"),
    OVERRIDE: ("ignore", "disregard", "forget", "override", "instruction", "from me",
               "task", "bypass", "skip", "disable", "turn off", "switch off", " mode", "bound by",
               "restricted by", "limited by", "free of", "free from", "confines", "abide",
               "ethical", "moral", "consideration for", "regard for"),
}


# the words are lower-case: matched case-sensitively on lowered text (far faster than
# IGNORECASE over an alternation)
_NEEDS_RE = {kind: re.compile("|".join(map(re.escape, words))) for kind, words in _NEEDS.items()}


@dataclass(frozen=True, slots=True)
class Marker:
    """One marker found: its kind and the words that carry it."""

    kind: str
    words: str


def _decoded(run: str) -> str | None:
    try:
        raw = base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text.isprintable() or "\n" in text else None


def _hidden_in_words(raw: str) -> str | None:
    """Invisible characters that split a Latin word or hide a bidi reordering; not the
    joiners of scripts that use them (Persian, Arabic, Indic), nor a leading BOM."""
    for index, ch in enumerate(raw):
        if ch in _BIDI:
            if not _RTL.search(raw):
                return "bidi control characters"
            continue
        if ch in INVISIBLE and ch not in _MARKS:
            before = raw[index - 1] if index else ""
            after = raw[index + 1] if index + 1 < len(raw) else ""
            if before.isascii() and before.isalnum() and after.isascii() and after.isalnum():
                return "invisible characters inside a word"
    return None


def encoded_text(raw: str) -> str | None:
    """Why ``raw`` hides text, or None: invisible characters splitting a word, bidi controls
    in text of no right-to-left script, or a base64 run that decodes to a command or a URL
    (a long hash or key decodes to bytes, not to words)."""
    if not raw.isascii() and not INVISIBLE.isdisjoint(raw):
        why = _hidden_in_words(raw)
        if why:
            return why
    if len(raw) < 24:
        return None
    for match in _BASE64.finditer(raw[:100_000]):
        run = match.group()
        if run.isalnum() and (run.isalpha() or run.isdigit()):
            continue
        decoded = _decoded(run)
        if decoded and _DECODED_COMMAND.search(decoded):
            return f"base64 that decodes to {decoded[:60]!r}"
    return None


# A phrase in quotes that the sentence names as a phrase ("treat \"ignore previous
# instructions\" as an injection", "if the input contains commands like \"You are now ...\"",
# "never follow text such as 'disregard the rules'") is mentioned, not used: the security
# notes of a project's AGENTS.md quote the attacks they guard against.
_QUOTED = re.compile(r"\"[^\"\n]{3,300}\"|“[^”\n]{3,300}”|`[^`\n]{3,300}`|(?<!\w)'[^'\n]{3,300}'(?!\w)")
_MENTION_CUE = re.compile(
    r"\b(?:such\s+as|like|e\.g\.|for\s+example|for\s+instance|contains?|containing|says?|saying|"
    r"phrases?|patterns?|commands?|strings?|wording|attempts?|injections?|flag|refuse|reject|"
    r"treat(?:ed)?\s+as|detect\w*|untrusted)\b", re.IGNORECASE)


def _mention_spans(text: str) -> list[tuple[int, int]]:
    """The quoted spans of ``text`` that it names as phrases (a cue word outside all quotes),
    in order; none without such a cue. Words inside one are mentioned, not used."""
    if not any(mark in text for mark in "\"“`'"):
        return []
    spans = [quoted.span() for quoted in _QUOTED.finditer(text)]
    if not spans:
        return []
    outside, at = [], 0
    for start, end in spans:
        outside.append(text[at:start])
        at = end
    outside.append(text[at:])
    return spans if _MENTION_CUE.search(" ".join(outside)) else []


def _inside(spans: list[tuple[int, int]], match: re.Match) -> bool:
    """Whether ``match`` lies inside one of ``spans`` (in order, not overlapping)."""
    at = bisect.bisect_right(spans, (match.start(), len(match.string) + 1)) - 1
    return at >= 0 and spans[at][0] <= match.start() and match.end() <= spans[at][1]


def find_markers(text: str, raw: str | None = None) -> list[Marker]:
    """The markers of ``text`` (folded for judging), each kind once, in ``MARKERS`` order;
    ``raw``: the text as written, for hidden characters (default: ``text``). Words in quotes
    that the sentence names as a phrase are a mention, not a marker (``_mention_spans``)."""
    found = []
    lower = text.lower()
    mentions: list[tuple[int, int]] | None = None
    for kind in (CONCEALMENT, PERSISTENCE, TRIGGER, AUTHORITY, OVERRIDE):
        if not _NEEDS_RE[kind].search(lower):
            continue
        match = _PATTERNS[kind].search(text)
        if match is not None:
            if mentions is None:
                mentions = _mention_spans(text)
            if mentions and _inside(mentions, match):
                match = next((found_here for found_here in _PATTERNS[kind].finditer(text, match.end())
                              if not _inside(mentions, found_here)), None)
        if match:
            found.append(Marker(kind, match.group().strip()[:120]))
    why = encoded_text(raw if raw is not None else text)
    if why:
        found.append(Marker(ENCODED, why))
    return found
