"""``memcite lint --hook`` as a library function: Codex's PostToolUse hook payload in, the
findings in the memory files the tool just touched out, as the text the hook prints.

Light: the linting itself (``memcite.lint.run``) is imported only when the tool touched a
memory file.
"""

from __future__ import annotations

from collections.abc import Sequence

HOOK_HEADER = "memcite lint: the memory files just changed have problems; fix them:\n"


def hook_findings_text(data: bytes, roots: Sequence[str], strict: bool) -> str:
    """The findings (errors; warnings too when ``strict``) in the memory files under ``roots``
    that the payload ``data`` says the tool touched, rendered for stderr; "" when there are
    none. A payload that is not JSON raises (the caller's hook exits 0 on anything)."""
    from memcite.lint.hook_paths import touched_memory_files
    from memcite.untrusted import loads_json

    touched = touched_memory_files(loads_json(data), roots)
    if not touched:
        return ""
    from memcite.lint.output import render_findings
    from memcite.lint.run import lint_touched

    findings = lint_touched(touched, roots, strict)
    return HOOK_HEADER + render_findings(findings) if findings else ""


__all__ = ["HOOK_HEADER", "hook_findings_text"]
