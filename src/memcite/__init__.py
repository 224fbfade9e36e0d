"""memcite: read, record and audit the memory citations of coding agents.

The public names are loaded on first use, so that ``import memcite.<module>``
(every CLI command does) costs only what that module needs.
"""

from __future__ import annotations

from importlib import import_module

__version__ = "0.1.0"

_EXPORTS = {
    "Block": "memcite.models",
    "Citation": "memcite.models",
    "CitationEntry": "memcite.models",
    "CitationError": "memcite.errors",
    "Diagnostic": "memcite.models",
    "InputError": "memcite.errors",
    "MemciteError": "memcite.errors",
    "Reading": "memcite.models",
    "normalize_thread_id": "memcite.thread_ids",
    "parse_reply": "memcite.reading",
    "render_citation": "memcite.render",
}

__all__ = sorted(_EXPORTS)

TYPE_CHECKING = False  # without importing typing (start-up time)
if TYPE_CHECKING:
    from memcite.errors import CitationError, InputError, MemciteError
    from memcite.models import Block, Citation, CitationEntry, Diagnostic, Reading
    from memcite.reading import parse_reply
    from memcite.render import render_citation
    from memcite.thread_ids import normalize_thread_id


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'memcite' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
