"""The one table of secret kinds every path that writes or sends text is tested with.

Each row: (kind, a line of text holding the secret, the secret itself). The rule cases of
`tests/hostile/test_redact_rules.py` (one per shipped rule) plus the forms a probe found
leaking: assignments without a known prefix (`API_TOKEN=`, `TOKEN=`, `token:`, JSON and
YAML forms, `KEY=`, `private_key:`), a password in a URL with no user, an AWS secret key
in prose, a bare high-entropy string with context, Azure connection strings. The secrets
are fake and assembled at run time so that this file trips no scanner."""
from __future__ import annotations

import string

from tests.hostile.test_redact_rules import CASES, _mix

B64 = string.ascii_letters + string.digits + "+/"


def _rows() -> list[tuple[str, str, str]]:
    rows = [(kind, text, secret) for kind, (text, secret, _near) in CASES.items()]
    token = _mix(20, seed=3)
    rows += [
        ("API_TOKEN=", "export API_TOKEN=" + token, token),
        ("TOKEN=", "TOKEN=" + _mix(16, seed=5), _mix(16, seed=5)),
        ("token: (yaml)", "deploy:\n  token: " + _mix(24, seed=9), _mix(24, seed=9)),
        ('token = "…"', 'token = "' + _mix(22, seed=11) + '"', _mix(22, seed=11)),
        ('"token": "…" (json)', '{"service": "ci", "token": "' + _mix(26, seed=13) + '"}', _mix(26, seed=13)),
        ("KEY=", "KEY=" + _mix(18, seed=15), _mix(18, seed=15)),
        ("private_key:", "private_key: " + _mix(30, seed=17), _mix(30, seed=17)),
        ("redis://:pw@host", "cache at redis://:" + "pw" + _mix(10, seed=19) + "@cache.internal:6379/0",
         "pw" + _mix(10, seed=19)),
        ("postgres url", "DATABASE_URL=postgres://app:" + _mix(14, seed=21) + "@db.internal/app", _mix(14, seed=21)),
        ("ACCESS_TOKEN=", "ACCESS_TOKEN=" + _mix(20, seed=23), _mix(20, seed=23)),
        ("PASSWORD=", "PASSWORD=" + _mix(12, seed=25), _mix(12, seed=25)),
        ("aws secret key in prose", "the AWS secret access key for staging is " + _mix(40, B64, seed=27)
         + " (rotate monthly)", _mix(40, B64, seed=27)),
        ("bare high-entropy string", "use this token for the staging bot " + _mix(32, seed=29) + " until Friday",
         _mix(32, seed=29)),
        ("azure connection string", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey="
         + _mix(44, B64, seed=31) + ";EndpointSuffix=core.windows.net", _mix(44, B64, seed=31)),
        ("azure service bus", "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey="
         + _mix(44, B64, seed=33), _mix(44, B64, seed=33)),
    ]
    return rows


KINDS = _rows()


def leaks(text: str) -> list[str]:
    """The kinds whose secret appears in *text* (a fragment of 12+ characters counts)."""
    out = []
    for kind, _line, secret in KINDS:
        probe = secret if len(secret) < 12 else secret[-12:]
        if probe in text:
            out.append(kind)
    return out
