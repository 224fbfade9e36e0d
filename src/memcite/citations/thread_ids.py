"""Which cited ids Codex counts, and in what form (docs/citation-format.md §5)."""

from __future__ import annotations

# The four spellings Codex accepts, in ASCII hex digits: 32 digits, 8-4-4-4-12, the same in
# braces, or after "urn:uuid:" (lowercase); anything else (Python's uuid.UUID accepts more)
# is not an id. Checked with string operations: a regular expression would cost its compile
# (about 1 ms) on every ``strip`` and ``record``.
_HEX_DIGITS = "0123456789abcdefABCDEF"
_URN = "urn:uuid:"


def _is_hex(text: str) -> bool:
    return not text.strip(_HEX_DIGITS)  # every character a hex digit (or none at all)


def _hyphenated_digits(text: str) -> str | None:
    """The 32 digits of ``xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx``, or None for any other text."""
    if len(text) != 36 or text[8] != "-" or text[13] != "-" or text[18] != "-" or text[23] != "-":
        return None
    digits = text[:8] + text[9:13] + text[14:18] + text[19:23] + text[24:]
    return digits if _is_hex(digits) else None


def normalize_thread_id(rollout_id: str) -> str | None:
    """The lowercase hyphenated UUID Codex would count for ``rollout_id``, or None if it is not one."""
    size = len(rollout_id)
    if size == 32:
        digits = rollout_id if _is_hex(rollout_id) else None
    elif size == 36:
        digits = _hyphenated_digits(rollout_id)
    elif size == 38 and rollout_id[0] == "{" and rollout_id[-1] == "}":
        digits = _hyphenated_digits(rollout_id[1:-1])
    elif size == 36 + len(_URN) and rollout_id.startswith(_URN):
        digits = _hyphenated_digits(rollout_id[len(_URN):])
    else:
        return None
    if digits is None:
        return None
    digits = digits.lower()
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def counted_thread_ids(rollout_ids) -> list[str]:
    """The ids Codex increments for one reply: UUIDs only, normalised, duplicates kept."""
    counted = []
    for rollout_id in rollout_ids:
        normalized = normalize_thread_id(rollout_id)
        if normalized is not None:
            counted.append(normalized)
    return counted
