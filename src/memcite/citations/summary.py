"""A reading as ``memcite parse`` and ``strip`` show it to a person: the problems, one line each,
and a short summary of the citation. Pure functions of a ``Reading`` (or a strict reading's
error); what comes from the reply goes through ``memcite.display.shown``.
"""

from __future__ import annotations

from memcite.citations.models import Reading
from memcite.display import count

MAX_PROBLEMS_SHOWN = 50  # in text; --json lists every one


def problem_lines(diagnostics, name: str) -> list[str]:
    """One line per problem, the first ``MAX_PROBLEMS_SHOWN``, then a count of the rest."""
    from memcite.display import shown

    lines = [f"{name}:{shown(diagnostic)}" for diagnostic in diagnostics[:MAX_PROBLEMS_SHOWN]]
    rest = len(diagnostics) - MAX_PROBLEMS_SHOWN
    if rest > 0:
        lines.append(f"{name}: … and {rest} more problem{'s' if rest != 1 else ''} "
                     "(--json lists every one)")
    return lines


def _more(count: int, stem: str, one: str, many: str) -> list[str]:
    rest = count - MAX_PROBLEMS_SHOWN
    return [f"  … and {rest} more {stem}{one if rest == 1 else many} (--json lists every one)"] \
        if rest > 0 else []


def format_reading(reading: Reading, name: str) -> str:
    """A readable summary of a reading, for people at a terminal."""
    lines: list[str] = []
    citation = reading.citation
    if citation is None:
        lines.append(f"{name}: no citation ({count(len(reading.blocks), 'block')})")
    else:
        lines.append(
            f"{name}: {count(len(citation.entries), 'entry', 'entries')},"
            f" {count(len(citation.rollout_ids), 'rollout id')}, {len(reading.thread_ids)} counted"
            f" ({count(len(reading.blocks), 'block')})"
        )
        for entry in citation.entries[:MAX_PROBLEMS_SHOWN]:
            lines.append(f"  {entry.path}:{entry.line_start}-{entry.line_end}  {entry.note}")
        lines.extend(_more(len(citation.entries), "entr", "y", "ies"))
        for rollout_id in citation.rollout_ids[:MAX_PROBLEMS_SHOWN]:
            lines.append(f"  id {rollout_id}")
        lines.extend(_more(len(citation.rollout_ids), "id", "", "s"))
    if reading.thread_ids:
        shown_ids = ", ".join(reading.thread_ids[:MAX_PROBLEMS_SHOWN])
        rest = len(reading.thread_ids) - MAX_PROBLEMS_SHOWN
        lines.append("counted: " + shown_ids + (f", … and {rest} more" if rest > 0 else ""))
    lines.extend(problem_lines(reading.diagnostics, name))
    return "\n".join(lines) + "\n"


__all__ = ["MAX_PROBLEMS_SHOWN", "format_reading", "problem_lines"]
