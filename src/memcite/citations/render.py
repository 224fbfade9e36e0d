"""Writing a citation block in the form the model is asked to use (docs/citation-format.md §1)."""

from __future__ import annotations

from memcite.citations.models import Citation
from memcite.citations.reading import tags


def render_citation(citation: Citation) -> str:
    """The ``<oai-mem-citation>`` block for ``citation``, one entry and one id per line."""
    t = tags()
    lines = [t.block_open]
    if citation.entries:
        lines.append(t.entries_open)
        lines.extend(
            f"{e.path}:{e.line_start}-{e.line_end}|note=[{e.note}]" for e in citation.entries
        )
        lines.append(t.entries_close)
    if citation.rollout_ids:
        lines.append(t.ids_open)
        lines.extend(citation.rollout_ids)
        lines.append(t.ids_close)
    lines.append(t.block_close)
    return "\n".join(lines)
