"""Finding secrets and what does not belong in a durable note, and masking them.

Three layers. memcite's own checks (plain regular expressions, always run) cover
what Yelp's detect-secrets does not: e-mail addresses, phone numbers, cookies
and session ids, ``Authorization`` headers, passwords in URLs, assignments,
netrc lines, command-line options and prose (``the password is …``), private
key blocks, raw log excerpts and large code excerpts. memcite's provider rules
(a prefix each: ``hf_``, ``sk-ant-``, ``dop_v1_``, ``hvs.``, …; see
docs/secret-coverage.md) find the keys of the services a coding agent meets,
quoted or not. detect-secrets' plugins (run in process, on the text's lines, no
baseline file, never any verification over the network) cover more known key
formats and random-looking tokens; importing them costs ~100 ms, so
``may_hold_secret`` (a cheap pre-filter any wing may call per reply) decides
whether they are loaded at all.

Text that is not ASCII is folded before it is scanned: Unicode format characters
(category Cf: zero-width spaces and joiners, the soft hyphen, the BOM, bidi
controls) and other invisible ones are dropped and every character is put in
NFKC form (fullwidth ``ＡＫＩＡ`` is ``AKIA``), so a key cannot hide behind a
look-alike; the findings' spans are mapped back onto the original text, which is
what is masked. ASCII text (``str.isascii``, C speed) is never folded.

Durable notes are full of identifiers that look random and are not secrets:
UUIDs, ULIDs and thread ids, git commit hashes, SHA-256 digests, versions, paths,
URLs without credentials, base64 of ordinary words. Hex strings are never judged
by entropy (a hex key is found by its provider's prefix), and a candidate token is
a secret only when it has the shape of a random key (see ``_looks_like_identifier``).

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


# --------------------------------------------------------------------------- folding

# Invisible characters that are not of category Cf (default-ignorable code points): the
# combining grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian variation
# selectors; variation selectors are the two ranges below.
_IGNORABLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0")
_IGNORABLE_RANGES = ((0xFE00, 0xFE0F), (0xE0100, 0xE01EF))


@lru_cache(maxsize=1)
def _non_ascii_re() -> re.Pattern:
    return re.compile(r"[^\x00-\x7f]")


@lru_cache(maxsize=4096)
def _fold_char(char: str) -> str | None:
    """What one non-ASCII character is when scanned: None (dropped), or its NFKC form."""
    import unicodedata

    code = ord(char)
    if unicodedata.category(char) == "Cf" or char in _IGNORABLE \
            or any(low <= code <= high for low, high in _IGNORABLE_RANGES):
        return None
    return unicodedata.normalize("NFKC", char)


def _fold_table(text: str) -> dict[int, str | None]:
    """``str.translate``'s table for ``text``: the non-ASCII characters that folding changes.

    Each character is folded alone (NFKC per character, so that every character of the
    folded text comes from exactly one of ``text``); empty for ASCII or ordinary text.
    """
    table: dict[int, str | None] = {}
    for char in set(_non_ascii_re().findall(text)):
        folded = _fold_char(char)
        if folded != char:
            table[ord(char)] = folded
    return table


def _fold(text: str) -> tuple[str, dict[int, str | None]]:
    """``text`` as it is scanned (format characters dropped, NFKC) and the table that made it."""
    if text.isascii():
        return text, {}
    table = _fold_table(text)
    return (text.translate(table) if table else text), table


def _unfold_spans(text: str, table: dict[int, str | None],
                  spans: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Spans of the folded text as spans of ``text``: each covers the characters that made it."""
    if not spans:
        return spans
    from bisect import bisect_left, bisect_right  # only text that is not ASCII gets here
    from itertools import accumulate

    def width(char: str) -> int:
        folded = table.get(ord(char), char)
        return 0 if folded is None else len(folded)

    ends = list(accumulate(map(width, text)))  # folded offset after each character of text
    # the first character whose folding reaches past ``start``; the last one reaching ``end``
    return _merge([(kind, bisect_right(ends, start), bisect_left(ends, end) + 1)
                   for kind, start, end in spans])


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
    if _codex_name_re().fullmatch(core):
        return True  # a rollout summary's name, as Codex makes it
    if ("/" in core or "\\" in core) and "+" not in core:
        parts = [part for part in re.split(r"[/\\]+", core) if part]
        # A path or URL path: each segment a word, a name or short (base64 keys mix cases and digits).
        if len(parts) >= 2 and all(_path_part(part) for part in parts):
            return True
    if "=" in core:
        name, _, value = core.partition("=")
        if _name_like(name) and (_name_like(value) or not value.strip("0123456789.-")):
            return True  # a setting: ``MaxShowDistance=2000``, ``bEnableFoo=0``
    pieces = [piece for piece in core.replace("_", "-").split("-") if piece]
    if (len(pieces) >= 2 or len(core) > 12) and all(len(piece) <= 12 or _wordy(piece)
                                                    for piece in pieces):
        return True  # slugs, kebab, snake and camel names, file names, dates and times
    if len(pieces) == 2 and pieces[0].isalpha() and len(pieces[0]) <= 12 \
            and not pieces[1].strip(_HEX_CHARS):
        return True  # a typed id: req_<hex>, evt-<hex> (a hex key is found by its prefix)
    if core.isalpha() and (core.islower() or core.isupper() or core.istitle()):
        return True
    return _is_ulid(core) or _base64_of_words(core)


@lru_cache(maxsize=1)
def _codex_name_re() -> re.Pattern:
    """A rollout summary's file name as Codex writes it, with the folders before it:
    ``rollout_summaries/2026-01-02T03-04-05-AbCd-some_slug`` (the time the thread started,
    four random characters, a lower-case slug)."""
    return re.compile(r"(?:[\w.-]*/)*\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-[A-Za-z0-9]{4}"
                      r"(?:-[a-z0-9_-]*)?(?:\.md)?")


@lru_cache(maxsize=1)
def _segment_re() -> re.Pattern:
    return re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|[A-Z]|\d+")


def _wordy(piece: str) -> bool:
    """A name made of words: ``BackpackComponentV2``, ``SmartSchoolERP``, ``clarification``.

    Its letters run in words (lower-case or Capitalised, with a vowel; or an acronym of up to
    five letters) of three letters on average, at most one of them a single letter
    (``bIsEnabled``, ``V2``) and one without a vowel (``TipsMgr``), two or a third at most short or
    an acronym, and it switches between
    letters and digits at most twice: a random key's cases, letters and digits alternate.
    """
    segments = _segment_re().findall(piece)
    if not segments or "".join(segments) != piece:
        return False
    switches = sum(1 for a, b in zip(piece, piece[1:], strict=False) if a.isdigit() != b.isdigit())
    letters = [segment for segment in segments if not segment.isdigit()]
    if switches > 2 or not letters:
        return False
    single = sum(1 for segment in letters if len(segment) == 1)
    if single > 1 or sum(map(len, letters)) < 3 * len(letters):
        return False
    if len(letters) == 1:
        return True
    # words have vowels (``Mgr`` may be one), acronyms are short
    voiceless = sum(1 for segment in letters if len(segment) > 1 and not segment.isupper()
                    and not any(vowel in segment.lower() for vowel in "aeiouy"))
    odd = sum(1 for segment in letters if len(segment) <= 2 or segment.isupper())
    lower = [char for char in piece if char.islower()]
    if sum(char in "aeiouy" for char in lower) < 0.28 * len(lower):
        return False  # random letters: 6 vowels of 26
    return voiceless <= 1 and odd <= max(2, len(letters) // 3) \
        and all(len(segment) <= 5 for segment in letters if segment.isupper())


def _name_like(text: str) -> bool:
    """A setting's or a variable's name: words joined by ``_``, ``-`` or ``.``, or short."""
    pieces = [piece for piece in re.split(r"[._-]+", text) if piece]
    return bool(pieces) and all(len(piece) <= 4 or _wordy(piece) for piece in pieces)


_ULID_CHARS = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford's base32


def _is_ulid(core: str) -> bool:
    return len(core) == 26 and core[0] in "01234567" and not core.strip(_ULID_CHARS)


def _base64_of_words(core: str) -> bool:
    """``aGVsbG8gd29ybGQ`` (``hello world``): base64 of prose or a header is no key.

    A random key's bytes are almost never all letters and spaces; ``user:password`` (no
    space) is still judged as a key.
    """
    if len(core) < 16 or len(core) % 4 == 1 or "-" in core or "_" in core:
        return False
    import base64
    import binascii

    try:
        decoded = base64.b64decode(core + "=" * (-len(core) % 4), validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return " " in decoded and bool(_words_re().fullmatch(decoded))


@lru_cache(maxsize=1)
def _words_re() -> re.Pattern:
    return re.compile(r"[A-Za-z][A-Za-z ,.:;/'()-]*[A-Za-z.)]")


def _path_part(part: str) -> bool:
    if len(part) <= 8 or part.islower() or part.isupper() or _looks_like_identifier(part) \
            or _wordy(part):
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
def _own_patterns() -> tuple[tuple[str, re.Pattern, int, str], ...]:
    """``(kind, pattern, group, rule)``: the group holds the value to mask (0: the whole match),
    the rule names the test a value must pass (``_kept``)."""
    return (
        ("private-key", re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*"
            r"PRIVATE KEY(?: BLOCK)?-----|\Z)"), 0, ""),
        ("authorization-header", re.compile(
            r"(?im)\b(?:proxy-)?authorization\s*:\s*((?:[A-Za-z-]+\s+)?[^\s\"'`]{6,})"), 1,
         "header"),
        ("bearer-token", re.compile(r"\bBearer\s+([A-Za-z0-9._~+/=\-]{16,})"), 1, ""),
        ("cookie", re.compile(r"(?im)^\s*(?:set-)?cookie\s*:\s*(\S.*)$"), 1, ""),
        ("session-id", re.compile(
            r"(?i)\b(?:session[_-]?id|sessid|sid|phpsessid|jsessionid|connect\.sid|session[_-]?token"
            r"|csrf[_-]?token|xsrf[_-]?token)\s*[=:]\s*[\"']?([A-Za-z0-9%._~+/\-]{8,})"), 1,
         "session"),
        ("url-password", re.compile(
            r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s/:@\"'<>]*:([^\s/@\"'<>]+)@"), 1, ""),
        ("password", re.compile(
            r"(?i)(?:password|passwd|pwd|passphrase|secret|client[_-]?secret|api[_-]?key"
            r"|access[_-]?key|secret[_-]?key|token|private[_-]?key)"
            r"[\"']?\s*(?:=|:|:=|=>)\s*([\"']?)([^\s\"',;]{4,})\1"), 2, "assignment"),
        ("email", re.compile(
            r"(?<![\w.+-])([A-Za-z0-9][A-Za-z0-9._%+\-]*@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*"
            r"\.[A-Za-z]{2,24})(?![\w.-]*[/:]\S)"), 1, "email"),
        ("phone", re.compile(
            r"(?<![\w.+/-])(\+\d{1,3}[\s.\-]?(?:\(\d{1,4}\)[\s.\-]?)?\d{1,4}(?:[\s.\-]?\d{2,4}){2,4}"
            r"|\(\d{3}\)\s?\d{3}[\s.\-]\d{4}|\d{3}[\s.\-]\d{3}[\s.\-]\d{4})(?![\w.-]*\w)"), 1,
         "phone"),
    )


@lru_cache(maxsize=1)
def _shape_patterns() -> tuple[tuple[str, re.Pattern, int, str], ...]:
    """Passwords given without ``=`` or ``:``, as ``_own_patterns`` are; run only on a text
    that holds one of their words (``_may_hold_shape``)."""
    quoted = r"([\"'`]?)([^\s\"'`]{%d,})\%d"  # a value, quoted or not: groups n and n+1

    def password(source: str, rule: str, least: int = 3) -> tuple[str, re.Pattern, int, str]:
        groups = re.compile(source.replace("VALUE", "")).groups
        value = quoted % (least, groups + 1)
        return ("password", re.compile(source.replace("VALUE", value)), groups + 2, rule)

    return (
        # netrc: ``machine H login U password P``, on one line or one token a line
        password(r"(?i)\b(?:machine\s+\S+|default)(?:\s+(?:login|account|port)\s+\S+)*"
                 r"\s+password\s+VALUE", "assignment"),
        # options: --password P, --db-password=P, --api-key P, keytool -storepass P, openssl
        password(r"(?i)(?<![\w-])--(?:[a-z0-9]+-)*(?:password|passwd|pass|pwd|token|api-?key"
                 r"|secret-key|client-secret)(?:=|[ \t]+)VALUE", "option", 4),
        password(r"(?<![\w-])-(?:src|dest)?(?:store|key)pass[ \t]+VALUE", "option"),
        password(r"(?<![\w-])-pass(?:in|out)?[ \t]+pass:VALUE", "option", 1),
        # mysql -pP (the value is glued on) and -p P; sshpass -p P; redis-cli -a P
        password(r"(?m)\b(?:mysql\w*|mariadb[\w-]*)\b[^\n]*?[ \t]-pVALUE", "glued", 1),
        password(r"(?m)\b(?:mysql\w*|mariadb[\w-]*)\b[^\n]*?[ \t]-p[ \t]+VALUE", "separated"),
        password(r"\bsshpass[ \t]+-p[ \t]*VALUE", "option", 1),
        password(r"(?m)\bredis-cli\b[^\n]*?[ \t](?:-a|--pass)[ \t]+VALUE", "option", 1),
        # curl -u user:P (the user is no secret)
        ("password", re.compile(r"(?im)\bcurl\b[^\n]*?[ \t](?:-u|--user)(?:[ \t]+|=)?([\"']?)"
                                r"[^\s:\"'$]+:([^\s\"'`]+)\1"), 2, "option"),
        # prose: "the password is P"
        # (a value in brackets is a gloss, "password (PW)", not the password)
        password(r"(?i)\b(?:password|passwd|passphrase|passcode)\s+(?:is|was)(?:\s*:)?\s+(?![(\[<{])VALUE",
                 "prose", 4),
        # a login's password: "user bob / password P", "log in as X with password P", and a
        # login and its password side by side: "`tester@example.com` / `P`"
        password(r"(?i)\b(?:password|passwd|pwd|passcode|pw)[ \t]+(?![(\[<{])VALUE", "credential", 4),
        password(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+[\"'`]?[ \t]*/[ \t]*VALUE",
                 "credential", 4),
    )


# Words the password shapes need (netrc, options, prose, mysql -p, redis-cli -a, curl -u),
# and the words of the option names (after ``--``).
_SHAPE_WORDS = ("pass", "pwd", "mysql", "mariadb", "redis-cli", "curl")
_OPTION_WORDS = ("token", "api-key", "apikey", "secret-key", "client-secret")


def _may_hold_shape(text: str, lowered: str) -> bool:
    return any(word in lowered for word in _SHAPE_WORDS) \
        or "--" in text and any(word in lowered for word in _OPTION_WORDS) \
        or "@" in text and "/" in text  # a login / its password


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


# What a text must hold (lower-cased) for each of memcite's own patterns to match it: any of
# the first words, and all of the second; a pattern not named here is always tried. Most
# lines of memory hold none of them, and a substring test is far cheaper than the pattern.
_OWN_NEEDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "private-key": (("private key",), ()),
    "authorization-header": (("authorization",), ()),
    "bearer-token": (("bearer",), ()),
    "cookie": (("cookie",), ()),
    "session-id": (("sess", "sid", "csrf", "xsrf"), ()),
    "url-password": (("://",), ("@",)),
    "password": (("pass", "pwd", "secret", "key", "token"), ()),
    "email": (("@",), ()),
}


def _may_match(kind: str, lowered: str) -> bool:
    needs = _OWN_NEEDS.get(kind)
    if needs is None:
        return True
    any_of, all_of = needs
    return any(word in lowered for word in any_of) and all(word in lowered for word in all_of)


def _own_findings(text: str, blocks: bool = True) -> list[tuple[str, int, int]]:
    found: list[tuple[str, int, int]] = []
    lowered = text.lower()
    patterns = tuple(entry for entry in _own_patterns() if _may_match(entry[0], lowered))
    if _may_hold_shape(text, lowered):
        patterns += _shape_patterns()
    for kind, pattern, group, rule in patterns:
        for match in pattern.finditer(text):
            value = match.group(group)
            start, end = match.span(group)
            if rule in ("prose", "credential"):  # a sentence's full stop is not the password's
                value = value.rstrip(".,;:!?)")
                end = start + len(value)
            if rule == "assignment" and not match.group(1) and _code_name(value):
                continue  # ``aws_secret_access_key=SECRET_KEY``: a name in code, not its value
            if value and not _is_placeholder(value) and _kept(rule, value):
                found.append((kind, start, end))
    found.extend(_provider_findings(text))
    if blocks:
        found.extend(_block_findings(text))
    if "=" in text and ("pass" in text.lower() or "%" in text):
        found.extend(conninfo_password_spans(text))
    return found


# --------------------------------------------------------------------------- libpq's syntax

# A PostgreSQL address as libpq reads it (``conninfo_parse`` / ``conninfo_uri_parse``): a URI
# whose query keys and values are percent-decoded (``?pass%77ord=…`` is the password), or
# ``key = value`` pairs whose value is single-quoted or ends at white space, a backslash
# escaping the next character in either (``password=a\ b`` is ``a b``).
_LIBPQ_KEYS = ("host=", "hostaddr=", "dbname=", "user=", "port=", "sslmode=", "service=",
               "connect_timeout=", "application_name=", "options=")


@lru_cache(maxsize=1)
def _conninfo_res() -> tuple[re.Pattern, re.Pattern]:
    uri = re.compile(r"(?i)\bpostgres(?:ql)?://[^\s\"'<>`]*")
    keyword = re.compile(r"(?i)(?<![\w.%&?/-])password\s*=(?!=)\s*"
                         r"('(?:[^'\\]|\\.)*(?:'|\Z)|(?:\\.|\\\Z|[^\s\\])+)")
    return uri, keyword


def _percent_decoded(text: str) -> str:
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def conninfo_password_spans(text: str) -> list[tuple[str, int, int]]:
    """The passwords of the PostgreSQL addresses in ``text``, found as libpq parses them:
    ``(kind, start, end)`` of each password's text (percent-encoded or escaped as written)."""
    uri, keyword = _conninfo_res()
    found: list[tuple[str, int, int]] = []
    for match in uri.finditer(text):
        start, address = match.start(), match.group().rstrip(".,;:!?)]}")
        rest = address.split("://", 1)[1]
        authority = re.split(r"[/?]", rest, maxsplit=1)[0]
        offset = start + len(address) - len(rest)
        if "@" in authority:
            userinfo = authority.rsplit("@", 1)[0]
            if ":" in userinfo:
                begin = offset + userinfo.index(":") + 1
                secret = text[begin:offset + len(userinfo)]
                if secret and not _is_placeholder(_percent_decoded(secret)):
                    found.append(("url-password", begin, offset + len(userinfo)))
        if "?" in rest:
            position = offset + rest.index("?") + 1
            for pair in rest[rest.index("?") + 1:].split("&"):
                key, equals, value = pair.partition("=")
                if equals and value and _percent_decoded(key).strip().lower() == "password" \
                        and not _is_placeholder(_percent_decoded(value)):
                    begin = position + len(key) + 1
                    found.append(("url-password", begin, begin + len(value)))
                position += len(pair) + 1
    lowered = text.lower()
    for match in keyword.finditer(text):
        value = match.group(1)
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = text.find("\n", match.end())
        line = lowered[line_start:line_end if line_end != -1 else len(text)]
        # a plain ``password=word`` is the assignment rule's: this one takes libpq's forms
        if not ("\\" in value or value.startswith("'")
                or any(key in line.replace(" = ", "=") for key in _LIBPQ_KEYS)):
            continue
        plain = re.sub(r"\\(.)", r"\1", value.strip("'"))
        if plain and not _is_placeholder(plain) and _kept("assignment", plain):
            found.append(("password", match.start(1), match.end(1)))
    return found


_CODE_NAME = re.compile(r"[A-Za-z]+(?:_[A-Za-z]+)+")


def _code_name(value: str) -> bool:
    """An unquoted value of letters joined by underscores (``SECRET_KEY``, ``sudo_pass``):
    in code, the name of a variable or constant that holds the secret; a password mixes in
    digits or other signs, or is quoted."""
    return _CODE_NAME.fullmatch(value.rstrip(")]}")) is not None  # the call or literal it closes


def _kept(rule: str, value: str) -> bool:
    """Whether a value one of memcite's own patterns matched is to be masked."""
    if rule == "assignment":
        return not (_plain_word(value) or _indirect(value))
    if rule == "option":  # a value that starts with - is the next option
        return not (_plain_word(value) or _indirect(value) or value.startswith("-"))
    if rule == "glued":  # mysql -pP: P is the password, whatever it looks like
        return True
    if rule == "separated":  # mysql -p db: db may be the database (mysql then asks for it)
        return not (_plain_word(value) or re.fullmatch(r"[a-z_]+\d*|\d+|-.*", value))
    if rule == "prose":
        return len(value) >= 4 and not (value.isalpha() and len(value) < 16) \
            and value.lower() not in _NOT_VALUES and not _indirect(value)
    if rule == "credential":  # a word after "password" is prose; a password mixes kinds
        return len(value) <= 64 and not (_plain_word(value) or _indirect(value)) \
            and not any(char in value for char in "/\\$~") and not value.startswith("-") \
            and (value.isdigit() or any(c.isalpha() for c in value)
                 and any(c.isdigit() or not c.isalnum() and c not in "-_." for c in value))
    if rule == "header":
        return not _plain_word(value.split()[-1])
    if rule == "session":
        return not _is_uuid(value)  # a Codex session is a thread: its id is a UUID
    if rule == "email":
        local, _, domain = value.partition("@")
        return not (local.lower() in _EMAIL_ALLOWED_LOCAL
                    or domain.lower().endswith(_EMAIL_ALLOWED_DOMAINS))
    if rule == "phone":
        return _phone_digits(value)
    return True


def _is_uuid(value: str) -> bool:
    parts = value.split("-")
    return [len(part) for part in parts] == [8, 4, 4, 4, 12] and not "".join(parts).strip(_HEX_CHARS)


def _phone_digits(value: str) -> bool:
    digits = sum(char.isdigit() for char in value)
    return 9 <= digits <= 15


# --------------------------------------------------------------------------- provider rules

def _digit_and_letter(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _random_body(value: str) -> bool:
    """After the prefix: digits, or letters of both cases (a long lower-case word is no key)."""
    body = value.rsplit("_", 1)[-1]
    return any(c.isdigit() for c in body) or not (body.islower() or body.isupper())


# (kind, markers, expression, check). An expression runs only on a text that holds one of
# its markers (plain substrings; ``may_need_masking`` tests them too), and a match counts
# only when ``check`` (if any) passes. memcite's own wording of the shapes gitleaks' default
# rules describe (docs/secret-coverage.md lists them); lengths are lower bounds where a
# provider has changed its format, so that the whole key is masked.
_PROVIDER_RULES: tuple[tuple[str, tuple[str, ...], str, object], ...] = (
    # cloud
    ("aws-access-key", ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
     r"(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])", None),
    ("aws-bedrock-api-key", ("ABSK",), r"(?<![A-Za-z0-9])ABSK[A-Za-z0-9+/]{100,}={0,2}", None),
    ("gcp-api-key", ("AIza",), r"(?<![A-Za-z0-9])AIza[\w-]{35}", None),
    ("google-oauth-secret", ("GOCSPX-",), r"GOCSPX-[\w-]{24,}", None),
    ("google-oauth-token", ("ya29.",), r"(?<![A-Za-z0-9])ya29\.[\w.-]{20,}", None),
    ("azure-client-secret", ("Q~",), r"(?<![\w~.-])[\w~.]{3}\dQ~[\w~.-]{31,34}(?![\w~.-])", None),
    ("alibaba-access-key", ("LTAI",), r"(?<![A-Za-z0-9])LTAI[A-Za-z0-9]{20}(?![A-Za-z0-9])", None),
    ("digitalocean-token", ("dop_v1_", "doo_v1_", "dor_v1_"), r"do[opr]_v1_[a-f0-9]{64}", None),
    ("heroku-api-key", ("HRKU-",), r"HRKU-[\w-]{40,}", None),
    ("flyio-token", ("fo1_", "fm1a_", "fm1r_", "fm2_"),
     r"(?<![A-Za-z0-9])(?:fo1_[\w-]{43}|fm(?:1[ar]|2)_[A-Za-z0-9+/]{80,}={0,3})", None),
    ("supabase-token", ("sbp_", "sb_secret_"), r"sbp_(?:v0_)?[a-f0-9]{40}|sb_secret_[\w-]{20,}",
     None),
    # git hosts
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{40,})", None),
    ("gitlab-token", ("glpat-", "gldt-", "glrt-", "glft-", "glimt-", "glagent-", "gloas-",
                      "glsoat-", "glffct-", "glcbt-", "glptt-", "GR1348941"),
     r"gl(?:pat|dt|rt|ft|imt|agent|oas|soat|ffct|cbt|ptt)-[\w.-]{20,}|GR1348941[\w-]{20,}", None),
    ("bitbucket-app-password", ("ATBB",), r"(?<![A-Za-z0-9])ATBB[\w=.-]{28,}", None),
    ("atlassian-api-token", ("ATATT3", "ATCTT3"), r"AT[AC]TT3[\w=-]{60,}", None),
    # model providers
    ("openai-token", ("sk-proj-", "sk-svcacct-", "sk-admin-", "T3BlbkFJ"),
     r"sk-(?:proj|svcacct|admin)-[\w-]{40,}|sk-[\w-]*T3BlbkFJ[\w-]+", None),
    ("anthropic-api-key", ("sk-ant-",), r"sk-ant-[a-z]+\d*-[\w-]{32,}", None),
    ("openrouter-api-key", ("sk-or-",), r"sk-or-v\d+-[a-f0-9]{40,}", None),
    ("api-key", ("sk-",), r"(?<![\w-])sk-[A-Za-z0-9]{32,}(?![\w-])", _digit_and_letter),
    ("huggingface-token", ("hf_", "api_org_"),
     r"(?<![A-Za-z0-9_])(?:hf|api_org)_[A-Za-z0-9]{30,}(?![\w-])", _random_body),
    ("replicate-token", ("r8_",), r"(?<![A-Za-z0-9_])r8_[A-Za-z0-9]{32,}", None),
    ("groq-api-key", ("gsk_",), r"(?<![A-Za-z0-9_])gsk_[A-Za-z0-9]{40,}", None),
    ("perplexity-api-key", ("pplx-",), r"pplx-[A-Za-z0-9]{40,}", None),
    ("xai-api-key", ("xai-",), r"(?<![\w-])xai-[A-Za-z0-9]{60,}", None),
    ("langsmith-api-key", ("lsv2_",), r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", None),
    # package registries
    ("npm-token", ("npm_",), r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36,}", None),
    ("pypi-token", ("pypi-AgE",), r"pypi-AgE[\w-]{50,}", None),
    ("rubygems-api-key", ("rubygems_",), r"rubygems_[a-f0-9]{48}", None),
    ("docker-hub-token", ("dckr_pat_", "dckr_oat_"), r"dckr_(?:pat|oat)_[\w-]{20,}", None),
    ("nuget-api-key", ("oy2",), r"(?<![A-Za-z0-9])oy2[a-z0-9]{43}(?![A-Za-z0-9])",
     _digit_and_letter),
    ("artifactory-credentials", ("AKCp", "cmVmd"),
     r"(?<![A-Za-z0-9])(?:AKCp[A-Za-z0-9]{60,}|cmVmd[A-Za-z0-9]{59,})", None),
    ("clojars-token", ("CLOJARS_",), r"CLOJARS_[A-Za-z0-9]{60}", None),
    ("crates-io-token", ("cio",), r"(?<![A-Za-z0-9])cio[A-Za-z0-9]{32}(?![A-Za-z0-9])",
     _digit_and_letter),
    # chat
    ("slack-token", ("xoxa-", "xoxb-", "xoxe-", "xoxo-", "xoxp-", "xoxr-", "xoxs-", "xoxe.",
                     "xapp-", "hooks.slack.com/"),
     r"xox[abeoprs][.-][\w.-]{10,}|xapp-\d-[A-Za-z0-9-]{20,}"
     r"|hooks\.slack\.com/(?:services|workflows|triggers)/[\w+/-]{20,}", None),
    ("discord-webhook", ("discord.com/api/webhooks/", "discordapp.com/api/webhooks/"),
     r"discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}", None),
    ("telegram-bot-token", (":AA",), r"(?<![\d:])\d{8,10}:AA[\w-]{33}(?![\w-])", None),
    ("teams-webhook", (".webhook.office.com/",),
     r"[\w-]+\.webhook\.office\.com/webhook\w*/[^\s\"'<>`]+", None),
    # payments
    ("stripe-access-key", ("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"),
     r"(?<![A-Za-z0-9])[rs]k_(?:live|test|prod)_[A-Za-z0-9]{10,}", None),
    ("stripe-webhook-secret", ("whsec_",), r"whsec_[A-Za-z0-9+/=]{24,}", None),
    ("square-oauth-secret", ("sq0csp-",), r"sq0csp-[\w-]{22,}", None),
    ("square-access-token", ("sq0atp-",), r"sq0atp-[\w-]{22,}", None),
    ("braintree-access-token", ("access_token$",),
     r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}", None),
    ("shopify-token", ("shpat_", "shpca_", "shppa_", "shpss_"), r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
     None),
    # other services
    ("mailgun-api-key", ("key-",), r"(?<![\w-])key-[a-f0-9]{32}(?![\w-])", None),
    ("doppler-token", ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
     r"dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[\w-]+\.)?[A-Za-z0-9]{40,44}", None),
    ("vault-token", ("hvs.", "hvb.", "hvr."), r"(?<![A-Za-z0-9])hv[sbr]\.[\w-]{24,}", None),
    ("terraform-cloud-token", (".atlasv1.",), r"[A-Za-z0-9]{14}\.atlasv1\.[\w=-]{60,}", None),
    ("databricks-token", ("dapi",), r"(?<![A-Za-z0-9])dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])",
     None),
    ("linear-api-key", ("lin_api_", "lin_oauth_"), r"lin_(?:api|oauth)_[A-Za-z0-9]{40,}", None),
    ("notion-token", ("ntn_", "secret_"),
     r"(?<![A-Za-z0-9_])(?:ntn_\d{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})(?![\w-])",
     _digit_and_letter),
    ("grafana-token", ("glc_", "glsa_", "eyJrIjoi"),
     r"glc_[A-Za-z0-9+/]{32,}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"
     r"|eyJrIjoi[A-Za-z0-9]{70,}={0,3}", None),
    ("sentry-token", ("sntryu_", "sntrys_"), r"sntryu_[a-f0-9]{64}|sntrys_eyJ[\w+/=]{50,}", None),
    ("pulumi-token", ("pul-",), r"(?<![\w-])pul-[a-f0-9]{40}", None),
    ("postman-api-key", ("PMAK-",), r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", None),
    ("planetscale-token", ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"),
     r"pscale_(?:tkn|pw|oauth)_[\w=.-]{32,}", None),
    ("tailscale-key", ("tskey-",), r"tskey-[a-z]+-[A-Za-z0-9-]{16,}", None),
    ("1password-token", ("ops_eyJ", "A3-"),
     r"ops_eyJ[A-Za-z0-9+/]{100,}={0,3}|(?<![A-Za-z0-9])A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}"
     r"|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}(?![A-Za-z0-9])", None),
    ("age-secret-key", ("AGE-SECRET-KEY-1",), r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
     None),
    ("new-relic-key", ("NRAK-", "NRII-"), r"NR(?:AK|II)-[A-Za-z0-9-]{27,32}", None),
    ("dynatrace-token", ("dt0c01.",), r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", None),
    ("sourcegraph-token", ("sgp_",), r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}", None),
    # signed URLs (Azure SAS, S3 and GCS pre-signed): the signature is the key
    ("url-signature", ("sig=", "ignature=", "ecurity-Token=", "ecurity-token="),
     r"[?&](?:sig|[\w-]*[Ss]ignature|[\w-]*[Ss]ecurity-[Tt]oken)=([^&\s\"'<>#`]{16,})", None),
)

_SEPARATORS = "_-.~$=/"


def _marker_index() -> tuple[tuple[str, ...], str, dict[str, tuple[str, ...]], int]:
    """The provider markers arranged for one cheap test: the few without a separator (plain
    substring tests), and the others by their head's last two characters (``f_`` for
    ``hf_``), looked up at each separator of a text."""
    bare: set[str] = set()
    heads: dict[str, set[str]] = {}
    for _kind, markers, _source, _check in _PROVIDER_RULES:
        for marker in markers:
            if any(prefix in marker for prefix in _PREFIXES):
                continue  # may_hold_secret tests it (ghp_, sk-, eyJ, …)
            last = max(marker.rfind(sep) for sep in _SEPARATORS)
            head = marker[:last + 1]
            if len(head) >= 3:  # a marker holds its head: testing the head is conservative
                heads.setdefault(head[-2:], set()).add(head)
            else:
                bare.add(marker)
    separators = "".join(sorted({tail[-1] for tail in heads}))
    longest = max(len(head) for group in heads.values() for head in group)
    return (tuple(sorted(bare)), separators,
            {tail: tuple(sorted(group)) for tail, group in heads.items()}, longest)


_BARE_MARKERS, _HEAD_SEPARATORS, _HEADS, _LONGEST_HEAD = _marker_index()


def _has_provider_marker(text: str) -> bool:
    """True when a provider rule could match ``text``, or ``may_hold_secret`` is True for it."""
    for marker in _BARE_MARKERS:
        if marker in text:
            return True
    for sep in _HEAD_SEPARATORS:
        at = text.find(sep, 1)
        while at != -1:
            heads = _HEADS.get(text[at - 1:at + 1])
            if heads and text.endswith(heads, max(0, at + 1 - _LONGEST_HEAD), at + 1):
                return True
            at = text.find(sep, at + 1)
    return False


@lru_cache(maxsize=128)
def _provider_re(source: str) -> re.Pattern:
    return re.compile(source, re.ASCII)


def _provider_findings(text: str) -> list[tuple[str, int, int]]:
    found: list[tuple[str, int, int]] = []
    if not _has_provider_marker(text) and not any(prefix in text for prefix in _PREFIXES):
        return found
    for kind, markers, source, check in _PROVIDER_RULES:
        if not any(marker in text for marker in markers):
            continue
        pattern = _provider_re(source)
        group = 1 if pattern.groups else 0
        for match in pattern.finditer(text):
            if check is not None and not check(match.group()):
                continue
            found.append((kind, *match.span(group)))
    return found


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
                             for start, end in _spans(line, value)
                             if not _file_name_re().match(line, end))
        position += len(line) + 1
    return found


_FILE_EXTENSIONS = (
    "log", "txt", "md", "json", "jsonl", "yaml", "yml", "toml", "ini", "cfg", "conf", "csv", "tsv",
    "xml", "html", "css", "sql", "db", "sqlite", "lua", "py", "js", "mjs", "ts", "tsx", "jsx", "vue",
    "go", "rs", "java", "kt", "swift", "dart", "c", "h", "cpp", "cs", "rb", "php", "sh", "ps1", "bat",
    "uasset", "umap", "xlsx", "xlsm", "xls", "docx", "pdf", "png", "jpg", "jpeg", "gif", "svg",
    "zip", "gz", "tar", "bak", "dmp", "out", "err", "tmp", "patch", "diff",
)


@lru_cache(maxsize=1)
def _file_name_re() -> re.Pattern:
    """A file name's extension right after a token: the token names a file (a log's
    ``2026.01.02-03.04.05_client__<id>_1.log``, a workbook's), it is no key."""
    return re.compile(r"\.(?:" + "|".join(_FILE_EXTENSIONS) + r")(?![\w-])", re.IGNORECASE)


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


def scan(text: str, *, blocks: bool = True) -> list[Finding]:
    """Everything in ``text`` that must not be stored, in order; overlapping findings merged.

    With ``blocks=False``, raw log and code excerpts are not findings (``memcite audit``
    looks for secrets: a fenced code block in a rollout summary is none); the secrets
    inside them still are.

    Text that is not ASCII is scanned folded (see the module's docstring); the spans are
    those of ``text`` itself. A text with invisible characters is scanned twice: with them
    dropped (``ghp_abc<ZWSP>def`` is one key) and with each a space (``login<ZWSP>hf_…``
    is a word, then a key), and what either finds is masked.
    """
    folded, table = _fold(text)
    merged = _folded_spans(folded, blocks)
    if table:
        merged = _unfold_spans(text, table, merged)
        if None in table.values():
            spaced = {code: " " if value is None else value for code, value in table.items()}
            merged = _merge(merged + _unfold_spans(text, spaced, _folded_spans(
                text.translate(spaced), blocks)))
    return [Finding(kind, text.count("\n", 0, start) + 1, start, end, mask(text[start:end]))
            for kind, start, end in merged]


def _folded_spans(folded: str, blocks: bool = True) -> list[tuple[str, int, int]]:
    spans = _own_findings(folded, blocks)
    if may_hold_secret(folded):
        spans.extend(_detect_secrets_findings(folded))
    return _merge(spans)


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
    patterns compiled), so it can run on every field of every reply. Only text that is not
    ASCII is folded first (a search for its non-ASCII characters, then ``str.translate`` if
    one of them folds).
    """
    if "@" in text or "\n" in text or "-----BEGIN" in text or "Bearer" in text:
        return True  # e-mail, password in a URL, log or code block, key block, bearer token
    if not text.isascii():  # folding keeps what is ASCII: the tests above hold for it too
        text, table = _fold(text)
        if None in table.values():
            return True  # invisible characters: scanned dropped and as spaces (see scan)
        if "@" in text or "-----BEGIN" in text or "Bearer" in text:
            return True
    lowered = text.lower()
    if ("=" in text or ":" in text) and any(word in lowered for word in _OWN_KEYWORDS):
        return True
    if "=" in text and "%" in text:
        return True  # a percent-encoded key (``?p%61ssword=…``, libpq decodes it)
    if _may_hold_shape(text, lowered):
        return True
    return _has_provider_marker(text) or bool(_phone_like_re().search(text)) \
        or may_hold_secret(text)


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


__all__ = ["Finding", "conninfo_password_spans", "is_masked", "mask", "mask_secrets",
           "may_hold_secret", "may_need_masking", "redact", "scan"]
