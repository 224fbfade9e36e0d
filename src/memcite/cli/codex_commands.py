"""The bodies of ``memcite setup codex`` and ``memcite doctor``; each returns the exit code.

Typer-free like the other ``*_commands`` modules: the Typer wrappers in
``memcite.cli.codex_app`` only declare the options (and say which commands this
memcite has, for ``setup``).
"""

from __future__ import annotations

import os
import sys

from memcite.cli.console import dump_json, report_error
from memcite.errors import InputError, MemciteError
from memcite.paths import Locations


def memcite_command() -> list[str]:
    """How Codex should start this memcite: the absolute path of its ``memcite`` script (the
    one beside this interpreter, as in a virtual environment, else the one on PATH), else
    ``python -m memcite`` with this interpreter. Codex runs hooks with ``/bin/bash -c`` and
    MCP servers with a cleaned environment: a bare ``memcite`` may not be found there."""
    import shutil

    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "memcite")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return [beside]
    found = shutil.which("memcite")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "memcite"]


def setup_codex(
    codex_home: str | None = None,
    project: bool = False,
    apply: bool = False,
    remove: bool = False,
    commands: frozenset[str] = frozenset(),
    cwd: str | None = None,
    governance: bool = False,
    gate: bool = False,
    trust: bool = False,
) -> int:
    """Show (or, with ``apply``, make) the edits that wire memcite into Codex; ``remove`` undoes them.

    ``commands`` names what this memcite has among ``lint --hook`` (as ``"lint --hook"``),
    ``mcp`` and ``hook pre-tool``: only those are wired in (``gate`` without ``hook
    pre-tool`` is refused, exit 2). ``governance`` adds the directives to ``AGENTS.md`` in
    Codex's memory folder and in the project (the git work tree holding ``cwd``)
    (``memcite.codex.setup_run.setup_codex_home``).
    """
    from memcite.codex.setup import MEMCITE_FOLDER_VARIABLES
    from memcite.codex.setup_run import setup_codex_home

    try:
        if project and codex_home:
            raise InputError("--project sets up the repository's .codex/ folder; "
                             "give it or --codex-home, not both")
        where = Locations(codex_home=codex_home)
        return setup_codex_home(
            home=os.path.abspath(where.codex_home_path), cwd=cwd or os.getcwd(),
            project=project, apply=apply, remove=remove, commands=commands,
            governance=governance, gate=gate, memcite=memcite_command(),
            env=where.variables_set(MEMCITE_FOLDER_VARIABLES), write=sys.stdout.write,
            trust=trust)
    except MemciteError as error:
        return report_error(error)
    except OSError as exc:
        return report_error(MemciteError(f"{exc.filename or 'setup'}: {exc.strerror or exc}; "
                                         "the files that were not written are unchanged"))


def doctor(
    codex_home: str | None = None,
    db: str | None = None,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
    cwd: str | None = None,
) -> int:
    """Print one line per check (or one JSON object); exit 1 when any check fails."""
    from memcite.codex.doctor import FAILURE, DoctorInputs, report_dict, run_checks

    where = Locations(db=db, codex_home=codex_home)
    inputs = DoctorInputs(
        codex_home=where.codex_home_path,
        db_path=where.db_path,
        log_path=where.hook_log,
        cache_dir=where.cache_dir,
        cwd=cwd or os.getcwd(),
        environ=where.environ,
        config_path=where.config.path,
        codex_home_from=where.codex_home.origin,
    )
    checks = run_checks(inputs)
    if json:
        dump_json(report_dict(inputs, checks))
    else:
        for check in checks:
            sys.stdout.write(check.line() + "\n")
    return 1 if any(check.status == FAILURE for check in checks) else 0
