"""Finding secrets and what does not belong in a durable note, and masking them.

Two layers. memcite's own checks (plain regular expressions, always run) cover
what Yelp's detect-secrets does not: e-mail addresses, phone numbers, cookies
and session ids, ``Authorization`` headers, passwords in URLs and assignments,
private key blocks, raw log excerpts and large code excerpts. detect-secrets'
plugins (run in process, on the text's lines, no baseline file, never any
verification over the network) cover known key formats and random-looking
tokens; importing them costs ~100 ms, so ``may_hold_secret`` (a cheap pre-filter
any wing may call per reply) decides whether they are loaded at all.

Durable notes are full of identifiers that look random and are not secrets:
UUIDs and thread ids, git commit hashes, SHA-256 digests, versions, paths, URLs
without credentials. Hex strings are never judged by entropy, and a candidate
token is a secret only when it has the shape of a random key (see
``_looks_like_identifier``).

``scan(text)`` returns findings with 1-based line numbers and character offsets
into ``text``; ``redact(text)`` puts ``[REDACTED:<kind>]`` in their place. A
finding's ``masked`` value shows at most its first four characters.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from memcite.value_classes import FrozenSlots


class Finding(FrozenSlots):
    """One thing that must not be stored: its kind, line (1-based), span in the text, masked value.

    Read-only, compared and hashed by value (``memcite record`` imports this module, so
    it is no dataclass).
    """

    __slots__ = ("kind", "line", "start", "end", "masked")
    _fields = _compared = __slots__

    def __init__(self, kind: str, line: int, start: int, end: int, masked: str) -> None:
        for name, value in zip(self.__slots__, (kind, line, start, end, masked), strict=True):
            object.__setattr__(self, name, value)

    def to_json(self) -> dict:
        return {"kind": self.kind, "line": self.line, "start": self.start, "end": self.end,
                "masked": self.masked}


# --------------------------------------------------------------------------- pre-filter

# What detect-secrets' plugins (those memcite uses) look for: known key prefixes, PEM
# headers, keyword assignments (plain substring tests, C speed); long random-looking tokens
# are checked apart.
_PREFIXES = (
    "AKIA", "ASIA", "ABIA", "ACCA", "A3T", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
    "glpat-", "glptt-", "gldt-", "glcbt-", "glimt-", "glagent-", "gloas-", "GR1348941", "sk-",
    "sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_", "xoxa-", "xoxb-", "xoxp-",
    "xoxo-", "xoxr-", "xoxs-", "hooks.slack.com", "-----BEGIN", "eyJ", "AccountKey=", "SG.",
    "npm_", "pypi-", "sq0atp-", "sq0csp-", "AKC",
)
_KEYWORDS = (
    "password", "passwd", "pwd", "secret", "api_key", "api-key", "apikey", "auth_key",
    "private_key", "token", "authorization", "bearer", "cloudant", "softlayer", "ibm",
)
_TOKEN_RE = r"[A-Za-z0-9+/_=\-]{20,}"
_KEYWORD_RE = (r"(?i:password|passwd|pwd|secret|api[_-]?key|apikey|auth[_-]?key|private[_-]?key"
               r"|token|authorization|bearer|cloudant|softlayer|ibm\w*)[\"']?\s*(?:=|:)")
_TWILIO_RE = r"(?:AC|SK)[0-9a-f]{32}"


@lru_cache(maxsize=3)
def _prefilter_re(pattern: str) -> re.Pattern:
    """Each pre-filter expression compiled the first time a text needs it (``record`` checks
    short notes and paths: most never reach the keyword or the Twilio expression)."""
    return re.compile(pattern)


def may_hold_secret(text: str) -> bool:
    """True when detect-secrets should look at ``text``: a known key marker or a random-looking token.

    Cheap (substring tests, then one regular expression over the long tokens) and
    conservative: False means none of the detect-secrets plugins memcite uses could
    find anything in ``text``.
    """
    for prefix in _PREFIXES:
        if prefix in text:
            return True
    lowered = text.lower()
    if any(word in lowered for word in _KEYWORDS) and _prefilter_re(_KEYWORD_RE).search(text):
        return True
    if len(text) < 20:  # no token of 20 characters fits
        return False
    for match in _prefilter_re(_TOKEN_RE).finditer(text):
        token = match.group()
        if _random_looking(token) or _prefilter_re(_TWILIO_RE).fullmatch(token):
            return True
    return False


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


_HEX_CHARS = "0123456789abcdefABCDEF"


def _looks_like_identifier(token: str) -> bool:
    """Identifiers that look random and are not secrets: hex (hashes, digests, UUIDs), paths, words.

    ``token`` is a run of base64 / url-safe characters.
    """
    core = token.strip("=")
    bare = core.replace("-", "").replace("_", "")
    if bare and not bare.strip(_HEX_CHARS):
        return True  # git hashes, SHA-256 digests, UUIDs, thread ids
    if "/" in core and "+" not in core:
        parts = [part for part in core.split("/") if part]
        # A path or URL path: each segment a word, a name or short (base64 keys mix cases and digits).
        if len(parts) >= 2 and all(_path_part(part) for part in parts):
            return True
    pieces = [piece for piece in core.replace("_", "-").split("-") if piece]
    if len(pieces) >= 2 and all(len(piece) <= 12 for piece in pieces):
        return True  # slugs, kebab and snake names, rollout file names, dates and times
    return core.isalpha() and (core.islower() or core.isupper() or core.istitle())


def _path_part(part: str) -> bool:
    if len(part) <= 8 or part.islower() or part.isupper() or _looks_like_identifier(part):
        return True
    return bool(re.fullmatch(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*(?:[._-][A-Za-z]+)*", part))


def _random_looking(token: str) -> bool:
    """A run that has a key's shape: long, letters and digits mixed, high entropy, no identifier shape."""
    if len(token) < 20:
        return False
    has_digit = any(c.isdigit() for c in token)
    if not has_digit:
        return False
    has_upper = not token.islower()
    has_lower = not token.isupper()
    if _looks_like_identifier(token):
        return False
    return _entropy(token) >= (4.0 if has_upper and has_lower else 3.6)


# --------------------------------------------------------------------------- memcite's own checks


@lru_cache(maxsize=1)
def _own_patterns() -> tuple[tuple[str, re.Pattern, int], ...]:
    """``(kind, pattern, group)``: the group holds the value to mask (0: the whole match)."""
    return (
        ("private-key", re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*"
            r"PRIVATE KEY(?: BLOCK)?-----|\Z)"), 0),
        ("authorization-header", re.compile(
            r"(?im)\b(?:proxy-)?authorization\s*:\s*((?:[A-Za-z-]+\s+)?[^\s\"'`]{6,})"), 1),
        ("bearer-token", re.compile(r"\bBearer\s+([A-Za-z0-9._~+/=\-]{16,})"), 1),
        ("cookie", re.compile(r"(?im)^\s*(?:set-)?cookie\s*:\s*(\S.*)$"), 1),
        ("session-id", re.compile(
            r"(?i)\b(?:session[_-]?id|sessid|sid|phpsessid|jsessionid|connect\.sid|session[_-]?token"
            r"|csrf[_-]?token|xsrf[_-]?token)\s*[=:]\s*[\"']?([A-Za-z0-9%._~+/\-]{8,})"), 1),
        ("url-password", re.compile(
            r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s/:@\"'<>]*:([^\s/@\"'<>]+)@"), 1),
        ("password", re.compile(
            r"(?i)(?:password|passwd|pwd|passphrase|secret|client[_-]?secret|api[_-]?key"
            r"|access[_-]?key|secret[_-]?key|token|private[_-]?key)"
            r"[\"']?\s*(?:=|:|:=|=>)\s*([\"']?)([^\s\"',;]{4,})\1"), 2),
        ("email", re.compile(
            r"(?<![\w.+-])([A-Za-z0-9][A-Za-z0-9._%+\-]*@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*"
            r"\.[A-Za-z]{2,24})(?![\w.-]*[/:]\S)"), 1),
        ("phone", re.compile(
            r"(?<![\w.+/-])(\+\d{1,3}[\s.\-]?(?:\(\d{1,4}\)[\s.\-]?)?\d{1,4}(?:[\s.\-]?\d{2,4}){2,4}"
            r"|\(\d{3}\)\s?\d{3}[\s.\-]\d{4}|\d{3}[\s.\-]\d{3}[\s.\-]\d{4})(?![\w.-]*\w)"), 1),
    )


_PLACEHOLDER_RE = r"^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^>]*>|\{\{.*\}\}|%\(?\w*\)?s?|\*+|x+|X+|\.{3}|…|redacted|\[REDACTED(?::[a-z0-9-]+)?\])$"  # noqa: E501


@lru_cache(maxsize=1)
def _placeholder_re() -> re.Pattern:
    return re.compile(_PLACEHOLDER_RE, re.IGNORECASE)


def _is_placeholder(value: str) -> bool:
    """``${PASSWORD}``, ``<token>``, ``****``, ``[REDACTED:…]``: names of secrets, not secrets."""
    value = value.strip("\"'`")
    return value.startswith(("<", "${", "$(", "{{", "%(")) or bool(_placeholder_re().match(value))


_NOT_VALUES = ("none", "null", "nil", "empty", "true", "false", "required", "optional", "unset",
               "redacted", "hidden", "masked", "changeme")


def _plain_word(value: str) -> bool:
    """A lower-case word (``secret: stored in vault``) or a null-like value: prose, not a password."""
    return (value.isalpha() and value.islower() and len(value) < 16) \
        or value.lower() in _NOT_VALUES


@lru_cache(maxsize=1)
def _reference_re() -> re.Pattern:
    word = r"(?:[A-Z][A-Z0-9_]*|[a-z_][a-z0-9_]*)"  # CONSTANT or snake_name, never mixed case
    return re.compile(rf"[A-Za-z_][\w.]*[(\[]|{word}(?:\.{word})+\Z")


def _indirect(value: str) -> bool:
    """A value that names where the secret is (``os.environ['X']``, ``settings.DB_PASSWORD``)."""
    return bool(_reference_re().match(value))


_EMAIL_ALLOWED_DOMAINS = ("example.com", "example.org", "example.net", "users.noreply.github.com")
_EMAIL_ALLOWED_LOCAL = ("git", "noreply", "no-reply")


def _own_findings(text: str) -> list[tuple[str, int, int]]:
    found: list[tuple[str, int, int]] = []
    for kind, pattern, group in _own_patterns():
        for match in pattern.finditer(text):
            value = match.group(group)
            start, end = match.span(group)
            if not value or _is_placeholder(value):
                continue
            if kind == "password" and (_plain_word(value) or _indirect(value)):
                continue
            if kind == "authorization-header" and _plain_word(value.split()[-1]):
                continue
            if kind == "session-id" and _is_uuid(value):
                continue  # a Codex session is a thread: its id is a UUID, an identifier
            if kind == "email":
                local, _, domain = value.partition("@")
                if local.lower() in _EMAIL_ALLOWED_LOCAL or domain.lower().endswith(
                        _EMAIL_ALLOWED_DOMAINS):
                    continue
            if kind == "phone" and not _phone_digits(value):
                continue
            found.append((kind, start, end))
    found.extend(_block_findings(text))
    return found


def _is_uuid(value: str) -> bool:
    parts = value.split("-")
    return [len(part) for part in parts] == [8, 4, 4, 4, 12] and not "".join(parts).strip(_HEX_CHARS)


def _phone_digits(value: str) -> bool:
    digits = sum(char.isdigit() for char in value)
    return 9 <= digits <= 15


# --------------------------------------------------------------------------- log and code blocks

LOG_LINES_LIMIT = 2  # more log-like lines than this in a row is a raw log excerpt
CODE_LINES_LIMIT = 4  # more code-like lines than this is a large code excerpt


@lru_cache(maxsize=1)
def _block_patterns() -> tuple[re.Pattern, re.Pattern]:
    log = re.compile(
        r"^\s*(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?[^\]\s]*\]?\s+\S"
        r"|\[?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]?\s+\S"
        r"|\[?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL)\]?[\s:]"
        r"|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} "
        r"|Traceback \(most recent call last\):|File \"[^\"]+\", line \d+|\w*(?:Error|Exception)\b:?"
        r"|at [\w$.]+\([\w$]*\.(?:java|kt|scala|js|ts):\d+\))")
    code = re.compile(
        r"^\s*(?:(?:async\s+)?def |class \w|import \w|from [\w.]+ import |return\b|if .*:\s*$"
        r"|for .*:\s*$|while .*:\s*$|try:|except\b|elif |else:|with .*:\s*$|@\w"
        r"|(?:const|let|var|function|fn|pub|func|package|public|private|static|void|int)\s"
        r"|#include|#define|\}|\{\s*$|.*[;{]\s*$|\w+(?:\.\w+)*\s*(?:[+\-*/]?=)\s*\S.*$|\w+\(.*\)\s*$)")
    return log, code


def _block_findings(text: str) -> list[tuple[str, int, int]]:
    """Runs of log-like lines (more than ``LOG_LINES_LIMIT``) and code-like lines (more than
    ``CODE_LINES_LIMIT``, fenced code blocks counted whole)."""
    if "\n" not in text:
        return []
    log_re, code_re = _block_patterns()
    lines = text.split("\n")
    offsets = []
    position = 0
    for line in lines:
        offsets.append(position)
        position += len(line) + 1
    found: list[tuple[str, int, int]] = []
    for kind, test, limit in (
        ("raw-log", lambda s: bool(log_re.match(s)), LOG_LINES_LIMIT),
        ("code-excerpt", lambda s: bool(code_re.match(s)), CODE_LINES_LIMIT),
    ):
        run_start = None
        fenced = False
        for index, line in enumerate([*lines, None]):
            if line is not None and kind == "code-excerpt" and line.lstrip().startswith("```"):
                fenced = not fenced
                if run_start is None:
                    run_start = index
                continue
            hit = line is not None and line.strip() != "" and (fenced or test(line))
            if not hit and run_start is not None and kind == "raw-log" and line is not None \
                    and line[:2].isspace() and line.strip():
                continue  # an indented line inside a log (a traceback's source line) goes on
            if hit:
                if run_start is None:
                    run_start = index
                continue
            if run_start is not None:
                count = sum(1 for i in range(run_start, index) if lines[i].strip()
                            and not lines[i].lstrip().startswith("```")
                            and (kind == "code-excerpt" or test(lines[i])))
                if count > limit:
                    end = offsets[index - 1] + len(lines[index - 1])
                    found.append((kind, offsets[run_start], end))
                run_start = None
    return found


# --------------------------------------------------------------------------- detect-secrets

# Plugins left out: public IP addresses are not secrets in a note; hex strings are
# hashes and digests (judged by memcite's own token rule instead); the keyword
# plugin is memcite's ``password`` check, which also knows placeholders and prose.
_SKIPPED_PLUGINS = ("IPPublicDetector", "HexHighEntropyString", "KeywordDetector",
                    "Base64HighEntropyString")
_ENTROPY_LIMIT = 4.5


@lru_cache(maxsize=1)
def _detect_secrets_plugins():
    """detect-secrets' plugin instances (loaded once, on the first text the pre-filter lets through)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    plugins = [cls() for cls in get_mapping_from_secret_type_to_class().values()
               if cls.__name__ not in _SKIPPED_PLUGINS]
    return plugins, Base64HighEntropyString(limit=_ENTROPY_LIMIT)


def _kind_of(secret_type: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


def _detect_secrets_findings(text: str) -> list[tuple[str, int, int]]:
    from detect_secrets.filters.heuristic import is_potential_uuid, is_sequential_string

    plugins, entropy = _detect_secrets_plugins()
    found: list[tuple[str, int, int]] = []
    position = 0
    for line in text.split("\n"):
        for plugin in plugins:
            found.extend((_kind_of(plugin.secret_type), position + start, position + end)
                         for start, end in _plugin_spans(plugin, line))
        with entropy.non_quoted_string_regex(is_exact_match=False):
            for value in entropy.analyze_string(line):
                value = value.strip("=") if value.endswith("==") else value
                if (len(value) < 20 or _looks_like_identifier(value) or is_potential_uuid(value)
                        or is_sequential_string(value)
                        or entropy.calculate_shannon_entropy(value) <= _ENTROPY_LIMIT
                        and not _random_looking(value)):
                    continue
                found.extend(("high-entropy-string", position + start, position + end)
                             for start, end in _spans(line, value))
        position += len(line) + 1
    return found


def _plugin_spans(plugin, line: str):
    """Where a plugin finds secrets in ``line``: whole matches of its expressions.

    A regular-expression plugin reports a match's first group when its expression has
    groups (the GitHub one reports ``ghp`` of ``ghp_<36 characters>``): masking that
    alone would leave the key, so the spans are those of the whole matches.
    """
    values = [value for value in plugin.analyze_string(line) if value]
    covered = set()
    for pattern in getattr(plugin, "denylist", ()):
        for match in pattern.finditer(line):
            hit = [value for value in values if value in match.group()]
            if hit:  # the plugin's own checks (a JWT's shape, ...) passed this match
                covered.update(hit)
                yield match.span()
    for value in values:
        if value not in covered:
            yield from _spans(line, value)


def _spans(line: str, value: str):
    if not value:
        return
    start = line.find(value)
    while start != -1:
        yield start, start + len(value)
        start = line.find(value, start + len(value))


# --------------------------------------------------------------------------- scan and redact


def mask(value: str) -> str:
    """At most the first four characters of a value, then its length: ``ghp_…(40 chars)``."""
    if "\n" in value:
        return f"({value.count(chr(10)) + 1} lines)"
    keep = 4 if len(value) >= 16 else 2 if len(value) >= 8 else 0
    return f"{value[:keep]}…({len(value)} chars)"


def scan(text: str) -> list[Finding]:
    """Everything in ``text`` that must not be stored, in order; overlapping findings merged."""
    spans = _own_findings(text)
    if may_hold_secret(text):
        spans.extend(_detect_secrets_findings(text))
    merged = _merge(spans)
    return [Finding(kind, text.count("\n", 0, start) + 1, start, end, mask(text[start:end]))
            for kind, start, end in merged]


def _merge(spans: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Overlapping spans become one, named after the widest (a named kind before an entropy guess)."""
    merged: list[list] = []
    ordered = sorted(spans, key=lambda s: (s[1], -(s[2] - s[1]), s[0] == "high-entropy-string"))
    for kind, start, end in ordered:
        if merged and start < merged[-1][2]:
            last = merged[-1]
            if end - start > last[2] - last[1]:
                last[0] = kind
            last[2] = max(last[2], end)
            continue
        merged.append([kind, start, end])
    return [tuple(item) for item in merged]


MAX_REDACT_ROUNDS = 4


def redact(text: str, findings: list[Finding] | None = None) -> str:
    """``text`` with each finding replaced by ``[REDACTED:<kind>]``.

    Without ``findings``, scanned again after each round until nothing more is found: a
    finding can hide its neighbour (``555-123-4567xoxb-…`` is no phone number until the
    Slack token after it is masked), and one call must mask all (idempotent).
    """
    if findings is not None:
        return _replace(text, findings)
    for _ in range(MAX_REDACT_ROUNDS):
        findings = scan(text)
        if not findings:
            break
        text = _replace(text, findings)
    return text


def _replace(text: str, findings: list[Finding]) -> str:
    out: list[str] = []
    position = 0
    for finding in sorted(findings, key=lambda f: f.start):
        out.append(text[position:finding.start])
        out.append(f"[REDACTED:{finding.kind}]")
        position = finding.end
    out.append(text[position:])
    return "".join(out)


# --------------------------------------------------------------------------- what is stored

# Words that memcite's own checks need before ``=`` or ``:`` (lower case; a superset: "api"
# covers api_key, "sess" session ids, "private" private_key, ...).
_OWN_KEYWORDS = ("password", "passwd", "pwd", "passphrase", "secret", "api", "access", "token",
                 "private", "authorization", "cookie", "sess", "sid", "csrf", "xsrf")


@lru_cache(maxsize=1)
def _phone_like_re() -> re.Pattern:
    return re.compile(r"\+\d|\(\d{3}\)|\d{3}[\s.\-]\d{3}[\s.\-]\d{4}")


def may_need_masking(text: str) -> bool:
    """True when ``scan`` could find something in ``text``; False means it finds nothing.

    Cheap (substring tests and one small expression; no detect-secrets, none of memcite's own
    patterns compiled), so it can run on every field of every reply.
    """
    if "@" in text or "\n" in text or "-----BEGIN" in text or "Bearer" in text:
        return True  # e-mail, password in a URL, log or code block, key block, bearer token
    if "=" in text or ":" in text:
        lowered = text.lower()
        if any(word in lowered for word in _OWN_KEYWORDS):
            return True
    return bool(_phone_like_re().search(text)) or may_hold_secret(text)


def mask_secrets(text: str) -> str:
    """``text`` with what ``scan`` finds replaced by ``[REDACTED:<kind>]``, for storing it.

    Ordinary text costs only ``may_need_masking`` (microseconds) and comes back unchanged;
    detect-secrets is loaded only when the pre-filter sees a key marker or a random token.
    Masking twice changes nothing more (``[REDACTED:…]`` is a placeholder, never a secret).
    """
    if not may_need_masking(text):
        return text
    return redact(text)


def is_masked(text: str) -> bool:
    """Whether ``text`` holds a masked value (``[REDACTED:…]``): a path so stored names no file."""
    return "[REDACTED:" in text


__all__ = ["Finding", "is_masked", "mask", "mask_secrets", "may_hold_secret", "may_need_masking",
           "redact", "scan"]
