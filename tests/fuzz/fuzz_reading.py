"""Coverage-guided fuzzing of the reply reader with atheris, seeded from corpus/replies/.

    python tests/fuzz/fuzz_reading.py --seconds 60      # fuzz for a minute
    python tests/fuzz/fuzz_reading.py crash-<hash>      # replay one input

Each input is decoded as UTF-8 (bad bytes replaced) and read by memcite; the
harness fails on any exception and on any broken invariant: the visible text and
the blocks account for every character, the reading agrees with the plain
str.find reading written from docs/citation-format.md, and the strict profile refuses exactly
the replies that have warnings. New inputs go to a temporary folder, never
into corpus/.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import atheris

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = os.path.join(HERE, os.pardir, os.pardir, "corpus", "replies")
sys.path.insert(0, os.path.join(HERE, os.pardir))

with atheris.instrument_imports():
    from memcite import CitationError, parse_reply
    from plain_reader import plain_read


def check_one_input(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    reading = parse_reply(text)
    hidden = sum(block.end - block.start for block in reading.blocks)
    assert len(reading.visible) + hidden == len(text), "characters lost or invented"
    plain = plain_read(text)
    assert reading.visible == plain["visible"], "visible text differs from the plain reading"
    assert list(reading.thread_ids) == plain["thread_ids"], "counted ids differ"
    if plain["citation"] is None:
        assert reading.citation is None, "citation where the plain reading has none"
    else:
        entries = [(e.path, e.line_start, e.line_end, e.note) for e in reading.citation.entries]
        assert entries == plain["citation"]["entries"], "entries differ"
        assert list(reading.citation.rollout_ids) == plain["citation"]["rollout_ids"], "ids differ"
    try:
        parse_reply(text, profile="strict")
    except CitationError:
        assert reading.has_warnings, "strict refused a reply without warnings"
    else:
        assert not reading.has_warnings, "strict accepted a reply with warnings"


def main() -> None:
    parser = argparse.ArgumentParser(description="Fuzz memcite's reply reader with atheris.")
    parser.add_argument("--seconds", type=int, default=0, help="fuzz for this long (0: until stopped)")
    args, libfuzzer_args = parser.parse_known_args()
    paths = [a for a in libfuzzer_args if not a.startswith("-")]
    if paths:  # the child fuzzing a corpus folder ("-" marks it), or a replay of given inputs
        atheris.Setup([sys.argv[0], *(a for a in libfuzzer_args if a != "-")], check_one_input)
        atheris.Fuzz()
        return
    # libFuzzer ends the process when it is done, so it runs in a child and
    # this process removes the temporary corpus afterwards.
    work = tempfile.mkdtemp(prefix="memcite-fuzz-")
    try:
        for name in os.listdir(SEEDS):
            if name.endswith(".txt"):
                shutil.copy(os.path.join(SEEDS, name), work)
        options = [f"-max_total_time={args.seconds}"] if args.seconds else []
        done = subprocess.run([sys.executable, __file__, *options, *libfuzzer_args, "-", work])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(done.returncode)


if __name__ == "__main__":
    main()
