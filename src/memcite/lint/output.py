"""What ``memcite lint`` prints: its findings as text lines, as GitHub workflow commands, or
as the ``--json`` object (``LintOutput`` in ``memcite.contracts.outputs``). Pure functions of a
``memcite.lint.run.LintReport`` (not imported: the hook mode loads this module before it knows
it has anything to lint); the command line writes what they return, the hook mode on stderr.
"""

from __future__ import annotations

from memcite.display import count

FORMATS = ("text", "github")


def finding_text(finding) -> str:
    """One finding as ``path:line:column: severity: message [code]``, and its hint below."""
    line = (f"{finding.path}:{finding.line}:{finding.column}: {finding.severity}: "
            f"{finding.message} [{finding.code}]\n")
    return line + (f"  hint: {finding.hint}\n" if finding.hint else "")


def _escape(value: str, *, property: bool = False) -> str:  # noqa: A002
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return value.replace(":", "%3A").replace(",", "%2C") if property else value


def finding_github(finding) -> str:
    """One workflow command: GitHub shows it as an annotation on the file and line."""
    level = "error" if finding.severity == "error" else "warning"
    message = finding.message + (f" ({finding.hint})" if finding.hint else "")
    return (f"::{level} file={_escape(finding.path, property=True)},line={finding.line},"
            f"col={finding.column},title={_escape('memcite ' + finding.code, property=True)}::"
            f"{_escape(message)}\n")


def render_findings(findings, format: str = "text") -> str:  # noqa: A002 - the --format option
    """Every finding in ``format`` (``text`` or ``github``), in the order given."""
    render = finding_github if format == "github" else finding_text
    return "".join(render(finding) for finding in findings)


def summary_line(report) -> str:
    """The count the text format ends with (on stderr)."""
    return (f"{count(report.errors, 'error')}, {count(report.warnings, 'warning')} in "
            f"{count(report.files, 'file')}")


def report_json(report, paths: list[str], now: float) -> dict:
    """The ``--json`` object (``LintOutput``; the command line's ``dump_json`` adds the ISO time)."""
    return {
        "checked_at": int(now),
        "paths": paths,
        "files": report.files,
        "errors": report.errors,
        "warnings": report.warnings,
        "findings": [finding.to_dict() for finding in report.findings],
    }


def counted(report, strict: bool) -> int:
    """The findings that make the exit code 1: errors, and warnings too with ``--strict``."""
    return report.errors + (report.warnings if strict else 0)


__all__ = ["FORMATS", "counted", "finding_github", "finding_text", "render_findings", "report_json",
           "summary_line"]
