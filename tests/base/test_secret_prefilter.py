"""The words each of memcite's own secret patterns needs (``secrets._OWN_NEEDS``) only skip
patterns that could not match: with or without them, the same findings."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memcite import secrets

KEYS = ["password", "PASSWORD", "Passwd", "pwd", "passphrase", "secret", "client_secret", "api_key",
        "Access-Key", "secret_key", "token", "private_key", "Authorization", "Proxy-Authorization",
        "Bearer", "Cookie", "Set-Cookie", "session_id", "SID", "PHPSESSID", "connect.sid",
        "csrf_token", "XSRF-TOKEN", "https://user", "ftp://me", "note", "widget"]
SEPS = ["=", ": ", ":= ", " => ", " ", ":"]
VALUES = ["x7Qz9pL2wE", "hunter_2", "abc123def456ghi", "pw@example.org", "tok.en~/+x9-AB",
          "SECRET_KEY", "'quoted value 9'", "+1 415 555 0100", "a@b.example.com", "short"]
WRAP = ["", "- ", "the ", "\n", "`", "; then "]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(WRAP), st.sampled_from(KEYS), st.sampled_from(SEPS),
                          st.sampled_from(VALUES)), min_size=1, max_size=4))
def test_the_needed_words_skip_only_patterns_that_cannot_match(pairs):
    text = "".join(f"{wrap}{key}{sep}{value} " for wrap, key, sep, value in pairs)
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
