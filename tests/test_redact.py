"""Secrets never reach the shared ref or ~/.neo: keys and tokens are redacted, ordinary
text is left alone."""
from __future__ import annotations

import json

import pytest

from neo_git.redact import contains_secret, redact
from tests.helpers.store import neo_home, open_store, show_blob

# Assembled at run time so this file itself does not trip secret scanners.
OPENAI = "sk-" + "proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
ANTHROPIC = "sk-ant-" + "api03-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1"
GITHUB = "ghp_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
BEARER = "eyJhbGciOi" + "JIUzI1NiJ9abcdefgh"

SECRETS = [
    (f"export OPENAI_API_KEY={OPENAI}", OPENAI, "openai-key"),
    (f"the key is {OPENAI} for prod", OPENAI, "openai-key"),
    (f"Anthropic: {ANTHROPIC}", ANTHROPIC, "anthropic-key"),
    (f"push with {GITHUB}", GITHUB, "github-token"),
    (f"token {GITHUB_PAT}", GITHUB_PAT, "github-token"),
    (f"aws_access_key_id = {AWS}", AWS, "aws-access-key"),
    (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, "secret"),
    (f"export AWS_SECRET_ACCESS_KEY={AWS_SECRET}", AWS_SECRET, "secret"),
    ("db password=hunter2hunter2 in staging", "hunter2hunter2", "secret"),
    ("PASSWORD: 'correct-horse-battery'", "correct-horse-battery", "secret"),
    ("client_secret=abcdef123456", "abcdef123456", "secret"),
    ("password=$ecretValue9", "$ecretValue9", "secret"),   # looks like $VAR, but is not one
    (f"curl -H 'Authorization: Bearer {BEARER}'", BEARER, "bearer-token"),
    ("clone https://alice:s3cr3tpw@github.com/acme/api.git", "s3cr3tpw", "url-credentials"),
    ("postgres://app:pa55w0rd@db.internal:5432/app", "pa55w0rd", "url-credentials"),
]


@pytest.mark.parametrize("text, secret, label", SECRETS)
def test_secrets_are_redacted(text, secret, label):
    out = redact(text)
    assert secret not in out
    assert f"[REDACTED:{label}]" in out
    assert contains_secret(text)
    assert redact(out) == out  # idempotent


@pytest.mark.parametrize("text", [
    "We use httpx with a 10 s timeout for all outbound calls.",
    "Set password_min_length to 12 in settings.py.",
    "The skeleton task-runner lives in tools/sk-runner.",
    "See https://github.com/acme/api/blob/main/README.md#setup for details.",
    "Bearer tokens are validated by the gateway.",
    "Call get_api_key() from the vault client; never hard-code it.",
    "ghp_ prefixes mark GitHub tokens; AKIA marks AWS keys.",
    # where a secret comes from is advice worth keeping, not a secret
    "Read it at startup: password=os.environ['DB_PASSWORD']",
    'password = os.getenv("DB_PASSWORD") in settings.py',
    "In compose files write password=${DB_PASSWORD}, never the value.",
    "export PGPASSWORD=$DB_PASSWORD before psql",
    "In the Node service: api_key: process.env.OPENAI_API_KEY",
    "",
])
def test_ordinary_text_is_untouched(text):
    assert redact(text) == text
    assert not contains_secret(text)


def test_facts_on_the_ref_are_redacted(repo_with_commit):
    store = open_store(repo_with_commit)
    fact = store.add(f"Deploy token {GITHUB}", f"CI uses {OPENAI} and password=hunter2hunter2; "
                     "mirror at https://bot:t0ps3cret@git.example.com/acme/api.git",
                     source_prompt=f"my key is {ANTHROPIC}")
    blob = show_blob(repo_with_commit, fact.id)
    for secret in (GITHUB, OPENAI, "hunter2hunter2", "t0ps3cret", ANTHROPIC):
        assert secret not in blob
    data = json.loads(blob)
    assert data["subject"] == "Deploy token [REDACTED:github-token]"
    assert "[REDACTED:openai-key]" in data["body"] and "git.example.com/acme/api.git" in data["body"]
    assert "[REDACTED:anthropic-key]" in data["metadata"]["source_prompt"]


def test_global_facts_file_is_redacted(repo_with_commit):
    store = open_store(repo_with_commit)
    store.add("AWS access", f"Use the role, not {AWS}.", scope="global")
    raw = (neo_home() / "facts" / "facts_global.json").read_text(encoding="utf-8")
    assert AWS not in raw and "[REDACTED:aws-access-key]" in raw


def test_ordinary_fact_text_is_stored_verbatim(repo_with_commit):
    store = open_store(repo_with_commit)
    body = "Timeouts: connect 2 s, read 30 s. Tokens per request ≤ 4096. Key order: sorted."
    fact = store.add("HTTP client settings", body)
    assert json.loads(show_blob(repo_with_commit, fact.id))["body"] == body
