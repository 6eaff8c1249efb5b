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
import re
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


@lru_cache(maxsize=1)
def rules() -> tuple[Rule, ...]:
    """The shipped rules, compiled once per process."""
    data = json.loads(RULES_FILE.read_text(encoding="utf-8"))
    return tuple(Rule(r["id"], re.compile(r["regex"]), tuple(k.lower() for k in r.get("keywords") or ()),
                      int(r.get("group", 0)))
                 for r in data["rules"])


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
        else:
            changed = rule.pattern.sub(f"[REDACTED:{rule.id}]", text)
        if changed != text:
            text, lowered = changed, changed.lower()
    return text


def _replace_group(match: re.Match[str], rule: Rule) -> str:
    start, end = match.span(rule.group)
    if start < 0:
        return match.group(0)
    base = match.start(0)
    whole = match.group(0)
    return whole[:start - base] + f"[REDACTED:{rule.id}]" + whole[end - base:]


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
