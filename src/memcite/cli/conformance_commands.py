"""The bodies of ``memcite conformance export|check|fuzz``; each returns the exit code.

Free of Typer. The work is ``memcite.conformance`` (``corpus.export_corpus``,
``check.check_reader``, ``fuzz.fuzz_reader``, and their text); this module checks the
options' choices, calls, prints the text or ``--json`` report, and maps findings to exit 1.
"""

from __future__ import annotations

import sys

from memcite.cli.console import check_choice, dump_json, report_error
from memcite.errors import EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_OK, MemciteError

KIND_CHOICES = ("reply", "truncation")
EXPORT_CHOICES = ("jsonl", "json")


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
    from memcite.conformance.check import check_reader, disagreement_lines, render_check_summary

    def progress(case, found):
        if found is not None and not json:
            sys.stdout.write("\n".join(disagreement_lines(found)) + "\n")
            sys.stdout.flush()

    try:
        check_choice(kind, KIND_CHOICES, "--kind")
        report = check_reader(command, corpus, kind, fields, timeout, progress)
    except MemciteError as error:
        return report_error(error)
    except KeyboardInterrupt:
        sys.stderr.write("memcite: interrupted\n")
        return EXIT_INTERRUPTED
    if json:
        dump_json(report)
    else:
        sys.stdout.write(render_check_summary(report, timeout))
    return EXIT_FINDINGS if report["disagreements"] else EXIT_OK


def fuzz(command: list[str], seconds: float = 60.0, seed: int = 0, max_cases: int | None = None,
         out: str | None = None, fields: str | None = None, timeout: float = 10.0,
         corpus: str | None = None, json: bool = False) -> int:  # noqa: A002
    """Fuzz ``command`` against memcite; exit 1 when a disagreement was found."""
    from memcite.conformance.fuzz import fuzz_reader, progress_line, render_fuzz_summary

    def progress(index, found):
        if not json:
            sys.stdout.write(progress_line(index, found))
            sys.stdout.flush()

    try:
        report = fuzz_reader(command, seconds, seed, max_cases, out, fields, timeout, corpus,
                             progress)
    except MemciteError as error:
        return report_error(error)
    except KeyboardInterrupt:
        sys.stderr.write("memcite: interrupted\n")
        return EXIT_INTERRUPTED
    if json:
        dump_json(report)
    else:
        sys.stdout.write(render_fuzz_summary(report))
    return EXIT_FINDINGS if report["disagreements"] else EXIT_OK
