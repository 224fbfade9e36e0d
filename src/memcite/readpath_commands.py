"""The bodies of ``memcite instructions`` and ``memcite truncate``: resolve defaults, call, print.

Shared by the Typer commands and the fast path; each returns the exit code.
This is the only place of the read path that knows environment variables and
default paths:

- ``CODEX_HOME`` (default ``~/.codex``): the memory root is ``$CODEX_HOME/memories``
  and project notes are ``$CODEX_HOME/memory/projects/<slug>/memory.md``;
- ``MEMCITE_CACHE_DIR``: where cached instructions go (default: the user cache
  dir, ``platformdirs.user_cache_dir("memcite")``, e.g. ``~/.cache/memcite``);
- ``TIKTOKEN_CACHE_DIR``: tiktoken's cache, searched for a BPE file;
- ``MEMCITE_BPE_FILE``: a BPE file to use (as ``--bpe-file``).
"""

from __future__ import annotations

import os
import sys

from memcite.errors import InputError, MemciteError
from memcite.inputs import DEFAULT_MAX_BYTES

TOKENIZER_CHOICES = ("o200k_base", "cl100k_base", "approx")
PROFILE_CHOICES = ("memcite", "codex")
ERROR_CHOICES = ("strict", "replace")


def _report(error: MemciteError) -> int:
    sys.stderr.write(f"memcite: error: {error}\n")
    return error.exit_code


def _warn(message: str) -> None:
    sys.stderr.write(f"memcite: warning: {message}\n")


def _check_choice(value: str, choices: tuple[str, ...], option: str) -> None:
    if value not in choices:
        raise InputError(f"{option}: {value!r} is not one of {', '.join(choices)}")


def default_codex_home() -> str:
    """``$CODEX_HOME``, else ``~/.codex``."""
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def user_cache_dir() -> str:
    """``$MEMCITE_CACHE_DIR``, else ``platformdirs.user_cache_dir("memcite")``.

    On Linux the platformdirs rule (``$XDG_CACHE_HOME/memcite``, else
    ``~/.cache/memcite``) is applied here without importing platformdirs, which
    would cost more than the rest of a cached ``memcite instructions``;
    ``tests/test_instructions.py`` checks that both agree.
    """
    chosen = os.environ.get("MEMCITE_CACHE_DIR")
    if chosen:
        return chosen
    if sys.platform.startswith("linux"):
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        if os.path.isabs(xdg):
            return os.path.join(xdg, "memcite")
        home = os.environ.get("HOME", "")
        if os.path.isabs(home):
            return os.path.join(home, ".cache", "memcite")
    import platformdirs

    return platformdirs.user_cache_dir("memcite", appauthor=False)


def _tokenizer_loader(name: str, bpe_file: str | None):
    def load():
        from memcite.tokens import get_tokenizer

        cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
        return get_tokenizer(name, bpe_file=bpe_file, tiktoken_cache_dir=cache)

    return load


def instructions(
    cwd: str | None = None,
    memory_root: str | None = None,
    codex_home: str | None = None,
    budget: int = 2500,
    tokenizer: str | None = None,
    profile: str = "memcite",
    errors: str = "strict",
    bpe_file: str | None = None,
    json: bool = False,  # noqa: A002 - mirrors the --json flag
    explain: bool = False,
    no_cache: bool = False,
) -> int:
    """Print the developer instructions for ``cwd`` (nothing when there is no memory to inject)."""
    try:
        _check_choice(profile, PROFILE_CHOICES, "--profile")
        _check_choice(errors, ERROR_CHOICES, "--errors")
        name = tokenizer or ("approx" if profile == "codex" else "o200k_base")
        _check_choice(name, TOKENIZER_CHOICES, "--tokenizer")
        if budget < 0:
            raise InputError(f"--budget: {budget} is below 0")
        home = codex_home or default_codex_home()
        root = memory_root or os.path.join(home, "memories")
        if cwd is not None and not os.path.isdir(cwd):
            raise InputError(f"--cwd {cwd}: no such directory")
        from memcite.instructions import build_instructions

        result = build_instructions(
            root,
            profile=profile,
            budget=budget,
            tokenizer_name=name,
            load_tokenizer=_tokenizer_loader(name, bpe_file),
            codex_home=home,
            cwd=cwd if cwd is not None else os.getcwd(),
            errors=errors,
            cache_dir=None if no_cache else user_cache_dir(),
        )
    except MemciteError as error:
        return _report(error)
    if not explain:  # the table lists the warnings itself
        for warning in result.warnings:
            _warn(warning)
    if json:
        import json as _json

        payload = result.to_dict()
        if explain:
            from memcite.instructions import explain as explain_table

            payload["explain"] = explain_table(result)
        sys.stdout.write(_json.dumps(payload, ensure_ascii=False) + "\n")
    elif explain:
        from memcite.instructions import explain as explain_table

        sys.stdout.write(explain_table(result))
    elif result.instructions is not None:
        sys.stdout.write(result.instructions)
    sys.stdout.flush()
    return 0


def truncate(
    source: str | None = None,
    budget: int = 2500,
    tokenizer: str = "o200k_base",
    bpe_file: str | None = None,
    errors: str = "strict",
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> int:
    """Write ``source`` cut to ``budget`` tokens, byte for byte (no newline added).

    ``approx`` applies Codex's rule (the middle is cut); a real tokenizer keeps
    the head, cut at a heading or line boundary, with the marker inside the budget.
    """
    try:
        _check_choice(tokenizer, TOKENIZER_CHOICES, "--tokenizer")
        _check_choice(errors, ERROR_CHOICES, "--errors")
        if budget < 0:
            raise InputError(f"--budget: {budget} is below 0")
        from memcite.inputs import read_text

        text = read_text(source, errors=errors, max_bytes=max_bytes)
        if tokenizer == "approx":
            from memcite.truncation import truncate_approx

            result = truncate_approx(text, budget)
        else:
            from memcite.truncation import truncate_to_budget

            loaded = _tokenizer_loader(tokenizer, bpe_file)()
            cut = truncate_to_budget(text, budget, loaded)
            result = cut.text
            if cut.truncated and not result:
                sys.stderr.write(
                    f"memcite: warning: a budget of {budget} tokens cannot hold even the cut marker;"
                    " nothing was written (raise --budget)\n"
                )
    except MemciteError as error:
        return _report(error)
    out = sys.stdout.buffer
    out.write(result.encode("utf-8", "surrogatepass"))
    out.flush()
    return 0
