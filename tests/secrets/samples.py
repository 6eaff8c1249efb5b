"""Fresh secrets in the shapes of the shipped rules, and the lines they are written in.

For every rule adopted from gitleaks or detect-secrets, a random value is drawn from the rule's
own secret pattern (its capture group, walked with `re._parser`), re-drawn until it passes the
rule's entropy floor and allowlists (gitleaks' own true positives must), and written in gitleaks'
sample forms (`utils.GenerateSampleSecrets`: INI, JSON, XML, YAML, Go, Java, Python, PHP, CSV,
Makefile, …) plus prose. Seeded (`NEO_SECRET_SEED` picks another draw), so a failure repeats.
Nothing here is a real secret; the values exist only at run time."""
from __future__ import annotations

import os
import random
import re
import string

try:
    from re import (
        _constants as C,  # Python 3.11+
        _parser as P,
    )
except ImportError:  # pragma: no cover - older Pythons
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

from neo_git.redact import _looks_secret, _span, rules

SEED = int(os.environ.get("NEO_SECRET_SEED", "37"))
PRINTABLE = string.ascii_letters + string.digits + "_-+/=.~!@#%^&*"
_CATEGORY = {
    C.CATEGORY_DIGIT: string.digits, C.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    C.CATEGORY_SPACE: " ", C.CATEGORY_NOT_DIGIT: string.ascii_letters, C.CATEGORY_NOT_WORD: " ",
    C.CATEGORY_NOT_SPACE: string.ascii_letters + string.digits,
}


def _charset(items, rng: random.Random) -> str:
    """One character of an `IN` node ([...])."""
    negate = any(op is C.NEGATE for op, _ in items)
    allowed: list[str] = []
    for op, av in items:
        if op is C.LITERAL:
            allowed.append(chr(av))
        elif op is C.RANGE:
            allowed.extend(chr(c) for c in range(av[0], av[1] + 1) if chr(c) in string.printable)
        elif op is C.CATEGORY:
            allowed.extend(_CATEGORY.get(av, ""))
    if negate:
        return rng.choice([c for c in PRINTABLE if c not in allowed])
    return rng.choice(allowed)


def _walk(tree, rng: random.Random, groups: dict, out: list[str], repeated: bool = False) -> None:
    for op, av in tree:
        if op is C.LITERAL:
            out.append(chr(av))
        elif op is C.NOT_LITERAL:
            out.append(rng.choice([c for c in string.ascii_letters if ord(c) != av]))
        elif op is C.ANY:
            # a lone `.` stands for a dot (gitleaks writes `hooks.slack.com`); `.{8,}` for anything
            out.append(rng.choice(string.ascii_letters + string.digits) if repeated else ".")
        elif op is C.IN:
            out.append(_charset(av, rng))
        elif op is C.BRANCH:
            _walk(rng.choice(av[1]), rng, groups, out, repeated)
        elif op is C.SUBPATTERN:
            group, _add, _del, sub = av
            start = len(out)
            _walk(sub, rng, groups, out, repeated)
            if group:
                groups[group] = "".join(out[start:])
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
            low, high, sub = av
            high = low + 6 if high is C.MAXREPEAT or high > low + 6 else high
            count = low if op is C.MIN_REPEAT else rng.randint(low, max(low, high))   # lazy: the least
            for _ in range(count):
                _walk(sub, rng, groups, out, True)
        elif op is C.GROUPREF:
            out.append(groups.get(av, ""))
        elif op is getattr(C, "ATOMIC_GROUP", None):
            _walk(av, rng, groups, out)
        elif op in (C.AT, C.ASSERT_NOT) and out and out[-1][-1:].isalnum() and (
                op is C.ASSERT_NOT or av is C.AT_BOUNDARY):
            out.append(" ")   # a word boundary or a "not after a word character": keep the words apart
        # other anchors and lookarounds: nothing to write


def draw(regex: str, rng: random.Random) -> str:
    """A random string in the language of *regex* (lookarounds and anchors ignored)."""
    out: list[str] = []
    _walk(P.parse(regex), rng, {}, out)
    return "".join(out)


def _group_pattern(regex: str, number: int) -> str | None:
    """The source text of capture group *number* of *regex*, or None."""
    depth_starts: list[tuple[int, int | None]] = []
    count = 0
    i = 0
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":   # skip a character class
            j = i + 1
            if j < len(regex) and regex[j] == "^":
                j += 1
            if j < len(regex) and regex[j] == "]":
                j += 1
            while j < len(regex) and regex[j] != "]":
                j += 2 if regex[j] == "\\" else 1
            i = j + 1
            continue
        if c == "(":
            capturing = not regex.startswith("(?", i) or regex.startswith("(?P<", i)
            if capturing:
                count += 1
            depth_starts.append((i, count if capturing else None))
        elif c == ")":
            start, n = depth_starts.pop()
            if n == number:
                inner = regex[start + 1:i]
                return inner[inner.index(">") + 1:] if inner.startswith("?P<") else inner
        i += 1
    return None


# gitleaks' identifier for the sample lines of a rule, where its first keyword is not one
IDENTIFIER = {
    "database-password": "db_password", "hashicorp-tf-password": "password", "lob-api-key": "lob",
    "lob-pub-api-key": "lob", "gocardless-api-token": "gocardless", "new-relic-browser-api-token": "newrelic",
    "new-relic-insert-key": "newrelic", "new-relic-user-api-key": "newrelic", "typeform-api-token": "typeform",
    "snyk-api-token": "snyk_key", "sonar-api-token": "sonar_login", "cohere-api-token": "cohere",
    "sidekiq-secret": "BUNDLE_ENTERPRISE__CONTRIBSYS__COM", "mailchimp-api-key": "mailchimp",
    "jfrog-api-key": "jfrog", "jfrog-identity-token": "jfrog", "telegram-bot-api-token": "telegram",
    "okta-access-token": "okta", "etsy-access-token": "etsy", "cisco-meraki-api-key": "meraki",
    "sumologic-access-id": "sumo", "sumologic-access-token": "sumo", "sourcegraph-access-token": "sourcegraph",
}
# rules whose secret, alone, has the shape of a hash: written only next to their name
NAMED = {"sourcegraph-access-token"}
# gitleaks' GenerateSampleSecrets forms ({i}: identifier, {s}: secret), and prose
FORMS = [
    '{i}Token="{s}"', '{i}Token = "{s}"', "{i}Token={s}", "{i}Token = {s}",
    '{{\n    "{i}_token": "{s}"\n}}', '\\{{\n    \\"{i}_token\\": \\"{s}\\"\n\\}}', "<{i}Token>{s}</{i}Token>", "<{i}Token>\n    {s}\n</{i}Token>",
    "{i}_token: {s}", "{i}_token: '{s}'", '{i}_token: "{s}"', "{i}_token: |\n  {s}", "{i}_token: >\n  {s}",
    'string {i}Token = "{s}";', 'var {i}Token string = "{s}"', '{i}Token := "{s}"', "{i}Token := `{s}`",
    'String {i}Token = "{s}";', 'var {i}Token = "{s}"', '${i}Token .= "{s}"', "{i}Token = '{s}'",
    "{i}Token,{s},", '  "{i}Token" => "{s}"', '{i}_TOKEN = "{s}"', '{i}_TOKEN := "{s}"', '{i}_TOKEN ::= "{s}"',
    '{i}_TOKEN :::= "{s}"', '{i}_TOKEN ?= "{s}"', '{i}_TOKEN += "{s}"', '{i}_api_token = "{s}"', "{i}:={s}",
]
PROSE = ["use {s} for the CI bot", "the {i} key is {s}, rotate it monthly", "{s}"]   # tokens known by shape
SEMI_PROSE = ["the {i} token: {s} (rotate it monthly)"]   # a shape only next to its name: a hash alone is no secret
SOURCES = ("gitleaks", "detect-secrets")


def adopted_rules():
    """The rules taken from gitleaks or detect-secrets (each with a `from` naming its source)."""
    import json

    from neo_git.redact import RULES_FILE

    sources = {r["id"]: r["from"] for r in json.loads(RULES_FILE.read_text(encoding="utf-8"))["rules"]}
    return [r for r in rules() if sources[r.id].startswith(SOURCES)]


def sample(rule, rng: random.Random, tries: int = 200) -> tuple[str, str, bool]:
    """(text, secret, semi) for *rule*: the secret drawn from its capture group (or whole pattern),
    *text* a whole match of the rule when the rule needs context around its secret, else the
    secret alone (the forms add the identifier). Re-drawn until the rule's own checks pass."""
    semi = "(?:[ \\t\\w.-]{0,20})" in rule.regex and rule.id != "atlassian-api-token"
    uniq = re.match(r"(?:\(\?i\))?\\b\((?!\?)", rule.regex) is not None
    for _ in range(tries):
        if semi:
            secret_rx = _group_pattern(rule.regex, 1)
            secret = draw(secret_rx, rng)
            text = secret
        elif not uniq:
            text = draw(rule.regex, rng)
            match = rule.pattern.search(text)
            if not match:
                continue
            start, end = _span(match, rule.group)
            if start < 0:
                continue
            secret = text[start:end]
        else:
            secret = draw(_group_pattern(rule.regex, 1), rng)
            text = secret
        probe = rule.pattern.search(text if not semi else f"{IDENTIFIER.get(rule.id, rule.keywords[0])}_token = \"{secret}\"")
        if probe is None:
            continue
        start, end = _span(probe, rule.group)
        if start < 0 or not _looks_secret(probe.string[start:end], rule, probe.group(0)):
            continue
        if len(set(secret)) < 4:
            continue
        return text, secret, semi
    raise AssertionError(f"no sample drawn for {rule.id}")


def gitleaks_lines(seed: int = SEED) -> list[tuple[str, str, str]]:
    """(rule id, line, secret) for every adopted rule in every form: its own examples, fresh."""
    rows = []
    for rule in adopted_rules():
        rng = random.Random(f"{seed}:{rule.id}")
        text, secret, semi = sample(rule, rng)
        ident = IDENTIFIER.get(rule.id, re.sub(r"[^A-Za-z0-9_]", "", rule.keywords[0]) if rule.keywords else "app")
        if semi or text == secret:
            for form in FORMS + (SEMI_PROSE if semi or rule.id in NAMED else PROSE):
                rows.append((rule.id, form.format(i=ident, s=secret), secret))
        else:
            rows.append((rule.id, text, secret))
            rows.append((rule.id, f"see this:\n{text}\nthanks", secret))
    return rows


def one_line_per_rule(seed: int = SEED) -> list[tuple[str, str, str]]:
    """(kind, line, secret): one sample line per adopted rule (its first form), for the path tests."""
    seen: set[str] = set()
    out = []
    for rule_id, line, secret in gitleaks_lines(seed):
        if rule_id not in seen:
            seen.add(rule_id)
            out.append((rule_id, line, secret))
    return out
