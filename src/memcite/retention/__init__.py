"""Analytics and retention: the dead-memory rules (rules), citation checks against the memory
folder (checks), the citation log's tally and its cache (tally), the report (stats), the archive.

It builds on the ledger and the read path. The rules are in docs/usage-and-retention.md.
"""
