"""memcite's own exceptions: each says what was wrong, where, and carries an exit code."""

from __future__ import annotations


class MemciteError(Exception):
    """Base of every error memcite reports to a user; ``exit_code`` is what the CLI exits with."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class InputError(MemciteError):
    """The input could not be read: missing file, too large, not UTF-8 (exit 2)."""


class CitationError(MemciteError):
    """A strict reading found problems; ``diagnostics`` lists them all, the first is the message."""

    exit_code = 1

    def __init__(self, diagnostics, *, source: str = "<reply>") -> None:
        self.diagnostics = tuple(diagnostics)
        first = self.diagnostics[0]
        self.line = first.line
        self.column = first.column
        more = len(self.diagnostics) - 1
        tail = f" (and {more} more)" if more else ""
        super().__init__(
            f"{source}:{first.line}:{first.column}: {first.message} [{first.code}]{tail}"
        )
