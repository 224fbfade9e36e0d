"""Why memcite refused to change a note: one exception, its reason from a fixed list, exit 3."""

from __future__ import annotations

from memcite.errors import MemciteError

REASONS = ("secret", "collision", "moved-project", "permissions", "not-writable",
           "needs-confirmation", "project-specific")


class NoteRefusal(MemciteError):
    """Refused for safety: nothing was written. ``details`` go into the ``--json`` refusal object."""

    exit_code = 3

    def __init__(self, reason: str, message: str, **details) -> None:
        if reason not in REASONS:
            raise ValueError(f"unknown refusal reason {reason!r}")
        super().__init__(message)
        self.reason = reason
        self.details = details

    def to_json(self) -> dict:
        return {"refused": {"reason": self.reason, "message": self.message, **self.details}}
