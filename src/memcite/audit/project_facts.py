"""What a project names as its own, read from its folder when it is on this machine.

The judgement (``memcite.judgement.effects``) calls a command the project's own when it is
one of the project's scripts or targets, and a host the project's own when the project names
it. ``project_facts(folder)`` reads, bounded and without following a link out of the folder:
the targets of its ``Makefile``, the recipes of its ``justfile``, the scripts of its
``package.json`` (as ``npm run``/``pnpm``/``yarn``/``bun run`` run them), the scripts of its
``pyproject.toml`` (``[project.scripts]``, ``[tool.poe.tasks]``), the host and path of its
git remotes (``.git/config``) and the hosts its own docs link to (``README``, ``AGENTS.md``,
``CONTRIBUTING`` at its root; tracked, when its git index says). On a forge or registry that
hosts everyone (github.com, pypi.org...) only the project's own path there is the project's:
anyone can put a payload at github.com/someone/else. A folder that is not there gives no facts
(``known`` false: the common runners then count as the project's).
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
    from memcite.untrusted import read_small_text

    return read_small_text(os.path.join(folder, name), MAX_FILE_BYTES)


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


# Hosts where anyone can publish: a URL there is the project's only under the project's path.
SHARED_HOSTS = frozenset({
    "github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "sr.ht", "git.sr.ht",
    "raw.githubusercontent.com", "gist.github.com", "pypi.org", "npmjs.com", "www.npmjs.com",
    "crates.io", "hub.docker.com", "huggingface.co", "pastebin.com", "readthedocs.io",
    "medium.com", "dev.to", "youtube.com", "www.youtube.com", "twitter.com", "x.com",
    "discord.gg", "discord.com"})
_DOC_URL = re.compile(r"https?://([A-Za-z0-9.-]+\.[A-Za-z]{2,})(?::\d+)?((?:/[\w.~%-]+){0,2})")
DOC_FILES = ("README.md", "README.rst", "README", "AGENTS.md", "CONTRIBUTING.md",
             "CONTRIBUTING.rst")
MAX_DOC_HOSTS = 200


def _own_place(host: str, path: str) -> str | None:
    """What a URL makes the project's own: its host, or on a shared host the host and the
    first two parts of the path (None when that path is too short to be anyone's)."""
    host = host.lower().rstrip(".")
    if host not in SHARED_HOSTS:
        return host
    parts = [part for part in path.lower().rstrip(".,;:").split("/") if part][:2]
    return f"{host}/{'/'.join(parts)}" if len(parts) == 2 else None


def _remote_hosts(text: str) -> set[str]:
    out = set()
    for url in _REMOTE.findall(text):
        url = re.sub(r"^[a-z+]+://(?:[^@/]+@)?", "", url)
        url = re.sub(r"^[^@/]+@", "", url).replace(":", "/", 1)
        url = url[:-4] if url.endswith(".git") else url
        if url:
            host, _slash, path = url.lower().partition("/")
            out.add(url.lower())
            place = _own_place(host, "/" + path)
            if place:
                out.add(place)
    return out


def _doc_hosts(folder: str, files) -> set[str]:
    """The hosts (or shared hosts' project paths) the project's own docs link to; a doc the
    project's git index (``files``) does not track is not the project's word."""
    out: set[str] = set()
    for name in DOC_FILES:
        if files is not None and not files.tracked(name, folder):
            continue
        text = _read(folder, name)
        for host, path in _DOC_URL.findall(text or ""):
            place = _own_place(host, path)
            if place and len(out) < MAX_DOC_HOSTS:
                out.add(place)
    return out


_UNREAD = object()


def project_facts(folder: str | None, tracked=_UNREAD) -> ProjectFacts:
    """The scripts, targets and hosts the project at ``folder`` names (no facts when absent);
    ``tracked``: its ``memcite.audit.git_index.tracked_files``, when the caller read them."""
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
    if tracked is _UNREAD:
        from memcite.audit.git_index import tracked_files

        tracked = tracked_files(folder)
    hosts |= _doc_hosts(folder, tracked)
    return ProjectFacts(commands=frozenset(commands), hosts=frozenset(hosts), known=found)
