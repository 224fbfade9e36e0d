"""The citation protocol's oracle: a conformance corpus, a checker and a differential fuzzer.

Other programs read ``<oai-mem-citation>`` blocks too. memcite reads them as Codex does, so
its readings are the reference: ``corpus`` holds the shipped cases and computes expected
readings, ``runner`` runs another implementation on one input (capped, timed, killed),
``check`` compares it with the corpus and ``fuzz`` with memcite on generated replies.
See docs/conformance.md.

This wing reads replies with ``memcite.citations`` and ``memcite.readpath.truncation``;
nothing on the per-reply path imports it.
"""
