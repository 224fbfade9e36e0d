"""What a draft entry must pass before it is saved: secrets, and the questions a person must answer.

``secret_findings`` runs ``memcite.secrets.scan`` over an entry's whole content.
``confirmation_reasons`` lists why a person should confirm a save: a sensitive
subject, another project's slug, or a path inside another project that has a note.
Pure functions of their inputs, apart from listing the other projects' slugs and
looking up where a named path's project is.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from memcite.readpath.projects import find_project_root, project_slug

_SENSITIVE = (
    "password", "passphrase", "credential", "credentials", "private key", "secret key",
    "api key", "access key", "social security", "ssn", "salary", "medical", "diagnosis",
    "home address", "date of birth", "bank account", "credit card", "personal data",
)


# A credential named as the subject of a rule about it ("the password policy requires 12
# characters", "API key rotation rules") is about the rule, not a credential: not sensitive
# by itself (a secret in the text is still found by the secret scan, and any other mention
# of the word still asks).
_CREDENTIALS = ("password", "passphrase", "credential", "credentials", "private key",
                "secret key", "api key", "access key")
_ABOUT_A_RULE = ("policy", "policies", "rule", "rules", "requirement", "requirements",
                 "complexity", "strength", "length", "minimum length", "validation",
                 "validator", "expiry policy", "rotation policy")


def _alternatives(words) -> str:
    return "|".join(re.escape(word).replace(r"\ ", r"[\s_-]+") for word in words)


@lru_cache(maxsize=1)
def _sensitive_re() -> re.Pattern:
    others = [word for word in _SENSITIVE if word not in _CREDENTIALS]
    rule = rf"(?![\s_-]+(?:{_alternatives(_ABOUT_A_RULE)})\b)"
    return re.compile(rf"(?i)\b((?:{_alternatives(_CREDENTIALS)})\b{rule}"
                      rf"|(?:{_alternatives(others)})\b)")


@lru_cache(maxsize=1)
def _path_re() -> re.Pattern:
    return re.compile(r"(?<![\w:/.])(~?/[^\s`'\"()<>\[\],;]+)")


def sensitive_subjects(text: str) -> list[str]:
    """The sensitive subjects ``text`` mentions (lower-cased, once each)."""
    seen: list[str] = []
    for match in _sensitive_re().finditer(text):
        word = " ".join(match.group(1).lower().replace("_", " ").replace("-", " ").split())
        if word not in seen:
            seen.append(word)
    return seen


def named_paths(text: str) -> list[str]:
    """Absolute (or ``~``) paths written in ``text``, URLs excluded."""
    return [match.group(1).rstrip(".:") for match in _path_re().finditer(text)]


def other_projects(text: str, *, project: str, slug: str, home: str) -> list[str]:
    """Sentences naming the other projects ``text`` points at: their slugs, or paths inside them."""
    reasons: list[str] = []
    projects_dir = os.path.join(home, "memory", "projects")
    try:
        slugs = [name for name in os.listdir(projects_dir) if name != slug]
    except OSError:
        slugs = []
    for other in slugs:
        if re.search(rf"(?<![\w-]){re.escape(other)}(?![\w-])", text):
            reasons.append(f"names another project's note ({other})")
    for path in named_paths(text):
        full = os.path.expanduser(path)
        if full == project or full.startswith(project.rstrip("/") + "/"):
            continue
        root = find_project_root(full if os.path.exists(full) else _existing_parent(full))
        if root == project:
            continue
        other = project_slug(root)
        if os.path.isfile(os.path.join(projects_dir, other, "memory.md")):
            reasons.append(f"names {path}, inside the project {root} that has its own note")
    return reasons


def _existing_parent(path: str) -> str:
    while path and not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path or "/"


def project_paths(text: str, *, project: str, slug: str) -> list[str]:
    """What in ``text`` names this project: its folder, its slug, absolute paths inside it, and
    relative paths (in backticks, or shaped like ``dir/file.ext``) that exist in it."""
    found: list[str] = []

    def add(word: str) -> None:
        if word not in found:
            found.append(word)

    if project != "/" and project in text:
        add(project)
    if slug in text:
        add(slug)
    for path in named_paths(text):
        full = os.path.normpath(os.path.expanduser(path))
        if full == project or full.startswith(project.rstrip("/") + "/"):
            add(path)
    candidates = re.findall(r"`([^`\s]+)`", text)
    candidates += re.findall(r"(?<![\w/.:~-])((?:[\w.-]+/)+[\w.-]+)", text)
    for candidate in candidates:
        candidate = candidate.rstrip(".,:;")
        if "://" in candidate or os.path.isabs(candidate) or candidate.startswith(("~", "-")):
            continue
        if ("/" in candidate or "." in candidate) and os.path.lexists(
                os.path.join(project, candidate)):
            add(candidate)
    return found
