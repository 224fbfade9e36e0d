"""Every write of memcite's goes through ``memcite.durable_files`` (``O_EXCL``, unpredictable
names, no link followed): a static check over the source that fails when a raw writer
reappears, and the writers that once were raw, attacked with a planted link."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from memcite.durable_files import LinkRefused, write_file

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "memcite"

# Writers left as they are, each with why it is safe.
ALLOWED = {
    ("demo/loop.py", "open"): "the demo's own folder, made by mkdtemp (0700, unpredictable)",
    ("retention/archive.py", "shutil.move"): "a rename of memcite's own archived file, no bytes "
                                             "written (restore checks the place is free)",
}
_COPIES = {"copy", "copy2", "copyfile", "copytree", "move", "copyfileobj"}


def _mode_of(call: ast.Call) -> str | None:
    args = call.args[1:2] or [kw.value for kw in call.keywords if kw.arg == "mode"]
    if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
        return args[0].value
    return None


def _names(node: ast.AST) -> set[str]:
    """The names in an expression (``getattr(os, "O_NOFOLLOW", 0)``'s string too)."""
    return {n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name)
            else n.value for n in ast.walk(node)
            if isinstance(n, ast.Attribute | ast.Name)
            or isinstance(n, ast.Constant) and isinstance(n.value, str)}


def raw_writers(source: str) -> list[tuple[int, str]]:
    """``(line, what)`` of each write in ``source`` that bypasses durable_files."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "open":
            mode = _mode_of(node)
            target = node.args[0] if node.args else None
            devnull = isinstance(target, ast.Attribute) and target.attr == "devnull"
            if mode and set(mode) & set("wax+") and not devnull:
                found.append((node.lineno, "open"))
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if func.attr in ("write_text", "write_bytes"):
                found.append((node.lineno, func.attr))
            elif owner == "shutil" and func.attr in _COPIES:
                found.append((node.lineno, f"shutil.{func.attr}"))
            elif owner == "os" and func.attr == "open" and len(node.args) > 1:
                flags = _names(node.args[1])
                if "O_CREAT" in flags and not flags & {"O_EXCL", "NOFOLLOW", "O_NOFOLLOW"}:
                    found.append((node.lineno, "os.open O_CREAT without O_EXCL or O_NOFOLLOW"))
    return found


def test_the_check_finds_each_kind_of_raw_writer():
    source = ("open(p, 'w')\nopen(p, mode='ab')\nPath(p).write_text('x')\nshutil.copy(a, b)\n"
              "os.open(t, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)\n"
              "open(p)\nopen(os.devnull, 'w')\nos.open(t, os.O_CREAT | os.O_EXCL)\n")
    assert [what for _, what in raw_writers(source)] == [
        "open", "open", "write_text", "shutil.copy",
        "os.open O_CREAT without O_EXCL or O_NOFOLLOW"]


def test_no_raw_writer_in_the_package():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "durable_files.py":
            continue
        relative = path.relative_to(PACKAGE).as_posix()
        for line, what in raw_writers(path.read_text(encoding="utf-8")):
            if (relative, what) not in ALLOWED:
                found.append(f"{relative}:{line}: {what}")
    assert not found, "write through memcite.durable_files instead:\n" + "\n".join(found)


# --------------------------------------------------------------------------- planted links


def test_write_file_refuses_a_link_and_never_writes_through_it(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / "out").symlink_to(victim)
    with pytest.raises(LinkRefused):
        write_file(str(tmp_path / "out"), b"new")
    assert victim.read_text() == "keep"
    write_file(str(tmp_path / "plain"), b"new", mode=0o640)
    assert (tmp_path / "plain").read_bytes() == b"new"
    assert (tmp_path / "plain").stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []


def test_conformance_export_through_planted_links(tmp_path):
    """The old temporary name was ``cases.jsonl.tmp<pid>``: a link there overwrote any file."""
    from memcite.conformance.corpus import export_corpus

    victim = tmp_path / "victim"
    victim.write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    for pid in range(os.getpid() - 5, os.getpid() + 50):
        (out / f"cases.jsonl.tmp{pid}").symlink_to(victim)
    written = export_corpus(str(out))
    assert victim.read_text() == "keep"
    assert Path(written[0]).read_text(encoding="utf-8").startswith("{")
    (out / "cases.jsonl").unlink()
    (out / "cases.jsonl").symlink_to(victim)
    with pytest.raises(LinkRefused):
        export_corpus(str(out))
    assert victim.read_text() == "keep"


def test_the_conformance_export_command_refuses_a_link_with_exit_3(tmp_path):
    from typer.testing import CliRunner

    from memcite.cli.app import app

    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / "cases.jsonl").symlink_to(victim)
    result = CliRunner().invoke(app, ["conformance", "export", str(tmp_path)])
    assert result.exit_code == 3, result.output
    assert victim.read_text() == "keep"


def test_schemas_written_for_a_user_refuse_a_link(tmp_path):
    from memcite.contracts.generate import write_schemas

    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / "stats.schema.json").symlink_to(victim)
    with pytest.raises(LinkRefused):
        write_schemas(str(tmp_path), ["stats"])
    assert victim.read_text() == "keep"


def test_a_cache_with_a_planted_link_is_skipped_not_followed(tmp_path):
    from memcite.retention.tally import _cache_write

    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / "tally.json").symlink_to(victim)
    _cache_write(str(tmp_path / "tally.json"), {"a": 1})
    assert victim.read_text() == "keep"


# --------------------------------------------------------------------------- report --html


def test_a_page_another_user_owns_is_replaced_by_a_private_one(tmp_path, monkeypatch):
    """A root-owned 0666 report kept its mode: readable and writable by anyone."""
    import stat

    from memcite.fleet.report_page import write_page

    page = tmp_path / "report.html"
    page.write_text("old")
    page.chmod(0o666)
    if os.geteuid() == 0:
        os.chown(page, 65534, 65534)  # nobody's page, in a folder of ours
    else:
        monkeypatch.setattr(os, "geteuid", lambda: page.stat().st_uid + 1)
    write_page(str(page), b"<!DOCTYPE html>")
    assert page.read_bytes() == b"<!DOCTYPE html>"
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    mine = tmp_path / "mine.html"
    mine.write_text("old")
    mine.chmod(0o644)
    monkeypatch.undo()
    write_page(str(mine), b"<!DOCTYPE html>")
    assert stat.S_IMODE(mine.stat().st_mode) == 0o644  # the user's own choice stays
