"""Entry point of the ``memcite`` command: hot commands take the fast path, the rest Typer."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    """Run memcite; exits with the command's exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    # Untrusted values (a non-UTF-8 file name or option) reach the output as lone
    # surrogates: print them as escapes rather than fail (stderr already does).
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    from memcite.cli import fastpath

    code = fastpath.run(args)
    if code is not None:
        sys.exit(code)
    from memcite.cli.app import app

    app(args=args, prog_name="memcite")


if __name__ == "__main__":
    main()
