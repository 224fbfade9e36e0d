"""Which cited ids Codex counts, and in what form (docs/citation-format.md §5)."""

from __future__ import annotations

_HEX = "[0-9a-fA-F]"
_HYPHENATED = rf"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
# The four spellings Codex accepts; anything else (Python's uuid.UUID accepts more) is not an id.
_UUID_SPELLING = (
    rf"(?:(?P<simple>{_HEX}{{32}})|(?P<hyphenated>{_HYPHENATED})"
    rf"|\{{(?P<braced>{_HYPHENATED})\}}|urn:uuid:(?P<urn>{_HYPHENATED}))"
)
_fullmatch = None  # compiled on first use: a reply with no id never pays for it


def normalize_thread_id(rollout_id: str) -> str | None:
    """The lowercase hyphenated UUID Codex would count for ``rollout_id``, or None if it is not one."""
    global _fullmatch
    if _fullmatch is None:
        import re

        _fullmatch = re.compile(_UUID_SPELLING).fullmatch
    match = _fullmatch(rollout_id)
    if match is None:
        return None
    digits = next(group for group in match.groups() if group is not None).replace("-", "").lower()
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def counted_thread_ids(rollout_ids) -> list[str]:
    """The ids Codex increments for one reply: UUIDs only, normalised, duplicates kept."""
    counted = []
    for rollout_id in rollout_ids:
        normalized = normalize_thread_id(rollout_id)
        if normalized is not None:
            counted.append(normalized)
    return counted
