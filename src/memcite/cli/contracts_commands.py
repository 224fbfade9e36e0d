"""The body of ``memcite schema``: list the shipped JSON Schemas, print one, or write them all.

Listing and printing read the files shipped in ``memcite/contracts/schemas/`` (no pydantic,
``memcite.contracts``); only ``--write`` builds the schemas from the models
(``memcite.contracts.generate.write_schemas_into``).
"""

from __future__ import annotations

import sys

from memcite.cli.console import dump_json, report_error
from memcite.contracts import SCHEMAS, check_schema_name, render_schema_list, shipped_schema
from memcite.errors import MemciteError


def schema(name: str | None = None, json: bool = False,  # noqa: A002 - mirrors --json
           write: str | None = None) -> int:
    """Print the JSON Schema of ``name``; without a name list them; with ``write`` write them."""
    try:
        check_schema_name(name)
        if write is not None:
            from memcite.contracts.generate import write_schemas_into

            written = write_schemas_into(write, name)
            if json:
                dump_json({"written": written})
            else:
                sys.stdout.write("".join(f"wrote {path}\n" for path in written))
        elif name is None:
            if json:
                dump_json({"schemas": [{"name": n, "description": d} for n, d in SCHEMAS.items()]})
            else:
                sys.stdout.write(render_schema_list())
        else:
            sys.stdout.write(shipped_schema(name))
        return 0
    except MemciteError as error:
        return report_error(error)
