"""Entry point of the ``memcite`` command: hot commands take the fast path, the rest Typer.

Both paths end here, so this is where Ctrl-C and a closed output pipe become exit
codes (130 and 141) instead of tracebacks.
"""

from __future__ import annotations

import os
import sys

from memcite.errors import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_OK


def main(argv: list[str] | None = None) -> None:
    """Run memcite; exits with the command's exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    # Untrusted values (a non-UTF-8 file name or option) reach the output as lone
    # surrogates: print them as escapes rather than fail (stderr already does).
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    # Control characters in what a command shows are escaped (memcite.display); stored
    # bytes, and a data command's output to a file or pipe, stay exact.
    from memcite.display import install

    restore = install(args)
    from memcite.cli.console import errors_as_json

    errors_as_json(args)
    try:
        code = _run(args)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except BrokenPipeError:
        code = _output_closed()
    finally:
        restore()
        errors_as_json([])  # called again in the same process (tests), a run starts plain
    if code == EXIT_INTERRUPTED:  # Typer turns Ctrl-C into this code itself
        _say_interrupted()
    sys.exit(code)


def _run(args: list[str]) -> int:
    if args in (["--version"], ["-V"]):
        from memcite.cli.console import memcite_version

        sys.stdout.write(f"memcite {memcite_version()}\n")
        sys.stdout.flush()
        return EXIT_OK
    from memcite.cli import fastpath

    code = fastpath.run(args)
    if code is not None:
        return code
    from memcite.cli.app import run_typer

    return run_typer(args)


def _say_interrupted() -> None:
    try:
        sys.stderr.write("\nmemcite: interrupted\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _output_closed() -> int:
    """The reader of stdout went away (``memcite stats | head``): stop quietly.

    stdout is pointed at /dev/null so that Python's final flush does not fail again.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    main()
