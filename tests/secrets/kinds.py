"""The one table of secret kinds every path that writes or sends text is tested with.

Three parts: hand cases (below), the forms issue 37's probe found leaking (`ISSUE_FORMS`, fresh
values), and one fresh sample line per rule adopted from gitleaks or detect-secrets
(`tests/secrets/samples.py`) — about 360 kinds.

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


def _fresh(n: int, seed: str, alphabet: str = string.ascii_letters + string.digits) -> str:
    """*n* random characters, the same for the same *seed* (and NEO_SECRET_SEED)."""
    import os
    import random

    rng = random.Random(f"{os.environ.get('NEO_SECRET_SEED', '37')}:{seed}")
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


def _issue_forms() -> dict[str, list[tuple[str, str]]]:
    """rule id -> [(text, secret)]: the forms issue 37's probe found leaking, with fresh values."""
    import base64

    hexa = "0123456789abcdef"
    pw = {k: _fresh(14, k) for k in ("mysql", "mysqlq", "sshpass", "sshpassq", "curl", "smtp", "dbpw", "phrase", "xml",
                                     "xmlkey", "flag", "flag2", "basic", "bare", "header", "pass")}
    basic = base64.b64encode(f"deploy:{pw['basic']}".encode()).decode()
    dsn = _fresh(32, "dsn", hexa)
    discord = _fresh(68, "discord", string.ascii_letters + string.digits + "_-")
    return {
        "mysql-password": [(f"mysql -u root -p{pw['mysql']} prod", pw["mysql"]),
                           (f"mysqldump -uadmin -p'{pw['mysqlq']}' --all-databases > dump.sql", pw["mysqlq"])],
        "sshpass-password": [(f"sshpass -p '{pw['sshpass']}' ssh deploy@10.0.0.5 uptime", pw["sshpass"]),
                             (f"sshpass -p {pw['sshpassq']} scp build.tar host:/srv", pw["sshpassq"])],
        "cli-user-password": [(f"curl --user deploy:{pw['curl']} https://ci.example.com/api/builds", pw["curl"])],
        "cli-password-flag": [(f"wget --password={pw['flag']} https://files.example.com/x.tgz", pw["flag"]),
                              (f"vault login --token {pw['flag2']} -address=https://vault", pw["flag2"])],
        "authorization-header": [(f"Authorization: Basic {basic}", basic)],
        "authorization-header-bare": [(f"Authorization: {pw['bare']}", pw["bare"])],
        "api-key-header": [(f"X-Api-Key: {pw['header']}", pw["header"])],
        "xml-secret-element": [(f"<smtp><password>{pw['xml']}</password></smtp>", pw["xml"]),
                               (f"<apiKey>{pw['xmlkey']}</apiKey>", pw["xmlkey"])],
        "password-variable": [(f"SMTP_PASS={pw['smtp']}", pw["smtp"]), (f"DB_PW: {pw['dbpw']}", pw["dbpw"])],
        "password-prose-colon": [(f"our signing key passphrase: {pw['phrase']}", pw["phrase"]),
                                 (f"the password for the staging box = {pw['pass']}", pw["pass"])],
        "dsn-key": [(f"SENTRY_DSN=https://{dsn}@o450123.ingest.sentry.io/5532100", dsn)],
        "discord-webhook": [(f"alerts go to https://discord.com/api/webhooks/112233445566778899/{discord}", discord)],
        "prefix-token": [(f"use {prefix}{body} for the CI bot", body) for prefix, body in (
            ("dckr_pat_", _fresh(27, "dckr")), ("gsk_", _fresh(52, "gsk")), ("xai-", _fresh(80, "xai")),
            ("ntn_", _fresh(46, "ntn")), ("PMAK-", _fresh(24, "pmak", hexa) + "-" + _fresh(34, "pmak2", hexa)),
            ("whsec_", _fresh(32, "whsec")), ("ya29.", _fresh(60, "ya29")), ("ATATT3", _fresh(60, "atatt")),
            ("LTAI", _fresh(20, "ltai")))],
    }


ISSUE_FORMS = _issue_forms()
# rule id -> text the rule must leave alone
ISSUE_NEAR_MISSES = {
    "mysql-password": "mysql -u root -p prod   # prompts for the password; -P3306 is the port",
    "sshpass-password": "sshpass -f ~/.ssh/pass ssh deploy@host reads the password from a file",
    "cli-user-password": "curl --user deploy https://ci.example.com asks for the password",
    "cli-password-flag": "docker login --password-stdin < token.txt; vault login --token $VAULT_TOKEN",
    "authorization-header": "Authorization: Bearer ${TOKEN} is set by the proxy",
    "authorization-header-bare": "Authorization: required for every endpoint",
    "api-key-header": "X-Api-Key: see the vault",
    "xml-secret-element": "<password>${SMTP_PASSWORD}</password>",
    "password-variable": "the bypass: compass headings are in degrees; DB_PASS=$DB_PASS",
    "password-prose-colon": "Password: must be rotated every month",
    "dsn-key": "https://sentry.io/organizations/acme/issues/ is where errors go",
    "discord-webhook": "https://discord.com/channels/1234/5678 is the team channel",
    "prefix-token": "ntn_ tokens come from Notion; gsk_ from Groq; xai- from xAI",
}


def _all_rows() -> list[tuple[str, str, str]]:
    from tests.secrets.samples import one_line_per_rule

    rows = _rows()
    for rule_id, forms in ISSUE_FORMS.items():
        rows += [(f"{rule_id} #{n}", text, secret) for n, (text, secret) in enumerate(forms)]
    rows += [(f"{rule_id} (sample)", line, secret) for rule_id, line, secret in one_line_per_rule()]
    return rows


KINDS = _all_rows()


def leaks(text: str, kinds=None) -> list[str]:
    """The kinds whose secret appears in *text*: the whole secret, or (for one of 12+ characters)
    its last 12 or middle 12 characters (a secret cut or half redacted still counts). A mark's
    rule id is not the secret (`[REDACTED:django-insecure-secret-key]` holds a prefix of one)."""
    import re

    text = re.sub(r"\[REDACTED:[\w.-]*\]", "[REDACTED]", text)
    out = []
    for kind, _line, secret in KINDS if kinds is None else kinds:
        probes = [secret] if len(secret) < 12 else [secret[-12:], secret[len(secret) // 2 - 6:len(secret) // 2 + 6]]
        if any(p in text for p in probes):
            out.append(kind)
    return out
