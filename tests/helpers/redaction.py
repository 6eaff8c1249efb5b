"""Secrets in the shapes the redaction rules know, for the redaction tests and the secret corpus
(tests/secrets/kinds.py): a fake token body (`mix`) and, per hand-written rule, a text holding a
secret, the secret and a near miss that must stay as it is (`CASES`)."""
from __future__ import annotations

import string


def mix(n: int, alphabet: str = string.ascii_letters + string.digits, seed: int = 7) -> str:
    """A fake token body: *n* characters cycling through *alphabet* with a stride."""
    return "".join(alphabet[(seed + i * 11) % len(alphabet)] for i in range(n))


HEX = "0123456789abcdef"
LETTERS = string.ascii_letters
B64 = string.ascii_letters + string.digits + "+/"
UUID = "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"
PGP = ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + mix(64, B64) + "\n" + mix(40, B64)
       + "\n-----END PGP PRIVATE KEY BLOCK-----")

# rule id -> (text holding a secret, the secret, a near miss that must stay as it is)
CASES = {
    "private-key": (f"key:\n{PGP}\nthanks", PGP.split("\n")[2],
                    "Keys start with -----BEGIN PGP PUBLIC KEY BLOCK----- and are public."),
    "age-secret-key": ("age AGE-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58],
                       ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58], "age keys start with AGE-SECRET-KEY-1 and a bech32 body"),
    "anthropic-key": ("ANTHROPIC_API_KEY " + "sk-ant-" + "api03-" + mix(40), mix(40),
                      "Anthropic keys begin sk-ant- followed by the key"),
    "openai-key": ("use " + "sk-" + "proj-" + mix(30) + " here", mix(30), "the sk-learn package is not a key"),
    "huggingface-token": ("HF token " + "hf_" + mix(34, LETTERS), mix(34, LETTERS),
                          "set hf_hub_download(cache_dir=...) in the loader"),
    "huggingface-org-token": ("org " + "api_org_" + mix(34, LETTERS), mix(34, LETTERS), "the api_org_id column"),
    "perplexity-key": ("pplx-" + mix(48), mix(48), "pplx-api is the name of the client"),
    "github-token": ("push with " + "ghp_" + mix(36), mix(36), "ghp_ prefixes mark GitHub tokens"),
    "gitlab-token": ("CI uses " + "glpat-" + mix(20), mix(20), "glpat- tokens expire after a year"),
    "npm-token": ("//registry.npmjs.org/:_authToken=" + "npm_" + mix(36), mix(36), "npm_config_cache points elsewhere"),
    "pypi-token": ("password = " + "pypi-AgEIcHlwaS5vcmc" + mix(60), mix(60), "pypi-AgEI tokens start like this"),
    "aws-access-key": ("aws_access_key_id = " + "AKIA" + "Q3EGRZ7T4NPLHW2X", "Q3EGRZ7T4NPLHW2X", "AKIA marks AWS keys"),
    "azure-storage-key": ("DefaultEndpointsProtocol=https;AccountName=acme;" + "AccountKey=" + mix(86, B64) + "==;",
                          mix(86, B64), "set AccountKey=<your key> in the connection string"),
    "azure-ad-client-secret": ('secret: "' + "abc" + "8Q~" + mix(34, string.ascii_letters + "_~.") + '"',
                               mix(34, string.ascii_letters + "_~."), "the Q~ marker is part of Azure secrets"),
    "google-api-key": ("key=" + "AIza" + mix(35), mix(35), "AIza is how Google keys begin"),
    "digitalocean-token": ("doctl auth " + "dop_v1_" + mix(64, HEX), mix(64, HEX), "dop_v1_ tokens are scoped"),
    "databricks-token": ("token dapi" + mix(32, HEX), mix(32, HEX), "the dapi endpoint is /api/2.0"),
    "heroku-key": ("HEROKU " + "HRKU-AA" + mix(58), mix(58), "HRKU-AA is the v2 key prefix"),
    "vault-token": ("VAULT_TOKEN " + "hvs." + mix(95), mix(95), "hvs. tokens come from vault login"),
    "doppler-token": ("dp.pt." + mix(43), mix(43), "dp.pt. prefixes Doppler personal tokens"),
    "onepassword-token": ("OP " + "ops_eyJ" + mix(260, B64), mix(260, B64), "ops_eyJ starts a service account token"),
    "slack-webhook": ("post to https://" + "hooks.slack.com/services/" + "T0" + mix(7) + "/B0" + mix(7) + "/" + mix(24),
                      mix(24), "hooks.slack.com/services is where webhooks live"),
    "slack-token": ("bot " + "xoxb-" + "1234567890-" + mix(24), mix(24), "xoxb tokens are for bots"),
    "slack-app-token": ("xapp-1-" + "A0" + mix(8).upper() + "-1234567890-" + mix(20, HEX), mix(20, HEX),
                        "xapp- tokens enable socket mode"),
    "teams-webhook": ("https://acme.webhook.office.com/webhookb2/" + UUID + "@" + UUID + "/IncomingWebhook/"
                      + mix(32, HEX) + "/" + UUID, mix(32, HEX), "post to webhook.office.com/webhookb2 via the connector"),
    "telegram-bot-token": ("bot " + "123456789:A" + mix(34), mix(34), "the chat id is 123456789:Alice"),
    "twilio-key": ("Twilio " + "SK" + mix(32, HEX), mix(32, HEX), "the SKU column and AC units"),
    "sendgrid-key": ("SG." + mix(22) + "." + mix(43), mix(43), "SG.send() uses the key from the vault"),
    "stripe-key": ("stripe " + "sk_" + "live_" + mix(24), mix(24), "sk_live_ keys are for production"),
    "square-token": ("square " + "sq0atp-" + mix(22), mix(22), "sq0atp- marks Square access tokens"),
    "shopify-token": ("shpat_" + mix(32, HEX), mix(32, HEX), "shpat_ tokens come from custom apps"),
    "linear-key": ("lin_api_" + mix(40), mix(40), "lin_api_ keys are personal"),
    "sentry-token": ("sntryu_" + mix(64, HEX), mix(64, HEX), "sntryu_ marks user tokens"),
    "grafana-token": ("glsa_" + mix(32) + "_" + mix(8, HEX), mix(32), "glsa_ tokens belong to service accounts"),
    "jwt": ("cookie " + "eyJhbGciOiJIUzI1NiJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0" + "." + mix(30),
            mix(30), "JWTs start with eyJ because of the JSON header"),
    "bearer-token": ("curl -H 'Authorization: Bearer " + mix(32) + "'", mix(32), "Bearer tokens are validated upstream"),
    "url-credentials": ("clone https://alice:" + "s3cr3t-pw" + "@git.example.com/x.git", "s3cr3t-pw",
                        "see https://git.example.com/alice/x.git@main"),
    "secret": ("client_secret=" + mix(16), mix(16), "password=os.environ['DB_PASSWORD'] at startup"),
    "password-prose": ("the staging db password is " + "hunter2", "hunter2", "the password is stored in the vault"),
    "azure-connection-string": ("DefaultEndpointsProtocol=https;AccountName=acme;" + "AccountKey=" + mix(40, B64)
                                + ";EndpointSuffix=core.windows.net", mix(40, B64),
                                "the connection string ends with AccountKey=<key>;EndpointSuffix=core.windows.net"),
    "aws-secret-key": ("our AWS secret is " + mix(40, B64) + " for prod", mix(40, B64),
                       "the AWS secret lives in the vault, under aws/prod/secret_access_key"),
    "generic-credential": ("API_TOKEN=" + mix(18), mix(18), "sort with key=lambda item: item.name"),
    "high-entropy-string": ("the staging token is probably " + mix(28) + " now", mix(28),
                            "the token name is internationalization_framework_v2"),
}
