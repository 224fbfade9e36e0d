"""Reading replies: the citation grammar, the reader, the reading models, rendering, thread ids.

The lowest wing: it imports only the shared modules (errors, paths, rust_text).
The rules it follows are in docs/citation-format.md.
"""
