"""Codex's ``apply_patch`` format, read by the rules Codex itself reads it by.

What the gate on memory writes judges must be what Codex would write, so this module ports
the rules (not the code) of Codex's patch parser and applier (openai/codex,
``codex-rs/apply-patch``: ``parser.rs``, ``seek_sequence.rs``, ``lib.rs``), as the pinned
Codex 0.171 binary shows them (``tests/codex/test_apply_patch.py`` keeps them as a table,
``tests/e2e/test_e2e_apply_patch.py`` checks that table against the binary):

- the patch is trimmed of white space (Rust's: Unicode ``White_Space``, which takes in
  U+2028, U+2029, U+0085, form feed and vertical tab, but not the record separator nor a
  zero-width space) and split into lines on ``\\n`` only (a ``\\r`` before it dropped);
- its first line, trimmed, is ``*** Begin Patch`` and its last ``*** End Patch``; a patch
  wrapped in a heredoc (``<<EOF``, ``<<'EOF'``, ``<<"EOF"`` ... ``EOF``) is unwrapped;
- a file header is trimmed on both sides before ``*** Add File: ``, ``*** Delete File: ``
  or ``*** Update File: `` is looked for (exact case, one space); the path is the rest;
- ``*** Move to: `` is the line right after ``*** Update File:``, white space trimmed only
  at its end;
- an added file's lines are the ``+`` lines that follow its header, each ending in ``\\n``
  (a ``\\r`` left at a line's end is dropped when the file is written);
- an update is chunks: an optional ``@@`` or ``@@ CONTEXT`` line (trimmed at its end), then
  lines of `` `` (context), ``-`` (removed), ``+`` (added) or empty (an empty context
  line), closed by ``*** End of File`` (trimmed at its end) or by the next line that is
  none of these; between chunks, blank lines are skipped;
- a chunk is found in the file by its context line, then by its old lines: exactly, then
  ignoring white space at line ends, then at both ends, then with typographic dashes,
  quotes and spaces read as ASCII (``seek_sequence``); ``*** End of File`` looks at the
  end first. Lines are the file split on ``\\n``; the new text always ends in a newline;
  lines the patch adds take ``\\r\\n`` in a file most of whose lines end so;
- the hunks are applied in order (a later one reads what an earlier one wrote), a move
  writes the destination and removes the source; a hunk that cannot be applied stops
  Codex there, with the earlier ones written.

Pure functions: the file system is reached only through the ``read`` callable a caller
passes to :func:`landings`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

BEGIN_PATCH = "*** Begin Patch"
END_PATCH = "*** End Patch"
ADD_FILE = "*** Add File: "
DELETE_FILE = "*** Delete File: "
UPDATE_FILE = "*** Update File: "
MOVE_TO = "*** Move to: "
END_OF_FILE = "*** End of File"
HEADERS = (ADD_FILE, DELETE_FILE, UPDATE_FILE)
HEREDOC_STARTS = ("<<EOF", "<<'EOF'", '<<"EOF"')

# Rust's char::is_whitespace (Unicode White_Space): what Codex's trim() removes.
WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
               "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-")
_QUOTES = {**dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b"), "'"),
           **dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f"), '"')}
_SPACES = dict.fromkeys(map(ord, "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                                 "\u200a\u202f\u205f\u3000"), " ")
_PUNCTUATION = {**_DASHES, **_QUOTES, **_SPACES}


class PatchError(ValueError):
    """A patch Codex would refuse as a whole (nothing of it is written)."""


class ApplyError(ValueError):
    """A hunk Codex cannot apply (it stops there; the hunks before it are written)."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """One ``@@`` part of an update: ``new`` holds the context and added lines in order,
    ``added`` says which of them the patch adds (``+``)."""

    context: str | None
    old: tuple[str, ...]
    new: tuple[str, ...]
    added: tuple[bool, ...]
    end_of_file: bool = False


@dataclass(frozen=True, slots=True)
class Hunk:
    """One file section: ``kind`` is ``add``, ``delete`` or ``update``."""

    kind: str
    path: str
    move_to: str | None = None
    contents: str = ""  # an added file's text
    chunks: tuple[Chunk, ...] = ()


def trim(text: str) -> str:
    return text.strip(WHITE_SPACE)


def trim_end(text: str) -> str:
    return text.rstrip(WHITE_SPACE)


def split_lines(text: str) -> list[str]:
    """Lines as Rust's ``str::lines`` makes them: split on ``\\n``, a ``\\r`` before it
    dropped, no empty line after a final ``\\n``."""
    pieces = text.split("\n")
    tail = pieces.pop()
    lines = [piece[:-1] if piece.endswith("\r") else piece for piece in pieces]
    return [*lines, tail] if tail else lines


def _body(lines: list[str]) -> list[str]:
    """The lines between the markers (heredoc unwrapped), else :class:`PatchError`."""
    def strict(lines: list[str]) -> list[str] | str:
        if not lines or trim(lines[0]) != BEGIN_PATCH:
            return "The first line of the patch must be '*** Begin Patch'"
        ends = [i for i, line in enumerate(lines) if i and trim(line) == END_PATCH]
        if not ends or any(trim(line) not in ("", END_PATCH) for line in lines[ends[0]:]):
            return "The last line of the patch must be '*** End Patch'"
        return lines[1:ends[0]]

    found = strict(lines)
    if isinstance(found, list):
        return found
    if len(lines) >= 4 and lines[0] in HEREDOC_STARTS and lines[-1].endswith("EOF"):
        inner = strict(lines[1:-1])
        if isinstance(inner, list):
            return inner
        raise PatchError(inner)
    raise PatchError(found)


def parse_patch(text: str) -> list[Hunk]:
    """The hunks of a patch, in order, as Codex reads them; :class:`PatchError` when Codex
    would refuse it."""
    lines = _body(split_lines(trim(text)))
    hunks: list[Hunk] = []
    at = 0
    while at < len(lines):
        hunk, used = _one_hunk(lines, at)
        hunks.append(hunk)
        at += used
    return hunks


def _one_hunk(lines: list[str], at: int) -> tuple[Hunk, int]:
    first = trim(lines[at])
    if first.startswith(ADD_FILE):
        end = at + 1
        while end < len(lines) and lines[end].startswith("+"):
            end += 1
        contents = "".join(line[1:] + "\n" for line in lines[at + 1:end])
        return Hunk("add", first[len(ADD_FILE):], contents=contents), end - at
    if first.startswith(DELETE_FILE):
        return Hunk("delete", first[len(DELETE_FILE):]), 1
    if first.startswith(UPDATE_FILE):
        end = at + 1
        move_to = None
        if end < len(lines) and trim_end(lines[end]).startswith(MOVE_TO):
            move_to = trim_end(lines[end])[len(MOVE_TO):]
            end += 1
        chunks: list[Chunk] = []
        while end < len(lines):
            if chunks and not trim(lines[end]):
                end += 1
                continue
            if trim(lines[end]).startswith(HEADERS):
                break
            chunk, used = _one_chunk(lines, end, first_chunk=not chunks)
            chunks.append(chunk)
            end += used
        if not chunks:
            raise PatchError(f"Update file hunk for path '{first[len(UPDATE_FILE):]}' is empty")
        return Hunk("update", first[len(UPDATE_FILE):], move_to, chunks=tuple(chunks)), end - at
    raise PatchError(f"'{first}' is not a valid hunk header")


def _one_chunk(lines: list[str], at: int, *, first_chunk: bool) -> tuple[Chunk, int]:
    marker = trim_end(lines[at])
    context = None
    start = at
    if marker == "@@":
        start += 1
    elif marker.startswith("@@ "):
        context = marker[3:]
        start += 1
    elif not first_chunk:
        raise PatchError(f"Expected update hunk to start with a @@ context marker, got: "
                         f"'{lines[at]}'")
    if start >= len(lines):
        raise PatchError("Update hunk does not contain any lines")
    old: list[str] = []
    new: list[str] = []
    added: list[bool] = []
    end_of_file = False
    end = start
    while end < len(lines):
        line = lines[end]
        if trim_end(line) == END_OF_FILE:
            if end == start:
                raise PatchError("Update hunk does not contain any lines")
            end_of_file = True
            end += 1
            break
        sign = line[:1]
        if sign in ("", " "):
            old.append(line[1:])
            new.append(line[1:])
            added.append(False)
        elif sign == "+":
            new.append(line[1:])
            added.append(True)
        elif sign == "-":
            old.append(line[1:])
        elif end == start:
            raise PatchError(f"Unexpected line found in update hunk: '{line}'")
        else:
            break
        end += 1
    return Chunk(context, tuple(old), tuple(new), tuple(added), end_of_file), end - at


# --------------------------------------------------------------------------- applying


def seek_sequence(lines: list[str], pattern: list[str] | tuple[str, ...], start: int,
                  end_of_file: bool) -> int | None:
    """Where ``pattern`` first stands in ``lines`` at or after ``start``, matched ever more
    loosely (exactly; white space at line ends ignored; at both ends; typographic
    punctuation read as ASCII); ``end_of_file`` tries the end of the file first."""
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    first = len(lines) - len(pattern) if end_of_file else start
    last = len(lines) - len(pattern)
    for fold in (None, trim_end, trim, _plain):
        wanted = list(pattern) if fold is None else [fold(p) for p in pattern]
        for at in range(first, last + 1):
            if fold is None:
                if lines[at:at + len(pattern)] == wanted:
                    return at
            elif all(fold(lines[at + k]) == wanted[k] for k in range(len(pattern))):
                return at
    return None


def _plain(text: str) -> str:
    return trim(text).translate(_PUNCTUATION)


def apply_chunks(original: str, chunks: tuple[Chunk, ...] | list[Chunk]
                 ) -> tuple[str, list[bool]]:
    """The file's new text after ``chunks``, and per line of it whether the patch added it
    (``+``); :class:`ApplyError` when a chunk is not found."""
    lines = original.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    crlf = original.count("\r\n")
    ending = "\r" if crlf and crlf >= original.count("\n") - crlf else ""
    replacements = []
    index = 0
    for chunk in chunks:
        if chunk.context is not None:
            found = seek_sequence(lines, [chunk.context], index, False)
            if found is None:
                raise ApplyError(f"Failed to find context '{chunk.context}'")
            index = found + 1
        new = [(line + ending, flag) for line, flag in zip(chunk.new, chunk.added, strict=True)]
        if not chunk.old:
            at = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
            replacements.append((at, 0, new))
            continue
        pattern = list(chunk.old)
        found = seek_sequence(lines, pattern, index, chunk.end_of_file)
        if found is None and pattern[-1] == "":
            pattern.pop()
            if new and new[-1][0] in ("", "\r"):
                new.pop()
            found = seek_sequence(lines, pattern, index, chunk.end_of_file)
        if found is None:
            raise ApplyError("Failed to find expected lines:\n" + "\n".join(chunk.old))
        replacements.append((found, len(pattern), new))
        index = found + len(pattern)
    marked = [(line, False) for line in lines]
    for at, length, new in sorted(replacements, key=lambda r: r[0], reverse=True):
        del marked[at:at + length]
        marked[at:at] = new
    if not marked or marked[-1][0] != "":
        marked.append(("", False))
    return "\n".join(line for line, _ in marked), [flag for _, flag in marked[:-1]]


# --------------------------------------------------------------------------- what lands


@dataclass(slots=True)
class Landing:
    """What a patch leaves in one file: its whole new text, per line whether the patch put
    it there (every line, for a file that is new at that path), and the problems met
    (``complete`` is False when the text is only the patch's own lines)."""

    path: str
    text: str
    added: list[bool]
    complete: bool = True
    problems: list[str] = field(default_factory=list)


def resolve(cwd: str, name: str) -> str:
    """A hunk's path as Codex resolves it: against ``cwd`` unless absolute (no ``~``)."""
    return os.path.normpath(os.path.join(cwd, name))


def landings(hunks: list[Hunk], cwd: str, read: Callable[[str], str | None]
             ) -> dict[str, Landing]:
    """Each file the hunks write (absolute path, after moves) and what lands there.

    Hunks are applied in order over what earlier ones wrote; ``read(path)`` gives a file's
    present text (None: missing or unreadable). A hunk that cannot be applied still counts
    its own lines as landing, context lines among them (``complete`` False): what is judged
    is never less than what Codex could write."""
    state: dict[str, str | None] = {}
    out: dict[str, Landing] = {}

    def current(path: str) -> str | None:
        if path not in state:
            state[path] = read(path)
        return state[path]

    for hunk in hunks:
        path = resolve(cwd, hunk.path)
        if hunk.kind == "add":
            text = hunk.contents.replace("\r\n", "\n")  # a new file is written with LF
            state[path] = text
            out[path] = Landing(path, text, [True] * text.count("\n"))
            continue
        if hunk.kind == "delete":
            state[path] = None
            out.pop(path, None)
            continue
        target = resolve(cwd, hunk.move_to) if hunk.move_to is not None else path
        original = current(path)
        landing = None
        if original is not None:
            try:
                text, added = apply_chunks(original, hunk.chunks)
                if target != path:  # moved: every line is new where it lands
                    added = [True] * len(added)
                before = out.get(path)
                if before is not None and target == path:  # keep what earlier hunks added
                    added = _carried(before, text, added)
                landing = Landing(target, text, added)
            except ApplyError as exc:
                problem = f"{hunk.path}: {exc}"
        else:
            problem = f"{hunk.path}: the file to update cannot be read"
        if landing is None:
            lines = [line for chunk in hunk.chunks for line in chunk.new]
            flags = [flag for chunk in hunk.chunks for flag in chunk.added]
            landing = Landing(target, "".join(line + "\n" for line in lines), flags,
                              complete=False, problems=[problem])
        if target != path:
            state[path] = None
            out.pop(path, None)
        state[target] = landing.text if landing.complete else None
        out[target] = landing
    return out


def _carried(before: Landing, text: str, added: list[bool]) -> list[bool]:
    """Lines an earlier hunk added to the same file stay marked added."""
    earlier = {line for line, flag in zip(before.text.split("\n"), before.added, strict=False)
               if flag}
    return [flag or line in earlier for line, flag in zip(text.split("\n"), added, strict=False)]
