"""Scoped memory: resolution order, conflicts, subagent scopes, compaction, moves between scopes,
and the properties that keep projects apart."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from memcite.cli.app import app
from memcite.contracts.outputs import InstructionsOutput
from memcite.errors import InputError
from memcite.ledger.store import open_store
from memcite.notes import moves, operations
from memcite.notes.model import parse_note
from memcite.notes.operations import EntryDraft
from memcite.notes.refusals import NoteRefusal
from memcite.notes.storage import locate_note
from memcite.readpath.instructions import build_instructions
from memcite.readpath.note_format import SCOPE_TITLES, Note
from memcite.readpath.projects import parse_scopes
from memcite.readpath.scopes import (
    DIGEST,
    LEFT_OUT,
    NO_PROVENANCE,
    compaction_order,
    digest,
    relevance,
    resolve,
    scoped_entries,
)
from memcite.readpath.tokens import get_tokenizer

TODAY = "2026-11-30"
NOW = 1_796_000_000.0
SESSION = "019c6e27-e55b"
runner = CliRunner()


@pytest.fixture(scope="module")
def o200k():
    return get_tokenizer("o200k_base")


def _project(root: str, name: str) -> str:
    project = os.path.join(root, "work", name)
    os.makedirs(os.path.join(project, ".git"))
    os.makedirs(os.path.join(project, "src"))
    return os.path.realpath(project)


def _write(home: str, project: str, scope: str, body: str, session: str = SESSION) -> str:
    location = locate_note(project, home, scope=scope, session=session)
    os.makedirs(location.project_dir, exist_ok=True)
    header = {"project": f"Project: {project}", "global": "Scope: global",
              "session": f"Session: {session}"}[scope]
    with open(location.note_file, "w", encoding="utf-8") as handle:
        handle.write(f"{SCOPE_TITLES[scope]}\n\n{header}\nUpdated: {TODAY}\n\n{body}")
    return location.note_file


def _entry(entry_id: str, text: str, *, topic: str | None = None, confirmed: bool = False,
           tier: str | None = None, date: str = TODAY) -> str:
    lines = [f"- [{entry_id}] {text}"]
    if topic:
        lines.append(f"  Topic: {topic}")
    lines.append(f"  Date: {date}")
    if tier:
        lines.append(f"  Tier: {tier}")
    lines.append("  Confirmed: " + (f"yes (--yes by ana, {date})" if confirmed else
                                    "no (automatic)"))
    return "\n".join(lines) + "\n"


@pytest.fixture
def world(tmp_path):
    home = str(tmp_path / "codex")
    os.makedirs(os.path.join(home, "memories"))
    return {"home": home, "project": _project(str(tmp_path), "payments-api"),
            "other": _project(str(tmp_path), "billing")}


def _build(world, **kwargs):
    kwargs.setdefault("budget", 4000)
    return build_instructions(os.path.join(world["home"], "memories"), codex_home=world["home"],
                              cwd=world["project"], today=TODAY, **kwargs)


# --------------------------------------------------------------------------- resolution order


@pytest.mark.parametrize(("present", "session", "order"), [
    (("session", "project", "global"), SESSION, ["session", "project", "global"]),
    (("project", "global"), SESSION, ["project", "global"]),
    (("session", "global"), SESSION, ["session", "global"]),
    (("session", "project", "global"), None, ["project", "global"]),  # no session: none shown
    (("global",), None, ["global"]),
    (("project",), None, ["project"]),
])
def test_notes_resolve_session_then_project_then_global_then_the_summary(world, present, session,
                                                                         order):
    for number, scope in enumerate(present):
        _write(world["home"], world["project"], scope, "## Current state\n"
               + _entry(f"a{number}b{number}c{number}", f"{scope.upper()}-FACT"))
    Path(world["home"], "memories", "memory_summary.md").write_text("v1\n## General Tips\nSUMMARY\n")
    result = _build(world, session=session)
    assert [s.scope for s in result.sources] == [*order, "global"]  # the summary comes last
    positions = [result.summary.index(f"{scope.upper()}-FACT") for scope in order]
    assert positions == sorted(positions)
    assert result.summary.index("SUMMARY") > max(positions)


# --------------------------------------------------------------------------- conflicts

PAIRS = [("session", "project"), ("session", "global"), ("project", "global")]
CONFLICTS = [
    # (specific confirmed, general confirmed, winner)
    (True, True, "specific"),
    (False, False, "specific"),
    (True, False, "specific"),
    (False, True, "general"),
]


def _note(scope: str, body: str) -> Note:
    return parse_note(f"{SCOPE_TITLES[scope]}\n\nUpdated: {TODAY}\n\n## Durable decisions\n{body}")


@pytest.mark.parametrize(("specific", "general"), PAIRS)
@pytest.mark.parametrize(("specific_confirmed", "general_confirmed", "winner"), CONFLICTS)
def test_conflicts_by_topic_each_pairing_of_scope_and_confirmation(
        specific, general, specific_confirmed, general_confirmed, winner):
    entries = scoped_entries([
        (specific, _note(specific, _entry("s1s1s1", "specific says", topic="Indent",
                                          confirmed=specific_confirmed))),
        (general, _note(general, _entry("g1g1g1", "general says", topic="indent",
                                        confirmed=general_confirmed))),
    ])
    kept, overrides = resolve(entries)
    kept_scope = specific if winner == "specific" else general
    dropped_scope = general if winner == "specific" else specific
    assert [item.scope for item in kept] == [kept_scope]
    assert [o.to_dict() for o in overrides] == [{
        "topic": "indent",
        "kept": {"id": "s1s1s1" if winner == "specific" else "g1g1g1", "scope": kept_scope},
        "dropped": {"id": "g1g1g1" if winner == "specific" else "s1s1s1",
                    "scope": dropped_scope},
        "why": overrides[0].why}]
    expected = ("is confirmed" if specific_confirmed != general_confirmed
                else "is more specific")
    assert expected in overrides[0].why


def test_entries_without_a_topic_or_of_one_scope_never_conflict():
    entries = scoped_entries([
        ("project", _note("project", _entry("p1p1p1", "a", topic="t") + _entry("p2p2p2", "b",
                                                                                topic="t"))),
        ("global", _note("global", _entry("g1g1g1", "c") + _entry("g2g2g2", "d", topic="u"))),
    ])
    kept, overrides = resolve(entries)
    assert len(kept) == 4 and overrides == []


def test_an_override_is_in_json_and_explain_and_the_loser_is_left_out(world):
    _write(world["home"], world["project"], "project",
           "## Durable decisions\n" + _entry("p1p1p1", "PROJECT-INDENT two spaces", topic="indent"))
    _write(world["home"], world["project"], "global",
           "## Durable decisions\n" + _entry("g1g1g1", "GLOBAL-INDENT tabs", topic="indent",
                                             confirmed=True))
    result = _build(world)
    assert "GLOBAL-INDENT" in result.summary and "PROJECT-INDENT" not in result.summary
    payload = InstructionsOutput.model_validate(result.to_dict())
    assert [o.model_dump() for o in payload.overrides] == [{
        "topic": "indent", "kept": {"id": "g1g1g1", "scope": "global"},
        "dropped": {"id": "p1p1p1", "scope": "project"},
        "why": "global is confirmed, project is automatic"}]
    from memcite.readpath.explain import explain

    assert "override: topic 'indent': kept [g1g1g1] (global), left out [p1p1p1] (project)" in \
        explain(result)


# --------------------------------------------------------------------------- subagent scopes


@pytest.mark.parametrize(("scopes", "shown"), [
    ("global,session", {"SESSION-FACT", "GLOBAL-FACT", "SUMMARY-FACT"}),
    ("session", {"SESSION-FACT"}),
    ("global", {"GLOBAL-FACT", "SUMMARY-FACT"}),
    ("project", {"PROJECT-FACT"}),
    ("project,global", {"PROJECT-FACT", "GLOBAL-FACT", "SUMMARY-FACT"}),
    ("session,project,global", {"SESSION-FACT", "PROJECT-FACT", "GLOBAL-FACT", "SUMMARY-FACT"}),
])
def test_scopes_give_exactly_those_scopes(world, scopes, shown):
    for scope in ("session", "project", "global"):
        _write(world["home"], world["project"], scope,
               "## Current state\n" + _entry("x1y2z3", f"{scope.upper()}-FACT"))
    Path(world["home"], "memories", "memory_summary.md").write_text("v1\nSUMMARY-FACT\n")
    result = _build(world, scopes=parse_scopes(scopes), session=SESSION)
    every = {"SESSION-FACT", "PROJECT-FACT", "GLOBAL-FACT", "SUMMARY-FACT"}
    assert {fact for fact in every if fact in (result.summary or "")} == shown


@pytest.mark.parametrize("value", ["", "project,bogus", ","])
def test_bad_scopes_are_exit_2(value):
    with pytest.raises(InputError):
        parse_scopes(value)


def test_the_session_scope_without_a_session_is_refused(world):
    with pytest.raises(InputError):
        _build(world, scopes=("session",))


def test_another_projects_session_id_shape_or_note_never_leaks(world):
    _write(world["home"], world["other"], "project", "## Current state\n"
           + _entry("o1o1o1", "OTHER-PROJECT-FACT"))
    result = _build(world, session=SESSION)
    assert result.summary is None or "OTHER-PROJECT-FACT" not in result.summary


# --------------------------------------------------------------------------- compaction


def test_relevance_is_importance_times_decay():
    note = _note("project", _entry("c1c1c1", "core", tier="CORE", date="2026-11-20")
                 + _entry("i1i1i1", "irr", tier="IRR", date=TODAY)
                 + _entry("n1n1n1", "none", date="2026-11-29"))
    core, irr, none = scoped_entries([("project", note)])
    assert relevance(core, TODAY) == pytest.approx(1.0 * 0.95 ** 10)
    assert relevance(irr, TODAY) == pytest.approx(0.1)
    assert relevance(none, TODAY) == pytest.approx(0.5 * 0.95)


@pytest.mark.parametrize(("entries", "order"), [
    # tiers at the same age: IRR, SEC, none, IMP, CORE
    ([("project", "a", "CORE", TODAY), ("project", "b", "IRR", TODAY),
      ("project", "c", None, TODAY), ("project", "d", "SEC", TODAY), ("project", "e", "IMP", TODAY)],
     ["b", "d", "c", "e", "a"]),
    # age decays: an old CORE below a fresh IMP
    ([("project", "a", "CORE", "2026-01-01"), ("project", "b", "IMP", TODAY)], ["a", "b"]),
    # ties: the less specific scope is compacted first
    ([("session", "a", None, TODAY), ("global", "b", None, TODAY), ("project", "c", None, TODAY)],
     ["b", "c", "a"]),
])
def test_compaction_order(entries, order):
    notes = []
    for scope, text, tier, date in entries:
        notes.append((scope, _note(scope, _entry(f"{text}1{text}1{text}1", text, tier=tier,
                                                 date=date))))
    ranked = compaction_order(scoped_entries(notes), TODAY)
    assert [item.entry.text for item in ranked] == order


def test_a_digest_keeps_paths_identifiers_and_names_verbatim():
    note = _note("project", "- [d1d1d1] When the nightly export runs long, the scheduler in "
                 "src/jobs/export.py kills it after MAX_EXPORT_SECONDS; Ana moved it to PostgreSQL "
                 "with `pg_dump --jobs 4` and the retry_policy from v2.3\n"
                 "  details in docs/runbook.md for ExportJob\n  Source: PR 4411\n")
    _, entry = note.entries()[0]
    line = digest(entry)
    assert "\n" not in line and line.startswith("- [d1d1d1] ")
    for kept in ("src/jobs/export.py", "MAX_EXPORT_SECONDS", "Ana", "PostgreSQL",
                 "`pg_dump --jobs 4`", "retry_policy", "v2.3", "docs/runbook.md", "ExportJob"):
        assert kept in line, kept
    assert "PR 4411" not in line  # provenance is gone already at that step
    assert len(line) < len(entry.content())


def _many(count: int, scope: str, prefix: str) -> str:
    body = "## Durable decisions\n"
    for n in range(count):
        tier = ("CORE", "IMP", "SEC", "IRR", None)[n % 5]
        body += _entry(f"{prefix}{n:03d}x"[-6:], f"{prefix}-{n} keep src/mod_{n}.py in step with "
                       f"the schema, because the migration reads it", tier=tier,
                       date=f"2026-{1 + n % 11:02d}-15")
        body += "  Source: a long review thread with the reasons spelled out\n"
    return body


def test_compaction_goes_step_by_step_and_never_drops_a_whole_scope(world, o200k):
    _write(world["home"], world["project"], "project", _many(30, "project", "p"))
    _write(world["home"], world["project"], "global", _many(30, "global", "g"))
    _write(world["home"], world["project"], "session", _many(30, "session", "s"))
    full = _build(world, session=SESSION, budget=100_000)
    assert full.compacted == ()
    seen_steps = []
    for budget in (full.used - 50, full.used // 2, full.used // 4, full.used // 8):
        result = _build(world, session=SESSION, budget=budget)
        assert result.used == o200k.count(result.summary) <= budget
        steps = {item["step"] for item in result.compacted}
        seen_steps.append(steps)
        # every scope still has an entry shown
        for prefix in ("p-", "g-", "s-"):
            assert prefix in result.summary
        InstructionsOutput.model_validate(result.to_dict())
    assert seen_steps[0] == {"provenance lines dropped"}
    assert "one-line digest" in seen_steps[2] | seen_steps[3]
    # the order: anything left out ranks below anything merely shortened
    result = _build(world, session=SESSION, budget=full.used // 8)
    rank = {name: n for n, name in enumerate(
        ["left out", "one-line digest", "provenance lines dropped"])}
    values = [rank[item["step"]] for item in result.compacted]
    assert values == sorted(values)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(budget=st.integers(min_value=0, max_value=3000))
def test_the_budget_is_exact_with_three_scopes(o200k, budget):
    with tempfile.TemporaryDirectory() as root:
        home = os.path.join(root, "codex")
        os.makedirs(os.path.join(home, "memories"))
        project = _project(root, "p")
        for scope in ("session", "project", "global"):
            _write(home, project, scope, _many(12, scope, scope[0]))
        Path(home, "memories", "memory_summary.md").write_text(
            "v1\n## General Tips\n" + "tip line\n" * 200)
        result = build_instructions(os.path.join(home, "memories"), codex_home=home, cwd=project,
                                    today=TODAY, session=SESSION, budget=budget)
        if result.summary is not None:
            assert result.used == o200k.count(result.summary) <= budget


def test_steps_are_named_in_order():
    assert NO_PROVENANCE < DIGEST < LEFT_OUT


# --------------------------------------------------------------------------- moves


@pytest.fixture
def lib(tmp_path):
    home = str(tmp_path / "codex")
    os.makedirs(home)
    conn = open_store(str(tmp_path / "memcite.sqlite"))
    yield {"home": home, "conn": conn, "a": _project(str(tmp_path), "alpha"),
           "b": _project(str(tmp_path), "beta")}
    conn.close()


def _save(lib, project, scope, text, *, session=SESSION, topic=None, confirmed_by="--yes"):
    location = locate_note(project, lib["home"], scope=scope, session=session)
    result = operations.save_entries(location, [EntryDraft("decisions", text, topic=topic)],
                                     today=TODAY, now=NOW, conn=lib["conn"],
                                     confirmed_by=confirmed_by)
    return result.outcomes[0]["id"]


def _move(lib, project, entry_id, command, to, *, session=SESSION, text=None, yes=True):
    plan = moves.plan_move(project, lib["home"], entry_id, command=command, to=to,
                           session=session, text=text)
    return moves.move_entry(plan, now=NOW, today=TODAY, conn=lib["conn"],
                            confirmed_by="--yes" if yes else None)


def _entries(lib, project, scope, session=SESSION):
    return {item["id"]: item for item in operations.list_entries(
        locate_note(project, lib["home"], scope=scope, session=session))}


def test_provenance_says_through_what_and_whether_a_person_confirmed(lib):
    confirmed = _save(lib, lib["a"], "project", "Confirmed fact")
    automatic = _save(lib, lib["a"], "project", "Automatic fact", confirmed_by=None)
    listed = _entries(lib, lib["a"], "project")
    assert listed[confirmed]["confirmed"] and listed[confirmed]["via"] == "cli"
    assert listed[confirmed]["confirmation"].startswith("yes (--yes by ")
    assert not listed[automatic]["confirmed"]
    assert listed[automatic]["confirmation"] == "no (automatic)"
    _save(lib, lib["a"], "project", "Automatic fact")  # saved again with --yes: now confirmed
    assert _entries(lib, lib["a"], "project")[automatic]["confirmed"]


def test_promote_needs_confirmation_and_moves_nothing_without_it(lib):
    entry_id = _save(lib, lib["a"], "project", "Prefer small commits")
    before = open(locate_note(lib["a"], lib["home"]).note_file).read()
    with pytest.raises(NoteRefusal) as caught:
        _move(lib, lib["a"], entry_id, "promote", "global", yes=False)
    assert caught.value.reason == "needs-confirmation"
    assert caught.value.details["move"]["from"]["scope"] == "project"
    assert open(locate_note(lib["a"], lib["home"]).note_file).read() == before
    assert not os.path.exists(locate_note(lib["a"], lib["home"], scope="global").note_file)


def test_promotion_to_global_naming_this_project_is_refused_unless_rewritten(lib):
    Path(lib["a"], "src", "ledger.py").write_text("")
    entry_id = _save(lib, lib["a"], "project", "Keep src/ledger.py free of I/O")
    with pytest.raises(NoteRefusal) as caught:
        _move(lib, lib["a"], entry_id, "promote", "global")
    assert caught.value.reason == "project-specific" and "src/ledger.py" in caught.value.message
    _move(lib, lib["a"], entry_id, "promote", "global", text="Keep the storage layer free of I/O")
    moved = _entries(lib, lib["a"], "global")[entry_id]
    assert moved["text"] == "Keep the storage layer free of I/O"
    assert entry_id not in _entries(lib, lib["a"], "project")


def test_a_move_rescans_for_secrets(lib):
    location = locate_note(lib["a"], lib["home"])
    entry_id = _save(lib, lib["a"], "project", "Deploy with make deploy")
    text = open(location.note_file).read().replace(
        "Deploy with make deploy", "Deploy with AKIAIOSFODNN7EXAMPLE")
    with open(location.note_file, "w") as handle:  # a hand edit added a secret
        handle.write(text)
    with pytest.raises(NoteRefusal) as caught:
        _move(lib, lib["a"], entry_id, "promote", "global")
    assert caught.value.reason == "secret"


def test_a_move_is_logged_in_both_notes_with_who_confirmed(lib):
    from memcite.notes.changelog import read_log

    entry_id = _save(lib, lib["a"], "project", "Prefer small commits")
    _move(lib, lib["a"], entry_id, "promote", "global")
    rows = read_log(lib["conn"], slug=moves.context_log_slugs(lib["a"], lib["home"], None),
                    entry_id=entry_id)
    assert [(r["command"], r["action"], r["slug"]) for r in rows] == [
        ("save", "save", locate_note(lib["a"], lib["home"]).slug),
        ("promote", "move-out", locate_note(lib["a"], lib["home"]).slug),
        ("promote", "move-in", "global")]
    assert all(r["confirmed_by"] == "--yes" for r in rows[1:])


@pytest.mark.parametrize(("command", "start", "to", "back"), [
    ("promote", "project", "global", "project"),
    ("promote", "session", "project", "session"),
    ("promote", "session", "global", "session"),
])
def test_moves_go_only_the_way_their_name_says(lib, command, start, to, back):
    entry_id = _save(lib, lib["a"], start, "Prefer small commits")
    _move(lib, lib["a"], entry_id, command, to)
    assert entry_id in _entries(lib, lib["a"], to)
    with pytest.raises(InputError):
        _move(lib, lib["a"], entry_id, "promote" if command == "demote" else "demote", to)
    _move(lib, lib["a"], entry_id, "demote", back)
    assert entry_id in _entries(lib, lib["a"], back)


_SAFE_TEXT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=3, max_size=40).filter(
    lambda t: t.strip())


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_SAFE_TEXT, topic=st.none() | st.sampled_from(["indent", "style"]),
       section=st.sampled_from(["decisions", "state", "risks"]))
def test_promote_then_demote_returns_the_same_entry_and_id(text, topic, section):
    with tempfile.TemporaryDirectory() as root:
        home = os.path.join(root, "codex")
        os.makedirs(home)
        project = _project(root, "alpha")
        conn = open_store(os.path.join(root, "db.sqlite"))
        try:
            location = locate_note(project, home)
            saved = operations.save_entries(location, [EntryDraft(section, text, topic=topic)],
                                            today=TODAY, now=NOW, conn=conn, confirmed_by="--yes")
            entry_id = saved.outcomes[0]["id"]
            _, before = parse_note(open(location.note_file).read()).find(entry_id)
            lib = {"home": home, "conn": conn}
            _move(lib, project, entry_id, "promote", "global")
            _move(lib, project, entry_id, "demote", "project")
            found = parse_note(open(location.note_file).read()).find(entry_id)
            assert found is not None
            section_after, after = found
            assert section_after.key == section
            assert (after.id, after.text) == (before.id, before.text)
            assert [line for line in after.body if "Confirmed:" not in line] == \
                [line for line in before.body if "Confirmed:" not in line]
            assert parse_note(open(locate_note(project, home, scope="global").note_file)
                              .read()).find(entry_id) is None
        finally:
            conn.close()


_OPS = st.lists(st.tuples(
    st.sampled_from(["save", "promote", "demote"]),
    st.sampled_from(["a", "b"]),
    st.sampled_from(["session", "project", "global"]),
    st.integers(min_value=0, max_value=5)), min_size=1, max_size=12)


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(ops=_OPS)
def test_no_entry_of_project_a_ever_appears_for_project_b(ops):
    with tempfile.TemporaryDirectory() as root:
        home = os.path.join(root, "codex")
        os.makedirs(os.path.join(home, "memories"))
        conn = open_store(os.path.join(root, "db.sqlite"))
        lib = {"home": home, "conn": conn, "a": _project(root, "alpha"),
               "b": _project(root, "beta")}
        Path(lib["a"], "src", "alpha_only.py").write_text("")
        sessions = {"a": "session-a", "b": "session-b"}
        saved: dict[str, list[str]] = {"a": [], "b": []}
        try:
            for command, who, scope, number in ops:
                project, session = lib[who], sessions[who]
                try:
                    if command == "save":
                        # everything project A writes names its own files
                        text = f"{who.upper()}-ENTRY-{number} see src/{who}lpha_only.py" \
                            if who == "a" else f"B-ENTRY-{number} plain"
                        saved[who].append(_save(lib, project, scope, text, session=session))
                    elif saved[who]:
                        entry_id = saved[who][number % len(saved[who])]
                        to = {"promote": {"session": "project", "project": "global",
                                          "global": "global"},
                              "demote": {"session": "session", "project": "session",
                                         "global": "project"}}[command][scope]
                        _move(lib, project, entry_id, command, to, session=session)
                except (InputError, NoteRefusal):
                    pass  # refused moves change nothing
            result = build_instructions(os.path.join(home, "memories"), codex_home=home,
                                        cwd=lib["b"], today=TODAY, session=sessions["b"],
                                        budget=100_000)
            assert "A-ENTRY" not in (result.summary or "")
            for scope in ("session", "project", "global"):
                listed = operations.list_entries(
                    locate_note(lib["b"], home, scope=scope, session=sessions["b"]))
                assert not any("A-ENTRY" in item["text"] for item in listed)
        finally:
            conn.close()
            shutil.rmtree(root, ignore_errors=True)


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def cli(tmp_path, monkeypatch):
    project = _project(str(tmp_path), "payments-api")
    home = tmp_path / "codex"
    (home / "memories").mkdir(parents=True)
    for key, value in {"CODEX_HOME": str(home), "MEMCITE_DB": str(tmp_path / "m.sqlite"),
                       "MEMCITE_HOME": str(tmp_path)}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("MEMCITE_SESSION", raising=False)
    return {"project": project, "home": str(home)}


def note(cli, *args, json_out=False):
    result = runner.invoke(app, ["note", *args, "--cwd", cli["project"],
                                 *(["--json"] if json_out else [])])
    return result


def test_cli_list_scope_shows_one_line_per_entry_with_provenance(cli):
    note(cli, "save", "Prefers tabs", "--section", "decisions", "--topic", "indent",
         "--scope", "global", "--yes", "--source", "chat 12")
    result = note(cli, "list", "--scope", "global")
    assert result.exit_code == 0
    (line,) = result.stdout.splitlines()
    fields = line.split()
    assert len(fields[0]) == 6 and fields[1:4] == ["decisions", "indent", TODAY[:4] + fields[3][4:]]
    assert "via cli, confirmed, source chat 12" in line
    assert note(cli, "list").stdout.strip() == "No project notes."


def test_cli_promote_without_yes_off_a_terminal_is_refused_exit_3(cli):
    note(cli, "save", "Prefers tabs", "--section", "decisions")
    entry_id = json.loads(note(cli, "list", "--scope", "project", json_out=True).stdout)[
        "entries"][0]["id"]
    result = note(cli, "promote", entry_id, "--to", "global", json_out=True)
    assert result.exit_code == 3
    refused = json.loads(result.stdout)["refused"]
    assert refused["reason"] == "needs-confirmation"
    assert refused["move"]["to"]["scope"] == "global"
    assert "from: project" in result.stderr and f"[{entry_id}] Prefers tabs" in result.stderr
    done = note(cli, "promote", entry_id, "--to", "global", "--yes", json_out=True)
    assert done.exit_code == 0 and json.loads(done.stdout)["confirmed_by"] == "--yes"


def test_cli_end_session_archives_what_was_not_promoted(cli, monkeypatch):
    monkeypatch.setenv("MEMCITE_SESSION", "s-42")
    note(cli, "save", "Scratch one", "--section", "state", "--scope", "session")
    note(cli, "save", "Scratch two", "--section", "state", "--scope", "session")
    ids = [e["id"] for e in json.loads(note(cli, "list", "--scope", "session",
                                            json_out=True).stdout)["entries"]]
    assert note(cli, "promote", ids[0], "--to", "project", "--yes").exit_code == 0
    result = note(cli, "end-session", "s-42", json_out=True)
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert out["entries"] == [ids[1]]
    archived = Path(out["archived"])
    assert archived.parent == Path(cli["home"], "memory", "archive", "sessions", "s-42")
    assert "Scratch two" in archived.read_text() and "Scratch one" not in archived.read_text()
    assert not Path(out["note_file"]).exists()
    assert ids[0] in json.loads(note(cli, "list", "--scope", "project",
                                     json_out=True).stdout)["entries"][0]["id"]


def test_cli_instructions_session_and_scopes(cli):
    note(cli, "save", "SESSION-SCRATCH", "--section", "state", "--scope", "session",
         "--session", "s-1")
    note(cli, "save", "PROJECT-FACT", "--section", "state")
    args = ["instructions", "--cwd", cli["project"], "--no-cache", "--json"]
    helper = runner.invoke(app, [*args, "--session", "s-1", "--scopes", "global,session"])
    assert helper.exit_code == 0
    summary = json.loads(helper.stdout)["summary"]
    assert "SESSION-SCRATCH" in summary and "PROJECT-FACT" not in summary
    plain = json.loads(runner.invoke(app, args).stdout)["summary"]
    assert "PROJECT-FACT" in plain and "SESSION-SCRATCH" not in plain
    bad = runner.invoke(app, [*args, "--scopes", "session"])
    assert bad.exit_code == 2
