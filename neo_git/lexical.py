"""Words as evidence: the terms of a text, and the Okapi BM25 parameters the store's term index
(`store/term_index.py`) scores them with.

An embedder's cosine cannot tell "worded differently" from "unrelated"; the words a question
shares with a fact, weighted by how rare each is among the stored facts (IDF), can. Recall
fuses both (`neo_git.relevance`). A term is a lower-cased word with its inflection stripped
(`stem`), minus the words every question and fact has (`STOPWORDS`); an identifier also counts
by its parts (`max_connections` → max_connections, max, connection).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

K1 = 1.2   # Okapi BM25's usual parameters (Robertson & Zaragoza 2009)
B = 0.75

_TOKEN = re.compile(r"[^\W_]+(?:[_.'][^\W_]+)*|[^\W\d_]+", re.UNICODE)
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

# Function words and the words of asking ("how do we …", "what should I …"): they say nothing
# about what a question or a fact is about.
STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing done down during each either else etc every
few for from further get gets got had has have having he her here hers herself him himself his how
i if in into is it its itself just let lets like may me might more most must my myself no nor not
now of off on once one only or other ought our ours ourselves out over own per please rather really
same say says shall she should so some such than that the their theirs them themselves then there
these they this those through thus to too under until up upon us use used uses using very via was
we were what when where whether which while who whom whose why will with within without would yes
yet you your yours yourself yourselves s t don isn aren wasn weren doesn didn won wouldn shouldn
couldn can't let's what's where's who's how's it's i'm we're they're you're i've we've
""".split())


@lru_cache(maxsize=1 << 15)
def stem(word: str) -> str:
    """*word* (lower case) without its common English inflection: "timeouts" → "timeout",
    "retries" → "retry", "caching" → "cach", "configured" → "configur". Light on purpose: both a
    question and a fact go through it, so it only has to map a word's forms to one key."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ness", ""), ("ments", ""), ("ment", ""),
                         ("ations", "at"), ("ation", "at"), ("ings", ""), ("ing", ""), ("edly", ""),
                         ("ed", ""), ("ers", "er"), ("ly", ""), ("es", "e"), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            base = word[: len(word) - len(suffix)] + keep
            if suffix in ("ing", "ed", "ings") and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]   # "stopped" → "stop", "running" → "run"
            return base.rstrip("e") if len(base) > 4 else base
    return word.rstrip("e") if len(word) > 4 else word


@lru_cache(maxsize=1 << 14)
def terms(text: str) -> tuple[str, ...]:
    """The terms of *text*, in order (repeats kept: BM25 counts them)."""
    out: list[str] = []
    for token in _TOKEN.findall(text[:20000]):
        low = token.casefold()
        if low in STOPWORDS:
            continue
        parts = [p.casefold() for p in re.split(r"[_.']", token) if p]
        if len(parts) == 1:
            camel = _CAMEL.findall(token)
            parts = [p.casefold() for p in camel] if len(camel) > 1 else parts
        if len(parts) > 1:
            out.append(low)
            out += [stem(p) for p in parts if p not in STOPWORDS and len(p) > 1]
        elif len(low) > 1 or low.isdigit():
            out.append(stem(low))
    return tuple(out)


class Words(NamedTuple):
    """What a question's words found: BM25 by position, and the positions holding at least
    `store.term_index.RARE_SHARED` of its words that no other text has (with those words)."""

    bm25: dict[int, float]
    rare: dict[int, tuple[str, ...]]
