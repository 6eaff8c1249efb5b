"""Recall in layers within a token budget (DESIGN.md §5).

`constraints` always come first (global → org → project → session, at most
2/3 of the budget), then `valid_facts` ranked by
cos(query, fact) × confidence × (1 + success_bonus) × scope weight + recency,
then `invalidated` facts relevant to the query ("this changed from X"), and
`known_unknowns`. The store supplies facts and their vectors; this module
only ranks and packs.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from neo_git.citations.pathglob import any_matches
from neo_git.citations.states import is_stale, stale_note
from neo_git.facts import SCOPE_ORDER, Fact, FactKind, FactScope
from neo_git.knowledge import conflict_partners_memo, current_successor, is_evidence, is_open_proposal
from neo_git.scoring import statement_sized, success_bonus

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import pygit2

    from neo_git.identity import RepositoryPaths

LAYERS = ("constraints", "valid_facts", "invalidated", "known_unknowns")
CONSTRAINT_SHARE = 2 / 3
RECENCY_BOOST = 0.05
SESSION_WINDOW = timedelta(hours=4)   # "touched in this session": created or recalled this recently
INVALIDATED_MIN_COSINE = 0.25
KNOWN_UNKNOWN_MIN_COSINE = 0.1
# A retraction stored as a fact ("[INVALIDATED - was based on wrong data: …] Original
# conclusion: …") quotes the stale text, so it resembles the question more than the
# correction does: retractions rank after every other fact (StateBench train, detect arm:
# a score weight of 0.1 still let 23 of 158 retractions outrank their correction).
_RETRACTION = re.compile(r"^\s*\[?\s*(?:INVALIDATED|RETRACTED|WITHDRAWN|REVOKED)\b")
# More specific scopes win ties: what this repository says beats what the org says.
SCOPE_WEIGHT = {FactScope.SESSION: 1.0, FactScope.PROJECT: 1.0, FactScope.ORG: 0.97, FactScope.GLOBAL: 0.94}
# A claim (a teammate's fact whose author is not trusted, see neo_git.sync.trust) ranks below
# trusted facts of similar relevance and never enters the always-included constraint layer.
CLAIM_WEIGHT = 0.5
# A stale fact (every code citation changed or gone, DESIGN.md §13) ranks after the facts whose
# code still holds, and weighs less when the best few are picked.
STALE_WEIGHT = 0.5


@dataclass(frozen=True)
class ContextResult:
    """What recall returns: layered facts, their scores, the environment."""

    query: str
    constraints: list[Fact] = field(default_factory=list)
    valid_facts: list[Fact] = field(default_factory=list)
    invalidated: list[Fact] = field(default_factory=list)
    known_unknowns: list[Fact] = field(default_factory=list)
    environment: dict = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)
    tokens: int = 0
    max_tokens: int = 0
    untrusted: tuple[str, ...] = ()   # ids of returned facts that are claims: prompts mark them unverified
    stale: dict[str, str] = field(default_factory=dict)   # returned stale facts: id -> "cited code changed since …"
    file: str | None = None           # the file asked about (`--file`)
    file_facts: tuple[str, ...] = ()  # returned facts citing that file or scoped to it
    # The relevance floor applied (cosine; None: none) and, for the returned facts: the current
    # successor of each retired one ({old id: Fact}), the competing successor of each fact in an
    # open supersession conflict ({id: other id}), the ids of open agent proposals.
    floor: float | None = None
    relevance: dict[str, float] = field(default_factory=dict)   # cosine to the query of each returned fact
    successors: dict[str, Fact] = field(default_factory=dict)
    conflicts: dict[str, str] = field(default_factory=dict)
    proposals: tuple[str, ...] = ()

    @property
    def returned_ids(self) -> list[str]:
        """Ids of the facts handed to the caller as current knowledge (counted as accessed)."""
        return [f.id for f in (*self.constraints, *self.valid_facts, *self.known_unknowns)]

    def with_facts(self, transform: Callable[[Fact], Fact]) -> "ContextResult":
        """The same result with every fact passed through *transform*."""
        return replace(self, **{layer: [transform(f) for f in getattr(self, layer)] for layer in LAYERS},
                       successors={old: transform(new) for old, new in self.successors.items()})

    def possible_supersessions(self) -> list[dict]:
        """Returned facts that may replace another (not yet decided): {"id", "candidate",
        "similarity"}, so an agent or a person can accept or reject on the spot."""
        return [{"id": fact.id, "candidate": link["id"], "similarity": link.get("similarity")}
                for fact in (*self.constraints, *self.valid_facts, *self.known_unknowns)
                for link in fact.metadata.possibly_supersedes]

    def to_dict(self) -> dict:
        """The `git neo recall --json` object."""
        return {
            "query": self.query,
            "constraints": [f.to_dict() for f in self.constraints],
            "valid_facts": [f.to_dict() for f in self.valid_facts],
            "invalidated": [f.to_dict() for f in self.invalidated],
            "known_unknowns": [f.to_dict() for f in self.known_unknowns],
            "environment": self.environment,
            "possible_supersessions": self.possible_supersessions(),
            "scores": {k: round(v, 4) for k, v in self.scores.items()},
            "tokens": self.tokens,
            "max_tokens": self.max_tokens,
            "untrusted": list(self.untrusted),
            "stale": dict(self.stale),
            "file": self.file,
            "file_facts": list(self.file_facts),
            "floor": self.floor,
            "relevance": {k: round(v, 4) for k, v in self.relevance.items()},
            "successors": {old: new.to_dict() for old, new in self.successors.items()},
            "conflicts": dict(self.conflicts),
            "proposals": list(self.proposals),
        }


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


def is_retraction(fact: Fact) -> bool:
    """A fact that only says another one was wrong ("[INVALIDATED …] original: …")."""
    return bool(_RETRACTION.match(fact.body) or _RETRACTION.match(fact.subject))


def recency_boost(fact: Fact, now: datetime, last_accessed: str | None = None) -> float:
    """A small boost for facts created or recalled in the current working session."""
    for stamp in (last_accessed, fact.metadata.last_accessed, fact.metadata.created_at):
        when = _parse_time(stamp)
        if when is not None and now - when <= SESSION_WINDOW:
            return RECENCY_BOOST
    return 0.0


def rank_score(cosine: float, fact: Fact, now: datetime, last_accessed: str | None = None,
               claim: bool = False) -> float:
    """The ranking formula of DESIGN.md §5 (a *claim* weighs CLAIM_WEIGHT)."""
    meta = fact.metadata
    weight = SCOPE_WEIGHT[fact.scope] * (CLAIM_WEIGHT if claim else 1.0) * stale_weight(fact)
    return (cosine * meta.confidence * (1 + success_bonus(meta.success_count)) * weight
            + recency_boost(fact, now, last_accessed))


def stale_weight(fact: Fact) -> float:
    """STALE_WEIGHT for a fact whose cited code all changed or went away, else 1."""
    return STALE_WEIGHT if fact.metadata.citations and is_stale(fact) else 1.0


def about_file(fact: Fact, path: str | None) -> bool:
    """Does *fact* cite the file *path* or is it scoped to it (`metadata.paths`)?"""
    if not path:
        return False
    meta = fact.metadata
    return any(c.get("path") == path for c in meta.citations) or (bool(meta.paths) and any_matches(meta.paths, path))


def _scoped_constraints(layout: "_Layout", path: str | None) -> list[int]:
    """Pool positions of the path-scoped constraints that apply to *path* (none without one): a
    constraint limited to some files is always-apply only while one of them is worked on."""
    if not path:
        return []
    return [j for j in layout.scoped_constraints if about_file(layout.pool[j], path)]


def _file_first(pool_cos: "np.ndarray", layout: "_Layout", path: str | None, now: datetime,
                accessed: Mapping[str, str | None], skip: set[int]) -> list[tuple[int, float]]:
    """(position, rank_score) of the ranked facts citing *path* or scoped to it, best first
    (stale ones last): they lead the ranked layer whatever the question's wording."""
    if not path:
        return []
    out = []
    for j, fact in enumerate(layout.pool):
        if j not in skip and about_file(fact, path):
            out.append((j, rank_score(float(pool_cos[j]), fact, now, accessed.get(fact.id))))
    return sorted(out, key=lambda p: (layout.stale[p[0]], -p[1], layout.pool[p[0]].id))


# Current-state ranking (issue 13), each kept because it raised Current@1 on StateBench dev
# (detect arm) without raising StaleLeak: `benchmarks/statebench_eval.py` prints the ablation.
# (Ranking only the newest fact of a subject family changed nothing once rule 2 supersedes
# restated subjects, so it was left out.)
TIE = 1e-6                 # scores this close are a tie, which goes to the newer fact
RETRACTIONS_LAST = True    # retractions rank after every other fact
NEWER_WINS_TIES = True
# The current answer first (issue 21): ranked facts that resemble *each other* at least as much
# as a possible supersession does (the embedder's possible threshold) form a family: an update
# nobody marked as one ("PO #4521 approved" → "PO #4521 CANCELLED"), two instructions on one
# matter. The family keeps the places its members earned, but its newest members take the best of
# them: the newer of two related statements is the likelier to be current. A member scoring under
# FAMILY_SHARE of the family's best is only loosely on the question and keeps its own order, so a
# newer fact that merely shares words with the answer does not displace it (StateBench train,
# detect arm: 0.25 beat 0 and 0.5, see `benchmarks/statebench_eval.py`). Retractions stay last.
# Only statement-sized facts (scoring.CALIBRATED_WORDS) form families: between decision records
# cosine measures shared project vocabulary (hash: every record's best match scores 0.35-0.59), so
# a store of records written over months was one family and recall returned the newest records
# whatever the question (ADR dev, three projects written on three dates: the record a problem
# statement came from ranked first 22% of the time instead of 99%).
NEWEST_IN_FAMILY = True
FAMILY_SHARE = 0.25


def _newest_first(fact: Fact) -> tuple:
    stamp = _parse_time(fact.metadata.created_at) if NEWER_WINS_TIES else None
    return (-stamp.timestamp(),) if stamp is not None else (0.0,)


class _Layout:
    """What recall needs to know about a list of facts that does not depend on the query:
    which layer each belongs to, and the ranking weights of the ranked ones. Facts are
    immutable, so it is kept for the last list seen and reused while the objects are the same."""

    memo: "tuple[list[Fact], frozenset, _Layout | None]" = ([], frozenset(), None)  # replaced whole

    def __init__(self, facts: Sequence[Fact], untrusted: frozenset = frozenset()) -> None:
        import numpy as np

        self.constraints: list[int] = []
        self.ranked: list[int] = []
        self.unknowns: list[int] = []
        self.retired: list[int] = []
        pool: list[Fact] = []
        confidence: list[float] = []
        bonus: list[float] = []
        weight: list[float] = []
        retraction: list[bool] = []
        stale: list[bool] = []
        statement: list[bool] = []
        self.scoped_constraints: list[int] = []   # pool positions of trusted path-scoped constraints
        constraint, unknown = FactKind.CONSTRAINT, FactKind.KNOWN_UNKNOWN
        for i, fact in enumerate(facts):  # one pass: this runs over every fact of a cold recall
            if not fact.is_valid:
                self.retired.append(i)
            elif is_evidence(fact):
                continue  # outcome records are evidence about facts (`git neo outcomes`), not knowledge
            elif fact.kind is constraint and fact.id not in untrusted and not is_open_proposal(fact) \
                    and not fact.metadata.paths:
                self.constraints.append(i)
            elif fact.kind is unknown:
                self.unknowns.append(i)
            else:
                self.ranked.append(i)
                pool.append(fact)
                meta = fact.metadata
                confidence.append(meta.confidence)
                bonus.append(1 + _bonus(meta.success_count))
                weight.append(SCOPE_WEIGHT[fact.scope] * (CLAIM_WEIGHT if fact.id in untrusted else 1.0)
                              * stale_weight(fact))
                retraction.append(RETRACTIONS_LAST and is_retraction(fact))
                stale.append(is_stale(fact))
                statement.append(statement_sized(fact.text))
                if fact.kind is constraint and fact.metadata.paths and fact.id not in untrusted \
                        and not is_open_proposal(fact):
                    self.scoped_constraints.append(len(pool) - 1)   # path-scoped: a constraint for its files
        self.pool = pool
        self.confidence = np.array(confidence, dtype=np.float64)
        self.bonus = np.array(bonus, dtype=np.float64)
        self.weight = np.array(weight, dtype=np.float64)
        self.retraction = retraction
        self.stale = stale
        self.statement = statement   # may join a family of related facts (newest_in_family)
        self.source: Sequence[Fact] | None = None   # the list object this layout was last asked for
        self._constraint_keys = None                # built on first use (constraint_order)

    _NOT_PER_POOL = frozenset({"constraints", "unknowns", "retired", "scoped_constraints", "source",
                               "_constraint_keys"})

    def subset(self, positions: "np.ndarray") -> "_Layout":
        """The same layout with its ranked pool cut to *positions* (indices into `pool`): every
        per-pool column (a list or array as long as the pool) is cut alike."""
        import numpy as np

        sub = object.__new__(type(self))
        n = len(self.pool)
        picked = positions.tolist()
        for name, value in vars(self).items():
            if name not in self._NOT_PER_POOL and isinstance(value, np.ndarray) and value.shape[:1] == (n,):
                value = value[positions]
            elif name not in self._NOT_PER_POOL and isinstance(value, list) and len(value) == n:
                value = [value[i] for i in picked]
            setattr(sub, name, value)
        return sub

    @classmethod
    def of(cls, facts: Sequence[Fact], untrusted: frozenset = frozenset()) -> "_Layout":
        known, claims, layout = cls.memo
        if layout is not None and layout.source is facts and (claims is untrusted or claims == untrusted):
            return layout  # the very list the store handed out last time (it keeps one while nothing changes)
        if (layout is None or claims != untrusted or len(known) != len(facts)
                or not all(a is b for a, b in zip(known, facts))):
            layout = cls(facts, untrusted)
            cls.memo = (list(facts), untrusted, layout)
        layout.source = facts
        return layout

    def constraint_order(self, facts: Sequence[Fact], cos_all: "np.ndarray") -> tuple[list[int], list[int]]:
        """The constraints by (scope order, -cosine, id), and their sizes in tokens, in that order.
        Sorted in numpy, sizes kept: a store can hold thousands of constraints, and a Python sort
        with a key per constraint plus their sizes cost ~10 ms at 2,500."""
        import numpy as np

        if self._constraint_keys is None:
            ids = [facts[i].id for i in self.constraints]
            id_rank = np.empty(len(ids), dtype=np.int64)
            id_rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
            scope_rank = np.array([SCOPE_ORDER.index(facts[i].scope) for i in self.constraints], dtype=np.int64)
            sizes = np.array([facts[i].tokens for i in self.constraints], dtype=np.int64)
            self._constraint_keys = (np.array(self.constraints, dtype=np.int64), scope_rank, id_rank, sizes)
        positions, scope_rank, id_rank, sizes = self._constraint_keys
        cos = cos_all[positions] if len(positions) else np.zeros(0)
        order = np.lexsort((id_rank, -cos, scope_rank))
        return positions[order].tolist(), sizes[order].tolist()


@lru_cache(maxsize=256)
def _bonus(success_count: int) -> float:
    return success_bonus(success_count)


def _ranked(cos: "np.ndarray", layout: _Layout, now: datetime, accessed: Mapping[str, str | None],
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
    keep = range(len(maybe))
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


def above_floor(layout: _Layout, pool_cos: "np.ndarray", floor: float | None) -> "tuple[_Layout, np.ndarray]":
    """The ranked pool cut to the facts relevant to the question at all: cosine ≥ *floor*, the
    active embedder's calibrated relevance floor (None: no floor). A NaN cosine is never relevant.
    Ranking (the order among relevant facts) is `_ranked`'s business, not this one's."""
    if floor is None:
        return layout, pool_cos
    import numpy as np

    keep = np.flatnonzero(pool_cos >= floor)
    if len(keep) == len(layout.pool):
        return layout, pool_cos
    return layout.subset(keep), pool_cos[keep]


def newest_in_family(ranked: Sequence[tuple[int, float]], pool: Sequence[Fact], vectors: "np.ndarray",
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

    for a, b in zip(*np.nonzero(np.triu(related, 1))):
        parent[root(int(b))] = root(int(a))
    families: dict[int, list[int]] = {}
    for a, n in enumerate(members):
        families.setdefault(root(a), []).append(n)  # places in rank order
    out = list(ranked)
    for places in families.values():
        best = ranked[places[0]][1]
        if len(places) < 2 or not best > 0:
            continue
        near = [n for n in places if ranked[n][1] >= FAMILY_SHARE * best]
        newest = sorted(near, key=lambda n: (_created_desc(pool[ranked[n][0]]), n))
        order = newest + [n for n in places if n not in near]
        for place, n in zip(places, order):
            out[place] = ranked[n]
    return out


def _created_desc(fact: Fact) -> float:
    stamp = _parse_time(fact.metadata.created_at)
    return -stamp.timestamp() if stamp is not None else 0.0  # undated: as old as can be


def _take_relevant(facts: Sequence[Fact], candidates: Sequence[int], relevance: Callable[[int], float],
                   floor: float, k: int, used: int, max_tokens: int) -> tuple[list[int], int]:
    """Up to *k* of *candidates*, most relevant first (ties by id), none below *floor*,
    each only if it still fits the budget; returns them and the tokens now used."""
    taken: list[int] = []
    if k <= 0:
        return taken, used
    # Sorting stops at the first fact below the floor: sort only those above it.
    above = [i for i in candidates if relevance(i) >= floor]
    for i in sorted(above, key=lambda i: (-relevance(i), facts[i].id)):
        if len(taken) >= k:
            break
        if used + facts[i].tokens <= max_tokens:
            taken.append(i)
            used += facts[i].tokens
    return taken, used


def assemble(query: str, facts: Sequence[Fact], cosines: "np.ndarray", *, k: int = 5,
             max_tokens: int = 12000, environment: dict | None = None,
             last_accessed: Mapping[str, str | None] | None = None,
             untrusted: frozenset = frozenset(), vectors: "np.ndarray | None" = None,
             family_threshold: float | None = None, file: str | None = None,
             floor: float | None = None) -> ContextResult:
    """Pack *facts* (with their cosine to the query, same order) into layers.

    *last_accessed* holds access times kept outside the facts (the local access log);
    *untrusted* the ids of claims (ranked lower, never constraints, listed in the result);
    *vectors* the facts' vectors (rows in *facts* order) and *family_threshold* the cosine from
    which two facts are related (the embedder's possible-supersession threshold): with both,
    the newest of related facts comes first (`newest_in_family`);
    *file* the file being worked on (its cited and path-scoped facts first, whatever the
    question's wording; its path-scoped constraints always);
    *floor* the relevance floor: ranked facts, known unknowns and retired facts below it are
    not relevant to the question and are left out (constraints always apply).
    """
    if not facts:  # nothing to rank: keep numpy unloaded
        return ContextResult(query=query, environment=environment or {}, max_tokens=max_tokens, file=file,
                             floor=floor)
    import numpy as np

    accessed = last_accessed or {}
    now = datetime.now(timezone.utc)
    cos_all = np.asarray(cosines, dtype=np.float64).reshape(-1)[:len(facts)]
    layout = _Layout.of(facts, frozenset(untrusted))
    cos = {}
    scores: dict[str, float] = {}

    def cosine(i: int) -> float:
        value = cos.get(i)
        if value is None:
            value = cos[i] = float(cos_all[i])
        return value

    # 1. constraints: always, most general scope first, most relevant first within a scope.
    constraint_budget = int(max_tokens * CONSTRAINT_SHARE)
    constraints, used = [], 0
    scoped = {layout.ranked[j]: j for j in _scoped_constraints(layout, file)}
    if scoped:  # path-scoped constraints of the file asked about join the others (issue 18)
        ordered = sorted([*layout.constraints, *scoped],
                         key=lambda i: (SCOPE_ORDER.index(facts[i].scope), -cosine(i), facts[i].id))
        sizes = [facts[i].tokens for i in ordered]
    else:
        ordered, sizes = layout.constraint_order(facts, cos_all)
    for i, size in zip(ordered, sizes):
        if used + size > constraint_budget:
            continue
        fact = facts[i]
        constraints.append(fact)
        used += size
        scores[fact.id] = max(0.0, cosine(i))  # a score shown to people is never negative

    # 2. ranked facts, within what the constraints left. Only the best few need sorting;
    #    if the budget skips past all of them, rank everything (same result, slower).
    all_cos = cos_all[layout.ranked]
    skip = set(scoped.values())                  # path-scoped constraints taken above
    first = _file_first(all_cos, layout, file, now, accessed, skip)  # the file's facts: no floor
    skip.update(j for j, _ in first)
    skip_ids = {layout.pool[j].id for j in skip}
    first = [(layout.pool[j], v, float(all_cos[j])) for j, v in first]
    relevant, pool_cos = above_floor(layout, all_cos, floor)
    pool = relevant.pool
    valid_facts = []
    window = max(4 * k, 32)
    family = vectors is not None and family_threshold is not None and NEWEST_IN_FAMILY
    for limit in (window, None):
        valid_facts, taken_cosines, taken, exhausted = [], [], used, True
        ranked = _ranked(pool_cos, relevant, now, accessed, limit)
        if family:  # only the head of the ranking can reach the answer; pairs cost O(window²)
            ranked[:window] = newest_in_family(ranked[:window], pool, vectors, family_threshold,
                                               relevant.retraction, rows=relevant.ranked,
                                               statement=relevant.statement)
        entries = [*first, *((pool[j], v, float(pool_cos[j])) for j, v in ranked if pool[j].id not in skip_ids)]
        for fact, score, cosine_to_query in entries:
            if len(valid_facts) >= k:
                exhausted = False
                break
            if taken + fact.tokens > max_tokens:
                continue
            valid_facts.append((fact, score))
            taken_cosines.append(cosine_to_query)
            taken += fact.tokens
        if not exhausted or limit is None or limit >= len(pool):
            break
    for fact, score in valid_facts:
        scores[fact.id] = score
    relevance_of = {f.id: value for (f, _), value in zip(valid_facts, taken_cosines)}
    valid_facts = [fact for fact, _ in valid_facts]
    used = taken

    # 3. known unknowns that bear on the question.
    taken_unknowns, used = _take_relevant(facts, layout.unknowns, cosine, max(KNOWN_UNKNOWN_MIN_COSINE, floor or 0.0),
                                          k, used, max_tokens)
    known_unknowns = [facts[i] for i in taken_unknowns]
    scores.update((facts[i].id, cosine(i)) for i in taken_unknowns)

    # 4. what changed: superseded predecessors of what we return, and relevant retired facts.
    returned = {f.id for f in valid_facts} | {f.id for f in constraints}

    def retired_relevance(i: int) -> float:
        return cosine(i) + (1.0 if facts[i].superseded_by in returned else 0.0)

    taken_retired, used = _take_relevant(facts, layout.retired, retired_relevance, max(INVALIDATED_MIN_COSINE, floor or 0.0),
                                         k, used, max_tokens)
    invalidated = [facts[i] for i in taken_retired]
    claims = tuple(f.id for f in (*valid_facts, *known_unknowns, *invalidated) if f.id in untrusted)
    shown = (*constraints, *valid_facts, *known_unknowns)
    stale = {f.id: note for f in shown for note in (stale_note(f),) if note}
    on_file = tuple(f.id for f in shown if about_file(f, file))
    marks = _marks(facts, constraints, valid_facts, known_unknowns, invalidated)
    relevance_of.update((facts[i].id, cosine(i)) for i in (*taken_unknowns, *taken_retired))
    return ContextResult(query=query, constraints=constraints, valid_facts=valid_facts,
                         invalidated=invalidated, known_unknowns=known_unknowns,
                         environment=environment or {}, scores=scores, tokens=used, max_tokens=max_tokens,
                         untrusted=claims, stale=stale, file=file, file_facts=on_file, floor=floor,
                         relevance=relevance_of, **marks)


def _marks(facts: Sequence[Fact], *layers: Sequence[Fact]) -> dict:
    """What the returned facts need said about them: successors of the retired ones, the other
    side of open conflicts, open proposals (see neo_git.knowledge)."""
    returned = [f for layer in layers for f in layer]
    partners = conflict_partners_memo(facts)
    conflicts = {f.id: partners[f.id] for f in returned if f.id in partners}
    retired = [f for f in returned if not f.is_valid and f.superseded_by]
    successors: dict[str, Fact] = {}
    if retired:
        by_id = {f.id: f for f in facts}
        for old in retired:
            new = current_successor(old, by_id)
            if new is not None:
                successors[old.id] = new
    return {"successors": successors, "conflicts": conflicts,
            "proposals": tuple(f.id for f in returned if is_open_proposal(f))}


def environment(repo: "pygit2.Repository | None", paths: "RepositoryPaths | None", org_id: str) -> dict:
    """Where the question is asked from: repository, branch, HEAD, ids, and the health
    of HEAD when a scan already measured it (recall never scans: that is `git neo health`).
    Without a repository (an in-memory store) only the org id is known."""
    env: dict = {"repo": None, "org_id": org_id, "branch": None, "head": None, "detached": False, "health": None}
    if repo is None or paths is None:
        return env
    from neo_git.health import cached_summary

    env.update(repo=str(paths.workdir or paths.git_dir), health=cached_summary(repo))
    try:
        if repo.head_is_unborn:
            env["branch"] = repo.references["HEAD"].target.removeprefix("refs/heads/")
        else:
            env["head"] = str(repo.head.target)[:12]
            env["detached"] = repo.head_is_detached
            if not repo.head_is_detached:
                env["branch"] = repo.head.shorthand
    except Exception:  # noqa: BLE001 - environment is best effort
        pass
    return env
