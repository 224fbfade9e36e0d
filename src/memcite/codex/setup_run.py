"""``memcite setup codex``'s work: the edits that wire memcite into a Codex home or a
project's ``.codex/`` folder, shown as a diff or made, and what is left for the person to do.

The command resolves where things are (``memcite.paths.Locations``) and calls
``setup_codex_home``, which writes its report through ``write`` as it goes (a failure
half-way leaves what was already said on the screen).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from memcite.errors import InputError

TRUST_STEP = (
    "One step only you can take: Codex runs a new or changed hook only once you trust it, and "
    "skips an untrusted one silently. Start Codex, type /hooks, and trust {hooks}. "
    "`memcite doctor` tells whether they are trusted."
)



def setup_codex_home(*, home: str, cwd: str, project: bool, apply: bool, remove: bool,
                     commands: frozenset[str], governance: bool, gate: bool,
                     memcite: list[str], env: dict[str, str],
                     write: Callable[[str], object], trust: bool = False) -> int:
    """Show (or, with ``apply``, make) the edits that wire memcite into Codex; ``remove``
    undoes them. ``home`` is Codex's home (absolute), ``memcite`` how Codex starts memcite,
    ``env`` memcite's folders for the MCP entry; ``trust`` (the user's own flag) records Codex's
    trust in memcite's hooks in ``home``'s ``config.toml``, as ``/hooks`` does. Raises a
    ``MemciteError`` (or ``OSError``) when nothing can be done; 0 otherwise."""
    from memcite.codex.setup import (
        CONFIG_FILE,
        apply_plan,
        plan_setup,
        project_root,
        read_installed_hooks,
    )

    if gate and not remove and "hook pre-tool" not in commands:
        raise InputError("--gate: this memcite has no `memcite hook pre-tool` command, "
                         "so there is no pre-tool gate to install; nothing written",
                         hint="update memcite to a version with `memcite hook pre-tool`, "
                         "or run setup without --gate")
    if project:
        folder = os.path.join(project_root(cwd), ".codex")
    else:
        folder = home
        if not os.path.isdir(folder):
            raise InputError(f"{folder}: no such folder (is Codex installed?)",
                             hint="pass Codex's home with --codex-home or CODEX_HOME")
    memory_folder = project_folder = None
    notes = []
    if governance or remove:
        memory_folder, project_folder, notes = _governance_folders(home, cwd, governance)
    if trust and remove:
        raise InputError("--trust and --remove: --remove takes the trust entries out anyway; "
                         "give one of them")
    plan = plan_setup(folder, lint="lint --hook" in commands, mcp="mcp" in commands,
                      remove=remove, memcite=memcite, codex_home=home,
                      env=env, gate=gate, governance=governance,
                      memory_folder=memory_folder, project_folder=project_folder,
                      trust=trust, trust_config=os.path.join(home, CONFIG_FILE))
    plan.notes.extend(notes)
    what = "remove memcite from" if remove else "set up memcite in"
    if not plan.changed:
        write(f"{folder}: nothing to change (memcite is "
              f"{'not set up' if remove else 'already set up'} there)\n")
    elif not apply:
        write(plan.diff())
        write(f"\nThis would {what} {folder}. Nothing was written; run again with "
              "--apply to make the change (each changed file is backed up first).\n")
    else:
        backups = apply_plan(plan)
        for change in plan.changes:
            if change.changed:
                verb = ("removed" if change.after is None else
                        "created" if change.before is None else "updated")
                write(f"{verb} {change.path}\n")
        for change in plan.changes:
            if change.changed and change.restored_from is not None:
                write(f"given back: {change.path}, as it was before setup (its backup "
                      f"{change.restored_from} is no longer needed and was removed)\n")
        for backup in backups:
            write(f"backup: {backup} (the file before this change; the next change "
                  "replaces it)\n")
    for note in plan.notes:
        write(f"note: {note}\n")
    if not remove and (apply or not plan.changed):
        hooks = read_installed_hooks(folder, home)
        for hook in hooks:
            write(f"hook {hook.event}: `{hook.command}` ({hook.trust.status} in Codex)\n")
        waiting = [hook for hook in hooks if hook.trust.status != "trusted"]
        if waiting:
            events = [hook.event for hook in waiting]
            names = events[0] if len(events) == 1 else \
                ", ".join(events[:-1]) + " and " + events[-1]
            if trust and not apply:
                write("\n--apply records Codex's trust in memcite's hooks (--trust), as "
                      "/hooks would.\n")
            else:
                write("\n" + TRUST_STEP.format(
                    hooks=f"memcite's {names} hook{'s' if len(events) > 1 else ''}") + "\n")
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
