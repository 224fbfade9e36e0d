"""The ``memcite`` profile: exact tokens; the scoped notes first (this session's, this project's,
the global one: ``memcite.readpath.scopes`` resolves their conflicts and compacts their entries
by relevance), then Codex's global summary, inside one budget; the summary is cut at section
boundaries (its index section kept when it fits), and the instructions say what was cut or
compacted and which file holds the rest."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from memcite.errors import InputError, MemciteError
from memcite.readpath.instruction_values import SUMMARY_FILE, Instructions, ScopeNote, SourceUse
from memcite.readpath.note_format import parse_note
from memcite.readpath.projects import check_note
from memcite.readpath.scopes import (
    DIGEST,
    FULL,
    LEFT_OUT,
    NO_PROVENANCE,
    STEP_NAMES,
    compaction_order,
    entry_lines,
    relevance,
    render_scoped,
    resolve,
    scoped_entries,
    without,
)
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


_HEADINGS = {"session": "this session's notes", "project": "this project's note",
             "global": "global notes"}
_NAMES = {"session": "the session note", "project": "the project note",
          "global": "the global note"}


@dataclass
class _NotesFit:
    """The scoped notes as fitted into a share of the budget."""

    text: str
    tokens: int
    truncated: bool
    omitted_bytes: int = 0
    omitted_tokens: int = 0
    omitted_exact: bool = True
    steps: dict = field(default_factory=dict)
    blocks: dict = field(default_factory=dict)  # scope -> its block's text


# Texts at least this long are counted once: the same text (the whole note, a block of it,
# an entry with no provenance lines) is often counted again, and each count encodes it whole.
_COUNT_ONCE_CHARS = 4096


class _ScopedNotes:
    """The notes of the scopes read, resolved, and rendered at any compaction."""

    def __init__(self, notes, tokenizer, today: str) -> None:
        self.notes = notes  # [(ScopeNote, Note)] most specific first
        self.tokenizer = tokenizer
        self._counted: dict[str, int] = {}
        entries = scoped_entries([(source.scope, note) for source, note in notes])
        kept, self.overrides = resolve(entries)
        kept_ids = {id(item.entry) for item in kept}
        self.shown = [(source, without(note, {id(item.entry) for item in entries
                                              if item.scope == source.scope
                                              and id(item.entry) not in kept_ids}))
                      for source, note in notes]
        self.order = compaction_order(kept, today)
        self.relevance = {id(item.entry): relevance(item, today) for item in kept}
        self.scope_of = {id(item.entry): item.scope for item in kept}
        self.full = self.render({})
        self.full_tokens = self.count(self.full.text) if self.full.text else 0

    def count(self, text: str) -> int:
        """The tokenizer's count of ``text``; a long text is encoded only the first time."""
        if len(text) < _COUNT_ONCE_CHARS:
            return self.tokenizer.count(text)
        if text not in self._counted:
            self._counted[text] = self.tokenizer.count(text)
        return self._counted[text]

    def render(self, steps: dict) -> _NotesFit:
        blocks = {}
        for source, note in self.shown:
            text = rust_trim(render_scoped(note, steps))
            changed = sum(1 for key, step in steps.items()
                          if step and self.scope_of.get(key) == source.scope)
            if changed:
                text += (f"\n[…{changed} of its entries shortened or left out for the budget; "
                         f"the rest is in {_NAMES[source.scope]}…]")
            heading = f"--- {_HEADINGS[source.scope]} ({os.path.basename(source.path)}) ---\n"
            blocks[source.scope] = heading + text
        joined = "\n\n".join(blocks.values())
        return _NotesFit(joined, 0, bool(steps), steps=dict(steps), blocks=blocks)

    def fit(self, target: int) -> _NotesFit:
        """The notes within ``target`` tokens: the lowest-relevance entries compacted first, one
        step at a time for every entry (provenance lines, digest, left out) until it fits."""
        from memcite.readpath.truncation import truncate_to_budget

        count = self.count
        if self.full_tokens <= target:
            return self._measured(self.full, self.full_tokens)
        cost = {}
        for item in self.order:
            cost[id(item.entry)] = [count("\n".join(entry_lines(item.entry, step))) + 1
                                    for step in (FULL, NO_PROVENANCE, DIGEST)] + [0]
        reserve = sum(count(f"\n[…{len(self.order)} of its entries shortened or left out for "
                            f"the budget; the rest is in {_NAMES[source.scope]}…]")
                      for source, _ in self.shown)
        steps: dict[int, int] = {}
        estimate = self.full_tokens + reserve
        for step in (NO_PROVENANCE, DIGEST, LEFT_OUT):
            for item in self.order:
                if estimate <= target:
                    break
                key = id(item.entry)
                current = steps.get(key, FULL)
                if current < step:
                    estimate -= cost[key][current] - cost[key][step]
                    steps[key] = step
        fitted = self.render(steps)
        used = count(fitted.text)
        remaining = [item for item in self.order if steps.get(id(item.entry)) != LEFT_OUT]
        while used > target and remaining:  # the estimate was short: leave more out
            over = used - target
            while remaining and over > 0:
                key = id(remaining.pop(0).entry)
                over -= cost[key][steps.get(key, FULL)]
                steps[key] = LEFT_OUT
            fitted = self.render(steps)
            used = count(fitted.text)
        if used > target:  # headings alone do not fit: a plain cut keeps the budget exact
            name = _NAMES[self.shown[0][0].scope] if len(self.shown) == 1 else "the notes"
            cut = truncate_to_budget(fitted.text, target, self.tokenizer,
                                     marker=_source_marker(name))
            fitted.text, used = cut.text, cut.tokens
        return self._measured(fitted, used)

    def _measured(self, fitted: _NotesFit, used: int) -> _NotesFit:
        fitted.tokens = used
        fitted.truncated = bool(fitted.steps) or used < self.full_tokens
        fitted.omitted_tokens = max(self.full_tokens - used, 0)
        fitted.omitted_bytes = max(len(self.full.text.encode("utf-8"))
                                   - len(fitted.text.encode("utf-8")), 0)
        return fitted

    def uses(self, fitted: _NotesFit) -> list[SourceUse]:
        """How much of each scope's note went in."""
        uses = []
        for source, _ in self.shown:
            block = fitted.blocks.get(source.scope, "")
            whole = self.full.blocks[source.scope]
            if block and block not in fitted.text:  # cut by the last-resort truncation
                block = ""
            tokens = self.count(block) if block else 0
            whole_tokens = self.count(whole)
            changed = block != whole
            uses.append(SourceUse(source.scope, source.path, tokens, changed,
                                  max(len(whole.encode("utf-8")) - len(block.encode("utf-8")), 0),
                                  max(whole_tokens - tokens, 0), True))
        return uses

    def compacted(self, fitted: _NotesFit) -> list[dict]:
        """What was compacted and why, lowest relevance first."""
        found = []
        for item in self.order:
            step = fitted.steps.get(id(item.entry))
            if step:
                found.append({"id": item.id, "scope": item.scope, "step": STEP_NAMES[step],
                              "relevance": self.relevance[id(item.entry)]})
        return found


def _read_notes(notes, errors: str, warnings: list[str]):
    """The notes that can be used, parsed; the others are reported in ``warnings``.
    Returns ``(usable, absent)``: ``absent`` says per scope why nothing is shown."""
    usable, absent = [], {}
    for source in notes:
        if source.data is None:
            absent[source.scope] = "there is none yet"
            continue
        decoded = _decode(source.data, source.path, errors, warnings)
        if source.scope == "project":
            checked = check_note(source.owner, source.slug, source.path, decoded, source.data)
            if checked.status != "found":
                warnings.append(checked.problem)
                absent[source.scope] = ("it belongs to another project, so it is not used (see "
                                        "the warning)")
                continue
        note = parse_note(decoded)
        recorded = note.owner(source.scope)
        if source.scope != "project" and (recorded or "").strip() != source.owner:
            header = "Scope" if source.scope == "global" else "Session"
            warnings.append(f"{source.path}: its '{header}:' line is {recorded!r}, not "
                            f"{source.owner!r}; not used")
            absent[source.scope] = "it belongs to another scope, so it is not used"
            continue
        if not rust_trim(decoded):
            absent[source.scope] = "it is empty"
            continue
        usable.append((source, note))
    return usable, absent


def build_memcite(
    memory_root: str,
    summary_data: bytes | None,
    notes: list[ScopeNote],
    budget: int,
    tokenizer_name: str,
    load_tokenizer,
    errors: str,
    *,
    today: str,
    with_summary: bool = True,
) -> Instructions:
    """The ``memcite`` profile's instructions from the summary's and the scoped notes' bytes
    (``notes`` most specific first); ``today`` (``YYYY-MM-DD``) dates the relevance of entries."""
    from memcite.readpath.truncation import Truncation

    summary_path = os.path.join(memory_root, SUMMARY_FILE)
    warnings: list[str] = []
    summary_text = ""
    unread = getattr(summary_data, "unread", 0)  # a summary too large to read whole
    if with_summary and unread:
        warnings.append(f"{summary_path}: only its first {len(summary_data)} bytes were read "
                        f"({unread} more bytes not read)")
    if with_summary and summary_data is not None:
        summary_text = rust_trim(_decode(summary_data, summary_path, errors, warnings))
    usable, absent = _read_notes(notes, errors, warnings)
    if not summary_text and not usable:
        return Instructions(
            None, None, False, budget, 0, (), "memcite", tokenizer_name, 0, tuple(warnings)
        )

    tokenizer = load_tokenizer()
    scoped = _ScopedNotes(usable, tokenizer, today) if usable else None
    summary_head = "--- global memory summary (memory_summary.md) ---\n" if summary_text else ""
    separator = "\n\n" if scoped and summary_text else ""

    def compose(note_part: str, summary_part: str) -> str:
        parts = []
        if scoped:
            parts.append(note_part)
        if summary_text:
            parts.append(summary_head + summary_part)
        return separator.join(parts)

    overhead = tokenizer.count(compose("", "")) + 2 * bool(summary_text) + 2 * bool(scoped)
    available = budget - overhead
    if available <= 0:
        from memcite.display import count

        warnings.append(f"a budget of {count(budget, 'token')} leaves no room for any memory")
        return Instructions(
            None, None, True, budget, 0, (), "memcite", tokenizer_name, 0, tuple(warnings)
        )

    empty = Truncation("", 0, False)
    summary_marker = _source_marker(SUMMARY_FILE)
    note_fit = scoped.fit(available) if scoped else _NotesFit("", 0, False)
    summary_fit = _fit_summary(summary_text, available, tokenizer, summary_marker) \
        if summary_text else empty
    if scoped and summary_text and note_fit.tokens + summary_fit.tokens > available:
        summary_need = available if summary_fit.truncated else summary_fit.tokens
        note_share = min(note_fit.tokens, max(available - summary_need, int(available * NOTE_SHARE)))
        if note_share < note_fit.tokens:
            note_fit = scoped.fit(note_share)
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
            note_fit = scoped.fit(max(note_fit.tokens - (used - budget), 0))
        block = compose(note_fit.text, summary_fit.text)
        used = tokenizer.count(block)
    if used > budget:
        raise MemciteError(f"could not fit the memory into {budget} tokens (used {used})")

    sources = scoped.uses(note_fit) if scoped else []
    by_scope = {source.scope: source for source in sources}
    summary_use = None
    if summary_text:
        summary_use = _use("global", summary_path, summary_fit, unread)
        sources.append(summary_use)
    project = next((source for source in notes if source.scope == "project"), None)
    others = [(source.path, by_scope.get(source.scope), _HEADINGS[source.scope].replace(
        "notes", "note").replace("this session's note", "this session's scratchpad"),
               absent.get(source.scope, "")) for source in notes if source.scope != "project"]
    instructions = render_instructions(
        memory_root,
        block,
        summary_use,
        project.path if project is not None else None,
        by_scope.get("project"),
        project.owner if project is not None else None,
        absent.get("project", ""),
        others,
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
        overrides=tuple(override.to_dict() for override in scoped.overrides) if scoped else (),
        compacted=tuple(scoped.compacted(note_fit)) if scoped else (),
    )


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
