"""A Codex home for ``memcite report``'s tests, and how its page is read back.

``build_report_home`` runs the demo (a sample home, sync, replies with broken citations),
then adds what the demo lacks: memories asked to forget (``prune --apply``), memcite's notes
in all three scopes (with tiers, dates and text that must never reach the page), tiers in
``MEMORY.md``, and a label that tries to break out of the page. ``PageReader`` collects every
``data-key`` element of a page with its text, and the page's text outside them.
"""

from __future__ import annotations

import html.parser
import io
import os
import sqlite3
import time

NOW = 1_800_000_000  # 2027-01-15T08:00:00Z
HOSTILE = 'pruned_by_codex_a"><img src=x onerror=alert(1)></td><script>alert(2)</script>'
NOTE_SECRET = "TEXT-OF-ANOTHER-PROJECT-never-on-the-page"
SESSION_ID = "019c1111-2222-7333-8444-555555555555"


def _note(title: str, owner: str, entries: list[tuple[str, str | None, str, str]]) -> str:
    lines = [title, owner, "Updated: 2027-01-10", "", "## Durable decisions", ""]
    for entry_id, tier, text, day in entries:
        lines += [f"- [{entry_id}] {text}", "  Topic: t", f"  Date: {day}"]
        lines += [f"  Tier: {tier}"] if tier else []
    return "\n".join(lines) + "\n"


def build_report_home(folder: str) -> dict[str, str]:
    """The demo in ``folder``, enriched; the environment that points memcite at it."""
    from typer.testing import CliRunner

    from memcite.cli.app import app
    from memcite.demo.loop import demo_paths, run_demo

    run_demo(folder, now=NOW - 3600, out=io.StringIO())
    env = demo_paths(folder)
    home = env["CODEX_HOME"]
    conn = sqlite3.connect(env["MEMCITE_DB"])
    with conn:
        conn.execute("UPDATE memories SET rollout_slug = ? WHERE rollout_slug = ?",
                     (HOSTILE, "pruned_by_codex_a"))
    conn.close()
    notes = os.path.join(home, "memory")
    files = {
        "global/memory.md": _note("# Global memory", "Scope: global", [
            ("a1b2c3", "CORE", f"{NOTE_SECRET} global", "2026-11-01")]),
        "projects/payments-api-3f2a1b/memory.md": _note(
            "# Project memory", "Project: /home/dev/payments-api", [
                ("d4e5f6", "IMP", f"{NOTE_SECRET} one", "2026-10-02"),
                ("g7h8i9", "SEC", f"{NOTE_SECRET} two", "2026-12-24"),
                ("j1k2l3", None, f"{NOTE_SECRET} three", "2026-12-30")]),
        f"sessions/{SESSION_ID}/memory.md": _note(
            "# Session memory", f"Session: {SESSION_ID}", [
                ("m4n5o6", "IRR", f"{NOTE_SECRET} session", "2027-01-14")]),
    }
    for name, text in files.items():
        path = os.path.join(notes, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    memory_md = os.path.join(home, "memories", "MEMORY.md")
    with open(memory_md, encoding="utf-8") as handle:
        text = handle.read()
    text = text.replace("- Keep each test about one thing", "- [CORE] Keep each test about one thing")
    text = text.replace("- Liveness probes hit", "- [IRR] Liveness probes hit")
    with open(memory_md, "w", encoding="utf-8") as handle:
        handle.write(text)
    runner = CliRunner()
    result = runner.invoke(app, ["prune", "--apply", "--limit", "2", "--as-of", str(NOW)],
                           env=env)
    assert result.exit_code == 0, result.output
    return env


class PageReader(html.parser.HTMLParser):
    """Every element with ``data-key``: ``(tag, attributes, text)``; ``loose``: the text of the
    page that is in no such element, no ``<time>``, ``<code>``, ``class="t"`` cell, axis tick,
    ``<title>``, ``<style>`` or ``<script>`` (numbers there would come from nowhere)."""

    VOID = {"meta", "link", "br", "img", "input", "hr", "line", "rect", "path", "circle"}
    QUOTED = {"time", "code", "title", "style", "script", "desc"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.keyed: list[tuple[str, dict, str]] = []
        self.loose: list[str] = []
        self.stack: list[tuple[str, dict, bool, list[str]]] = []
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if tag in self.VOID:
            return
        quoted = (tag in self.QUOTED or "data-key" in attributes or "data-tick" in attributes
                  or "t" in (attributes.get("class") or "").split()
                  or any(entry[2] for entry in self.stack))
        self.stack.append((tag, attributes, quoted, []))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        while self.stack:
            name, attributes, _quoted, text = self.stack.pop()
            if "data-key" in attributes:
                self.keyed.append((name, attributes, "".join(text)))
            if self.stack:
                self.stack[-1][3].extend(text)
            if name == tag:
                return

    def handle_data(self, data):
        if self.stack:
            self.stack[-1][3].append(data)
            if not self.stack[-1][2]:
                self.loose.append(data)
        else:
            self.loose.append(data)


def read_page(text: str) -> PageReader:
    reader = PageReader()
    reader.feed(text)
    reader.close()
    return reader


def iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
