"""Lint: checks of memory files (tiers, supersession, provenance, Codex's formats) and the hook.

It builds on ``memcite.retention`` (the entry reader) and ``memcite.citations``; the
notes wing may use it. Entry points: ``memcite.lint.run.lint_paths`` and the pure
checks in ``entry_checks`` and ``folder_checks``.
"""
