"""memcite.secrets: planted secrets are found (and masked), benign identifiers are not."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcite.secrets import mask, may_hold_secret, redact, scan

# (text, kind, the secret value that must never appear in a masked value or redacted text)
PLANTED = [
    # quoted, or mixed with a digit, a value of letters and underscores is a password
    ("db_password = 'blue_heron_sky'", "password", "blue_heron_sky"),
    ("password=blue_heron_7 in the test env", "password", "blue_heron_7"),
    ("aws key AKIAIOSFODNN7EXAMPLE in env", "aws-access-key", "AKIAIOSFODNN7EXAMPLE"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789 used", None,
     "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("export OPENAI_API_KEY=sk-proj-abcdEFGH1234ijklMNOP5678qrstUVWX9012", None,
     "abcdEFGH1234ijklMNOP5678qrstUVWX9012"),
    ("slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack-token",
     "AbCdEfGhIjKlMnOpQrStUvWx"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
     "private-key", "MIIEpAIBAAKCAQEA"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n", "private-key",
     "b3BlbnNzaC1rZXktdjEAAAAA"),
    ("jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
     "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", None, "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("contact jane.doe@acme-corp.com for access", "email", "jane.doe@acme-corp.com"),
    ("on-call: ops.lead+pager@payments.co.uk", "email", "ops.lead+pager@payments.co.uk"),
    ("call +1 415 555 0132 after 5", "phone", "415 555 0132"),
    ("phone (415) 555-0132", "phone", "555-0132"),
    ("mobile +44 20 7946 0958", "phone", "7946 0958"),
    ("Cookie: sessionid=abc123def456; csrftoken=xyz", "cookie", "abc123def456"),
    ("Set-Cookie: SID=31d4d96e407aad42; Path=/; Secure", "cookie", "31d4d96e407aad42"),
    ("sessionid=8f14e45fceea167a5a36dedd4bea2543a", None, "8f14e45fceea167a5a36dedd4bea2543a"),
    ("JSESSIONID: 1A530637289A03B07199A44E8D531427", "session-id", "1A530637289A03B07199A44E8D531427"),
    ("Authorization: Bearer abcdef1234567890abcdef", "authorization-header", "abcdef1234567890abcdef"),
    ("Authorization: Basic dXNlcjpwYXNz", "authorization-header", "dXNlcjpwYXNz"),
    ("curl -H 'Authorization: token 0123456789abcdefXYZ'", "authorization-header",
     "0123456789abcdefXYZ"),
    ("db at postgres://admin:S3cretPass@db.internal:5432/app", "url-password", "S3cretPass"),
    ("https://deploy:tr0ub4dor&3@git.example.org/repo.git", "url-password", "tr0ub4dor&3"),
    ("password=hunter2", "password", "hunter2"),
    ("token: 8f14e45fceea167a5a36dedd4bea2543", "password", "8f14e45fceea167a5a36dedd4bea2543"),
    ("GITLAB_TOKEN=0123456789abcdef0123", None, "0123456789abcdef0123"),
    ("access_token = 'ya29.a0AfH6SMBx'", "password", "ya29.a0AfH6SMBx"),
    ("PGPASSWORD: 'x9!kQ2#zz'", "password", "x9!kQ2#zz"),
    ("api_key: 'Zx9Qw8Er7Ty6Ui5Op4'", "password", "Zx9Qw8Er7Ty6Ui5Op4"),
    ("client_secret = 'mPq7Rs9Tu2Vw4Xy6'", "password", "mPq7Rs9Tu2Vw4Xy6"),
    ("the key is Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNb", "high-entropy-string",
     "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNb"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", None, "4eC39HqLyjWDarjtT1zdp7dc"),
    ("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", "sendgrid-api-key",
     "TwL2iGABf9DHoTf"),
    ("npm token npm_abcdefghijklmnopqrstuvwxyz0123456789", None,
     "npm_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("2026-01-20 10:00:01 INFO start\n2026-01-20 10:00:02 ERROR boom\n"
     "2026-01-20 10:00:03 WARN retry", "raw-log", "ERROR boom"),
    ("Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    foo()\n"
     "  File \"b.py\", line 9, in foo\nValueError: x", "raw-log", "in <module>"),
    ("[12:00:01] GET /a 200\n[12:00:02] GET /b 500\n[12:00:03] GET /c 200", "raw-log", "GET /b"),
    ("def f(x):\n    y = x + 1\n    if y:\n        return y\n    return 0\n", "code-excerpt",
     "return y"),
    ("```\nline one\nline two\nline three\nline four\nline five\n```", "code-excerpt", "line three"),
    ("const a = 1;\nlet b = 2;\nfunction c() {\n  return a + b;\n}\n", "code-excerpt", "return a + b"),
]

BENIGN = [
    "thread 019c6e27-e55b-73d1-87d8-4e01f1f75043 decided it",
    "id: 0199a8b2-1c3d-7e4f-8a9b-0c1d2e3f4a5b",
    "session_id: 019c6e27-e55b-73d1-87d8-4e01f1f75043 (the Codex session)",
    "thread_id=019c6e27-e55b-73d1-87d8-4e01f1f75043",
    "UUID 019C6E27-E55B-73D1-87D8-4E01F1F75043 in upper case",
    "commit 3a5b724e9f1c2d3b4a5f6e7d8c9b0a1f2e3d4c5b fixed it",
    "short hash 3a5b724 and 4cddfb3",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "docker image python:3.11-slim@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "version 1.2.3, python 3.11.7, v2.0.0-rc.1, 2026.11.19",
    "see src/memcite/notes/model.py and /home/user/src/payments-api/src/app/server/handlers",
    "~/.codex/memory/projects/payments-api-a1b2c3d4e5f6/memory.md",
    "docs at https://github.com/Yelp/detect-secrets/blob/master/README.md",
    "https://example.com/search?q=memory&page=2",
    "slug payments-api-a1b2c3d4e5f6",
    "rollout-2026-01-20T10-00-00-019c6e27-e55b-73d1-87d8-4e01f1f75043.jsonl",
    "Decision: use WAL with synchronous=NORMAL — durability vs speed — 2026-01-20",
    "the token budget is 2500 (o200k_base)",
    "password is stored in the vault at kv/payments",
    "secret: stored in the team vault",
    "set DATABASE_URL=postgres://app@localhost:5432/app",
    "postgres://user:${DB_PASSWORD}@db:5432/app",
    "password=<your password>",
    "api_key: ****",
    "token: [REDACTED:github-token]",
    "clone git@github.com:org/repo.git",
    "released on 2026-11-30, ticket #12345, port 5432, ip 10.0.0.12",
    "run `pytest -q -x tests/notes/test_notes_model.py` (3 passed)",
    "Authorization is handled by the gateway",
    "MEMCITE_CACHE_DIR and CODEX_HOME environment variables",
    "base64 of nothing is '' and dGVzdA== is 'test'",
    "ERROR handling: retries with backoff",
    "memcite record --id turn-42 --thread-id 019c6e27-e55b-73d1-87d8-4e01f1f75043",
    "x = 1 is the default",
    "HYPOTHESIS_PROFILE=ci .venv/bin/python -m pytest -q",
    "ghp_ prefixed tokens are GitHub's",
    "sk-learn is not a key",
    "eyJ starts every JWT",
    "AKIA prefixes AWS keys",
    "user jane at example: jane@example.com",
    "CamelCaseIdentifierNamesAreFine and snake_case_names_too_long_for_anything",
    "Benchmark: 1.8x python -c pass (12.3 ms vs 6.8 ms), 200 entries",
    "The file is 0600 and the folder 0700",
    "run 2026-01-20T10:00:00Z took 35 s",
    "tests: 412 passed, 3 skipped in 118.2s",
    "See PR #847 and issue 11",
    "Use `memcite note save --section decisions --topic db`",
    "TODO: 1) sync 2) stats 3) prune",
    "One log line is fine: 2026-01-20 10:00:01 INFO start",
    "def f(x): return x  # one line of code is fine",
    "password: os.environ['DB_PASSWORD']",
    "api_key = settings.PAYMENTS_API_KEY",
    "PGPASSWORD=$(cat ~/.pgpass-file)",
    "token=$GITHUB_TOKEN in CI",
    "password: None (trust auth on localhost)",
    "Authorization: required for /admin",
    "secret_key_base: <%= ENV['SECRET_KEY_BASE'] %>",
    "API_KEY is read from the environment (see config.py)",
    "export PATH=$HOME/.local/bin:$PATH",
    "max_tokens=4096 and tokenizer: o200k_base",
    "token budget: 2500",
    # in code, the name of the variable that holds the secret, not the secret
    "client = boto3.client('s3', aws_secret_access_key=SECRET_KEY, aws_session_token=SESSION_TOKEN)",
    "key.export_key(passphrase=secret_code, protection='scryptAndAES128-CBC')",
    "Config(overrides={'sudo': {'password': sudo_pass}})",
]


@pytest.mark.parametrize(("text", "kind", "value"), PLANTED)
def test_planted_secrets_are_found_and_masked(text, kind, value):
    findings = scan(text)
    assert findings, text
    if kind is not None:
        assert kind in {f.kind for f in findings}
    for finding in findings:
        assert value not in finding.masked
        assert 1 <= finding.line <= text.count("\n") + 1
        assert 0 <= finding.start < finding.end <= len(text)
    redacted = redact(text)
    assert value not in redacted
    assert "[REDACTED:" in redacted


@pytest.mark.parametrize("text", BENIGN)
def test_benign_identifiers_are_not_flagged(text):
    assert scan(text) == []
    assert redact(text) == text


def test_finding_line_numbers_count_from_one():
    text = "first line\nsecond AKIAIOSFODNN7EXAMPLE\n"
    (finding,) = scan(text)
    assert finding.line == 2
    assert text[finding.start:finding.end] == "AKIAIOSFODNN7EXAMPLE"


@pytest.mark.parametrize(
    ("value", "masked"),
    [
        ("abc", "…(3 chars)"),
        ("hunter22", "hu…(8 chars)"),
        ("AKIAIOSFODNN7EXAMPLE", "AKIA…(20 chars)"),
        ("a\nb\nc", "(3 lines)"),
    ],
)
def test_mask_shows_at_most_four_characters(value, masked):
    assert mask(value) == masked


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain words about a decision", False),
        ("thread 019c6e27-e55b-73d1-87d8-4e01f1f75043", False),
        ("sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", False),
        ("AKIAIOSFODNN7EXAMPLE", True),
        ("-----BEGIN PRIVATE KEY-----", True),
        ("password=x", True),
        ("Authorization: Basic x", True),
        ("xoxb-1", True),
        ("random Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNb", True),
    ],
)
def test_pre_filter(text, expected):
    assert may_hold_secret(text) is expected


def test_pre_filter_keeps_detect_secrets_unloaded_for_plain_text():
    code = ("import sys; from memcite.secrets import scan; "
            "assert scan('Decision: use WAL, thread 019c6e27-e55b-73d1-87d8-4e01f1f75043') == []; "
            "print('detect_secrets' in sys.modules, 'requests' in sys.modules); "
            "scan('AKIAIOSFODNN7EXAMPLE'); print('detect_secrets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "True"]


@given(st.text(max_size=300))
def test_scan_never_crashes_and_spans_are_in_order(text):
    findings = scan(text)
    ends = [0]
    for finding in findings:
        assert finding.start >= ends[-1]
        assert finding.end > finding.start
        ends.append(finding.end)
    redact(text)


@given(st.sampled_from(PLANTED), st.sampled_from(BENIGN))
def test_a_planted_secret_among_benign_text_is_redacted(row, benign):
    text, kind, value = row
    combined = f"{benign}\n{text}"
    assert scan(combined)
    assert value not in redact(combined)
    if kind not in ("raw-log", "code-excerpt"):  # a block may take a neighbouring line along
        assert redact(combined).startswith(benign + "\n")


def test_a_base64_key_with_slashes_is_not_taken_for_a_path():
    assert scan("aws_secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
