"""The note format, as the notes wing names it: the parser lives in ``memcite.readpath.note_format``
so that the read path (below this wing) can read scoped notes entry by entry."""

from memcite.readpath.note_format import (
    CONFIDENCES,
    FIELDS,
    ID_LENGTH,
    SECTIONS,
    TIERS,
    TITLE,
    VIAS,
    Entry,
    Note,
    Section,
    assign_ids,
    is_entry_id,
    new_entry_id,
    new_note,
    normalized_text,
    parse_note,
    render_note,
    section_key,
)

__all__ = ["CONFIDENCES", "FIELDS", "ID_LENGTH", "SECTIONS", "TIERS", "TITLE", "VIAS", "Entry",
           "Note", "Section", "assign_ids", "is_entry_id", "new_entry_id", "new_note",
           "normalized_text", "parse_note", "render_note", "section_key"]
