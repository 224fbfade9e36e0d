"""Audit: the memory audit, and what reads and acts on its verdicts.

The way the data goes::

    Codex's session files (sessions/*.jsonl, read by memcite.ledger.session_scan)
        |  provenance: each session read into segments, each with its origin;
        |  a sentence's words traced to the segment they first appear in
        v  (project_facts and git_index: what the project is and which files it tracks)
    judgement (memcite.judgement: origin, effects, markers, directives -> severity)
        |  memory_audit: every memory and every line of MEMORY.md / memory_summary.md
        v  judged, sentence by sentence
    verdicts (kept per memory by verdict_cache, so a second audit reads only what changed)
        |
        +--> audit_text   what `memcite audit` prints
        +--> audit_sarif  `memcite audit --format sarif`
        +--> memory_trace `memcite trace ID`: one memory or one line, followed back
        +--> memory_quarantine  the Stop hook's look at the folder: poisoned memories
                                forgotten or proposed (forget_requests: `memcite archived`,
                                what became of each request to forget)

The rules themselves are in ``memcite.judgement`` (pure functions of text and facts); this
wing reads the files and databases they need and reports. The command line
(``memcite.cli.audit_commands``) and the hooks and the gate of the Codex wing above it call
it; nothing here imports from either (what the audit reads of Codex's files is read by the
wings below: ``memcite.ledger.session_scan``, ``cwd_match``, ``codex_home``).
"""
