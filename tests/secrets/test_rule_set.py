"""The shipped rule set (neo_git/redact_rules.json) against its sources' own examples.

Every rule adopted from gitleaks (config/gitleaks.toml, converted from Go RE2 to Python `re`)
or detect-secrets catches fresh values of its own shape in every one of gitleaks' sample forms;
the forms issue 37's probe found leaking are caught, each by its own rule; ordinary text — hashes,
UUIDs, `$VAR`, base64 of words, URLs without credentials, versions, prose — comes back unchanged."""
from __future__ import annotations

import json
import random
import re
import time

import pytest

from neo_git.redact import RULES_FILE, _redact_rule, redact, rules
from tests.secrets.kinds import ISSUE_FORMS, ISSUE_NEAR_MISSES, KINDS, leaks
from tests.secrets.ordinary import ORDINARY
from tests.secrets.samples import SEED, adopted_rules, gitleaks_lines

_LINES: dict[str, list[tuple[str, str]]] = {}
for _rule_id, _line, _secret in gitleaks_lines():
    _LINES.setdefault(_rule_id, []).append((_line, _secret))


def test_the_rule_set_is_gitleaks_and_detect_secrets_as_data():
    data = json.loads(RULES_FILE.read_text(encoding="utf-8"))
    sources = [rule["from"] for rule in data["rules"]]
    assert all(sources)
    assert sum(s.startswith("gitleaks") for s in sources) >= 200   # the default rule set, rule by rule
    assert sum(s.startswith("detect-secrets") for s in sources) >= 20   # its plugins but the IP address one
    assert len(adopted_rules()) == len(_LINES)
    assert len(KINDS) >= 250


@pytest.mark.parametrize("rule_id", sorted(_LINES))
def test_adopted_rule_catches_fresh_values_in_every_sample_form(rule_id):
    """gitleaks' `GenerateSampleSecrets` forms (and prose for tokens known by their prefix), each
    with a value drawn from the rule's own secret pattern: nothing of it is left."""
    missed = []
    for line, secret in _LINES[rule_id]:
        out = redact(line)
        if leaks(out, [(rule_id, line, secret)]) or "[REDACTED:" not in out:
            missed.append((line, out))
    assert not missed, missed[:3]


@pytest.mark.parametrize("rule_id", sorted(ISSUE_FORMS))
def test_issue_forms_are_caught_each_by_its_rule(rule_id):
    rule = next(r for r in rules() if r.id == rule_id)
    for text, secret in ISSUE_FORMS[rule_id]:
        assert secret not in _redact_rule(text, rule), text     # the rule itself, not only a generic one
        out = redact(text)
        assert secret not in out and "[REDACTED:" in out, out
        assert redact(out) == out


@pytest.mark.parametrize("rule_id", sorted(set(ISSUE_FORMS) - {"prefix-token"}))
def test_the_text_around_a_redacted_secret_is_kept(rule_id):
    """Only the secret goes: `curl --user u:XXXX https://ci/…` keeps its URL, `sshpass -p XXXX scp
    a host:/srv` its path (a mark's rule id, `…-password]`, is no keyword for the next rule)."""
    for text, secret in ISSUE_FORMS[rule_id]:
        out = redact(text)
        assert re.sub(r"\[REDACTED:[\w.-]*\]", "", out) == text.replace(secret, ""), out


@pytest.mark.parametrize("rule_id", sorted(ISSUE_NEAR_MISSES))
def test_issue_rules_leave_their_near_miss_alone(rule_id):
    text = ISSUE_NEAR_MISSES[rule_id]
    assert redact(text) == text


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_never_redacted(text):
    assert redact(text) == text


def test_a_corpus_of_ordinary_text_is_large_enough():
    assert len(ORDINARY) >= 50


def test_every_kind_is_redacted_and_redaction_is_stable():
    missed = [kind for kind, line, _secret in KINDS if leaks(redact(line), [k for k in KINDS if k[1] == line])]
    assert missed == []
    for _kind, line, _secret in KINDS[::7]:
        once = redact(line)
        assert redact(once) == once


def test_another_draw_is_caught_too():
    """A second seed: the rules catch the shapes, not the particular values of seed 37."""
    other = SEED + 1000
    rng = random.Random(other)
    rows = gitleaks_lines(other)
    sample = rng.sample(rows, 400)
    missed = [(rule_id, line) for rule_id, line, secret in sample if leaks(redact(line), [(rule_id, line, secret)])]
    assert missed == []


def test_secret_across_the_source_prompt_cut_is_redacted_whole():
    """The cut comes after redaction: a token across character 200 keeps nothing of itself."""
    from neo_git.facts import MAX_SOURCE_PROMPT_CHARS, FactMetadata

    token = "ghp_" + "".join(random.Random(5).choice("abcdefghijkLMNOPQRS0123456789") for _ in range(36))
    for start in range(MAX_SOURCE_PROMPT_CHARS - len(token) + 1, MAX_SOURCE_PROMPT_CHARS):
        prompt = "x" * (start - 1) + " " + token + " and more words after it"
        kept = FactMetadata.from_dict({"source_prompt": prompt}).source_prompt
        assert len(kept) <= MAX_SOURCE_PROMPT_CHARS
        assert token[4:12] not in kept and token[-8:] not in kept, (start, kept[-40:])


def test_ordinary_add_text_stays_fast():
    """Redaction runs on every add and hook: ordinary text of a fact costs well under a
    millisecond per kilobyte once the process is warm (measured figures: docs/design-notes.md)."""
    text = " ".join(ORDINARY[40:]) * 2
    redact(text)
    started = time.process_time()   # CPU time: on a shared machine wall time measures the neighbours
    for _ in range(20):
        redact(text)
    per_call = (time.process_time() - started) / 20
    assert per_call < 0.02, per_call   # ~1 ms measured


def test_patterns_are_compiled_only_when_their_keywords_appear():
    import subprocess
    import sys

    code = ("from neo_git.redact import redact, rules; redact('Always run the migrations before deploying.'); "
            "print(sum(r._pattern is not None for r in rules()), len(rules()))")
    compiled, total = map(int, subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                              check=True).stdout.split())
    assert total > 250 and compiled < 20


def test_long_texts_are_scanned_near_keywords_without_missing_anything():
    """Past WINDOW_MIN_CHARS a rule scans only the lines around its keywords: the whole corpus in
    one text, and each secret alone among pages of ordinary lines, leak nothing."""
    from neo_git.redact import WINDOW_MIN_CHARS

    joined = "\n".join(line for _k, line, _s in KINDS)
    assert len(joined) > WINDOW_MIN_CHARS
    assert leaks(redact(joined)) == []
    filler = "\n".join(ORDINARY[40:60])
    # The rules that span lines (key blocks) always scan the whole text, and one with no proper
    # END is redacted to the end of it: they have no windows to test, so they are left out here.
    whole = {r.id for r in rules() if r.whole}
    kinds = [k for k in KINDS[::5] if k[0].split(" ")[0] not in whole and "-----BEGIN" not in k[1]]
    sparse = "\n".join(f"{filler}\n{line}\n{filler}" for _k, line, _s in kinds)
    out = redact(sparse)
    assert leaks(out, kinds) == []
    assert out.count(ORDINARY[45]) == sparse.count(ORDINARY[45])   # the ordinary lines untouched


@pytest.mark.parametrize("name", [
    "migrations/**", "src/auth/token_store.py", "config/secrets.example.yaml", "docs/password-policy.md",
    "**/*.pem", "src/api_key/**", "tests/test_token_refresh.py:TestRefresh.test_expiry", "src/keys/aws_kms.py:10-40",
    "src/ApiKeyValidator.java", "vendor/github.com/aws/aws-sdk-go/**", "src/settings/pw_reset.py",
])
def test_ordinary_globs_and_citations_are_not_secrets(name):
    """Path globs and citations are refused when they hold a secret: file names about secrets are fine."""
    from neo_git.redact import contains_secret

    assert not contains_secret(name)
