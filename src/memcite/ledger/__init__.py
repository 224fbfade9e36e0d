"""The usage ledger: the schema and its migrations, recording replies, syncing and reading a
Codex home, ingesting session files.

It builds on ``memcite.citations``. The rules are in docs/usage-and-retention.md.
"""
