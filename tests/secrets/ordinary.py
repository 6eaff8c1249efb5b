"""Ordinary text that holds no secret and must come back from `redact` exactly as it went in:
hashes, ids, references to where a secret lives, encoded words, URLs without credentials,
versions, and the prose and code facts are made of (plus gitleaks' own false-positive examples)."""
from __future__ import annotations

import base64
import hashlib
import uuid

_SHA1 = hashlib.sha1(b"git-neo").hexdigest()
_SHA256 = hashlib.sha256(b"git-neo").hexdigest()
_MD5 = hashlib.md5(b"git-neo").hexdigest()
_UUID = str(uuid.UUID(int=0x0A1B2C3D4E5F60718293A4B5C6D7E8F9))
_B64_WORDS = base64.b64encode(b"the quick brown fox jumps over the lazy dog every morning").decode()

ORDINARY = [
    # hashes and ids
    f"Fixed in commit {_SHA1}.",
    f"git show {_SHA1[:12]} shows the change",
    f"the artifact's sha256 is {_SHA256}",
    f"sha256:{_SHA256} is the digest of the image",
    f"checksum = \"{_SHA256}\"",
    f"md5 {_MD5} matches the download",
    f"request id {_UUID} failed with 502",
    f"trace_id: {_UUID}",
    f"Revert \"fix flaky test\"\n\nThis reverts commit {_SHA1}.",
    f"cache key is derived from {_SHA1[:16]} and the lockfile",
    f"integrity: sha512-{base64.b64encode(hashlib.sha512(b'x').digest()).decode()}",
    f"Merge pull request #4521 from acme/feature-{_SHA1[:7]}",
    # where a secret lives, not the secret
    "export DATABASE_URL=$DATABASE_URL",
    "password: ${DB_PASSWORD}",
    "API_KEY=${API_KEY:-}",
    "token: {{ secrets.GITHUB_TOKEN }}",
    "token: ${{ secrets.NPM_TOKEN }}",
    "api_key = os.environ['OPENAI_API_KEY']",
    "password = os.getenv(\"DB_PASSWORD\")",
    "const secret = process.env.JWT_SECRET;",
    "Read the token from the vault at secret/data/ci/deploy, never from the repo.",
    "The password is stored in 1Password under 'Staging DB'.",
    "set AccountKey=<your key> in the connection string",
    "aws_access_key_id = <your access key id>",
    "Authorization: Bearer $TOKEN",
    "curl -H \"Authorization: Bearer ${API_TOKEN}\" https://api.example.com/v1/items",
    "docker login -u ci --password-stdin < token.txt",
    "mysql -u root -p prod   # asks for the password",
    "password: changeme",
    "PASSWORD=",
    "secret_name: prod-db-credentials",
    "key_id: primary",
    # encoded words, URLs, versions
    f"the fixture holds {_B64_WORDS}",
    "aGVsbG8gd29ybGQ= decodes to hello world",
    "See https://docs.example.com/guide/install?lang=en#linux for the steps.",
    "clone https://github.com/acme/api.git and run make",
    # a URL after a secret's name says where it lives (a draft of the rules took it for the secret)
    "For the staging password see: https://wiki.example.com/staging",
    "the password is at https://vault.example.com/ui/secret/deploy",
    "Reset your password: https://accounts.example.com/reset",
    "secret: http://intranet.example.com/howto/secrets",
    "api_key = https://console.example.com/settings/api-keys",
    "postgres://db.internal:5432/app is the staging database",
    "redis://cache.internal:6379/0 holds sessions",
    "Bump requests from 2.31.0 to 2.32.3",
    "Requires Python >= 3.10 and numpy 1.26.4",
    "node v20.11.1, npm 10.2.4",
    "version: 2024-06-01",
    "api_version: 2023-10-16",
    # prose and code
    "Always run the migrations before deploying the API service.",
    "Use the token bucket algorithm for rate limits: 100 requests per minute per key.",
    "The secret to fast tests is a warm cache.",
    "Keys in the settings dict are sorted with key=lambda item: item.name.",
    "max_tokens: 4096",
    "timeout = 30  # seconds",
    "The passport check happens in auth/middleware.py before the session is read.",
    "We pass the request through three filters; the pin on numpy is there for a reason.",
    "def test_token_refresh(client): assert client.refresh() is not None",
    "Keep the API key out of logs: the logger redacts headers named Authorization.",
    "Rotate the credentials monthly; see docs/security.md.",
    "for key, value in sorted(config.items()): print(key, value)",
    "primary_key = ('user_id', 'created_at')",
    "The bypass for admins was removed; compass headings are in degrees.",
    "Run `git neo add --kind decision \"Use Postgres\" \"because we need transactions\"`.",
    "The pipeline fails when the lockfile changes: run npm ci, not npm install.",
    "token_count = len(tokenizer.encode(text))",
    "The Jira ticket PROJ-1234 tracks the flaky test.",
    # lines of this repository a draft of the rule set redacted
    f'"tokenizer.json": ("tokenizer.json", "{_SHA256}"),',
    "api_key=find_key(name, repo),",
    "`high-entropy-string` (detect-secrets' Base64HighEntropyString, with context)",
    "command-line forms: `mysql -pXXXX`, `sshpass -p`, `<password>…</password>`",
    # gitleaks' own false-positive examples (cmd/generate/config/rules/generic.go)
    "client_vpn_endpoint_id = aws_ec2_client_vpn_endpoint.client-vpn-endpoint.id",
    "password combination.\n\nR5: Regulatory--21",
]
