"""The ``codex`` profile: exactly the summary Codex injects (trimmed by Rust's rule, cut in the
middle by the 4-bytes rule); nothing when it is missing, unreadable, not UTF-8 or empty."""

from __future__ import annotations

import os

from memcite.readpath.instruction_values import DEFAULT_BUDGET, SUMMARY_FILE, Instructions, SourceUse
from memcite.readpath.template import render_instructions
from memcite.rust_text import rust_trim


def codex_summary(text: str, budget: int = DEFAULT_BUDGET) -> str:
    """The summary as Codex injects it: trimmed (Rust's rule), then cut by the 4-bytes rule."""
    from memcite.readpath.truncation import truncate_approx

    return truncate_approx(rust_trim(text), budget)


# Codex's read path of memory store v2, verbatim as Codex 0.171.0 injects it (captured from
# the real binary by tests/e2e/test_e2e_store_v2.py, which checks it byte for byte): its
# placeholders are filled in one pass, so a summary holding one is left as it is.
V2_TEMPLATE = "codex_read_path_v2.md"
_V2_PLACEHOLDER = r"\{\{ (base_path|memory_summary) \}\}"


def render_v2(memory_root: str, summary: str) -> str:
    """Codex's v2 developer message for ``summary`` (already trimmed and cut)."""
    import re

    with open(os.path.join(os.path.dirname(__file__), "templates", V2_TEMPLATE),
              encoding="utf-8") as handle:
        template = handle.read()
    values = {"base_path": memory_root, "memory_summary": summary}
    return re.sub(_V2_PLACEHOLDER, lambda found: values[found.group(1)], template)


def build_codex(
    memory_root: str, summary_data: bytes | None, budget: int, tokenizer_name: str, load_tokenizer,
    store: str = "v1",
) -> Instructions:
    """The ``codex`` profile's instructions from the summary's bytes (None: no summary);
    ``store`` v2: Codex's v2 read path, byte for byte."""
    from memcite.readpath.truncation import approx_token_count, truncate_approx

    summary_path = os.path.join(memory_root, SUMMARY_FILE)
    warnings: list[str] = []
    text = None
    if summary_data is not None:
        try:
            text = summary_data.decode("utf-8")
        except UnicodeDecodeError as exc:
            warnings.append(
                f"{summary_path}: invalid UTF-8 at byte offset {exc.start}; "
                "Codex injects no memory instructions"
            )
    trimmed = rust_trim(text) if text is not None else ""
    summary = truncate_approx(trimmed, budget) if trimmed else ""
    if not summary:
        return Instructions(
            None, None, False, budget, 0, (), "codex", tokenizer_name, 0, tuple(warnings)
        )
    truncated = summary != trimmed
    count = approx_token_count if tokenizer_name == "approx" else load_tokenizer().count
    used = count(summary)
    omitted = len(trimmed.encode("utf-8")) - len(summary.encode("utf-8")) if truncated else 0
    use = SourceUse(
        "global",
        summary_path,
        used,
        truncated,
        omitted_bytes=max(omitted, 0),
        omitted_tokens=-(-(len(trimmed.encode("utf-8")) - 4 * budget) // 4) if truncated else 0,
        omitted_exact=False,
    )
    instructions = render_v2(memory_root, summary) if store == "v2" \
        else render_instructions(memory_root, summary, use)
    return Instructions(
        instructions,
        summary,
        truncated,
        budget,
        used,
        (use,),
        "codex",
        tokenizer_name,
        count(instructions) - used,
        tuple(warnings),
    )
