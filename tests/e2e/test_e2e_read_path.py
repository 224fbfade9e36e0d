"""The summary Codex injects equals ``memcite instructions --profile codex``, byte for byte."""

from __future__ import annotations

import pytest

from conftest import assert_ran

BEGIN = "========= MEMORY_SUMMARY BEGINS ========="
END = "========= MEMORY_SUMMARY ENDS ========="

LONG = "".join(f"- line {n}: the build uses uv; tests run with pytest -q; 日本語 {n}\n" for n in range(900))

SUMMARIES = {
    "plain": b"# Summary\n\n- tests run with pytest -q\n- deploy with make release\n",
    "crlf": b"# Summary\r\n\r\n- one\r\n- two\r\n",
    "bom": "\ufeff# Summary with a BOM\n- one\n".encode(),
    "unicode_spaces": "\u3000\u00a0\u2003 # Summary\n- one\u2009\n\u2028\u00a0\n".encode(),
    "over_the_limit": LONG.encode(),
    "blank": " \n\t\r\n\u3000\n".encode(),
    "invalid_utf8": b"# Summary\n- caf\xe9 au lait\n",
    "empty": b"",
}


def codex_memory_message(world) -> str | None:
    """The developer text of the first turn request that begins ``## Memory``, if any.

    Codex sends a long text as several ``input_text`` spans of one developer message (seen:
    a v2 memory message of 12 KB came as spans of 8,900 and 3,200 bytes): the spans from the
    one that begins ``## Memory`` to the one holding the summary's end marker are joined."""
    requests = world.turn_requests()
    assert requests, "Codex sent no request for the turn"
    found = []
    for item in requests[0].get("input", []):
        if item.get("type") != "message" or item.get("role") != "developer":
            continue
        spans = [span.get("text", "") for span in item.get("content") or []
                 if span.get("type") == "input_text"]
        for index, text in enumerate(spans):
            if not text.startswith("## Memory"):
                continue
            joined = text
            for more in spans[index + 1:]:
                if END in joined:
                    break
                joined += more
            found.append(joined)
    assert len(found) <= 1, "more than one memory message"
    return found[0] if found else None


@pytest.mark.parametrize("case", sorted(SUMMARIES))
def test_injected_summary_equals_memcite(world, case):
    (world.memories / "memory_summary.md").write_bytes(SUMMARIES[case])
    assert_ran(world.exec("What do you remember?"))
    message = codex_memory_message(world)
    ours = world.memcite_json("instructions", "--profile", "codex", "--codex-home", str(world.codex_home))
    if ours["summary"] is None:
        assert message is None, f"Codex injected memory where memcite says it does not ({case})"
        return
    assert message is not None, f"Codex injected no memory where memcite says it does ({case})"
    assert message.count(BEGIN) == 1 and message.count(END) == 1
    between = message[message.index(BEGIN) + len(BEGIN):message.index(END)]
    assert between == "\n" + ours["summary"] + "\n"
    assert (f"{world.memories}") in message  # {{ base_path }} is $CODEX_HOME/memories
    if case == "over_the_limit":
        assert ours["truncated"] and "tokens truncated" in between


def test_no_summary_file_no_memory_message(world):
    assert_ran(world.exec("hello"))
    assert codex_memory_message(world) is None
    ours = world.memcite_json("instructions", "--profile", "codex", "--codex-home", str(world.codex_home))
    assert ours["summary"] is None
