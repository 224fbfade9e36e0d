"""Toy implementations for the conformance tests: each reads one reply on stdin, prints a reading.

    python tests/conformance_toys.py MODE

agree: memcite's own reading. wrong-ids: trims ids with Python's str.strip() (wrong for
U+001C..U+001F, which Rust does not trim). counts-only: prints only thread_ids. Any mode
also crashes on a reply holding CRASH-ME, hangs on HANG-ME, prints garbage on GARBAGE-ME,
prints non-UTF-8 on BYTES-ME, prints without end on FLOOD-ME and writes 3 MB to stderr
(then answers) on NOISE-ME. hang: hangs on every reply. setsid: on every reply, leaves a
grandchild in a session of its own (setsid), which writes its pid to $TOY_PID_FILE and
sleeps, then answers as agree.
"""

import json
import sys
import time

from memcite import parse_reply


def main() -> None:
    mode = sys.argv[1]
    text = sys.stdin.buffer.read().decode("utf-8")
    if mode == "hang":
        time.sleep(600)
    if mode == "setsid":
        _leave_a_session_behind()
    if "CRASH-ME" in text:
        raise SystemExit("toy: crashed on purpose")
    if "HANG-ME" in text:
        time.sleep(600)
    if "GARBAGE-ME" in text:
        sys.stdout.write("this is not { json")
        return
    if "BYTES-ME" in text:
        sys.stdout.buffer.write(b'{"visible": "\xff"}')
        return
    if "NOISE-ME" in text:  # much on stderr, then a right answer: not a failure
        sys.stderr.write("noise\n" * 500_000)
    if "FLOOD-ME" in text:
        while True:
            sys.stdout.write("x" * 65536)
    if mode == "truncation":
        from memcite.readpath.truncation import truncate_approx

        given = json.loads(text)
        print(json.dumps({"text": truncate_approx(given["text"], given["budget"])}))
        return
    reading = parse_reply(text).to_dict()
    if mode == "wrong-ids" and reading["citation"]:
        kept = []
        for rollout_id in (i.strip() for i in reading["citation"]["rollout_ids"]):
            if rollout_id and rollout_id not in kept:
                kept.append(rollout_id)
        reading["citation"]["rollout_ids"] = kept
    if mode == "counts-only":
        reading = {"thread_ids": reading["thread_ids"]}
    print(json.dumps(reading))


def _leave_a_session_behind() -> None:
    import os

    path = os.environ["TOY_PID_FILE"]
    before = os.path.getsize(path) if os.path.exists(path) else 0
    if os.fork() == 0:  # the child: a session of its own, out of reach of killpg
        os.setsid()
        if os.fork() == 0:
            with open(path, "a") as handle:
                handle.write(f"{os.getpid()}\n")
            time.sleep(600)
        os._exit(0)
    # answer only once the grandchild runs (and has said its pid): on a loaded machine it
    # could otherwise be ended with the run before it ever wrote it
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if os.path.exists(path) and os.path.getsize(path) > before:
            break
        time.sleep(0.01)


if __name__ == "__main__":
    main()
