"""The note commands as library calls: merge, refusals, permissions, hand edits, archive, properties."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from dataclasses import dataclass

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memcite.errors import InputError
from memcite.ledger.store import open_store
from memcite.notes import operations, storage
from memcite.notes.changelog import last_hashes, read_log
from memcite.notes.model import parse_note, render_note
from memcite.notes.operations import EntryDraft
from memcite.notes.refusals import NoteRefusal
from memcite.notes.storage import locate_note

TODAY = "2026-11-30"
NOW = 1_796_000_000.0


@dataclass
class Env:
    root: str
    project: str
    home: str
    conn: object

    @property
    def location(self):
        return locate_note(self.project, self.home)

    def save(self, text, section="decisions", **kwargs):
        options = {k: kwargs.pop(k) for k in ("redact", "dry_run", "confirmed_by", "now", "today")
                   if k in kwargs}
        return operations.save_entries(self.location, [EntryDraft(section, text, **kwargs)],
                               today=options.pop("today", TODAY), now=options.pop("now", NOW),
                               conn=self.conn, **options)

    def note_text(self) -> str | None:
        path = self.location.note_file
        return open(path, encoding="utf-8").read() if os.path.exists(path) else None

    def texts(self) -> dict[str, list[str]]:
        note = parse_note(self.note_text() or "")
        found: dict[str, list[str]] = {}
        for key, entry in note.entries():
            found.setdefault(key, []).append(entry.text)
        return found


def make_env(root: str) -> Env:
    project = os.path.join(root, "work", "payments-api")
    os.makedirs(os.path.join(project, ".git"))
    home = os.path.join(root, "codex-home")
    os.makedirs(home)
    conn = open_store(os.path.join(root, "memcite.sqlite"))
    return Env(root, os.path.realpath(project), home, conn)


@pytest.fixture
def env(tmp_path):
    made = make_env(str(tmp_path))
    yield made
    made.conn.close()


def _mode(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# --------------------------------------------------------------------------- locations


@pytest.mark.parametrize(
    ("git", "cwd_below", "root_is"),
    [
        ("dir", "src/pkg", "repo"),  # a .git folder: the work tree root
        ("file", "src", "repo"),  # a .git file (linked work tree, submodule) counts too
        (None, "src/pkg", "cwd"),  # outside git: the folder itself
    ],
)
def test_project_folder_is_the_work_tree_root(tmp_path, git, cwd_below, root_is):
    repo = tmp_path / "outer" / "repo"
    (repo / cwd_below).mkdir(parents=True)
    if git == "dir":
        (repo / ".git").mkdir()
    elif git == "file":
        (repo / ".git").write_text("gitdir: /elsewhere/.git/worktrees/repo\n")
    location = locate_note(str(repo / cwd_below), str(tmp_path / "home"))
    expected = repo if root_is == "repo" else repo / cwd_below
    if git is None and os.path.realpath(location.project) != os.path.realpath(expected):
        pytest.fail("the temporary folder sits inside a git work tree")
    assert location.project == os.path.realpath(expected)
    name = os.path.basename(location.project)
    assert location.slug.startswith(name.lower() + "-") and "--" not in location.slug
    assert location.note_file == os.path.join(str(tmp_path / "home"), "memory", "projects",
                                              location.slug, "memory.md")
    assert location.archive_dir == os.path.join(str(tmp_path / "home"), "memory", "archive",
                                                location.slug)


# --------------------------------------------------------------------------- merge by topic


@pytest.mark.parametrize(
    ("saves", "expected"),
    [
        # the same text twice is one entry
        ([("Use WAL", "decisions", None), ("Use WAL", "decisions", None)],
         {"decisions": ["Use WAL"]}),
        # case and spacing do not make a new entry
        ([("Use WAL", "decisions", None), ("use   wal", "decisions", None)],
         {"decisions": ["Use WAL"]}),
        # a topic updates its entry in place
        ([("Use REST", "decisions", "transport"), ("Use gRPC", "decisions", "transport")],
         {"decisions": ["Use gRPC"]}),
        # topics match without regard to case
        ([("Use REST", "decisions", "Transport"), ("Use gRPC", "decisions", "transport")],
         {"decisions": ["Use gRPC"]}),
        # the same topic in another section is another entry
        ([("Use gRPC", "decisions", "transport"), ("gRPC live in prod", "state", "transport")],
         {"decisions": ["Use gRPC"], "state": ["gRPC live in prod"]}),
        # different texts without a topic are two entries, in order
        ([("A", "risks", None), ("B", "risks", None)], {"risks": ["A", "B"]}),
        # other topics are left alone
        ([("Use REST", "decisions", "transport"), ("SQLite", "decisions", "storage"),
          ("Use gRPC", "decisions", "transport")],
         {"decisions": ["Use gRPC", "SQLite"]}),
    ],
)
def test_merge_by_topic(env, saves, expected):
    for text, section, topic in saves:
        env.save(text, section, topic=topic)
    assert env.texts() == expected


def test_an_update_keeps_the_id_moves_the_old_text_to_the_archive_and_logs_both_hashes(env):
    first = env.save("Use REST", topic="transport", source="docs/adr/1.md")
    entry_id = first.outcomes[0]["id"]
    second = env.save("Use gRPC", topic="transport", now=NOW + 60)
    assert second.outcomes == [{"action": "update", "id": entry_id, "section": "decisions",
                                "text": "Use gRPC"}]
    (archived,) = second.archived
    assert "Use REST" in open(archived).read()
    note = parse_note(env.note_text())
    _, entry = note.find(entry_id)
    assert entry.get("Source") == "docs/adr/1.md"  # provenance kept unless given anew
    log = read_log(env.conn, slug=env.location.slug, entry_id=entry_id)
    assert [row["action"] for row in log] == ["save", "update"]
    assert log[1]["hash_before"] == log[0]["hash_after"]
    assert log[1]["hash_after"] == entry.content_hash()
    assert log[1]["file"] == archived


def test_the_same_text_again_is_unchanged_and_not_logged(env):
    env.save("Use WAL")
    result = env.save("Use WAL")
    assert result.outcomes[0]["action"] == "unchanged"
    assert len(read_log(env.conn, slug=env.location.slug)) == 1


def test_a_whole_draft_is_merged_entry_by_entry(env):
    first = env.save("Use REST", topic="transport")
    entry_id = first.outcomes[0]["id"]
    draft = (f"# Project memory\n\n## Durable decisions\n- [{entry_id}] Use gRPC\n"
             "- SQLite for the ledger\n  Confidence: high\n\n## Current state\n- Tests green\n")
    drafts = operations.drafts_from_note_text(draft)
    result = operations.save_entries(env.location, drafts, today=TODAY, now=NOW, conn=env.conn)
    assert [o["action"] for o in result.outcomes] == ["update", "save", "save"]
    assert env.texts() == {"decisions": ["Use gRPC", "SQLite for the ledger"],
                           "state": ["Tests green"]}
    assert "Confidence: HIGH" in env.note_text()


def test_updated_becomes_today_and_project_is_the_canonical_path(env):
    env.save("A", today="2026-01-01")
    env.save("B", today="2026-02-03")
    note = parse_note(env.note_text())
    assert note.updated == "2026-02-03"
    assert note.project == env.project


def test_dry_run_returns_the_exact_file_and_writes_nothing(env):
    env.save("A")
    before = env.note_text()
    result = env.save("B", dry_run=True)
    assert not result.written
    assert env.note_text() == before
    assert "- [" in result.text and "] B" in result.text
    real = env.save("B")
    assert real.text == result.text


# --------------------------------------------------------------------------- hand edits


def test_hand_written_entries_are_kept_and_given_ids_on_the_next_write(env):
    env.save("memcite entry")
    path = env.location.note_file
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("- a person's own entry\n  with a remark\n\nA paragraph of theirs.\n")
    result = env.save("another", "decisions")
    text = env.note_text()
    assert "a person's own entry" in text and "  with a remark" in text
    assert "A paragraph of theirs." in text
    (adopted,) = result.adopted
    assert f"- [{adopted}] a person's own entry" in text
    actions = {row["entry_id"]: row["action"] for row in read_log(env.conn, slug=env.location.slug)}
    assert actions[adopted] == "adopt"


def test_an_entry_changed_by_hand_is_kept_and_logged_as_a_hand_edit(env):
    entry_id = env.save("Use WAL").outcomes[0]["id"]
    path = env.location.note_file
    text = env.note_text().replace("Use WAL", "Use WAL (changed by a person)")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    env.save("Other")
    assert "Use WAL (changed by a person)" in env.note_text()
    log = read_log(env.conn, slug=env.location.slug, entry_id=entry_id)
    assert [row["action"] for row in log] == ["save", "hand-edit"]
    assert log[1]["confirmed_by"] == "hand-edit"


# --------------------------------------------------------------------------- refusals


def _other_project_with_note(env) -> tuple[str, str]:
    other = os.path.join(env.root, "work", "billing")
    os.makedirs(os.path.join(other, ".git"))
    os.makedirs(os.path.join(other, "src"))
    other_location = locate_note(other, env.home)
    operations.save_entries(other_location, [EntryDraft("state", "billing note")], today=TODAY, now=NOW,
                    conn=env.conn)
    return os.path.realpath(other), other_location.slug


def _plant_note(env, project_line: str | None) -> None:
    location = env.location
    storage.ensure_private_dir(location.project_dir, location.memory_dir)
    header = f"Project: {project_line}\n" if project_line is not None else ""
    with open(location.note_file, "w", encoding="utf-8") as handle:
        handle.write(f"# Project memory\n\n{header}Updated: 2026-01-01\n\n## Current state\n- x\n")


REFUSALS = [
    ("secret", lambda env: None, dict(text="aws key AKIAIOSFODNN7EXAMPLE")),
    ("secret", lambda env: None, dict(text="mail jane.doe@acme-corp.com")),
    ("secret", lambda env: None, dict(text="ok", source="postgres://u:pa55word@db/app")),
    ("collision", lambda env: _plant_note(env, env.root), dict(text="x2")),
    ("collision", lambda env: _plant_note(env, None), dict(text="x2")),
    ("moved-project", lambda env: _plant_note(env, "/gone/payments-api"), dict(text="x2")),
    ("needs-confirmation", lambda env: None, dict(text="the staging password lives in vault")),
    ("needs-confirmation", lambda env: None, dict(text="share the credentials file with ops")),
    ("needs-confirmation", lambda env: env.__dict__.update(other=_other_project_with_note(env)),
     dict(text="see {other_path}/src/api.py")),
    ("needs-confirmation", lambda env: env.__dict__.update(other=_other_project_with_note(env)),
     dict(text="same as {other_slug}")),
]


@pytest.mark.parametrize(("reason", "setup", "request_"), REFUSALS)
def test_refusals_write_nothing(env, reason, setup, request_):
    setup(env)
    request_ = dict(request_)
    if "other" in env.__dict__:
        path, slug = env.__dict__["other"]
        request_["text"] = request_["text"].format(other_path=path, other_slug=slug)
    before = env.note_text()
    log_before = len(read_log(env.conn, slug=env.location.slug))
    with pytest.raises(NoteRefusal) as caught:
        env.save(request_.pop("text"), "state", **request_)
    assert caught.value.reason == reason
    assert caught.value.exit_code == 3
    assert caught.value.to_json()["refused"]["reason"] == reason
    assert env.note_text() == before
    assert len(read_log(env.conn, slug=env.location.slug)) == log_before
    assert "AKIAIOSFODNN7EXAMPLE" not in str(caught.value.to_json())


def test_a_confirmed_save_goes_through(env):
    env.save("the staging password lives in vault", confirmed_by="--yes")
    (row,) = read_log(env.conn, slug=env.location.slug)
    assert row["confirmed_by"] == "--yes"


def test_an_ambiguous_topic_needs_confirmation(env):
    env.save("first", topic="t")
    # a person copies the topic onto a second entry
    path = env.location.note_file
    text = env.note_text().replace(
        "\n## Current state", "- second\n  Topic: t\n  Date: 2026-12-01\n\n## Current state")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    with pytest.raises(NoteRefusal) as caught:
        env.save("third", topic="t")
    assert caught.value.reason == "needs-confirmation"
    env.save("third", topic="t", confirmed_by="terminal")
    assert env.texts() == {"decisions": ["first", "third"]}  # the newest of the topic updated


def test_redact_saves_with_the_findings_replaced(env):
    result = env.save("key AKIAIOSFODNN7EXAMPLE, mail jane.doe@acme-corp.com", "state",
                      redact=True)
    text = env.note_text()
    assert "AKIAIOSFODNN7EXAMPLE" not in text and "jane.doe" not in text
    assert "[REDACTED:aws-access-key]" in text and "[REDACTED:email]" in text
    assert {item["kind"] for item in result.redactions} == {"aws-access-key", "email"}


def test_secret_refusal_lists_masked_findings_only(env):
    with pytest.raises(NoteRefusal) as caught:
        env.save("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "state")
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in caught.value.message
    (finding,) = caught.value.details["findings"]
    assert finding["line"] == 1 and finding["masked"].startswith("ghp_…")


# --------------------------------------------------------------------------- permissions


@pytest.mark.parametrize("umask", [0o000, 0o077, 0o022])
def test_modes_are_0700_and_0600_whatever_the_umask(env, umask):
    old = os.umask(umask)
    try:
        env.save("A")
        env.save("B", topic="x")
        env.save("C", topic="x")  # an update: an archived previous version
    finally:
        os.umask(old)
    location = env.location
    for folder in (location.memory_dir, os.path.dirname(location.project_dir), location.project_dir,
                   os.path.dirname(location.archive_dir), location.archive_dir):
        assert _mode(folder) == 0o700, folder
    assert _mode(location.note_file) == 0o600
    for name in os.listdir(location.archive_dir):
        assert _mode(os.path.join(location.archive_dir, name)) == 0o600


def test_a_folder_found_at_0755_is_tightened_and_reported(env):
    location = env.location
    os.makedirs(location.project_dir)
    os.chmod(location.memory_dir, 0o755)
    os.chmod(location.project_dir, 0o755)
    result = env.save("A")
    assert set(result.tightened) >= {location.memory_dir, location.project_dir}
    assert _mode(location.project_dir) == 0o700 and _mode(location.memory_dir) == 0o700


def test_a_file_found_at_0644_is_tightened(env):
    env.save("A")
    os.chmod(env.location.note_file, 0o644)
    env.save("B")
    assert _mode(env.location.note_file) == 0o600


def test_chmod_without_effect_refuses_and_saves_nothing(env, monkeypatch):
    real_mkdir = os.mkdir
    monkeypatch.setattr(os, "chmod", lambda *args, **kwargs: None)
    monkeypatch.setattr(os, "fchmod", lambda *args, **kwargs: None)
    monkeypatch.setattr(os, "mkdir", lambda path, mode=0o777: real_mkdir(path, 0o777))
    old = os.umask(0)
    try:
        with pytest.raises(NoteRefusal) as caught:
            env.save("A")
    finally:
        os.umask(old)
    assert caught.value.reason == "permissions"
    assert "0777" in caught.value.message
    assert not os.path.exists(env.location.note_file)


def test_a_file_mode_that_cannot_be_set_refuses_and_leaves_the_note(env, monkeypatch):
    env.save("A")
    before = env.note_text()
    real_open, real_fchmod = os.open, os.fchmod

    def open_wide(path, flags, mode=0o777, *args, **kwargs):
        fd = real_open(path, flags, mode, *args, **kwargs)
        if flags & os.O_CREAT:
            real_fchmod(fd, 0o644)  # a file system that gives every file 0644
        return fd

    monkeypatch.setattr(os, "open", open_wide)
    monkeypatch.setattr(os, "fchmod", lambda *args: None)
    with pytest.raises(NoteRefusal) as caught:
        env.save("B")
    assert caught.value.reason == "permissions"
    assert env.note_text() == before
    assert [n for n in os.listdir(env.location.project_dir) if n.endswith(".tmp")] == []


def test_a_memory_folder_that_cannot_be_written_returns_the_proposed_note(env, monkeypatch):
    def refuse(path, mode=0o777):
        raise PermissionError(errno.EACCES, "Permission denied", path)

    monkeypatch.setattr(os, "mkdir", refuse)
    with pytest.raises(NoteRefusal) as caught:
        env.save("Use WAL")
    assert caught.value.reason == "not-writable"
    proposal = caught.value.details["proposed_note"]
    assert "Project: " + env.project in proposal and "] Use WAL" in proposal
    assert not os.path.exists(env.location.memory_dir)


def test_an_existing_folder_without_write_access_is_not_writable(env, monkeypatch):
    env.save("A")
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    with pytest.raises(NoteRefusal) as caught:
        env.save("B")
    assert caught.value.reason == "not-writable"
    assert "] B" in caught.value.details["proposed_note"]


# --------------------------------------------------------------------------- forget, restore, purge


def test_forget_needs_confirmation(env):
    env.save("A")
    with pytest.raises(NoteRefusal) as caught:
        operations.forget_note(env.location, entry_id=None, now=NOW, today=TODAY, conn=env.conn,
                          confirmed_by=None)
    assert caught.value.reason == "needs-confirmation"
    assert os.path.exists(env.location.note_file)


def test_forget_an_unknown_entry_is_bad_input(env):
    env.save("A")
    with pytest.raises(InputError):
        operations.forget_note(env.location, entry_id="zz99zz", now=NOW, today=TODAY, conn=env.conn,
                          confirmed_by="--yes")


def test_archive_round_trip_whole_note(env):
    env.save("A")
    env.save("B", "state")
    original = env.note_text()
    result = operations.forget_note(env.location, entry_id=None, now=NOW, today=TODAY, conn=env.conn,
                               confirmed_by="--yes")
    assert not os.path.exists(env.location.note_file)
    assert open(result.archived, encoding="utf-8").read() == original
    assert _mode(result.archived) == 0o600
    assert os.path.basename(result.archived) == "2026-11-30T00-53-20Z-memory.md"
    restored = operations.restore_note(env.location, os.path.basename(result.archived), now=NOW + 5,
                                  today=TODAY, conn=env.conn)
    assert env.note_text() == original
    assert len(restored.restored) == 2
    assert os.path.exists(result.archived)  # the archive keeps its copy


def test_archive_round_trip_one_entry(env):
    entry_id = env.save("A").outcomes[0]["id"]
    env.save("B")
    result = operations.forget_note(env.location, entry_id=entry_id, now=NOW, today=TODAY,
                               conn=env.conn, confirmed_by="--yes")
    assert env.texts() == {"decisions": ["B"]}
    assert "] A" in open(result.archived, encoding="utf-8").read()
    operations.restore_note(env.location, result.archived, now=NOW, today=TODAY, conn=env.conn)
    assert sorted(env.texts()["decisions"]) == ["A", "B"]
    assert parse_note(env.note_text()).find(entry_id) is not None


def test_restore_never_overwrites_an_active_note_silently(env):
    env.save("A")
    archived = operations.forget_note(env.location, entry_id=None, now=NOW, today=TODAY, conn=env.conn,
                                 confirmed_by="--yes").archived
    env.save("newer")
    with pytest.raises(NoteRefusal) as caught:
        operations.restore_note(env.location, archived, now=NOW, today=TODAY, conn=env.conn)
    assert caught.value.reason == "needs-confirmation"
    assert env.texts() == {"decisions": ["newer"]}
    operations.restore_note(env.location, archived, now=NOW, today=TODAY, conn=env.conn, mode="merge")
    assert env.texts() == {"decisions": ["newer", "A"]}


def test_restore_replace_archives_the_active_note_first(env):
    env.save("A")
    archived = operations.forget_note(env.location, entry_id=None, now=NOW, today=TODAY, conn=env.conn,
                                 confirmed_by="--yes").archived
    env.save("newer")
    result = operations.restore_note(env.location, archived, now=NOW + 1, today=TODAY, conn=env.conn,
                                mode="replace")
    assert env.texts() == {"decisions": ["A"]}
    assert "newer" in open(result.replaced_to, encoding="utf-8").read()


def test_restore_refuses_files_outside_this_projects_archive(env, tmp_path):
    stray = tmp_path / "stray.md"
    stray.write_text("# Project memory\n")
    with pytest.raises(InputError):
        operations.restore_note(env.location, str(stray), now=NOW, today=TODAY, conn=env.conn)


def test_purge_takes_one_exact_archived_file_and_its_name_repeated(env, tmp_path):
    env.save("A")
    archived = operations.forget_note(env.location, entry_id=None, now=NOW, today=TODAY, conn=env.conn,
                                 confirmed_by="--yes").archived
    with pytest.raises(NoteRefusal):
        operations.purge_target(env.home, archived, "wrong-name.md")
    with pytest.raises(InputError):
        operations.purge_target(env.home, env.location.archive_dir, None)  # a folder
    outside = tmp_path / "outside.md"
    outside.write_text("x")
    with pytest.raises(InputError):
        operations.purge_target(env.home, str(outside), "outside.md")
    target = operations.purge_target(env.home, archived, os.path.basename(archived))
    operations.purge_archived(target, now=NOW, conn=env.conn, confirmed_by="--confirm")
    assert not os.path.exists(archived)
    row = read_log(env.conn, slug=env.location.slug)[-1]
    assert row["action"] == "purge" and row["file"] == archived and row["hash_before"]


def test_recall_reads_only_this_project_and_writes_nothing(env):
    other_path, _ = _other_project_with_note(env)
    env.save("see `src/api.py` and docs/gone.md", "state")
    os.makedirs(os.path.join(env.project, "src"))
    open(os.path.join(env.project, "src", "api.py"), "w").close()
    before = {p: os.stat(os.path.join(d, p)).st_mtime_ns for d, _, files in os.walk(env.home)
              for p in files}
    recalled = operations.recall_note(env.location, today="2026-12-10", check=True)
    (entry,) = recalled.entries
    assert entry["age_days"] == 10
    assert entry["missing_paths"] == ["docs/gone.md"]
    assert all("billing" not in str(item) for item in recalled.entries)
    after = {p: os.stat(os.path.join(d, p)).st_mtime_ns for d, _, files in os.walk(env.home)
             for p in files}
    assert before == after


def test_recall_without_a_note_says_so(env):
    recalled = operations.recall_note(env.location, today=TODAY)
    assert recalled.note is None and recalled.entries == []


def test_list_shows_slugs_and_dates_only(env):
    _other_project_with_note(env)
    env.save("A", today="2026-10-01")
    listed = operations.list_notes(env.home)
    assert {tuple(sorted(item)) for item in listed} == {("slug", "updated")}
    assert {item["slug"] for item in listed} == {env.location.slug,
                                                 locate_note(os.path.join(env.root, "work", "billing"),
                                                        env.home).slug}


# --------------------------------------------------------------------------- properties

_TEXTS = ["Use WAL", "Use gRPC", "SQLite ledger", "Tests green on main", "Flaky sync test",
          "Owner: ana", "Cache in ~/.cache/memcite"]
_ops = st.lists(st.one_of(
    st.tuples(st.just("save"), st.sampled_from(["decisions", "state", "risks"]),
              st.sampled_from(_TEXTS), st.sampled_from([None, "a", "b"])),
    st.tuples(st.just("forget-entry"), st.integers(0, 5)),
    st.tuples(st.just("forget-all")),
    st.tuples(st.just("restore-last")),
), max_size=12)


@settings(max_examples=40)
@given(_ops)
@example(ops=[("save", "decisions", "Use WAL", "a"), ("forget-all",),
              ("save", "decisions", "Use WAL", "a"), ("restore-last",),
              ("save", "decisions", "Use WAL", "a")])  # two entries of topic a: a person decides
def test_any_sequence_keeps_every_entry_and_the_log_agrees_with_the_file(ops):
    with tempfile.TemporaryDirectory() as root:
        env = make_env(root)
        try:
            _run_sequence(env, ops)
        finally:
            env.conn.close()


def _run_sequence(env: Env, ops) -> None:
    saved_texts: set[str] = set()
    archives: list[str] = []
    for step, op in enumerate(ops):
        now = NOW + step
        if op[0] == "save":
            _, section, text, topic = op
            before = env.note_text()
            try:
                env.save(text, section, topic=topic, now=now)
                saved_texts.add(text)
            except NoteRefusal as refusal:
                # A restore can bring back a second entry of the same topic: which one a save
                # updates is then the person's call, and nothing is saved without it.
                assert "needs a person's confirmation" in str(refusal), refusal
                assert env.note_text() == before
        elif op[0] == "forget-entry" and env.note_text() is not None:
            entries = parse_note(env.note_text()).entries()
            if entries:
                entry_id = entries[op[1] % len(entries)][1].id
                archives.append(operations.forget_note(env.location, entry_id=entry_id, now=now,
                                                  today=TODAY, conn=env.conn,
                                                  confirmed_by="--yes").archived)
        elif op[0] == "forget-all" and env.note_text() is not None:
            archives.append(operations.forget_note(env.location, entry_id=None, now=now, today=TODAY,
                                              conn=env.conn, confirmed_by="--yes").archived)
        elif op[0] == "restore-last" and archives:
            operations.restore_note(env.location, archives[-1], now=now, today=TODAY, conn=env.conn,
                               mode="merge")
        text = env.note_text()
        note = parse_note(text or "")
        assert text is None or note.project == env.project
        # the log and the file agree: every entry's last logged hash is its content's
        known = last_hashes(env.conn, env.location.slug)
        in_file = {entry.id: entry.content_hash() for _, entry in note.entries()}
        assert all(entry_id for entry_id in in_file)
        assert {k: v for k, v in known.items() if v is not None} == in_file
    # no entry lost: every text saved is in the note or in the archive
    archived_text = "".join(open(os.path.join(env.location.archive_dir, name), encoding="utf-8")
                            .read() for name in (os.listdir(env.location.archive_dir)
                                                 if os.path.isdir(env.location.archive_dir) else []))
    current = env.note_text() or ""
    for text in saved_texts:
        assert f"] {text}" in current or f"] {text}" in archived_text, text


def test_a_multi_line_entry_keeps_its_lines_under_the_bullet_then_provenance(env):
    entry_id = env.save("Ledger: one transaction per reply\nkeeps record under 5 ms",
                        source="src/ledger.py").outcomes[0]["id"]
    _, entry = parse_note(env.note_text()).find(entry_id)
    assert entry.body == ["  keeps record under 5 ms", f"  Date: {TODAY}",
                          "  Source: src/ledger.py", "  Via: cli", "  Confirmed: no (automatic)"]


def test_redact_replaces_a_log_excerpt_spanning_several_lines(env):
    text = ("2026-01-20 10:00:01 INFO start\n2026-01-20 10:00:02 ERROR boom\n"
            "2026-01-20 10:00:03 WARN retry")
    with pytest.raises(NoteRefusal) as caught:
        env.save(text, "risks")
    assert caught.value.details["findings"][0]["kind"] == "raw-log"
    result = env.save(text, "risks", redact=True)
    assert result.outcomes[0]["text"] == "[REDACTED:raw-log]"
    assert "ERROR boom" not in env.note_text()


def test_a_dry_run_shows_hand_entries_with_the_ids_they_will_get(env):
    env.save("memcite entry")
    with open(env.location.note_file, "a", encoding="utf-8") as handle:
        handle.write("- a person's entry\n")
    dry = env.save("next", dry_run=True)
    real = env.save("next")
    assert dry.text == real.text and dry.adopted == real.adopted


def test_saving_the_same_entry_again_leaves_the_file_alone(env):
    env.save("Use WAL", today="2026-01-01")
    before = os.stat(env.location.note_file).st_mtime_ns, env.note_text()
    env.save("Use WAL", today="2026-02-02")
    assert (os.stat(env.location.note_file).st_mtime_ns, env.note_text()) == before


@pytest.mark.parametrize(
    ("expires", "expired"),
    [("2026-11-29", True), ("2026-11-30", False), ("2027-01-01", False),
     ("when the gateway is replaced", False), (None, False)],
)
def test_recall_marks_entries_past_their_expiry_date(env, expires, expired):
    env.save("A", expires=expires)
    (entry,) = operations.recall_note(env.location, today=TODAY).entries
    assert entry["expired"] is expired


def test_an_entry_of_a_persons_own_section_returns_to_that_section(env):
    env.save("A")
    with open(env.location.note_file, "a", encoding="utf-8") as handle:
        handle.write("\n## Links\n- https://example.com/runbook\n")
    env.save("B")
    note = parse_note(env.note_text())
    (link,) = [e for key, e in note.entries() if key is None]
    archived = operations.forget_note(env.location, entry_id=link.id, now=NOW, today=TODAY,
                                      conn=env.conn, confirmed_by="--yes").archived
    assert "## Links" in open(archived, encoding="utf-8").read()
    operations.restore_note(env.location, archived, now=NOW, today=TODAY, conn=env.conn)
    note = parse_note(env.note_text())
    assert [(s.heading, [e.text for e in s.entries()]) for s in note.sections][-1] == \
        ("## Links", ["https://example.com/runbook"])


@settings(max_examples=60)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs",)), min_size=1, max_size=80),
       st.sampled_from(["decisions", "state", "risks"]))
def test_any_text_saves_as_one_entry_that_reads_back_or_is_refused(text, section):
    with tempfile.TemporaryDirectory() as root:
        env = make_env(root)
        try:
            env.save("existing entry", "state")
            before = env.note_text()
            try:
                result = env.save(text, section, confirmed_by="--yes")
            except (NoteRefusal, InputError):
                assert env.note_text() == before
                return
            note = parse_note(env.note_text())
            entry_id = result.outcomes[0]["id"]
            key_section, entry = note.find(entry_id)
            first = text.strip().splitlines()[0]
            assert entry.text == " ".join(first.split())
            assert key_section.key == section or result.outcomes[0]["action"] == "unchanged"
            assert len(note.entries()) == 2 or result.outcomes[0]["action"] != "save"
            assert render_note(parse_note(env.note_text())) == env.note_text()
        finally:
            env.conn.close()


@pytest.mark.parametrize("planted", ["archive", "slug"])
def test_purge_through_a_linked_archive_deletes_nothing_outside(env, tmp_path, planted):
    """An agent can plant a link in the Codex home: purge never follows it out."""
    env.save("A")
    archived = operations.forget_note(env.location, entry_id=None, now=NOW, today=TODAY, conn=env.conn,
                                      confirmed_by="--yes").archived
    outside = tmp_path / "elsewhere"
    name = os.path.basename(archived)
    linked = os.path.dirname(os.path.dirname(archived)) if planted == "archive" else \
        os.path.dirname(archived)
    (outside / os.path.relpath(os.path.dirname(archived), linked)).mkdir(parents=True, exist_ok=True)
    victim = outside / os.path.relpath(archived, linked)
    victim.write_text("a file of the user's, outside the Codex home")
    os.rename(linked, str(tmp_path / "moved-away"))
    os.symlink(outside, linked)  # the archive (or the slug's folder) now leads outside
    from memcite.durable_files import LinkRefused

    with pytest.raises(LinkRefused) as caught:
        operations.purge_target(env.home, archived, name)
    assert caught.value.exit_code == 3 and "symbolic link" in caught.value.message
    assert victim.read_text() == "a file of the user's, outside the Codex home"
