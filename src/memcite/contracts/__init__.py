"""The promises memcite makes to scripts: the shape of every ``--json`` output and of its config file.

The pydantic models live in ``memcite.contracts.outputs`` and ``memcite.contracts.config``;
their JSON Schemas ship beside them in ``schemas/`` (``memcite schema NAME`` prints one).
This module imports neither pydantic nor any other wing, so the commands that only name or
print a schema stay light. The contracts sit just above the shared base: any wing may use
them (lazily), and they import nothing from the wings.
"""

from __future__ import annotations

import os

# name -> what the schema describes; the same names as OUTPUT_MODELS in memcite.contracts.outputs
# (plus "config"), and as the files in schemas/.
SCHEMAS: dict[str, str] = {
    "parse": "memcite parse --json: the reading of one reply (or, strict, its problems)",
    "record": "memcite record --json: the reading of one reply and what recording it did",
    "record-jsonl": "memcite record --jsonl FILE --json: one line per reply of the batch",
    "instructions": "memcite instructions --json: the developer instructions and the budget",
    "stats": "memcite stats --json: the usage report",
    "prune": "memcite prune --json: the memories the rule would forget (or asked Codex to)",
    "restore": "memcite restore --json: what restoring did",
    "archived": "memcite archived --json: the requests to forget, and older archivings",
    "select": "memcite select --json: what Codex's next consolidation would take",
    "show": "memcite show ID --json: everything memcite knows of one memory",
    "sync": "memcite sync --json: what a sync read and changed",
    "ingest": "memcite ingest --json: one line per rollout file",
    "rebuild": "memcite rebuild --json: usage counts that differ from the log",
    "lint": "memcite lint --json: the findings of one run",
    "doctor": "memcite doctor --json: one entry per check of the setup",
    "schema": "memcite schema --json: the names of these schemas",
    "thread": "memcite thread --json: what Codex's memory did in one thread, or what it costs",
    "consolidation": "memcite consolidation --json: Codex's memory consolidation, store by store",
    "search": "memcite search --json: the matching lines of the notes, event logs and memory",
    "trace": "memcite trace ID --json: where one memory or memory-folder line came from",
    "audit": "memcite audit --json: poisoned, tainted, cross-project and secret memory text",
    "push": "memcite push --json: what this ledger sent to the fleet's PostgreSQL",
    "conformance-case": "one case of the conformance corpus (memcite conformance export)",
    "conformance-export": "memcite conformance export --json: the files written",
    "conformance-check": "memcite conformance check --json: another implementation's disagreements",
    "conformance-fuzz": "memcite conformance fuzz --json: generated replies and shrunk cases",
    "config": "memcite's config file (config.toml), as TOML tables",
}

SCHEMA_FOLDER = os.path.join(os.path.dirname(__file__), "schemas")


def schema_file(name: str) -> str:
    """Where the shipped JSON Schema of ``name`` is (one of ``SCHEMAS``)."""
    return os.path.join(SCHEMA_FOLDER, f"{name}.schema.json")


def check_schema_name(name: str | None) -> None:
    """Refuse a name that is none of ``SCHEMAS`` (None, for every schema, is fine)."""
    from memcite.errors import InputError

    if name is not None and name not in SCHEMAS:
        raise InputError(f"no schema named {name!r}; the schemas are: {', '.join(SCHEMAS)}",
                         hint="`memcite schema` lists them with what each describes")


def render_schema_list() -> str:
    """``memcite schema``'s text: one line per schema, its name and what it describes."""
    width = max(map(len, SCHEMAS))
    return "".join(f"{name:<{width}}  {description}\n" for name, description in SCHEMAS.items())


def shipped_schema(name: str) -> str:
    """The text of the JSON Schema of ``name`` as shipped (read, never built: no pydantic)."""
    from memcite.errors import InputError

    check_schema_name(name)
    try:
        with open(schema_file(name), encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise InputError(f"{schema_file(name)}: cannot read the shipped schema "
                         f"({exc.strerror or exc})",
                         hint="reinstall memcite, or generate it with "
                              "`memcite schema --write DIR`") from None


__all__ = ["SCHEMAS", "SCHEMA_FOLDER", "check_schema_name", "render_schema_list", "schema_file",
           "shipped_schema"]
