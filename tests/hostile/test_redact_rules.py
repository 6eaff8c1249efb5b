"""Case 7: every shipped redaction rule catches its secret and leaves a near miss alone.

Secrets are assembled at run time (and are fake) so this file does not trip scanners."""
from __future__ import annotations

import json

import pytest

from neo_git.redact import RULES_FILE, redact, rules
from tests.helpers.plumbing import neo
from tests.helpers.redaction import CASES, mix


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
    from neo_git.cli import facts as facts_cli, main

    repo, _ = team_repo
    token = "ghp_" + mix(36)
    hook = "https://" + "hooks.slack.com/services/" + "T0" + mix(7) + "/B0" + mix(7) + "/" + mix(24)

    def explode(args):
        raise RuntimeError(f"request to {hook} failed with token {token}")

    monkeypatch.setattr(facts_cli, "cmd_add", explode)
    assert main(["add", f"deploy key {token}", f"webhook {hook}"]) == 3
    err = capsys.readouterr().err
    logs = list((repo / ".git" / "neo").glob("crash-*.log"))
    assert logs
    for text in [err] + [p.read_text() for p in logs]:
        assert token not in text and mix(24) not in text
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
