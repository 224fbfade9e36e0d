"""``memcite demo``'s wing: the sample Codex home built from ``corpus/`` and the whole loop run
on it (``memcite.demo.loop``). It sits above the wings it drives (ledger, readpath,
retention, codex) and below the command line, which only picks the folder and prints."""
