"""The write policy (DESIGN.md §4), as pure functions over one scope's facts.

Given the facts a backend holds now and a new fact, `plan_add` decides:
duplicate (nothing to write), explicit or similarity-based supersession
(pointers both ways, confidence carried over, dependents flagged for review),
and the scope cap (lowest-scoring unprotected facts evicted). The backend runs
it inside its transaction, so a retry re-plans against the newest state.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

from neo_git.errors import NeoError
from neo_git.facts import Fact, FactScope, now_iso
from neo_git.store.base import Change

SCOPE_CAPS = {FactScope.GLOBAL: 200, FactScope.ORG: 100, FactScope.PROJECT: 500, FactScope.SESSION: 50}
CONFIDENCE_CARRY = 0.05

# cosine similarities of the new fact against candidate facts, in order
Similarity = Callable[[Sequence[Fact]], Sequence[float]]


def success_bonus(success_count: int) -> float:
    """min(0.2, 0.1·log2(n+1)): proven advice ranks higher, with a ceiling."""
    return min(0.2, 0.1 * math.log2(success_count + 1))


def retention_score(fact: Fact) -> float:
    """How much a fact is worth keeping when a scope is over its cap."""
    return fact.metadata.confidence * (1 + success_bonus(fact.metadata.success_count))


@lru_cache(maxsize=1 << 18)
def _normalized(text: str) -> str:
    # Cached: every add compares the new fact with all valid facts of its kind, whose
    # (unchanging) texts would otherwise be split and case-folded again each time.
    return " ".join(text.split()).casefold()


def find_duplicate(facts: dict[str, Fact], new: Fact) -> Fact | None:
    """A valid fact of the same scope and kind that says exactly the same thing."""
    return _duplicate_among(_peers(facts, new), new)


def _peers(facts: dict[str, Fact], new: Fact) -> list[Fact]:
    """The valid facts of *new*'s scope and kind, in store order: what it may duplicate or supersede."""
    kind, scope = new.kind, new.scope
    return [f for f in facts.values() if f.kind is kind and f.is_valid and f.scope is scope]


def _duplicate_among(peers: list[Fact], new: Fact) -> Fact | None:
    subject, body = _normalized(new.subject), _normalized(new.body)
    for fact in peers:
        if _normalized(fact.subject) == subject and _normalized(fact.body) == body:
            return fact
    return None


@dataclass(frozen=True)
class AddResult:
    """What an add did."""

    fact: Fact                      # the stored fact (or the existing duplicate)
    superseded: Fact | None = None  # the fact it replaced, as now stored (invalid)
    duplicate: bool = False
    flagged: tuple[str, ...] = ()   # dependents marked needs_review
    evicted: tuple[str, ...] = ()   # facts invalidated by the scope cap


def plan_add(facts: dict[str, Fact], new: Fact, *, similarity: Similarity, threshold: float,
             embedder_id: str, explicit: str | None = None, cap: int | None = None) -> tuple[AddResult, Change | None]:
    """Decide what adding *new* to *facts* writes."""
    peers = _peers(facts, new)  # one pass over the scope serves both checks
    duplicate = _duplicate_among(peers, new)
    if duplicate is not None:
        return AddResult(duplicate, duplicate=True), None
    for dep in new.depends_on:
        if dep not in facts:
            raise NeoError(f"depends-on fact '{dep}' is not in the {new.scope.value} scope",
                           "a fact can depend only on facts of its own scope")
    old, sim = _supersession_target(facts, new, similarity, threshold, explicit, peers)
    changed: dict[str, Fact] = {}
    flagged: list[str] = []
    stamp = now_iso()
    if old is not None:
        confidence = max(new.metadata.confidence, min(1.0, old.metadata.confidence + CONFIDENCE_CARRY))
        new = new.evolve(supersedes=old.id, metadata={"confidence": confidence})
        old = old.evolve(is_valid=False, superseded_by=new.id, metadata={"invalidation": {
            "reason": "superseded", "at": stamp, "by": new.id, "explicit": explicit is not None,
            "similarity": None if sim is None else round(sim, 4),
            "threshold": None if explicit else threshold, "embedder": embedder_id,
        }})
        changed[old.id] = old
        for fact in facts.values():
            if fact.is_valid and old.id in fact.depends_on and not fact.needs_review:
                changed[fact.id] = fact.evolve(needs_review=True)
                flagged.append(fact.id)
    changed[new.id] = new
    evicted = _apply_cap(facts, changed, new, cap, stamp)
    kind = new.kind.value
    if old is not None:
        message = f"supersede {old.id} by {new.id}: {new.subject}"
    else:
        message = f"add {kind} {new.id}: {new.subject}"
    details = [f"flag {fid} for review (depends on {old.id})" for fid in flagged]
    details += [f"evict {fid} (over the {new.scope.value} cap of {cap})" for fid in evicted]
    change = Change(tuple(changed.values()), message[:120], tuple(details))
    result = AddResult(new, superseded=old, flagged=tuple(flagged), evicted=tuple(evicted))
    return result, change


def _supersession_target(facts: dict[str, Fact], new: Fact, similarity: Similarity, threshold: float,
                         explicit: str | None, candidates: list[Fact]) -> tuple[Fact | None, float | None]:
    if explicit is not None:
        old = facts.get(explicit)
        if old is None:
            raise NeoError(f"cannot supersede '{explicit}': no such fact in the {new.scope.value} scope",
                           "a fact can supersede only a fact of its own scope; `git neo list --all` shows ids")
        if not old.is_valid:
            hint = f"it was superseded by {old.superseded_by}; supersede that one" if old.superseded_by \
                else "restore it first with `git neo restore`"
            raise NeoError(f"cannot supersede '{explicit}': it is no longer valid", hint)
        return old, None
    if not candidates:
        return None, None
    scores = similarity(candidates)
    np = sys.modules.get("numpy")  # only an ndarray takes the fast path, so never import numpy here
    if np is not None and isinstance(scores, np.ndarray) and scores.ndim == 1 and not np.isnan(scores).any():
        best = int(scores.argmax())  # the first maximum, as max() below would pick
    else:
        best = max(range(len(candidates)), key=lambda i: scores[i])
    if scores[best] >= threshold:
        return candidates[best], float(scores[best])
    return None, None


def _apply_cap(facts: dict[str, Fact], changed: dict[str, Fact], new: Fact, cap: int | None,
               stamp: str) -> list[str]:
    if cap is None or len(facts) + len(changed) <= cap:  # cannot be over: skip the count
        return []
    current = {**facts, **changed}
    valid = [f for f in current.values() if f.is_valid and f.scope is new.scope]
    excess = len(valid) - cap
    if excess <= 0:
        return []
    evictable = sorted((f for f in valid if not f.is_protected and f.id != new.id),
                       key=lambda f: (retention_score(f), f.metadata.created_at, f.id))
    evicted = []
    for fact in evictable[:excess]:
        changed[fact.id] = fact.evolve(is_valid=False, metadata={"invalidation": {
            "reason": "evicted", "at": stamp,
            "detail": f"the {new.scope.value} scope was over its cap of {cap} valid facts; "
                      f"this one scored lowest ({retention_score(fact):.3f})",
        }})
        evicted.append(fact.id)
    return evicted
