"""A readable name for a memory, shown next to its thread id wherever memcite lists one."""

from __future__ import annotations

# The columns of ``memories`` a label is made from, in ``memory_label``'s order.
LABEL_COLUMNS = "rollout_slug, rollout_summary_file, cwd"


def memory_label(slug: str | None, summary_file: str | None, cwd: str | None) -> str:
    """The memory's slug, else its summary file's stem, else its cwd's last folder, else ``-``."""
    if slug and slug.strip():
        return slug.strip()
    if summary_file and summary_file.strip():
        stem = summary_file.strip().rsplit("/", 1)[-1]
        return stem[:-3] if stem.endswith(".md") else stem
    if cwd and cwd.strip():
        name = cwd.strip().rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]
        return f"(in {name or cwd.strip()})"
    return "-"
