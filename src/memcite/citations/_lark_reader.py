"""The only module that touches lark: builds the section parser and turns lark errors into ours.

Start-up cost matters here (``memcite strip`` runs once per agent reply), so:
lark is imported without the optional ``regex`` module (the grammar needs only
``re``; importing ``regex`` costs ~8 ms), and the built LALR tables are kept in
lark's own cache file under memcite's cache folder (see ``memcite.paths``),
which lark checks against the grammar's hash and rebuilds when it changed.
"""

from __future__ import annotations

import os
import sys

if "regex" not in sys.modules:
    sys.modules["regex"] = None  # type: ignore[assignment]  # lark falls back to re
    try:
        from lark import Lark, Transformer
    finally:
        del sys.modules["regex"]  # other modules (tiktoken) may still import it
else:
    from lark import Lark, Transformer
from lark.exceptions import LarkError, UnexpectedInput

from memcite.errors import MemciteError
from memcite.paths import user_cache_dir

CACHE_FILE = "citation-grammar.lark-cache"

START_RULES = ["entry_section", "id_section", "tags"]


class SectionLines(Transformer):
    """Turns a section's tokens into ``(terminal, text, line, column)`` rows, in order."""

    def entry_section(self, tokens):
        return [(token.type, token.value, token.line, token.column) for token in tokens]

    def id_section(self, tokens):
        return [(token.type, token.value, token.line, token.column) for token in tokens]

    def tags(self, tokens):
        return {token.type: token.value for token in tokens}


class SectionParser:
    """``parse(text, start)`` for one section, with lark's exceptions turned into MemciteError."""

    def __init__(self, grammar: str, *, cache: str | bool = False) -> None:
        self._lark = Lark(
            grammar,
            parser="lalr",
            lexer="contextual",
            start=START_RULES,
            transformer=SectionLines(),
            cache=cache,
        )

    def parse(self, text: str, start: str):
        try:
            return self._lark.parse(text, start=start)
        except UnexpectedInput as error:
            raise MemciteError(
                f"the citation grammar could not read a {start} at line {error.line}, "
                f"column {error.column}: {error}",
                hint="this is a bug in memcite's grammar; please report it with the reply",
            ) from None
        except LarkError as error:
            raise MemciteError(f"the citation grammar failed on a {start}: {error}") from None

    def terminal_literal(self, name: str) -> str:
        """The literal text of a string terminal (used to check the tag table)."""
        return self._lark.get_terminal(name).pattern.value


def _cache_path() -> str | bool:
    folder = user_cache_dir()
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError:
        return False  # no cache folder: build the tables in memory each time
    return os.path.join(folder, CACHE_FILE)


def build_parser(grammar: str, *, use_cache: bool = True) -> SectionParser:
    """Build the LALR parser (contextual lexer) for the citation grammar, cached on disk."""
    cache = _cache_path() if use_cache else False
    parser = SectionParser(grammar, cache=cache)
    if cache:
        try:  # lark writes the file with the umask's mode: memcite's caches are 0600
            if os.stat(cache).st_mode & 0o077:
                os.chmod(cache, 0o600)
        except OSError:
            pass
    return parser
