"""The parser of the citation sections' lines: lark's cached tables replayed, else lark.

The one place that chooses between the two readers, so that neither imports the
other's module: ``_section_tables`` replays the tables without lark, and
``_lark_reader`` builds them with it (imported only on a cache miss).
"""

from __future__ import annotations

import os

from memcite.citations._section_tables import TABLES_FILE, SectionLines, TableParser, load_tables, save_tables


def build_section_parser(grammar: str, *, cache_dir: str | None = None, use_cache: bool = True):
    """The parser of the sections' lines: the cached tables replayed, else lark itself.

    On a miss lark builds the parser, exports its tables and they are saved in ``cache_dir``
    for the next run; this run replays them too, so every run reads the same way.
    ``cache_dir`` is the caller's (the command line passes its ``Locations.cache_dir``); when
    None, memcite's default cache folder (``memcite.paths.user_cache_dir``).
    """
    if use_cache and cache_dir is None:
        from memcite.paths import user_cache_dir

        cache_dir = user_cache_dir()
    path = os.path.join(cache_dir, TABLES_FILE) if use_cache else None
    if path is not None:
        tables = load_tables(path, grammar)
        if tables is not None:
            try:
                return TableParser(tables, SectionLines())
            except (KeyError, TypeError, ValueError, IndexError, AttributeError):
                pass  # a file of another shape: rebuilt below
    from memcite.citations._lark_reader import build_parser, export_tables

    parser = build_parser(grammar, cache_dir=cache_dir, use_cache=use_cache)
    tables = export_tables(parser.lark, grammar)
    if tables is None:
        return parser
    try:
        replay = TableParser(tables, SectionLines())
    except ValueError:  # the transformer asks for what the replay does not follow: lark reads
        return parser
    if path is not None:
        save_tables(path, tables)
    return replay
