"""Runs the LALR tables and contextual lexer that lark built from the grammar, without importing lark.

Importing lark costs about half of a per-reply command's start-up (lark pulls in
``typing``, ``logging``, ``dataclasses`` and ``inspect``), while reading the lines of a
section needs only its tables. So the first run builds the parser with lark
(``memcite.citations._lark_reader``), which also exports what lark computed: the
parse table, each lexer's alternation of terminal patterns in lark's order, which
terminals count lines, and how each rule shapes its children. The export is kept
in memcite's cache folder, stamped with the grammar's whole text and the installed
lark, and every later run replays it here. A changed grammar, another lark, or a
file that does not read back exactly makes the next run rebuild it with lark.
The replay follows lark's own algorithms step by step (see ``lark.lexer`` and
``lark.parsers.lalr_parser_state``); tests compare both on random text.
"""

from __future__ import annotations

import marshal
import os

from memcite.errors import MemciteError
from memcite.untrusted import open_regular

# Bumped whenever the layout of the exported tables changes.
FORMAT = 1
TABLES_FILE = "citation-grammar.tables"
MAX_TABLES_BYTES = 4 * 1024 * 1024  # ours is ~7 KB: anything larger was not written by us

_SHIFT = 0


class SectionLines:
    """Turns a section's tokens into ``(terminal, text, line, column)`` rows, in order.

    The parser's transformer: each method is called when its rule is reduced (lark calls it the
    same way), so a section costs one list and no tree.
    """

    def entry_section(self, tokens):
        return [(token.type, token.value, token.line, token.column) for token in tokens]

    def id_section(self, tokens):
        return [(token.type, token.value, token.line, token.column) for token in tokens]

    def tags(self, tokens):
        return {token.type: token.value for token in tokens}


class Token:
    """A matched terminal with its place (1-based line and column), as lark's ``Token`` holds it."""

    __slots__ = ("type", "value", "start_pos", "line", "column", "end_line", "end_column", "end_pos")

    def __init__(self, type_: str, value: str, start_pos: int, line: int, column: int) -> None:
        self.type = type_
        self.value = value
        self.start_pos = start_pos
        self.line = line
        self.column = column

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r})"


class Node:
    """A rule's children when the transformer has no method for it (lark makes a ``Tree``)."""

    __slots__ = ("data", "children")

    def __init__(self, data: str, children: list) -> None:
        self.data = data
        self.children = children

    def __repr__(self) -> str:
        return f"Node({self.data!r}, {self.children!r})"


class _Unexpected(Exception):
    """The tables found no terminal or no action: what lark reports as ``UnexpectedInput``."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


# --------------------------------------------------------------------------- the cache file


def load_tables(path: str, grammar: str) -> dict | None:
    """The tables exported for exactly ``grammar`` by the installed lark, or None (rebuild)."""
    try:
        tables = marshal.loads(_read_small_regular_file(path))
    except (OSError, ValueError, EOFError, TypeError):
        return None
    if not isinstance(tables, dict) or tables.get("format") != FORMAT:
        return None
    if tables.get("grammar") != grammar or tables.get("lark") != lark_stamp(tables.get("lark_file")):
        return None
    return tables


def _read_small_regular_file(path: str) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``MAX_TABLES_BYTES``; a FIFO,
    a device or a folder planted there raises ``OSError`` at once (never blocks)."""
    fd = open_regular(path)
    try:
        if os.fstat(fd).st_size > MAX_TABLES_BYTES:
            raise OSError(f"{path}: larger than {MAX_TABLES_BYTES} bytes")
        return os.read(fd, MAX_TABLES_BYTES + 1)
    finally:
        os.close(fd)


def save_tables(path: str, tables: dict) -> None:
    """Write the tables beside their final name, then rename (a reader never sees half a file)."""
    from memcite.durable_files import write_file

    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        write_file(path, marshal.dumps(tables), keep_mode=False)
    except (OSError, ValueError, MemciteError):  # no cache folder, a link planted there, or
        pass  # tables marshal cannot write: lark next time


def lark_stamp(lark_file) -> list | None:
    """Which lark built the tables: its ``__init__.py``, size and modification time (one ``stat``)."""
    if not isinstance(lark_file, str):
        return None
    try:
        info = os.stat(lark_file)
    except OSError:
        return None
    return [lark_file, info.st_size, info.st_mtime_ns]


# --------------------------------------------------------------------------- the replay


class TableParser:
    """``parse(text, start)`` with the exported tables: lark's contextual lexer and LALR parser."""

    def __init__(self, tables: dict, transformer) -> None:
        self.options = tables["options"]
        self._literals = tables["literals"]
        self._starts = tables["starts"]
        self._states = tables["states"]
        self._lexer_of_state = tables["lexer_of_state"]
        self._lexers = tables["lexers"]
        self._compiled: dict[int, tuple] = {}
        for name in tables["terminals"]:
            if hasattr(transformer, name):  # lark would call it on every such token: not replayed
                raise ValueError(f"the transformer has a method for the terminal {name}")
        self._reduce = [_rule_callback(rule, transformer) for rule in tables["rules"]]

    def terminal_literal(self, name: str) -> str:
        """The literal text of a string terminal (used to check the tag table)."""
        return self._literals[name]

    def _lexer(self, state: int) -> tuple:
        index = self._lexer_of_state[state]
        compiled = self._compiled.get(index)
        if compiled is None:
            import re  # the console script has imported it already

            patterns, flags, newline_types, ignore_types, unless = self._lexers[index]
            compiled = (
                [re.compile(pattern, flags) for pattern in patterns],
                frozenset(newline_types),
                frozenset(ignore_types),
                {name: [re.compile(pattern, retype_flags) for pattern in retype_patterns]
                 for name, (retype_patterns, retype_flags) in unless.items()},
            )
            self._compiled[index] = compiled
        return compiled

    def parse(self, text: str, start: str):
        """Read ``text`` from the start rule ``start``; returns what its transformer method returns."""
        try:
            return self._parse(text, start)
        except _Unexpected as error:  # worded as memcite.citations._lark_reader words lark's
            raise MemciteError(
                f"the citation grammar could not read a {start} at line {error.line}, "
                f"column {error.column}: {error}",
                hint="this is a bug in memcite's grammar; please report it with the reply",
            ) from None

    def _parse(self, text: str, start: str):
        start_state, end_state = self._starts[start]
        states, reduce = self._states, self._reduce
        state_stack = [start_state]
        value_stack: list = []
        position, line, line_start, end = 0, 1, 0, len(text)
        last = None
        while position < end:
            scanners, newline_types, ignore_types, unless = self._lexer(state_stack[-1])
            for scanner in scanners:
                match = scanner.match(text, position, end)
                if match:
                    break
            else:
                raise _Unexpected(
                    f"no terminal of the grammar matches {text[position:position + 20]!r} here",
                    line, position - line_start + 1)
            value, kind = match.group(0), match.lastgroup
            token = Token(kind, value, position, line, position - line_start + 1)
            if kind in newline_types:
                newlines = value.count("\n")
                if newlines:
                    line += newlines
                    line_start = position + value.rindex("\n") + 1
            position += len(value)
            token.end_line, token.end_column, token.end_pos = line, position - line_start + 1, position
            if kind in unless:
                for retype in unless[kind]:
                    whole = retype.fullmatch(value)
                    if whole:
                        token.type = whole.lastgroup
                        break
            if kind in ignore_types:
                continue
            last = token
            _feed(states, reduce, state_stack, value_stack, token, end_state, False)
        if last is None:
            end_token = Token("$END", "", 0, 1, 1)
        else:
            end_token = Token("$END", "", last.start_pos, last.line, last.column)
        return _feed(states, reduce, state_stack, value_stack, end_token, end_state, True)


def _feed(states, reduce, state_stack, value_stack, token, end_state, is_end):
    """One token into the LALR automaton: reduce as long as the table says, then shift."""
    while True:
        try:
            action, argument = states[state_stack[-1]][token.type]
        except KeyError:
            expected = sorted(name for name in states[state_stack[-1]] if name.isupper())
            raise _Unexpected(
                f"unexpected {token.type} {token.value!r}; expected one of {', '.join(expected)}",
                token.line, token.column) from None
        if action == _SHIFT:
            state_stack.append(argument)
            value_stack.append(token)
            return None
        origin, size, callback = reduce[argument]
        if size:
            children = value_stack[-size:]
            del state_stack[-size:]
            del value_stack[-size:]
        else:
            children = []
        value = callback(children)
        _action, new_state = states[state_stack[-1]][origin]
        state_stack.append(new_state)
        value_stack.append(value)
        if is_end and new_state == end_state:
            return value


def _rule_callback(rule, transformer):
    """What lark's parse-tree builder does when ``rule`` is reduced, for this transformer.

    ``rule`` is ``(origin, size, name, expand_single, include)``: ``name`` is the callback's
    name (alias or rule), ``include`` None to pass the children as they are, else the
    ``(index, inline)`` pairs of the children kept (an inlined ``_rule`` gives its children).
    """
    origin, size, name, expand_single, include = rule
    method = getattr(transformer, name, None)
    if method is None:
        def method(children, name=name):
            return Node(name, children)
    if expand_single:
        inner = method

        def method(children, inner=inner):
            return children[0] if len(children) == 1 else inner(children)
    if include is not None:
        build = method

        def method(children, include=include, build=build):
            kept: list = []
            for index, inline in include:
                if inline:
                    if kept:
                        kept += children[index].children
                    else:  # lark's shortcut for left recursion: the child's own list
                        kept = children[index].children
                else:
                    kept.append(children[index])
            return build(kept)
    return origin, size, method
