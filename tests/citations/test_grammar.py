"""The grammar file is the one source of the syntax; the hot path stays light."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lark import Lark

from memcite import parse_reply
from memcite.citations import _section_tables
from memcite.citations._lark_reader import CACHE_FILE, build_parser, export_tables
from memcite.citations._section_tables import (
    MAX_TABLES_BYTES,
    TABLES_FILE,
    SectionLines,
    TableParser,
    load_tables,
)
from memcite.citations.reading import _grammar_text, _parser, grammar_path, tags
from memcite.citations.section_parser import build_section_parser
from memcite.errors import MemciteError

TYPICAL = Path(__file__).resolve().parents[2] / "corpus" / "replies" / "typical.txt"


def test_tags_come_from_the_grammar_terminals():
    parser = _parser()
    for name in tags().__slots__:
        assert getattr(tags(), name) == parser.terminal_literal(name.upper())


def test_parser_is_lalr_with_the_contextual_lexer():
    options = build_parser(_grammar_text()).lark.options
    assert (options.parser, options.lexer) == ("lalr", "contextual")
    # the reader replays the tables lark built with those options
    assert isinstance(_parser(), TableParser)
    assert _parser().options == {"parser": "lalr", "lexer": "contextual"}


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


def test_strip_imports_nothing_heavy(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCITE_CACHE_DIR", str(tmp_path))
    code = (
        f"import sys; sys.argv = ['memcite', 'strip', {str(TYPICAL)!r}]\n"
        "from memcite.__main__ import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
    )
    first = _modules_after(code)
    assert "lark" in first  # the reply has a block and nothing is cached: lark builds the tables
    assert (tmp_path / TABLES_FILE).is_file()
    modules = _modules_after(code)
    # then lark's tables are replayed: no lark, nor what lark imports
    for heavy in ("lark", "typer", "click", "tiktoken", "sqlite_utils", "pydantic", "rich", "regex",
                  "typing", "logging", "dataclasses", "inspect"):
        assert heavy not in modules, heavy


def test_reading_a_block_after_importing_regex_still_works():
    import regex  # noqa: F401  (tiktoken's dependency; lark must not break it or be broken by it)

    assert parse_reply(TYPICAL.read_text(encoding="utf-8")).citation is not None


# --------------------------------------------------------------------------- the replayed tables


def _lark_parser():
    return build_parser(_grammar_text(), use_cache=False)


def _replay(grammar_parser=None):
    built = (grammar_parser or _lark_parser()).lark
    return TableParser(export_tables(built, _grammar_text()), SectionLines())


# Text made of the pieces the entry rule cuts at, the whitespace Rust trims, and the line breaks
# that do not end a line.
section_texts = st.lists(
    st.sampled_from(["a.md", ":", "1", "-", "2", "+", "|note=[", "]", "x", " ", "\t", "\n", "\r",
                     "\u2028", "\x85", "\u3000", "\x0b", "019c6e27-e55b-73d1-87d8-4e01f1f75043",
                     "99999999999", "é", "<", "/"]),
    max_size=40,
).map("".join) | st.text(max_size=80)


@given(section_texts)
def test_replayed_tables_read_every_section_as_lark_does(text):
    lark_parser, replay = _COMPARED
    for start in ("entry_section", "id_section"):
        assert replay.parse(text, start) == lark_parser.parse(text, start), start


_COMPARED = (_lark_parser(), _replay())


def test_replayed_tables_read_the_corpus_sections_as_lark_does():
    lark_parser, replay = _COMPARED
    folder = TYPICAL.parent
    sections = 0
    for path in sorted(folder.glob("*.txt")):
        text = path.read_text(encoding="utf-8", errors="surrogatepass")
        for open_tag, close_tag, start in (("<citation_entries>", "</citation_entries>", "entry_section"),
                                           ("<rollout_ids>", "</rollout_ids>", "id_section"),
                                           ("<thread_ids>", "</thread_ids>", "id_section")):
            begin = text.find(open_tag)
            end = text.find(close_tag, begin)
            if begin >= 0 and end >= 0:
                sections += 1
                body = text[begin + len(open_tag):end]
                assert replay.parse(body, start) == lark_parser.parse(body, start), (path.name, start)
    assert sections >= 10


def test_replayed_tables_know_the_tag_literals():
    replay = _COMPARED[1]
    assert replay.terminal_literal("BLOCK_OPEN") == "<oai-mem-citation>"
    line = "".join(getattr(tags(), name) for name in tags().__slots__)
    assert replay.parse(line, "tags") == _COMPARED[0].parse(line, "tags")


# A grammar with what ours does not use: ``?rule``, aliases, an inlined ``_rule``, ``!rule``,
# ignored whitespace, and keywords that the NAME terminal also matches (lark retypes them).
OTHER_GRAMMAR = r"""
start: statement*
?statement: assignment | call | "pass" -> skip
assignment: NAME "=" _value ";"
call: NAME "(" [_args] ")" ";"
_args: _value ("," _value)*
_value: NUMBER | NAME | KEYWORD
!keyword_use: "if" NAME
KEYWORD: "if" | "else"
NAME: /[a-z]+/
NUMBER: /[0-9]+/
%ignore /[ \t\n]+/
"""


def _tree_rows(value):
    if hasattr(value, "children"):
        return (value.data, [_tree_rows(child) for child in value.children])
    if value is None:
        return None
    return (value.type, value.value, value.line, value.column)


@given(st.lists(st.sampled_from(["a", "b", "if", "else", "pass", "=", ";", "(", ")", ",", "7",
                                 " ", "\n", "x1"]), max_size=30).map("".join))
def test_replay_follows_lark_on_another_grammar(text):
    lark_tree = err_lark = replay_tree = err_replay = None
    try:
        lark_tree = _tree_rows(_OTHER[0].parse(text))
    except Exception:  # noqa: BLE001 - lark's errors: the replay must fail too
        err_lark = True
    try:
        replay_tree = _tree_rows(_OTHER[1].parse(text, "start"))
    except MemciteError:
        err_replay = True
    assert (lark_tree, err_lark) == (replay_tree, err_replay)


def _other_pair():
    built = Lark(OTHER_GRAMMAR, parser="lalr", lexer="contextual", maybe_placeholders=False)
    tables = export_tables(built, OTHER_GRAMMAR, starts=("start",))
    assert tables is not None
    return built, TableParser(tables, object())


_OTHER = _other_pair()


def test_placeholders_are_left_to_lark():
    grammar = 'start: "x" [NAME]\nNAME: /[a-z]+/\n'
    built = Lark(grammar, parser="lalr", lexer="contextual", maybe_placeholders=True)
    assert export_tables(built, grammar, starts=("start",)) is None
    built = Lark(grammar, parser="lalr", lexer="contextual", maybe_placeholders=False)
    assert export_tables(built, grammar, starts=("start",)) is not None


def test_tables_of_another_grammar_or_another_lark_are_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCITE_CACHE_DIR", str(tmp_path))
    grammar = _grammar_text()
    build_section_parser(grammar)
    path = str(tmp_path / TABLES_FILE)
    assert load_tables(path, grammar) is not None
    assert load_tables(path, grammar + "\n// changed\n") is None
    monkeypatch.setattr(_section_tables, "lark_stamp", lambda lark_file: [lark_file, -1, -1])
    assert load_tables(path, grammar) is None


def test_a_changed_grammar_rebuilds_the_tables(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCITE_CACHE_DIR", str(tmp_path))
    grammar = _grammar_text()
    build_section_parser(grammar)
    changed = grammar + "// a comment that changes nothing but the text\n"
    assert changed != grammar
    parser = build_section_parser(changed)
    assert isinstance(parser, TableParser)
    assert load_tables(str(tmp_path / TABLES_FILE), changed) is not None


@pytest.mark.parametrize("content", [b"", b"not marshal", b"\xe3" * 10, b"\x00" * 64])
def test_corrupt_tables_are_rebuilt(tmp_path, monkeypatch, content):
    monkeypatch.setenv("MEMCITE_CACHE_DIR", str(tmp_path))
    (tmp_path / TABLES_FILE).write_bytes(content)
    parser = build_section_parser(_grammar_text())
    assert [row[0] for row in parser.parse("a.md:1-2|note=[x]\n", "entry_section")] == ["ENTRY"]
    assert load_tables(str(tmp_path / TABLES_FILE), _grammar_text()) is not None
    assert os.stat(tmp_path / TABLES_FILE).st_mode & 0o077 == 0


def test_an_unexpected_token_is_a_memcite_error():
    replay = _COMPARED[1]
    with pytest.raises(MemciteError, match="could not read a tags at line 1"):
        replay.parse("<oai-mem-citation>", "tags")


def test_an_unwritable_cache_folder_still_reads_without_saving(tmp_path, monkeypatch):
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    monkeypatch.setenv("MEMCITE_CACHE_DIR", str(blocked / "cache"))
    parser = build_section_parser(_grammar_text())
    assert parser.parse("x\n", "id_section")[0][1] == "x\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["file-not-folder"]


@pytest.mark.parametrize("planted", ["fifo", "folder", "too large"])
def test_a_planted_tables_file_is_not_read_and_is_replaced(tmp_path, monkeypatch, planted):
    """A FIFO (which would block a plain open), a folder or an oversized file in the tables'
    place: the reading goes on at once, with lark's tables built again."""
    monkeypatch.setenv("MEMCITE_CACHE_DIR", str(tmp_path))
    target = tmp_path / TABLES_FILE
    if planted == "fifo":
        os.mkfifo(target)
    elif planted == "folder":
        target.mkdir()
    else:
        target.write_bytes(b"\x00" * (MAX_TABLES_BYTES + 1))
    assert load_tables(str(target), _grammar_text()) is None
    parser = build_section_parser(_grammar_text())
    assert [row[0] for row in parser.parse("a.md:1-2|note=[x]\n", "entry_section")] == ["ENTRY"]
    if planted != "folder":  # a folder is not replaced by a file; the next run builds again
        assert load_tables(str(target), _grammar_text()) is not None


@pytest.mark.parametrize("planted", ["fifo", "symlink to a device"])
def test_a_planted_lark_cache_file_is_not_opened(tmp_path, monkeypatch, planted):
    """lark opens its cache file itself (blocking): a FIFO or a link in its place must not
    hang the reading; the tables are built in memory and our own tables file still saved."""
    from memcite.citations._lark_reader import CACHE_FILE

    monkeypatch.setenv("MEMCITE_CACHE_DIR", str(tmp_path))
    target = tmp_path / CACHE_FILE
    if planted == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero")
    parser = build_section_parser(_grammar_text())
    assert [row[0] for row in parser.parse("a.md:1-2|note=[x]\n", "entry_section")] == ["ENTRY"]
    assert load_tables(str(tmp_path / TABLES_FILE), _grammar_text()) is not None
    assert not target.is_file() or target.is_symlink()  # left as it was, never written through


def test_the_cache_folder_is_the_callers(tmp_path, monkeypatch):
    """A folder passed in is the one written to, whatever the environment names."""
    monkeypatch.setenv("MEMCITE_CACHE_DIR", str(tmp_path / "from-the-environment"))
    parser = build_section_parser(_grammar_text(), cache_dir=str(tmp_path / "given"))
    assert [row[0] for row in parser.parse("a.md:1-2|note=[x]\n", "entry_section")] == ["ENTRY"]
    assert load_tables(str(tmp_path / "given" / TABLES_FILE), _grammar_text()) is not None
    assert not (tmp_path / "from-the-environment").exists()
