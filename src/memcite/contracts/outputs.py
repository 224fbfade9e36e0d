"""One pydantic model per `--json` output: the keys memcite prints, their types and meaning.

The commands build plain dicts (the per-reply ones must start fast, without pydantic);
the tests validate what they print against these models, so the two cannot drift.
Every model forbids unknown keys. A time is a whole number of Unix seconds under its
own name and, under the same name with `_iso`, the same instant as an ISO 8601 UTC
string (`2027-01-15T08:00:00Z`; null when the seconds are null or out of range).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

Iso = Annotated[
    str | None,
    Field(description="The time beside it as ISO 8601 UTC (null when it is null).",
          pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"),
]
Count = Annotated[int, Field(ge=0)]
Rule = Literal["memcite", "codex"]
CheckOutcome = Literal["outside_root", "missing", "not_to_cite", "removed", "out_of_range",
                       "blank", "changed", "moved", "unverified", "ok"]
Way = Literal["note", "codex_db"]


class Contract(BaseModel):
    """A JSON object whose keys are all known: anything else is drift."""

    model_config = ConfigDict(extra="forbid", strict=True)


# --------------------------------------------------------------------------- parse


class CitationEntry(Contract):
    """One accepted line of a `<citation_entries>` section, as Codex keeps it."""

    path: str
    line_start: int
    line_end: int
    note: str


class Citation(Contract):
    """What Codex's reader yields for a reply: entries and ids, in order."""

    entries: list[CitationEntry]
    rollout_ids: list[str] = Field(description="The ids as written in <rollout_ids>.")


class Diagnostic(Contract):
    """Something Codex passes over silently, with where it is in the reply."""

    severity: Literal["info", "warning", "error"]
    code: str = Field(description="Stable, kebab-case, e.g. entry-no-note.")
    message: str
    line: int = Field(ge=1, description="1-based line in the reply.")
    column: int = Field(ge=1, description="1-based column, in characters.")


class Reading(Contract):
    """Everything memcite reads from one reply."""

    visible: str = Field(description="The reply with every citation block removed.")
    citation: Citation | None = Field(description="null when the reply has no citation.")
    thread_ids: list[str] = Field(description="The ids Codex counts, normalised, in order.")
    diagnostics: list[Diagnostic]


class ParseFailure(Contract):
    """A strict reading that found problems (exit 1): the first as text, then all of them."""

    error: str
    diagnostics: list[Diagnostic]


class ParseOutput(RootModel[Reading | ParseFailure]):
    """`memcite parse --json`: the reading, or with `--profile strict` its problems."""


# --------------------------------------------------------------------------- record


class CitedId(Contract):
    """One id as written in a reply, and what recording it did."""

    rollout_id: str = Field(description="The id as written.")
    thread_id: str | None = Field(description="Normalised; null when it is not a UUID.")
    terminated: bool = Field(description="False when its block was never closed.")
    counted: bool = Field(description="Added to the memory's usage count under the policy.")
    known: bool = Field(description="A memory in the inventory when recorded.")


class RecordedReply(Contract):
    """What recording one reply did (one line of `record --jsonl FILE --json`)."""

    status: Literal["recorded", "duplicate", "rejected"]
    key: str = Field(description="The reply's key: its id, else the SHA-256 of its text.")
    key_kind: Literal["id", "sha256"]
    replied_at: int
    replied_at_iso: Iso
    counted: list[str] = Field(description="Thread ids whose usage count went up, once per increment.")
    unknown_ids: list[str] = Field(description="UUIDs cited that are not memories in the inventory.")
    not_uuid_ids: list[str] = Field(description="Ids as written that are not UUIDs (never counted).")
    ids: list[CitedId]
    entries: Count = Field(description="Citation entries logged.")
    entries_hashed: Count = Field(description="Of those, entries whose cited lines were hashed.")
    error: str | None = Field(None, description="Why a rejected reply was not recorded.")
    where: str | None = Field(None, description="The input line, FILE:LINE (with --jsonl).")


class RecordOutput(Contract):
    """`memcite record --json`: the reading, and what recording did (null when it failed)."""

    reading: Reading
    recorded: RecordedReply | None
    error: str | None = Field(None, description="Why the reply was not recorded.")


# --------------------------------------------------------------------------- instructions


class TokenUse(Contract):
    budget: Count
    used: Count = Field(description="Tokens of the summary.")


class SourceUse(Contract):
    """How much of one memory file went into the instructions."""

    scope: str = Field(description="Where the file applies, e.g. global or project.")
    path: str
    tokens: Count
    truncated: bool
    omitted_bytes: Count
    omitted_tokens: Count
    omitted_exact: bool = Field(description="False when omitted_tokens is an estimate.")


class ScopedId(Contract):
    id: str | None = Field(description="The entry's id (null: a hand-written entry without one).")
    scope: Literal["session", "project", "global"]


class Override(Contract):
    """Two scopes' entries on one topic: the one kept, the one left out, and why."""

    topic: str = Field(description="The shared topic, case-folded.")
    kept: ScopedId
    dropped: ScopedId
    why: str = Field(description="Confirmed beats automatic, then the more specific scope.")


class Compacted(Contract):
    """A note entry shortened or left out to fit the budget."""

    id: str | None
    scope: Literal["session", "project", "global"]
    step: Literal["provenance lines dropped", "one-line digest", "left out"]
    relevance: float = Field(description="importance(tier) x 0.95^(days since last confirmed).")


class InstructionsOutput(Contract):
    """`memcite instructions --json`: what goes into the model's context, and the budget."""

    instructions: str | None = Field(description="null when there is no memory to inject.")
    summary: str | None
    truncated: bool
    tokens: TokenUse
    sources: list[SourceUse]
    profile: Literal["memcite", "codex"]
    tokenizer: str
    warnings: list[str]
    overrides: list[Override] = Field(description="Topics where a scope's entry was left out "
                                      "for another scope's (memcite profile).")
    store: Literal["v1", "v2"] = Field(
        description="The Codex memory store read (v1: memories/, v2: memories_v2/), as Codex "
                    "chooses it from [memories] version; v1 with --memory-root.")
    compacted: list[Compacted] = Field(description="Note entries compacted for the budget, "
                                       "lowest relevance first (memcite profile).")
    explain: str | None = Field(None, description="The --explain table (with --explain).")


# --------------------------------------------------------------------------- stats


class StatsTotals(Contract):
    memories: Count = Field(description="Memories the report covers (not gone from Codex).")
    archived: Count
    gone_from_codex: Count = Field(description="Missing at the last sync, kept, counted apart.")
    in_codex_table: Count
    cited: Count = Field(description="Cited under the report's rule (cited_memcite or cited_codex).")
    never_cited: Count = Field(description="Not cited under the report's rule.")
    cited_memcite: Count = Field(description="Cited at least once in memcite's citation log.")
    never_cited_memcite: Count = Field(description="Memories never cited in memcite's log.")
    cited_codex: Count = Field(description="With a usage count above 0 in Codex's table.")
    never_cited_codex: Count = Field(description="Rows of Codex's table Codex never counted a use of.")
    codex_citations: Count = Field(description="The sum of Codex's usage counts.")
    asked_to_forget: Count = Field(
        description="Memories memcite asked Codex to forget that Codex still has.")
    dead: Count
    citations: Count
    replies: Count
    replies_hashed_late: Count = Field(
        0, description="Replies recorded more than an hour after they were made (their cited "
        "lines checked against the memory folder's git history); absent when the report "
        "reads Codex's database alone.")
    unknown_ids: Count
    not_uuid_ids: Count


class DeadMemory(Contract):
    """A memory unused for longer than the limit, and why."""

    thread_id: str
    label: str = Field(description="A readable name: its slug, summary file, cwd, else '-'.")
    last_used: int
    last_used_iso: Iso
    days_unused: Count
    reason: str
    usage_count: Count = Field(description="memcite's count (0 when there is no citation log).")
    codex_usage_count: int | None = Field(description="Codex's own count.")
    asked_to_forget: bool = Field(description="memcite already asked Codex to forget it.")


class CitedMemory(Contract):
    """One of the most cited memories."""

    thread_id: str
    label: str = Field(description="A readable name: its slug, summary file, cwd, else '-'.")
    usage_count: Count = Field(description="memcite's count, from its citation log.")
    codex_usage_count: int | None = Field(description="Codex's own count.")
    last_usage: int | None
    last_usage_iso: Iso
    codex_last_usage: int | None
    codex_last_usage_iso: Iso
    last_used: int | None = Field(description="The last use under the report's rule.")
    last_used_iso: Iso


class AskedToForget(Contract):
    """A memory memcite asked Codex to forget that Codex still has (no sync saw it gone)."""

    thread_id: str
    way: Way
    requested_at: int
    requested_at_iso: Iso
    label: str | None
    note_path: str | None = Field(description="The ad-hoc note that asks it (way note).")
    codex_db: str | None = Field(description="The database its row was deleted from (way codex_db).")


class UnknownId(Contract):
    thread_id: str
    citations: Count


class NotUuidId(Contract):
    rollout_id: str
    citations: Count


class OutcomeCount(Contract):
    entries: Count
    citations: Count


class Outcomes(Contract):
    """Distinct entries and citations per outcome, worst first."""

    outside_root: OutcomeCount
    missing: OutcomeCount
    not_to_cite: OutcomeCount = Field(description="memory_summary.md cited in memory store v2, "
                                      "whose read path says never to cite it.")
    removed: OutcomeCount = Field(description="A file that was there once (Codex's git history "
                                  "or memcite's inventory has it) and is gone: Codex removed it.")
    out_of_range: OutcomeCount
    blank: OutcomeCount
    changed: OutcomeCount
    moved: OutcomeCount
    unverified: OutcomeCount
    ok: OutcomeCount


LineRange = Annotated[
    list[int],
    Field(min_length=2, max_length=2,
          description="[first line, last line] where the cited lines stand now (outcome moved)."),
]


class CheckedEntry(Contract):
    """One distinct cited entry and what it is now."""

    path: str
    line_start: int
    line_end: int
    outcome: CheckOutcome
    problem: str
    citations: Count
    moved_to: LineRange | None


class CitationChecks(Contract):
    """The logged entries checked against the memory folder as it is now."""

    memory_root: str | None
    entries: Count
    citations: Count
    broken: Count = Field(description="Citations whose entry is neither ok nor unverified.")
    outcomes: Outcomes
    worst: list[CheckedEntry]
    files_read: Count
    skipped: dict[str, str] = Field(
        description="Files of the memory folder not read (path -> why: too large, not a "
        "regular file, ...); their citations are unverified.")


class FileCitations(Contract):
    path: str
    citations: Count


class Section(Contract):
    """A heading of MEMORY.md and the citations landing in its lines."""

    title: str
    path: str = Field(description="The headings above it and its own, joined by ' > '.")
    level: int = Field(ge=1, le=6)
    line: int
    end_line: int
    citations: Count


class Week(Contract):
    week_start: str = Field(description="The Monday, YYYY-MM-DD (UTC).")
    week_start_epoch: int = Field(description="The same Monday, 00:00 UTC, in Unix seconds.")
    citations: Count


Tier = Literal["CORE", "IMP", "SEC", "IRR"]


class EntryRow(Contract):
    """One entry of MEMORY.md or of a memcite note, with its usage."""

    path: str = Field(description="The file (full path).")
    kind: Literal["codex", "note"] = Field(description="codex: Codex's MEMORY.md; note: memcite's.")
    line_start: int = Field(ge=1)
    line_end: int = Field(ge=1)
    title: str = Field(description="Its text up to the first ' — ' (at most 200 characters).")
    id: str | None
    tier: Tier | None
    citations: Count = Field(description="Cited ranges of the log that cover it.")
    last_cited: int | None
    last_cited_iso: Iso
    created_at: int | None = Field(
        description="When it counts as written: MEMORY.md's mtime; a note entry's Date: line.")
    created_at_iso: Iso
    relevance: float = Field(ge=0, description="importance x 0.95^(days since last cited, "
                             "else since created); CORE 1.0, IMP 0.7, SEC 0.4, IRR 0.1, none 0.5.")
    superseded_by: str | None = Field(description="Its first superseded_by: value.")


class EntryFile(Contract):
    path: str
    kind: Literal["codex", "note"]
    entries: Count
    citations: Count
    moved: Count = Field(description="Citations found at other lines than cited (by content).")
    unattributed: Count = Field(description="Citations whose lines are gone or cover no entry.")
    problem: str | None = Field(description="Why the file was not read.")


class ReplacedEntry(Contract):
    path: str
    line_start: int = Field(ge=1)
    title: str


class SupersessionChain(Contract):
    """A chain of superseded_by: its live head and the entries it replaces."""

    head: EntryRow | None = Field(description="The current entry; null when the chain loops.")
    loop: bool
    replaced: list[ReplacedEntry]


class TierCounts(Contract):
    CORE: Count
    IMP: Count
    SEC: Count
    IRR: Count
    none: Count


class EntriesReport(Contract):
    """Usage per entry of MEMORY.md and of memcite's notes."""

    files: list[EntryFile]
    count: Count
    tiers: TierCounts
    citations: Count = Field(description="Citations attributed to entries.")
    most_relevant: list[EntryRow]
    least_relevant: list[EntryRow]
    never_cited_count: Count
    never_cited: list[EntryRow]
    chains: list[SupersessionChain]


class StoreRead(Contract):
    """The Codex memory store a report read: the one Codex reads and counts in."""

    store: Literal["v1", "v2"] = Field(description="v1: memories/ and memories_1.sqlite; "
                                       "v2: memories_v2/ and memories_v2_1.sqlite.")
    store_from: str = Field(description="Why that store ([memories] version, or the default).")
    memory_folder: str
    dual_write: bool = Field(description="Codex also consolidates the other store.")


class FleetScopeRead(Contract):
    """The part of a fleet server a report covers (`memcite stats --db postgresql://...`)."""

    machine: str | None = Field(description="The one machine reported on (--machine); null: all.")
    project: str | None = Field(description="The project folder replies and memories keep to "
                                "(--project); null: every project.")
    machines: list[str] = Field(description="The machines whose pushes the report counts.")
    stores: dict[str, int] = Field(description="Codex homes per memory store (v1, v2), as the "
                                   "machines' last syncs read them.")


class AuditSummaryCounts(Contract):
    poisoned: Count
    secret: Count
    cross_project: Count = Field(alias="cross-project")
    directive: Count
    taint: Count


class AuditSummary(Contract):
    """The home's last `memcite audit`, as `stats` shows it (`at` null: none run yet)."""

    at: int | None = Field(description="When the last audit ran.")
    at_iso: Iso
    memories: Count | None
    high: Count | None = Field(description="Its high-severity findings.")
    counts: AuditSummaryCounts | None
    current: bool = Field(description="Nothing it read (memory folder, Codex's database) "
                          "changed since.")
    command: Literal["memcite audit"]


class StatsLastRun(Contract):
    """The counts of the last consolidation `memcite consolidation` judged."""

    judged_at: int
    judged_at_iso: Iso
    after_snapshot: int | None
    after_taken_at: int | None
    after_taken_at_iso: Iso
    findings: Count
    counts: dict[str, int] = Field(description="lost, lost_unexpected, rewritten, unsupported, "
                                   "came_back, notes_absorbed, notes_not_absorbed.")


class StatsV2(Contract):
    consolidated_threads: Count
    min_consolidated_threads: Count
    summary_valid: bool
    ready: bool = Field(description="As Codex's memory/status judges it.")


class StatsConsolidation(Contract):
    """The home's consolidations as memcite's snapshots show them (`memcite consolidation`)."""

    snapshots: Count
    last_snapshot_at: int | None
    last_snapshot_at_iso: Iso
    latest_run: StatsLastRun | None = Field(description="Null: no run judged yet.")
    runs: list[StatsLastRun] = Field(description="The runs judged, newest first (at most 20).")
    v2: StatsV2
    command: Literal["memcite consolidation"]


class StatsOutput(Contract):
    """`memcite stats --json`: the usage report of one Codex home, or of a fleet server."""

    codex_home: str | None = Field(description="The Codex home reported on (its real path).")
    store: StoreRead | None = Field(None, description="The memory store read (null: stats "
                                    "given no Codex home).")
    state_db: str | None = Field(
        description="Codex's memories_1.sqlite the usage data comes from; null when it is not "
        "there (judged without usage data).")
    other_homes: list[str] = Field(
        description="Other Codex homes memcite's database holds memories of (not counted).")
    log_scope: str | None = Field(
        description="With other homes in the database: the memory folder the citation-log "
        "parts keep to (replies recorded against it); else null.")
    source: Literal["memcite", "codex"] = Field(
        description="memcite's ledger, or Codex's memories_1.sqlite when there is no ledger.")
    citation_log: bool
    as_of: int
    as_of_iso: Iso
    rule: Rule
    max_unused_days: Count
    since: int | None
    since_iso: Iso
    memories: Count
    totals: StatsTotals
    dead_count: Count
    dead: list[DeadMemory]
    top: list[CitedMemory]
    unknown_ids: list[UnknownId]
    not_uuid_ids: list[NotUuidId]
    citation_checks: CitationChecks
    files: list[FileCitations]
    sections: list[Section]
    asked_to_forget: list[AskedToForget] = Field(
        description="Memories asked to forget that Codex still has, oldest request first.")
    weeks: list[Week] | None = Field(
        None, description="Citations per week, every week (absent when the report reads "
        "Codex's database alone).")
    entries: EntriesReport | None = Field(
        None, description="Usage per entry of MEMORY.md and memcite's notes (lists cut at "
        "--limit).")
    fleet: FleetScopeRead | None = Field(
        None, description="Present only in a report over a fleet server: what it covers.")
    audit: AuditSummary | None = Field(
        None, description="The Codex home's last `memcite audit` (absent over a fleet server).")
    consolidation: StatsConsolidation | None = Field(
        None, description="The last consolidation's counts and memory store v2's readiness "
        "(absent over a fleet server).")


# --------------------------------------------------------------------------- prune, restore, archived, select


class SettingSources(Contract):
    """Where each setting came from."""

    max_unused_days: Literal["cli", "memcite", "codex", "default"]
    max_raw_memories_for_consolidation: Literal["cli", "memcite", "codex", "default"]


class Settings(Contract):
    """The retention settings in force."""

    max_unused_days: Count
    max_raw_memories_for_consolidation: int = Field(ge=1)
    sources: SettingSources


class PruneCandidate(Contract):
    thread_id: str
    label: str = Field(description="A readable name: its slug, summary file, cwd, else '-'.")
    last_used: int
    last_used_iso: Iso
    reason: str | None


class AskedMemory(Contract):
    """A memory `prune --apply` asked Codex to forget."""

    thread_id: str
    last_used: int
    last_used_iso: Iso
    reason: str | None
    label: str
    summary_file: str | None = Field(description="Its rollout summary, in rollout_summaries/.")
    cwd: str | None


class DroppedMemory(Contract):
    """A candidate `prune --apply` did not ask for, and why."""

    thread_id: str
    why: str
    label: str | None = Field(None, description="With --in-codex-db, when Codex's table refused it.")


class SettledRequest(Contract):
    """A request an earlier, interrupted prune left pending, settled from what is there."""

    id: int
    batch: str
    thread_id: str
    way: Way
    state: Literal["done", "rolled_back"]


class ForgetResult(Contract):
    """What `prune --apply` did."""

    way: Way
    batch: str = Field(description="The id of this run's requests (`restore --batch`).")
    codex_home: str
    note_path: str | None = Field(description="The ad-hoc note written (way note, when any asked).")
    codex_db: str | None = Field(description="Codex's database rows were deleted from (way codex_db).")
    asked: list[AskedMemory]
    dropped: list[DroppedMemory]
    settled: list[SettledRequest]
    codex_still_sees: str


class TieredEntry(EntryRow):
    """An entry with a tier and what `prune --rule tiered` says of it."""

    action: Literal["keep", "review", "prune"]
    reason: str
    days_unused: int | None = Field(description="Days since last cited, else since written.")


class DroppedEntry(TieredEntry):
    why: str = Field(description="Why it was not asked again (an open request already asks).")


class SettledEntryRequest(Contract):
    batch: str
    note_path: str
    state: Literal["done", "rolled_back"]


class EntryRequest(Contract):
    """What `prune --rule tiered --apply` asked of Codex for MEMORY.md (one ad-hoc note)."""

    batch: str
    note_path: str | None = Field(description="The ad-hoc note written; null: nothing new asked.")
    asked: list[TieredEntry]
    dropped: list[DroppedEntry]
    settled: list[SettledEntryRequest]


class ArchivedNoteEntry(TieredEntry):
    archived: str = Field(description="The archive file (`memcite note restore` takes its name).")


class SkippedNoteEntry(TieredEntry):
    why: str


class NoteEntriesResult(Contract):
    archived: list[ArchivedNoteEntry]
    skipped: list[SkippedNoteEntry]


class TieredResult(Contract):
    codex: EntryRequest | None = Field(description="null: no MEMORY.md entry to act on.")
    notes: NoteEntriesResult


class TierWindowsOut(Contract):
    CORE: int | None = Field(description="Days unused before review; null: never.")
    IMP: int | None
    SEC: int | None = Field(description="Days unused before it is pruned; null: never.")
    IRR: int | None


class PruneOutput(Contract):
    """`memcite prune --json`: the preview, or with `--apply` what asking Codex to forget did."""

    codex_home: str
    state_db: str = Field(description="Codex's database of the store read (memories_1.sqlite, "
                          "or memories_v2_1.sqlite): its table of memories.")
    store: StoreRead
    rule: Literal["memcite", "codex", "tiered"]
    as_of: int
    as_of_iso: Iso
    max_unused_days: Count
    settings: Settings
    applied: bool
    way: Way | None = Field(
        description="note (an ad-hoc note) or codex_db (rows deleted, --in-codex-db); "
        "null for a preview.")
    prune: list[PruneCandidate]
    result: ForgetResult | None = Field(description="null for a preview.")
    codex_still_sees: str = Field(description="What Codex still has after this run, in words.")
    gone_from_codex: Count = Field(description="Not offered: already gone from Codex.")
    not_in_codex_table: Count = Field(description="Not judged by --rule codex: only in the folder.")
    tiers: TierWindowsOut | None = Field(None, description="--rule tiered: the windows in force.")
    entries: list[TieredEntry] | None = Field(
        None, description="--rule tiered: every entry with a tier and its verdict, file order.")
    untiered: Count | None = Field(None, description="--rule tiered: entries without a tier.")
    entry_result: TieredResult | None = Field(
        None, description="--rule tiered --apply: what was asked of Codex and archived.")


class Undone(Contract):
    """What restoring did for one request to forget."""

    thread_id: str
    way: Way
    done: bool = Field(description="False: nothing to undo (see what).")
    what: str
    label: str | None
    request_id: int | None


class Moved(Contract):
    """A summary file an earlier memcite archived, and what restoring it did."""

    thread_id: str
    action: Literal["restore"]
    done: bool = Field(description="False: the file was lost (the mark is cleared).")
    file_from: str | None
    file_to: str | None
    problem: str | None
    codex_home: str | None = Field(description="Always null for a restore.")


class RestoreOutput(Contract):
    """`memcite restore --json`."""

    restored: list[Undone] = Field(description="Requests to forget withdrawn or undone.")
    legacy_archive: list[Moved] = Field(
        description="Summary files an earlier memcite archived, moved back.")
    not_found: list[str] = Field(
        description="Thread ids given with no request to forget and nothing archived.")


class ForgetRequest(Contract):
    """One request to forget, as memcite journals it."""

    id: int
    batch: str
    thread_id: str
    codex_home: str
    way: Way
    state: Literal["pending", "done", "forgotten", "withdrawn", "restored", "rolled_back"] = Field(
        description="done: asked, Codex still has it; forgotten: a sync found it gone; "
        "withdrawn / restored: undone; rolled_back: never happened; pending: being made.")
    requested_at: int
    requested_at_iso: Iso
    completed_at: int | None
    completed_at_iso: Iso
    rule: Rule | Literal["poisoned"] | None = Field(
        description="The rule that chose it; poisoned: memcite's quarantine (after an audit).")
    reason: str | None
    label: str | None
    summary_file: str | None
    note_path: str | None = Field(description="The ad-hoc note (way note).")
    codex_db: str | None = Field(description="The database rows were deleted from (way codex_db).")
    seen_gone_at: int | None = Field(description="When a sync found the memory gone from Codex.")
    seen_gone_at_iso: Iso
    undone_at: int | None = Field(description="When `memcite restore` undid it.")
    undone_at_iso: Iso
    undo_note_path: str | None = Field(description="The withdrawal note (way note).")
    problem: str | None
    consolidation: RequestOutcome | None = Field(
        description="Whether Codex did what was asked, by what it records (defined with "
        "`memcite consolidation`'s models); null for a request that asks nothing now.")


class LegacyArchived(Contract):
    """A summary file an earlier memcite's `prune --apply` moved out (archive_log)."""

    id: int
    action: Literal["archive"]
    thread_id: str
    at: int = Field(description="When it was archived.")
    at_iso: Iso = None  # until `at` is one of the time keys
    rule: Rule | None
    reason: str | None
    last_used: int | None
    last_used_iso: Iso
    file_from: str | None
    file_to: str | None
    problem: str | None


class ArchivedOutput(Contract):
    """`memcite archived --json`: the requests to forget and older archivings, newest first."""

    codex_home: str | None = Field(description="The Codex home listed; null with --all-homes.")
    requests: list[ForgetRequest]
    legacy_archive: list[LegacyArchived]


class SelectedMemory(Contract):
    thread_id: str
    label: str = Field(description="A readable name: its slug, summary file, cwd, else '-'.")
    usage_count: int | None = Field(description="Codex's usage count.")
    last_usage: int | None = Field(description="Codex's last usage.")
    last_usage_iso: Iso
    source_updated_at: int | None
    source_updated_at_iso: Iso


class SelectOutput(Contract):
    """`memcite select --json`: Codex's next consolidation, sorted by thread id."""

    codex_home: str = Field(description="The Codex home (its real path).")
    source: str = Field(description="The database read.")
    as_of: int
    as_of_iso: Iso
    settings: Settings
    selected: list[SelectedMemory]


# --------------------------------------------------------------------------- show


class MemoryTimes(Contract):
    source_updated_at: int | None = Field(description="When Codex last updated the thread.")
    source_updated_at_iso: Iso
    generated_at: int | None = Field(description="When Codex extracted the memory.")
    generated_at_iso: Iso
    first_synced_at: int | None
    first_synced_at_iso: Iso
    missing_since: int | None = Field(description="Gone from Codex since (a sync missed it).")
    missing_since_iso: Iso
    archived_at: int | None = Field(description="Archived by an earlier memcite.")
    archived_at_iso: Iso


class MemciteCount(Contract):
    usage_count: Count = Field(description="memcite's count, from its citation log.")
    last_usage: int | None
    last_usage_iso: Iso


class CodexCount(Contract):
    usage_count: int | None = Field(description="Codex's own count (null: not in its table).")
    last_usage: int | None
    last_usage_iso: Iso


class MemoryCounts(Contract):
    memcite: MemciteCount
    codex: CodexCount


class MemoryRequest(Contract):
    """A request to forget this memory, newest first."""

    way: Way
    state: Literal["pending", "done", "forgotten", "withdrawn", "restored", "rolled_back"]
    requested_at: int
    requested_at_iso: Iso
    note_path: str | None


class ShownEntry(Contract):
    """One entry a citation cited, checked against the memory folder now."""

    path: str
    line_start: int
    line_end: int
    outcome: CheckOutcome
    moved_to: LineRange | None
    basis: str = Field(description="What the check compared against, in words.")


class ShownCitation(Contract):
    """One reply citing the memory, newest first."""

    reply_id: int
    replied_at: int
    replied_at_iso: Iso
    recorded_at: int = Field(description="When memcite recorded it (its cited lines hashed).")
    recorded_at_iso: Iso = None  # until `recorded_at` is one of the time keys
    origin: str | None = Field(description="record, or ingest:<file>.")
    hashed_seconds_after_reply: int
    entries: list[ShownEntry]


class ShowOutput(Contract):
    """`memcite show ID --json`: everything memcite knows of one memory."""

    thread_id: str
    label: str = Field(description="A readable name: its slug, summary file, cwd, else '-'.")
    cwd: str | None
    git_branch: str | None
    codex_home: str | None
    rollout_summary_file: str | None
    rollout_path: str | None
    source: Literal["stage1_outputs", "raw_memories", "rollout_summary"] = Field(
        description="Where the last sync found it.")
    times: MemoryTimes
    counts: MemoryCounts
    status: str = Field(description="Whether Codex still has it, in words.")
    forget_requests: list[MemoryRequest]
    citation_count: Count = Field(description="Counted citations in memcite's log.")
    citations: list[ShownCitation] = Field(description="The latest (--limit), newest first.")
    memory_root: str | None = Field(description="The memory folder the entries were checked in.")
    summary_lines: list[str] = Field(description="The first lines of its rollout summary.")
    summary_problem: str | None = Field(description="Why there are no summary lines.")


# --------------------------------------------------------------------------- sync, ingest, rebuild


class SyncCounts(Contract):
    """This home's memories after the sync (not gone, not archived)."""

    memories: Count
    cited_codex: Count = Field(description="With a usage count above 0 in Codex's table.")
    codex_citations: Count = Field(description="The sum of Codex's usage counts.")
    cited_memcite: Count = Field(description="Cited at least once in memcite's log.")


class SyncOutput(Contract):
    """`memcite sync --json`."""

    codex_home: str
    sync_id: int
    stage1_rows: Count
    folder_threads: Count
    inserted: Count
    updated: Count = Field(description="Rows this sync changed, not counting new ones.")
    unchanged: Count = Field(description="Rows seen again as they were: not written.")
    gone_asked: Count = Field(description="Of marked_missing: memories memcite had asked Codex "
                              "to forget (the request is settled).")
    gone_by_codex: Count = Field(description="Of marked_missing: memories Codex removed by "
                                 "itself (its start-up pruning of unused rows, or consolidation).")
    marked_missing: Count
    invalid_ids: Count
    stage1_found: bool
    folder_found: bool
    raw_sections: Count
    summary_headers: Count
    skipped: list[str] = Field(description="Memory files not read (a link leading out, ...), and why.")
    state_db: str = Field(description="Where the store's database (memories_1.sqlite, or "
                          "memories_v2_1.sqlite) was looked for.")
    sqlite_home_from: Literal["sqlite_home in config.toml", "CODEX_SQLITE_HOME", "CODEX_HOME"] = \
        Field(description="Why there: Codex's SQLite home, as Codex chooses it.")
    usage_data: bool = Field(
        description="False: Codex's table was not found, so no memory's usage is known.")
    forget_requests_seen_gone: Count = Field(
        description="Requests to forget whose memory this sync found gone from Codex.")
    counts: SyncCounts
    warnings: list[str] = Field(description="What the user must be told (also on stderr).")
    store: Literal["v1", "v2"] = Field(
        description="The memory store read: the one Codex reads and counts in.")
    store_from: str = Field(description="Why that store ([memories] version, or the default).")
    memory_folder: str = Field(description="The store's memory folder.")
    dual_write: bool = Field(
        description="Codex also consolidates the other store (it still reads only this one).")


class IngestOutput(Contract):
    """One line of `memcite ingest --json`: what ingesting one rollout file recorded."""

    path: str
    session_id: str | None
    replies: Count
    recorded: Count
    duplicates: Count
    rejected: Count
    counted: Count
    unknown_ids: list[str]
    not_uuid_ids: list[str]
    bad_lines: list[int] = Field(description="The first lines that are not JSON.")
    bad_line_count: Count
    long_lines: list[int] = Field(description="The first reply lines over --max-bytes (skipped).")
    long_line_count: Count
    parent_ids: list[str] = Field(
        description="Later session_meta ids in the file: the parents a fork copied (the "
        "file's own thread is the first).")
    pending: Count = Field(0, description="Replies known only from an item_completed line "
                           "whose turn had not ended: left for a later read.")
    rekeyed: Count = Field(0, description="Recorded replies moved to the keys of the lines "
                           "they are on now (the file was rewritten, e.g. migrate-rollouts).")
    set_aside: Count = Field(0, description="Recorded replies a rewritten file no longer "
                             "holds (kept, under a key no new line can take).")
    # Only when a whole Codex home is ingested (`memcite ingest` with no files):
    status: Literal["read", "unchanged"] | None = None
    from_offset: int | None = Field(None, description="The byte the read started at.")
    to_offset: int | None = Field(None, description="The byte the read stopped at.")
    size: int | None = None
    reread: bool | None = Field(None, description="The file shrank or changed: read from the start.")
    caught_up: bool | None = Field(None, description="False: a byte budget stopped the read early.")


class UsageDifference(Contract):
    thread_id: str
    usage_count: int
    last_usage: int | None
    last_usage_iso: Iso
    logged_usage_count: Count
    logged_last_usage: int | None
    logged_last_usage_iso: Iso


class CounterDifference(Contract):
    counter: str = Field(description="The counter stats reads (table.column, or table.key).")
    stored: int | None = Field(description="What the counter held.")
    counted: int = Field(description="What the tables it counts say.")


class RebuildOutput(Contract):
    """`memcite rebuild --json`."""

    memories: Count
    differences: list[UsageDifference]
    applied: bool
    counters: list[CounterDifference] = Field(
        description="Counters kept for stats that differed from a fresh count (rebuilt unless"
                    " --check).")


# --------------------------------------------------------------------------- lint


class LintFinding(Contract):
    code: str = Field(description="A stable finding code (docs/commands-lint.md lists them).")
    severity: Literal["error", "warning"]
    path: str
    line: int
    column: int
    message: str
    hint: str


class LintOutput(Contract):
    """`memcite lint --json`: the findings of one run."""

    checked_at: int = Field(description="When the check ran, Unix seconds.")
    checked_at_iso: str | None
    paths: list[str]
    files: Count
    errors: Count
    warnings: Count
    findings: list[LintFinding]


# --------------------------------------------------------------------------- doctor


class DoctorCheck(Contract):
    name: str = Field(description="A stable name of the check (memories-db, stop-hook, ...).")
    status: Literal["ok", "warning", "failure"]
    message: str
    fix: str | None = Field(description="The command or setting that fixes it.")


class DoctorOutput(Contract):
    """`memcite doctor --json`: one entry per check."""

    checked_at: int = Field(description="When the checks ran, Unix seconds.")
    checked_at_iso: str | None
    codex_home: str | None
    db: str | None
    log: str | None
    ok: Count
    warnings: Count
    failures: Count
    checks: list[DoctorCheck]


# --------------------------------------------------------------------------- schema


class SchemaName(Contract):
    name: str = Field(description="What to pass to `memcite schema NAME`.")
    description: str


class SchemaList(Contract):
    """`memcite schema --json`: the schemas memcite ships."""

    schemas: list[SchemaName]


OUTPUT_MODELS: dict[str, type[BaseModel]] = {
    "parse": ParseOutput,
    "record": RecordOutput,
    "record-jsonl": RecordedReply,
    "instructions": InstructionsOutput,
    "stats": StatsOutput,
    "prune": PruneOutput,
    "restore": RestoreOutput,
    "archived": ArchivedOutput,
    "select": SelectOutput,
    "show": ShowOutput,
    "sync": SyncOutput,
    "ingest": IngestOutput,
    "rebuild": RebuildOutput,
    "lint": LintOutput,
    "doctor": DoctorOutput,
    "schema": SchemaList,
}


# --------------------------------------------------------------------------- thread
# `memcite thread` (memcite.codex.thread, memcite.codex.memory_cost): one block, appended.

CitationBasis = Literal["recorded", "history", "none"]


class ThreadCurrentSummary(Contract):
    """The summary Codex would inject now (`memcite instructions --profile codex`)."""

    summary_sha256: str | None = Field(description="SHA-256 of the summary; null: none now.")
    summary_tokens: Count
    truncated: bool
    store: Literal["v1", "v2"] = Field(description="The store Codex reads now.")
    memory_folder: str


class ThreadMemoryMessage(Contract):
    """The memory message found in the thread's developer messages."""

    injected: bool
    messages: Count = Field(description="Memory messages in the session file (more than one "
                            "after a compaction).")
    store: Literal["v1", "v2"] | None = Field(description="The store the first one came from.")
    tokens: Count = Field(description="Its size by Codex's 4-bytes rule.")
    summary_tokens: Count
    truncated: bool = Field(description="Whether Codex cut the summary (its marker is there).")
    truncated_tokens: Count | None = Field(description="How many tokens the cut took out.")
    spans: Count = Field(description="The input_text spans it came in.")
    summary_sha256: str | None
    current: ThreadCurrentSummary
    matches_current: bool | None = Field(description="The summary is the one Codex would "
                                         "inject now, from the same store; null: none injected.")


class ThreadEligibility(Contract):
    """Whether the thread could get memory, by config.toml as it is now."""

    could_get_memory: bool
    feature: bool = Field(description="[features] memories = true.")
    use_memories: bool = Field(description="[memories] use_memories is not false.")
    store: Literal["v1", "v2"]
    store_from: str
    subagent: bool
    ephemeral: bool = Field(description="Always false: an ephemeral thread leaves no file.")


class ThreadGeneration(Contract):
    """Whether Codex makes a memory from the thread."""

    memory_mode: str | None = Field(description="enabled, disabled or polluted (Codex's "
                                    "threads table); null: unknown.")
    memory_mode_from: str | None = Field(description="state_N.sqlite or session_meta.")
    source: str = Field(description="cli, exec, vscode, subagent, custom:NAME, ...")
    interactive: bool = Field(description="A source Codex extracts memories from.")
    will_generate: bool | None
    explanation: str
    memory_exists: bool | None = Field(description="A stage1_outputs row of this thread.")
    stage1_job: str | None = Field(description="Its memory_stage1 job's status, if any.")


class ThreadCitedMemory(Contract):
    thread_id: str
    replies: Count
    in_codex: bool | None = Field(description="A row in Codex's stage1_outputs; null: no "
                                  "database.")


class ThreadCitedEntry(Contract):
    path: str
    line_start: int
    line_end: int
    citations: Count
    outcome: CheckOutcome = Field(description="The worst outcome of its citations.")
    basis: CitationBasis = Field(description="Checked against the hash memcite recorded, the "
                                 "memory folder's git history at the reply's time, or none.")


class ThreadCitations(Contract):
    replies: Count
    cited_replies: Count
    memory_folder: str
    threads: list[ThreadCitedMemory]
    entries: list[ThreadCitedEntry]


class ThreadReport(Contract):
    """`memcite thread ID --json` (or `--last`): what Codex's memory did in one thread."""

    thread_id: str | None
    session_file: str
    archived: bool
    created_at: int | None = Field(description="When the thread started, Unix seconds.")
    created_at_iso: Iso
    cwd: str | None
    source: str
    parent_thread_id: str | None
    cli_version: str | None
    memory: ThreadMemoryMessage
    eligibility: ThreadEligibility
    generation: ThreadGeneration
    citations: ThreadCitations
    reason: str | None = Field(description="Why memory was not used; null when it was.")
    setting: str | None = Field(description="The setting that changes it, if one does.")
    checked_at: int
    checked_at_iso: Iso
    warnings: list[str]


class CostSums(Contract):
    threads: Count
    threads_with_memory: Count
    injections: Count
    tokens: Count = Field(description="Memory message tokens added to contexts (4-bytes rule).")
    requests: Count = Field(description="Model responses (token_count events).")
    resent_tokens: Count = Field(description="Per request, the memory message then in the "
                                 "context: an upper bound on its input tokens.")


class CostDay(CostSums):
    day: str = Field(description="YYYY-MM-DD (UTC), or unknown.")


class CostProject(CostSums):
    cwd: str | None


class CostJobKind(Contract):
    kind: str
    status: str
    rows: Count


class CostJobs(Contract):
    store: Literal["v1", "v2"]
    db: str
    found: bool
    rows: Count
    by_kind: list[CostJobKind]
    error: str | None


class CostFiles(Contract):
    read: Count
    skipped_old: Count
    partial: Count
    unreadable: Count
    long_lines: Count
    bad_lines: Count
    problems: list[str]


class MemoryCostReport(Contract):
    """`memcite thread --cost --json`: what Codex's memory cost across the home's threads."""

    codex_home: str
    as_of: int
    as_of_iso: Iso
    since: int | None
    since_iso: Iso
    tokenizer: Literal["approx"]
    totals: CostSums
    by_day: list[CostDay]
    by_project: list[CostProject]
    jobs: list[CostJobs]
    files: CostFiles


class ThreadOutput(RootModel[ThreadReport | MemoryCostReport]):
    """`memcite thread --json`: one thread's report, or with `--cost` what memory cost."""


OUTPUT_MODELS["thread"] = ThreadOutput


# --------------------------------------------------------------------------- consolidation
# `memcite consolidation` (memcite.codex.consolidation), and the outcome of a request to
# forget in `memcite archived`: one block, appended.

StoreName = Literal["v1", "v2"]


class ConsolidationJob(Contract):
    """Phase 2 as its `jobs` row (kind memory_consolidate_global) tells it."""

    present: bool = Field(description="Whether Codex has a row for it.")
    state: str = Field(description="never, pending (new input queued), running, stuck (running "
                       "with its lease ended), failed, succeeded.")
    status: str | None = Field(description="Codex's status: pending, running, done, error.")
    started: int | None
    started_iso: Iso
    finished: int | None
    finished_iso: Iso
    lease_until: int | None
    lease_until_iso: Iso
    retry_after: int | None = Field(description="Codex's retry_at: no retry before it.")
    retry_after_iso: Iso
    retries_left: int | None = Field(description="Codex's retry_remaining.")
    error: str | None = Field(description="Codex's last_error, a short code (failed_agent...).")
    error_meaning: str | None = Field(description="What the code means, when memcite knows it.")
    worker: str | None = Field(description="The session (thread id) that ran it.")
    input_watermark: int | None
    success_watermark: int | None = Field(description="Codex's last_success_watermark.")
    succeeded: int | None = Field(description="The last success, when recorded.")
    succeeded_iso: Iso
    succeeded_from: Literal["job", "baseline"] | None = Field(
        description="job: the row's last run; baseline: the memory folder's git baseline, "
        "made again after each success.")
    next_run: int | None = Field(description="When Codex takes the job again at the earliest "
                                 "(at a session start).")
    next_run_iso: Iso
    next_run_why: str
    backoff: bool = Field(description="A back-off after a failure is in force.")
    cooldown: bool = Field(description="Within six hours of a success (Codex waits).")
    error_detail: str | None = Field(description="For a failure: that Codex records no more, "
                                     "and where more may be.")


class ExtractionFailure(Contract):
    thread_id: str
    error: str | None
    finished: int | None
    finished_iso: Iso
    retry_after: int | None
    retry_after_iso: Iso
    retries_left: int | None


class Extraction(Contract):
    """Phase 1: the `jobs` rows of kind memory_stage1, one per thread."""

    jobs: Count
    by_status: dict[str, int]
    succeeded: int | None = Field(description="The latest success.")
    succeeded_iso: Iso
    failed: Count
    backing_off: Count
    retries_spent: Count
    stuck: Count
    failures: list[ExtractionFailure] = Field(description="Newest first, at most 20.")
    stuck_threads: list[str]


class ConsolidationInputs(Contract):
    """What the next consolidation would take against what the last one took."""

    rows: Count = Field(description="Rows of stage1_outputs.")
    known: bool = Field(description="False when the table lacks the selection columns.")
    selected: Count | None = Field(description="Taken by the last consolidation.")
    next: Count | None = Field(description="The next one would take.")
    new: Count | None
    changed: Count | None = Field(description="Taken, and changed since.")
    dropped: Count | None = Field(description="Taken then, not now.")
    not_enabled: Count | None = Field(description="Skipped: the thread's memory_mode is not "
                                      "enabled.")
    threads_known: bool = Field(description="Codex's threads table was read (memory_mode).")
    new_threads: list[str]
    changed_threads: list[str]
    dropped_threads: list[str]


class ConsolidationBaseline(Contract):
    present: bool
    commit: str | None
    committed: int | None
    committed_iso: Iso
    problem: str | None


class ConsolidationWorkspaceDiff(Contract):
    present: bool = Field(description="phase2_workspace_diff.md is there: a run has not "
                          "succeeded since it was written.")
    written: int | None
    written_iso: Iso
    paths: Count


class AdHocNote(Contract):
    name: str
    path: str
    by_memcite: bool
    valid_name: bool = Field(description="Named by Codex's rule for ad-hoc notes.")
    seen_by: Literal["baseline", "workspace_diff"] | None = Field(
        description="baseline: the last successful consolidation took it in; workspace_diff: "
        "a run that has not succeeded listed it; null: not seen yet.")
    seen: int | None
    seen_iso: Iso
    changed_since_seen: bool


class ConsolidationProblem(Contract):
    kind: Literal["failed", "stuck", "extraction", "stale"]
    store: StoreName
    message: str = Field(description="What was found, in one sentence.")
    detail: str | None = Field(description="More: for a failure, that Codex records no more "
                               "than its code, and where more may be.")
    fix: str | None


class ConsolidationStore(Contract):
    store: StoreName
    read_by_codex: bool
    consolidated_by_codex: bool
    memory_folder: str
    db: str
    db_present: bool
    folder_present: bool
    consolidation: ConsolidationJob
    extraction: Extraction
    inputs: ConsolidationInputs | None
    baseline: ConsolidationBaseline
    workspace_diff: ConsolidationWorkspaceDiff
    notes: list[AdHocNote]
    problems: list[ConsolidationProblem]


class ConsolidationSettings(Contract):
    max_unused_days: Count
    max_raw_memories_for_consolidation: Count


class RunLost(Contract):
    """A cited line whose words are gone from every file the next session can read."""

    file: str
    line: int = Field(description="Its line number before the run.")
    text: str
    threads: list[str] = Field(description="The memories (thread ids) it belongs to.")
    last_cited: int
    last_cited_iso: Iso
    why: Literal["forget", "retention", "unexpected"] = Field(
        description="forget: a forget request asked to drop one of its memories; retention: "
        "Codex's retention removed its memories' rollout summaries; unexpected: neither.")
    expected: bool


class RunRewritten(Contract):
    """A cited line whose facts (number, path, command, name, version) changed."""

    file: str
    line: int
    text: str
    now_file: str
    now_line: int
    now_text: str
    facts_gone: list[str] = Field(description="`kind:value`, kind one of command, path, "
                                  "version, number, name.")
    facts_new: list[str]
    threads: list[str]
    last_cited: int
    last_cited_iso: Iso


class RunUnsupported(Contract):
    """A new line with facts found in no source the run had."""

    file: str
    line: int
    text: str
    facts: list[str]


class RunCameBack(Contract):
    """A line of a memory memcite asked Codex to forget, put back by the run."""

    file: str
    line: int
    text: str
    thread: str
    asked_at: int
    asked_at_iso: Iso


class RunPlace(Contract):
    file: str
    line: int


class RunNote(Contract):
    """The receipt for one ad-hoc note new to the run."""

    note: str
    by_memcite: bool
    kind: Literal["note", "forget"]
    absorbed: bool = Field(description="note: some new line carries it; forget (memcite's): "
                           "no line of the memories it names is left.")
    threads: list[str]
    lines: list[RunPlace] = Field(description="note: the lines carrying it; forget: the lines "
                                  "still naming its memories.")


class RunSize(Contract):
    lines: Count
    task_groups: Count
    bytes: Count
    summary_tokens: Count = Field(description="Codex's 4-bytes rule, after trimming.")
    budget_tokens: Count
    summary_fits: bool = Field(description="False: the read path cuts the summary.")


class RunGrowth(Contract):
    before: RunSize
    after: RunSize
    lines: int
    bytes: int
    task_groups: int
    summary_cut: bool
    summary_newly_cut: bool


class RunJobs(Contract):
    """Codex's job health when the run's after-snapshot was taken."""

    known: bool
    consolidation: str | None
    error: str | None
    retries_left: int | None
    succeeded: Count
    failed: Count
    retrying: Count
    dead: Count = Field(description="Extraction jobs failed with no retries left.")
    dead_by_error: dict[str, int]


class RunCounts(Contract):
    lost: Count
    lost_unexpected: Count
    rewritten: Count
    unsupported: Count
    came_back: Count
    notes_absorbed: Count
    notes_not_absorbed: Count


class ConsolidationRun(Contract):
    """What one consolidation did, from two of memcite's snapshots."""

    before_snapshot: int | None
    after_snapshot: int | None
    before_taken_at: int | None
    before_taken_at_iso: Iso
    after_taken_at: int | None
    after_taken_at_iso: Iso
    from_baseline: bool = Field(description="The run starts at the folder's first snapshot.")
    findings: Count = Field(description="Unexpected losses, rewrites, unsupported lines, lines "
                            "come back, notes not absorbed, a summary newly cut.")
    counts: RunCounts
    lost: list[RunLost]
    rewritten: list[RunRewritten]
    unsupported: list[RunUnsupported]
    came_back: list[RunCameBack]
    notes: list[RunNote]
    growth: RunGrowth
    jobs: RunJobs


class StoreRuns(Contract):
    """memcite's snapshots of one store's folder and the runs they show."""

    store: StoreName
    folder: str
    snapshots: Count
    snapshot_taken: bool = Field(description="This look kept a new snapshot.")
    baseline_at: int | None = Field(description="memcite's first snapshot: history starts there.")
    baseline_at_iso: Iso
    history_note: str | None
    problem: str | None
    growth_now: RunSize | None
    runs: list[ConsolidationRun] = Field(description="Newest first: the last run, or every "
                                         "run with --history.")


class V2Readiness(Contract):
    """Memory store v2's readiness, as Codex's app server `memory/status` judges it."""

    db: str
    db_present: bool
    consolidated_threads: Count = Field(description="Distinct threads consolidated into v2.")
    min_consolidated_threads: Count
    summary: str
    summary_valid: bool
    summary_state: str
    ready: bool
    problem: str | None


SwitchScope = Literal["this_branch", "this_project", "other_branch", "other_project", "unknown"]


class SwitchSide(Contract):
    """What one memory store's folder injects into every session (Codex's read path)."""

    store: StoreName
    folder: str
    present: bool
    injects: bool = Field(description="Codex injects its summary (there, readable, not blank).")
    tokens: Count = Field(description="Tokens of the summary injected (Codex's 4-bytes rule).")
    truncated: bool
    omitted_tokens: Count
    rollout_summaries: Count
    problem: str | None


class SwitchMemory(Contract):
    """One v2 memory (a thread) and the project and branch it belongs to."""

    thread_id: str
    rollout_summary: str | None
    cwd: str | None
    git_branch: str | None
    git_origin_url: str | None
    from_: Literal["threads", "rollout_summary"] | None = Field(
        alias="from", description="Where its cwd and branch come from: Codex's threads table "
        "or the rollout summary's header.")
    scope: SwitchScope
    injected: bool = Field(description="The injected v2 summary routes to it.")


class SwitchLine(Contract):
    """A line of v1 that no v2 file carries (neither its words nor the memories it names)."""

    file: Literal["memory_summary.md", "MEMORY.md"]
    line: int = Field(ge=1)
    text: str
    task_group: str | None
    threads: list[str]
    injected: bool = Field(description="A summary line v1 injects today.")


class SwitchGroup(Contract):
    """A task group of v1's MEMORY.md with lines no v2 file carries."""

    title: str
    line: int = Field(ge=1)
    threads: list[str]
    lines: Count


class SwitchOnlyCounts(Contract):
    lines: Count
    summary_lines: Count
    injected_lines: Count
    memory_lines: Count
    task_groups: Count


class SwitchScopeCounts(Contract):
    this_branch: Count
    this_project: Count
    other_branch: Count
    other_project: Count
    unknown: Count


class V2Switch(Contract):
    """What switching the working directory's project from store v1 to v2 would change."""

    cwd: str
    project_root: str = Field(description="The git work tree of cwd (cwd itself outside git).")
    git_branch: str | None
    git_origin_url: str | None
    store_read: StoreName
    v1: SwitchSide
    v2: SwitchSide
    v2_memories: list[SwitchMemory] = Field(description="At most 50, this branch's first.")
    v2_counts: SwitchScopeCounts
    v2_injected_counts: SwitchScopeCounts = Field(description="Those the injected v2 summary "
                                                  "routes to.")
    v1_only: list[SwitchLine] = Field(description="At most 50 (the counts are whole).")
    v1_only_counts: SwitchOnlyCounts
    v1_only_task_groups: list[SwitchGroup]


class ConsolidationOutput(Contract):
    """`memcite consolidation --json`: Codex's memory consolidation, store by store."""

    codex_home: str
    sqlite_home: str
    checked_at: int
    checked_at_iso: Iso
    store: StoreName = Field(description="The store Codex reads.")
    store_from: str
    dual_write: bool
    stale_hours: int
    stale_hours_from: str
    settings: ConsolidationSettings
    ok: bool = Field(description="No warning (exit 0).")
    problems: list[ConsolidationProblem]
    stores: list[ConsolidationStore]
    history: bool = Field(description="--history: every run, not only the last.")
    memory_runs: list[StoreRuns] = Field(description="What consolidations did to the memories "
                                         "in use, store by store.")
    v2_readiness: V2Readiness | None
    v2_switch: V2Switch | None = Field(description="Only when there is a v2 store (its folder, "
                                       "or v2 configured).")
    run_now: str = Field(description="How Codex comes to run one (memcite never does).")


class RequestOutcome(Contract):
    """Whether what a request to forget asked is done, by what Codex records."""

    store: StoreName | None
    outcome: Literal["asked", "seen", "not_done", "done", "unknown"]
    text: str
    seen_by: Literal["baseline", "workspace_diff", "consolidation"] | None
    seen: int | None
    seen_iso: Iso
    consolidations_since: Count = Field(description="Successful consolidations Codex records "
                                        "since the request: it keeps only its last run.")
    row_in_codex: bool | None
    summary_left: bool | None


OUTPUT_MODELS["consolidation"] = ConsolidationOutput


# --------------------------------------------------------------------------- note export and import
# `memcite note` sub-commands have no entry in SCHEMAS (no note command has); these models are
# the shapes the tests hold the export lines and `note import --json` to.


class NoteExportHeader(Contract):
    """The first line of `memcite note export`: the format and its version."""

    kind: Literal["header"]
    format: Literal["memcite-notes"]
    version: int = Field(ge=1)
    memcite: str
    exported_at: int
    exported_at_iso: Iso
    scope: Literal["project", "global", "session"]
    owner: str = Field(description="The project's canonical path, global, or the session id.")
    entries: Count
    events: Count


class NoteExportEntry(Contract):
    """One note entry of an export, as the note stores it."""

    kind: Literal["entry"]
    scope: Literal["project", "global", "session"]
    owner: str
    id: str | None
    section: Literal["decisions", "state", "risks"] | None
    text: str
    body: list[str] = Field(description="Its indented lines as stored: provenance and others.")
    fields: dict[str, str] = Field(description="The provenance lines by name.")


class NoteExportEvent(Contract):
    """One event of an export: its id, and the event as the log stores it."""

    kind: Literal["event"]
    scope: Literal["project", "global", "session"]
    owner: str
    id: str
    event: dict


class NoteImportLine(Contract):
    """What importing one line did (or, for a dry run, would do)."""

    line: int = Field(ge=1)
    kind: str | None
    scope: str | None
    id: str | None
    action: Literal["imported", "skipped", "refused"]
    reason: str | None = Field(description="same-id, same-text, same-content (skipped); "
                               "invalid, too-long, other-project, no-session, secret, "
                               "needs-confirmation... (refused).")
    message: str


class NoteImportCounts(Contract):
    imported: Count
    skipped: Count
    refused: Count


class NoteImportOutput(Contract):
    """`memcite note import FILE --json`: one outcome per line after the header."""

    source: str
    dry_run: bool
    header: dict
    counts: NoteImportCounts
    lines: list[NoteImportLine]


# --------------------------------------------------------------------------- search


class SearchHit(Contract):
    """One matching line (one event of a log), best first."""

    file: str
    line: int = Field(ge=1, description="The line in the file (of an event log: the event's).")
    kind: Literal["notes", "events", "memory"]
    scope: Literal["project", "global", "session", "memory"] = Field(
        description="Whose file: this project's, the global one, a session's, or Codex's memory.")
    score: float = Field(description="bm25 relevance, higher is better.")
    snippet: str = Field(description="The matching words in **, around them at most 24 words; "
                         "secrets masked.")
    text: str = Field(description="The line (at most 500 characters), secrets masked.")


class SearchRefresh(Contract):
    """What refreshing the index before the query did."""

    files_checked: Count
    files_indexed: Count = Field(description="Files (re-)read: new or changed since last time.")
    files_dropped: Count = Field(description="Files gone since last time: their rows removed.")
    rows_written: Count
    skipped: list[str] = Field(description="Files not searched, and why.")


class SearchOutput(Contract):
    """`memcite search --json`: the hits among this project's, the global and Codex's files."""

    query: str
    project: str
    codex_home: str
    memory_folder: str
    scopes: list[Literal["project", "global", "session"]]
    kinds: list[Literal["notes", "events", "memory"]]
    limit: Count
    in_memory: bool = Field(description="The index was built in memory for this run (memcite's "
                            "database could not be written).")
    refresh: SearchRefresh
    count: Count
    hits: list[SearchHit]


OUTPUT_MODELS["search"] = SearchOutput


# --------------------------------------------------------------------------- push
# `memcite push` (memcite.fleet.push): what one ledger sent to the fleet's PostgreSQL.


class PushOutput(Contract):
    """`memcite push --json`: what this ledger sent to the fleet server (or would send)."""

    server: str = Field(description="The server, its password masked.")
    machine: str = Field(description="This machine's name on the server.")
    ledger: str = Field(description="The ledger pushed (its real path): the cursor's key.")
    dry_run: bool = Field(description="Nothing was sent; the counts are what would be.")
    replies: Count
    citations: Count = Field(description="Cited ids sent.")
    entries: Count = Field(description="Cited entries sent, each with its check outcome.")
    memories: Count = Field(description="Memory rows the server added or changed (with "
                            "--dry-run: the rows that would be compared).")
    batches: Count = Field(description="Transactions committed, each moving the cursor.")
    from_reply: Count = Field(description="The ledger's reply id the push went on from.")
    to_reply: Count = Field(description="The ledger's last reply id.")
    reconciled: bool = Field(description="The server's cursor did not match this ledger (or "
                             "--full): replies were sent again, the ones it had skipped.")
    seconds: float
    up_to_date: bool = Field(description="Nothing was new: the server had all of it.")


OUTPUT_MODELS["push"] = PushOutput


# --------------------------------------------------------------------------- conformance
# `memcite conformance` (memcite.conformance): the corpus's case format, and the --json of
# export, check and fuzz. One block, appended.

ConformanceKind = Literal["reply", "truncation"]
ConformanceOutcome = Literal["differs", "crashed", "timeout", "too-large", "not-json", "bad-shape"]


class ConformanceReading(Contract):
    """memcite's reading of a reply under --profile codex, the ids --policy codex counts."""

    visible: str = Field(description="The reply with every citation block removed.")
    citation: Citation | None = Field(description="null when the reply has no citation.")
    thread_ids: list[str] = Field(description="The ids Codex counts (raises usage_count for), "
                                  "normalised, in order, repeats kept.")


class _CaseHead(Contract):
    format: Literal[1] = Field(description="The case format's version.")
    name: str = Field(description="Unique in the corpus: SOURCE/GROUP/NUMBER or golden/STEM.")
    rule: str = Field(description="The rule the case pins down: a section of memcite's docs, "
                      "docs/PAGE.md#anchor.")
    source: Literal["golden", "table", "fuzz"] = Field(description="golden: a reply of "
                      "corpus/replies with its hand-written expected reading; table: a row of a "
                      "test table; fuzz: written by memcite conformance fuzz.")
    origin: str = Field(description="Where exactly the case comes from (file, table and row).")


class ConformanceReplyCase(_CaseHead):
    """One reply and how Codex (and memcite) reads it."""

    kind: Literal["reply"]
    reply: str = Field(description="The reply, fed to the implementation as UTF-8 on stdin.")
    expected: ConformanceReading
    codex_unobservable: str | None = Field(None, description="Why a run of the real Codex "
                                           "cannot show this case's reading (absent: it can).")


class ConformanceTruncationInput(Contract):
    text: str
    budget: Count = Field(description="Tokens of 4 bytes.")


class ConformanceTruncationExpected(Contract):
    text: str = Field(description="Codex's middle cut of the text to the budget.")


class ConformanceTruncationCase(_CaseHead):
    """A text cut to a token budget by Codex's 4-bytes rule (the read path)."""

    kind: Literal["truncation"]
    input: ConformanceTruncationInput = Field(description="Fed to the implementation as this "
                                              "JSON object on stdin.")
    expected: ConformanceTruncationExpected


class ConformanceCase(RootModel[Annotated[ConformanceReplyCase | ConformanceTruncationCase,
                                          Field(discriminator="kind")]]):
    """One case of memcite's conformance corpus (a line of cases.jsonl)."""


class ConformanceExportOutput(Contract):
    """`memcite conformance export --json`: what was written."""

    folder: str
    format: Literal["jsonl", "json"]
    cases: Count
    files: list[str] = Field(description="The corpus file, then its case schema.")


class ConformanceDisagreement(Contract):
    """One case on which the other implementation does not read as memcite does."""

    case: str
    rule: str
    outcome: ConformanceOutcome = Field(description="differs: it answered, some fields differ; "
                                        "the others: it failed on the case.")
    fields: list[str] = Field(description="The fields that differ (empty when it failed).")
    expected: dict = Field(description="memcite's value of each field compared (of each that "
                           "differs when it answered).")
    got: dict | None = Field(description="Its value of each field that differs; null when it "
                             "failed.")
    detail: str | None = Field(description="How it failed: exit code and last stderr line, "
                               "the time limit, the start of what it printed.")


class ConformanceCheckOutput(Contract):
    """`memcite conformance check --json`: the other implementation over the corpus."""

    corpus: str = Field(description="The corpus file read (the shipped one by default).")
    command: list[str]
    kind: ConformanceKind
    fields: list[str] = Field(description="The fields compared.")
    cases: Count = Field(description="Cases of this kind run.")
    agreed: Count
    differed: Count
    failed: Count = Field(description="Cases on which it crashed, hung, printed too much, or "
                          "printed what is not a reading.")
    skipped: Count = Field(description="Cases of the other kind, not run.")
    not_run: Count = Field(description="Cases of this kind left when the run stopped early "
                           "(see stopped); 0 when every case ran.")
    stopped: Literal["timeouts"] | None = Field(description="timeouts: the program timed out "
                                                "on that many cases in a row "
                                                "(timeouts_in_a_row) and the run stopped; "
                                                "null: every case ran.")
    timeouts_in_a_row: Count = Field(description="Time-outs on the last cases run, in a row.")
    disagreements: list[ConformanceDisagreement]


class ConformanceShrunk(Contract):
    """A disagreement fuzzing found, shrunk, and the case written for it."""

    case: str
    rule: str
    outcome: ConformanceOutcome
    fields: list[str]
    reply: str = Field(description="The shrunk reply.")
    reply_chars: Count
    generated_chars: Count = Field(description="The size of the reply as generated.")
    file: str | None = Field(description="The case file written (null without --out).")


class ConformanceFuzzOutput(Contract):
    """`memcite conformance fuzz --json`: generated replies, disagreements, shrunk cases."""

    command: list[str]
    seed: int
    fields: list[str]
    generated: Count = Field(description="Replies generated and run.")
    disagreements: Count
    seconds: float
    stopped: Literal["seconds", "max-cases"]
    shrunk: list[ConformanceShrunk]


OUTPUT_MODELS["conformance-case"] = ConformanceCase
OUTPUT_MODELS["conformance-export"] = ConformanceExportOutput
OUTPUT_MODELS["conformance-check"] = ConformanceCheckOutput
OUTPUT_MODELS["conformance-fuzz"] = ConformanceFuzzOutput


# --------------------------------------------------------------------------- trace and audit

OriginKind = Literal["user", "context", "assistant", "tool", "mcp", "web", "outside-file"]
FindingKind = Literal["poisoned", "secret", "cross-project", "directive", "taint"]
DirectiveRuleName = Literal["run-command", "fetch-url", "skip-check", "change-config",
                            "handle-secret", "override-instructions"]


class SentenceOrigin(Contract):
    """Where a sentence's words first appear in its memory's source session."""

    kind: OriginKind
    line: int = Field(ge=1, description="The session file's line.")
    tool: str | None = Field(description="The tool (mcp__server/tool for MCP), for tool outputs.")
    call_id: str | None
    detail: str | None = Field(description="The command run, query searched or file read (masked).")
    share: float = Field(ge=0, le=1, description="The share of the sentence's word pairs found.")
    tainted: bool = Field(description="A tool, MCP, web or outside-file output: not the user's words.")


class JudgedEffect(Contract):
    kind: Literal["command", "host", "credential", "recipient", "act", "safety"]
    value: str
    own: bool = Field(description="The project's own (its scripts and targets, a host it names).")
    dangerous: bool


class Judgement(Contract):
    """Why a sentence got its severity (memcite.judgement): origin, effects, markers."""

    severity: Literal["high", "medium", "low"] | None
    certain: bool = Field(description="Certain by the narrow rule memcite acts on alone.")
    trust: Literal["user", "project", "outside", "third-party"] | None = Field(
        description="Where its words came from, ranked (null: no source session).")
    placed: Literal["placed", "inherited"] | None = Field(
        description="Its words found in the thread, or the lowest trust the thread read.")
    effects: list[JudgedEffect]
    markers: list[Literal["concealment", "persistence", "trigger", "authority", "override",
                               "encoded"]]
    why: str


class AuditFinding(Contract):
    """One finding of `memcite audit`: what, where, from which thread and call, and the fix."""

    kind: FindingKind
    severity: Literal["high", "medium", "low"]
    memory: str | None = Field(description="The memory's thread id (null: a line traced to none).")
    where: str = Field(description="FILE:LINE, stage1_outputs.<column>:LINE, or the memory's place.")
    project: str | None = Field(description="The memory's source project (cwd).")
    source: str | None = Field(description="The source thread's source: cli, exec, vscode, subagent...")
    session: str | None = Field(description="The source thread's session file.")
    rule: str | None = Field(description="The directive rule, or the secret's kind.")
    excerpt: str = Field(description="The sentence or line, secrets masked.")
    origin: SentenceOrigin | None
    message: str
    fix: str
    places: list[str] = Field(description="Every place the same sentence stands (one finding).")
    memories: list[str] = Field(description="The memory those places were traced to (none: a "
                                "line traced to none).")
    certain: bool = Field(description="Acted on without the user (the quarantine, the gate).")
    judgement: Judgement | None = Field(description="Origin, effects and markers, for poisoned "
                                        "and directive findings.")


class AuditCounts(Contract):
    poisoned: Count
    secret: Count
    cross_project: Count = Field(alias="cross-project")
    directive: Count
    taint: Count


class AuditProject(Contract):
    """One row of the per-project table (without --project)."""

    project: str | None
    memories: Count
    poisoned: Count
    secret: Count
    cross_project: Count = Field(alias="cross-project")
    directive: Count
    taint: Count


class AuditOutput(Contract):
    """`memcite audit --json`: every memory of the home checked."""

    codex_home: str
    memory_folder: str
    project: str | None = Field(description="--project, as a real path (null: not given).")
    threshold: float = Field(description="The share of word pairs a segment must hold.")
    memories: Count
    with_session: Count = Field(description="Memories whose source session file was found.")
    folder_lines: Count = Field(description="Non-blank lines of MEMORY.md and memory_summary.md.")
    folder_lines_traced: Count = Field(description="Those traced to a memory.")
    counts: AuditCounts
    high: Count = Field(description="High-severity findings (exit 1 when not 0).")
    projects: list[AuditProject] | None
    findings: list[AuditFinding]
    problems: list[str]
    problem_count: Count
    memory_texts: dict[str, str] = Field(description="A hash of each poisoned memory's text (a "
                                         "restored memory stays restored until it changes).")


class TraceSentence(Contract):
    where: str
    text: str
    origin: SentenceOrigin | None
    directives: list[DirectiveRuleName]
    poisoned: bool


class TraceSourceThread(Contract):
    thread_id: str
    created_at: int | None = Field(description="When the thread was created (Codex's threads table).")
    created_at_iso: Iso
    cwd: str | None
    source: str | None
    session: str | None
    note: str | None = Field(description="Where the trail ends, or what was skipped reading it.")


class TraceCitedEntry(Contract):
    path: str
    line_start: int
    line_end: int
    outcome: CheckOutcome


class TraceCitation(Contract):
    reply_id: int
    thread_id: str | None
    cwd: str | None
    replied_at: int
    replied_at_iso: Iso
    origin: str | None
    entries: list[TraceCitedEntry]


class TraceMemory(Contract):
    thread_id: str
    places: list[str]
    source_thread: TraceSourceThread
    sentences: list[TraceSentence]
    poisoned: Count
    cited_by: Count
    citations: list[TraceCitation]
    citations_note: str | None
    fix: str


class TraceOutput(Contract):
    """`memcite trace ID --json`: where one memory, or one line of the memory folder, came from."""

    id: str
    kind: Literal["memory", "line"]
    codex_home: str
    memory_folder: str
    line: str | None = Field(description="The line traced (FILE:LINE), secrets masked.")
    resolved_by: Literal["memory", "named", "block", "text", "none"]
    trail: str = Field(description="How the ID was resolved to memories, or where the trail ends.")
    threshold: float
    memories: list[TraceMemory]
    poisoned: Count
    problems: list[str]


OUTPUT_MODELS["audit"] = AuditOutput
OUTPUT_MODELS["trace"] = TraceOutput
