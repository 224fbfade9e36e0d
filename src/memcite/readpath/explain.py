"""The table behind ``memcite instructions --explain``: where the budget went, per source."""

from __future__ import annotations

from memcite.readpath.instructions import Instructions


def explain(result: Instructions) -> str:
    """A table of where the budget went, for ``--explain``."""
    rows = [("source", "scope", "tokens", "cut", "left out")]
    for source in result.sources:
        left_out = ""
        if source.truncated:
            about = "" if source.omitted_exact else "~"
            left_out = f"{about}{source.omitted_tokens} tokens ({source.omitted_bytes} bytes)"
        rows.append(
            (
                source.path,
                source.scope,
                str(source.tokens),
                "yes" if source.truncated else "no",
                left_out,
            )
        )
    headings = result.used - sum(source.tokens for source in result.sources)
    if result.sources and headings:
        rows.append(("(headings, separators)", "", str(headings), "", ""))
    rows.append((f"within the budget ({result.budget})", "", str(result.used), "", ""))
    rows.append(("template (outside the budget)", "", str(result.template_tokens), "", ""))
    # The whole message Codex injects: what the budget holds and the template around it.
    rows.append((f"whole message, budget {result.budget}", "", str(result.used
                                                                   + result.template_tokens),
                 "", ""))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = []
    for row in rows:
        cells = [
            row[i].rjust(widths[i]) if i == 2 else row[i].ljust(widths[i]) for i in range(5)
        ]
        lines.append("  ".join(cells).rstrip())
    cache = "hit" if result.cached else "miss"
    lines.append(f"profile {result.profile}, tokenizer {result.tokenizer}, cache {cache}")
    if result.instructions is None:
        lines.append("nothing to inject: the budget is 0 tokens" if result.budget == 0
                     else "nothing to inject: no summary or project note with any content")
    for override in result.overrides:
        kept, dropped = override["kept"], override["dropped"]
        lines.append(f"override: topic {override['topic']!r}: kept [{kept['id']}] ({kept['scope']}),"
                     f" left out [{dropped['id']}] ({dropped['scope']}): {override['why']}")
    for item in result.compacted:
        entry = f"[{item['id']}]" if item.get("id") else "an entry without an id"
        lines.append(f"compacted: {entry} ({item['scope']}) {item['step']}, relevance "
                     f"{item['relevance']:.3g} (lowest first)")
    for warning in result.warnings:
        lines.append(f"warning: {warning}")
    return "\n".join(lines) + "\n"


def instructions_json(result: Instructions, problems: list[str], explain_table: bool) -> dict:
    """The ``--json`` object (``InstructionsOutput``): the problems found before the reader's
    warnings, and the explain table when asked."""
    payload = result.to_dict()
    payload["warnings"] = problems + payload["warnings"]
    if explain_table:
        payload["explain"] = explain(result)
    return payload
