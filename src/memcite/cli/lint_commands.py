"""The body of ``memcite lint`` (and of its ``--hook`` mode); returns the exit code.

Shared by the Typer command (``memcite.cli.lint_app``) and the fast path: imports
neither Typer nor rich, and the hook mode imports nothing it does not need.
"""

from __future__ import annotations

import os
import sys
import time

from memcite.cli.console import check_choice, dump_json, note, report_error
from memcite.errors import InputError, MemciteError
from memcite.paths import Locations

FORMATS = ("text", "github")
MAX_PAYLOAD_BYTES = 16 * 1024 * 1024


def default_paths(codex_home: str | None) -> list[str]:
    """``memcite.lint.run.default_paths`` under the Codex home ``--codex-home`` names (else
    ``$CODEX_HOME``, else ``~/.codex``)."""
    from memcite.lint.run import default_paths as under_home

    return under_home(Locations(codex_home=codex_home).codex_home_path)


def _text(finding) -> str:
    line = (f"{finding.path}:{finding.line}:{finding.column}: {finding.severity}: "
            f"{finding.message} [{finding.code}]\n")
    return line + (f"  hint: {finding.hint}\n" if finding.hint else "")


def _escape(value: str, *, property: bool = False) -> str:  # noqa: A002
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return value.replace(":", "%3A").replace(",", "%2C") if property else value


def _github(finding) -> str:
    """One workflow command: GitHub shows it as an annotation on the file and line."""
    level = "error" if finding.severity == "error" else "warning"
    message = finding.message + (f" ({finding.hint})" if finding.hint else "")
    return (f"::{level} file={_escape(finding.path, property=True)},line={finding.line},"
            f"col={finding.column},title={_escape('memcite ' + finding.code, property=True)}::"
            f"{_escape(message)}\n")


def _counted(report, strict: bool) -> int:
    return report.errors + (report.warnings if strict else 0)


def _report_json(report, paths: list[str]) -> dict:
    now = time.time()
    return {
        "checked_at": int(now),  # dump_json adds checked_at_iso
        "paths": paths,
        "files": report.files,
        "errors": report.errors,
        "warnings": report.warnings,
        "findings": [finding.to_dict() for finding in report.findings],
    }


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
    try:
        check_choice(format, FORMATS, "--format")
        if json and format != "text":
            raise InputError("--json and --format github cannot be used together",
                             hint="pick one output")
        if paths:
            for path in paths:
                if not os.path.exists(path):
                    raise InputError(f"{path}: no such file or folder",
                                     hint="name a memory folder or file, or give no path for the defaults")
            targets = list(paths)
        else:
            targets = [path for path in default_paths(codex_home) if os.path.isdir(path)]
            if not targets:
                note(f"nothing to lint: neither {' nor '.join(default_paths(codex_home))} exists "
                     "(pass a folder, or --codex-home)")
        from memcite.lint.run import lint_paths

        report = lint_paths(targets)
    except MemciteError as error:
        return report_error(error)
    if json:
        dump_json(_report_json(report, targets))
    else:
        render = _github if format == "github" else _text
        sys.stdout.write("".join(render(finding) for finding in report.findings))
        if format == "text":
            note(f"{report.errors} error(s), {report.warnings} warning(s) in {report.files} file(s)")
    return 1 if _counted(report, strict) else 0


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
        from memcite.untrusted import loads_json

        payload = loads_json(data)
        roots = list(paths) if paths else default_paths(codex_home)
        from memcite.lint.hook_paths import touched_memory_files

        touched = touched_memory_files(payload, roots)
        if not touched:
            return 0
        return _lint_touched(touched, roots, strict)
    except (Exception, RecursionError):  # a hook must never break the agent's turn
        return 0


def _lint_touched(touched: list[str], roots: list[str], strict: bool) -> int:
    from memcite.lint.run import lint_paths

    real_roots = [os.path.realpath(root) for root in roots]
    folders: list[str] = []
    for path in touched:
        if not os.path.isfile(path):
            continue
        root = next((r for r in real_roots if path.startswith(r.rstrip(os.sep) + os.sep)), None)
        folder = root or os.path.dirname(path)
        if folder not in folders:
            folders.append(folder)
    if not folders:
        return 0
    report = lint_paths(folders)
    wanted = set(touched)
    findings = [f for f in report.findings if os.path.realpath(f.path) in wanted
                and (strict or f.severity == "error")]
    if not findings:
        return 0
    sys.stderr.write("memcite lint: the memory files just changed have problems; fix them:\n")
    sys.stderr.write("".join(_text(finding) for finding in findings))
    return 2


__all__ = ["FORMATS", "default_paths", "lint", "lint_hook"]
