"""The body of ``memcite lint`` (and of its ``--hook`` mode); returns the exit code.

Shared by the Typer command (``memcite.cli.lint_app``) and the fast path: imports
neither Typer nor rich, and the hook mode imports nothing it does not need.
"""

from __future__ import annotations

import sys
import time

from memcite.cli.console import check_choice, dump_json, note, report_error
from memcite.errors import InputError, MemciteError
from memcite.lint.output import FORMATS
from memcite.paths import Locations

MAX_PAYLOAD_BYTES = 16 * 1024 * 1024


def stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):
        return False


def lint(
    paths: list[str] | None = None,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
    format: str = "text",  # noqa: A002 - mirrors the --format option
    strict: bool = False,
    hook: bool = False,
    codex_home: str | None = None,
) -> int:
    """Lint memory files and folders; print the findings; 0 clean, 1 findings, 2 bad usage."""
    if hook:
        if stdin_is_terminal():
            return report_error(InputError("--hook reads the JSON payload of Codex's PostToolUse hook "
                                           "on stdin", hint="run it from Codex's hooks.json, or pipe a "
                                           "payload into it"))
        return lint_hook(paths, strict=strict, codex_home=codex_home)
    from memcite.lint import output
    from memcite.lint.run import default_paths, lint_targets

    try:
        check_choice(format, FORMATS, "--format")
        if json and format != "text":
            raise InputError("--json and --format github cannot be used together",
                             hint="pick one output")
        defaults = [] if paths else default_paths(Locations(codex_home=codex_home).codex_home_path)
        targets, report = lint_targets(paths, defaults)
        if not paths and not targets:
            note(f"nothing to lint: neither {' nor '.join(defaults)} exists "
                 "(pass a folder, or --codex-home)")
    except MemciteError as error:
        return report_error(error)
    if json:
        dump_json(output.report_json(report, targets, time.time()))
    else:
        sys.stdout.write(output.render_findings(report.findings, format))
        if format == "text":
            note(output.summary_line(report))
    return 1 if output.counted(report, strict) else 0


def lint_hook(paths: list[str] | None = None, *, strict: bool = False, codex_home: str | None = None,
              stdin=None) -> int:
    """Codex's PostToolUse hook: lint the memory files the tool touched; 2 with findings on stderr.

    Whatever the payload, this never fails: anything it does not understand exits 0 silently.
    """
    try:
        stream = stdin if stdin is not None else sys.stdin.buffer
        data = stream.read(MAX_PAYLOAD_BYTES + 1)
        if not data or len(data) > MAX_PAYLOAD_BYTES:
            return 0
        if paths:
            roots = list(paths)
        else:
            from memcite.lint.run import default_paths

            roots = default_paths(Locations(codex_home=codex_home).codex_home_path)
        from memcite.lint.hook import hook_findings_text

        text = hook_findings_text(data, roots, strict)
        if not text:
            return 0
        sys.stderr.write(text)
        return 2
    except (Exception, RecursionError):  # a hook must never break the agent's turn
        return 0


__all__ = ["FORMATS", "lint", "lint_hook"]
