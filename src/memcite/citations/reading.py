"""Reading agent replies exactly as Codex does, and saying what Codex drops silently.

Stage A (finding blocks) and the section search of Stage B are plain substring
searches, as in Codex, with the tag literals taken from ``grammar/citation.lark``.
The text inside a section is read by the LALR parser built from that grammar.
A reply with no block never imports lark. See docs/citation-format.md.
"""

from __future__ import annotations

import os

from memcite.citations.models import Block, Citation, CitationEntry, Diagnostic, Reading
from memcite.citations.thread_ids import counted_thread_ids, normalize_thread_id
from memcite.errors import CitationError, MemciteError
from memcite.rust_text import RUST_WHITESPACE, rust_trim, rust_trim_end

PROFILES = ("codex", "strict")

_U32_MAX = 4_294_967_295
_NOTE_OPEN = "|note=["
_ENTRY_SHAPE = "<file>:<line_start>-<line_end>|note=[<why>]"


# --------------------------------------------------------------------------- grammar


def grammar_path() -> str:
    """Where ``citation.lark`` is: inside the installed package, else the checkout's ``grammar/``."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the memcite package
    for candidate in (
        os.path.join(here, "grammar", "citation.lark"),
        os.path.join(here, os.pardir, os.pardir, "grammar", "citation.lark"),
    ):
        if os.path.isfile(candidate):
            return os.path.normpath(candidate)
    raise MemciteError(
        f"the citation grammar is missing: looked for grammar/citation.lark in {here}",
        hint="reinstall memcite (pip install --force-reinstall codex-memcite)",
    )


class _Tags:
    """The literal tags, read from the grammar file's string terminals."""

    __slots__ = (
        "block_open",
        "block_close",
        "entries_open",
        "entries_close",
        "ids_open",
        "ids_close",
        "legacy_ids_open",
        "legacy_ids_close",
        "legacy_wrapper_open",
    )

    def __init__(self, literals: dict[str, str]) -> None:
        for name in self.__slots__:
            setattr(self, name, literals[name.upper()])


_TAGS: _Tags | None = None
_PARSER = None


def _grammar_text() -> str:
    with open(grammar_path(), encoding="utf-8") as handle:
        return handle.read()


def _string_terminals(grammar: str) -> dict[str, str]:
    """``NAME: "literal"`` lines of the grammar (no regex: this runs at every start-up)."""
    literals = {}
    for line in grammar.splitlines():
        name, colon, rest = line.partition(":")
        rest = rest.strip()
        if colon and name.isupper() and name.isidentifier() and rest.startswith('"'):
            end = rest.find('"', 1)
            if end > 0 and "\\" not in rest[:end]:
                literals[name] = rest[1:end]
    return literals


def tags() -> _Tags:
    """The tag literals of the grammar, without building the parser (cheap, cached)."""
    global _TAGS
    if _TAGS is None:
        _TAGS = _Tags(_string_terminals(_grammar_text()))
    return _TAGS


def _parser():
    """The LALR parser (contextual lexer) built once from the grammar, with its transformer.

    lark builds it; later runs replay lark's cached tables without importing lark
    (``memcite.citations._section_tables``).
    """
    global _PARSER
    if _PARSER is None:
        from memcite.citations.section_parser import build_section_parser

        _PARSER = build_section_parser(_grammar_text())
    return _PARSER


# --------------------------------------------------------------------------- entry rule


def _u32(text: str) -> int | None:
    """Rust's ``u32::from_str`` on an already-trimmed ``+?[0-9]+``; None above 4294967295."""
    digits = text[1:] if text.startswith("+") else text
    if len(digits) > 10 and len(digits.lstrip("0")) > 10:
        return None
    value = int(digits)
    return value if value <= _U32_MAX else None


def split_entry(line: str) -> tuple[str, int | None, int | None, str]:
    """Fields of a line the grammar accepted as an ENTRY (numbers None when above u32)."""
    cut = line.rfind(_NOTE_OPEN)
    location = line[:cut]
    note = rust_trim(rust_trim_end(line[cut + len(_NOTE_OPEN) :])[:-1])
    colon = location.rfind(":")
    first, _, second = location[colon + 1 :].partition("-")
    return rust_trim(location[:colon]), _u32(rust_trim(first)), _u32(rust_trim(second)), note


def _is_u32_text(number: str) -> bool:
    """``+?[0-9]+`` in ASCII digits (what Rust's u32 parser accepts, before the range)."""
    digits = number[1:] if number.startswith("+") else number
    return digits.isascii() and digits.isdigit()


def why_dropped(line: str) -> tuple[str, str]:
    """(code, message) saying which step of the entry rule rejects ``line``."""
    trimmed = rust_trim(line)
    cut = trimmed.rfind(_NOTE_OPEN)
    if cut < 0:
        return "entry-no-note", f"not an entry (no '|note=['); Codex drops it; write {_ENTRY_SHAPE}"
    location, note = trimmed[:cut], trimmed[cut + len(_NOTE_OPEN) :]
    if not note.endswith("]"):
        return (
            "entry-note-unclosed",
            "the note does not end the line with ']'; Codex drops the entry; "
            "close the note and put nothing after it",
        )
    colon = location.rfind(":")
    if colon < 0:
        return (
            "entry-no-range",
            f"no ':<start>-<end>' before the note; Codex drops it; write {_ENTRY_SHAPE}",
        )
    first, dash, second = location[colon + 1 :].partition("-")
    if not dash:
        return (
            "entry-range-not-pair",
            f"the line range {location[colon + 1 :].strip()!r} is not '<start>-<end>'; Codex drops it",
        )
    for number in (rust_trim(first), rust_trim(second)):
        if not _is_u32_text(number):
            return (
                "entry-bad-number",
                f"{number!r} is not a line number (ASCII digits, optional '+'); Codex drops the entry",
            )
        if _u32(number) is None:
            return (
                "entry-number-too-large",
                f"line number {number[:20]!r}{'…' if len(number) > 20 else ''} is above 4294967295; "
                "Codex drops the entry",
            )
    return "entry-dropped", "Codex drops this line"


def _has_drive(path: str) -> bool:
    """``C:\\`` or ``C:/`` at the start: a Windows absolute path."""
    return len(path) > 2 and path[1] == ":" and path[2] in "\\/" and path[0].isascii() \
        and path[0].isalpha()


def _entry_warnings(entry: CitationEntry) -> list[tuple[str, str]]:
    found = []
    if entry.line_start > entry.line_end:
        found.append(
            (
                "range-reversed",
                f"range {entry.line_start}-{entry.line_end} is reversed; write start-end",
            )
        )
    if entry.line_start == 0 or entry.line_end == 0:
        found.append(
            (
                "range-zero",
                f"range {entry.line_start}-{entry.line_end} has line 0; lines start at 1",
            )
        )
    path = entry.path
    if not path:
        found.append(
            ("path-empty", "the entry has an empty path; name a file in the memory folder")
        )
    elif path.startswith(("/", "\\", "~")) or _has_drive(path):
        found.append(
            ("path-absolute", f"path {path!r} is absolute; paths are relative to the memory folder")
        )
    if path and ".." in path.replace("\\", "/").split("/"):
        found.append(
            ("path-parent", f"path {path!r} climbs out with '..'; it may point outside memory")
        )
    return found


# --------------------------------------------------------------------------- positions


class _Positions:
    """Line and column (1-based, in characters) of offsets in the reply, computed on demand."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def of(self, offset: int) -> tuple[int, int]:
        line = self.text.count("\n", 0, offset) + 1
        column = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        return line, column


# --------------------------------------------------------------------------- stage A


def find_blocks(text: str) -> tuple[str, tuple[Block, ...]]:
    """Stage A: the visible text and the blocks, exactly as Codex cuts them."""
    t = tags()
    open_tag, close_tag = t.block_open, t.block_close
    find = text.find
    start = find(open_tag)
    if start < 0:
        return text, ()
    parts: list[str] = []
    blocks: list[Block] = []
    position = 0
    while start >= 0:
        parts.append(text[position:start])
        body_start = start + len(open_tag)
        close = find(close_tag, body_start)
        if close < 0:
            blocks.append(Block(start, body_start, len(text), len(text), False))
            position = len(text)
            break
        position = close + len(close_tag)
        blocks.append(Block(start, body_start, close, position, True))
        start = find(open_tag, position)
    parts.append(text[position:])
    return "".join(parts), tuple(blocks)


# --------------------------------------------------------------------------- stage B


def _section(
    text: str, open_tag: str, close_tag: str, start: int, end: int
) -> tuple[int, int, int]:
    """(open offset, content start, content end) of the first closed section, or (open|-1, -1, -1)."""
    opened = text.find(open_tag, start, end)
    if opened < 0:
        return -1, -1, -1
    content_start = opened + len(open_tag)
    closed = text.find(close_tag, content_start, end)
    if closed < 0:
        return opened, -1, -1
    return opened, content_start, closed


class _Reader:
    """One reading of one reply: collects entries, ids and diagnostics in order."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.positions = _Positions(text)
        self.entries: list[CitationEntry] = []
        self.rollout_ids: list[str] = []
        self.seen_ids: dict[str, str] = {}  # exact id -> first spelling (for duplicates)
        self.seen_uuids: dict[str, str] = {}  # normalised -> first spelling (for case variants)
        self.diagnostics: list[Diagnostic] = []

    def warn(self, code: str, message: str, offset: int, severity: str = "warning") -> None:
        line, column = self.positions.of(offset)
        self.diagnostics.append(Diagnostic(severity, code, message, line, column))

    def read_body(self, block: Block) -> None:
        t = tags()
        text, start, end = self.text, block.body_start, block.body_end
        found_any = False

        opened, content_start, content_end = _section(
            text, t.entries_open, t.entries_close, start, end
        )
        if opened >= 0 and content_start < 0:
            self.warn(
                "entries-unclosed",
                "<citation_entries> is never closed in this block; Codex reads no entries from it",
                opened,
            )
        elif content_start >= 0:
            found_any = True
            self._read_entries(content_start, content_end)
            again = text.find(t.entries_open, content_end, end)
            if again >= 0:
                self.warn(
                    "entries-second-section",
                    "a second <citation_entries> section in one block is ignored by Codex; merge them",
                    again,
                )

        opened, content_start, content_end = _section(text, t.ids_open, t.ids_close, start, end)
        legacy = _section(text, t.legacy_ids_open, t.legacy_ids_close, start, end)
        if content_start >= 0:
            found_any = True
            self._read_ids(content_start, content_end)
            if legacy[1] >= 0:
                self.warn(
                    "ids-legacy-ignored",
                    "<thread_ids> is ignored because this block has a <rollout_ids> section",
                    legacy[0],
                )
        else:
            if opened >= 0:
                self.warn(
                    "ids-unclosed",
                    "<rollout_ids> is never closed in this block; Codex reads no ids from it",
                    opened,
                )
            if legacy[1] >= 0:
                found_any = True
                self.warn(
                    "ids-legacy-section",
                    "ids read from the legacy <thread_ids> section; the current name is <rollout_ids>",
                    legacy[0],
                    severity="info",
                )
                self._read_ids(legacy[1], legacy[2])
        if not found_any:
            self.warn(
                "block-empty",
                "the block has no closed <citation_entries> or <rollout_ids> section; "
                "Codex reads nothing from it",
                block.start,
            )

    def _read_entries(self, start: int, end: int) -> None:
        base_line, base_column = self.positions.of(start)
        for kind, token_text, token_line, token_column in _parser().parse(
            self.text[start:end], start="entry_section"
        ):
            line = base_line + token_line - 1
            column = token_column + (base_column - 1 if token_line == 1 else 0)
            if kind == "ENTRY":
                path, line_start, line_end, note = split_entry(token_text)
                if line_start is None or line_end is None:
                    code, message = why_dropped(token_text)
                    self.diagnostics.append(Diagnostic("warning", code, message, line, column))
                    continue
                entry = CitationEntry(path, line_start, line_end, note, line, column)
                self.entries.append(entry)
                for code, message in _entry_warnings(entry):
                    self.diagnostics.append(Diagnostic("warning", code, message, line, column))
            elif rust_trim(token_text):
                code, message = why_dropped(token_text)
                self.diagnostics.append(Diagnostic("warning", code, message, line, column))

    def _read_ids(self, start: int, end: int) -> None:
        base_line, base_column = self.positions.of(start)
        for _kind, token_text, token_line, token_column in _parser().parse(
            self.text[start:end], start="id_section"
        ):
            rollout_id = rust_trim(token_text)
            if not rollout_id:
                continue
            line = base_line + token_line - 1
            column = token_column + (base_column - 1 if token_line == 1 else 0)
            column += len(token_text) - len(token_text.lstrip(RUST_WHITESPACE))
            if rollout_id in self.seen_ids:
                self.diagnostics.append(
                    Diagnostic(
                        "info",
                        "id-duplicate",
                        f"id {_short(rollout_id)} is cited again; Codex keeps the first",
                        line,
                        column,
                    )
                )
                continue
            self.seen_ids[rollout_id] = rollout_id
            self.rollout_ids.append(rollout_id)
            normalized = normalize_thread_id(rollout_id)
            if normalized is None:
                self.diagnostics.append(
                    Diagnostic(
                        "warning",
                        "id-not-uuid",
                        f"id {_short(rollout_id)} is not a UUID; Codex keeps it in the citation "
                        "but never counts it",
                        line,
                        column,
                    )
                )
            elif normalized in self.seen_uuids:
                self.diagnostics.append(
                    Diagnostic(
                        "warning",
                        "id-case-variant",
                        f"id {_short(rollout_id)} is another spelling of "
                        f"{_short(self.seen_uuids[normalized])}; Codex counts the thread twice",
                        line,
                        column,
                    )
                )
            else:
                self.seen_uuids[normalized] = rollout_id


def _short(value: str, limit: int = 60) -> str:
    return repr(value if len(value) <= limit else value[:limit] + "…")


# --------------------------------------------------------------------------- whole reply


_FENCE = r"^ {0,3}(`{3,}|~{3,})"  # compiled (and cached by re) only when a fence is there


def _inside_code_fence(text: str, offset: int) -> bool:
    """Whether ``offset`` lies inside a markdown fenced code block opened before it."""
    if text.find("```", 0, offset) < 0 and text.find("~~~", 0, offset) < 0:
        return False
    open_fence: str | None = None
    import re

    for match in re.compile(_FENCE, re.MULTILINE).finditer(text, 0, offset):
        fence = match.group(1)
        if open_fence is None:
            open_fence = fence
        elif fence[0] == open_fence[0] and len(fence) >= len(open_fence):
            open_fence = None
    return open_fence is not None


def _block_diagnostics(reader: _Reader, blocks: tuple[Block, ...]) -> None:
    text = reader.text
    # visible_after[i]: some non-blank visible text follows block i (the spans between blocks).
    visible_after = [False] * len(blocks)
    later = False
    for index in range(len(blocks) - 1, -1, -1):
        following = blocks[index + 1].start if index + 1 < len(blocks) else len(text)
        later = later or bool(rust_trim(text[blocks[index].end : following]))
        visible_after[index] = later
    for index, block in enumerate(blocks):
        if index:
            reader.warn(
                "block-multiple",
                f"block {index + 1} of {len(blocks)}: Codex reads every block; "
                "put one block at the end of the reply",
                block.start,
            )
        if not block.terminated:
            reader.warn(
                "block-unterminated",
                "the block is never closed: Codex hides the rest of the reply and still counts it; "
                "end it with </oai-mem-citation>",
                block.start,
            )
        if visible_after[index]:
            reader.warn(
                "block-not-at-end",
                "visible text follows the block; the block should be the last thing in the reply",
                block.start,
            )
        if _inside_code_fence(text, block.start):
            reader.warn(
                "block-in-code-fence",
                "the block is inside a markdown code fence; Codex still hides and counts it",
                block.start,
            )


def parse_reply(text: str, *, profile: str = "codex") -> Reading:
    """Read one agent reply: visible text, the citation, the ids Codex counts, diagnostics.

    ``profile="codex"`` reads exactly as Codex does and reports problems as
    warnings; ``profile="strict"`` reads the same way but raises
    :class:`~memcite.errors.CitationError` when there is any warning.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}: use one of {', '.join(PROFILES)}")
    visible, blocks = find_blocks(text)
    reader = _Reader(text)
    legacy = text.find(tags().legacy_wrapper_open)
    if legacy >= 0:
        reader.warn(
            "legacy-wrapper",
            "<memory_citation> is the old wrapper: Codex neither hides nor counts it; "
            "use <oai-mem-citation>",
            legacy,
        )
    if not blocks:
        return _finish(reader, visible, blocks, None, profile)
    _block_diagnostics(reader, blocks)
    for block in blocks:
        reader.read_body(block)
    citation = None
    if reader.entries or reader.rollout_ids:
        citation = Citation(reader.entries, reader.rollout_ids)
    return _finish(reader, visible, blocks, citation, profile)


def _finish(reader, visible, blocks, citation, profile) -> Reading:
    diagnostics = sorted(reader.diagnostics, key=lambda d: (d.line, d.column))
    if profile == "strict":
        problems = [Diagnostic("error", d.code, d.message, d.line, d.column)
                    for d in diagnostics if d.severity != "info"]
        if problems:
            raise CitationError(problems, visible=visible)
    thread_ids = [] if citation is None else counted_thread_ids(citation.rollout_ids)
    return Reading(visible, citation, thread_ids, diagnostics, blocks, profile)
