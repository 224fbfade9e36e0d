"""Names of Codex's ad-hoc notes (``memories/extensions/ad_hoc/notes/<name>``), as pure functions.

Codex's rule for a note's file name: at most 128 bytes, ending ``.md``, a 20-byte
prefix ``YYYY-MM-DDTHH-MM-SS-`` (UTC), then a slug of 1 to 80 bytes of
``[a-z0-9-]``. ``adhoc_note_name`` makes such a name from a time and any text;
``is_adhoc_note_name`` checks one. See docs/memory-layout.md.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime

NOTES_FOLDER = os.path.join("extensions", "ad_hoc", "notes")  # inside the memory folder
MAX_NAME_BYTES = 128
PREFIX_BYTES = 20
MAX_SLUG_BYTES = 80
SUFFIX = ".md"
DEFAULT_SLUG = "note"

_NAME = re.compile(r"\A\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-[a-z0-9-]{1,80}\.md\Z")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def note_slug(text: str, *, max_bytes: int = MAX_SLUG_BYTES) -> str:
    """``text`` as a slug Codex accepts: lower-case ASCII letters and digits, every other
    run of characters one ``-``, no ``-`` at either end, at most ``max_bytes``; ``note``
    when nothing is left."""
    slug = _NOT_SLUG.sub("-", text.lower()).strip("-")
    slug = slug[: max(1, min(max_bytes, MAX_SLUG_BYTES))].rstrip("-")
    return slug or DEFAULT_SLUG


def adhoc_note_name(at: int | datetime, text: str) -> str:
    """The note file name for time ``at`` (Unix seconds or an aware datetime) and ``text``."""
    moment = datetime.fromtimestamp(at, tz=UTC) if isinstance(at, int) else at.astimezone(UTC)
    return f"{moment:%Y-%m-%dT%H-%M-%S}-{note_slug(text)}{SUFFIX}"


def is_adhoc_note_name(name: str) -> bool:
    """Whether ``name`` follows Codex's rule for ad-hoc note file names."""
    return len(name.encode("utf-8", "surrogatepass")) <= MAX_NAME_BYTES \
        and _NAME.match(name) is not None


def numbered(name: str, number: int) -> str:
    """``name`` with ``-<number>`` before ``.md`` (for a name already taken), still valid."""
    stem = name[: -len(SUFFIX)]
    prefix, slug = stem[:PREFIX_BYTES], stem[PREFIX_BYTES:]
    tail = f"-{number}"
    return f"{prefix}{slug[: MAX_SLUG_BYTES - len(tail)].rstrip('-') or DEFAULT_SLUG}{tail}{SUFFIX}"
