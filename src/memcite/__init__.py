"""memcite: read, record and audit the memory citations of coding agents."""

from memcite.errors import CitationError, InputError, MemciteError
from memcite.models import Block, Citation, CitationEntry, Diagnostic, Reading
from memcite.reading import parse_reply
from memcite.render import render_citation
from memcite.thread_ids import normalize_thread_id

__version__ = "0.1.0"

__all__ = [
    "Block",
    "Citation",
    "CitationEntry",
    "CitationError",
    "Diagnostic",
    "InputError",
    "MemciteError",
    "Reading",
    "normalize_thread_id",
    "parse_reply",
    "render_citation",
]
