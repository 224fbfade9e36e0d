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

TRUST_STEP = (
    "One step only you can take: Codex runs a new or changed hook only once you trust it, and "
    "skips an untrusted one silently. Start Codex, type /hooks, and trust {hooks}. "
    "`memcite doctor` tells whether they are trusted."
)


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


def memcite_folders(environ=os.environ) -> dict[str, str]:
    """memcite's own folders set in the environment, as absolute paths, for the MCP entry."""
    from memcite.codex.setup import MEMCITE_FOLDER_VARIABLES
    from memcite.paths import Locations

    return Locations(environ=environ).variables_set(MEMCITE_FOLDER_VARIABLES)


def setup_codex(
    codex_home: str | None = None,
    project: bool = False,
    apply: bool = False,
    remove: bool = False,
    commands: frozenset[str] = frozenset(),
    cwd: str | None = None,
    governance: bool = False,
    gate: bool = False,
) -> int:
    """Show (or, with ``apply``, make) the edits that wire memcite into Codex; ``remove`` undoes them.

    ``commands`` names what this memcite has among ``lint --hook`` (as ``"lint --hook"``),
    ``mcp`` and ``hook pre-tool``: only those are wired in (``gate`` without ``hook
    pre-tool`` is refused, exit 2). ``governance`` adds the directives to ``AGENTS.md`` in
    Codex's memory folder and in the project (the git work tree holding ``cwd``).
    """
    from memcite.codex.setup import apply_plan, plan_setup, project_root, read_installed_hooks

    try:
        if project and codex_home:
            raise InputError("--project sets up the repository's .codex/ folder; "
                             "give it or --codex-home, not both")
        if gate and not remove and "hook pre-tool" not in commands:
            raise InputError("--gate: this memcite has no `memcite hook pre-tool` command, "
                             "so there is no pre-tool gate to install; nothing written",
                             hint="update memcite to a version with `memcite hook pre-tool`, "
                             "or run setup without --gate")
        home = os.path.abspath(Locations(codex_home=codex_home).codex_home_path)
        here = cwd or os.getcwd()
        if project:
            folder = os.path.join(project_root(here), ".codex")
        else:
            folder = home
            if not os.path.isdir(folder):
                raise InputError(f"{folder}: no such folder (is Codex installed?)",
                                 hint="pass Codex's home with --codex-home or CODEX_HOME")
        memory_folder = project_folder = None
        notes = []
        if governance or remove:
            memory_folder, project_folder, notes = _governance_folders(home, here, governance)
        plan = plan_setup(folder, lint="lint --hook" in commands, mcp="mcp" in commands,
                          remove=remove, memcite=memcite_command(), codex_home=home,
                          env=memcite_folders(), gate=gate, governance=governance,
                          memory_folder=memory_folder, project_folder=project_folder)
        plan.notes.extend(notes)
        out = sys.stdout
        what = "remove memcite from" if remove else "set up memcite in"
        if not plan.changed:
            out.write(f"{folder}: nothing to change (memcite is "
                      f"{'not set up' if remove else 'already set up'} there)\n")
        elif not apply:
            out.write(plan.diff())
            out.write(f"\nThis would {what} {folder}. Nothing was written; run again with "
                      "--apply to make the change (each changed file is backed up first).\n")
        else:
            backups = apply_plan(plan)
            for change in plan.changes:
                if change.changed:
                    verb = ("removed" if change.after is None else
                            "created" if change.before is None else "updated")
                    out.write(f"{verb} {change.path}\n")
            for backup in backups:
                out.write(f"backup: {backup}\n")
        for note in plan.notes:
            out.write(f"note: {note}\n")
        if not remove and (apply or not plan.changed):
            hooks = read_installed_hooks(folder, home)
            for hook in hooks:
                out.write(f"hook {hook.event}: `{hook.command}` ({hook.trust.status} in Codex)\n")
            waiting = [hook for hook in hooks if hook.trust.status != "trusted"]
            if waiting:
                events = [hook.event for hook in waiting]
                names = events[0] if len(events) == 1 else \
                    ", ".join(events[:-1]) + " and " + events[-1]
                out.write("\n" + TRUST_STEP.format(
                    hooks=f"memcite's {names} hook{'s' if len(events) > 1 else ''}") + "\n")
    except MemciteError as error:
        return report_error(error)
    except OSError as exc:
        return report_error(MemciteError(f"{exc.filename or 'setup'}: {exc.strerror or exc}; "
                                         "the files that were not written are unchanged"))
    return 0


def _governance_folders(home: str, cwd: str, adding: bool) -> tuple[str | None, str | None,
                                                                    list[str]]:
    """Where ``--governance`` writes: the memory folder of the store Codex reads in ``home``
    (its consolidation agent's working directory), and the root of the git work tree holding
    ``cwd`` (None outside one: no project to give the pre-retrieval directives to)."""
    from memcite.codex.setup import project_root
    from memcite.ledger.codex_home import CodexHomeError, locate_codex_home

    notes = []
    try:
        memory_folder = locate_codex_home(home, cwd=cwd).memory_folder
    except CodexHomeError:
        if adding:
            raise
        memory_folder = None
    root = project_root(cwd)
    project_folder = root if os.path.exists(os.path.join(root, ".git")) else None
    if project_folder is None and adding:
        notes.append(f"{cwd} is in no git repository: the pre-retrieval directives go into "
                     "the project's AGENTS.md, so run setup from the project to add them")
    return memory_folder, project_folder, notes


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
    )
    checks = run_checks(inputs)
    if json:
        dump_json(report_dict(inputs, checks))
    else:
        for check in checks:
            sys.stdout.write(check.line() + "\n")
    return 1 if any(check.status == FAILURE for check in checks) else 0
