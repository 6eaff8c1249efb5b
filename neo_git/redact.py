"""Secrets never leave the machine: redact keys and tokens from text.

Applied to every fact before it is written (the project ref is pushed to
teammates; ~/.neo is exported), to crash reports, and, later, to every prompt
before it is sent. The patterns are data, `redact_rules.json` beside this file,
adapted from gitleaks' and detect-secrets' published rule sets (each rule names
the one it follows), so the list grows by reviewing those projects, not by
guessing. Values that only say where a secret lives (`os.environ[...]`,
`$DB_PASSWORD`, `process.env.X`) are kept: that is advice, not a secret.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

RULES_FILE = Path(__file__).with_name("redact_rules.json")


class Rule(NamedTuple):
    """One secret pattern: `[REDACTED:<id>]` replaces group *group* (0: the whole match)."""

    id: str
    pattern: re.Pattern[str]
    keywords: tuple[str, ...]
    group: int
    entropy: float = 0.0      # least Shannon entropy (bits per character) of what is redacted
    shape: str = ""           # "digit": must hold a digit; "mixed": upper, lower and a digit


@lru_cache(maxsize=1)
def rules() -> tuple[Rule, ...]:
    """The shipped rules, compiled once per process."""
    data = json.loads(RULES_FILE.read_text(encoding="utf-8"))
    return tuple(Rule(r["id"], re.compile(r["regex"]), tuple(k.lower() for k in r.get("keywords") or ()),
                      int(r.get("group", 0)), float(r.get("entropy", 0.0)), str(r.get("shape", "")))
                 for r in data["rules"])


def shannon_entropy(text: str) -> float:
    """Bits per character of *text* (gitleaks' and detect-secrets' measure)."""
    if not text:
        return 0.0
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_secret(value: str, rule: Rule) -> bool:
    """The rule's entropy floor and shape, for rules that match words as well as secrets."""
    if rule.entropy and shannon_entropy(value) < rule.entropy:
        return False
    if rule.shape in ("digit", "mixed") and not any(c.isdigit() for c in value):
        return False
    if rule.shape == "mixed" and not (any(c.isupper() for c in value) and any(c.islower() for c in value)):
        return False
    return True


def redact(text: str) -> str:
    """Replace anything that looks like a credential with `[REDACTED:<rule id>]`."""
    if not text:
        return text
    lowered = text.lower()
    for rule in rules():
        if rule.keywords and not any(k in lowered for k in rule.keywords):
            continue
        if rule.group:
            changed = rule.pattern.sub(lambda m, r=rule: _replace_group(m, r), text)
        elif rule.entropy or rule.shape:
            changed = rule.pattern.sub(lambda m, r=rule: f"[REDACTED:{r.id}]" if _looks_secret(m.group(0), r)
                                       else m.group(0), text)
        else:
            changed = rule.pattern.sub(f"[REDACTED:{rule.id}]", text)
        if changed != text:
            text, lowered = changed, changed.lower()
    return text


def _replace_group(match: re.Match[str], rule: Rule) -> str:
    start, end = match.span(rule.group)
    if start < 0 or not _looks_secret(match.group(rule.group), rule):
        return match.group(0)
    base = match.start(0)
    whole = match.group(0)
    return whole[:start - base] + f"[REDACTED:{rule.id}]" + whole[end - base:]


def redact_value(value):
    """*value* (a string, or a JSON-like list/dict of them) with every string redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_value(v) for v in value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    return value


def redact_fact(fact, max_prompt: int = 200):
    """*fact* with every free text redacted: subject, body and what a person or tool wrote into
    its metadata (`source_prompt`, `author`, `invalidation`, e.g. its `detail`). The same fact
    object when nothing changes, so ids and bytes stay as they were."""
    meta = fact.metadata
    changes: dict = {}
    for key in ("source_prompt", "author"):
        value = getattr(meta, key, None)
        if isinstance(value, str) and value:
            red = redact(value)
            if red != value:
                changes[key] = red[:max_prompt] if key == "source_prompt" else red[:512]
    if meta.invalidation:
        red = redact_value(dict(meta.invalidation))
        if red != meta.invalidation:
            changes["invalidation"] = red
    subject, body = redact(fact.subject), redact(fact.body)
    if not changes and subject == fact.subject and body == fact.body:
        return fact
    return fact.evolve(subject=subject, body=body, **({"metadata": changes} if changes else {}))


def contains_secret(text: str) -> bool:
    """True if `redact` would change *text*."""
    return redact(text) != text


def refuse_secrets(**fields) -> None:
    """InvalidFact when a short field that cannot be redacted in place (a tag, a file name)
    holds something the rules call a secret: it would reach the shared ref verbatim."""
    from neo_git.errors import InvalidFact

    for name, value in fields.items():
        values = [value] if isinstance(value, str) else list(value or ())
        for item in values:
            if isinstance(item, str) and contains_secret(item):
                raise InvalidFact(f"the {name.replace('_', ' ')} {redact(item)!r} looks like a secret",
                                  "tags and file names are shared as they are; leave the secret out")
