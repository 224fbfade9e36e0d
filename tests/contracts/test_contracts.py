"""The JSON contracts: every --json output validated against its pydantic model, the shipped
schemas current, `memcite schema`, ISO 8601 times beside epoch seconds, and the hot path
free of pydantic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel
from typer.testing import CliRunner

from memcite.cli import citations_commands, ledger_commands
from memcite.cli.app import app
from memcite.contracts import SCHEMA_FOLDER, SCHEMAS, schema_file
from memcite.contracts import outputs as contracts
from memcite.contracts.generate import models, schema_text
from memcite.demo.loop import load_sample_builder
from memcite.ledger.recording import ReplyInput, record_reply
from memcite.ledger.store import open_store
from memcite.ledger.sync import sync_codex_home
from memcite.times import TIME_KEYS, iso_utc, with_iso_times

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
REPLIES = sorted((CORPUS / "replies").glob("*.txt"))
ROLLOUT = next((CORPUS / "codex_home" / "sessions").rglob("rollout-*.jsonl"))
NOW = 1_800_000_000
AS_OF = str(NOW)
runner = CliRunner()


def lines_of(text: str) -> list[str]:
    lines = text.splitlines()
    assert lines, "no JSON printed"
    return lines


def check(name: str, text: str) -> list[BaseModel]:
    """Validate every line of a --json output against the model of ``name`` (strict JSON)."""
    model = models()[name]
    return [model.model_validate_json(line) for line in lines_of(text)]


# --------------------------------------------------------------------------- the golden corpus


@pytest.mark.parametrize("profile", ["codex", "strict"])
def test_parse_json_of_every_corpus_reply_fits_the_model(capsys, profile):
    failures = 0
    for reply in REPLIES:
        code = citations_commands.parse(str(reply), profile=profile, json=True)
        out = capsys.readouterr().out
        (parsed,) = check("parse", out)
        assert isinstance(parsed.root, contracts.ParseFailure) == (code == 1), reply.name
        failures += code == 1
    assert len(REPLIES) > 40
    if profile == "strict":  # both shapes of the output are exercised
        assert 0 < failures < len(REPLIES)


@pytest.fixture
def ledger_env(tmp_path, monkeypatch):
    """A built sample Codex home, an empty database, and the environment pointing at them."""
    builder = load_sample_builder(CORPUS)
    home = builder.build_codex_home(str(tmp_path / "codex"), now=NOW)
    values = {"MEMCITE_DB": str(tmp_path / "memcite.sqlite"), "CODEX_HOME": home,
              "MEMCITE_HOME": str(tmp_path), "MEMCITE_CONFIG": str(tmp_path / "none.toml"),
              "MEMCITE_NO_FASTPATH": ""}
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return {"home": home, "db": values["MEMCITE_DB"], "builder": builder, "tmp": tmp_path,
            "env": {**os.environ, **values}}


def test_record_json_of_every_corpus_reply_fits_the_model(ledger_env, capsys):
    statuses = set()
    for reply in [*REPLIES, REPLIES[0]]:  # the last one again: a duplicate
        code = ledger_commands.record(str(reply), json=True, at=AS_OF)
        out = capsys.readouterr().out
        assert code == 0, reply.name
        (recorded,) = check("record", out)
        assert recorded.recorded is not None
        assert recorded.recorded.replied_at_iso == "2027-01-15T08:00:00Z"
        statuses.add(recorded.recorded.status)
    assert statuses == {"recorded", "duplicate"}


def test_record_jsonl_json_of_the_corpus_fits_the_model(ledger_env, capsys):
    batch = ledger_env["tmp"] / "batch.jsonl"
    with batch.open("w", encoding="utf-8") as handle:
        for number, reply in enumerate([*REPLIES, REPLIES[1]]):  # the last: a duplicate
            item = {"text": reply.read_text(encoding="utf-8"), "at": NOW + number}
            if number % 3 == 0:
                item["id"] = f"reply-{number}"
            handle.write(json.dumps(item) + "\n")
    ledger_commands.record(jsonl=str(batch), profile="strict", json=True)
    results = check("record-jsonl", capsys.readouterr().out)
    assert len(results) == len(REPLIES) + 1
    assert {r.status for r in results} == {"recorded", "duplicate", "rejected"}
    assert {r.key_kind for r in results} == {"id", "sha256"}
    assert all(r.where and r.replied_at_iso for r in results)


def test_record_json_when_the_database_fails_fits_the_model(ledger_env, capsys, tmp_path):
    not_a_db = tmp_path / "not-a-db.sqlite"
    not_a_db.write_bytes(b"this is not sqlite" * 100)
    code = ledger_commands.record(str(REPLIES[0]), db=str(not_a_db), json=True)
    (recorded,) = check("record", capsys.readouterr().out)
    assert code == 2 and recorded.recorded is None and recorded.error


# --------------------------------------------------------------------------- the sample Codex home


@pytest.fixture
def synced(ledger_env):
    """The sample home synced into the database, with one recorded reply citing a memory."""
    builder, home = ledger_env["builder"], ledger_env["home"]
    conn = open_store(ledger_env["db"])
    sync_codex_home(conn, home, now=NOW)
    text = ("x\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:4-7|note=[t]\n"
            "../up.md:1-1|note=[u]\n</citation_entries>\n<rollout_ids>\n"
            f"{builder.thread_id(2)}\nnot-a-uuid\n019c0000-0000-7000-8000-00000000abcd\n"
            "</rollout_ids>\n</oai-mem-citation>")
    record_reply(conn, ReplyInput(text, at=NOW - 86_400), memory_root=Path(home) / "memories",
                 now=NOW)
    conn.close()
    return ledger_env


def invoke(args: list[str], expect: int = 0) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == expect, result.output
    return result.stdout


def test_stats_json_fits_the_model_with_every_list_filled(synced):
    (report,) = check("stats", invoke(["stats", "--json", "--as-of", AS_OF, "--limit", "0"]))
    assert report.dead and report.top and report.unknown_ids and report.not_uuid_ids
    assert report.citation_checks.worst and report.sections and report.files
    assert report.as_of_iso == "2027-01-15T08:00:00Z" and report.since is None
    assert report.since_iso is None
    assert all(dead.last_used_iso for dead in report.dead)
    (since,) = check("stats", invoke(["stats", "--json", "--as-of", AS_OF, "--since", "0"]))
    assert since.since == 0 and since.since_iso == "1970-01-01T00:00:00Z"


def test_stats_json_from_codex_database_alone_fits_the_model(ledger_env, monkeypatch):
    monkeypatch.delenv("MEMCITE_DB")  # no memcite database: the report reads Codex's
    (report,) = check("stats", invoke(["stats", "--json", "--as-of", AS_OF, "--rule", "codex"]))
    assert report.source == "codex" and report.citation_log is False and report.top


def test_prune_both_ways_archived_restore_and_stats_json_fit_the_models(synced):
    (preview,) = check("prune", invoke(["prune", "--rule", "codex", "--as-of", AS_OF, "--json"]))
    assert preview.prune and not preview.applied and preview.way is None
    assert preview.result is None and all(item.last_used_iso for item in preview.prune)
    (noted,) = check("prune", invoke(["prune", "--rule", "codex", "--as-of", AS_OF, "--json",
                                      "--apply"]))
    assert noted.applied and noted.way == "note" and noted.result.note_path
    assert noted.result.asked and all(item.last_used_iso for item in noted.result.asked)
    (stats,) = check("stats", invoke(["stats", "--json", "--as-of", AS_OF, "--rule", "codex"]))
    assert stats.asked_to_forget and stats.totals.asked_to_forget == len(noted.result.asked)
    assert any(dead.asked_to_forget for dead in stats.dead)
    (withdrawn,) = check("restore", invoke(["restore", "--all", "--json"]))
    assert withdrawn.restored and all(item.way == "note" and item.done
                                      for item in withdrawn.restored)
    (deleted,) = check("prune", invoke(["prune", "--rule", "codex", "--as-of", AS_OF, "--json",
                                        "--apply", "--in-codex-db", "--include-recent-threads"]))
    assert deleted.way == "codex_db" and deleted.result.codex_db and deleted.result.asked
    thread = deleted.result.asked[0].thread_id
    conn = open_store(synced["db"])  # what an earlier memcite archived: its log and its mark
    conn.execute("INSERT INTO archive_log (action, thread_id, at, rule, reason, last_used,"
                 " file_from, file_to) VALUES ('archive', ?, ?, 'codex', 'old', ?, ?, ?)",
                 (synced["builder"].thread_id(1), NOW, NOW - 99 * 86_400, "/x/from.md",
                  "/x/to.md"))
    conn.execute("UPDATE memories SET archived_at = ? WHERE thread_id = ?",
                 (NOW, synced["builder"].thread_id(1)))
    conn.commit()
    conn.close()
    (listed,) = check("archived", invoke(["archived", "--json"]))
    assert {r.way for r in listed.requests} == {"note", "codex_db"} and listed.legacy_archive
    assert {r.state for r in listed.requests} == {"withdrawn", "done"}
    assert all(r.requested_at_iso and r.completed_at_iso for r in listed.requests)
    assert any(r.undone_at_iso for r in listed.requests)
    (every,) = check("archived", invoke(["archived", "--all-homes", "--json", "--limit", "0"]))
    assert every.codex_home is None and len(every.requests) == len(listed.requests)
    (card,) = check("show", invoke(["show", thread, "--json"]))
    assert card.forget_requests and card.forget_requests[0].way == "codex_db"
    (restored,) = check("restore", invoke(["restore", "--all", "--json"]))
    assert any(item.way == "codex_db" and item.done for item in restored.restored)
    assert restored.legacy_archive and restored.not_found == []


def test_show_json_fits_the_model(synced):
    (card,) = check("show", invoke(["show", synced["builder"].thread_id(2), "--json"]))
    assert card.citation_count == 1 and card.citations and card.citations[0].entries
    assert card.citations[0].replied_at_iso and card.times.first_synced_at_iso
    assert card.counts.memcite.usage_count == 1 and card.label != "-"
    (bare,) = check("show", invoke(["show", synced["builder"].thread_id(1), "--json",
                                    "--limit", "0"]))
    assert bare.thread_id == synced["builder"].thread_id(1)
    result = runner.invoke(app, ["show", "019c0000-0000-7000-8000-00000000abcd", "--json"])
    assert result.exit_code == 2 and result.stdout == ""


def test_sync_ingest_and_rebuild_json_fit_the_models(ledger_env):
    (synced,) = check("sync", invoke(["sync", "--json"]))
    assert synced.inserted > 0 and synced.usage_data and synced.warnings == []
    assert synced.counts.memories > 0
    os.rename(os.path.join(ledger_env["home"], "memories_1.sqlite"), ledger_env["tmp"] / "away")
    (blind,) = check("sync", invoke(["sync", "--json"]))
    assert not blind.usage_data and blind.warnings
    os.rename(ledger_env["tmp"] / "away", os.path.join(ledger_env["home"], "memories_1.sqlite"))
    bad = ledger_env["tmp"] / "rollout-bad.jsonl"
    bad.write_bytes(ROLLOUT.read_bytes() + b'{"type": "response_item", "role": "assistant", truncated\n')
    ingested = check("ingest", invoke(["ingest", str(ROLLOUT), str(bad), "--json"], expect=2))
    assert len(ingested) == 2 and ingested[1].bad_line_count == 1
    (clean,) = check("rebuild", invoke(["rebuild", "--check", "--json"]))
    assert clean.differences == [] and not clean.applied
    conn = open_store(ledger_env["db"])
    conn.execute("UPDATE memories SET usage_count = usage_count + 3, last_usage = ?", (NOW,))
    conn.commit()
    conn.close()
    (fixed,) = check("rebuild", invoke(["rebuild", "--json"]))
    assert fixed.differences and fixed.applied
    assert all(d.last_usage_iso == "2027-01-15T08:00:00Z" for d in fixed.differences)


@pytest.mark.parametrize("extra", [[], ["--explain"], ["--profile", "codex"]])
def test_instructions_json_fits_the_model(ledger_env, extra):
    args = ["instructions", "--json", "--tokenizer", "approx", "--no-cache", *extra]
    (result,) = check("instructions", invoke(args))
    assert result.instructions and result.sources
    assert (result.explain is not None) == ("--explain" in extra)


# --------------------------------------------------------------------------- memcite schema


def test_the_shipped_schemas_are_the_models_current_schemas():
    shipped = sorted(p.name for p in Path(SCHEMA_FOLDER).glob("*.schema.json"))
    assert shipped == sorted(f"{name}.schema.json" for name in SCHEMAS)
    for name in SCHEMAS:
        assert Path(schema_file(name)).read_text(encoding="utf-8") == schema_text(name), (
            f"{name}: run `memcite schema --write src/memcite/contracts/schemas`")


def test_every_command_with_json_has_a_schema():
    from typer.main import get_command

    commands = get_command(app).commands
    with_json = {name for name, command in commands.items()
                 if any("--json" in param.opts for param in command.params)}
    assert with_json <= set(SCHEMAS)
    # the conformance group's sub-commands and its case format (tests/conformance/test_conformance.py)
    conformance = {"conformance-case", "conformance-export", "conformance-check", "conformance-fuzz"}
    assert set(SCHEMAS) - with_json == {"record-jsonl", "config", *conformance}


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_schema_prints_the_shipped_schema(name):
    out = invoke(["schema", name])
    assert out == Path(schema_file(name)).read_text(encoding="utf-8")
    assert json.loads(out)["$schema"].startswith("https://json-schema.org/")


def test_schema_without_a_name_lists_them_and_json_fits_its_model():
    listed = invoke(["schema"])
    assert [line.split()[0] for line in listed.splitlines()] == list(SCHEMAS)
    (names,) = check("schema", invoke(["schema", "--json"]))
    assert [item.name for item in names.schemas] == list(SCHEMAS)


def test_schema_of_an_unknown_name_is_exit_2_with_the_valid_names():
    result = runner.invoke(app, ["schema", "stat"])
    assert result.exit_code == 2
    assert "'stat'" in result.output and "parse, record, record-jsonl" in result.output


def test_schema_write_generates_the_shipped_files(tmp_path):
    out = invoke(["schema", "--write", str(tmp_path)])
    assert len(out.splitlines()) == len(SCHEMAS)
    for name in SCHEMAS:
        written = (tmp_path / f"{name}.schema.json").read_text(encoding="utf-8")
        assert written == Path(schema_file(name)).read_text(encoding="utf-8")
    invoke(["schema", "stats", "--write", str(tmp_path / "")])
    result = runner.invoke(app, ["schema", "--write", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "no such folder" in result.output


# --------------------------------------------------------------------------- times


def _fields(model: type[BaseModel]):
    yield model
    for info in model.model_fields.values():
        for arg in [info.annotation, *typing.get_args(info.annotation)]:
            for inner in [arg, *typing.get_args(arg)]:
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    yield from _fields(inner)


def _all_models():
    return {m for model in contracts.OUTPUT_MODELS.values()
            for m in _fields(model if not issubclass(model, contracts.RootModel)
                             else contracts.Reading)} | {contracts.ParseFailure}


def test_every_time_has_its_iso_sibling_and_every_iso_its_time():
    seen = set()
    for model in _all_models():
        names = list(model.model_fields)
        for index, name in enumerate(names):
            looks_like_time = (name in TIME_KEYS or name.endswith("_at") or name == "at"
                               or name.startswith(("last_", "logged_last_")))
            if looks_like_time and not name.endswith("_iso"):
                assert name in TIME_KEYS, (
                    f"{model.__name__}.{name}: add it to TIME_KEYS")
                assert names[index + 1] == f"{name}_iso", f"{model.__name__}.{name}"
                seen.add(name)
            if name.endswith("_iso"):
                assert names[index - 1] == name[:-4], f"{model.__name__}.{name}"
    assert seen == TIME_KEYS  # no key in TIME_KEYS is unused


@pytest.mark.parametrize(("seconds", "iso"), [
    (0, "1970-01-01T00:00:00Z"),
    (NOW, "2027-01-15T08:00:00Z"),
    (-1, "1969-12-31T23:59:59Z"),
    (253_402_300_799, "9999-12-31T23:59:59Z"),
    (253_402_300_800, None),  # year 10000
    (2**63, None),
    (-(2**63), None),
    (None, None),
])
def test_iso_utc_table(seconds, iso):
    assert iso_utc(seconds) == iso


@given(st.integers(min_value=-62_135_596_800, max_value=253_402_300_799))
def test_iso_utc_is_the_same_instant(seconds):
    parsed = datetime.fromisoformat(iso_utc(seconds).replace("Z", "+00:00"))
    assert parsed.tzinfo == UTC and int(parsed.timestamp()) == seconds


def test_with_iso_times_puts_each_iso_right_after_its_time_and_leaves_the_rest():
    given_obj = {"as_of": 0, "rule": "x", "dead": [{"last_used": None, "reason": "r"}],
                 "weeks": [{"week_start": "2027-01-11"}], "since": "not a time",
                 "replied_at": True}
    assert with_iso_times(given_obj) == {
        "as_of": 0, "as_of_iso": "1970-01-01T00:00:00Z", "rule": "x",
        "dead": [{"last_used": None, "last_used_iso": None, "reason": "r"}],
        "weeks": [{"week_start": "2027-01-11"}], "since": "not a time", "replied_at": True}
    assert list(with_iso_times(given_obj)) == ["as_of", "as_of_iso", "rule", "dead", "weeks",
                                               "since", "replied_at"]


def test_the_models_enumerations_are_the_librarys():
    from memcite.citations.models import SEVERITIES
    from memcite.retention.checks import CHECK_OUTCOMES
    from memcite.retention.forget import WAYS
    from memcite.retention.rules import RULES

    assert typing.get_args(contracts.CheckOutcome) == CHECK_OUTCOMES
    assert tuple(contracts.Outcomes.model_fields) == CHECK_OUTCOMES
    assert typing.get_args(contracts.Rule) == RULES
    assert typing.get_args(contracts.Way) == WAYS
    assert typing.get_args(contracts.Diagnostic.model_fields["severity"].annotation) == SEVERITIES


# --------------------------------------------------------------------------- the hot path


PROBE = (
    "import sys\nfrom memcite.__main__ import main\n"
    "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
    "sys.stderr.write('LOADED=' + ','.join(sorted(m for m in sys.modules"
    " if m.split('.')[0] in ('pydantic', 'pydantic_core', 'typer', 'annotated_types'))))\n"
)


@pytest.mark.parametrize("args", [
    ["parse", str(REPLIES[0]), "--json"],
    ["strip", str(REPLIES[0])],
    ["record", str(REPLIES[0]), "--json"],
    ["instructions", "--json", "--tokenizer", "approx"],
    ["stats", "--json", "--as-of", AS_OF],
])
def test_per_reply_commands_and_stats_do_not_import_pydantic(synced, args):
    config = synced["tmp"] / "config.toml"
    config.write_text("[retention]\nmax_unused_days = 40\n")  # a valid file: no pydantic either
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, timeout=60,
                          env={**synced["env"], "MEMCITE_CONFIG": str(config)})
    err = done.stderr.decode()
    assert done.returncode == 0 and done.stdout, err
    assert err.rsplit("LOADED=", 1)[1] == ""


LINT_CASES = sorted(p for p in (Path(__file__).resolve().parents[2] / "corpus" / "lint").iterdir()
                    if p.is_dir())


@pytest.mark.parametrize("case", LINT_CASES, ids=[c.name for c in LINT_CASES])
def test_lint_json_of_every_golden_folder_fits_the_model(case):
    roots = [str(case / name) for name in ("memories", "memory") if (case / name).is_dir()]
    result = runner.invoke(app, ["lint", *roots, "--json"])
    assert result.exit_code in (0, 1), result.output
    (report,) = check("lint", result.stdout)
    assert report.errors + report.warnings == len(report.findings)
    assert (result.exit_code == 1) == (report.errors > 0)


def test_ingest_of_a_whole_codex_home_json_fits_the_model(ledger_env):
    sessions = Path(ledger_env["home"]) / "sessions" / "2026" / "01" / "20"
    sessions.mkdir(parents=True)
    (sessions / ROLLOUT.name).write_bytes(ROLLOUT.read_bytes())
    first = check("ingest", invoke(["ingest", "--codex-home", ledger_env["home"], "--json"]))
    assert first and all(line.status == "read" and line.from_offset == 0 for line in first)
    assert sum(line.recorded for line in first) > 0
    again = invoke(["ingest", "--codex-home", ledger_env["home"], "--json"])
    assert again == ""  # every file unchanged since the stored offset: nothing read, nothing printed
