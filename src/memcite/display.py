"""What memcite shows a person or an agent: text with secrets masked and control characters escaped.

Text that agents or other programs can write (event text, file names, ``MEMORY.md`` lines,
Codex's job rows, session metadata) may hold terminal control characters: ESC starts a
sequence that recolours, hides or rewrites what the terminal shows (or sets its title,
or a link), BEL rings, C1 controls are ESC's one-byte forms, and the bidi overrides and
isolates (U+202A–U+202E, U+2066–U+2069) reorder what is read. ``escape_controls`` shows
each as an escape (``\\x1b``, ``\\x07``, ``\\u009b``, ``\\u202e``); tab and newline stay.
The stored bytes are never changed: only what is shown.

``shown`` is the one display step of what the gate, search, recall and the report show:
``memcite.secrets.mask_secrets``, then ``escape_controls``. ``DisplayStream`` applies
``escape_controls`` to everything a command writes on stdout and stderr (installed by
``memcite.__main__``); an escape never appears raw in a JSON output either, since each
escape of a character JSON leaves raw (DEL, C1, bidi) is JSON's own ``\\uXXXX``.

``count`` says a count the way a person would: "1 file", "2 files", "3 memories" (never
"file(s)").

Imports nothing (the per-reply commands write through it).
"""

from __future__ import annotations

# C0 controls but tab and newline, shown as \xNN (JSON already escapes these itself);
# DEL, C1 controls and the bidi overrides and isolates, shown as \uNNNN (JSON's own escape,
# so an escaped JSON output reads back to the same value).
_ESCAPES: dict[int, str] = {code: f"\\x{code:02x}" for code in range(0x20) if code not in (9, 10)}
_ESCAPES.update({code: f"\\u{code:04x}" for code in
                 (0x7f, *range(0x80, 0xa0), *range(0x202a, 0x202f), *range(0x2066, 0x206a))})


def escape_controls(text: str) -> str:
    """``text`` with each terminal control character (C0 but tab and newline, DEL, C1, bidi
    overrides and isolates) replaced by a visible escape; ordinary text comes back as is."""
    if text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable():
        return text  # C speed: no control, format or separator character at all
    return text.translate(_ESCAPES)


def has_controls(text: str) -> bool:
    """Whether ``escape_controls`` would change ``text``."""
    return escape_controls(text) != text


def shown(text: object) -> str:
    """``text`` as memcite shows it: secrets masked (``memcite.secrets.mask_secrets``), then
    control characters escaped. The one display step of the gate, search, recall and report."""
    from memcite.secrets import mask_secrets

    return escape_controls(mask_secrets(str(text)))


class DisplayStream:
    """A text stream that writes to ``stream`` with control characters escaped.

    Everything else (``flush``, ``isatty``, ``buffer``, ``fileno``, ``encoding``, ...) is the
    stream's own, so bytes written to ``buffer`` (``strip``'s reply, ``truncate``'s output, the
    MCP server's messages) go out exactly. ``terminal`` is the stream itself, for memcite's
    own styling (a progress line's ``\\r\\x1b[K``, rich's colours), never for untrusted text.
    """

    def __init__(self, stream) -> None:
        self.terminal = stream

    def write(self, text):
        if isinstance(text, str):
            text = escape_controls(text)
        return self.terminal.write(text)  # bytes: the stream's own TypeError, as click expects

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self.terminal, name)


def styled(stream):
    """The stream under a ``DisplayStream`` (``stream`` itself otherwise): for memcite's own
    terminal sequences; whatever untrusted text goes with them must pass ``escape_controls``."""
    return stream.terminal if isinstance(stream, DisplayStream) else stream


# Commands whose stdout is data for another program (a reply, instructions, a note file, an
# MCP or hook message): written exactly when it is not a terminal.
_DATA_COMMANDS = {("strip",), ("truncate",), ("instructions",), ("mcp",), ("note", "export"),
                  ("contracts",)}


def install(args: list[str]):
    """Put ``DisplayStream`` over ``sys.stdout`` and ``sys.stderr`` for the command ``args``
    names; returns the function that puts the streams back. stdout stays as it is for a data
    command writing to a file or pipe."""
    import sys

    saved = sys.stdout, sys.stderr
    words = [arg for arg in args[:2] if not arg.startswith("-")]
    data = any(tuple(words[:len(key)]) == key for key in _DATA_COMMANDS)
    try:
        terminal = sys.stdout.isatty()
    except (AttributeError, OSError, ValueError):
        terminal = False
    if sys.stdout is not None and (terminal or not data) \
            and not isinstance(sys.stdout, DisplayStream):
        sys.stdout = DisplayStream(sys.stdout)
    if sys.stderr is not None and not isinstance(sys.stderr, DisplayStream):
        sys.stderr = DisplayStream(sys.stderr)

    def restore() -> None:
        sys.stdout, sys.stderr = saved

    return restore


def count(number: int, word: str, many: str | None = None) -> str:
    """``number`` and ``word``, plural unless it is one (``many`` for an irregular plural)."""
    return f"{number} {word if number == 1 else many or word + 's'}"


__all__ = ["DisplayStream", "count", "escape_controls", "has_controls", "install", "shown", "styled"]
