"""``prune --apply`` writes an ad-hoc note that Codex's next consolidation takes in."""

from __future__ import annotations

import re
import sqlite3
import time

from mock_model import Turn, message_turn

from conftest import assert_ran, is_consolidation


class HeldUntil(Turn):
    """A plain answer, sent once ``ready()`` holds (or after 30 s)."""

    def __init__(self, ready):
        super().__init__(message_turn("Hello.").items)
        self.ready = ready

    @property
    def delay(self) -> float:
        deadline = time.monotonic() + 30
        while not self.ready() and time.monotonic() < deadline:
            time.sleep(0.05)
        return 0.0

    @delay.setter
    def delay(self, value: float) -> None:
        pass

# Codex's rule for a note's file name (memories/extensions/ad_hoc/notes/).
CODEX_NOTE_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-[a-z0-9][a-z0-9-]{0,79}\.md$")
THREADS = [f"019a0000-0000-7000-8000-{n:012x}" for n in range(1, 4)]


def test_the_prune_note_is_named_as_codex_wants_and_the_next_consolidation_lists_it(world):
    assert_ran(world.exec("hello"))  # Codex creates its databases (and consolidates once)
    world.add_stage1_rows(THREADS)
    world.memcite("sync", "--codex-home", str(world.codex_home))
    later = str(int(time.time()) + 90 * 86400)  # judged 90 days from now: all unused, dead
    done = world.memcite("prune", "--apply", "--as-of", later, "--codex-home", str(world.codex_home))
    notes = list((world.memories / "extensions" / "ad_hoc" / "notes").iterdir())
    assert len(notes) == 1, done.stdout
    name = notes[0].name
    assert CODEX_NOTE_NAME.match(name) and len(name.encode()) <= 128, name
    body = notes[0].read_text()
    assert all(thread in body for thread in THREADS)

    # Codex backs off an hour after a failed consolidation: let the next start run it now.
    with sqlite3.connect(world.memories_db()) as db:
        db.execute("DELETE FROM jobs")
    db.close()
    consolidations = len(world.consolidation_requests())
    # `codex exec` does not wait for the consolidation it starts: the user's turn is held until
    # the consolidation agent has asked the model (at most 30 s), so that it is not cut short.
    world.model.queue(HeldUntil(lambda: len(world.consolidation_requests()) > consolidations))
    assert_ran(world.exec("hello again"))
    assert len(world.consolidation_requests()) > consolidations, "no consolidation ran"
    diff = (world.memories / "phase2_workspace_diff.md").read_text()
    assert f"extensions/ad_hoc/notes/{name}" in diff
    prompt = str([body for body in world.model.requests if is_consolidation(body)][-1])
    assert "phase2_workspace_diff.md" in prompt
