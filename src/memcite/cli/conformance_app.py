"""``memcite conformance ...``: the citation protocol's oracle, a Typer sub-app of thin wrappers.

The bodies live in ``memcite.cli.conformance_commands``; this module only declares the options.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memcite.cli import conformance_commands
from memcite.cli.fastpath import COUNT_MAX, SEED_MAX
from memcite.cli.options import COMMAND, JsonOpt, choices, exit_with

conformance_app = typer.Typer(
    name="conformance",
    help="Check other readers of citation blocks against memcite.\n\n"
    "memcite reads <oai-mem-citation> blocks as Codex does; another program that reads them "
    "(a port, a fork, a harness) can be run over memcite's corpus of cases, or against "
    "memcite on generated replies. See docs/conformance.md.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

CommandArg = Annotated[list[str], typer.Argument(
    metavar="COMMAND", show_default=False,
    help="The other implementation, after --: it reads one reply on stdin and prints its "
    "reading as JSON.")]
FieldsOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--fields", metavar="TEXT", show_default=False,
    help="Compare only these fields, a comma list of visible, entries, rollout_ids and "
    "thread_ids (default: all).")]
TimeoutOpt = Annotated[float, typer.Option(
    "--timeout", metavar="N", show_default=False,
    help="Seconds the program may take on one reply before it is killed (default: 10).")]
CorpusOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--corpus", metavar="FILE", show_default=False,
    help="A corpus file (.jsonl, or a .json array) instead of the one memcite ships.")]


@conformance_app.command("export", **COMMAND)
def export_command(
    folder: Annotated[str, typer.Argument(
        metavar="DIR", show_default=False,
        help="Where to write the corpus and its schema (created when missing).")],
    export_format: Annotated[str, typer.Option(
        "--format", metavar=choices(conformance_commands.EXPORT_CHOICES), show_default=False,
        help="jsonl: one case a line (the default); json: one array.")] = "jsonl",
    json: JsonOpt = False,
) -> None:
    """Write the conformance corpus and its cases' JSON Schema.

    Every case memcite's tests know, each an input and memcite's reading of it, with the
    rule it pins down; cases.jsonl (or cases.json) and conformance-case.schema.json.

    Examples:

    \b
        memcite conformance export ./conformance
        memcite conformance export --format json ./conformance
    """
    exit_with(conformance_commands.export(folder, export_format, json))


@conformance_app.command("check", **COMMAND)
def check_command(
    command: CommandArg,
    corpus: CorpusOpt = None,
    kind: Annotated[str, typer.Option(
        "--kind", metavar=choices(conformance_commands.KIND_CHOICES), show_default=False,
        help="Which cases to run: reply (the default), or truncation (the program reads "
        "{text, budget} as JSON).")] = "reply",
    fields: FieldsOpt = None,
    timeout: TimeoutOpt = 10.0,
    json: JsonOpt = False,
) -> None:
    """Run another reader over the corpus; print where it disagrees.

    Each case's input goes to COMMAND on stdin; what it prints is compared with memcite's
    reading. A crash, a hang, or output that is not a reading is reported for that case and
    the run goes on; after 3 time-outs in a row the run stops, saying so. Exit 0: all agree;
    1: some case disagrees or failed.

    A hung case's whole process group is killed; on Linux what the program left in a
    session of its own (setsid) is killed too (memcite is a subreaper while it runs).
    On macOS and Windows such a process can outlive the run.

    Examples:

    \b
        memcite conformance check -- python my_reader.py
        memcite conformance check --json --timeout 5 -- ./reader --json
        memcite conformance check --fields thread_ids -- node count.js
    """
    exit_with(conformance_commands.check(command, corpus, kind, fields, timeout, json))


@conformance_app.command("fuzz", **COMMAND)
def fuzz_command(
    command: CommandArg,
    seconds: Annotated[float, typer.Option(
        "--seconds", metavar="N", show_default=False,
        help="Stop generating replies after this many seconds (default: 60).")] = 60.0,
    seed: Annotated[int, typer.Option(
        "--seed", metavar="N", min=-SEED_MAX, max=SEED_MAX, show_default=False,
        help="The generator's seed: the same seed, the same replies (default: 0).")] = 0,
    max_cases: Annotated[Optional[int], typer.Option(  # noqa: UP045
        "--max-cases", metavar="N", max=COUNT_MAX, show_default=False,
        help="Stop after this many replies (default: no limit but --seconds).")] = None,
    out: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--out", metavar="DIR", show_default=False,
        help="Write each shrunk disagreement there as a corpus case (a .jsonl file).")] = None,
    fields: FieldsOpt = None,
    timeout: TimeoutOpt = 10.0,
    corpus: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--corpus", metavar="FILE", show_default=False,
        help="Seed the generator from this corpus file instead of the shipped one.")] = None,
    json: JsonOpt = False,
) -> None:
    """Fuzz another reader against memcite on generated replies.

    Replies are made from the corpus's, mutated (fences, unterminated blocks, odd ids,
    Unicode, CRLF, huge entries); each disagreement is shrunk to a small reply and, with
    --out, written as a case. Exit 0: none found; 1: some found.

    Examples:

    \b
        memcite conformance fuzz --seconds 30 --out found -- python my_reader.py
        memcite conformance fuzz --seed 7 --max-cases 500 --json -- ./reader
    """
    exit_with(conformance_commands.fuzz(command, seconds, seed, max_cases, out, fields, timeout,
                                        corpus, json))


def register(app: typer.Typer) -> None:
    """Add ``memcite conformance`` to ``app``."""
    app.add_typer(conformance_app, name="conformance")
