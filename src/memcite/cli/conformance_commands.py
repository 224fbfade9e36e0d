"""The bodies of ``memcite conformance export|check|fuzz``; each returns the exit code.

Free of Typer. The library is ``memcite.conformance``; this module reads the options,
prints the text or ``--json`` report, and maps findings to exit 1.
"""

from __future__ import annotations

import sys

from memcite.cli.console import check_choice, dump_json, report_error
from memcite.errors import EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_OK, InputError, MemciteError

KIND_CHOICES = ("reply", "truncation")
EXPORT_CHOICES = ("jsonl", "json")
MAX_TIMEOUT = 3600.0


def _check_timeout(timeout: float) -> None:
    if not 0 < timeout <= MAX_TIMEOUT:
        raise InputError(f"--timeout: {timeout:g} is not a number of seconds above 0 and at most "
                         f"{MAX_TIMEOUT:g}")


def export(folder: str, export_format: str = "jsonl", json: bool = False) -> int:  # noqa: A002
    """Write the shipped corpus and its case schema into ``folder``."""
    from memcite.conformance.corpus import EXPORT_FORMATS, export_corpus, load_cases

    try:
        check_choice(export_format, EXPORT_FORMATS, "--format")
        count = len(load_cases())
        files = export_corpus(folder, export_format)
    except MemciteError as error:
        return report_error(error)
    if json:
        dump_json({"folder": folder, "format": export_format, "cases": count, "files": files})
    else:
        sys.stdout.write(f"wrote {count} cases to {files[0]}, their schema to {files[1]}\n")
    return EXIT_OK


def check(command: list[str], corpus: str | None = None, kind: str = "reply",
          fields: str | None = None, timeout: float = 10.0, json: bool = False) -> int:  # noqa: A002
    """Run ``command`` over the corpus; exit 1 on any disagreement."""
    from memcite.conformance.check import check_corpus, disagreement_lines, parse_fields
    from memcite.conformance.corpus import CORPUS_FILE, load_cases
    from memcite.conformance.runner import resolve_command

    try:
        check_choice(kind, KIND_CHOICES, "--kind")
        _check_timeout(timeout)
        chosen = parse_fields(fields, kind)
        command = resolve_command(command)
        cases = load_cases(corpus)

        def progress(case, found):
            if found is not None and not json:
                sys.stdout.write("\n".join(disagreement_lines(found)) + "\n")
                sys.stdout.flush()

        report = check_corpus(cases, command, kind, chosen, timeout, progress)
    except MemciteError as error:
        return report_error(error)
    except KeyboardInterrupt:
        sys.stderr.write("memcite: interrupted\n")
        return EXIT_INTERRUPTED
    report = {"corpus": corpus or CORPUS_FILE, **report}
    if json:
        dump_json(report)
    else:
        sys.stdout.write(
            f"{report['cases']} {kind} cases: {report['agreed']} agree, {report['differed']} "
            f"differ, {report['failed']} failed ({', '.join(report['fields'])} compared)\n")
        if report["stopped"] == "timeouts":
            sys.stdout.write(
                f"stopped: the program timed out on {report['timeouts_in_a_row']} cases in a "
                f"row (--timeout {timeout:g} s each), so it answers none; "
                f"{report['not_run']} cases not run. Check that it reads stdin to its end and "
                "prints one JSON object, then run again\n")
    return EXIT_FINDINGS if report["disagreements"] else EXIT_OK


def fuzz(command: list[str], seconds: float = 60.0, seed: int = 0, max_cases: int | None = None,
         out: str | None = None, fields: str | None = None, timeout: float = 10.0,
         corpus: str | None = None, json: bool = False) -> int:  # noqa: A002
    """Fuzz ``command`` against memcite; exit 1 when a disagreement was found."""
    from memcite.conformance.check import parse_fields
    from memcite.conformance.corpus import load_cases
    from memcite.conformance.fuzz import fuzz as run_fuzz
    from memcite.conformance.runner import resolve_command

    try:
        _check_timeout(timeout)
        if not 0 < seconds <= 7 * 24 * 3600:
            raise InputError(f"--seconds: {seconds:g} is not a number of seconds above 0")
        if max_cases is not None and max_cases < 1:
            raise InputError(f"--max-cases: {max_cases} is not 1 or more")
        chosen = parse_fields(fields, "reply")
        command = resolve_command(command)
        cases = load_cases(corpus)

        def progress(index, found):
            if not json:
                sys.stdout.write(f"reply {index}: {found['outcome']}"
                                 + (f" on {', '.join(found['fields'])}" if found["fields"] else "")
                                 + "\n")
                sys.stdout.flush()

        report = run_fuzz(command, cases, seed=seed, seconds=seconds, max_cases=max_cases,
                          out=out, fields=chosen, timeout=timeout, progress=progress)
    except MemciteError as error:
        return report_error(error)
    except KeyboardInterrupt:
        sys.stderr.write("memcite: interrupted\n")
        return EXIT_INTERRUPTED
    if json:
        dump_json(report)
    else:
        for shrunk in report["shrunk"]:
            where = f" -> {shrunk['file']}" if shrunk["file"] else ""
            sys.stdout.write(f"{shrunk['case']}: {shrunk['outcome']}, shrunk from "
                             f"{shrunk['generated_chars']} to {shrunk['reply_chars']} "
                             f"characters{where}\n")
        sys.stdout.write(f"seed {report['seed']}: {report['generated']} replies in "
                         f"{report['seconds']:g} s, {report['disagreements']} disagreement(s), "
                         f"{len(report['shrunk'])} case(s) written\n")
    return EXIT_FINDINGS if report["disagreements"] else EXIT_OK
