"""The checks of memory entries: tiers, provenance, supersession chains, duplicate decisions.

Pure functions of entries as ``memcite.retention.entries`` reads them.
"""

from __future__ import annotations

from collections.abc import Sequence

from memcite.lint.findings import Finding
from memcite.lint.findings import make_finding as _finding
from memcite.retention.entries import (
    CONFIDENCE_LEVELS,
    TIERS,
    Entry,
    normalize_name,
    read_entries,
    tier_suggestion,
)
from memcite.retention.supersession import EntryIndex, Located, entry_key, superseding

CORE_LIMIT = 80
CORE_NEAR_LIMIT = 72


# --------------------------------------------------------------------------- tiers and provenance


def check_tiers(path: str, entries: Sequence[Entry]) -> list[Finding]:
    """Unknown or misspelt tiers, conflicting tiers, and the CORE limit of one file."""
    findings = []
    core = 0
    for entry in entries:
        mark = entry.mark
        if mark is not None and mark.tag not in TIERS:
            suggestion = tier_suggestion(mark.tag)
            if suggestion is not None:
                findings.append(_finding(
                    "tier-unknown", path, mark.line, mark.column,
                    f"[{mark.tag}] is not a tier", f"write [{suggestion}] (tiers: CORE, IMP, SEC, IRR)"))
        for item in entry.values("tier"):
            value = item.value.strip()
            if value not in TIERS:
                suggestion = tier_suggestion(value) if value.isalpha() else None
                findings.append(_finding(
                    "tier-unknown", path, item.line, item.column, f"Tier: {value!r} is not a tier",
                    f"write Tier: {suggestion}" if suggestion else "use one of CORE, IMP, SEC, IRR"))
            elif mark is not None and mark.tag in TIERS and mark.tag != value:
                findings.append(_finding(
                    "tier-conflict", path, item.line, item.column,
                    f"the prefix says [{mark.tag}] and this line says Tier: {value}",
                    "keep one of them"))
        if entry.tier == "CORE":
            core += 1
            where = mark or entry
            line = where.line if mark else entry.line_start
            column = mark.column if mark else 1
            if core == CORE_LIMIT + 1:
                findings.append(_finding(
                    "tier-core-limit", path, line, column,
                    f"more than {CORE_LIMIT} CORE entries (this is the {core}st)",
                    "demote the least used CORE entries to [IMP]"))
            elif core == CORE_NEAR_LIMIT:
                findings.append(_finding(
                    "tier-core-near-limit", path, line, column,
                    f"{core} CORE entries, the limit is {CORE_LIMIT}",
                    "review the CORE entries for demotion before adding more"))
    return findings


def check_provenance(path: str, entries: Sequence[Entry]) -> list[Finding]:
    """CORE and IMP entries carry ``Source:``, ``Evidence:`` and ``Confidence: HIGH|MEDIUM|LOW``."""
    findings = []
    for entry in entries:
        if entry.tier not in ("CORE", "IMP"):
            continue
        missing = [name for name, key in (("Source:", "source"), ("Evidence:", "evidence"),
                                          ("Confidence:", "confidence"))
                   if not any(item.value for item in entry.values(key))]
        if missing:
            findings.append(_finding(
                "provenance-missing", path, entry.line_start, 1,
                f"{entry.tier} entry without {', '.join(missing)}",
                "add indented lines under it: Source: (session or commit), Evidence: (what showed it), "
                "Confidence: HIGH|MEDIUM|LOW"))
        for item in entry.values("confidence"):
            if item.value and item.value.strip().upper() not in CONFIDENCE_LEVELS:
                findings.append(_finding(
                    "confidence-invalid", path, item.line, item.column,
                    f"Confidence: {item.value!r} is not HIGH, MEDIUM or LOW",
                    "HIGH: verified by a test; MEDIUM: observed, untested; LOW: inferred"))
    return findings


# --------------------------------------------------------------------------- supersession


def check_supersession(files: Sequence[tuple[str, Sequence[Entry]]]) -> list[Finding]:
    """Dangling references, forks, loops, superseded entries not IRR, and duplicate live decisions."""
    index = EntryIndex(files)
    findings: list[Finding] = []
    edges: dict[tuple[str, int], list[Located]] = {}
    nodes: dict[tuple[str, int], Located] = {}
    for path, entries in files:
        for entry in entries:
            located = Located(path, entry)
            nodes[entry_key(located)] = located
            seen: list[tuple[str, int]] = []
            for item in entry.values("superseded_by"):
                if not item.value:
                    findings.append(_finding(
                        "supersession-dangling", path, item.line, item.column,
                        "superseded_by: names nothing", "name the replacing entry by its id or title"))
                    continue
                target = index.resolve(item.value, path)
                if target is None:
                    findings.append(_finding(
                        "supersession-dangling", path, item.line, item.column,
                        f"superseded_by: {item.value!r} matches no entry's id, title or decision",
                        "name the replacing entry exactly as its title (text before ' — ') or its id"))
                    continue
                if entry_key(target) not in seen and seen:
                    findings.append(_finding(
                        "superseded-twice", path, item.line, item.column,
                        f"superseded a second time, by {_describe(target, path)}",
                        "keep one superseded_by: line; supersede the other replacement in turn"))
                if entry_key(target) not in seen:
                    seen.append(entry_key(target))
            if entry.superseded_by and entry.tier != "IRR":
                line, column = (entry.mark.line, entry.mark.column) if entry.mark else (entry.line_start, 1)
                marked = f"is marked [{entry.tier}]" if entry.tier else "has no tier"
                findings.append(_finding(
                    "superseded-not-irr", path, line, column, f"superseded entry {marked}",
                    "mark it [IRR] so that consolidation prunes it"))
            edges[entry_key(located)] = superseding(index, located)
    findings.extend(_loops(nodes, edges))
    findings.extend(_duplicates(files))
    return findings


def _describe(located: Located, path: str) -> str:
    where = f"line {located.entry.line_start}" if located.path == path else \
        f"{located.path}:{located.entry.line_start}"
    return f"{located.entry.title!r} ({where})"


def _loops(nodes: dict, edges: dict) -> list[Finding]:
    """One finding per cycle of ``superseded_by:`` references, at the cycle's first entry in file order."""
    findings = []
    state: dict[tuple[str, int], int] = {}  # 1 on the current path, 2 done
    reported: set[frozenset] = set()
    for start in sorted(nodes):
        if state.get(start):
            continue
        stack: list[tuple[tuple[str, int], int]] = [(start, 0)]
        path: list[tuple[str, int]] = [start]
        state[start] = 1
        while stack:
            node, position = stack[-1]
            targets = edges.get(node, [])
            if position < len(targets):
                stack[-1] = (node, position + 1)
                nxt = entry_key(targets[position])
                if state.get(nxt) == 1:
                    cycle = path[path.index(nxt):]
                    members = frozenset(cycle)
                    if members not in reported:
                        reported.add(members)
                        first = min(cycle)
                        titles = " → ".join(repr(nodes[k].entry.title) for k in
                                            cycle[cycle.index(first):] + cycle[: cycle.index(first)] + [first])
                        located = nodes[first]
                        item = located.entry.values("superseded_by")[0]
                        findings.append(_finding(
                            "supersession-loop", located.path, item.line, item.column,
                            f"superseded_by: chain loops: {titles}",
                            "the newest entry of a chain must not be superseded; remove one reference"))
                elif not state.get(nxt):
                    state[nxt] = 1
                    stack.append((nxt, 0))
                    path.append(nxt)
            else:
                state[node] = 2
                stack.pop()
                path.pop()
    return findings


def _duplicates(files: Sequence[tuple[str, Sequence[Entry]]]) -> list[Finding]:
    """Live entries (no ``superseded_by:``) of one file that state the same decision."""
    findings = []
    for path, entries in files:
        first_seen: dict[str, Entry] = {}
        for entry in entries:
            if entry.superseded_by or not entry.decision:
                continue
            name = normalize_name(entry.decision)
            if not name:
                continue
            if name in first_seen:
                earlier = first_seen[name]
                findings.append(_finding(
                    "duplicate-decision", path, entry.line_start, 1,
                    f"same decision as line {earlier.line_start}: {entry.decision!r}",
                    "merge the two, or mark the older [IRR] with superseded_by: naming the newer"))
            else:
                first_seen[name] = entry
    return findings


def check_entry_files(files: Sequence[tuple[str, str]]) -> list[Finding]:
    """Every entry check over ``(path, text)`` pairs (supersession may cross files)."""
    read = [(path, read_entries(text)) for path, text in files]
    findings = []
    for path, entries in read:
        findings.extend(check_tiers(path, entries))
        findings.extend(check_provenance(path, entries))
    findings.extend(check_supersession(read))
    return findings


__all__ = [
    "CORE_LIMIT",
    "CORE_NEAR_LIMIT",
    "check_entry_files",
    "check_provenance",
    "check_supersession",
    "check_tiers",
]
