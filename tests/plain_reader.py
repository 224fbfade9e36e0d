"""A plain reading of citation blocks with str.find, written straight from docs/citation-format.md.

Independent of memcite's code (no shared helpers): the tests compare memcite's
grammar-based reader with it, and the benchmarks use it as the baseline.
"""

from __future__ import annotations

WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
OPEN, CLOSE = "<oai-mem-citation>", "</oai-mem-citation>"
HEX = set("0123456789abcdefABCDEF")


def _u32(text: str):
    digits = text[1:] if text.startswith("+") else text
    if not digits or any(c not in "0123456789" for c in digits):
        return None
    if len(digits.lstrip("0")) > 10:
        return None
    value = int(digits)
    return value if value <= 4294967295 else None


def plain_entry(line: str):
    line = line.strip(WHITESPACE)
    if not line:
        return None
    cut = line.rfind("|note=[")
    if cut < 0:
        return None
    location, note = line[:cut], line[cut + 7 :]
    if not note.endswith("]"):
        return None
    note = note[:-1].strip(WHITESPACE)
    colon = location.rfind(":")
    if colon < 0:
        return None
    path, span = location[:colon], location[colon + 1 :]
    dash = span.find("-")
    if dash < 0:
        return None
    start, end = _u32(span[:dash].strip(WHITESPACE)), _u32(span[dash + 1 :].strip(WHITESPACE))
    if start is None or end is None:
        return None
    return (path.strip(WHITESPACE), start, end, note)


def _extract(body: str, open_tag: str, close_tag: str):
    start = body.find(open_tag)
    if start < 0:
        return None
    start += len(open_tag)
    end = body.find(close_tag, start)
    if end < 0:
        return None
    return body[start:end]


def _hyphenated(text: str) -> bool:
    if len(text) != 36:
        return False
    return all(
        (c == "-") if i in (8, 13, 18, 23) else (c in HEX) for i, c in enumerate(text)
    )


def plain_thread_id(text: str):
    if text.startswith("urn:uuid:"):
        core = text[9:]
        ok = _hyphenated(core)
    elif text.startswith("{") and text.endswith("}"):
        core = text[1:-1]
        ok = _hyphenated(core)
    elif len(text) == 32:
        core = text
        ok = all(c in HEX for c in text)
    else:
        core = text
        ok = _hyphenated(text)
    if not ok:
        return None
    h = core.replace("-", "").lower()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def plain_read(text: str) -> dict:
    """visible, citation (entries as tuples, rollout_ids) and counted thread ids."""
    visible, bodies = [], []
    position = 0
    while True:
        start = text.find(OPEN, position)
        if start < 0:
            visible.append(text[position:])
            break
        visible.append(text[position:start])
        body_start = start + len(OPEN)
        end = text.find(CLOSE, body_start)
        if end < 0:
            bodies.append(text[body_start:])
            break
        bodies.append(text[body_start:end])
        position = end + len(CLOSE)
    entries, ids, seen = [], [], set()
    for body in bodies:
        section = _extract(body, "<citation_entries>", "</citation_entries>")
        if section is not None:
            for line in section.split("\n"):
                entry = plain_entry(line)
                if entry is not None:
                    entries.append(entry)
        section = _extract(body, "<rollout_ids>", "</rollout_ids>")
        if section is None:
            section = _extract(body, "<thread_ids>", "</thread_ids>")
        if section is not None:
            for line in section.split("\n"):
                line = line.strip(WHITESPACE)
                if line and line not in seen:
                    seen.add(line)
                    ids.append(line)
    citation = None if not entries and not ids else {"entries": entries, "rollout_ids": ids}
    counted = [n for n in (plain_thread_id(i) for i in ids) if n is not None]
    return {"visible": "".join(visible), "citation": citation, "thread_ids": counted}
