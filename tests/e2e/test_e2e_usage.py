"""Codex's ``usage_count``/``last_usage`` after a cited turn equal memcite's reading under
``--policy codex``; Codex's SQLite home is found where Codex writes it."""

from __future__ import annotations

import os
import time
from collections import Counter

import pytest

from conftest import assert_ran

THREADS = [f"019a0000-0000-7000-8000-{n:012x}" for n in range(1, 9)]
A, B, C, D, E, F, G, H = THREADS
UNKNOWN = "019affff-0000-7000-8000-00000000ffff"

# Every way of writing an id that Codex's reader treats differently.
ROLLOUT_IDS = [
    A, A,                                   # repeated exactly: once
    B, B.upper(),                           # case variants: twice
    "{" + C + "}",                          # braces
    "urn:uuid:" + D,                        # a URN
    E.replace("-", ""),                     # 32 hex digits, no hyphens
    "not-a-uuid", "019a0000-0000-7000-8000",  # not UUIDs: never counted
    UNKNOWN,                                # no row: nothing to count
    F.upper(),                              # upper case alone
]


def reply_citing(ids: list[str]) -> str:
    return ("Done, using what memory said.\n<oai-mem-citation>\n<citation_entries>\n"
            "MEMORY.md:1-3|note=[build steps]\n</citation_entries>\n<rollout_ids>\n"
            + "\n".join(ids) + "\n</rollout_ids>\n</oai-mem-citation>")


def prepare(world, sqlite_home=None, env=None):
    """A first turn creates Codex's databases; then the memories to cite go in."""
    assert_ran(world.exec("hello", env=env))
    assert world.memories_db(sqlite_home).is_file(), "Codex did not write memories_1.sqlite there"
    world.add_stage1_rows(THREADS, sqlite_home)


def test_usage_counts_equal_memcite_s_codex_policy(world, tmp_path):
    prepare(world)
    text = reply_citing(ROLLOUT_IDS)
    world.model.reply(text)
    before = int(time.time())
    assert_ran(world.exec("use memory"))
    after = int(time.time())
    usage = world.usage()

    (tmp_path / "reply.txt").write_text(text)
    ours = world.memcite_json("record", str(tmp_path / "reply.txt"), "--policy", "codex",
                              "--codex-home", str(world.codex_home))
    expected = Counter(ours["recorded"]["counted"])
    for thread in THREADS:
        count, last = usage[thread]
        assert (count or 0) == expected.get(thread, 0), (thread, usage[thread], expected)
        if expected.get(thread):
            assert before <= last <= after + 1
        else:
            assert last is None
    assert expected[A] == 1 and expected[B] == 2 and G not in expected and H not in expected
    assert UNKNOWN not in usage

    # a second turn adds to the counts, as memcite's reading of it says
    world.model.reply(reply_citing([A, C]))
    assert_ran(world.exec("again", resume=True))
    again = world.usage()
    assert again[A][0] == usage[A][0] + 1 and again[C][0] == usage[C][0] + 1
    assert again[B] == usage[B]


def test_an_unterminated_or_absent_block_counts_nothing(world):
    prepare(world)
    world.model.reply("No memory used here.")
    assert_ran(world.exec("one"))
    world.model.reply("Half a block\n<oai-mem-citation>\n<rollout_ids>\n" + A + "\n")
    assert_ran(world.exec("two"))
    usage = world.usage()
    ours = world.memcite_json("parse", "-", input="Half a block\n<oai-mem-citation>\n<rollout_ids>\n" + A + "\n")
    assert (usage[A][0] or 0) == len(ours["thread_ids"])


@pytest.mark.parametrize("how", ["config-absolute", "config-relative", "env-absolute", "env-relative"])
def test_the_sqlite_home_is_found_where_codex_writes(world, tmp_path, how):
    target = tmp_path / "state" / "sqlite"
    target.mkdir(parents=True)
    env = world.env()
    if how == "config-absolute":
        world.write_config(f'sqlite_home = "{target}"')
    elif how == "config-relative":  # relative to the Codex home
        world.write_config(f'sqlite_home = "{os.path.relpath(target, world.codex_home)}"')
    elif how == "env-absolute":
        env["CODEX_SQLITE_HOME"] = str(target)
    else:  # relative to the working directory Codex was started in
        env["CODEX_SQLITE_HOME"] = os.path.relpath(target, world.work)
    prepare(world, target, env)
    assert not world.memories_db().exists(), "Codex wrote memories_1.sqlite in the Codex home"
    world.model.reply(reply_citing([A]))
    assert_ran(world.exec("use memory", env=env))
    assert world.usage(target)[A][0] == 1
    # memcite finds the same database (sync reads Codex's table from it)
    synced = world.memcite_json("sync", "--codex-home", str(world.codex_home), env=env)
    text = str(synced)
    assert str(target / "memories_1.sqlite") in text, synced
