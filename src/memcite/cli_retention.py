"""Commands added to the ``memcite`` Typer app (placeholder until this group is built)."""

from __future__ import annotations


def register(app) -> None:
    """Add this module's commands to ``app``."""
