"""Entry point of the ``memcite`` command: hot commands take the fast path, the rest Typer."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    """Run memcite; exits with the command's exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    from memcite.cli import fastpath

    code = fastpath.run(args)
    if code is not None:
        sys.exit(code)
    from memcite.cli.app import app

    app(args=args, prog_name="memcite")


if __name__ == "__main__":
    main()
