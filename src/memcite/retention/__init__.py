"""Analytics and retention: the dead-memory rules, stats with citation checks, the archive.

It builds on the ledger and the read path. The rules are in docs/usage-and-retention.md.
"""
