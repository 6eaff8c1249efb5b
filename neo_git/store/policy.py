"""The write policy (DESIGN.md §4), as pure functions over one scope's facts.

Given the facts a backend holds now and a new fact, `plan_add` decides:
duplicate (nothing to write), explicit or similarity-based supersession
(pointers both ways, confidence carried over, dependents flagged for review),
and the scope cap (lowest-scoring unprotected facts evicted). The backend runs
it inside its transaction, so a retry re-plans against the newest state.

Lookups go through a `FactIndex` (the one the backend keeps, or one built here
for a plain dict), so an add does not scan every stored fact. Where several
facts tie (equal duplicates, equal cosine) the smallest fact id wins, and
flagged dependents are listed by id: no decision depends on storage order.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from neo_git.errors import NeoError
from neo_git.facts import Fact, FactScope, now_iso
from neo_git.scoring import retention_score, success_bonus  # noqa: F401 - re-exported
from neo_git.store.base import Change
from neo_git.store.index import FactIndex, PeerGroup

SCOPE_CAPS = {FactScope.GLOBAL: 200, FactScope.ORG: 100, FactScope.PROJECT: 500, FactScope.SESSION: 50}
CONFIDENCE_CARRY = 0.05

# Cosine similarities of the new fact against a group's rows (`group.rows`, in order; the
# scores of dead rows are ignored). An ndarray takes the vectorised path.
Similarity = Callable[[PeerGroup], Sequence[float]]


def index_of(facts: Mapping[str, Fact]) -> FactIndex:
    """The index the backend keeps with *facts*, or one built now (small file-backed scopes)."""
    index = getattr(facts, "index", None)
    return index if isinstance(index, FactIndex) else FactIndex.build(facts)


def find_duplicate(facts: Mapping[str, Fact], new: Fact) -> Fact | None:
    """A valid fact of the same scope and kind that says exactly the same thing (smallest id if several)."""
    found = index_of(facts).duplicate_of(new)
    return None if found is None else facts[found]


@dataclass(frozen=True)
class AddResult:
    """What an add did."""

    fact: Fact                      # the stored fact (or the existing duplicate)
    superseded: Fact | None = None  # the fact it replaced, as now stored (invalid)
    duplicate: bool = False
    flagged: tuple[str, ...] = ()   # dependents marked needs_review
    evicted: tuple[str, ...] = ()   # facts invalidated by the scope cap


def plan_add(facts: Mapping[str, Fact], new: Fact, *, similarity: Similarity, threshold: float,
             embedder_id: str, explicit: str | None = None, cap: int | None = None) -> tuple[AddResult, Change | None]:
    """Decide what adding *new* to *facts* writes (facts may carry their `FactIndex` as `.index`)."""
    index = index_of(facts)
    duplicate = index.duplicate_of(new)
    if duplicate is not None:
        return AddResult(facts[duplicate], duplicate=True), None
    for dep in new.depends_on:
        if dep not in facts:
            raise NeoError(f"depends-on fact '{dep}' is not in the {new.scope.value} scope",
                           "a fact can depend only on facts of its own scope")
    old, sim = _supersession_target(facts, new, similarity, threshold, explicit, index.group(new.scope, new.kind))
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
        for fact_id in index.dependents(old.id):  # valid dependents, by id
            fact = facts[fact_id]
            if not fact.needs_review:
                changed[fact.id] = fact.evolve(needs_review=True)
                flagged.append(fact.id)
    changed[new.id] = new
    evicted = _apply_cap(facts, index, changed, new, cap, stamp)
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


def _supersession_target(facts: Mapping[str, Fact], new: Fact, similarity: Similarity, threshold: float,
                         explicit: str | None, group: PeerGroup | None) -> tuple[Fact | None, float | None]:
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
    if group is None or not group.members:
        return None, None
    best, score = _most_similar(group, similarity(group), threshold)
    if best is None:
        return None, None
    return group.members[best], float(score)


def _most_similar(group: PeerGroup, scores: Sequence[float], threshold: float) -> tuple[str | None, float]:
    """(id, score) of the live row scoring highest if that reaches *threshold*, else (None, score).
    Equal top scores go to the smallest id; a NaN score never wins."""
    rows = group.rows
    np = sys.modules.get("numpy")  # only an ndarray takes the fast path, so never import numpy here
    if np is not None and isinstance(scores, np.ndarray) and scores.ndim == 1:
        alive = np.frombuffer(bytes(group.alive), dtype=np.bool_)  # a copy: the bytearray keeps growing
        live = np.where(alive & ~np.isnan(scores), scores, -np.inf)
        top = live.max()
        if not top >= threshold:  # checked before the ties: below it, thousands may tie at 0
            return None, top
        return min(rows[i].id for i in np.flatnonzero(live == top).tolist()), top
    best, top = None, -math.inf
    for row, fact in enumerate(rows):
        score = scores[row]
        if not group.alive[row] or score != score:  # dead row or NaN
            continue
        if score > top or (score == top and fact.id < best):
            best, top = fact.id, score
    return (best, top) if best is not None and top >= threshold else (None, top)


def _apply_cap(facts: Mapping[str, Fact], index: FactIndex, changed: dict[str, Fact], new: Fact,
               cap: int | None, stamp: str) -> list[str]:
    if cap is None or len(facts) + len(changed) <= cap:  # cannot be over: skip the count
        return []
    scope = new.scope
    valid_after = index.valid_count(scope)  # the count after this change, without a scan
    for fact in changed.values():
        before = facts.get(fact.id)
        valid_after -= before is not None and before.is_valid and before.scope is scope
        valid_after += fact.is_valid and fact.scope is scope
    if valid_after <= cap:
        return []
    # Over the cap: rare, and eviction must rank every valid fact, so O(facts) here.
    current = {**facts, **changed}
    valid = [f for f in current.values() if f.is_valid and f.scope is scope]
    evicted = plan_evictions(valid, scope, cap, stamp, keep=(new.id,))
    changed.update((f.id, f) for f in evicted)
    return [f.id for f in evicted]


def plan_evictions(valid: Sequence[Fact], scope: FactScope, cap: int, stamp: str,
                   keep: Sequence[str] = ()) -> list[Fact]:
    """The facts to invalidate (as evolved copies saying why) so that *valid*, the valid facts of
    *scope*, fits its *cap*: the lowest `retention_score` first, never a protected fact
    (constraints, seed/community/synthesized tags) nor one whose id is in *keep*."""
    excess = len(valid) - cap
    if excess <= 0:
        return []
    evictable = sorted((f for f in valid if not f.is_protected and f.id not in keep),
                       key=lambda f: (retention_score(f), f.metadata.created_at, f.id))
    return [fact.evolve(is_valid=False, metadata={"invalidation": {
        "reason": "evicted", "at": stamp,
        "detail": f"the {scope.value} scope was over its cap of {cap} valid facts; "
                  f"this one scored lowest ({retention_score(fact):.3f})",
    }}) for fact in evictable[:excess]]
