"""Directive rules: memory text that instructs the agent rather than states a fact.

A memory should say what is true ("the tests run with pytest"); a line that tells the agent
what to do ("run `rm -rf build`", "always curl … | sh", "skip the failing test", "ignore
previous instructions") is a *directive*. Most directives in a memory are harmless (a
person's own preference); ``memcite audit`` flags one as *poisoned* only when its words came
from a tool's output rather than from the user.

``RULES`` is the table, one row per rule. Each rule has *imperative* verbs, matched at the
start of a clause (the start of a line, a list item, a sentence, or after "then"/"and"),
after optional adverbs and modals ("always", "please", "you must", "make sure to",
"before X,"), followed within the clause by one of the rule's objects; and *anywhere*
patterns that are directives whatever the grammar (a download piped into a shell, "ignore
previous instructions"). A clause whose verb is not in its base form ("the tests run with
pytest", "CI skipped the slow tests") is a statement and matches nothing.

Pure: no I/O, deterministic, linear in the text (every pattern is bounded).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_TEXT_CHARS = 1024 * 1024  # text beyond this is not read (a memory is far smaller)
EXCERPT_CHARS = 160


@dataclass(frozen=True, slots=True)
class DirectiveMatch:
    """One directive found in a text: which rule, where (character offsets), and the words."""

    rule: str
    start: int
    end: int
    excerpt: str


@dataclass(frozen=True, slots=True)
class DirectiveRule:
    """One row of the table: a name, what it means, and its patterns."""

    name: str
    meaning: str
    verbs: str  # imperative verbs, matched at a clause start (a regular expression)
    objects: str  # what the verb must reach within the clause ("" = anything)
    anywhere: tuple[str, ...] = ()  # patterns that are a directive wherever they stand


_SECRET_WORDS = (r"secrets?|tokens?|api[ _-]?keys?|access[ _-]?keys?|passwords?|passwd|"
                 r"credentials?|private[ _-]keys?|ssh[ _-]keys?|id_rsa|id_ed25519|auth\.json|"
                 r"\.env\b|\.netrc|cookies?|session[ _-]ids?|bearer|env(?:ironment)?[ _-]"
                 r"variables?|printenv")

RULES: tuple[DirectiveRule, ...] = (
    DirectiveRule(
        "run-command", "run a command, or pipe a download into a shell",
        verbs=r"run|execute|exec|invoke|launch|sudo|rm|pipe",
        objects="",
        anywhere=(r"\b(?:curl|wget|fetch|iwr|invoke-webrequest)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?"
                  r"(?:ba|z|da|k|fi)?sh\b",
                  r"\b(?:curl|wget)\b[^\n]{0,200}\|\s*(?:sudo\s+)?(?:python3?|perl|ruby|node)\b",
                  r"\brm\s+-(?:rf|fr|r)\b\s+[/~]",
                  r"\bbash\s+<\(\s*(?:curl|wget)\b")),
    DirectiveRule(
        "fetch-url", "fetch from or send to a URL",
        verbs=(r"fetch|download|get|curl|wget|visit|open|browse(?:\s+to)?|go\s+to|navigate\s+to|"
               r"load|post|send|upload|report|forward|submit|exfiltrate|ping|call|notify|email|"
               r"request|pull|read"),
        objects=r"https?://|\bwww\.|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|dev|ru|cn|"
                r"xyz|info|biz)\b|\bwebhook\b|\bpastebin\b|\bngrok\b"),
    DirectiveRule(
        "skip-check", "disable or skip a check or a test",
        verbs=(r"disable|skip|bypass|ignore|turn\s+off|switch\s+off|comment\s+out|remove|delete|"
               r"drop|silence|suppress|mark|xfail|deactivate|avoid|stop|circumvent|"
               r"(?:do\s+not|don't|never)\s+(?:run|execute|check|verify|wait\s+for)"),
        objects=(r"\b(?:checks?|tests?|testing|test\s+suite|linters?|lint(?:ing)?|hooks?|ci\b|"
                 r"verification|validation|type[- ]?check\w*|pre-commit|assertions?|security|"
                 r"sandbox(?:ing)?|review|ssl|tls|certificates?|signatures?|gpg|mypy|ruff|"
                 r"pytest|eslint|coverage|safeguards?|guardrails?|scan(?:ner|ning)?)\b"),
        anywhere=(r"--no-verify\b", r"--no-gpg-sign\b", r"@pytest\.mark\.skip\b",
                  r"\bgit\s+commit\b[^\n]{0,80}-n\b", r"\bverify\s*=\s*False\b",
                  r"\bNODE_TLS_REJECT_UNAUTHORIZED\s*=\s*['\"]?0",
                  r"\bSKIP\s*=\s*[\w,-]+\s+git\b")),
    DirectiveRule(
        "change-config", "change config or permissions",
        verbs=(r"change|set|edit|modify|update|add|append|write|overwrite|replace|enable|disable|"
               r"turn\s+(?:on|off)|grant|give|allow|chmod|chown|configure|install|put|patch|"
               r"create"),
        objects=(r"\b(?:config(?:uration)?|settings?|config\.toml|hooks\.json|\.bashrc|\.zshrc|"
                 r"\.profile|agents\.md|permissions?|approvals?|approval_policy|sandbox(?:_mode)?|"
                 r"sudoers|crontab|cron\s+job|authorized_keys|\.ssh|\.gitconfig|\.npmrc|\.pypirc|"
                 r"environment\s+variables?|path\s+variable|\$path|systemd|launchd|"
                 r"startup\s+scripts?|git\s+hooks?|full\s+access|root\s+access|write\s+access|"
                 r"executable|world[- ]writable|0?777)\b"),
        anywhere=(r"\bchmod\s+(?:-R\s+)?(?:0?777|a\+rwx|\+s|u\+s)\b",
                  r"\bapproval_policy\s*=\s*['\"]?never\b",
                  r"\bsandbox_mode\s*=\s*['\"]?danger-full-access\b",
                  r"--dangerously-bypass[\w-]*", r"--yolo\b",
                  r">>\s*~?/?[\w./-]*(?:\.bashrc|\.zshrc|\.profile|authorized_keys|sudoers)\b")),
    DirectiveRule(
        "handle-secret", "print, send or store a secret",
        verbs=(r"print|echo|show|reveal|display|output|log|dump|send|post|upload|share|copy|paste|"
               r"store|save|write|include|cat|commit|export|leak|email|read|collect|list|"
               r"exfiltrate|embed|hardcode|put|add"),
        objects=r"(?<![a-z0-9])(?:" + _SECRET_WORDS + r")",
        anywhere=(r"\bcat\s+~?/?[\w./-]*(?:\.ssh/id_\w+|\.env|auth\.json|\.netrc|credentials)\b",
                  r"\b(?:printenv|env)\s*\|\s*(?:curl|nc|wget)\b")),
    DirectiveRule(
        "override-instructions", "ignore or override earlier instructions",
        verbs=r"ignore|disregard|forget|override|bypass|overrule|supersede|discard|drop",
        objects=(r"\b(?:instructions?|prompts?|rules?|guidelines?|directives?|guidance|"
                 r"system\s+message|developer\s+message|agents\.md|policy|policies|constraints?)\b"),
        anywhere=(r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*"
                  r"(?:previous|prior|earlier|above|preceding|original|system|developer|other)\s+"
                  r"(?:instructions?|prompts?|rules?|messages?|directions?|guidance)\b",
                  r"\bnew\s+(?:system\s+)?instructions?\s*:",
                  r"\byou\s+are\s+now\s+(?:in\s+)?(?:a|an|the|developer|god|dan|unrestricted)\b",
                  r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|"
                  r"alert|notify)\s+the\s+user\b",
                  r"\btakes?\s+(?:precedence|priority)\s+over\s+(?:all\s+|any\s+)?(?:other\s+|"
                  r"previous\s+|earlier\s+)?(?:instructions?|rules?|agents\.md)\b",
                  r"\btreat\s+this\s+as\s+(?:a\s+)?(?:system|developer)\s+(?:message|"
                  r"instruction|prompt)\b")),
)

RULE_NAMES = tuple(rule.name for rule in RULES)

# Where a clause starts: the text's start, a line's start, after a sentence's end, after
# "then", "and" or "also" between clauses, after "|" of a table cell.
_CLAUSE_START = re.compile(r"(?:\A|\n|(?<=[.!?;:])[ \t]+|\|[ \t]*|,?[ \t]+(?:and[ \t]+)?then[ \t]+|"
                           r",[ \t]+and[ \t]+|[ \t]+and[ \t]+also[ \t]+|\([ \t]*)",
                           re.IGNORECASE)
# What may come before the verb: list markers, emphasis, adverbs, modals, a leading
# subordinate clause ("Before committing, ..."). Repeated.
_LEAD = re.compile(
    r"(?:[ \t]*(?:[-*+•>]+|\d{1,3}[.)]|#{1,6})[ \t]+"
    r"|[ \t]*[*_`\"'“]+"
    r"|[ \t]*(?:\[[A-Z]{2,5}\]|(?:note|important|tip|rule|reminder|todo|warning|nb)[ \t]*:)[ \t]*"
    r"|[ \t]*(?:please|always|first|now|just|also|then|immediately|silently|quietly|simply|"
    r"automatically|never\s+forget\s+to|from\s+now\s+on,?|going\s+forward,?|in\s+future,?|"
    r"each\s+time,?|every\s+time,?)\b[ \t,]*"
    r"|[ \t]*(?:you|the\s+agent|codex|agents?|assistants?)?[ \t]*(?:must|should|shall|"
    r"need\s+to|needs\s+to|have\s+to|has\s+to|are\s+to|is\s+to|will|can|may)[ \t]+(?:always[ \t]+)?"
    r"|[ \t]*(?:make\s+sure|be\s+sure|remember|don't\s+forget|do\s+not\s+forget|it\s+is\s+"
    r"(?:important|required|necessary)|you\s+are\s+(?:required|expected))[ \t]+to[ \t]+"
    r"|[ \t]*(?:when|whenever|before|after|if|once|to|for|while|on|in\s+order\s+to)\b[^,.\n]{1,100},"
    r"[ \t]*)",
    re.IGNORECASE)


def _compiled() -> tuple[tuple[DirectiveRule, re.Pattern, re.Pattern | None,
                               tuple[re.Pattern, ...]], ...]:
    out = []
    for rule in RULES:
        verbs = re.compile(r"(?:" + rule.verbs + r")\b", re.IGNORECASE)
        objects = re.compile(rule.objects, re.IGNORECASE) if rule.objects else None
        # one alternation per rule: a single pass over the text finds all of its patterns
        anywhere = (re.compile("|".join(f"(?:{pattern})" for pattern in rule.anywhere),
                               re.IGNORECASE),) if rule.anywhere else ()
        out.append((rule, verbs, objects, anywhere))
    return tuple(out)


_RULES = _compiled()
# Any rule's verb anywhere in the text (no boundary before it: a superset of the clause
# matches); a text without one has no clause to look at, only the "anywhere" patterns.
_ANY_VERB = re.compile("|".join(f"(?:{rule.verbs})" for rule in RULES) + r"\b", re.IGNORECASE)
# the same on lower-cased ASCII text, matched case-sensitively (several times faster than
# IGNORECASE over the alternation; the same answer, as ASCII has no special case folding)
_ANY_VERB_LOWER = re.compile("|".join(f"(?:{rule.verbs})" for rule in RULES) + r"\b")


# any rule's verb at a given place, as a whole word: a clause whose opening word matches
# this is the only one worth trying each rule's verb on
_VERB_AT = re.compile("(?:" + "|".join(f"(?:{rule.verbs})" for rule in RULES) + r")\b",
                      re.IGNORECASE)


def _any_verb(text: str) -> bool:
    if text.isascii():
        return _ANY_VERB_LOWER.search(text.lower()) is not None
    return _ANY_VERB.search(text) is not None
_CLAUSE_END = re.compile(r"[.!?;](?=\s|\Z)|\n", re.IGNORECASE)


def _clause_starts(text: str) -> list[int]:
    return sorted({match.end() for match in _CLAUSE_START.finditer(text)})


def _skip_lead(text: str, position: int) -> int:
    for _ in range(8):
        lead = _LEAD.match(text, position)
        if not lead or lead.end() == position:
            break
        position = lead.end()
    return position


def _excerpt(text: str, start: int, end: int) -> str:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    if line_end < 0:
        line_end = len(text)
    words = text[line_start:line_end].strip()
    if len(words) > EXCERPT_CHARS:
        offset = max(0, start - line_start - EXCERPT_CHARS // 4)
        words = words[offset:offset + EXCERPT_CHARS].strip() + "…"
    return words


def find_directives(text: str) -> list[DirectiveMatch]:
    """Every directive in ``text``, at most one per rule and clause, in the text's order."""
    text = text[:MAX_TEXT_CHARS]
    found: dict[tuple[str, int], DirectiveMatch] = {}
    starts = _clause_starts(text) if _any_verb(text) else []
    for index, clause_start in enumerate(starts):
        verb_at = _skip_lead(text, clause_start)
        stop = _CLAUSE_END.search(text, verb_at)
        clause_end = stop.start() if stop else len(text)
        if index + 1 < len(starts):
            clause_end = min(clause_end, max(starts[index + 1], verb_at))
        if clause_end <= verb_at or not _VERB_AT.match(text, verb_at, clause_end):
            continue
        for rule, verbs, objects, _anywhere in _RULES:
            verb = verbs.match(text, verb_at, clause_end)
            if not verb:
                continue
            if objects is not None:
                reach = objects.search(text, verb.end(), clause_end)
                if not reach:
                    continue
                end = reach.end()
            else:
                end = clause_end
            key = (rule.name, verb_at)
            found.setdefault(key, DirectiveMatch(rule.name, verb_at, end,
                                                 _excerpt(text, verb_at, end)))
    for rule, _verbs, _objects, anywhere in _RULES:
        for pattern in anywhere:
            for match in pattern.finditer(text):
                if any(m.rule == rule.name and m.start <= match.start() < max(m.end, m.start + 1)
                       for m in found.values()):
                    continue
                found.setdefault((rule.name, match.start()), DirectiveMatch(
                    rule.name, match.start(), match.end(),
                    _excerpt(text, match.start(), match.end())))
    return sorted(found.values(), key=lambda m: (m.start, RULE_NAMES.index(m.rule)))


def rules_table() -> list[dict]:
    """The rules as rows (name, meaning), for the docs and ``--help``."""
    return [{"rule": rule.name, "meaning": rule.meaning} for rule in RULES]
