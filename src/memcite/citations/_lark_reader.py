"""The only module that touches lark: builds the section parser and turns lark errors into ours.

It runs when memcite's exported tables are missing or stale (the first run, a changed
grammar, another lark): it builds the parser and exports the tables that later runs
replay without lark (``memcite.citations._section_tables``). When it does run, its
start-up is kept short:
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
import stat
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
from lark import Lark  # noqa: E402
from lark.exceptions import LarkError, UnexpectedInput  # noqa: E402

from memcite.citations._section_tables import FORMAT, SectionLines, lark_stamp  # noqa: E402
from memcite.errors import MemciteError  # noqa: E402

CACHE_FILE = "citation-grammar.lark-cache"
_MAX_LARK_CACHE_BYTES = 4 * 1024 * 1024  # ours is ~6 KB

START_RULES = ["entry_section", "id_section", "tags"]


class SectionParser:
    """``parse(text, start)`` for one section, with lark's exceptions turned into MemciteError."""

    def __init__(self, grammar: str, *, cache: str | bool = False) -> None:
        self.lark = Lark(
            grammar,
            parser="lalr",
            lexer="contextual",
            start=START_RULES,
            transformer=SectionLines(),
            cache=cache,
        )

    def parse(self, text: str, start: str):
        try:
            return self.lark.parse(text, start=start)
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
        return self.lark.get_terminal(name).pattern.value


def _cache_path(folder: str) -> str | bool:
    from memcite.durable_files import open_own_folder
    from memcite.errors import MemciteError

    try:  # lark unpickles the file: only from a folder of this user's, never through a link
        os.close(open_own_folder(folder))
    except (OSError, MemciteError):
        return False  # no cache folder: build the tables in memory each time
    path = os.path.join(folder, CACHE_FILE)
    try:
        info = os.lstat(path)
    except OSError:
        return path  # none yet: lark writes it
    # lark opens the file itself, blocking: a FIFO, a device, a link or a huge file planted
    # there must not hang or feed it. Then the tables are built in memory this time.
    if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_LARK_CACHE_BYTES \
            or info.st_uid != os.geteuid():
        return False
    return path


def build_parser(grammar: str, *, cache_dir: str | None = None,
                 use_cache: bool = True) -> SectionParser:
    """Build the LALR parser (contextual lexer) for the citation grammar, cached on disk in
    ``cache_dir`` (None: memcite's default cache folder, ``memcite.paths.user_cache_dir``)."""
    if use_cache and cache_dir is None:
        from memcite.paths import user_cache_dir

        cache_dir = user_cache_dir()
    cache = _cache_path(cache_dir) if use_cache else False
    parser = SectionParser(grammar, cache=cache)
    if cache:
        try:  # lark writes the file with the umask's mode: memcite's caches are 0600
            if os.stat(cache).st_mode & 0o077:
                os.chmod(cache, 0o600)
        except OSError:
            pass
    return parser


# --------------------------------------------------------------------------- tables for the replay


def export_tables(built: Lark, grammar: str, starts=tuple(START_RULES)) -> dict | None:
    """What lark built from ``grammar``, as plain data that ``_section_tables.TableParser`` replays.

    None when the parser uses a lark feature the replay does not follow (then memcite keeps
    using lark itself): only an LALR parser with the contextual lexer, no post-lexer, no
    position propagation, no placeholders and no terminal callbacks are replayed.
    """
    import re

    from lark.lexer import ContextualLexer, UnlessCallback
    from lark.parsers.lalr_analysis import Shift

    options = built.options
    frontend = built.parser
    lexer = getattr(frontend, "lexer", None)
    if (options.parser, options.lexer) != ("lalr", "contextual") or not isinstance(lexer, ContextualLexer) \
            or options.postlex is not None or options.propagate_positions or options.lexer_callbacks \
            or options.regex or options.use_bytes:
        return None
    table = frontend.parser._parse_table
    rule_index: dict = {}
    rules: list[tuple] = []
    states: dict[int, dict[str, tuple[int, int]]] = {}
    for state, actions in table.states.items():
        row = {}
        for symbol, (action, argument) in actions.items():
            if action is Shift:
                row[str(symbol)] = (0, argument)
                continue
            if argument not in rule_index:
                rule = _rule_row(argument, options.maybe_placeholders)
                if rule is None:
                    return None
                rule_index[argument] = len(rules)
                rules.append(rule)
            row[str(symbol)] = (1, rule_index[argument])
        states[state] = row
    lexers: list[tuple] = []
    lexer_index: dict[int, int] = {}
    lexer_of_state: dict[int, int] = {}
    for state in states:
        basic = lexer.lexers[state]
        if id(basic) not in lexer_index:
            scanner = basic.scanner  # builds the alternation and the retyping callbacks
            if basic.re is not re or basic.use_bytes:
                return None
            unless = {}
            for name, callback in basic.callback.items():
                if type(callback) is not UnlessCallback:
                    return None
                retype = callback.scanner
                unless[str(name)] = ([m.pattern for m in retype._mres], retype.g_regex_flags)
            row = ([m.pattern for m in scanner._mres], basic.g_regex_flags,
                   sorted(map(str, basic.newline_types)), sorted(map(str, basic.ignore_types)), unless)
            # lark keys its lexers by the state's accepted symbols, rules included, so states that
            # accept the same terminals get equal lexers: one row each here, compiled once per run
            same = [index for index, known in enumerate(lexers) if known == row]
            if not same:
                lexers.append(row)
            lexer_index[id(basic)] = same[0] if same else len(lexers) - 1
        lexer_of_state[state] = lexer_index[id(basic)]
    import lark

    return {
        "format": FORMAT,
        "grammar": grammar,
        "lark_file": lark.__file__,
        "lark": lark_stamp(lark.__file__),
        "options": {"parser": str(options.parser), "lexer": str(options.lexer)},
        "starts": {start: (table.start_states[start], table.end_states[start]) for start in starts},
        "states": states,
        "rules": rules,
        "lexers": lexers,
        "lexer_of_state": lexer_of_state,
        "terminals": [str(terminal.name) for terminal in built.terminals],
        "literals": {str(terminal.name): str(terminal.pattern.value) for terminal in built.terminals
                     if terminal.pattern.type == "str"},
    }


def _rule_row(rule, maybe_placeholders: bool) -> tuple | None:
    """``(origin, size, callback name, expand single child, kept children)`` as lark's tree builder
    shapes the rule (``lark.parse_tree_builder``); None for placeholders, which are not replayed."""
    if maybe_placeholders and rule.options.empty_indices:
        return None
    keep_all = rule.options.keep_all_tokens
    include = [(index, not symbol.is_term and symbol.name.startswith("_"))
               for index, symbol in enumerate(rule.expansion)
               if keep_all or not (symbol.is_term and symbol.filter_out)]
    filtered = len(include) < len(rule.expansion) or any(inline for _index, inline in include)
    return (
        str(rule.origin.name),  # lark's names are its Token class: plain str for marshal
        len(rule.expansion),
        str(rule.alias or rule.options.template_source or rule.origin.name),
        bool(rule.options.expand1 and not rule.alias),
        tuple(include) if filtered else None,
    )
