"""Case 7: every shipped redaction rule catches its secret and leaves a near miss alone.

Secrets are assembled at run time (and are fake) so this file does not trip scanners."""
from __future__ import annotations

import json
import string

import pytest

from neo_git.redact import RULES_FILE, redact, rules
from tests.helpers.plumbing import neo


def _mix(n: int, alphabet: str = string.ascii_letters + string.digits, seed: int = 7) -> str:
    """A fake token body: *n* characters cycling through *alphabet* with a stride."""
    return "".join(alphabet[(seed + i * 11) % len(alphabet)] for i in range(n))


HEX = "0123456789abcdef"
LETTERS = string.ascii_letters
B64 = string.ascii_letters + string.digits + "+/"
UUID = "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"
PGP = ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + _mix(64, B64) + "\n" + _mix(40, B64)
       + "\n-----END PGP PRIVATE KEY BLOCK-----")

# rule id -> (text holding a secret, the secret, a near miss that must stay as it is)
CASES = {
    "private-key": (f"key:\n{PGP}\nthanks", PGP.split("\n")[2],
                    "Keys start with -----BEGIN PGP PUBLIC KEY BLOCK----- and are public."),
    "age-secret-key": ("age AGE-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58],
                       ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58], "age keys start with AGE-SECRET-KEY-1 and a bech32 body"),
    "anthropic-key": ("ANTHROPIC_API_KEY " + "sk-ant-" + "api03-" + _mix(40), _mix(40),
                      "Anthropic keys begin sk-ant- followed by the key"),
    "openai-key": ("use " + "sk-" + "proj-" + _mix(30) + " here", _mix(30), "the sk-learn package is not a key"),
    "huggingface-token": ("HF token " + "hf_" + _mix(34, LETTERS), _mix(34, LETTERS),
                          "set hf_hub_download(cache_dir=...) in the loader"),
    "huggingface-org-token": ("org " + "api_org_" + _mix(34, LETTERS), _mix(34, LETTERS), "the api_org_id column"),
    "perplexity-key": ("pplx-" + _mix(48), _mix(48), "pplx-api is the name of the client"),
    "github-token": ("push with " + "ghp_" + _mix(36), _mix(36), "ghp_ prefixes mark GitHub tokens"),
    "gitlab-token": ("CI uses " + "glpat-" + _mix(20), _mix(20), "glpat- tokens expire after a year"),
    "npm-token": ("//registry.npmjs.org/:_authToken=" + "npm_" + _mix(36), _mix(36), "npm_config_cache points elsewhere"),
    "pypi-token": ("password = " + "pypi-AgEIcHlwaS5vcmc" + _mix(60), _mix(60), "pypi-AgEI tokens start like this"),
    "aws-access-key": ("aws_access_key_id = " + "AKIA" + "Q3EGRZ7T4NPLHW2X", "Q3EGRZ7T4NPLHW2X", "AKIA marks AWS keys"),
    "azure-storage-key": ("DefaultEndpointsProtocol=https;AccountName=acme;" + "AccountKey=" + _mix(86, B64) + "==;",
                          _mix(86, B64), "set AccountKey=<your key> in the connection string"),
    "azure-ad-client-secret": ('secret: "' + "abc" + "8Q~" + _mix(34, string.ascii_letters + "_~.") + '"',
                               _mix(34, string.ascii_letters + "_~."), "the Q~ marker is part of Azure secrets"),
    "google-api-key": ("key=" + "AIza" + _mix(35), _mix(35), "AIza is how Google keys begin"),
    "digitalocean-token": ("doctl auth " + "dop_v1_" + _mix(64, HEX), _mix(64, HEX), "dop_v1_ tokens are scoped"),
    "databricks-token": ("token dapi" + _mix(32, HEX), _mix(32, HEX), "the dapi endpoint is /api/2.0"),
    "heroku-key": ("HEROKU " + "HRKU-AA" + _mix(58), _mix(58), "HRKU-AA is the v2 key prefix"),
    "vault-token": ("VAULT_TOKEN " + "hvs." + _mix(95), _mix(95), "hvs. tokens come from vault login"),
    "doppler-token": ("dp.pt." + _mix(43), _mix(43), "dp.pt. prefixes Doppler personal tokens"),
    "onepassword-token": ("OP " + "ops_eyJ" + _mix(260, B64), _mix(260, B64), "ops_eyJ starts a service account token"),
    "slack-webhook": ("post to https://" + "hooks.slack.com/services/" + "T0" + _mix(7) + "/B0" + _mix(7) + "/" + _mix(24),
                      _mix(24), "hooks.slack.com/services is where webhooks live"),
    "slack-token": ("bot " + "xoxb-" + "1234567890-" + _mix(24), _mix(24), "xoxb tokens are for bots"),
    "slack-app-token": ("xapp-1-" + "A0" + _mix(8).upper() + "-1234567890-" + _mix(20, HEX), _mix(20, HEX),
                        "xapp- tokens enable socket mode"),
    "teams-webhook": ("https://acme.webhook.office.com/webhookb2/" + UUID + "@" + UUID + "/IncomingWebhook/"
                      + _mix(32, HEX) + "/" + UUID, _mix(32, HEX), "post to webhook.office.com/webhookb2 via the connector"),
    "telegram-bot-token": ("bot " + "123456789:A" + _mix(34), _mix(34), "the chat id is 123456789:Alice"),
    "twilio-key": ("Twilio " + "SK" + _mix(32, HEX), _mix(32, HEX), "the SKU column and AC units"),
    "sendgrid-key": ("SG." + _mix(22) + "." + _mix(43), _mix(43), "SG.send() uses the key from the vault"),
    "stripe-key": ("stripe " + "sk_" + "live_" + _mix(24), _mix(24), "sk_live_ keys are for production"),
    "square-token": ("square " + "sq0atp-" + _mix(22), _mix(22), "sq0atp- marks Square access tokens"),
    "shopify-token": ("shpat_" + _mix(32, HEX), _mix(32, HEX), "shpat_ tokens come from custom apps"),
    "linear-key": ("lin_api_" + _mix(40), _mix(40), "lin_api_ keys are personal"),
    "sentry-token": ("sntryu_" + _mix(64, HEX), _mix(64, HEX), "sntryu_ marks user tokens"),
    "grafana-token": ("glsa_" + _mix(32) + "_" + _mix(8, HEX), _mix(32), "glsa_ tokens belong to service accounts"),
    "jwt": ("cookie " + "eyJhbGciOiJIUzI1NiJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0" + "." + _mix(30),
            _mix(30), "JWTs start with eyJ because of the JSON header"),
    "bearer-token": ("curl -H 'Authorization: Bearer " + _mix(32) + "'", _mix(32), "Bearer tokens are validated upstream"),
    "url-credentials": ("clone https://alice:" + "s3cr3t-pw" + "@git.example.com/x.git", "s3cr3t-pw",
                        "see https://git.example.com/alice/x.git@main"),
    "secret": ("client_secret=" + _mix(16), _mix(16), "password=os.environ['DB_PASSWORD'] at startup"),
    "password-prose": ("the staging db password is " + "hunter2", "hunter2", "the password is stored in the vault"),
    "azure-connection-string": ("DefaultEndpointsProtocol=https;AccountName=acme;" + "AccountKey=" + _mix(40, B64)
                                + ";EndpointSuffix=core.windows.net", _mix(40, B64),
                                "the connection string ends with AccountKey=<key>;EndpointSuffix=core.windows.net"),
    "aws-secret-key": ("our AWS secret is " + _mix(40, B64) + " for prod", _mix(40, B64),
                       "the AWS secret lives in the vault, under aws/prod/secret_access_key"),
    "generic-credential": ("API_TOKEN=" + _mix(18), _mix(18), "sort with key=lambda item: item.name"),
    "high-entropy-string": ("the staging token is probably " + _mix(28) + " now", _mix(28),
                            "the token name is internationalization_framework_v2"),
}


def test_every_shipped_rule_has_a_case():
    """A hand case here, an issue-37 form (tests/secrets/kinds.py), or (a rule adopted from
    gitleaks or detect-secrets) fresh samples of its own shape (tests/secrets/test_rule_set.py)."""
    from tests.secrets.kinds import ISSUE_FORMS
    from tests.secrets.samples import adopted_rules

    ids = [rule.id for rule in rules()]
    assert len(ids) == len(set(ids))
    assert set(CASES) <= set(ids)
    assert set(ids) - set(CASES) <= {rule.id for rule in adopted_rules()} | set(ISSUE_FORMS)


def test_rules_are_package_data_naming_their_source():
    data = json.loads(RULES_FILE.read_text(encoding="utf-8"))
    assert all(rule["from"] for rule in data["rules"])
    assert sum("gitleaks" in rule["from"] for rule in data["rules"]) >= 30


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_rule_redacts_its_secret(rule_id):
    text, secret, _near_miss = CASES[rule_id]
    out = redact(text)
    assert secret not in out, out
    assert f"[REDACTED:{rule_id}]" in out, out
    assert redact(out) == out


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_rule_leaves_a_near_miss_alone(rule_id):
    near_miss = CASES[rule_id][2]
    assert redact(near_miss) == near_miss


@pytest.mark.parametrize("text", [
    "Read it at startup: password=os.environ['DB_PASSWORD']",
    "the password is $DB_PASSWORD in the compose file",
    "api_key: process.env.OPENAI_API_KEY",
])
def test_where_a_secret_lives_is_kept(text):
    assert redact(text) == text


def test_crash_logs_redact_argv_and_the_traceback(team_repo, capsys, monkeypatch):
    from neo_git.cli import facts as facts_cli
    from neo_git.cli import main

    repo, _ = team_repo
    token = "ghp_" + _mix(36)
    hook = "https://" + "hooks.slack.com/services/" + "T0" + _mix(7) + "/B0" + _mix(7) + "/" + _mix(24)

    def explode(args):
        raise RuntimeError(f"request to {hook} failed with token {token}")

    monkeypatch.setattr(facts_cli, "cmd_add", explode)
    assert main(["add", f"deploy key {token}", f"webhook {hook}"]) == 3
    err = capsys.readouterr().err
    logs = list((repo / ".git" / "neo").glob("crash-*.log"))
    assert logs
    for text in [err] + [p.read_text() for p in logs]:
        assert token not in text and _mix(24) not in text
    assert "[REDACTED:github-token]" in logs[-1].read_text()


def test_listed_kinds_never_reach_the_ref_or_neo_home(team_repo, isolated_env, capsys):
    from tests.helpers.git import git

    repo, _ = team_repo
    secrets = {k: CASES[k] for k in ("private-key", "slack-webhook", "huggingface-token", "azure-storage-key",
                                     "twilio-key", "password-prose")}
    body = "\n".join(text for text, _secret, _miss in secrets.values())
    for scope in ("project", "global"):
        result = neo(capsys, "add", "--scope", scope, "--json", f"Credentials for {scope}", body)
        assert result.code == 0, result.err
    stored = git(repo, "log", "-p", "refs/neo/facts") + "".join(
        p.read_text() for p in (isolated_env / ".neo").rglob("*.json"))
    for rule_id, (_text, secret, _miss) in secrets.items():
        assert secret not in stored, rule_id
        assert f"[REDACTED:{rule_id}]" in stored


def test_a_secret_in_a_tag_or_source_file_is_refused_never_written(tmp_path):
    from neo_git.errors import InvalidFact
    from neo_git.store import FactStore

    store = FactStore.in_memory()
    token = "hf_" + "abcdefghij" * 3 + "abcd"
    with pytest.raises(InvalidFact, match="looks like a secret"):
        store.add("Model download", "Pull the model once.", tags=[token])
    with pytest.raises(InvalidFact, match="looks like a secret"):
        store.add("Model download", "Pull the model once.", source_file=token)
    assert store.list(include_invalid=True) == []
