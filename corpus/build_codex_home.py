"""Build a small sample Codex home: ``memories_1.sqlite`` plus the memory folder.

    python corpus/build_codex_home.py TARGET [--now EPOCH]   # TARGET/memories_1.sqlite + memories/
    python corpus/build_codex_home.py --write-folder          # regenerate corpus/codex_home/memories

The database is built rather than committed (a binary in git is opaque); its
times are relative to ``--now`` so that ages and usage stay meaningful whenever
it is built. The memory folder (``raw_memories.md``, ``rollout_summaries/``,
``MEMORY.md``, ``memory_summary.md``) is committed text under
``corpus/codex_home/memories`` and copied as is. Thread ids are UUIDv7 with fixed
times, and summary file names follow the stem rule of docs/memory-layout.md §1.

The 36 threads vary in age, use and selection; three of them have no row in the
database (their summaries outlived Codex's pruning), two rows have no summary
file, and one row has blank texts (never eligible for consolidation).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sqlite3
import time
from datetime import UTC, datetime

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE_HOME = os.path.join(HERE, "codex_home")
DAY = 86_400
# Thread ids embed this time (minus the thread's index in hours), so they never change.
ID_EPOCH_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z

# slug, cwd, age in days (source_updated_at), Codex usage_count (None = never cited),
# days since Codex's last_usage, selected_for_phase2, where it is: "both", "db", "folder", "blank"
THREADS = [
    ("weekly_report_format", "/home/dev/reports", 2, 5, 1, 1, "both"),
    ("responsesapi_citation_extraction", "/home/dev/codex", 3, 12, 0, 1, "both"),
    ("pytest_fixture_layout", "/home/dev/memcite", 1, None, None, 1, "both"),
    ("sqlite_wal_busy_timeout", "/home/dev/memcite", 5, 3, 2, 1, "both"),
    ("typer_fast_path", "/home/dev/memcite", 8, 1, 8, 0, "both"),
    ("release_checklist", "/home/dev/payments-api", 12, 7, 4, 1, "both"),
    ("docker_compose_ports", "/home/dev/payments-api", 45, 2, 40, 0, "both"),
    ("migrations_naming", "/home/dev/payments-api", 60, None, None, 0, "both"),
    ("flaky_ci_retry", "/home/dev/infra", 33, 1, 33, 0, "both"),
    ("terraform_state_lock", "/home/dev/infra", 90, None, None, 0, "both"),
    ("k8s_liveness_probe", "/home/dev/infra", 4, None, None, 1, "both"),
    ("git_rebase_conflicts", "/home/dev/memcite", 20, 4, 15, 1, "both"),
    ("code_review_tone", "/home/dev", 100, 9, 70, 0, "both"),
    ("python_packaging_hatch", "/home/dev/memcite", 6, None, None, 1, "both"),
    ("rust_str_trim_rules", "/home/dev/codex", 7, 6, 1, 1, "both"),
    ("uuid_spellings", "/home/dev/codex", 9, 2, 9, 1, "both"),
    ("log_rotation", "/home/dev/infra", 150, None, None, 0, "both"),
    ("benchmark_ratios", "/home/dev/memcite", 2, 1, 1, 1, "both"),
    ("zstd_rollouts", "/home/dev/codex", 31, None, None, 0, "both"),
    ("api_pagination", "/home/dev/payments-api", 25, 3, 29, 1, "both"),
    ("oauth_refresh_tokens", "/home/dev/payments-api", 41, 1, 41, 0, "both"),
    ("markdown_headings", "/home/dev/memcite", 11, None, None, 1, "both"),
    ("user_prefers_short_answers", "/home/dev", 200, 30, 3, 1, "both"),
    ("timezone_bugs", "/home/dev/reports", 38, 2, 36, 0, "both"),
    ("csv_export_encoding", "/home/dev/reports", 14, None, None, 1, "both"),
    ("monorepo_paths", "/home/dev/codex", 65, 1, 60, 0, "both"),
    ("sandbox_permissions", "/home/dev/codex", 3, 2, 2, 1, "both"),
    ("cache_invalidation", "/home/dev/payments-api", 17, None, None, 1, "both"),
    ("old_jenkins_setup", "/home/dev/infra", 300, None, None, 0, "both"),
    ("lark_contextual_lexer", "/home/dev/memcite", 10, 1, 10, 1, "both"),
    ("no_summary_file_a", "/home/dev/memcite", 15, None, None, 0, "db"),
    ("no_summary_file_b", "/home/dev/infra", 50, 1, 49, 0, "db"),
    ("blank_texts", "/home/dev", 5, None, None, 0, "blank"),
    ("pruned_by_codex_a", "/home/dev/infra", 120, None, None, 0, "folder"),
    ("pruned_by_codex_b", "/home/dev/reports", 95, None, None, 0, "folder"),
    ("pruned_by_codex_c", "/home/dev/codex", 80, None, None, 0, "folder"),
]

_BASE62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def thread_id(index: int) -> str:
    """A UUIDv7 with a fixed time and fixed random bits, for thread number ``index``."""
    millis = ID_EPOCH_MS - index * 3_600_000 - index * 7_919
    tail = hashlib.sha256(f"memcite-sample-{index}".encode()).hexdigest()
    hex_digits = f"{millis:012x}" + "7" + tail[:3] + "8" + tail[3:6] + tail[6:18]
    h = hex_digits
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def summary_stem(thread: str, slug: str) -> str:
    """``{YYYY-MM-DDTHH-MM-SS}-{hash4}[-{slug}]`` (docs/memory-layout.md §1)."""
    digits = thread.replace("-", "")
    moment = datetime.fromtimestamp(int(digits[:12], 16) / 1000, tz=UTC)
    low = int(digits[-8:], 16) % 62**4
    hash4 = ""
    for _ in range(4):
        low, digit = divmod(low, 62)
        hash4 = _BASE62[digit] + hash4
    clean = "".join(c.lower() if c.isascii() and c.isalnum() else "_" for c in slug)
    clean = clean.encode()[:60].decode("ascii").rstrip("_")
    stem = f"{moment:%Y-%m-%dT%H-%M-%S}-{hash4}"
    return f"{stem}-{clean}" if clean else stem


def _rfc3339(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _raw_memory(slug: str, cwd: str) -> str:
    words = slug.replace("_", " ")
    return (
        f"- Task: {words} (in {cwd}).\n"
        f"- Outcome: the approach that worked for {words} is kept in MEMORY.md.\n"
        "- Keep: re-check the command before running it again.\n"
    )


def _summary(slug: str) -> str:
    words = slug.replace("_", " ")
    return (
        f"# {words.capitalize()}\n\n"
        f"The user asked about {words}. We tried two approaches; the second one worked.\n"
        "Key commands and paths are listed in MEMORY.md.\n"
    )


def sample_rows(now: int) -> list[dict]:
    """The ``stage1_outputs`` rows of the sample home, times relative to ``now``."""
    rows = []
    for index, (slug, _cwd, age, uses, last_days, selected, where) in enumerate(THREADS):
        if where == "folder":
            continue
        thread = thread_id(index)
        updated = now - age * DAY
        blank = where == "blank"
        rows.append({
            "thread_id": thread,
            "source_updated_at": updated,
            "raw_memory": "  \n" if blank else _raw_memory(slug, THREADS[index][1]),
            "rollout_summary": "" if blank else _summary(slug),
            "rollout_slug": slug,
            "generated_at": updated + 600,
            "usage_count": uses,
            "last_usage": None if last_days is None else now - last_days * DAY,
            "selected_for_phase2": selected,
            "selected_for_phase2_source_updated_at": updated if selected else None,
        })
    return rows


CODEX_SCHEMA = """
CREATE TABLE stage1_outputs (
    thread_id TEXT PRIMARY KEY,
    source_updated_at INTEGER NOT NULL,
    raw_memory TEXT NOT NULL,
    rollout_summary TEXT NOT NULL,
    rollout_slug TEXT,
    generated_at INTEGER NOT NULL,
    usage_count INTEGER,
    last_usage INTEGER,
    selected_for_phase2 INTEGER NOT NULL DEFAULT 0,
    selected_for_phase2_source_updated_at INTEGER
);
CREATE INDEX idx_stage1_outputs_source_updated_at
    ON stage1_outputs (source_updated_at DESC, thread_id DESC);
"""


def write_codex_db(path: str, rows) -> None:
    """Write a Codex-shaped ``memories_1.sqlite`` (WAL, as Codex keeps it) from ``rows``."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(CODEX_SCHEMA)
    conn.executemany(
        "INSERT INTO stage1_outputs VALUES (:thread_id, :source_updated_at, :raw_memory,"
        " :rollout_summary, :rollout_slug, :generated_at, :usage_count, :last_usage,"
        " :selected_for_phase2, :selected_for_phase2_source_updated_at)",
        rows,
    )
    conn.commit()
    conn.close()  # the last connection checkpoints and removes -wal and -shm


def build_codex_home(target: str, *, now: int | None = None) -> str:
    """Build the sample Codex home in ``target`` (created); return ``target``."""
    now = int(time.time()) if now is None else now
    os.makedirs(target, exist_ok=True)
    db_path = os.path.join(target, "memories_1.sqlite")
    if os.path.exists(db_path):
        os.remove(db_path)
    write_codex_db(db_path, sample_rows(now))
    folder = os.path.join(target, "memories")
    if os.path.realpath(folder) != os.path.realpath(os.path.join(SAMPLE_HOME, "memories")):
        shutil.copytree(os.path.join(SAMPLE_HOME, "memories"), folder, dirs_exist_ok=True)
    return target


def write_folder(folder: str) -> None:
    """Regenerate the committed memory folder text from ``THREADS`` (fixed times)."""
    stamp = ID_EPOCH_MS // 1000
    summaries = os.path.join(folder, "rollout_summaries")
    os.makedirs(summaries, exist_ok=True)
    for name in os.listdir(summaries):
        os.remove(os.path.join(summaries, name))
    sections = ["# Raw Memories", ""]
    for index, (slug, cwd, age, _uses, _last, _selected, where) in enumerate(THREADS):
        if where in ("db", "blank"):
            continue
        thread = thread_id(index)
        stem = summary_stem(thread, slug)
        updated = _rfc3339(stamp - age * DAY)
        rollout = f"/home/dev/.codex/sessions/rollout-{stem[:19]}-{thread}.jsonl"
        sections += [
            f"## Thread `{thread}`",
            f"updated_at: {updated}",
            f"cwd: {cwd}",
            f"rollout_path: {rollout}",
            f"rollout_summary_file: {stem}.md",
            "",
            _raw_memory(slug, cwd),
        ]
        header = [f"thread_id: {thread}", f"updated_at: {updated}",
                  f"rollout_path: {rollout}", f"cwd: {cwd}"]
        if index % 3 == 0:
            header.append("git_branch: main")
        with open(os.path.join(summaries, f"{stem}.md"), "w", encoding="utf-8") as handle:
            handle.write("\n".join(header) + "\n\n" + _summary(slug))
    with open(os.path.join(folder, "raw_memories.md"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(sections))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", help="folder to build the sample Codex home in")
    parser.add_argument("--now", type=int, help="Unix seconds the ages are relative to")
    parser.add_argument("--write-folder", action="store_true",
                        help="regenerate corpus/codex_home/memories from THREADS")
    args = parser.parse_args()
    if args.write_folder:
        write_folder(os.path.join(SAMPLE_HOME, "memories"))
    if args.target:
        print(build_codex_home(args.target, now=args.now))
    elif not args.write_folder:
        parser.error("give a TARGET folder or --write-folder")


if __name__ == "__main__":
    main()
