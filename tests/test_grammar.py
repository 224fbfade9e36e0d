"""The grammar file is the one source of the syntax; the hot path stays light."""

import os
import subprocess
import sys
from pathlib import Path

from memcite import parse_reply
from memcite.citations._lark_reader import CACHE_FILE, build_parser
from memcite.citations.reading import _grammar_text, _parser, grammar_path, tags

TYPICAL = Path(__file__).resolve().parent.parent / "corpus" / "replies" / "typical.txt"


def test_tags_come_from_the_grammar_terminals():
    parser = _parser()
    for name in tags().__slots__:
        assert getattr(tags(), name) == parser.terminal_literal(name.upper())


def test_parser_is_lalr_with_the_contextual_lexer():
    options = _parser()._lark.options
    assert (options.parser, options.lexer) == ("lalr", "contextual")


def test_grammar_file_is_the_shipped_one():
    assert Path(grammar_path()).name == "citation.lark"
    assert "ENTRY.2:" in Path(grammar_path()).read_text(encoding="utf-8")


def test_a_corrupt_table_cache_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCITE_CACHE_DIR", str(tmp_path))
    (tmp_path / CACHE_FILE).write_bytes(b"not a pickle")
    parser = build_parser(_grammar_text())
    rows = parser.parse("a.md:1-2|note=[x]\n", start="entry_section")
    assert [row[0] for row in rows] == ["ENTRY"]


def test_an_unwritable_cache_folder_still_reads(tmp_path, monkeypatch):
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    monkeypatch.setenv("MEMCITE_CACHE_DIR", str(blocked / "cache"))
    parser = build_parser(_grammar_text())
    assert parser.parse("x\n", start="id_section")[0][1] == "x\n"


def _modules_after(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
        capture_output=True, text=True, check=True, env=os.environ,
    )
    return set(done.stdout.split())


def test_a_reply_without_a_block_never_imports_lark():
    modules = _modules_after("import memcite; memcite.parse_reply('just prose')")
    assert "lark" not in modules


def test_strip_imports_nothing_heavy():
    code = (
        f"import sys; sys.argv = ['memcite', 'strip', {str(TYPICAL)!r}]\n"
        "from memcite.__main__ import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
    )
    modules = _modules_after(code)
    assert "lark" in modules  # the reply has a block
    for heavy in ("typer", "click", "tiktoken", "sqlite_utils", "pydantic", "rich", "regex"):
        assert heavy not in modules, heavy


def test_reading_a_block_after_importing_regex_still_works():
    import regex  # noqa: F401  (tiktoken's dependency; lark must not break it or be broken by it)

    assert parse_reply(TYPICAL.read_text(encoding="utf-8")).citation is not None
