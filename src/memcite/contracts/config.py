"""memcite's config file as a pydantic model: every table and key it may hold, and their values.

`config_problems` turns what the model refuses into plain sentences (the key in dotted
form, what is wrong, the closest valid key for a misspelt one); the loader
(`memcite.retention.rules.load_memcite_config`) raises them as one error naming the file.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


Days = Annotated[int, Field(ge=0)] | Literal["never"]


class TiersConfig(_Table):
    """`[retention.tiers]`: fixed windows, each replacing its tier's decay (`prune --rule tiered`)."""

    core_days: Days | None = Field(
        None, description="[CORE] entries: reported for review after this many days unused, "
                          "instead of decaying (default: none, the tier decays; \"never\": "
                          "never).")
    imp_days: Days | None = Field(
        None, description="[IMP] entries: reported for review after this many days unused, "
                          "instead of decaying (default: none).")
    sec_days: Days | None = Field(
        None, description="[SEC] entries: pruned after this many days unused, instead of "
                          "decaying (default: none).")
    irr_days: Days | None = Field(
        None, description="[IRR] entries: pruned after this many days unused, instead of "
                          "decaying (default: none).")


Fraction = Annotated[float, Field(ge=0, le=1)]


class DecayConfig(_Table):
    """`[retention.decay]`: how the entries of each tier lose survival (`prune --rule tiered`)."""

    core_rate: Fraction | None = Field(
        None, description="Survival a [CORE] entry loses per month (30 days) unused "
                          "(default 0: never).")
    imp_rate: Fraction | None = Field(None, description="The same for [IMP] (default 0.15).")
    sec_rate: Fraction | None = Field(None, description="The same for [SEC] (default 0.40).")
    irr_rate: Fraction | None = Field(None, description="The same for [IRR] (default 0.65).")
    used_rate: Fraction | None = Field(
        None, description="The rate once an entry was used since Codex's last consolidation: "
                          "the decay reset (default 0.05; a tier's lower rate stays).")
    unused_rate: Fraction | None = Field(
        None, description="The rate after the last consolidation for an entry not used since: "
                          "the decay accelerated (default 0.25; a tier's higher rate stays).")
    core_threshold: Fraction | None = Field(
        None, description="[CORE] entries are reported for review at or below this survival "
                          "(default 0).")
    imp_threshold: Fraction | None = Field(
        None, description="[IMP] entries are reported for review at or below this survival "
                          "(default 0.60).")
    sec_threshold: Fraction | None = Field(
        None, description="[SEC] entries are pruned at or below this survival (default 0.60).")
    irr_threshold: Fraction | None = Field(
        None, description="[IRR] entries are pruned at or below this survival (default 1: at "
                          "once).")


class RetentionConfig(_Table):
    """`[retention]`: the settings of `stats` and `prune` under memcite's rule."""

    max_unused_days: Annotated[int, Field(ge=0)] | None = Field(
        None, description="A memory unused for more days than this is dead (default: Codex's "
                          "[memories] max_unused_days, else 30).")
    max_raw_memories_for_consolidation: Annotated[int, Field(ge=1)] | None = Field(
        None, description="How many memories a consolidation takes (default: Codex's, else 256).")
    tiers: TiersConfig = Field(default_factory=TiersConfig)
    decay: DecayConfig = Field(default_factory=DecayConfig)


class ConsolidationConfig(_Table):
    """`[consolidation]`: when `memcite consolidation` and `doctor` warn about Codex's."""

    stale_hours: Annotated[int, Field(ge=1)] | None = Field(
        None, description="Warn when no consolidation of Codex's succeeded for more hours "
                          "than this while something waits for one (default 48).")


class FleetConfig(_Table):
    """`[fleet]`: the PostgreSQL server `memcite push` sends this ledger to."""

    url: str | None = Field(
        None, description="The server, as postgresql://user@host:port/database (keep the "
                          "password in PGPASSWORD or ~/.pgpass; one written here is masked in "
                          "every message). Nothing is sent until `memcite push` runs.")
    machine: str | None = Field(
        None, description="This machine's name on the server (default: the host name).")


class GateConfig(_Table):
    """`[gate]`: the PreToolUse gate (`memcite hook pre-tool`, `setup codex --gate`)."""

    memory_writes: bool | None = Field(
        None, description="Deny a write into Codex's memory folder that would add a poisoned "
                          "line, and quarantine a poisoned memory the Stop hook finds after a "
                          "consolidation (default true; false turns both off).")


class MemciteConfig(_Table):
    """The whole file: one table per part of memcite."""

    retention: RetentionConfig = Field(default_factory=RetentionConfig)
    consolidation: ConsolidationConfig = Field(default_factory=ConsolidationConfig)
    fleet: FleetConfig = Field(default_factory=FleetConfig)
    gate: GateConfig = Field(default_factory=GateConfig)


def _valid_keys(model: type[BaseModel], location: tuple) -> list[str]:
    """The keys the table at `location` (a path of table names) accepts."""
    for name in location:
        annotation = model.model_fields[name].annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return list(model.model_fields)


def _dotted(location: tuple) -> str:
    return ".".join(str(part) for part in location) or "the file"


def _sentence(error: dict) -> str:
    where = _dotted(error["loc"])
    kind, value = error["type"], error.get("input")
    if kind == "extra_forbidden":
        import difflib  # only a misspelt key needs it

        table, key = error["loc"][:-1], str(error["loc"][-1])
        valid = _valid_keys(MemciteConfig, table)
        close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
        place = f"[{_dotted(table)}]" if table else "the file"
        if close:
            return f"{where}: unknown key; did you mean {_dotted((*table, close[0]))}?"
        return f"{where}: unknown key; {place} accepts {', '.join(valid) or 'no keys'}"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return f"{where}: [{where}] must be a table, got {value!r}"
    if kind in ("bool_type", "bool_parsing"):
        return f"{where}: expected true or false (a TOML boolean, unquoted), got {value!r}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"{where}: expected a whole number (a TOML integer such as 30), got {value!r}"
    if kind == "greater_than_equal":
        return f"{where}: must be at least {error['ctx']['ge']}, got {value!r}"
    if kind == "less_than_equal":
        return f"{where}: must be at most {error['ctx']['le']}, got {value!r}"
    if kind in ("float_type", "float_parsing"):
        return f"{where}: expected a number (such as 0.25), got {value!r}"
    return f"{where}: {error['msg']}, got {value!r}"


def _union_sentence(errors: list[dict]) -> str:
    """One sentence for a value that matched none of a union's forms (``14`` or ``"never"``)."""
    where, value = _dotted(errors[0]["loc"]), errors[0].get("input")
    forms = []
    for error in errors:
        if error["type"] == "literal_error":
            forms.append(error["ctx"]["expected"])
        elif error["type"] == "greater_than_equal":
            forms.append(f"a whole number of at least {error['ctx']['ge']}")
        elif error["type"].startswith("int"):
            forms.append("a whole number")
        else:
            forms.append(error["msg"])
    return f"{where}: expected {' or '.join(dict.fromkeys(forms))}, got {value!r}"


def config_problems(data: object) -> list[str]:
    """What is wrong with a parsed config file, one sentence per problem (empty: all is well)."""
    try:
        MemciteConfig.model_validate(data)
    except ValidationError as exc:
        grouped: dict[tuple, list[dict]] = {}
        for error in exc.errors(include_url=False):
            # a union's branches show in the location as tags (``constrained-int``): drop them;
            # an unknown key is the user's own text, whatever it looks like: keep it
            loc = tuple(error["loc"]) if error["type"] == "extra_forbidden" else tuple(
                p for p in error["loc"] if not isinstance(p, str) or p.isidentifier())
            grouped.setdefault(loc, []).append({**error, "loc": loc})
        return [_sentence(errors[0]) if len(errors) == 1 else _union_sentence(errors)
                for errors in grouped.values()]
    return []


__all__ = ["ConsolidationConfig", "DecayConfig", "MemciteConfig", "RetentionConfig", "TiersConfig",
           "config_problems"]
