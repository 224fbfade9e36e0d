"""Properties of memcite's untrusted-input paths, beside the atheris harnesses in tests/fuzz/:
the same four targets (a cited path, a record --jsonl line, a session line, a config file),
run by hypothesis in the normal suite."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile

from hypothesis import given
from hypothesis import strategies as st

from memcite.errors import InputError, MemciteError
from memcite.ledger.ingest import ingest_rollout
from memcite.ledger.jsonl_batch import jsonl_replies
from memcite.ledger.memory_files import FileLines, byte_lines, locate
from memcite.ledger.recording import MemoryFiles, record_replies
from memcite.ledger.store import open_store
from memcite.retention.checks import MemoryFolder, check_entry, markdown_sections
from memcite.retention.rules import load_memcite_config, resolve_settings
from memcite.untrusted import loads_json, storable

WORK = tempfile.mkdtemp(prefix="memcite-properties-")
ROOT = os.path.join(WORK, "memories")
SECRET = b"SECRET outside"


def _tree() -> None:
    os.makedirs(os.path.join(ROOT, "sub"))
    os.makedirs(os.path.join(WORK, "outside", "sub"))
    for name, data in (("memories/MEMORY.md", b"# M\none\n"), ("memories/sub/n.md", b"in\n"),
                       ("outside/s.md", SECRET), ("outside/sub/n.md", SECRET)):
        with open(os.path.join(WORK, name), "wb") as handle:
            handle.write(data)
    for name, target in {"in.md": "MEMORY.md", "sub/back": "..", "out.md": "../outside/s.md",
                         "outdir": os.path.join(WORK, "outside", "sub"), "loop": "loop"}.items():
        os.symlink(target, os.path.join(ROOT, name))


_tree()
REAL_ROOT = os.path.realpath(ROOT)
SECRET_HASH = hashlib.sha256(SECRET).hexdigest()

# Path pieces that reach every branch: names, links, "..", separators, NUL, surrogates.
PIECES = st.sampled_from(["MEMORY.md", "in.md", "sub", "back", "out.md", "outdir", "n.md",
                          "loop", "..", ".", "", "s.md", "outside", "C:", "\x00", "\ud800",
                          "\udcff", "é"])
PATHS = st.one_of(
    st.lists(PIECES, max_size=6).flatmap(
        lambda parts: st.sampled_from(["/", "\\"]).map(lambda sep: sep.join(parts))),
    st.text(max_size=40),
)


@given(PATHS)
def test_a_cited_path_never_leads_outside_the_memory_folder(path):
    outcome, real = locate(REAL_ROOT, path)
    assert outcome in ("ok", "outside_root", "missing")
    assert real is None or real.startswith(REAL_ROOT + os.sep)
    assert MemoryFiles(ROOT).lines_sha256(path, 1, 1) != SECRET_HASH
    assert check_entry(MemoryFolder(ROOT), path, 1, 1, SECRET_HASH) != "ok"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                               max_size=3),
    max_leaves=10,
)
REPLY_OBJECTS = st.fixed_dictionaries(
    {"text": st.text()},
    optional={"id": st.one_of(st.text(), JSON_VALUES), "at": JSON_VALUES,
              "thread_id": st.one_of(st.text(), JSON_VALUES), "cwd": st.text()},
)
CONN = open_store(os.path.join(WORK, "ledger.sqlite"))


@given(st.lists(st.one_of(REPLY_OBJECTS.map(json.dumps), JSON_VALUES.map(json.dumps),
                          st.text().map(str.strip), st.binary().map(lambda b: b.replace(b"\n", b""))
                          .map(lambda b: b.decode("latin-1"))), max_size=4))
def test_a_jsonl_batch_never_crashes_and_every_line_is_accounted_for(lines):
    data = "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n"
    problems: list[str] = []
    replies = jsonl_replies(io.BytesIO(data), "<batch>", 1 << 16, "replace", problems.append)
    results = list(record_replies(CONN, replies, memory_root=ROOT))
    non_blank = sum(1 for line in data.split(b"\n") if line.strip())
    assert len(results) + len(problems) == non_blank
    for result in results:
        json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")


SESSION_ITEMS = st.fixed_dictionaries({
    "type": st.sampled_from(["session_meta", "response_item", "event_msg"]),
    "payload": st.one_of(JSON_VALUES, st.fixed_dictionaries({
        "type": st.sampled_from(["message", "reasoning"]), "role": st.just("assistant"),
        "id": st.text(max_size=40), "cwd": st.text(max_size=10),
        "content": st.lists(st.fixed_dictionaries({"type": st.just("output_text"),
                                                   "text": st.text()}), max_size=2)})),
}, optional={"timestamp": JSON_VALUES})


@given(st.lists(st.one_of(SESSION_ITEMS.map(json.dumps), st.text(max_size=30)), max_size=5))
def test_a_session_file_never_crashes_ingest(lines):
    path = os.path.join(WORK, "rollout.jsonl")
    with open(path, "wb") as handle:
        handle.write("\n".join(lines).encode("utf-8", "surrogatepass"))
    try:
        report = ingest_rollout(CONN, path, memory_root=ROOT)
    except InputError:
        return
    assert report.replies == report.recorded + report.duplicates + report.rejected


@given(st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode),
                 st.dictionaries(st.sampled_from(["max_unused_days", "max_raw_memories", "x"]),
                                 JSON_VALUES, max_size=3).map(
                     lambda table: ("[retention]\n" + "\n".join(
                         f"{k} = {json.dumps(v)}" for k, v in table.items())).encode())))
def test_a_config_file_gives_settings_or_a_clear_error(data):
    path = os.path.join(WORK, "config.toml")
    with open(path, "wb") as handle:
        handle.write(data)
    try:
        resolve_settings(None, load_memcite_config(path), {})
    except MemciteError as error:
        assert str(error)


@given(st.binary(max_size=300).map(lambda b: b.replace(b"\x00", b"\n")))
def test_file_lines_read_as_byte_lines(data):
    lines = FileLines(data)
    assert list(lines) == byte_lines(data) and len(lines) == len(byte_lines(data))
    assert [s.to_dict() for s in markdown_sections(lines)] == \
        [s.to_dict() for s in markdown_sections(byte_lines(data))]


@given(st.text())
def test_storable_text_always_encodes_and_keeps_what_it_can(text):
    stored = storable(text)
    stored.encode("utf-8")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return
    assert stored == text


@given(st.integers(min_value=1, max_value=3000), st.sampled_from("[{"))
def test_deep_json_is_a_value_error(depth, opener):
    closer = "]" if opener == "[" else "}"
    text = (opener if opener == "[" else '{"a":') * depth + ("1" if opener == "[" else "1")
    text += closer * depth
    try:
        loads_json(text)
    except ValueError:
        pass


@given(st.lists(st.sampled_from([b"# A", b"## B ##", b"```", b"~~~", b"text", b"", b"\r",
                                 b"   ```", b"####### no", b"#\tC", b"x" * 20]), max_size=30),
       st.booleans(), st.integers(min_value=1, max_value=40))
def test_streamed_sections_match_the_held_reading(pieces, final_newline, chunk):
    from memcite.retention import checks

    data = b"\n".join(pieces) + (b"\n" if final_newline and pieces else b"")
    saved = checks._STREAM_CHUNK
    checks._STREAM_CHUNK = chunk  # lines cut across chunks at every place
    try:
        stream = io.BytesIO(data)
        streamed = [s.to_dict() for s in checks.markdown_sections_streamed(stream.read)]
    finally:
        checks._STREAM_CHUNK = saved
    assert streamed == [s.to_dict() for s in markdown_sections(FileLines(data))]
