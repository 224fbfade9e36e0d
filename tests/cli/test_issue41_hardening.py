"""Issue 41, each class reproduced as an attacker would and kept: a cited path no program can
be given, integer options past any sensible bound, kept audit counts that lie, a cache folder
that is a link, a ledger damaged under a held connection, a subreaper that ends others' processes.
Each test fails on the code before the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

A = "019b7635-7fb3-7cf8-8f11-6f64065672e0"


def block(entries: list[str], ids: list[str]) -> str:
    return ("Done.\n<oai-mem-citation>\n<citation_entries>\n" + "\n".join(entries)
            + "\n</citation_entries>\n<rollout_ids>\n" + "\n".join(ids)
            + "\n</rollout_ids>\n</oai-mem-citation>")


def run(args, env: dict, stdin: bytes = b"", timeout: float = 60, cwd=None):
    """``python -m memcite`` as a real process."""
    done = subprocess.run([sys.executable, "-m", "memcite", *args], input=stdin,
                          capture_output=True, env={**os.environ, **env}, timeout=timeout, cwd=cwd)
    return done.returncode, done.stdout.decode("utf-8", "replace"), \
        done.stderr.decode("utf-8", "replace")


def git(folder, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), "-c", "user.email=m@example.invalid",
                    "-c", "user.name=m", *args], check=True, capture_output=True)


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "codex"
    memories = home / "memories"
    memories.mkdir(parents=True)
    (memories / "MEMORY.md").write_text("# Memory\nline two\n")
    git(memories, "init", "-q")
    git(memories, "add", "-A")
    git(memories, "commit", "-qm", "baseline")
    return {"CODEX_HOME": str(home), "MEMCITE_DB": str(tmp_path / "m.sqlite"),
            "MEMCITE_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path / "home"),
            "MEMCITE_NO_FASTPATH": ""}


# --------------------------------------------------------------------------- 1. NUL in a cited path

# Cited paths no program can be given, or that a program could take for an option.
HOSTILE_PATHS = [
    "MEM\x00ORY.md",           # a NUL byte: ValueError from subprocess on main
    "notes/\x00",              # a NUL byte alone in the last part
    "\ud800.md",               # a lone surrogate (a JSON escape): UnicodeEncodeError on main
    "-c.md",                   # shaped like an option
    "--output=MEMORY.md",      # an option with a value
]


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_a_hostile_cited_path_never_reaches_git_and_stats_stays_usable(env, tmp_path, path):
    batch = tmp_path / "batch.jsonl"
    batch.write_text(json.dumps({"text": block([f"{path}:1-1|note=[x]", "MEMORY.md:1-1|note=[ok]"],
                                               [A]), "id": "r1"}) + "\n")
    code, _, err = run(["record", "--jsonl", str(batch)], env)
    assert code == 0, err
    for _ in range(2):  # every later stats, not only the first
        code, out, err = run(["stats", "--json", "--judge-without-usage"], env)
        assert code == 0, err
        assert "Traceback" not in err
        assert json.loads(out)["citation_checks"]["citations"] == 2
    code, _, err = run(["report", "--judge-without-usage", "--html", str(tmp_path / "r.html")], env)
    assert code == 0, err
    assert "Traceback" not in err


@pytest.mark.parametrize(("value", "safe"), [
    ("MEMORY.md", True), ("a b/c", True), ("\udcff", True),  # a non-UTF-8 byte of a file name
    ("a\x00b", False), ("\x00", False), ("\ud800", False), ("x\udbff", False), ("", True),
])
def test_os_safe_says_what_the_os_can_be_given(value, safe):
    from memcite.untrusted import os_safe, program_arguments

    assert os_safe(value) is safe
    assert (program_arguments(["git", "log", "--", value]) is not None) is safe


@pytest.mark.parametrize("path", ["MEM\x00ORY.md", "\ud800"])
def test_every_git_caller_does_without_git_for_a_path_it_cannot_pass(tmp_path, path):
    from memcite.codex import consolidation
    from memcite.ledger.memory_history import MemoryHistory
    from memcite.readpath.event_log import staleness

    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("one\n")
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "one")
    history = MemoryHistory(folder)
    assert history.ever_had(path) is False
    assert history.lines_at(path, 2**40) is None
    assert history.lines_sha256_at(path, 1, 1, 2**40) is None
    assert history.ever_had("MEMORY.md") is True
    later = 2**33  # written after every commit: only the unnameable file is said gone
    assert staleness(str(folder), [("k", later, [path, "MEMORY.md"])]) == {"k": [f"gone {path}"]}
    assert consolidation._git(str(folder), "log", "--", path) is None
