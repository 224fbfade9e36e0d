"""``memcite demo``'s workflow: the whole loop on a sample Codex home, in a folder.

Builds a Codex-style home from ``corpus/`` (the memory folder, a
``memories_1.sqlite`` of 36 memories of varied age and use, and three session
files), then runs sync, instructions for a project, records sample replies (some
with broken citations), runs the Stop hook once as Codex would at the end of a
turn, ingests the other session files, prints the usage report and a prune
preview. Everything it writes is inside the folder (``memcite.cli.demo`` makes a temporary
one and removes it at the end unless kept). Where things are is the demo's own world: a
``Locations`` of the folder's paths only (``demo_locations``), never the caller's environment.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import shlex
import sys
import time
from dataclasses import dataclass

from memcite.display import count
from memcite.errors import EXIT_BAD_INPUT, MemciteError
from memcite.paths import Locations

DAY = 86_400
DEMO_PROJECT = "/home/dev/memcite"  # the cwd of the sample replies (only recorded)
DEMO_BUDGET = 600  # the sample memory_summary.md (about 430 tokens) shown whole
CORPUS_REPLIES = ("entry_plain.txt", "entry_escaping_paths.txt", "entry_bad_numbers.txt")
INSTRUCTIONS_SHOWN = 6  # lines of the instructions the demo prints
PRUNE_SHOWN = 3  # memories the prune preview lists


class DemoError(MemciteError):
    """The demo's sample data cannot be found, or its folder cannot be used (exit 2)."""

    exit_code = EXIT_BAD_INPUT


def demo_paths(folder: str) -> dict[str, str]:
    """Where the demo in ``folder`` keeps the sample Codex home, its database and its cache,
    by the environment variable that points memcite at each."""
    return {"CODEX_HOME": os.path.join(folder, "codex_home"),
            "MEMCITE_DB": os.path.join(folder, "memcite.sqlite"),
            "MEMCITE_CACHE_DIR": os.path.join(folder, "cache"),
            "MEMCITE_HOME": folder}  # memcite's data folder: the hook's log, logs/hooks.log


def demo_locations(folder: str) -> Locations:
    """The demo world's ``memcite.paths.Locations``: its database, Codex home, cache and data
    folder, resolved from ``demo_paths`` alone (no variable of the caller's environment)."""
    paths = demo_paths(folder)
    return Locations(db=paths["MEMCITE_DB"], codex_home=paths["CODEX_HOME"], environ=paths)


def demo_projects(folder: str) -> str:
    """The folder of the project folders the demo's sessions ran in (``cd`` into one for
    ``memcite thread --last``)."""
    return os.path.join(folder, "projects")


def _q(path: str) -> str:
    return shlex.quote(path)


def find_corpus(environ=os.environ) -> str:
    """``$MEMCITE_CORPUS``, else ``corpus/`` of the source checkout this memcite runs from."""
    candidates = []
    if environ.get("MEMCITE_CORPUS"):
        candidates.append(environ["MEMCITE_CORPUS"])
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the memcite package
    candidates.append(os.path.join(here, "_corpus"))  # shipped in the wheel (pyproject force-include)
    candidates.append(os.path.normpath(os.path.join(here, "..", "..", "corpus")))
    for folder in candidates:
        if os.path.isfile(os.path.join(folder, "build_codex_home.py")):
            return folder
    raise DemoError("the demo's sample data (corpus/) was not found "
                    f"(looked in {', '.join(candidates)})",
                    hint="run from a memcite source checkout, or set MEMCITE_CORPUS to its "
                         "corpus/ folder")


def load_sample_builder(corpus: str | os.PathLike | None = None):
    """The sample-home builder module (``build_codex_home.py``) of ``corpus``, else of the
    corpus ``find_corpus`` finds; loaded without leaving bytecode beside it."""
    path = os.path.join(corpus if corpus is not None else find_corpus(), "build_codex_home.py")
    spec = importlib.util.spec_from_file_location("memcite_demo_build_codex_home", path)
    module = importlib.util.module_from_spec(spec)
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # no __pycache__ left in corpus/
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = before
    return module


@dataclass(frozen=True)
class SampleReply:
    """One reply of the demo: its text, how many days ago it was made, and what it shows."""

    text: str
    days_ago: float
    shows: str


def _reply(entries: list[str], ids: list[str], body: str = "Done.") -> str:
    return (f"{body}\n\n<oai-mem-citation>\n<citation_entries>\n" + "\n".join(entries)
            + "\n</citation_entries>\n<rollout_ids>\n" + "\n".join(ids)
            + "\n</rollout_ids>\n</oai-mem-citation>")


def sample_replies(thread_id, corpus: str) -> list[SampleReply]:
    """The demo's replies: good citations over a few weeks, then broken ones."""
    t = thread_id  # thread number in corpus/build_codex_home.py THREADS -> its id
    replies = [
        SampleReply(_reply(["MEMORY.md:4-7|note=[how to run the tests]"], [t(2), t(3)]),
                    27, "tests section, two threads"),
        SampleReply(_reply(["MEMORY.md:12-15|note=[WAL and busy timeout]"], [t(3)]),
                    20, "SQLite section"),
        SampleReply(_reply(["MEMORY.md:20-22|note=[fast path]",
                            "rollout_summaries/" + _summary_name(corpus, "typer_fast_path")
                            + ":1-4|note=[summary header]"], [t(4)]),
                    13, "a section and a summary file"),
        SampleReply(_reply(["MEMORY.md:66-68|note=[report format]"], [t(0), t(0)]),
                    9, "the same id twice (counted once by memcite's policy)"),
        SampleReply(_reply(["MEMORY.md:13-14|note=[transactions]"], [t(3), t(29)]),
                    6, "SQLite again"),
        SampleReply(_reply(["MEMORY.md:5-5|note=[pytest]"], [t(2)]), 2, "tests again"),
        SampleReply(_reply(["MEMORY.md:400-410|note=[past the end]"], [t(14)]),
                    5, "broken: a range past the end of MEMORY.md"),
        SampleReply(_reply(["../secrets.txt:1-3|note=[escapes]",
                            "/etc/passwd:1-1|note=[absolute]"], [t(15)]),
                    4, "broken: paths outside the memory folder (never read)"),
        SampleReply(_reply(["notes/missing.md:1-2|note=[no such file]",
                            "MEMORY.md:3-3|note=[a blank line]"], ["not-a-uuid"]),
                    3, "broken: missing file, blank line, an id that is not a UUID"),
        SampleReply(_reply(["MEMORY.md:39-39|note=[compose port]"],
                           ["0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee"]),
                    1, "an id that is no known memory; the cited line is then edited"),
    ]
    for name in CORPUS_REPLIES:
        path = os.path.join(corpus, "replies", name)
        if os.path.isfile(path):
            with open(path, encoding="utf-8", newline="") as handle:
                replies.append(SampleReply(handle.read(), 0.5, f"corpus/replies/{name}"))
    return replies


def _summary_name(corpus: str, slug: str) -> str:
    folder = os.path.join(corpus, "codex_home", "memories", "rollout_summaries")
    for name in sorted(os.listdir(folder)):
        if name.endswith(f"-{slug}.md"):
            return name
    return f"{slug}.md"


def run_demo(folder: str, *, now: int, out=None) -> dict:
    """Run the loop in ``folder`` (an empty folder); print each step to ``out``; return
    the stats report as a dict."""
    from memcite.ledger.codex_home import memory_folder
    from memcite.ledger.recording import ReplyInput, record_reply
    from memcite.ledger.store import open_store
    from memcite.ledger.sync import sync_codex_home
    from memcite.retention.archive import prune_candidates
    from memcite.retention.stats_report import build
    from memcite.retention.stats_text import print_stats

    out = out or sys.stdout
    write = out.write
    corpus = find_corpus()
    builder = load_sample_builder(corpus)
    folder = os.path.abspath(folder)
    paths = demo_paths(folder)
    world = demo_locations(folder)
    home, db_path = paths["CODEX_HOME"], paths["MEMCITE_DB"]
    # Each step's header is the command that does the same (paths in full, runnable as printed).
    where = f"--db {_q(db_path)} --codex-home {_q(home)}"

    write(f"== 1. A sample Codex home in {home}\n")
    # A corpus of its own ($MEMCITE_CORPUS) may come from before the sample had sessions.
    with_sessions = hasattr(builder, "sample_sessions")
    whole = hasattr(builder, "write_state_db")  # config.toml, state_5.sqlite, project folders
    projects = demo_projects(folder)
    story = None
    if whole:
        builder.build_codex_home(home, now=now, sessions=True, projects=projects)
        if hasattr(builder, "write_provenance_story"):
            story = builder.write_provenance_story(home, now)
    elif with_sessions:
        builder.build_codex_home(home, now=now, sessions=True)
    else:
        builder.build_codex_home(home, now=now)
    root = memory_folder(home)
    sessions = (builder.sample_sessions(now, projects) if whole else builder.sample_sessions(now)) \
        if with_sessions else []
    rows = builder.sample_rows(now)
    write(f"   memories_1.sqlite with {len(rows)} memories, the memory folder {root}\n"
          f"   and {len(sessions)} session files in {os.path.join(home, 'sessions')}")
    if whole:
        write(f",\n   run in the project folders of {projects};\n   config.toml turns memories "
              "on, state_5.sqlite holds Codex's threads table")
    write("\n\n")

    # memcite's caches (lark's tables) and data folder (the hook's log) go inside the folder
    # too, for the run only.
    saved_env = {name: os.environ.get(name) for name in ("MEMCITE_CACHE_DIR", "MEMCITE_HOME")}
    for name in saved_env:
        os.environ[name] = paths[name]
    conn = open_store(db_path)
    try:
        write(f"== 2. memcite sync {where}\n")
        report = sync_codex_home(conn, home, now=now)
        write(f"   {report.stage1_rows} rows from memories_1.sqlite (read-only), "
              f"{report.folder_threads} sections and summaries; {report.inserted} memories\n\n")

        write(f"== 3. memcite instructions --codex-home {_q(home)} --cwd {_q(folder)} "
              f"--budget {DEMO_BUDGET} --tokenizer approx\n")
        write(_instructions_excerpt(root, home, folder) + "\n")

        replies = sample_replies(builder.thread_id, corpus)
        batch = os.path.join(folder, "replies.jsonl")
        with open(batch, "w", encoding="utf-8") as handle:
            for reply in replies:
                handle.write(json.dumps({"text": reply.text, "cwd": DEMO_PROJECT,
                                         "at": now - int(reply.days_ago * DAY)}) + "\n")
        write(f"== 4. memcite record {where} --jsonl {_q(batch)}\n")
        counted = broken = recorded = 0
        strays: list[str] = []
        for reply in replies:
            result = record_reply(
                conn, ReplyInput(reply.text, at=now - int(reply.days_ago * DAY),
                                 cwd=DEMO_PROJECT), memory_root=root, now=now)
            counted += len(result.counted)
            recorded += result.status == "recorded"
            broken += reply.shows.startswith("broken")
            strays += [*result.unknown, *result.not_uuid]
        write(f"   {count(recorded, 'reply', 'replies')} recorded, "
              f"{count(counted, 'citation')} counted; {broken} cite places that are not "
              "there (a range past the end, paths outside the memory folder, a missing file, "
              f"a blank line); {count(len(set(strays)), 'cited id is', 'cited ids are')} no "
              "known memory\n")
        # Codex's consolidation edits a line that was cited: the check reports it as changed.
        memory_md = os.path.join(root, "MEMORY.md")
        with open(memory_md, encoding="utf-8") as handle:
            lines = handle.read().split("\n")
        lines[38] = "- `docker compose up db` exposes Postgres on port 5434 (changed in March)."
        with open(memory_md, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines))
        write("   (then MEMORY.md line 39 is edited, as a consolidation would)\n\n")

        payload_path = os.path.join(folder, "stop_payload.json")
        write(f"== 5. memcite hook stop --db {_q(db_path)} < {_q(payload_path)}\n")
        transcript = None
        if sessions:
            live = sessions[-1]  # the newest session: its last turn has just ended
            transcript = os.path.join(home, live["path"])
            with open(payload_path, "w", encoding="utf-8") as handle:
                json.dump(stop_payload(live, transcript, builder.SESSION_MODEL), handle)
            write(_hook_step(world, payload_path, live["id"]).rstrip("\n") + "\n")
            wait_for_background_work()  # the hook's quarantine look, before the next step
            write(_quarantine_line(world) + "\n")
        else:
            write("   (skipped: this corpus's sample home has no session files)\n\n")

        write(f"== 6. memcite ingest {where}\n")
        write(_ingest_step(conn, home, root, transcript, now))

        day = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))  # readable, and exact
        write(f"== 7. memcite stats {where} --as-of {day} --max-unused-days 30 --limit 10\n")
        # The report ``memcite stats`` prints, from the same library function (its own
        # read-only connection, beside the demo's open one).
        stats = build(world, now=now, max_unused_days=30, limit=10, cache=False)
        print_stats(stats, file=out)
        write(f"\n== 8. memcite prune {where} --as-of {day} --max-unused-days 30\n"
              "   (a preview: nothing is asked without --apply)\n")
        candidates = prune_candidates(conn, as_of=now, max_unused_days=30, rule="memcite",
                                      limit=200, codex_home=report.codex_home)
        for candidate in candidates[:PRUNE_SHOWN]:
            write(f"   {candidate.thread_id}  {candidate.label}  {candidate.reason}\n")
        if len(candidates) > PRUNE_SHOWN:
            write(f"   … and {len(candidates) - PRUNE_SHOWN} more\n")
        codex = prune_candidates(conn, as_of=now, max_unused_days=30, rule="codex", limit=200,
                                 codex_home=report.codex_home)
        write(f"   {len(candidates)} memories Codex would be asked to forget by memcite's rule; "
              f"{len(codex)} by --rule codex (what Codex itself deletes at start-up)\n")
        if story is not None:
            write(f"\n== 9. memcite audit --codex-home {_q(home)}\n")
            write(_audit_step(home, folder, paths["MEMCITE_CACHE_DIR"], story["thread_id"]))
    finally:
        conn.close()
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return stats.to_dict()


JOURNEY = (("memcite thread --last", "what memory did in the last session there"),
           ("memcite consolidation", "whether Codex's consolidation runs"),
           ("memcite report", "the whole report as one HTML page"))


def story_thread() -> str | None:
    """The memory the demo's provenance story poisoned (the sample builder's), or None."""
    try:
        builder = load_sample_builder()
    except DemoError:
        return None
    return builder.thread_id(builder.STORY_THREAD) if hasattr(builder, "STORY_THREAD") else None
SETUP = ("then, with your own Codex: memcite setup codex  (shows what it would add to ~/.codex; "
         "--apply writes it)\n")


def closing_text(folder: str, *, kept: bool) -> str:
    """What ``memcite demo`` prints after its steps: the journey to take next (in the kept
    folder, or how to keep one), then ``memcite setup codex``."""
    journey = list(JOURNEY)
    story = story_thread()
    if story is not None:
        journey.append((f"memcite trace {story}", "where the poisoned memory's words came from"))
    lines = "".join(f"  {command:<24}  {why}\n" for command, why in journey)
    if not kept:
        return ("\ndone (the temporary folder was removed). To walk through the demo yourself, "
                "keep its folder:\n\n  memcite demo --keep ~/memcite-demo\n\nthen, as it "
                "says, point memcite at it, go into the project folder the newest session ran "
                "in (cd ~/memcite-demo/projects/infra) and ask:\n\n" + lines + "\n" + SETUP)
    exports = " ".join(f"{name}={_q(path)}" for name, path in demo_paths(folder).items())
    project = os.path.join(demo_projects(folder), "infra")  # where the newest session ran
    return (f"\ndone (kept in {folder}). To point later commands at the demo's Codex home, "
            f"database, cache and data folder:\n\n  export {exports}\n\nthen go into the "
            "project folder the newest session ran in, and ask what memory did there and "
            f"whether Codex consolidates:\n\n  cd {_q(project)}\n" + lines
            + "\nor: memcite stats; memcite select; memcite prune\n\n" + SETUP)


def stop_payload(session: dict, transcript: str, model: str) -> dict:
    """The payload Codex's ``Stop`` hook gets on stdin when the last turn of ``session`` (one
    of the sample builder's ``sample_sessions``) ends: its reply without the citation block."""
    turn = session["turns"][-1]
    return {"cwd": session["cwd"], "hook_event_name": "Stop",
            "last_assistant_message": turn["message"], "model": model,
            "permission_mode": "default", "session_id": session["id"],
            "stop_hook_active": False, "transcript_path": transcript,
            "turn_id": turn["turn_id"]}


def _hook_step(world: Locations, payload_path: str, session_id: str) -> str:
    """Run ``memcite hook stop`` on the payload file, as Codex would; say what its log line says."""
    import signal

    from memcite.codex.stop_hook import run_stop_hook
    from memcite.ledger.hook_log import entries_by_kind, read_entries

    with open(payload_path, "rb") as handle:
        data = handle.read()
    # The hook sets an alarm for its deadline; a library caller gets its own handler back.
    alarm = signal.getsignal(signal.SIGALRM) if hasattr(signal, "SIGALRM") else None
    try:
        run_stop_hook(world, stdin=io.BytesIO(data))
    finally:
        if alarm is not None:
            try:
                signal.signal(signal.SIGALRM, alarm)
            except ValueError:  # not the main thread: the hook set none either
                pass
    try:
        # by kind: the hook's detached quarantine may have logged its own line after it
        entry = entries_by_kind(read_entries(world.hook_log, 20)).get("stop", [])[-1]
    except (OSError, IndexError):
        return f"   (the hook left no line in its log, {world.hook_log})\n\n"
    head = (f"   as Codex runs it when a turn of session {session_id} ends (the payload names "
            "its file)\n")
    if entry.get("status") != "ok":
        why = entry.get("error") or entry.get("reason") or "no reason given"
        return f"{head}   {entry.get('status')}: {why} (the hook's log line in {world.hook_log})\n\n"
    return (f"{head}   {entry.get('replies', 0)} replies read, {entry.get('recorded', 0)} "
            f"recorded, {entry.get('counted', 0)} citations counted: the hook's log line in "
            f"{world.hook_log} (memcite doctor shows it)\n\n")


def _audit_step(home: str, cwd: str, cache_dir: str, story_id: str) -> str:
    """Where each memory's words came from: the story's poisoned memory found with its id
    (``memcite.audit.memory_audit``), and, as ``memcite trace`` places them, its planted line in
    a tool's output and the rule the user typed in their own message, never called poisoned."""
    from memcite.audit.memory_audit import audit_home
    from memcite.audit.memory_trace import trace

    report = audit_home(home, cwd=cwd, cache_dir=cache_dir)
    counts = report["counts"]
    text = (f"   {count(counts['poisoned'], 'poisoned memory', 'poisoned memories')} (high) of "
            f"{report['memories']} memories: each sentence placed in its source session\n")
    for finding in report["findings"]:
        if finding["memory"] == story_id and finding["kind"] == "poisoned":
            text += f"   memory {finding['memory']} (poisoned), sentence by sentence:\n"
            break
    traced = trace(home, story_id)
    for memory in traced["memories"]:
        for sentence in memory["sentences"]:
            origin = sentence.get("origin") or {}
            if sentence["poisoned"]:
                where = (f"the output of {origin.get('tool')} (an MCP tool), session line "
                         f"{origin.get('line')}: POISONED")
            elif sentence.get("directives") and origin.get("kind") == "user":
                where = (f"the user's own message, session line {origin.get('line')}: theirs, "
                         "no poison")
            else:
                continue
            text += f"     \"{sentence['text']}\"\n       from {where}\n"
    return text + (f"   (Codex keeps the memory until its next consolidation reads the hook's "
                   f"request; memcite trace {story_id} shows every sentence of it)\n")


def _quarantine_line(world: Locations) -> str:
    """What the Stop hook's look at the memory folder (run in the background) did: the
    poisoned memories it asked Codex to forget, from its line in the hook's log."""
    from memcite.ledger.hook_log import read_entries

    try:
        entries = read_entries(world.hook_log, 5)
    except OSError:
        return ""
    looks = [entry for entry in entries if entry.get("event") == "quarantine"]
    asked = looks[-1].get("asked") if looks else None
    if not asked or not isinstance(asked, list):
        return ""
    return (f"   its look at the memory folder, in the background, found "
            f"{count(len(asked), 'poisoned memory', 'poisoned memories')} and asked Codex's "
            f"next consolidation to forget {'it' if len(asked) == 1 else 'them'}: "
            f"{', '.join(str(a) for a in asked)} (`memcite restore ID` withdraws the request; "
            "step 9 shows why)\n")


def _ingest_step(conn, home: str, root: str, transcript: str | None, now: int) -> str:
    """Bring every session file of the sample home up to date, as ``memcite ingest`` does."""
    from memcite.ledger.session_offsets import ingest_codex_home, session_key

    statuses: dict[str, str] = {}
    summary = ingest_codex_home(conn, home, memory_root=root, now=now,
                                on_file=lambda r: statuses.update({session_key(r.path): r.status}))
    text = (f"   {summary.files} session files: {summary.read} read ({summary.recorded} replies "
            f"recorded, {summary.counted} citations counted), {summary.unchanged} unchanged")
    if transcript is not None and statuses.get(session_key(transcript)) == "unchanged":
        text += " (the hook's: nothing counts twice)"
    if summary.failed:
        text += f"; {len(summary.failed)} failed: {summary.failed[0]}"
    return text + "\n\n"


def _instructions_excerpt(root: str, home: str, cwd: str) -> str:
    try:
        from memcite.readpath.instructions import build_instructions
        from memcite.readpath.tokens import get_tokenizer
    except ImportError:  # the read path is not installed
        return "   (skipped: memcite.readpath.instructions is not available)\n"
    try:
        result = build_instructions(root, profile="memcite", budget=DEMO_BUDGET,
                                    tokenizer_name="approx",
                                    load_tokenizer=lambda: get_tokenizer("approx"),
                                    codex_home=home, cwd=cwd, cache_dir=None)
    except MemciteError as error:
        return f"   (skipped: {error})\n"
    text = result.instructions or ""
    lines = text.splitlines()
    shown = "\n".join("   | " + line for line in lines[:INSTRUCTIONS_SHOWN])
    more = (f"\n   | … ({len(lines) - INSTRUCTIONS_SHOWN} more lines)"
            if len(lines) > INSTRUCTIONS_SHOWN else "")
    return (f"   {result.used} of {result.budget} tokens (approx), "
            f"{'truncated' if result.truncated else 'whole'}\n{shown}{more}\n")


BACKGROUND_WAIT_SECONDS = 60


def wait_for_background_work() -> None:
    """Wait for what the demo's Stop hook started in the background (the quarantine's audit
    of the sample home, a second or two), so that it writes nothing into the folder while
    later steps read it or after the demo is done; past the time limit it is left alone."""
    import time

    deadline = time.monotonic() + BACKGROUND_WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:  # no child left
            return
        if pid == 0:
            time.sleep(0.05)


def kept_folder(keep: str) -> str:
    """``keep`` as an absolute path, created if missing; refused unless it is an empty folder."""
    folder = os.path.abspath(os.path.expanduser(keep))
    try:
        os.makedirs(folder, exist_ok=True)
        if os.listdir(folder):
            raise DemoError(f"--keep {keep}: not empty", hint="give --keep a new or empty folder")
    except FileExistsError:
        raise DemoError(f"--keep {keep}: not a folder",
                        hint="give --keep a new or empty folder") from None
    except OSError as exc:
        raise DemoError(f"--keep {keep}: cannot create or read the folder "
                        f"({exc.strerror or exc})", hint="give --keep a new or empty folder "
                        "in a place you can write") from None
    return folder
