"""The only module that touches lark: builds the section parser and turns lark errors into ours."""

from __future__ import annotations

from lark import Lark, Transformer
from lark.exceptions import LarkError, UnexpectedInput

from memcite.errors import MemciteError

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

    def __init__(self, grammar: str) -> None:
        self._lark = Lark(
            grammar,
            parser="lalr",
            lexer="contextual",
            start=START_RULES,
            transformer=SectionLines(),
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


def build_parser(grammar: str) -> SectionParser:
    """Build the LALR parser (contextual lexer) for the citation grammar."""
    return SectionParser(grammar)
