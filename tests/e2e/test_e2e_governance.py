"""``setup codex --governance``: the real Codex's consolidation agent loads the directives.

Codex runs its consolidation agent with the memory folder as its working directory, and
makes that folder a git repository; its project-doc discovery then loads the folder's
``AGENTS.md`` into the agent's instructions. Captured here at the mock model: the
consolidation request holds memcite's directives, and the file is still there, byte for
byte, after the consolidation.
"""

from __future__ import annotations

import json
import sqlite3

from conftest import assert_ran
from memcite.codex.governance import MEMORY_GOVERNANCE, block

THREADS = [f"019a0000-0000-7000-8000-{n:012x}" for n in range(1, 4)]


def test_the_consolidation_agent_reads_the_governance_directives_and_keeps_the_file(world):
    assert_ran(world.exec("hello"))  # Codex creates its databases and the memory folder
    done = world.memcite("setup", "codex", "--governance", "--apply", "--codex-home",
                         str(world.codex_home))
    agents = world.memories / "AGENTS.md"
    assert f"created {agents}" in done.stdout, done.stdout
    written = agents.read_bytes()
    assert written.decode() == block(MEMORY_GOVERNANCE)
    # the project's AGENTS.md (the git work tree Codex runs in) gets the pre-retrieval part
    assert "## Memory before edits" in (world.work / "AGENTS.md").read_text()

    world.add_stage1_rows(THREADS)
    with sqlite3.connect(world.memories_db()) as db:
        db.execute("DELETE FROM jobs")  # no back-off: the next start consolidates
    db.close()
    before = len(world.consolidation_requests())
    assert_ran(world.exec("hello again"))
    requests = world.consolidation_requests()
    assert len(requests) > before, "no consolidation ran"
    sent = json.dumps(requests[-1], ensure_ascii=False)
    assert f"AGENTS.md instructions for {world.memories}" in sent
    for directive in ("[CORE]", "[IMP]", "[SEC]", "[IRR]", "at most 80 `[CORE]` entries",
                      "superseded_by:", "`Source:`", "`Evidence:`", "`Confidence:`"):
        assert json.dumps(directive, ensure_ascii=False)[1:-1] in sent, directive
    assert agents.read_bytes() == written  # the consolidation left the file as it was

    # --remove gives back the folder as it was: no AGENTS.md, no backup of memcite's own block
    world.memcite("setup", "codex", "--remove", "--apply", "--codex-home", str(world.codex_home))
    assert not agents.exists()
    assert not list(world.memories.glob("AGENTS.md*"))
    assert not (world.work / "AGENTS.md").exists()
