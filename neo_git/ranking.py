"""How recall orders the facts it may return (docs/architecture.md §5).

The score is cos(query, fact) × confidence × (1 + success_bonus) × scope weight (× the
weights of claims and stale facts) + a recency boost; then the current-state rules:
ties go to the newer fact, retractions come last, and among related facts the newest
takes the best place (`newest_in_family`). `recall.assemble` packs what this ranks.
The rule switches (RETRACTIONS_LAST, NEWER_WINS_TIES, NEWEST_IN_FAMILY) exist for the
ablation `benchmarks/statebench_eval.py` prints.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, overload

from neo_git.citation_states import is_stale
from neo_git.facts import Fact, FactScope
from neo_git.knowledge import _RETRACTION, is_retraction  # noqa: F401 - re-exported
from neo_git.scoring import success_bonus
from neo_git.textkeys import FILLER, words

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

RECENCY_BOOST = 0.05
SESSION_WINDOW = timedelta(hours=4)   # "touched in this session": created or recalled this recently
# A retraction stored as a fact quotes the stale text, so it resembles the question more than the
# correction does: retractions rank after every other fact (`knowledge.is_retraction`, which
# fact_table's rows record too).
# More specific scopes win ties: what this repository says beats what the org says.
SCOPE_WEIGHT = {FactScope.SESSION: 1.0, FactScope.PROJECT: 1.0, FactScope.ORG: 0.97, FactScope.GLOBAL: 0.94}
# A claim (a teammate's fact whose author is not trusted, see neo_git.sync.trust) ranks below
# trusted facts of similar relevance and never enters the always-included constraint layer.
CLAIM_WEIGHT = 0.5
# A stale fact (every code citation changed or gone, docs/architecture.md §13) ranks after the facts whose
# code still holds, and weighs less when the best few are picked.
STALE_WEIGHT = 0.5


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    return _parse_stamp(text)


@lru_cache(maxsize=1 << 16)
def _parse_stamp(text: str) -> datetime | None:
    # Cached: recall looks at the same created_at/last_accessed strings on every request.
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def recency_boost(fact: Fact, now: datetime, last_accessed: str | None = None) -> float:
    """A small boost for facts created or recalled in the current working session."""
    for stamp in (last_accessed, fact.metadata.last_accessed, fact.metadata.created_at):
        when = _parse_time(stamp)
        if when is not None and now - when <= SESSION_WINDOW:
            return RECENCY_BOOST
    return 0.0


def rank_score(cosine: float, fact: Fact, now: datetime, last_accessed: str | None = None,
               claim: bool = False) -> float:
    """The ranking formula of docs/architecture.md §5 (a *claim* weighs CLAIM_WEIGHT)."""
    meta = fact.metadata
    weight = SCOPE_WEIGHT[fact.scope] * (CLAIM_WEIGHT if claim else 1.0) * stale_weight(fact)
    return (cosine * meta.confidence * (1 + success_bonus(meta.success_count)) * weight
            + recency_boost(fact, now, last_accessed))


def stale_weight(fact: Fact) -> float:
    """STALE_WEIGHT for a fact whose cited code all changed or went away, else 1."""
    return STALE_WEIGHT if fact.metadata.citations and is_stale(fact) else 1.0


# Current-state ranking (issue 13), each kept because it raised Current@1 on StateBench dev
# (detect arm) without raising StaleLeak: `benchmarks/statebench_eval.py` prints the ablation.
# (Ranking only the newest fact of a subject family changed nothing once rule 2 supersedes
# restated subjects, so it was left out.)
TIE = 1e-6                 # scores this close are a tie, which goes to the newer fact
RETRACTIONS_LAST = True    # retractions rank after every other fact
NEWER_WINS_TIES = True
# The current answer first (issue 21): ranked facts that resemble *each other* at least as much
# as the embedder's family threshold (`embed.family_threshold`) form a family: an update
# nobody marked as one ("PO #4521 approved" → "PO #4521 CANCELLED"), two instructions on one
# matter. The family keeps the places its members earned, but its newest members take the best of
# them: the newer of two related statements is the likelier to be current. A member scoring under
# FAMILY_SHARE of the family's best is only loosely on the question and keeps its own order, so a
# newer fact that merely shares words with the answer does not displace it (StateBench train,
# detect arm: 0.25 beat 0 and 0.5, see `benchmarks/statebench_eval.py`) -- unless it is related to
# the family's best member itself (THREAD_OF_THE_BEST): the question found the thread through its
# best match, and the thread's latest word is its current state, whatever its wording ("We could
# use AWS or Google Cloud" → "Let's discuss this with the team next week" for "which cloud provider
# did we pick?"). StateBench train, key view: 0.873 → 0.897 (value view and StaleLeak unchanged).
# With the product's relevance floor every ranked fact already scores above FAMILY_SHARE of the
# best, so both rules matter where the floor is off (`neo.relevanceFloor`). Retractions stay last.
# Only statement-sized facts (scoring.CALIBRATED_WORDS) form families: between decision records
# cosine measures shared project vocabulary (hash: every record's best match scores 0.35-0.59), so
# a store of records written over months was one family and recall returned the newest records
# whatever the question (ADR dev, three projects written on three dates: the record a problem
# statement came from ranked first 22% of the time instead of 99%).
NEWEST_IN_FAMILY = True
FAMILY_SHARE = 0.25
THREAD_OF_THE_BEST = True


# An answer adds to its question (issue 21). A wh-question ("what pricing have we offered
# TechCorp?") asks for something it does not already say, so a short fact whose whole statement
# the question repeats ("customer: TechCorp") names the thing asked about, not the answer: it ranks
# as if it scored ECHO_WEIGHT of its score, i.e. after every fact that adds something. A yes/no
# question ("do we work with TechCorp?") is confirmed by exactly such a fact, so only wh-questions
# demote (classic answer ranking drops candidates found in the question). A statement of at most
# ECHO_MAX_WORDS content words echoes when at least ECHO_SHARE of them are in the question.
# StateBench *train* (detect arm, without brutal_realistic, key view, Current@1): weight 1 / 0.5 /
# 0.25 / 0.1 / 0 → 0.805 / 0.817 / 0.845 / 0.845 / 0.864; `benchmarks/statebench_eval.py` prints it.
ECHO_WEIGHT = 0.0
ECHO_SHARE = 2 / 3
ECHO_MAX_WORDS = 6
_WH_QUESTION = re.compile(r"^\W*(?:(?:so|and|ok|okay|then|now|also)\W+)?"
                          r"(?:what|which|who|whom|whose|when|where|why|how)\b", re.IGNORECASE)


@lru_cache(maxsize=1 << 12)
def _echo_words(text: str) -> frozenset[str]:
    return frozenset(w for w in words(text) if w not in FILLER)


def wh_question(query: str) -> bool:
    """Does *query* ask what/which/who/when/where/why/how (not a yes/no question)?"""
    return bool(_WH_QUESTION.match(query))


def echoes(fact: Fact, query_words: frozenset[str]) -> bool:
    """Is *fact* a short statement the question already makes (see ECHO_WEIGHT)? The statement is
    the body, or the subject of a fact without one."""
    said = _echo_words((fact.body or fact.subject)[:400])
    return 0 < len(said) <= ECHO_MAX_WORDS and len(said & query_words) >= ECHO_SHARE * len(said)


def echo_positions(ranked: Sequence[tuple[int, float]], pool: Sequence[Fact], query: str) -> frozenset[int]:
    """The pool positions among *ranked* whose facts echo a wh-*query* (none for other queries,
    or when ECHO_WEIGHT turns the rule off)."""
    if ECHO_WEIGHT >= 1 or not ranked or not wh_question(query):
        return frozenset()
    asked = _echo_words(query)
    return frozenset(i for i, _ in ranked if echoes(pool[i], asked))


def demote_echoes(ranked: Sequence[tuple[int, float]], pool: Sequence[Fact], query: str,
                  echoed: frozenset[int] | None = None) -> list[tuple[int, float]]:
    """*ranked* with the echoes of a wh-*query* (*echoed*, default `echo_positions`) ranked at
    ECHO_WEIGHT of their score, never above their own (the scores returned are unchanged; only
    the order moves). Other queries: as is. An echo is no family member either (`Except`): a newer
    echo must not take the place of the answer it resembles."""
    echoed = echo_positions(ranked, pool, query) if echoed is None else echoed
    if not echoed:
        return list(ranked)
    # min: an echo only moves down (a negative score times ECHO_WEIGHT would be higher).
    weighted = [(min(score, score * ECHO_WEIGHT) if i in echoed else score, n)
                for n, (i, score) in enumerate(ranked)]
    if all(value == ranked[n][1] for value, n in weighted):
        return list(ranked)
    # Only the score moves: retractions and stale facts stay behind as `rank` put them, and scores
    # within TIE keep `rank`'s order (newer first), compared as `rank` compares them.
    order = sorted(weighted, key=lambda pair: (_tier(ranked[pair[1]][0], pool), -round(pair[0] / TIE), pair[1]))
    return [ranked[n] for _, n in order]


class Except(Sequence[bool]):
    """Flags by pool position with *cleared* positions read as False (`newest_in_family`'s
    *statement* without the echoes), without copying a pool-long list."""

    def __init__(self, flags: Sequence[bool], cleared: frozenset[int]) -> None:
        self.flags, self.cleared = flags, cleared

    def __len__(self) -> int:
        return len(self.flags)

    @overload
    def __getitem__(self, i: int) -> bool: ...
    @overload
    def __getitem__(self, i: slice) -> list[bool]: ...
    def __getitem__(self, i: int | slice) -> bool | list[bool]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return bool(self.flags[i]) and i not in self.cleared


def _tier(i: int, pool: Sequence[Fact]) -> tuple[bool, bool]:
    fact = pool[i]
    return (RETRACTIONS_LAST and is_retraction(fact), bool(fact.metadata.citations) and is_stale(fact))


def _newest_first(fact: Fact) -> tuple[Any, ...]:
    stamp = _parse_time(fact.metadata.created_at) if NEWER_WINS_TIES else None
    return (-stamp.timestamp(),) if stamp is not None else (0.0,)


@lru_cache(maxsize=256)
def cached_bonus(success_count: int) -> float:
    """`scoring.success_bonus`, remembered (a store holds few distinct success counts)."""
    return success_bonus(success_count)


class RankedPool(Protocol):
    """What `rank` reads of the facts it ranks: recall's layout (`recall._Layout`), whose
    per-fact columns follow its `pool`."""

    @property
    def pool(self) -> Sequence[Fact]: ...   # read only: a list, or recall's view of its fact table

    confidence: np.ndarray
    bonus: np.ndarray
    weight: np.ndarray
    retraction: list[bool]
    stale: list[bool]


def rank(cos: np.ndarray, layout: RankedPool, now: datetime, accessed: Mapping[str, str | None],
         limit: int | None) -> list[tuple[int, float]]:
    """(position, rank_score) of the best *limit* facts and their ties (all facts when None),
    in (-score, id) order; the scores are exactly those of `rank_score`.

    The recency boost needs a timestamp lookup per fact, so it is computed only where it
    can matter: a fact whose score without the boost, plus the boost, stays below the
    limit-th best boost-free score cannot reach the top *limit* (boosts only raise scores).
    """
    import numpy as np

    facts = layout.pool
    base = cos * layout.confidence  # the same float operations, in the same order, as rank_score
    base *= layout.bonus
    base *= layout.weight
    n = len(facts)
    if limit is not None and limit < n:
        floor = np.partition(base, n - limit)[n - limit]
        maybe = np.flatnonzero(base + RECENCY_BOOST >= floor)
    else:
        maybe = np.arange(n)
    boost = np.fromiter((recency_boost(facts[i], now, accessed.get(facts[i].id)) for i in maybe.tolist()),
                        np.float64, len(maybe))
    scores = base[maybe] + boost
    keep: range | list[int] = range(len(maybe))
    if limit is not None and limit < len(maybe):
        cutoff = np.partition(scores, len(maybe) - limit)[len(maybe) - limit]
        keep = np.flatnonzero(scores >= cutoff).tolist()  # every tie at the cut stays
    positions = maybe.tolist()
    values = scores.tolist()
    # Near-equal scores (within TIE) go to the newer fact, then the smaller id.
    retraction, stale = layout.retraction, layout.stale
    order = sorted(keep, key=lambda j: (retraction[positions[j]], stale[positions[j]], -round(values[j] / TIE),
                                        _newest_first(facts[positions[j]]), facts[positions[j]].id))
    return [(positions[j], values[j]) for j in order]


def newest_in_family(ranked: Sequence[tuple[int, float]], pool: Sequence[Fact], vectors: np.ndarray,
                     threshold: float, retraction: Sequence[bool], rows: Sequence[int] | None = None,
                     statement: Sequence[bool] | None = None) -> list[tuple[int, float]]:
    """*ranked* ((pool position, score), best first) with each family of related facts reordered
    newest first within the places its members hold (see NEWEST_IN_FAMILY). Facts are related
    when the cosine of their *vectors* is ≥ *threshold*; *rows* maps a pool position to its row of
    *vectors* (default: the same position); *statement* says which pool positions may join a family
    (default: all; recall passes the statement-sized ones)."""
    import numpy as np

    members = [n for n, (i, _) in enumerate(ranked)
               if not retraction[i] and (statement is None or statement[i])]
    if len(members) < 2:
        return list(ranked)
    picked = [ranked[n][0] if rows is None else rows[ranked[n][0]] for n in members]
    matrix = np.asarray(vectors[picked], dtype=np.float32)
    related = (matrix @ matrix.T) >= threshold
    parent = list(range(len(members)))  # union-find over the ranked facts

    def root(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    facts = [pool[ranked[n][0]] for n in members]
    for a, b in zip(*np.nonzero(np.triu(related, 1))):
        if kept_apart(facts[int(a)], facts[int(b)]):
            related[a, b] = related[b, a] = False   # a person kept these two apart
            continue
        parent[root(int(b))] = root(int(a))
    index_of = {n: a for a, n in enumerate(members)}
    families: dict[int, list[int]] = {}
    for a, n in enumerate(members):
        families.setdefault(root(a), []).append(n)  # places in rank order
    out = list(ranked)
    for places in families.values():
        best = ranked[places[0]][1]
        if len(places) < 2 or not best > 0:
            continue
        head = index_of[places[0]]
        near = [n for n in places if ranked[n][1] >= FAMILY_SHARE * best
                or (THREAD_OF_THE_BEST and related[head, index_of[n]])]
        newest = sorted(near, key=lambda n: (_created_desc(pool[ranked[n][0]]), n))
        order = newest + [n for n in places if n not in near]
        for place, n in zip(places, order):
            out[place] = ranked[n]
    return out


def kept_apart(a: Fact, b: Fact) -> bool:
    """Did a person keep *a* and *b* apart: rejected one as the other's replacement (`distinct_from`)
    or restored one after the other had replaced it (a `restored` link)? Then neither takes the
    other's place in recall."""
    if a.id in b.metadata.distinct_from or b.id in a.metadata.distinct_from:
        return True
    return any(link.restored and link.id == other.id
               for one, other in ((a, b), (b, a)) for link in one.metadata.possibly_supersedes)


def _created_desc(fact: Fact) -> float:
    stamp = _parse_time(fact.metadata.created_at)
    return -stamp.timestamp() if stamp is not None else 0.0  # undated: as old as can be
