"""The words each of memcite's own secret patterns needs (``secrets._OWN_NEEDS``) only skip
patterns that could not match: with or without them, the same findings."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memcite import secrets

PIECES = ["password", "PASSWORD", "Pass", "pwd", "secret", "api_key", "Access-Key", "token",
          "private key", "PRIVATE KEY", "-----BEGIN RSA ", "-----", "Authorization", "Bearer",
          "Cookie", "session_id", "SID", "csrf_token", "://", "@", "https", "user", "host",
          "example.org", "=", ":", " ", "\n", "'", '"', "x7Qz9", "hunter_2", "abc123def456",
          "+1 415 555 0100", "SECRET_KEY", ",", ";", "(", ")"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=14))
def test_the_needed_words_skip_only_patterns_that_cannot_match(parts):
    text = "".join(parts)
    with_needs = secrets._own_findings(text, blocks=False)
    kept = secrets._OWN_NEEDS.copy()
    try:
        secrets._OWN_NEEDS.clear()
        without = secrets._own_findings(text, blocks=False)
    finally:
        secrets._OWN_NEEDS.update(kept)
    assert with_needs == without, text


def test_every_needed_word_names_a_pattern():
    kinds = {kind for kind, *_rest in secrets._own_patterns()}
    assert set(secrets._OWN_NEEDS) <= kinds
