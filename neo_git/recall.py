"""Recall in layers within a token budget (DESIGN.md §5).

`constraints` always come first (global → org → project → session, at most
2/3 of the budget), then `valid_facts` ranked by
cos(query, fact) × confidence × (1 + success_bonus) × scope weight + recency,
then `invalidated` facts relevant to the query ("this changed from X"), and
`known_unknowns`. The store supplies facts and their vectors; this module
only ranks and packs.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from neo_git.facts import SCOPE_ORDER, Fact, FactKind, FactScope
from neo_git.store.policy import success_bonus

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

LAYERS = ("constraints", "valid_facts", "invalidated", "known_unknowns")
CONSTRAINT_SHARE = 2 / 3
RECENCY_BOOST = 0.05
SESSION_WINDOW = timedelta(hours=4)   # "touched in this session": created or recalled this recently
INVALIDATED_MIN_COSINE = 0.25
KNOWN_UNKNOWN_MIN_COSINE = 0.1
# More specific scopes win ties: what this repository says beats what the org says.
SCOPE_WEIGHT = {FactScope.SESSION: 1.0, FactScope.PROJECT: 1.0, FactScope.ORG: 0.97, FactScope.GLOBAL: 0.94}


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

    @property
    def returned_ids(self) -> list[str]:
        """Ids of the facts handed to the caller as current knowledge (counted as accessed)."""
        return [f.id for f in (*self.constraints, *self.valid_facts, *self.known_unknowns)]

    def with_facts(self, transform: Callable[[Fact], Fact]) -> "ContextResult":
        """The same result with every fact passed through *transform*."""
        return replace(self, **{layer: [transform(f) for f in getattr(self, layer)] for layer in LAYERS})

    def to_dict(self) -> dict:
        """The `git neo recall --json` object."""
        return {
            "query": self.query,
            "constraints": [f.to_dict() for f in self.constraints],
            "valid_facts": [f.to_dict() for f in self.valid_facts],
            "invalidated": [f.to_dict() for f in self.invalidated],
            "known_unknowns": [f.to_dict() for f in self.known_unknowns],
            "environment": self.environment,
            "scores": {k: round(v, 4) for k, v in self.scores.items()},
            "tokens": self.tokens,
            "max_tokens": self.max_tokens,
        }


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
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


def rank_score(cosine: float, fact: Fact, now: datetime, last_accessed: str | None = None) -> float:
    """The ranking formula of DESIGN.md §5."""
    meta = fact.metadata
    return (cosine * meta.confidence * (1 + success_bonus(meta.success_count)) * SCOPE_WEIGHT[fact.scope]
            + recency_boost(fact, now, last_accessed))


def assemble(query: str, facts: Sequence[Fact], cosines: "np.ndarray", *, k: int = 5,
             max_tokens: int = 12000, environment: dict | None = None,
             last_accessed: Mapping[str, str | None] | None = None) -> ContextResult:
    """Pack *facts* (with their cosine to the query, same order) into layers.

    *last_accessed* holds access times kept outside the facts (the local access log).
    """
    accessed = last_accessed or {}
    now = datetime.now(timezone.utc)
    cos = {f.id: float(c) for f, c in zip(facts, cosines)}
    valid = [f for f in facts if f.is_valid]
    scores: dict[str, float] = {}

    # 1. constraints: always, most general scope first, most relevant first within a scope.
    constraint_budget = int(max_tokens * CONSTRAINT_SHARE)
    constraints, used = [], 0
    ordered = sorted((f for f in valid if f.kind is FactKind.CONSTRAINT),
                     key=lambda f: (SCOPE_ORDER.index(f.scope), -cos[f.id], f.id))
    for fact in ordered:
        if used + fact.tokens > constraint_budget:
            continue
        constraints.append(fact)
        used += fact.tokens
        scores[fact.id] = cos[fact.id]

    # 2. ranked facts, within what the constraints left.
    ranked = sorted(
        ((rank_score(cos[f.id], f, now, accessed.get(f.id)), f) for f in valid
         if f.kind not in (FactKind.CONSTRAINT, FactKind.KNOWN_UNKNOWN)),
        key=lambda pair: (-pair[0], pair[1].id))
    valid_facts = []
    for score, fact in ranked:
        if len(valid_facts) >= k:
            break
        if used + fact.tokens > max_tokens:
            continue
        valid_facts.append(fact)
        used += fact.tokens
        scores[fact.id] = score

    # 3. known unknowns that bear on the question.
    known_unknowns = []
    for fact in sorted((f for f in valid if f.kind is FactKind.KNOWN_UNKNOWN), key=lambda f: -cos[f.id]):
        if len(known_unknowns) >= k or cos[fact.id] < KNOWN_UNKNOWN_MIN_COSINE:
            break
        if used + fact.tokens <= max_tokens:
            known_unknowns.append(fact)
            used += fact.tokens
            scores[fact.id] = cos[fact.id]

    # 4. what changed: superseded predecessors of what we return, and relevant retired facts.
    returned = {f.id for f in valid_facts} | {f.id for f in constraints}
    retired = [f for f in facts if not f.is_valid]
    def relevance(fact: Fact) -> float:
        successor_shown = fact.superseded_by in returned
        return cos[fact.id] + (1.0 if successor_shown else 0.0)
    invalidated = []
    for fact in sorted(retired, key=lambda f: (-relevance(f), f.id)):
        if len(invalidated) >= k or relevance(fact) < INVALIDATED_MIN_COSINE:
            break
        if used + fact.tokens <= max_tokens:
            invalidated.append(fact)
            used += fact.tokens
    return ContextResult(query=query, constraints=constraints, valid_facts=valid_facts,
                         invalidated=invalidated, known_unknowns=known_unknowns,
                         environment=environment or {}, scores=scores, tokens=used, max_tokens=max_tokens)
