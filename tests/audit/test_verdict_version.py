"""The audit keeps its verdicts between runs (``memcite.audit.verdict_cache``) under keys that
hold ``VERSION``: a change to the rules that judge a sentence must come with a new
``VERSION``, or a second audit would print what the old rules decided.

``VERSIONS`` maps each version to the digest of the rules' sources it was set for. When the
rules change, this test fails: bump ``VERSION`` in ``src/memcite/audit/verdict_cache.py`` and
add the new version with the digest the failure prints. An entry once added is never edited."""

from __future__ import annotations

import hashlib
from pathlib import Path

from memcite.audit import verdict_cache

SOURCE = Path(verdict_cache.__file__).resolve().parent.parent
# the modules whose text decides a verdict: the judgement's rules, where words came from,
# what a project names as its own, and the secrets' patterns
RULES = ("judgement/*.py", "audit/provenance.py", "audit/project_facts.py", "secrets.py")

VERSIONS = {
    "verdicts-8": "175fa8267f0e2531afe479ff42640cbd",
    "verdicts-9": "025714af9db88a11077a6d6d0fa21961",
    "verdicts-10": "94cd72f08852889ea62fb047f32607f4",
}


def rules_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(path for pattern in RULES for path in SOURCE.glob(pattern)):
        digest.update(path.relative_to(SOURCE).as_posix().encode() + b"\x00")
        digest.update(path.read_bytes().replace(b"\r\n", b"\n") + b"\x00")
    return digest.hexdigest()[:32]


def test_the_rules_sources_are_found():
    names = {path.relative_to(SOURCE).as_posix() for pattern in RULES for path in SOURCE.glob(pattern)}
    assert {"judgement/severity.py", "judgement/mood.py", "audit/provenance.py", "secrets.py"} <= names


def test_a_change_to_the_rules_comes_with_a_new_verdict_version():
    digest = rules_digest()
    assert VERSIONS.get(verdict_cache.VERSION) == digest, (
        f"the rules' sources changed (digest {digest}) since {verdict_cache.VERSION} was set: "
        "bump VERSION in src/memcite/audit/verdict_cache.py, so that no verdict kept by the old "
        f"rules is reused, and add it to VERSIONS here with {digest!r}")
    assert len(set(VERSIONS.values())) == len(VERSIONS), "one digest, one version"
