"""The bodies of ``memcite instructions`` and ``memcite truncate``: resolve defaults, call, print.

Shared by the Typer commands and the fast path; each returns the exit code.
This is the only place of the read path that knows environment variables and
default paths:

- ``CODEX_HOME`` (default ``~/.codex``): the memory root is ``$CODEX_HOME/memories``
  and project notes are ``$CODEX_HOME/memory/projects/<slug>/memory.md``;
- ``MEMCITE_CACHE_DIR``: where cached instructions go (default: the user cache
  folder, e.g. ``~/.cache/memcite``);
- ``TIKTOKEN_CACHE_DIR``: tiktoken's cache, searched for a BPE file;
- ``MEMCITE_BPE_FILE``: a BPE file to use (as ``--bpe-file``);
- ``MEMCITE_SESSION``: the agent session whose scratchpad note is added (as ``--session``).

The locations themselves are resolved by ``memcite.paths``.
"""

from __future__ import annotations

import os
import sys

from memcite.cli.console import check_choice, dump_json, report_error, warn
from memcite.cli.inputs import DEFAULT_MAX_BYTES
from memcite.errors import InputError, MemciteError
from memcite.paths import Locations

TOKENIZER_CHOICES = ("o200k_base", "cl100k_base", "approx")
PROFILE_CHOICES = ("memcite", "codex")
ERROR_CHOICES = ("strict", "replace")


def _tiktoken_cache() -> str | None:
    """tiktoken's own cache folder, as tiktoken names it."""
    return os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")


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
    session: str | None = None,
    scopes: str | None = None,
) -> int:
    """Print the developer instructions for ``cwd`` (nothing when there is no memory to inject)."""
    try:
        chosen = None
        if scopes is not None:
            from memcite.readpath.projects import parse_scopes

            chosen = parse_scopes(scopes)
        if session is not None:
            from memcite.readpath.projects import check_session_id

            check_session_id(session)
        check_choice(profile, PROFILE_CHOICES, "--profile")
        check_choice(errors, ERROR_CHOICES, "--errors")
        name = tokenizer or ("approx" if profile == "codex" else "o200k_base")
        check_choice(name, TOKENIZER_CHOICES, "--tokenizer")
        if budget < 0:
            raise InputError(f"--budget: {budget} is below 0")
        from memcite.readpath.instructions import instructions_for

        locations = Locations(codex_home=codex_home)
        result, found_problems = instructions_for(
            locations.codex_home_path, memory_root=memory_root, cwd=cwd, budget=budget,
            tokenizer_name=name, profile=profile, errors=errors, bpe_file=bpe_file,
            tiktoken_cache_dir=_tiktoken_cache(),
            cache_dir=None if no_cache else locations.cache_dir, scopes=chosen,
            session=session or None, today=_today(), warn=warn)
    except MemciteError as error:
        return report_error(error)
    if not explain:  # the table lists the warnings itself
        for warning in result.warnings:
            warn(warning)
    if json:
        from memcite.readpath.explain import instructions_json

        dump_json(instructions_json(result, found_problems, explain))
    elif explain:
        from memcite.readpath.explain import explain as explain_table

        sys.stdout.write(explain_table(result))
    elif result.instructions is not None:
        sys.stdout.write(result.instructions)
    sys.stdout.flush()
    return 0


def _today() -> str:
    import time

    from memcite.times import utc_day

    return utc_day(time.time())


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
        check_choice(tokenizer, TOKENIZER_CHOICES, "--tokenizer")
        check_choice(errors, ERROR_CHOICES, "--errors")
        if budget < 0:
            raise InputError(f"--budget: {budget} is below 0")
        from memcite.cli.inputs import read_text
        from memcite.readpath.truncation import truncate_text

        text = read_text(source, errors=errors, max_bytes=max_bytes)
        result, nothing = truncate_text(text, budget, tokenizer, bpe_file=bpe_file,
                                        tiktoken_cache_dir=_tiktoken_cache())
        if nothing:
            from memcite.display import count

            warn(f"a budget of {count(budget, 'token')} cannot hold even the cut marker;"
                 " nothing was written (raise --budget)")
    except MemciteError as error:
        return report_error(error)
    out = sys.stdout.buffer
    out.write(result.encode("utf-8", "surrogatepass"))
    out.flush()
    return 0
