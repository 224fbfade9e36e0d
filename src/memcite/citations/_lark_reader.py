"""The only module that touches lark: builds the section parser and turns lark errors into ours.

Start-up cost matters here (``memcite strip`` runs once per agent reply), so:
lark is imported without the optional ``regex`` module (the grammar needs only
``re``; importing ``regex`` costs ~8 ms), and the built LALR tables are kept in
lark's own cache file under memcite's cache folder (see ``memcite.paths``),
which lark checks against the grammar's hash and rebuilds when it changed.
The modules lark imports for what memcite never asks of it (the dynamic Earley
lexer, the CYK parser, a cache in the temporary folder, grammars from packages) are
deferred while lark is imported: each is imported for real the first time lark
uses it, which an LALR parser with a named cache file never does.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module
from types import ModuleType

# Imported by lark with ``import X`` or ``from package import X``, used only by what memcite
# does not use: a placeholder stands in while lark is imported (about 5 ms less per start).
_DEFERRED = ("tempfile", "getpass", "pkgutil", "lark.parsers.xearley", "lark.parsers.cyk")


class _Deferred(ModuleType):
    """A module imported for real on first use (an attribute read)."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(import_module(self.__name__), name)


def _import_lark():
    placed = [name for name in _DEFERRED if name not in sys.modules]
    for name in placed:
        sys.modules[name] = _Deferred(name)
    blocked = "regex" not in sys.modules
    if blocked:
        sys.modules["regex"] = None  # type: ignore[assignment]  # lark falls back to re
    try:
        import lark
    finally:
        if blocked:
            del sys.modules["regex"]  # other modules (tiktoken) may still import it
        for name in placed:
            if isinstance(sys.modules.get(name), _Deferred):
                del sys.modules[name]
    return lark


_import_lark()
from lark import Lark, Transformer  # noqa: E402
from lark.exceptions import LarkError, UnexpectedInput  # noqa: E402

from memcite.errors import MemciteError  # noqa: E402
from memcite.paths import user_cache_dir  # noqa: E402

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
