"""Judgement: the rules that decide what a memory's text is and how far to trust it.

Where its words came from (origin), what it would make the agent touch or do (effects),
the markers that almost never belong in a memory, the directive rules, and the one severity
those give. The rules are pure functions of the text and the facts passed in; reading
sessions, homes and databases is the callers' work (``memcite.audit``, the gate in
``memcite.codex``).
"""
