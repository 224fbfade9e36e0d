"""The MCP server's ``stats`` tool calls the library function the command calls
(``memcite.retention.stats_report.build``) and returns its model: it neither takes the
lock the output capture needs nor reads a command's printed output."""

from __future__ import annotations

import io
import json
import threading

from memcite.cli import retention_commands
from memcite.demo.loop import demo_paths, run_demo
from memcite.mcp import tools as mcp_tools
from memcite.paths import Locations

NOW = 1_800_000_000


def test_the_stats_tool_is_the_library_call_not_a_captured_command(tmp_path, monkeypatch,
                                                                    capsys):
    run_demo(str(tmp_path), now=NOW, out=io.StringIO())
    paths = demo_paths(str(tmp_path))
    monkeypatch.setenv("MEMCITE_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("MEMCITE_CACHE_DIR", paths["MEMCITE_CACHE_DIR"])
    context = mcp_tools.ToolContext(Locations(db=paths["MEMCITE_DB"],
                                              codex_home=paths["CODEX_HOME"]),
                                    mcp_tools.ConfirmTokens())
    arguments = mcp_tools.StatsInput(as_of=str(NOW), max_unused_days=30)
    monkeypatch.setattr(retention_commands, "stats", None)  # the command's body is not run
    got: list = []
    with getattr(mcp_tools, "_CAPTURE", threading.Lock()):  # a capturing tool waited for it
        worker = threading.Thread(target=lambda: got.append(mcp_tools.stats(context, arguments)))
        worker.start()
        worker.join(60)
    assert got, "the stats tool waited for the output-capture lock"
    monkeypatch.undo()
    monkeypatch.setenv("MEMCITE_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("MEMCITE_CACHE_DIR", paths["MEMCITE_CACHE_DIR"])
    code = retention_commands.stats(paths["MEMCITE_DB"], paths["CODEX_HOME"], 30, as_of=str(NOW),
                                    json=True)
    assert code == 0
    from memcite.contracts.outputs import StatsOutput

    mine = got[0].model_dump(mode="json")
    theirs = StatsOutput.model_validate(json.loads(capsys.readouterr().out)).model_dump(mode="json")
    for report in (mine, theirs):  # how many files a run read: none when the cache answered
        report["citation_checks"].pop("files_read", None)
    assert mine == theirs
