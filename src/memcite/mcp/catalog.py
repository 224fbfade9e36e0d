"""The tool list ``memcite mcp`` answers ``tools/list`` with, shipped as ``tools.json``.

The file is generated from the tool specs and their pydantic models
(``memcite.mcp.tools.TOOLS``), so that listing the tools imports neither pydantic
nor the tool bodies; a test checks that it is current. After changing a tool's
description, annotations or models, write it again::

    .venv/bin/python -m memcite.mcp.catalog --write

``--check`` exits 1 when the shipped file is not what the models give. Only
``tool_list`` imports the tools; ``load`` reads the file with the standard library.
"""

from __future__ import annotations

import json
import os
import sys

CATALOG_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools.json")
GENERATED_BY = "python -m memcite.mcp.catalog --write (from memcite.mcp.tools.TOOLS)"


def tool_list() -> list[dict]:
    """The tools as ``tools/list`` gives them, made from the specs and their models."""
    from memcite.mcp.tools import TOOLS

    return [{"name": tool.name, "description": tool.description,
             "inputSchema": tool.input_model.model_json_schema(),
             "outputSchema": tool.output_model.model_json_schema(),
             "annotations": tool.annotations()} for tool in TOOLS]


def catalog_text() -> str:
    """``tool_list()`` as the shipped file holds it."""
    return json.dumps({"generated_by": GENERATED_BY, "tools": tool_list()}, indent=1,
                      ensure_ascii=False) + "\n"


def load(path: str | None = None) -> list[dict]:
    """The shipped tool list; ``tool_list()`` when the file is missing or damaged."""
    try:
        with open(path or CATALOG_FILE, "rb") as handle:
            tools = json.loads(handle.read())["tools"]
        if isinstance(tools, list) and all(isinstance(tool, dict) for tool in tools):
            return tools
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return tool_list()


def write_catalog(path: str | None = None) -> None:
    """Write ``catalog_text()`` to ``path`` (beside it first, then renamed over it)."""
    from memcite.durable_files import write_file

    write_file(path or CATALOG_FILE, catalog_text().encode("utf-8"), mode=0o644)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--write"]:
        write_catalog()
        print(f"wrote {CATALOG_FILE}")
        return 0
    if args == ["--check"]:
        try:
            with open(CATALOG_FILE, encoding="utf-8") as handle:
                current = handle.read() == catalog_text()
        except OSError:
            current = False
        if not current:
            print(f"{CATALOG_FILE} is not current: run python -m memcite.mcp.catalog --write",
                  file=sys.stderr)
        return 0 if current else 1
    print("usage: python -m memcite.mcp.catalog --write | --check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
