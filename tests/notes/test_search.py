"""memcite search: the FTS5 index in memcite's database, refreshed by file stamps, and
scoped to the working directory's project."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from memcite.ledger.store import open_store
from memcite.notes import search
from memcite.notes.storage import locate_note

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _note(location, lines: list[str]) -> None:
    os.makedirs(location.project_dir, exist_ok=True)
    with open(location.note_file, "w", encoding="utf-8") as handle:
        handle.write(f"# Project memory\n\nProject: {location.project}\n\n## Decisions\n\n")
        handle.write("".join(f"- {line}\n" for line in lines))


def _event(location, text: str, kind: str = "failure", n: int = 0) -> None:
    os.makedirs(location.project_dir, exist_ok=True)
    with open(os.path.join(location.project_dir, "events.jsonl"), "a", encoding="utf-8") as f:
        f.write(json.dumps({"id": f"ev-{n:08d}", "time": "2026-01-01T00:00:00Z", "epoch": 1,
                            "kind": kind, "text": text, "files": ["src/x.py"]}) + "\n")


@pytest.fixture
def world(tmp_path):
    home = tmp_path / "home"
    for name in ("proj", "other"):
        (tmp_path / name / ".git").mkdir(parents=True)
    here = locate_note(str(tmp_path / "proj"), str(home))
    there = locate_note(str(tmp_path / "other"), str(home))
    glob = locate_note(str(tmp_path / "proj"), str(home), scope="global")
    memory = home / "memories"
    (memory / "rollout_summaries").mkdir(parents=True)
    (memory / "skills" / "deploy").mkdir(parents=True)
    (memory / "MEMORY.md").write_text("# Memory\n\n- the flaky sqlite test needs a seed\n")
    (memory / "rollout_summaries" / "r1.md").write_text("thread_id: x\n\nsqlite busy timeout\n")
    (memory / "skills" / "deploy" / "SKILL.md").write_text("Deploy with `make release`\n")
    conn = open_store(tmp_path / "m.sqlite")
    sources = search.sources_for(here, search.KINDS, ("project", "global"), str(memory))
    return {"here": here, "there": there, "global": glob, "memory": memory, "conn": conn,
            "sources": sources, "tmp": tmp_path, "home": home}


def _find(world, text, **kw):
    search.refresh(world["conn"], world["sources"])
    return search.query(world["conn"], text, world["sources"], **kw)


def test_fts5_is_available_here():
    assert search.ensure_schema(sqlite3.connect(":memory:", isolation_level=None)) is None


def test_hits_carry_file_line_and_text_from_every_kind(world):
    _note(world["here"], ["Use sqlite WAL mode"])
    _note(world["global"], ["Prefers sqlite over postgres"])
    _event(world["here"], "`pytest -n 8` deadlocks on sqlite")
    hits = _find(world, "sqlite")
    by_file = {(h.file, h.kind, h.scope): h for h in hits}
    assert (world["here"].note_file, "notes", "project") in by_file
    assert (world["global"].note_file, "notes", "global") in by_file
    assert any(h.kind == "events" and h.line == 1 and "deadlocks" in h.text for h in hits)
    memory_hit = next(h for h in hits if h.file.endswith("MEMORY.md"))
    assert memory_hit.line == 3 and "**sqlite**" in memory_hit.snippet
    note_hit = by_file[(world["here"].note_file, "notes", "project")]
    with open(note_hit.file, encoding="utf-8") as handle:
        assert "Use sqlite WAL mode" in handle.read().split("\n")[note_hit.line - 1]
    skill = _find(world, "release")
    assert [h.file for h in skill] == [str(world["memory"] / "skills" / "deploy" / "SKILL.md")]


def test_another_projects_note_and_events_never_match(world):
    _note(world["here"], ["ordinary entry"])
    _note(world["there"], ["zebracorn secret plan"])
    _event(world["there"], "zebracorn failure")
    # the other project's files are in the index (searched from there) ...
    there_sources = search.sources_for(world["there"], search.KINDS, ("project",),
                                       str(world["memory"]))
    search.refresh(world["conn"], there_sources)
    assert len(search.query(world["conn"], "zebracorn", there_sources)) == 2
    # ... and never candidates from here
    assert _find(world, "zebracorn") == []
    assert world["conn"].execute("SELECT count(*) FROM search_index WHERE search_index MATCH "
                                 "'zebracorn'").fetchone()[0] == 2


def test_a_note_naming_another_project_is_not_searched(world):
    _note(world["here"], ["collided entry"])
    text = open(world["here"].note_file).read().replace(world["here"].project, "/elsewhere")
    open(world["here"].note_file, "w").write(text)
    stats = search.refresh(world["conn"], world["sources"])
    assert any("another project" in s for s in stats.skipped)
    assert search.query(world["conn"], "collided", world["sources"]) == []


def test_refresh_is_incremental_by_stamps(world):
    _note(world["here"], ["alpha one", "alpha two"])
    _note(world["global"], ["beta"])
    first = search.refresh(world["conn"], world["sources"])
    assert first.files_indexed == 5  # two notes, MEMORY.md, one summary, one skill
    again = search.refresh(world["conn"], world["sources"])
    assert (again.files_indexed, again.rows_written, again.files_dropped) == (0, 0, 0)
    _note(world["here"], ["alpha one", "alpha two", "gamma three"])
    changed = search.refresh(world["conn"], world["sources"])
    assert changed.files_indexed == 1
    assert changed.rows_written == 6  # the changed note's non-blank lines only
    assert [h.line for h in search.query(world["conn"], "gamma", world["sources"])] == [9]
    assert len(search.query(world["conn"], "alpha", world["sources"])) == 2  # no stale duplicates
    os.unlink(world["global"].note_file)
    dropped = search.refresh(world["conn"], world["sources"])
    assert (dropped.files_dropped, dropped.files_indexed) == (1, 0)
    assert search.query(world["conn"], "beta", world["sources"]) == []


def test_ranking_puts_the_denser_match_first(world):
    _note(world["here"], ["sqlite sqlite sqlite migrations", "a long line about many other "
                          "things that mentions sqlite once among lots of unrelated words"])
    hits = _find(world, "sqlite", kinds=("notes",))
    assert "migrations" in hits[0].text
    assert hits[0].score > hits[1].score
    both = _find(world, "sqlite migrations", kinds=("notes",))
    assert len(both) == 1  # every word must match


@pytest.mark.parametrize("hostile", ['"', '""', "*", "NEAR(", "NEAR(a b)", "OR", "a OR b",
                                     "AND NOT", "col:sqlite", "^sqlite", "sqlite*", "(", ")",
                                     "'; DROP TABLE search_index; --", "\x00", "é ü 日本語 🦀",
                                     "\u202e", '"sqlite" OR "x"', "{a b}: c", "-sqlite", "+"])
def test_hostile_queries_never_raise(world, hostile):
    _note(world["here"], ["sqlite entry", "日本語 text"])
    hits = _find(world, hostile)
    assert isinstance(hits, list)
    assert world["conn"].execute("SELECT count(*) FROM search_index").fetchone()[0] > 0


def test_unicode_words_match_without_diacritics(world):
    _note(world["here"], ["Le café est prêt", "日本語"])
    assert len(_find(world, "cafe")) == 1
    assert len(_find(world, "日本語")) == 1


def test_a_quoted_term_is_a_phrase_not_syntax():
    assert search.fts_query('a "b" NEAR(') == '"a" """b""" "NEAR("'
    assert search.fts_query("   ") is None


def test_secrets_are_masked_in_the_index_and_the_snippets(world):
    _note(world["here"], [f"deploy token {TOKEN} for staging"])
    (world["memory"] / "MEMORY.md").write_text(f"- staging key {TOKEN}\n")
    hits = _find(world, "staging")
    assert len(hits) == 2
    for hit in hits:
        assert TOKEN not in hit.snippet and TOKEN not in hit.text
        assert "[REDACTED" in hit.text
    stored = " ".join(row[0] for row in world["conn"].execute("SELECT text FROM search_index"))
    assert TOKEN not in stored
    assert _find(world, TOKEN) == []


def test_a_link_out_of_the_memory_folder_is_not_followed(world):
    outside = world["tmp"] / "outside.md"
    outside.write_text("exfiltrated words\n")
    os.symlink(outside, world["memory"] / "rollout_summaries" / "evil.md")
    stats = search.refresh(world["conn"], world["sources"])
    assert any("evil.md" in s for s in stats.skipped)
    assert search.query(world["conn"], "exfiltrated", world["sources"]) == []


def test_search_writes_nothing_in_codex_home(world):
    _note(world["here"], ["sqlite"])
    def snapshot():
        return sorted((str(p), p.stat().st_mtime_ns, p.stat().st_size)
                      for p in world["home"].rglob("*"))
    before = snapshot()
    _find(world, "sqlite")
    assert snapshot() == before


def test_cli_json_fits_the_schema_and_exit_codes(world, monkeypatch, capsys):
    from memcite.cli import search_commands
    from memcite.contracts.outputs import SearchOutput

    _note(world["here"], ["Use sqlite WAL mode"])
    monkeypatch.setenv("MEMCITE_DB", str(world["tmp"] / "cli.sqlite"))
    code = search_commands.search("sqlite", cwd=world["here"].cwd,
                                  codex_home=str(world["home"]), json=True)
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    SearchOutput.model_validate(data)
    assert data["count"] >= 1 and not data["in_memory"]
    assert search_commands.search("", cwd=world["here"].cwd, codex_home=str(world["home"])) == 2
    assert search_commands.search("x", kind="bogus", cwd=world["here"].cwd,
                                  codex_home=str(world["home"])) == 2


def test_cli_falls_back_to_an_in_memory_index_when_the_database_is_read_only(
        world, capsys, monkeypatch):
    from memcite.cli import search_commands
    from memcite.ledger import database
    from memcite.ledger.store import StoreError

    def read_only(db):
        raise StoreError(f"{db}: read-only (attempt to write a readonly database); left untouched")

    monkeypatch.setattr(database, "open_ledger", read_only)
    code = search_commands.search("seed", cwd=world["here"].cwd, codex_home=str(world["home"]),
                                  db=str(world["tmp"] / "ro.sqlite"), json=True)
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert code == 0 and data["in_memory"] is True and data["count"] == 1
    assert "in memory" in captured.err


def test_the_mcp_search_tool_says_an_in_memory_index_in_its_result_not_on_stderr(
        world, capsys, monkeypatch):
    """The tool captures no output: the library call is told to say nothing."""
    from memcite.ledger import database
    from memcite.ledger.store import StoreError
    from memcite.mcp import tools as mcp_tools
    from memcite.paths import Locations

    def read_only(db):
        raise StoreError(f"{db}: read-only (attempt to write a readonly database); left untouched")

    monkeypatch.setattr(database, "open_ledger", read_only)
    context = mcp_tools.ToolContext(Locations(db=str(world["tmp"] / "ro.sqlite"),
                                              codex_home=str(world["home"])),
                                    mcp_tools.ConfirmTokens())
    result = mcp_tools.call_tool(context, None, "search",
                                 {"cwd": world["here"].cwd, "query": "seed"})
    captured = capsys.readouterr()
    assert result["isError"] is False and result["structuredContent"]["in_memory"] is True
    assert captured.err == "" and captured.out == ""


def test_without_fts5_search_says_so(monkeypatch, world):
    from memcite.ledger import store

    monkeypatch.setattr(store, "fts5_available", lambda conn: False)
    with pytest.raises(search.SearchUnavailable) as info:
        search.ensure_schema(sqlite3.connect(":memory:", isolation_level=None))
    assert info.value.exit_code == 2 and "FTS5" in str(info.value)


def test_mcp_search_tool_is_read_only_and_scoped(world):
    from memcite.mcp import tools as mcp_tools
    from memcite.paths import Locations

    _note(world["here"], ["Use sqlite WAL mode"])
    _note(world["there"], ["sqlite elsewhere"])
    context = mcp_tools.ToolContext(Locations(db=str(world["tmp"] / "mcp.sqlite"),
                                              codex_home=str(world["home"])),
                                    mcp_tools.ConfirmTokens())
    result = mcp_tools.call_tool(context, None, "search",
                                 {"cwd": world["here"].cwd, "query": "sqlite"})
    assert result["isError"] is False
    files = {hit["file"] for hit in result["structuredContent"]["hits"]}
    assert world["here"].note_file in files and world["there"].note_file not in files
    assert mcp_tools.BY_NAME["search"].annotations()["readOnlyHint"] is True


@pytest.mark.parametrize("damage", [
    "DELETE FROM search_index",
    "DROP TABLE search_index",
    "DELETE FROM search_index WHERE search_index MATCH 'zebracorn'",
    "DROP TABLE search_files",
])
def test_an_index_that_disagrees_with_its_stamps_is_rebuilt(world, damage):
    _note(world["here"], ["the zebracorn plan"])
    _event(world["here"], "zebracorn failure")
    assert len(_find(world, "zebracorn")) == 2
    world["conn"].execute(damage)
    assert len(_find(world, "zebracorn")) == 2  # never a wrong "no match"
    again = search.refresh(world["conn"], world["sources"])
    assert (again.files_indexed, again.rows_written) == (0, 0)  # whole again: nothing re-read


def test_a_word_finds_its_other_forms(world):
    """Issue 40: `search "liveness probe"` missed "Liveness probes…" (no stemming)."""
    _note(world["here"], ["Liveness probes fail while the cache warms up", "Readiness is fine"])
    hits = _find(world, "liveness probe")
    assert [h.line for h in hits] == [7] and "**Liveness**" in hits[0].snippet
    assert [h.line for h in _find(world, "failing probing")] == [7]


def test_an_index_made_with_the_old_tokenizer_is_rebuilt(world):
    conn = world["conn"]
    _note(world["here"], ["Liveness probes fail while the cache warms up"])
    search.refresh(conn, world["sources"])
    conn.execute("DROP TABLE search_index")  # as memcite made it before stemming
    conn.execute("CREATE VIRTUAL TABLE search_index USING fts5(text, owner UNINDEXED, "
                 "kind UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')")
    conn.execute("DELETE FROM search_files")
    assert [h.line for h in _find(world, "probe")] == [7]  # rebuilt at the next search
    (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'search_index'").fetchone()
    assert "porter" in sql
