"""The read path: tokenizers, truncation to a token budget, project slugs, the developer
instructions built from a memory folder.

It builds on ``memcite.citations`` and ``memcite.ledger``. The rules are in docs/read-path.md.
"""
