"""The table of ``apply_patch`` cases: what Codex 0.171 does with each patch (seen with the
binary: ``tests/e2e/test_e2e_apply_patch.py`` runs every case through it), and what
``memcite.codex.apply_patch`` must say (``tests/codex/test_apply_patch.py``).

Each case: a patch run in an empty folder holding ``files``; ``status`` is ``applied``
(Codex wrote everything), ``refused`` (nothing changed: the patch was refused, or its only
hunk could not be applied) or ``stopped`` (a later hunk failed; the earlier ones were
written); ``after`` is the folder's files afterwards.
"""

from __future__ import annotations

import os
from typing import NamedTuple

BEGIN = "*** Begin Patch\n"
END = "*** End Patch"
BLANK_LINES = "\n" * 1_000_000 + " \t\n"  # a megabyte of blank lines before the patch


class Case(NamedTuple):
    name: str
    patch: str
    files: dict
    status: str
    after: dict
    why: str


CASES = [
    Case('plain add',
         '*** Begin Patch\n*** Add File: notes.md\n+A fact.\n*** End Patch',
         {}, 'applied', {'notes.md': 'A fact.\n'},
         'the reference case'),
    Case('header led by spaces',
         '*** Begin Patch\n   *** Add File: notes.md\n+A fact.\n*** End Patch',
         {}, 'applied', {'notes.md': 'A fact.\n'},
         'headers are trimmed'),
    Case('header led by a tab',
         '*** Begin Patch\n\t*** Add File: notes.md\n+A fact.\n*** End Patch',
         {}, 'applied', {'notes.md': 'A fact.\n'},
         'headers are trimmed'),
    Case('header led by U+2028',
         '*** Begin Patch\n\u2028*** Add File: notes.md\n+A fact.\n*** End Patch',
         {}, 'applied', {'notes.md': 'A fact.\n'},
         "Rust's trim takes U+2028"),
    Case('header led by a no-break space',
         '*** Begin Patch\n\xa0*** Add File: notes.md\n+A fact.\n*** End Patch',
         {}, 'applied', {'notes.md': 'A fact.\n'},
         'and U+00A0'),
    Case('header led by a form feed',
         '*** Begin Patch\n\x0c*** Add File: notes.md\n+A fact.\n*** End Patch',
         {}, 'applied', {'notes.md': 'A fact.\n'},
         'and form feed'),
    Case('header led by a record separator',
         '*** Begin Patch\n\x1e*** Add File: notes.md\n+A fact.\n*** End Patch',
         {}, 'refused', {},
         'not U+001E: refused'),
    Case('header led by a zero-width space',
         '*** Begin Patch\n\u200b*** Add File: notes.md\n+A fact.\n*** End Patch',
         {}, 'refused', {},
         'not U+200B: refused'),
    Case('header in lower case',
         '*** Begin Patch\n*** add file: notes.md\n+A fact.\n*** End Patch',
         {}, 'refused', {},
         'markers are exact'),
    Case('path with spaces around',
         '*** Begin Patch\n*** Add File:   notes.md  \n+A fact.\n*** End Patch',
         {}, 'applied', {'  notes.md': 'A fact.\n'},
         'the path keeps its leading spaces'),
    Case('header ended by U+2028',
         '*** Begin Patch\n*** Add File: notes.md\u2028\n+A fact.\n*** End Patch',
         {}, 'applied', {'notes.md': 'A fact.\n'},
         'trimmed at the end too'),
    Case('separators inside a line',
         '*** Begin Patch\n*** Add File: notes.md\n+one\u2028two\x85three\x0cfour\x0bfive\x1esix\u2029seven\n*** End Patch',
         {}, 'applied', {'notes.md': 'one\u2028two\x85three\x0cfour\x0bfive\x1esix\u2029seven\n'},
         'lines split on \\n only'),
    Case('CRLF patch',
         '*** Begin Patch\r\n*** Add File: notes.md\r\n+one\r\n+two\r\n*** End Patch\r\n',
         {}, 'applied', {'notes.md': 'one\ntwo\n'},
         '\\r before \\n dropped'),
    Case('bare CR inside a line',
         '*** Begin Patch\n*** Add File: notes.md\n+one\rtwo\n*** End Patch',
         {}, 'applied', {'notes.md': 'one\rtwo\n'},
         'a lone \\r stays'),
    Case('CR left at a line end',
         '*** Begin Patch\n*** Add File: notes.md\n+one\r\r\n+two\n*** End Patch',
         {}, 'applied', {'notes.md': 'one\ntwo\n'},
         'a new file is written with LF'),
    Case('megabyte of leading blank lines',
         BLANK_LINES + BEGIN + "*** Add File: notes.md\n+A fact.\n" + END + "\n\n",
         {}, 'applied', {'notes.md': 'A fact.\n'},
         'the patch is trimmed'),
    Case('markers padded',
         '   *** Begin Patch   \n*** Add File: notes.md\n+A fact.\n   *** End Patch  ',
         {}, 'applied', {'notes.md': 'A fact.\n'},
         'markers trimmed'),
    Case('begin marker in lower case',
         '*** begin patch\n*** Add File: notes.md\n+A fact.\n*** End Patch',
         {}, 'refused', {},
         'refused'),
    Case('heredoc',
         "<<'EOF'\n*** Begin Patch\n*** Add File: notes.md\n+A fact.\n*** End Patch\nEOF\n",
         {}, 'applied', {'notes.md': 'A fact.\n'},
         'lenient mode'),
    Case('text after the end marker',
         '*** Begin Patch\n*** Add File: notes.md\n+A fact.\n*** End Patch\ntrailing words',
         {}, 'refused', {},
         'refused'),
    Case('padded end marker inside',
         '*** Begin Patch\n*** Add File: notes.md\n+A fact.\n  *** End Patch\n*** End Patch',
         {}, 'applied', {'notes.md': 'A fact.\n'},
         'ends at the first end marker'),
    Case('blank line inside an added file',
         '*** Begin Patch\n*** Add File: notes.md\n+one\n\n+two\n*** End Patch',
         {}, 'refused', {},
         'refused: a blank line is no header'),
    Case('add over an existing file',
         '*** Begin Patch\n*** Add File: notes.md\n+new\n*** End Patch',
         {'notes.md': 'old\n'}, 'applied', {'notes.md': 'new\n'},
         'overwrites'),
    Case('move',
         '*** Begin Patch\n*** Update File: old.md\n*** Move to: notes.md\n@@\n-a\n+b\n*** End Patch',
         {'old.md': 'a\n'}, 'applied', {'notes.md': 'b\n'},
         'the destination is written'),
    Case('move with context only',
         '*** Begin Patch\n*** Update File: old.md\n*** Move to: sub/notes.md\n@@\n a\n+b\n*** End Patch',
         {'old.md': 'a\n'}, 'applied', {'sub/notes.md': 'a\nb\n'},
         'the whole file moves'),
    Case('move path padded',
         '*** Begin Patch\n*** Update File: old.md\n*** Move to:   notes.md\t\n@@\n-a\n+b\n*** End Patch',
         {'old.md': 'a\n'}, 'applied', {'  notes.md': 'b\n'},
         'trimmed at the end only'),
    Case('move line led by spaces',
         '*** Begin Patch\n*** Update File: old.md\n  *** Move to: notes.md\n@@\n-a\n+b\n*** End Patch',
         {'old.md': 'a\n'}, 'refused', {'old.md': 'a\n'},
         'not a move: a context line'),
    Case('move after a blank line',
         '*** Begin Patch\n*** Update File: old.md\n\n*** Move to: notes.md\n@@\n-a\n+b\n*** End Patch',
         {'old.md': 'a\n'}, 'refused', {'old.md': 'a\n'},
         'refused'),
    Case('move onto an existing file',
         '*** Begin Patch\n*** Update File: old.md\n*** Move to: notes.md\n@@\n-a\n+b\n*** End Patch',
         {'old.md': 'a\n', 'notes.md': 'kept?\n'}, 'applied', {'notes.md': 'b\n'},
         'overwrites'),
    Case('move without a chunk',
         '*** Begin Patch\n*** Update File: old.md\n*** Move to: notes.md\n*** End Patch',
         {'old.md': 'a\n'}, 'refused', {'old.md': 'a\n'},
         'refused: empty update'),
    Case('update by context line',
         '*** Begin Patch\n*** Update File: notes.md\n@@ ## B\n-x\n+y\n*** End Patch',
         {'notes.md': '## A\nx\n## B\nx\n'}, 'applied', {'notes.md': '## A\nx\n## B\ny\n'},
         'the chunk is looked for after its context'),
    Case('pure addition',
         '*** Begin Patch\n*** Update File: notes.md\n@@\n+z\n*** End Patch',
         {'notes.md': 'a\nb'}, 'applied', {'notes.md': 'a\nb\nz\n'},
         'appended; a newline added'),
    Case('end of file',
         '*** Begin Patch\n*** Update File: notes.md\n@@\n-x\n+y\n*** End of File\n*** End Patch',
         {'notes.md': 'x\nq\nx\n'}, 'applied', {'notes.md': 'x\nq\ny\n'},
         'matched at the end'),
    Case('end of file padded',
         '*** Begin Patch\n*** Update File: notes.md\n@@\n-x\n+y\n*** End of File \u2028\n*** End Patch',
         {'notes.md': 'x\n'}, 'applied', {'notes.md': 'y\n'},
         'trimmed at the end'),
    Case('context padded in the file',
         '*** Begin Patch\n*** Update File: notes.md\n@@\n-  x  \n+y\n*** End Patch',
         {'notes.md': 'x\n'}, 'applied', {'notes.md': 'y\n'},
         'white space ignored'),
    Case('typographic dash',
         '*** Begin Patch\n*** Update File: notes.md\n@@\n-a-b\n+y\n*** End Patch',
         {'notes.md': 'a—b\n'}, 'applied', {'notes.md': 'y\n'},
         'read as ASCII'),
    Case('no @@ on the first chunk',
         '*** Begin Patch\n*** Update File: notes.md\n x\n+y\n*** End Patch',
         {'notes.md': 'x\nz\n'}, 'applied', {'notes.md': 'x\ny\nz\n'},
         'allowed'),
    Case('@@ padded',
         '*** Begin Patch\n*** Update File: notes.md\n@@\u2028\n-x\n+y\n*** End Patch',
         {'notes.md': 'x\n'}, 'applied', {'notes.md': 'y\n'},
         'trimmed at the end'),
    Case('@@ led by spaces',
         '*** Begin Patch\n*** Update File: notes.md\n  @@\n-x\n+y\n*** End Patch',
         {'notes.md': 'x\n'}, 'refused', {'notes.md': 'x\n'},
         'a context line: not found'),
    Case('two context lines',
         '*** Begin Patch\n*** Update File: notes.md\n@@ ## A\n@@ ## B\n-x\n+y\n*** End Patch',
         {'notes.md': '## A\nx\n## B\nx\n'}, 'refused', {'notes.md': '## A\nx\n## B\nx\n'},
         'refused'),
    Case('tab line before the first chunk',
         '*** Begin Patch\n*** Update File: notes.md\n\t\n@@\n-x\n+y\n*** End Patch',
         {'notes.md': 'x\n'}, 'refused', {'notes.md': 'x\n'},
         'refused'),
    Case('blank lines after a chunk',
         '*** Begin Patch\n*** Update File: notes.md\n@@\n-x\n+y\n*** End of File\n \t\n*** End Patch',
         {'notes.md': 'x\n'}, 'applied', {'notes.md': 'y\n'},
         'skipped'),
    Case('CRLF file',
         '*** Begin Patch\n*** Update File: notes.md\n@@\n-x\n+y\n+w\n*** End Patch',
         {'notes.md': 'x\r\nz\r\n'}, 'applied', {'notes.md': 'y\r\nw\r\nz\r\n'},
         'added lines take CRLF'),
    Case('mostly LF file',
         '*** Begin Patch\n*** Update File: notes.md\n@@\n-a\n+y\n*** End Patch',
         {'notes.md': 'a\nb\nx\r\nq\n'}, 'applied', {'notes.md': 'y\nb\nx\r\nq\n'},
         'untouched lines keep theirs'),
    Case('update a missing file after an add',
         '*** Begin Patch\n*** Add File: notes.md\n+x\n*** Update File: gone.md\n@@\n+y\n*** End Patch',
         {}, 'stopped', {'notes.md': 'x\n'},
         'stops: the add is written'),
    Case('add then update the same file',
         '*** Begin Patch\n*** Add File: notes.md\n+x\n*** Update File: notes.md\n@@\n-x\n+y\n*** End Patch',
         {}, 'applied', {'notes.md': 'y\n'},
         'in order'),
    Case('delete',
         '*** Begin Patch\n*** Delete File: notes.md\n*** End Patch',
         {'notes.md': 'x\n'}, 'applied', {},
         'removed'),
    Case('header-like line in a chunk',
         '*** Begin Patch\n*** Update File: notes.md\n@@\n-x\n+y\n  *** Add File: other.md\n+z\n*** End Patch',
         {'notes.md': 'x\n'}, 'refused', {'notes.md': 'x\n'},
         'a context line: not found'),
    Case('star line after a chunk',
         '*** Begin Patch\n*** Update File: notes.md\n@@\n-x\n+y\n*** bold\n*** End Patch',
         {'notes.md': 'x\n'}, 'refused', {'notes.md': 'x\n'},
         'refused'),
    Case('BOM in the file',
         '*** Begin Patch\n*** Update File: notes.md\n@@\n-x\n+y\n*** End Patch',
         {'notes.md': '\ufeffx\n'}, 'refused', {'notes.md': '\ufeffx\n'},
         'not trimmed: not found'),
]


def simulate(patch: str, files: dict) -> tuple[str, dict]:
    """``(status, files after)`` as ``memcite.codex.apply_patch`` predicts them."""
    from memcite.codex import apply_patch as ap

    cwd = "/work"
    try:
        hunks = ap.parse_patch(patch)
    except ap.PatchError:
        return "refused", dict(files)
    after = dict(files)
    failed = False
    for hunk in hunks:  # one hunk at a time, as Codex writes them
        landed = ap.landings([hunk], cwd, lambda path: after.get(os.path.relpath(path, cwd)))
        if any(not landing.complete for landing in landed.values()):
            failed = True
            break
        source = os.path.relpath(ap.resolve(cwd, hunk.path), cwd)
        if hunk.kind == "delete" or hunk.move_to is not None:
            after.pop(source, None)
        for path, landing in landed.items():
            after[os.path.relpath(path, cwd)] = landing.text
    if not failed:
        return "applied", after
    return ("stopped" if after != files else "refused"), after
