"""Secrets never leave the machine: redact keys and tokens from text.

Applied to every fact before it is written (the project ref is pushed to
teammates; ~/.neo is exported) and, later, to every prompt before it is sent.
"""
from __future__ import annotations

import re

# (label, pattern). Order matters: specific token formats before generic assignments.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern))
    for label, pattern in (
        ("private-key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"),
        ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
        ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
        ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"),
        ("gitlab-token", r"\bglpat-[A-Za-z0-9_\-]{20,}"),
        ("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        ("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}\b"),
        ("stripe-key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
        ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        ("bearer-token", r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/\-]{16,}=*"),
        ("url-credentials", r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),
        ("secret", r"(?i)(?<![A-Za-z0-9])(?:api[_-]?key|secret(?:[_-]?key)?|secret[_-]?access[_-]?key|access[_-]?token|auth[_-]?token|"
                   r"password|passwd|pwd|client[_-]?secret)\s*[:=]\s*[\"']?(?!\[REDACTED)(?!" + r"|".join((
                       # a reference to where the secret lives is advice, not a secret:
                       # $DB_PASSWORD, ${db_password}, os.environ[...], os.getenv(...), process.env.X
                       r"(?:(?-i:\$[A-Z_][A-Z0-9_]*)|\$\{[A-Za-z_][\w.]*\})(?![^\s\"',;])",
                       r"os\.environ\b", r"os\.getenv\(", r"process\.env\.", r"ENV\[")) + r")"
                   r"([^\s\"',;]{6,})"),
    )
)


def redact(text: str) -> str:
    """Replace anything that looks like a credential with `[REDACTED:<kind>]`."""
    if not text:
        return text
    for label, pattern in _PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda m, lb=label: m.group(0).replace(m.group(1), f"[REDACTED:{lb}]"), text)
        else:
            text = pattern.sub(f"[REDACTED:{label}]", text)
    return text


def contains_secret(text: str) -> bool:
    """True if `redact` would change *text*."""
    return redact(text) != text
