"""The JSON Schemas of the contracts, generated from the models (``memcite schema --write``).

The files in ``schemas/`` are this module's output; a test checks they are current.
"""

from __future__ import annotations

import json
import os

from pydantic import BaseModel

from memcite.contracts import SCHEMAS
from memcite.contracts.config import MemciteConfig
from memcite.contracts.outputs import OUTPUT_MODELS

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def models() -> dict[str, type[BaseModel]]:
    """Every contract by schema name, in the order of ``SCHEMAS``."""
    known = {**OUTPUT_MODELS, "config": MemciteConfig}
    return {name: known[name] for name in SCHEMAS}


def json_schema(name: str) -> dict:
    """The JSON Schema of one contract (KeyError for an unknown name)."""
    schema = models()[name].model_json_schema()
    return {"$schema": DIALECT, **schema, "description": schema.get("description")
            or SCHEMAS[name]}


def schema_text(name: str) -> str:
    """``json_schema(name)`` as the shipped file holds it."""
    return json.dumps(json_schema(name), indent=2, ensure_ascii=False) + "\n"


def write_schemas(folder: str, names: list[str] | None = None) -> list[str]:
    """Write ``<name>.schema.json`` for each name (all by default) into ``folder``; the paths.

    Each file goes through ``memcite.durable_files.write_file`` (never through a link).
    """
    from memcite.durable_files import write_file

    written = []
    for name in names or list(SCHEMAS):
        path = os.path.join(folder, f"{name}.schema.json")
        write_file(path, schema_text(name).encode("utf-8"), mode=0o644)
        written.append(path)
    return written


def write_schemas_into(folder: str, name: str | None = None) -> list[str]:
    """``memcite schema --write``'s work: the schema ``name`` (every one when None), built from
    the models, written into ``folder``, which must exist; the paths written."""
    from memcite.contracts import check_schema_name
    from memcite.errors import InputError

    check_schema_name(name)
    if not os.path.isdir(folder):
        raise InputError(f"--write {folder}: no such folder", hint="create it first")
    try:
        return write_schemas(folder, None if name is None else [name])
    except OSError as exc:
        raise InputError(f"--write {folder}: cannot write ({exc.strerror or exc})") from None


__all__ = ["json_schema", "models", "schema_text", "write_schemas", "write_schemas_into"]
