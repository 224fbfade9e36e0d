"""The bodies of ``memcite trace`` and ``memcite audit``: call one library function, print.

Typer-free like the other ``*_commands`` modules (``memcite.cli.audit_app`` declares the
options); each returns the exit code: 0 done, 1 (audit) a high-severity finding, 2 bad input.
"""

from __future__ import annotations

import os
import sys

from memcite.audit.audit_text import render_audit, render_trace
from memcite.cli.console import check_choice, dump_json, report_error
from memcite.errors import MemciteError
from memcite.paths import Locations


def _quarantine(located, report: dict, *, db: str | None, apply: bool, json: bool) -> int:  # noqa: A002
    import time

    from memcite.audit.memory_quarantine import quarantine_on_request, render_quarantine
    from memcite.ledger.database import ledger_opener

    where = Locations(db=db, codex_home=located.codex_home_path)
    done = quarantine_on_request(located.codex_home_path,
                                 ledger_opener(where, write=apply, missing_is_none=not apply),
                                 apply=apply, now=int(time.time()), db_path=where.db_path,
                                 audit=report)
    if json:
        dump_json(done)
    else:
        sys.stdout.write(render_quarantine(done))
    return 1 if done["would_ask"] and not apply else 0


def trace(ident: str, codex_home: str | None = None, db: str | None = None,
          json: bool = False, cwd: str | None = None) -> int:  # noqa: A002 - the --json flag
    """Print the provenance of one memory or memory-folder line."""
    from memcite.audit.memory_trace import trace as trace_memory

    try:
        located = Locations(db=db, codex_home=codex_home)
        report = trace_memory(located.codex_home_path, ident, db_path=located.db_path,
                              env_sqlite_home=located.codex_sqlite_home_env,
                              cwd=cwd or os.getcwd(), cache_dir=located.cache_dir)
    except MemciteError as error:
        return report_error(error)
    except OSError as exc:
        return report_error(MemciteError(f"{exc.filename or 'trace'}: {exc.strerror or exc}"))
    if json:
        dump_json(report)
        return 0
    sys.stdout.write(render_trace(report))
    return 0


AUDIT_FORMATS = ("text", "json", "sarif")
# What an audit's report holds no time in (``memcite.contracts.outputs.AuditFinding``: a test
# holds the audit to it): its findings are printed as they are, not walked for times.
UNTIMED = ("findings",)


def audit(codex_home: str | None = None, project: str | None = None, json: bool = False,  # noqa: A002
          cwd: str | None = None, limit: int = 50, format: str = "text",  # noqa: A002
          quarantine: bool = False, apply: bool = False, db: str | None = None) -> int:
    """Print the audit of the whole memory folder; 1 when a high-severity finding exists.
    ``quarantine``: preview asking Codex to forget the poisoned memories (``apply``: ask)."""
    from memcite.audit.memory_audit import audit_home

    try:
        check_choice(format, AUDIT_FORMATS, "--format")
        if json and format not in ("text", "json"):
            from memcite.errors import InputError

            raise InputError(f"--json and --format {format} cannot be used together",
                             hint="pick one output")
        if quarantine and format == "sarif":
            from memcite.errors import InputError

            raise InputError("--quarantine and --format sarif cannot be used together",
                             hint="memcite audit --quarantine previews as text, or with --json")
        if apply and not quarantine:
            from memcite.errors import InputError

            raise InputError("--apply acts on --quarantine; add --quarantine",
                             hint="memcite audit --quarantine previews, --quarantine --apply asks")
        if project is not None and not os.path.isdir(project):
            from memcite.errors import InputError

            raise InputError(f"--project {project}: no such folder",
                             hint="give the project's folder, e.g. --project .")
        located = Locations(codex_home=codex_home)
        report = audit_home(located.codex_home_path, project=project,
                            env_sqlite_home=located.codex_sqlite_home_env,
                            cwd=cwd or os.getcwd(), cache_dir=located.cache_dir)
        if quarantine:
            return _quarantine(located, report, db=db, apply=apply, json=json or format == "json")
    except MemciteError as error:
        return report_error(error)
    except OSError as exc:
        return report_error(MemciteError(f"{exc.filename or 'audit'}: {exc.strerror or exc}"))
    code = 1 if report["high"] else 0
    if format == "sarif":
        import json as json_module

        from memcite.audit.audit_sarif import audit_sarif

        sys.stdout.write(json_module.dumps(audit_sarif(report), ensure_ascii=False, indent=2) + "\n")
        return code
    if json or format == "json":
        dump_json(report, untimed=UNTIMED)
        return code
    sys.stdout.write(render_audit(report, limit))
    return code
