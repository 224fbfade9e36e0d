"""The body of ``memcite schema``: list the shipped JSON Schemas, print one, or write them all.

Listing and printing read the files shipped in ``memcite/contracts/schemas/`` (no pydantic);
only ``--write`` builds the schemas from the models.
"""

from __future__ import annotations

import os
import sys

from memcite.cli.console import dump_json, report_error
from memcite.contracts import SCHEMAS, schema_file
from memcite.errors import InputError, MemciteError


def _unknown(name: str) -> InputError:
    return InputError(f"no schema named {name!r}; the schemas are: {', '.join(SCHEMAS)}",
                      hint="`memcite schema` lists them with what each describes")


def schema(name: str | None = None, json: bool = False,  # noqa: A002 - mirrors --json
           write: str | None = None) -> int:
    """Print the JSON Schema of ``name``; without a name list them; with ``write`` write them."""
    try:
        if name is not None and name not in SCHEMAS:
            raise _unknown(name)
        if write is not None:
            return _write(write, name, json)
        if name is None:
            if json:
                dump_json({"schemas": [{"name": n, "description": d} for n, d in SCHEMAS.items()]})
            else:
                width = max(map(len, SCHEMAS))
                for schema_name, description in SCHEMAS.items():
                    sys.stdout.write(f"{schema_name:<{width}}  {description}\n")
            return 0
        try:
            with open(schema_file(name), encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise InputError(f"{schema_file(name)}: cannot read the shipped schema "
                             f"({exc.strerror or exc})",
                             hint="reinstall memcite, or generate it with "
                                  "`memcite schema --write DIR`") from None
        sys.stdout.write(text)
        return 0
    except MemciteError as error:
        return report_error(error)


def _write(folder: str, name: str | None, json: bool) -> int:
    if not os.path.isdir(folder):
        raise InputError(f"--write {folder}: no such folder", hint="create it first")
    from memcite.contracts.generate import write_schemas

    try:
        written = write_schemas(folder, None if name is None else [name])
    except OSError as exc:
        raise InputError(f"--write {folder}: cannot write ({exc.strerror or exc})") from None
    if json:
        dump_json({"written": written})
    else:
        for path in written:
            sys.stdout.write(f"wrote {path}\n")
    return 0
