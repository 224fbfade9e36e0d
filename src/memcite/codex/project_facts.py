"""What a project names as its own, read from its folder when it is on this machine.

The judgement (``memcite.judgement.effects``) calls a command the project's own when it is
one of the project's scripts or targets, and a host the project's own when the project names
it. ``project_facts(folder)`` reads, bounded and without following a link out of the folder:
the targets of its ``Makefile``, the recipes of its ``justfile``, the scripts of its
``package.json`` (as ``npm run``/``pnpm``/``yarn``/``bun run`` run them), the scripts of its
``pyproject.toml`` (``[project.scripts]``, ``[tool.poe.tasks]``) and the host and path of its
git remotes (``.git/config``). A folder that is not there gives no facts (``known`` false:
the common runners then count as the project's).
"""

from __future__ import annotations

import os
import re

from memcite.judgement.effects import NO_FACTS, ProjectFacts

MAX_FILE_BYTES = 512 * 1024
_MAKE_TARGET = re.compile(r"^([A-Za-z0-9][\w.-]*)\s*:(?!=)", re.MULTILINE)
_JUST_RECIPE = re.compile(r"^@?([A-Za-z0-9][\w-]*)(?:\s+[^:=\n]*)?:(?!=)", re.MULTILINE)
_REMOTE = re.compile(r"^\s*url\s*=\s*(\S+)", re.MULTILINE)


def _read(folder: str, name: str) -> str | None:
    from memcite.untrusted import open_regular

    path = os.path.join(folder, name)
    try:
        if os.path.islink(path):
            return None
        with os.fdopen(open_regular(path), "rb") as handle:
            return handle.read(MAX_FILE_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None


def _package_scripts(text: str) -> set[str]:
    from memcite.untrusted import loads_json

    try:
        scripts = loads_json(text).get("scripts")
    except (ValueError, AttributeError):
        return set()
    out = set()
    for name in scripts if isinstance(scripts, dict) else ():
        if isinstance(name, str) and name and len(name) < 100:
            out |= {f"npm run {name}", f"pnpm {name}", f"pnpm run {name}", f"yarn {name}",
                    f"yarn run {name}", f"bun run {name}"}
            if name in ("test", "start"):
                out.add(f"npm {name}")
    return out


def _pyproject_scripts(text: str) -> set[str]:
    from memcite.untrusted import loads_toml

    try:
        data = loads_toml(text)
    except ValueError:
        return set()
    out = set()
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    scripts = project.get("scripts") if isinstance(project.get("scripts"), dict) else {}
    out |= {name for name in scripts if isinstance(name, str)}
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    poe = tool.get("poe") if isinstance(tool.get("poe"), dict) else {}
    tasks = poe.get("tasks") if isinstance(poe.get("tasks"), dict) else {}
    out |= {f"poe {name}" for name in tasks if isinstance(name, str)}
    return out


def _remote_hosts(text: str) -> set[str]:
    out = set()
    for url in _REMOTE.findall(text):
        url = re.sub(r"^[a-z+]+://(?:[^@/]+@)?", "", url)
        url = re.sub(r"^[^@/]+@", "", url).replace(":", "/", 1)
        url = url[:-4] if url.endswith(".git") else url
        if url:
            out.add(url.lower())
            out.add(url.split("/", 1)[0].lower())
    return out


def project_facts(folder: str | None) -> ProjectFacts:
    """The scripts, targets and hosts the project at ``folder`` names (no facts when absent)."""
    if not folder or not os.path.isdir(folder):
        return NO_FACTS
    commands: set[str] = set()
    found = False
    for name in ("Makefile", "makefile", "GNUmakefile"):
        text = _read(folder, name)
        if text is not None:
            found = True
            commands |= {f"make {target}" for target in _MAKE_TARGET.findall(text)}
    for name in ("justfile", "Justfile", ".justfile"):
        text = _read(folder, name)
        if text is not None:
            found = True
            commands |= {f"just {recipe}" for recipe in _JUST_RECIPE.findall(text)}
    text = _read(folder, "package.json")
    if text is not None:
        found = True
        commands |= _package_scripts(text)
    text = _read(folder, "pyproject.toml")
    if text is not None:
        found = True
        commands |= _pyproject_scripts(text)
    git = _read(os.path.join(folder, ".git"), "config") if os.path.isdir(
        os.path.join(folder, ".git")) else None
    hosts = _remote_hosts(git) if git else set()
    return ProjectFacts(commands=frozenset(commands), hosts=frozenset(hosts), known=found)
