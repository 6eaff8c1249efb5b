"""Recall in layers within a token budget (docs/architecture.md §5).

`constraints` always come first (global → org → project → session, at most
2/3 of the budget), then `valid_facts` ranked by
cos(query, fact) × confidence × (1 + success_bonus) × scope weight + recency,
then `invalidated` facts relevant to the query ("this changed from X"), and
`known_unknowns`. The store supplies facts and their vectors; `ranking` orders
the ranked layer and this module packs the layers.
"""
from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from neo_git import ranking
from neo_git.citation_states import stale_note
from neo_git.fact_schema import PossibleLink
from neo_git.facts import SCOPE_ORDER, Fact, FactKind
from neo_git.knowledge import current_successor, is_open_proposal, open_links
from neo_git.pathglob import any_matches
from neo_git.ranking import (
    CLAIM_WEIGHT,
    SCOPE_WEIGHT,
    STALE_WEIGHT,
    cached_bonus,
    demote_echoes,
    echo_positions,
    newest_in_family,
    rank,
    rank_score,
)

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import pygit2

    from neo_git.identity import RepositoryPaths
    from neo_git.lexical import Words
    from neo_git.relevance import Decision, Explanation, Noise

LAYERS = ("constraints", "valid_facts", "invalidated", "known_unknowns")
CONSTRAINT_SHARE = 2 / 3
INVALIDATED_MIN_COSINE = 0.25
# "What changed" looks at the retired facts a current fact replaced and at the RECENT_RETIRED
# most recently retired; older history (last year's evictions, a predecessor's predecessor) is
# for `--all`, `history` and `why`. So 49,500 retired facts cost a recall none of their vectors.
RECENT_RETIRED = 1000
KNOWN_UNKNOWN_MIN_COSINE = 0.1


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
    decision: Decision | None = field(default=None, compare=False, repr=False)  # relevance.decide's, for --explain
    # Valid facts held back because a returned, trusted fact may replace them (an open review
    # question): {id: the asking fact's id}. Not current knowledge until `git neo review` says so.
    questioned: list[Fact] = field(default_factory=list)
    questioned_by: dict[str, str] = field(default_factory=dict)
    explanation: Explanation | None = field(default=None, compare=False)   # with explain=True

    @property
    def returned_ids(self) -> list[str]:
        """Ids of the facts handed to the caller as current knowledge (counted as accessed)."""
        return [f.id for f in (*self.constraints, *self.valid_facts, *self.known_unknowns)]

    def with_facts(self, transform: Callable[[Fact], Fact]) -> ContextResult:
        """The same result with every fact passed through *transform*."""
        layers: dict[str, Any] = {layer: [transform(f) for f in getattr(self, layer)] for layer in LAYERS}
        return replace(self, **layers,
                       successors={old: transform(new) for old, new in self.successors.items()},
                       questioned=[transform(f) for f in self.questioned])

    def possible_supersessions(self) -> list[dict]:
        """Returned facts that may replace another (not yet decided): {"id", "candidate",
        "similarity"}, so an agent or a person can accept or reject on the spot (the open ones:
        not the alternatives of a question already answered, `knowledge.open_links`)."""
        return [{"id": fact.id, "candidate": link.id, "similarity": link.similarity}
                for fact in (*self.constraints, *self.valid_facts, *self.known_unknowns)
                for link in open_links(fact)]

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
            "questioned": [f.to_dict() for f in self.questioned],
            "questioned_by": dict(self.questioned_by),
            **({"explain": self.explanation.to_dict()} if self.explanation is not None else {}),
        }


def about_file(fact: Fact, path: str | None) -> bool:
    """Does *fact* cite the file *path* or is it scoped to it (`metadata.paths`)?"""
    if not path:
        return False
    meta = fact.metadata
    return any(c.path == path for c in meta.citations) or (bool(meta.paths) and any_matches(meta.paths, path))


def _scoped_constraints(layout: _Layout, path: str | None) -> list[int]:
    """Pool positions of the path-scoped constraints that apply to *path* (none without one): a
    constraint limited to some files is always-apply only while one of them is worked on."""
    if not path:
        return []
    return [j for j in layout.scoped_constraints if about_file(layout.pool[j], path)]


def _file_first(pool_cos: np.ndarray, layout: _Layout, path: str | None, now: datetime,
                accessed: Mapping[str, str | None], skip: set[int]) -> list[tuple[int, float]]:
    """(position, rank_score) of the ranked facts citing *path* or scoped to it, best first
    (stale ones last): they lead the ranked layer whatever the question's wording."""
    if not path:
        return []
    out = []
    for j in layout.about_files:  # only facts that cite code or have paths can be about a file
        fact = layout.pool[j]
        if j not in skip and about_file(fact, path):
            out.append((j, rank_score(float(pool_cos[j]), fact, now, accessed.get(fact.id))))
    return sorted(out, key=lambda p: (layout.stale[p[0]], -p[1], layout.pool[p[0]].id))


class _Layout:
    """What recall needs to know about a list of facts that does not depend on the query:
    which layer each belongs to, and the ranking weights of the ranked ones. Computed from the
    facts' rows (`fact_table`), so a table read from the parse cache is laid out without
    decoding its facts. Facts are immutable, so it is kept for the last list seen and reused
    while the objects are the same."""

    memo: tuple[list[Fact], frozenset, _Layout | None] = ([], frozenset(), None)  # replaced whole

    def __init__(self, facts: Sequence[Fact], untrusted: frozenset = frozenset()) -> None:
        import numpy as np

        from neo_git import fact_table as ft

        table = facts if isinstance(facts, ft.FactTable) else \
            ft.FactTable(ft.columns_of(facts, keys=False), list(facts))
        rows = table.rows
        flags, kind = rows["flags"], rows["kind"]
        claim = _claims(rows["id"], untrusted)
        valid = (flags & ft.VALID) != 0
        live = valid & (kind != ft.KIND_INDEX[FactKind.REVIEW])  # outcome records are evidence, not knowledge
        is_constraint = kind == ft.KIND_INDEX[FactKind.CONSTRAINT]
        standing = ~claim & ((flags & ft.OPEN_PROPOSAL) == 0)    # trusted and not an open proposal
        scoped = (flags & ft.HAS_PATHS) != 0
        constraint = live & is_constraint & standing & ~scoped
        unknown = live & ~constraint & (kind == ft.KIND_INDEX[FactKind.KNOWN_UNKNOWN])
        ranked = live & ~constraint & ~unknown
        self.table = table
        self.constraints: list[int] = np.flatnonzero(constraint).tolist()
        self.ranked: list[int] = np.flatnonzero(ranked).tolist()
        self.unknowns: list[int] = np.flatnonzero(unknown).tolist()
        self.retired: list[int] = considered_retired(rows).tolist()   # what "what changed" looks at
        pool = rows[ranked]
        pool_flags = pool["flags"]
        stale = (pool_flags & ft.STALE) != 0
        self.pool = table.view(self.ranked)
        self.confidence = pool["confidence"].astype(np.float64)
        values, where = np.unique(pool["success"], return_inverse=True)
        self.bonus = np.array([1 + cached_bonus(int(n)) for n in values.tolist()], dtype=np.float64)[where.reshape(-1)]
        # The same float operations, in the same order, as rank_score's weight.
        self.weight = (_scope_weights()[pool["scope"]] * np.where(claim[ranked], CLAIM_WEIGHT, 1.0)
                       * np.where(stale, STALE_WEIGHT, 1.0))
        self.retraction = (((pool_flags & ft.RETRACTION) != 0) & ranking.RETRACTIONS_LAST).tolist()
        self.stale = stale.tolist()
        self.claim = claim[ranked].tolist()
        self.statement = ((pool_flags & ft.STATEMENT) != 0).tolist()  # may join a family (newest_in_family)
        # Pool positions of trusted path-scoped constraints (a constraint for its files), and of
        # every fact that may be about a file (citing code or scoped to paths).
        self.scoped_constraints: list[int] = np.flatnonzero((is_constraint & standing & scoped)[ranked]).tolist()
        self.about_files: list[int] = np.flatnonzero((pool_flags & (ft.HAS_PATHS | ft.HAS_CITATIONS)) != 0).tolist()
        self.source: Sequence[Fact] | None = None   # the list object this layout was last asked for
        positions = np.array(self.constraints, dtype=np.int64)
        ids = rows["id"][positions]
        id_rank = np.empty(len(ids), dtype=np.int64)
        id_rank[np.argsort(ids, kind="stable")] = np.arange(len(ids))  # 16 hex digits: numeric order is text order
        self._constraint_keys = (positions, rows["scope"][positions].astype(np.int64), id_rank,
                                 rows["tokens"][positions].astype(np.int64))

    def unpromotable(self, ranked: Sequence[tuple[int, float]]) -> frozenset[int]:
        """The pool positions among *ranked* that may not take another fact's place: claims and
        stale facts."""
        return frozenset(i for i, _ in ranked if self.claim[i] or self.stale[i])

    _NOT_PER_POOL = frozenset({"constraints", "unknowns", "retired", "scoped_constraints", "about_files", "source",
                               "_constraint_keys", "table"})

    def subset(self, positions: np.ndarray) -> _Layout:
        """The same layout with its ranked pool cut to *positions* (indices into `pool`): every
        per-pool column (a list, array or view as long as the pool) is cut alike."""
        import numpy as np

        from neo_git.fact_table import TableView

        sub = object.__new__(type(self))
        n = len(self.pool)
        picked = positions.tolist()
        for name, value in vars(self).items():
            if name in self._NOT_PER_POOL:
                pass
            elif isinstance(value, np.ndarray) and value.shape[:1] == (n,):
                value = value[positions]
            elif isinstance(value, TableView) and len(value) == n:
                value = value.take(picked)
            elif isinstance(value, list) and len(value) == n:
                value = [value[i] for i in picked]
            setattr(sub, name, value)
        return sub

    @classmethod
    def of(cls, facts: Sequence[Fact], untrusted: frozenset = frozenset()) -> _Layout:
        from neo_git.fact_table import FactTable

        known, claims, layout = cls.memo
        if layout is not None and layout.source is facts and (claims is untrusted or claims == untrusted):
            return layout  # the very list the store handed out last time (it keeps one while nothing changes)
        if isinstance(facts, FactTable):  # a table is reused by identity only: never walked
            layout = cls(facts, untrusted)
            cls.memo = ([], untrusted, layout)
        elif (layout is None or claims != untrusted or len(known) != len(facts)
                or not all(a is b for a, b in zip(known, facts))):
            layout = cls(facts, untrusted)
            cls.memo = (list(facts), untrusted, layout)
        layout.source = facts
        return layout

    def constraint_order(self, facts: Sequence[Fact], cos_all: np.ndarray) -> tuple[list[int], list[int]]:
        """The constraints by (scope order, -cosine, id), and their sizes in tokens, in that order.
        Sorted in numpy, sizes kept: a store can hold thousands of constraints, and a Python sort
        with a key per constraint plus their sizes cost ~10 ms at 2,500."""
        import numpy as np

        positions, scope_rank, id_rank, sizes = self._constraint_keys
        cos = cos_all[positions] if len(positions) else np.zeros(0)
        order = np.lexsort((id_rank, -cos, scope_rank))
        return positions[order].tolist(), sizes[order].tolist()


def considered_retired(rows: np.ndarray) -> np.ndarray:
    """Table positions (ascending) of the retired facts recall's "what changed" layer considers:
    each one a fact valid now replaced (its `superseded_by`), and the `RECENT_RETIRED` retired
    last (by `metadata.invalidation.at`; ties: the later position). From the rows alone."""
    import numpy as np

    from neo_git import fact_table as ft

    global _CONSIDERED
    memo = _CONSIDERED
    if memo[0] is not None and memo[0]() is rows and memo[1] == RECENT_RETIRED:
        return memo[2]   # asked twice per recall: for the cosines to read, then by the layout
    flags = rows["flags"]
    valid = (flags & ft.VALID) != 0
    retired = np.flatnonzero(~valid)
    if len(retired) > RECENT_RETIRED:
        replaced = ((flags[retired] & ft.SUPERSEDED_BY) != 0) & \
            ft.member(rows["superseded_by"][retired], rows["id"][valid])
        # One number per fact orders by (time, position) without ties: the top RECENT_RETIRED are
        # picked in linear time, the same ones whatever the order of equal times.
        order = rows["retired_at"][retired].astype(np.int64) * (len(rows) + 1) + retired
        replaced[np.argpartition(-order, RECENT_RETIRED - 1)[:RECENT_RETIRED]] = True
        retired = retired[replaced]
    _CONSIDERED = (weakref.ref(rows), RECENT_RETIRED, retired)
    return retired


_CONSIDERED: tuple = (None, 0, None)   # (a weak reference to the rows, RECENT_RETIRED, the answer)


def scored_positions(rows: np.ndarray) -> np.ndarray | None:
    """Table positions whose cosine to the question recall reads (ascending): every fact but the
    retired ones "what changed" does not consider; None when that is every fact."""
    import numpy as np

    from neo_git import fact_table as ft

    retired = (rows["flags"] & ft.VALID) == 0
    if int(retired.sum()) <= RECENT_RETIRED:
        return None
    wanted = ~retired
    wanted[considered_retired(rows)] = True
    return np.flatnonzero(wanted)


@lru_cache(maxsize=1)
def _scope_weights() -> np.ndarray:
    """SCOPE_WEIGHT as an array indexed by a row's scope (its place in SCOPE_ORDER)."""
    import numpy as np

    return np.array([SCOPE_WEIGHT[scope] for scope in SCOPE_ORDER], dtype=np.float64)


def _claims(ids: np.ndarray, untrusted: frozenset) -> np.ndarray:
    """Which row ids are claims (in *untrusted*), as a boolean array."""
    import numpy as np

    if not untrusted:
        return np.zeros(len(ids), dtype=bool)
    from neo_git.fact_table import member

    wanted = np.array([int(i, 16) for i in untrusted if isinstance(i, str) and _HEX_ID.match(i)], dtype=np.uint64)
    return member(ids, wanted)


_HEX_ID = re.compile(r"^[0-9a-f]{16}$")


def above_floor(layout: _Layout, pool_cos: np.ndarray, floor: float | None) -> tuple[_Layout, np.ndarray]:
    """The ranked pool cut to the facts relevant to the question at all: cosine ≥ *floor*, the
    active embedder's calibrated relevance floor (None: no floor). A NaN cosine is never relevant.
    Ranking (the order among relevant facts) is `ranking.rank`'s business, not this one's."""
    if floor is None:
        return layout, pool_cos
    import numpy as np

    keep = np.flatnonzero(pool_cos >= floor)
    if len(keep) == len(layout.pool):
        return layout, pool_cos
    return layout.subset(keep), pool_cos[keep]


def _take_relevant(table, candidates: Sequence[int] | np.ndarray, relevance: np.ndarray, floor: float, k: int,
                   used: int, max_tokens: int) -> tuple[list[int], int]:
    """Up to *k* of *candidates* (table positions; *relevance* holds their relevance, in
    order), most relevant first (ties by id), none below *floor*, each only if it still fits
    the budget; returns them and the tokens now used."""
    import numpy as np

    taken: list[int] = []
    if k <= 0 or not len(candidates):
        return taken, used
    # Sorting stops at the first fact below the floor: sort only those above it (NaN never is).
    above = np.flatnonzero(relevance >= floor)
    positions = np.asarray(candidates, dtype=np.int64)[above]
    rows = table.rows
    order = np.lexsort((rows["id"][positions], -relevance[above]))  # ids: numeric order is text order
    sizes = rows["tokens"]
    for i in positions[order].tolist():
        if len(taken) >= k:
            break
        size = int(sizes[i])
        if used + size <= max_tokens:
            taken.append(i)
            used += size
    return taken, used


def assemble(query: str, facts: Sequence[Fact], cosines: np.ndarray, *, k: int = 5,
             max_tokens: int = 12000, environment: dict | None = None,
             last_accessed: Mapping[str, str | None] | None = None,
             untrusted: frozenset = frozenset(), vectors: np.ndarray | None = None,
             family_threshold: float | None = None, file: str | None = None,
             floor: float | None = None, noise: Noise | None = None,
             lexical: Callable[[Sequence[int]], Words] | None = None, explain: bool = False) -> ContextResult:
    """Pack *facts* (with their cosine to the query, same order) into layers.

    *last_accessed* holds access times kept outside the facts (the local access log);
    *untrusted* the ids of claims (ranked lower, never constraints, listed in the result);
    *vectors* the facts' vectors (rows in *facts* order) and *family_threshold* the cosine from
    which two facts are related (`embed.family_threshold`, the embedder's own): with both,
    the newest of related facts comes first (`newest_in_family`);
    *file* the file being worked on (its cited and path-scoped facts first, whatever the
    question's wording; its path-scoped constraints always);
    *noise* the embedder's `relevance.Noise` and *lexical* a function giving the words the query
    shares with the facts at some table positions (`lexical.Words`): with *noise*, recall
    returns ranked facts only when memory knows the question (`relevance.decide`), ranked by
    cosine fused with BM25; *floor* an absolute cosine floor instead (`neo.relevanceFloor`; with
    neither, every fact is relevant). Known unknowns and retired facts follow the same decision;
    constraints always apply.
    """
    if not facts:  # nothing to rank: keep numpy unloaded
        return ContextResult(query=query, environment=environment or {}, max_tokens=max_tokens, file=file,
                             floor=floor)
    import numpy as np

    accessed = last_accessed or {}
    now = datetime.now(timezone.utc)
    cos_all = np.asarray(cosines, dtype=np.float64).reshape(-1)[:len(facts)]
    layout = _Layout.of(facts, frozenset(untrusted))
    facts = layout.table   # the same facts (a table decodes them as they are read)
    cos: dict[int, float] = {}
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
    file_first = _file_first(all_cos, layout, file, now, accessed, skip)  # the file's facts: no floor
    skip.update(j for j, _ in file_first)
    skip_ids = {layout.pool[j].id for j in skip}
    first = [(layout.pool[j], v, float(all_cos[j])) for j, v in file_first]
    decision = _decide(layout, all_cos, floor, noise, lexical, vectors, family_threshold)
    if decision is None:   # every fact relevant (no decision asked for)
        relevant, pool_cos, pool_rel = layout, all_cos, all_cos
    else:
        relevant, pool_cos = layout.subset(decision.keep), all_cos[decision.keep]
        pool_rel = decision.relevance[decision.keep]
    pool = relevant.pool
    picked: list[tuple[Fact, float]] = []
    window = max(4 * k, 32)
    family = vectors is not None and family_threshold is not None and ranking.NEWEST_IN_FAMILY
    # A fact a returned, trusted fact may replace (an open review question) is held back: it is
    # listed apart as possibly replaced, and the next fact takes its place.
    asking = {link.id: f.id for f in constraints if f.id not in untrusted for link in _holding_links(f)}
    held: dict[str, Fact] = {}
    for limit in (window, None):
        picked, taken_cosines, taken, exhausted = [], [], used, True
        ranked = rank(pool_rel, relevant, now, accessed, limit)
        echoed = echo_positions(ranked[:window], pool, query)
        ranked[:window] = demote_echoes(ranked[:window], pool, query, echoed)
        if family and vectors is not None and family_threshold is not None:  # only the head of the ranking can reach the answer; pairs cost O(window²)
            # Echoes, claims and stale facts join no family: none takes a trusted, current fact's place.
            cleared = echoed | relevant.unpromotable(ranked[:window])
            statement = ranking.Except(relevant.statement, cleared) if cleared else relevant.statement
            ranked[:window] = newest_in_family(ranked[:window], pool, vectors, family_threshold,
                                               relevant.retraction, rows=relevant.ranked, statement=statement)
        entries = [*first, *((pool[j], v, float(pool_cos[j])) for j, v in ranked if pool[j].id not in skip_ids)]
        entries = _hold_questioned(entries, asking, untrusted, held, k)
        for fact, score, cosine_to_query in entries:
            if len(picked) >= k:
                exhausted = False
                break
            if taken + fact.tokens > max_tokens:
                continue
            picked.append((fact, score))
            taken_cosines.append(cosine_to_query)
            taken += fact.tokens
        if not exhausted or limit is None or limit >= len(pool):
            break
    for fact, score in picked:
        scores[fact.id] = score
    relevance_of = {f.id: value for (f, _), value in zip(picked, taken_cosines)}
    valid_facts = [fact for fact, _ in picked]
    shown_ids = {f.id for f in (*constraints, *valid_facts)}
    questioned = [f for f in held.values() if f.id not in shown_ids]
    asked_by: dict[str, str] = {}
    for f in (*constraints, *valid_facts):
        if f.id not in untrusted:
            for link in _holding_links(f):
                asked_by.setdefault(link.id, f.id)
    questioned = [f for f in questioned if f.id in asked_by][:k]
    used = taken

    # 3. known unknowns that bear on the question (none when memory does not know it).
    bar = _layer_floor(decision, floor)
    taken_unknowns, used = _take_relevant(facts, layout.unknowns, cos_all[layout.unknowns],
                                          max(KNOWN_UNKNOWN_MIN_COSINE, bar), k, used, max_tokens)
    known_unknowns = [facts[i] for i in taken_unknowns]
    scores.update((facts[i].id, cosine(i)) for i in taken_unknowns)

    # 4. what changed: superseded predecessors of what we return, and relevant retired facts.
    returned = {f.id for f in valid_facts} | {f.id for f in constraints}

    from neo_git.fact_table import SUPERSEDED_BY, member

    retired = np.asarray(layout.retired, dtype=np.int64)
    rows = facts.rows[retired]
    successors = np.array([int(i, 16) for i in returned], dtype=np.uint64)
    # A superseded predecessor of what we return comes first: its relevance is cosine + 1.
    predecessor = ((rows["flags"] & SUPERSEDED_BY) != 0) & member(rows["superseded_by"], successors)
    taken_retired, used = _take_relevant(facts, retired, cos_all[retired] + np.where(predecessor, 1.0, 0.0),
                                         max(INVALIDATED_MIN_COSINE, bar), k, used, max_tokens)
    invalidated = [facts[i] for i in taken_retired]
    explanation = None
    if explain:
        from neo_git.fact_table import hex_id
        from neo_git.relevance import explain as explain_decision

        ids = [hex_id(int(v)) for v in facts.rows["id"][layout.ranked].tolist()]   # no fact decoded
        at = {fid: j for j, fid in enumerate(ids)}
        positions = [at[f.id] for f in valid_facts if f.id in at]
        if decision is not None and decision.best is not None:
            positions.append(decision.best)
        pool_view = layout.pool
        explanation = explain_decision(decision, all_cos, ids, {j: pool_view[j].text for j in positions}, query,
                                       [f.id for f in valid_facts], {j: pool_view[j].subject for j in positions})
    claims = tuple(f.id for f in (*valid_facts, *known_unknowns, *invalidated) if f.id in untrusted)
    shown = (*constraints, *valid_facts, *known_unknowns)
    stale = {f.id: note for f in shown for note in (stale_note(f),) if note}
    on_file = tuple(f.id for f in shown if about_file(f, file))
    marks = _marks(facts, constraints, valid_facts, known_unknowns, invalidated)
    relevance_of.update((facts[i].id, cosine(i)) for i in (*taken_unknowns, *taken_retired))
    return ContextResult(query=query, constraints=constraints, valid_facts=valid_facts,
                         invalidated=invalidated, known_unknowns=known_unknowns,
                         questioned=questioned, questioned_by={f.id: asked_by[f.id] for f in questioned},
                         environment=environment or {}, scores=scores, tokens=used, max_tokens=max_tokens,
                         untrusted=claims, stale=stale, file=file, file_facts=on_file,
                         floor=floor if decision is None or decision.override is not None else decision.threshold,
                         relevance=relevance_of, decision=decision, explanation=explanation, **marks)


def _decide(layout: _Layout, cos: np.ndarray, floor: float | None, noise: Noise | None,
            lexical: Callable[[Sequence[int]], Words] | None, vectors: np.ndarray | None,
            family_threshold: float | None) -> Decision | None:
    """The relevance decision over the ranked pool (None: neither a floor nor a noise model, so
    every fact is relevant). A fact of the best fact's thread (its cosine to the best fact reaches
    *family_threshold*) bears on the question too: a thread's latest word may share none of its
    words ("Let's discuss this with the team next week" after "We could use AWS or Google
    Cloud")."""
    if floor is None and noise is None:
        return None
    import numpy as np

    from neo_git.relevance import Noise, decide

    ranked = layout.ranked
    bm25: dict[int, float] = {}
    rare: dict[int, tuple[str, ...]] = {}
    if lexical is not None and ranked and floor is None:
        at = {row: j for j, row in enumerate(ranked)}
        words = lexical(ranked)
        bm25 = {at[row]: value for row, value in words.bm25.items() if row in at}
        rare = {at[row]: value for row, value in words.rare.items() if row in at}
    decision = decide(cos, bm25, noise or Noise(0.0, 0.0), len(ranked), override=floor, rare=rare)
    if (decision.known and decision.override is None and vectors is not None and family_threshold is not None
            and decision.best is not None):
        related = np.flatnonzero(_cosines_to(vectors, ranked, decision.best) >= family_threshold)
        if len(related):
            keep = np.union1d(decision.keep, related)
            decision = replace(decision, keep=keep)
    return decision


def _cosines_to(vectors, rows: Sequence[int], best: int) -> np.ndarray:
    """The cosine of the vector of each of *rows* with that of rows[*best*] (float32). Vectors that
    can (`cosines_with`: a table's, read from the vector file) compute it without holding every
    row at once (a copy of 100 MB at 50,000 facts)."""
    import numpy as np

    from neo_git.embed.rows import cosines

    vector = np.ascontiguousarray(np.asarray(vectors[[rows[best]]], dtype=np.float32)[0])
    streamed = getattr(vectors, "cosines_with", None)
    if streamed is not None:
        return streamed(rows, vector)
    return cosines(np.ascontiguousarray(np.asarray(vectors[list(rows)], dtype=np.float32)), vector)


def _hold_questioned(entries: list, asking: Mapping[str, str], untrusted: frozenset,
                     held: dict[str, Fact], k: int) -> list:
    """*entries* ((fact, score, cosine), best first) without the facts that a fact among the first
    *k* shown (or a constraint, *asking*: {asked id: asker id}) may replace by an open review
    question; those go to *held*. Only trusted facts ask: a claim never pushes a fact out."""
    asked = dict(asking)
    while True:
        out = [entry for entry in entries if entry[0].id not in asked]
        present = {entry[0].id for entry in out}
        more = {link.id: fact.id for fact, *_ in out[:k] if fact.id not in untrusted
                for link in _holding_links(fact) if link.id in present and link.id not in asked}
        if not more:
            break
        asked.update(more)
    held.update((entry[0].id, entry[0]) for entry in entries if entry[0].id in asked)
    return out


def _holding_links(fact: Fact) -> list[PossibleLink]:
    """The open review questions of *fact* that hold their candidate back: not one a person
    answered already by restoring the candidate (`restored`)."""
    return [link for link in open_links(fact) if not link.restored]


def _layer_floor(decision: Decision | None, floor: float | None) -> float:
    """The cosine known unknowns and retired facts need: nothing without a decision, the user's
    floor, the known threshold when memory knows the question, and above any cosine when not."""
    if decision is None:
        return floor if floor is not None else 0.0
    if decision.override is not None:
        return decision.override
    return decision.threshold if decision.known else 2.0


def _marks(facts, *layers: Sequence[Fact]) -> dict:
    """What the returned facts need said about them: successors of the retired ones, the other
    side of open conflicts, open proposals (see neo_git.knowledge). *facts* is a FactTable."""
    from neo_git.fact_table import table_conflicts

    returned = [f for layer in layers for f in layer]
    partners = table_conflicts(facts)
    conflicts = {f.id: partners[f.id] for f in returned if f.id in partners}
    retired = [f for f in returned if not f.is_valid and f.superseded_by]
    successors: dict[str, Fact] = {}
    if retired:
        by_id = facts.by_id()
        for old in retired:
            new = current_successor(old, by_id)
            if new is not None:
                successors[old.id] = new
    return {"successors": successors, "conflicts": conflicts,
            "proposals": tuple(f.id for f in returned if is_open_proposal(f))}


def environment(repo: pygit2.Repository | None, paths: RepositoryPaths | None, org_id: str) -> dict:
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
            env["branch"] = str(repo.references["HEAD"].target).removeprefix("refs/heads/")
        else:
            env["head"] = str(repo.head.target)[:12]
            env["detached"] = repo.head_is_detached
            if not repo.head_is_detached:
                env["branch"] = repo.head.shorthand
    except Exception:  # noqa: BLE001 - environment is best effort
        pass
    return env
