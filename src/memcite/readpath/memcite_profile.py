"""The ``memcite`` profile: exact tokens; this project's note first, then the global summary,
inside one budget, cut at section boundaries (the summary's index section kept when it fits),
and the instructions say what was cut and which file holds the rest."""

from __future__ import annotations

import os

from memcite.errors import InputError, MemciteError
from memcite.readpath.instructions import SUMMARY_FILE, Instructions, SourceUse
from memcite.readpath.template import render_instructions
from memcite.rust_text import rust_trim

# The share of the budget the project note may take when the summary needs the rest.
NOTE_SHARE = 0.6
# The index section of the summary is kept after a cut when it fits in this share.
INDEX_SHARE = 0.4
_INDEX_TITLE = "what's in memory"


def _decode(data: bytes, path: str, errors: str, warnings: list[str]) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = f"{path}: invalid UTF-8 at byte offset {exc.start} ({exc.reason})"
        if errors != "replace":
            raise InputError(
                where, hint="fix the file, or pass --errors replace to read it with U+FFFD"
            ) from None
        warnings.append(f"{where}; read with U+FFFD in place of the bad bytes")
        return data.decode("utf-8", "replace")


def _source_marker(name: str) -> str:
    return "\n[…{n} tokens cut here; the rest is in " + name + "…]"


def _index_start(text: str) -> int:
    """Offset of the summary's "What's in Memory" heading line, or -1."""
    position = 0
    while True:
        newline = text.find("\n#", position)
        if newline < 0:
            return -1
        line_end = text.find("\n", newline + 1)
        line = text[newline + 1 : line_end if line_end >= 0 else len(text)]
        if line.lstrip("#").strip().lower().startswith(_INDEX_TITLE):
            return newline + 1
        position = newline + 1


def _section_end(text: str, start: int) -> int:
    """End of the section whose heading line starts at ``start``: the next heading of the same
    or a higher level, or the end of the text."""
    level = len(text[start:]) - len(text[start:].lstrip("#"))
    position = start
    while True:
        newline = text.find("\n#", position)
        if newline < 0:
            return len(text)
        line = text[newline + 1 : newline + 1 + level + 1]
        hashes = len(line) - len(line.lstrip("#"))
        if hashes <= level:
            return newline + 1
        position = newline + 1


def _fit_summary(text: str, budget: int, tokenizer, marker: str):
    """The summary's head within ``budget``, keeping its index section when a cut would drop it."""
    from memcite.readpath.truncation import Truncation, truncate_to_budget

    whole = truncate_to_budget(text, budget, tokenizer, marker=marker)
    if not whole.truncated:
        return whole
    index_at = _index_start(text)
    if index_at < 0 or len(text[:index_at].encode("utf-8")) <= whole.kept_bytes:
        return whole
    section_end = _section_end(text, index_at)
    tail_budget = int(budget * INDEX_SHARE)
    tail = truncate_to_budget(text[index_at:], tail_budget, tokenizer, marker=marker)
    if tail.kept_bytes < len(text[index_at:section_end].encode("utf-8")):
        return whole  # the index does not fit in its share: a plain head cut
    head_budget = budget - tail.tokens - 1
    head = truncate_to_budget(text[:index_at], head_budget, tokenizer, marker=marker)
    joined = head.text + "\n\n" + tail.text
    used = tokenizer.count(joined)
    if used > budget:
        return whole
    return Truncation(
        joined,
        used,
        True,
        kept_bytes=head.kept_bytes + tail.kept_bytes,
        omitted_bytes=head.omitted_bytes + tail.omitted_bytes,
        omitted_tokens=head.omitted_tokens + tail.omitted_tokens,
        omitted_exact=head.omitted_exact and tail.omitted_exact,
        cut=head.cut,
    )


def build_memcite(
    memory_root: str,
    summary_data: bytes | None,
    note,
    note_data: bytes | None,
    budget: int,
    tokenizer_name: str,
    load_tokenizer,
    errors: str,
) -> Instructions:
    """The ``memcite`` profile's instructions from the summary's and the note's bytes."""
    from memcite.readpath.projects import check_note
    from memcite.readpath.truncation import truncate_to_budget

    summary_path = os.path.join(memory_root, SUMMARY_FILE)
    warnings: list[str] = []
    summary_text = ""
    unread = getattr(summary_data, "unread", 0)  # a summary too large to read whole
    if unread:
        warnings.append(f"{summary_path}: only its first {len(summary_data)} bytes were read "
                        f"({unread} more bytes not read)")
    if summary_data is not None:
        summary_text = rust_trim(_decode(summary_data, summary_path, errors, warnings))
    note_text = ""
    if note is not None and note_data is not None:
        decoded = _decode(note_data, note.path, errors, warnings)
        note = check_note(note.project_root, note.slug, note.path, decoded, note_data)
        if note.status == "found":
            note_text = rust_trim(decoded)
        else:
            warnings.append(note.problem)
    if not summary_text and not note_text:
        return Instructions(
            None, None, False, budget, 0, (), "memcite", tokenizer_name, 0, tuple(warnings)
        )

    tokenizer = load_tokenizer()
    note_head = "--- this project's note (memory.md) ---\n" if note_text else ""
    summary_head = "--- global memory summary (memory_summary.md) ---\n" if summary_text else ""
    separator = "\n\n" if note_text and summary_text else ""

    def compose(note_part: str, summary_part: str) -> str:
        parts = []
        if note_text:
            parts.append(note_head + note_part)
        if summary_text:
            parts.append(summary_head + summary_part)
        return separator.join(parts)

    overhead = tokenizer.count(compose("", "")) + 2 * bool(note_text) + 2 * bool(summary_text)
    available = budget - overhead
    if available <= 0:
        warnings.append(f"a budget of {budget} tokens leaves no room for any memory")
        return Instructions(
            None, None, True, budget, 0, (), "memcite", tokenizer_name, 0, tuple(warnings)
        )

    note_marker = _source_marker("the project note") if note_text else ""
    summary_marker = _source_marker(SUMMARY_FILE)
    note_fit = truncate_to_budget(note_text, available, tokenizer, marker=note_marker)
    summary_fit = _fit_summary(summary_text, available, tokenizer, summary_marker)
    if note_fit.tokens + summary_fit.tokens > available and note_text and summary_text:
        summary_need = available if summary_fit.truncated else summary_fit.tokens
        note_share = min(note_fit.tokens, max(available - summary_need, int(available * NOTE_SHARE)))
        if note_share < note_fit.tokens:
            note_fit = truncate_to_budget(note_text, note_share, tokenizer, marker=note_marker)
        summary_fit = _fit_summary(
            summary_text, available - note_fit.tokens, tokenizer, summary_marker
        )
    block = compose(note_fit.text, summary_fit.text)
    used = tokenizer.count(block)
    for _ in range(4):
        if used <= budget:
            break
        if summary_text:
            smaller = max(summary_fit.tokens - (used - budget), 0)
            summary_fit = _fit_summary(summary_text, smaller, tokenizer, summary_marker)
        else:
            smaller = max(note_fit.tokens - (used - budget), 0)
            note_fit = truncate_to_budget(note_text, smaller, tokenizer, marker=note_marker)
        block = compose(note_fit.text, summary_fit.text)
        used = tokenizer.count(block)
    if used > budget:
        raise MemciteError(f"could not fit the memory into {budget} tokens (used {used})")

    sources = []
    note_use = summary_use = None
    if note_text:
        note_use = _use("project", note.path, note_fit)
        sources.append(note_use)
    if summary_text:
        summary_use = _use("global", summary_path, summary_fit, unread)
        sources.append(summary_use)
    instructions = render_instructions(
        memory_root,
        block,
        summary_use,
        note.path if note is not None else None,
        note_use,
        note.project_root if note is not None else None,
        _note_absent(note),
    )
    return Instructions(
        instructions,
        block,
        any(source.truncated for source in sources),
        budget,
        used,
        tuple(sources),
        "memcite",
        tokenizer_name,
        tokenizer.count(instructions) - used,
        tuple(warnings),
    )


def _note_absent(note) -> str:
    if note is None or note.status == "found":
        return ""
    if note.status == "collision":
        return "it belongs to another project, so it is not used (see the warning)"
    return "there is none yet"


def _use(scope: str, path: str, fit, unread: int = 0) -> SourceUse:
    """How much of a source was used; ``unread`` bytes after what was read count as omitted."""
    return SourceUse(
        scope,
        path,
        fit.tokens,
        fit.truncated or bool(unread),
        fit.omitted_bytes + unread,
        fit.omitted_tokens,
        fit.omitted_exact and not unread,
    )
