"""memcite's own exceptions: each says what was wrong, where, and carries an exit code."""

from __future__ import annotations

# The exit codes of every ``memcite`` command (the README's "Exit codes" table).
EXIT_OK = 0  # done
EXIT_FINDINGS = 1  # done, and found problems (a strict reading, counts that differ, ...)
EXIT_BAD_INPUT = 2  # bad usage or bad input; in a batch: the good items were done, the bad skipped
EXIT_REFUSED = 3  # refused for safety: nothing was written
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)
EXIT_BROKEN_PIPE = 141  # the reader of the output went away (128 + SIGPIPE, as any Unix tool)


class MemciteError(Exception):
    """Base of every error memcite reports to a user; ``exit_code`` is what the CLI exits with."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class InputError(MemciteError):
    """The input could not be read: missing file, too large, not UTF-8 (exit 2)."""


class NothingYet(MemciteError):
    """Nothing to do yet, and nothing wrong (exit 0): the message says what is there and the
    hint what happens next; printed on stdout, not as an error."""

    exit_code = EXIT_OK


class CitationError(MemciteError):
    """A strict reading found problems; ``diagnostics`` lists them all, the first is the message."""

    exit_code = EXIT_FINDINGS

    def __init__(self, diagnostics, *, source: str = "<reply>", visible: str | None = None) -> None:
        self.diagnostics = tuple(diagnostics)
        self.visible = visible  # the reply as Codex shows it: a strict reading still has one
        first = self.diagnostics[0]
        self.line = first.line
        self.column = first.column
        super().__init__(self.located(source))

    def located(self, source: str) -> str:
        """The message with the reply named ``source`` (a path, or ``<stdin>``)."""
        first = self.diagnostics[0]
        more = len(self.diagnostics) - 1
        tail = f" (and {more} more)" if more else ""
        return f"{source}:{first.line}:{first.column}: {first.message} [{first.code}]{tail}"
