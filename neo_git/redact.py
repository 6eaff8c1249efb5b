"""Secrets never leave the machine: redact keys and tokens from text.

Applied to every fact before it is written (the project ref is pushed to teammates; ~/.neo
is exported), to suggestions, notes, logs and crash reports, and to every prompt before it
is sent. The patterns are data, `redact_rules.json` beside this file: gitleaks' default rule
set and detect-secrets' plugins converted rule by rule (each rule names the one it follows,
its `about` says how they were converted), so the list grows by reviewing those projects, not
by guessing. Values that only say where a secret lives (`os.environ[...]`, `$DB_PASSWORD`,
`process.env.X`) are kept: that is advice, not a secret.

Cost: a rule runs only on text holding one of its keywords, is compiled the first time it
runs, and in a text past WINDOW_MIN_CHARS scans only the lines around its keywords; an
ordinary fact costs well under a millisecond (benchmarks/redact_bench.py).
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from neo_git.fact_schema import Citation

RULES_FILE = Path(__file__).with_name("redact_rules.json")
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_+=-]*")   # what still belongs to a token after a rule's match (a slash starts a path)
_NEWLINE = re.compile(r"\n")
_MARK = re.compile(r"\[REDACTED:[\w.-]*\]")
_WORD = re.compile(r"[A-Za-z]?[a-z]+(?:[-_.][a-z]+)*\.?")   # a word (or words-joined), never a secret


class Rule:
    """One secret pattern: `[REDACTED:<id>]` replaces group *group* of each match (0: the whole
    match; -1: the first group that took part). Compiled on first use: most texts hold none of a
    rule's keywords, so most of the few hundred patterns are never compiled in a process."""

    __slots__ = ("id", "regex", "keywords", "group", "entropy", "shape", "allow", "allow_match", "whole", "_pattern")

    def __init__(self, id: str, regex: str, keywords: tuple[str, ...], group: int, entropy: float = 0.0,
                 shape: str = "", allow: tuple[str, ...] = (), allow_match: tuple[str, ...] = (),
                 whole: bool = False):
        self.id, self.regex, self.keywords, self.group = id, regex, keywords, group
        self.entropy, self.shape = entropy, shape            # least bits per character; digit/mixed/notword
        self.allow, self.allow_match = allow, allow_match    # gitleaks' allowlists: on the secret, on the match
        self.whole = whole   # its matches span many lines (a key block): never scanned in windows
        self._pattern: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._pattern is None:
            self._pattern = re.compile(self.regex)
        return self._pattern

    def __repr__(self) -> str:
        return f"Rule({self.id!r})"


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RULES_FILE.read_text(encoding="utf-8"))
    return data


@lru_cache(maxsize=1)
def rules() -> tuple[Rule, ...]:
    """The shipped rules, in order (specific token shapes first, generic assignments last)."""
    out = []
    for r in _data()["rules"]:
        group = r.get("group", 0)
        out.append(Rule(r["id"], r["regex"], tuple(k.lower() for k in r.get("keywords") or ()),
                        -1 if group == "first" else int(group), float(r.get("entropy", 0.0)), str(r.get("shape", "")),
                        tuple(r.get("allow") or ()), tuple(r.get("allow_match") or ()), r.get("scope") == "text"))
    return tuple(out)


@lru_cache(maxsize=1)
def _global_allow() -> tuple[re.Pattern[str], ...]:
    """gitleaks' global allowlist: placeholders and references (`$VAR`, `${VAR}`, `{{ x }}`, `true`)."""
    return tuple(re.compile(a) for a in _data().get("allow") or ())


@cache
def _compiled(regex: str) -> re.Pattern[str]:
    return re.compile(regex)


def shannon_entropy(text: str) -> float:
    """Bits per character of *text* (gitleaks' and detect-secrets' measure)."""
    if not text:
        return 0.0
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_secret(value: str, rule: Rule, match: str = "") -> bool:
    """The rule's entropy floor, shape and allowlists, for rules that match words as well as secrets."""
    if rule.entropy and shannon_entropy(value) < rule.entropy:
        return False
    if rule.shape in ("digit", "mixed") and not any(c.isdigit() for c in value):
        return False
    if rule.shape == "mixed" and not (any(c.isupper() for c in value) and any(c.islower() for c in value)):
        return False
    if rule.shape == "notword" and _WORD.fullmatch(value):
        return False
    if any(p.search(value) for p in _global_allow()):
        return False
    if rule.allow and any(_compiled(a).search(value) for a in rule.allow):
        return False
    if rule.allow_match and any(_compiled(a).search(match) for a in rule.allow_match):
        return False
    return True


def _span(match: re.Match[str], group: int) -> tuple[int, int]:
    if group >= 0:
        return match.span(group)
    for n in range(1, (match.re.groups or 0) + 1):
        if match.start(n) >= 0:
            return match.span(n)
    return match.span(0)


def _matches(rule: Rule, text: str, spans: Iterable[tuple[int, int]] | None) -> Iterator[re.Match[str]]:
    if spans is None:
        yield from rule.pattern.finditer(text)
        return
    for lo, hi in spans:
        yield from rule.pattern.finditer(text, lo, hi)


def _redact_rule(text: str, rule: Rule, spans: Iterable[tuple[int, int]] | None = None) -> str:
    """*text* with every secret *rule* finds (in *spans* of it, when given) replaced, and the rest
    of a token a bounded pattern stopped inside of (a longer token than the rule's shape is still
    that token)."""
    pieces: list[str] = []
    last = 0
    marks = [m.span() for m in _MARK.finditer(text)] if "[REDACTED:" in text else []
    # A mark's rule id is our word, not the user's: `[REDACTED:sshpass-password] scp a host:/srv`
    # must not read as "password … : /srv". Rules scan a copy with the ids blanked (same length).
    scan = _MARK.sub(lambda m: "[REDACTED:" + "_" * (len(m.group()) - 11) + "]", text) if marks else text
    for match in _matches(rule, scan, spans):
        start, end = _span(match, rule.group)
        if start < 0 or start == end or start < last:
            continue
        if marks and any(a < end and start < b for a, b in marks):   # already redacted: leave it
            continue
        if not _looks_secret(text[start:end], rule, match.group(0)):
            continue
        tail = _TOKEN_TAIL.match(text, end)
        assert tail is not None  # the pattern matches the empty string
        end = tail.end()
        pieces.append(text[last:start])
        pieces.append(f"[REDACTED:{rule.id}]")
        last = end
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


WINDOW_MIN_CHARS = 4096   # shorter texts are scanned whole by every rule whose keyword they hold
WINDOW_LINES = 6          # lines around a keyword's line that a rule scans in a longer text


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in _NEWLINE.finditer(text)]


def _windows(text: str, lowered: str, keywords: tuple[str, ...], starts: list[int]) -> list[tuple[int, int]] | None:
    """The character spans of a long *text* a rule needs to scan: the lines holding one of its
    keywords, with WINDOW_LINES lines either side (a secret sits next to its keyword, and the
    multi-line forms — YAML blocks, XML elements, a curl command — are shorter than that). None
    when they would cover most of the text anyway."""
    import bisect

    hits = sum(lowered.count(k) for k in keywords)
    if hits * (2 * WINDOW_LINES + 1) > len(starts) * 0.6:
        return None   # the windows would cover most lines: scan it whole
    wanted: set[int] = set()
    for keyword in keywords:
        at = lowered.find(keyword)
        while at >= 0:
            line = bisect.bisect_right(starts, at) - 1
            last = bisect.bisect_right(starts, at + len(keyword) - 1) - 1
            wanted.update(range(max(0, line - WINDOW_LINES), min(len(starts), last + WINDOW_LINES + 1)))
            at = lowered.find(keyword, at + 1)
    spans: list[tuple[int, int]] = []
    for line in sorted(wanted):
        lo, hi = starts[line], starts[line + 1] if line + 1 < len(starts) else len(text)
        if spans and spans[-1][1] == lo:
            spans[-1] = (spans[-1][0], hi)
        else:
            spans.append((lo, hi))
    if sum(hi - lo for lo, hi in spans) > len(text) * 0.6:
        return None
    return spans


def redact(text: str) -> str:
    """Replace anything that looks like a credential with `[REDACTED:<rule id>]`. Redact whole
    texts, before any cut: a token cut in two may no longer look like one. A rule runs only on
    a text holding one of its keywords (gitleaks' prefilter) and, in a long text, only near them."""
    if not text:
        return text
    lowered = text.lower()
    long = len(text) >= WINDOW_MIN_CHARS
    starts: list[int] | None = None
    for rule in rules():
        if rule.keywords and not any(k in lowered for k in rule.keywords):
            continue
        spans = None
        if long and rule.keywords and not rule.whole:
            starts = starts if starts is not None else _line_starts(text)
            spans = _windows(text, lowered, rule.keywords, starts)
        changed = _redact_rule(text, rule, spans)
        if changed != text:
            text, lowered, starts = changed, changed.lower(), None
    return text


def redact_value(value: Any) -> Any:
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


def contains_secret(text: str) -> bool:
    """True if `redact` would change *text*."""
    return redact(text) != text


def citation_names(citations: Iterable[Citation]) -> list[str]:
    """The names a fact's citations carry (what was cited, the path, the symbol): shared as written."""
    return [name for citation in citations or () for name in (citation.cited, citation.path, citation.symbol) if name]


_NAMES = {"tags": "tag", "paths": "path glob", "citations": "citation", "source_file": "source file"}


def refuse_secrets(**fields: str | Iterable[str] | None) -> None:
    """InvalidFact when a short field that cannot be redacted in place (a tag, a file name, a
    `--path` glob, a citation) holds something the rules call a secret: it would reach the
    shared ref verbatim."""
    from neo_git.errors import InvalidFact

    for name, value in fields.items():
        values = [value] if isinstance(value, str) else list(value or ())
        for item in values:
            if isinstance(item, str) and contains_secret(item):
                what = _NAMES.get(name, name.replace("_", " "))
                raise InvalidFact(f"the {what} {redact(item)!r} looks like a secret",
                                  "tags, path globs, citations and file names are shared as they are; "
                                  "leave the secret out")
