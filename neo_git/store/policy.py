"""The write policy (docs/architecture.md §4), as pure functions over one scope's facts.

Given the facts a backend holds now and a new fact, `plan_add` decides:
duplicate (nothing to write), explicit or similarity-based supersession
(pointers both ways, confidence carried over, dependents flagged for review),
and the scope cap (the writer's own lowest-scoring unprotected facts evicted when its
own valid facts pass the cap; another author's facts are never evicted). The backend runs
it inside its transaction, so a retry re-plans against the newest state.

Lookups go through a `FactIndex` (the one the backend keeps, or one built here
for a plain dict), so an add does not scan every stored fact. Where several
facts tie (equal duplicates, equal cosine) the smallest fact id wins, and
flagged dependents are listed by id: no decision depends on storage order.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from neo_git.errors import NeoError
from neo_git.fact_schema import Invalidation, PossibleLink, Undo, sorted_links
from neo_git.facts import Fact, FactKind, FactScope, now_iso
from neo_git.scoring import retention_score, success_bonus  # noqa: F401 - re-exported
from neo_git.store.base import SCOPE_CAPS, Change  # noqa: F401 - SCOPE_CAPS re-exported
from neo_git.store.index import FactIndex, IndexedFacts, PeerGroup
from neo_git.store.supersession import (
    RULE_EXPLICIT,
    BodySimilarity,
    Decision,
    Thresholds,
    decide_ranked,
    ranked_candidates,
)

CONFIDENCE_CARRY = 0.05

# Cosine similarities of the new fact against a group's rows (`group.rows`, in order; the
# scores of dead rows are ignored). An ndarray takes the vectorised path.
Similarity = Callable[[PeerGroup], Sequence[float]]


def index_of(facts: Mapping[str, Fact]) -> FactIndex:
    """The index the backend keeps with *facts*, or one built now (small file-backed scopes)."""
    index = getattr(facts, "index", None)
    return index if isinstance(index, FactIndex) else FactIndex.build(facts)


@dataclass(frozen=True)
class AddResult:
    """What an add did."""

    fact: Fact                      # the stored fact (or the existing duplicate)
    superseded: Fact | None = None  # the fact it replaced, as now stored (invalid)
    duplicate: bool = False
    flagged: tuple[str, ...] = ()   # dependents marked needs_review
    evicted: tuple[str, ...] = ()   # facts invalidated by the scope cap
    rule: str | None = None         # which rule retired `superseded` (supersession.RULE_*)

    @property
    def possible(self) -> tuple[PossibleLink, ...]:
        """Facts this one may supersede, for review."""
        return self.fact.metadata.possibly_supersedes

    def to_dict(self) -> dict[str, Any]:
        """The `git neo add --json` object."""
        return {"id": self.fact.id, "superseded": self.superseded.id if self.superseded else None,
                "rule": self.rule, "possibly_supersedes": [link.to_json() for link in self.possible],
                "duplicate": self.duplicate, "flagged": list(self.flagged), "evicted": list(self.evicted)}


def plan_add(facts: Mapping[str, Fact], new: Fact, *, similarity: Similarity, thresholds: Thresholds,
             explicit: str | None = None, cap: int | None = None, body_similarity: BodySimilarity | None = None,
             exclude: Collection[str] = ()) -> tuple[AddResult, Change | None]:
    """Decide what adding *new* to *facts* writes (facts may carry their `FactIndex` as `.index`),
    with the embedder's *thresholds*; ids in *exclude* (the rest of a batch) are never superseded
    by similarity."""
    changed, result = _plan_one(facts, index_of(facts), new, similarity, thresholds, explicit, cap,
                                body_similarity, exclude, now_iso())
    if result.duplicate:
        return result, None
    return result, _change(changed, [result], cap)


def plan_many(facts: Mapping[str, Fact], items: Sequence[PlanItem], *,
              similarity: Callable[[PeerGroup, Fact], Sequence[float]], thresholds: Thresholds, cap: int | None = None,
              body_similarity: BodySimilarity | None = None) -> tuple[list[AddResult], Change | None]:
    """Plan a batch as one change: each item as `plan_add` would, except that facts of the
    batch never supersede each other (explicit pointers into the batch are allowed)."""
    if len(items) == 1:  # one add: plan against the backend's own index, no copy
        item = items[0]
        result, change = plan_add(facts, item.fact, similarity=lambda group: similarity(group, item.fact),
                                  thresholds=thresholds, explicit=item.explicit, cap=cap,
                                  body_similarity=body_similarity)
        return [result], change
    # A batch plans each fact against the facts before it (and the batch so far), on a copy:
    # the backend's index must not change inside a plan that may be retried.
    working = dict(facts)
    index = FactIndex.build(working)
    view = IndexedFacts(working, index)
    batch = frozenset(item.fact.id for item in items)
    changed: dict[str, Fact] = {}
    results: list[AddResult] = []
    stamp = now_iso()
    for item in items:
        def scores(group: PeerGroup, fact: Fact = item.fact) -> Sequence[float]:
            return similarity(group, fact)

        step, result = _plan_one(view, index, item.fact, scores, thresholds, item.explicit, cap,
                                 body_similarity, batch, stamp)
        results.append(result)
        for fact in step.values():
            index.update(working.get(fact.id), fact)
            working[fact.id] = fact
            changed[fact.id] = fact
    written = [r for r in results if not r.duplicate]
    if not written:
        return results, None
    # A batch result's facts are as planned; later steps of the batch may have changed
    # them again (flagged, evicted): report the final state.
    results = [r if r.duplicate else _final(r, changed) for r in results]
    return results, _change(changed, written, cap)


@dataclass(frozen=True)
class PlanItem:
    """One fact of a batch, with its explicit `supersedes` id (resolved) if any."""

    fact: Fact
    explicit: str | None = None


def _final(result: AddResult, changed: Mapping[str, Fact]) -> AddResult:
    superseded = changed.get(result.superseded.id) if result.superseded else None
    return replace(result, fact=changed.get(result.fact.id, result.fact), superseded=superseded)


def _plan_one(facts: Mapping[str, Fact], index: FactIndex, new: Fact, similarity: Similarity,
              thresholds: Thresholds, explicit: str | None, cap: int | None,
              body_similarity: BodySimilarity | None, exclude: Collection[str],
              stamp: str) -> tuple[dict[str, Fact], AddResult]:
    duplicate = index.duplicate_of(new)
    if duplicate is not None:
        return {}, AddResult(facts[duplicate], duplicate=True)
    for dep in new.depends_on:
        if dep not in facts:
            raise NeoError(f"depends-on fact '{dep}' is not in the {new.scope.value} scope",
                           "a fact can depend only on facts of its own scope")
    if explicit is not None:
        decision = Decision(_explicit_target(facts, new, explicit).id, RULE_EXPLICIT)
    else:
        decision = _detect(index.group(new.scope, new.kind), new, similarity, thresholds,
                           body_similarity, exclude)
    changed: dict[str, Fact] = {}
    flagged: list[str] = []
    old = facts[decision.target] if decision.target is not None else None
    if decision.possible:
        new = new.evolve(metadata={"possibly_supersedes": decision.possible})
    if old is not None and not new.metadata.proposal and new.metadata.provenance == "agent" \
            and old.metadata.provenance != "agent" and not old.metadata.proposal:
        # An agent replacing a person's fact (explicitly or by similarity) proposes it (issue 36).
        new = new.evolve(metadata={"proposal": "open"})
    if old is not None and new.metadata.proposal and not old.metadata.proposal:
        # An agent's open proposal never retires what people accepted: it may only propose to
        # (a review item once a person has accepted the proposal itself).
        new = _propose_instead(new, old, decision)
        old = None
    if old is not None:
        new, old, flagged = supersede(facts, index, new, old, decision, thresholds.embedder, stamp, changed)
    changed[new.id] = new
    evicted = _apply_cap(facts, index, changed, new, cap, stamp)
    return changed, AddResult(new, superseded=old, flagged=tuple(flagged), evicted=tuple(evicted),
                              rule=decision.rule if old is not None else None)


def _propose_instead(new: Fact, old: Fact, decision: Decision) -> Fact:
    """*new* with a `possibly_supersedes` link to *old* in place of retiring it."""
    similarity, threshold = (float(round(value, 4)) if isinstance(value, (int, float)) and not isinstance(value, bool)
                             else None for value in (decision.similarity, decision.threshold))
    link = PossibleLink(old.id, similarity, threshold)
    return new.evolve(metadata={"possibly_supersedes": sorted_links((*new.metadata.possibly_supersedes, link))})


def supersede(facts: Mapping[str, Fact], index: FactIndex, new: Fact, old: Fact, decision: Decision,
              embedder_id: str, stamp: str, changed: dict[str, Fact]) -> tuple[Fact, Fact, list[str]]:
    """Retire *old* in favour of *new* (pointers both ways, confidence carried over, valid
    dependents flagged), recording in *changed* and in old's invalidation what to undo on restore."""
    confidence = max(new.metadata.confidence, min(1.0, old.metadata.confidence + CONFIDENCE_CARRY))
    flagged = [fid for fid in index.dependents(old.id) if not facts[fid].needs_review]  # by id
    links = [link for link in new.metadata.possibly_supersedes if link.id == old.id]
    # accepted from review: restore puts the proposal back
    undo = Undo(confidence=new.metadata.confidence, carried=confidence, flagged=tuple(flagged),
                possible=links[0] if links else None)
    new = new.evolve(supersedes=old.id, metadata={
        "confidence": confidence,
        "possibly_supersedes": tuple(link for link in new.metadata.possibly_supersedes if link.id != old.id)})
    old = old.evolve(is_valid=False, superseded_by=new.id, metadata={"invalidation": Invalidation.written(
        reason="superseded", at=stamp, by=new.id, rule=decision.rule, explicit=decision.rule == RULE_EXPLICIT,
        similarity=None if decision.similarity is None else round(decision.similarity, 4),
        threshold=decision.threshold, embedder=embedder_id, undo=undo,
        **({"evidence": tuple(decision.evidence)} if decision.evidence else {}))})
    changed[old.id] = old
    for fact_id in flagged:
        changed[fact_id] = facts[fact_id].evolve(needs_review=True)
    return new, old, flagged


def _explicit_target(facts: Mapping[str, Fact], new: Fact, explicit: str) -> Fact:
    old = facts.get(explicit)
    if old is None:
        raise NeoError(f"cannot supersede '{explicit}': no such fact in the {new.scope.value} scope",
                       "a fact can supersede only a fact of its own scope; `git neo list --all` shows ids")
    if not old.is_valid:
        hint = f"it was superseded by {old.superseded_by}; supersede that one" if old.superseded_by \
            else "restore it first with `git neo restore`"
        raise NeoError(f"cannot supersede '{explicit}': it is no longer valid", hint)
    return old


def _detect(group: PeerGroup | None, new: Fact, similarity: Similarity, thresholds: Thresholds,
            body_similarity: BodySimilarity | None, exclude: Collection[str]) -> Decision:
    if not thresholds.detecting or group is None or not group.members:
        return Decision()
    same = group.same_subject(new.subject) - set(exclude)
    same_pairs, ranked = ranked_candidates(group, similarity(group), thresholds.possible, same)
    return decide_ranked(new, same_pairs, ranked, thresholds, body_similarity, exclude, same)


def _change(changed: Mapping[str, Fact], results: Sequence[AddResult], cap: int | None) -> Change:
    lines: list[str] = []
    messages = []
    for result in results:
        new = result.fact
        if result.superseded is not None:
            old = result.superseded.id
            messages.append(f"supersede {old} by {new.id}: {new.subject}")
            lines.append(f"rule: {result.rule}")
            lines += [f"flag {fid} for review (depends on {old})" for fid in result.flagged]
        else:
            messages.append(f"add {new.kind.value} {new.id}: {new.subject}")
        lines += [f"possibly supersedes {link.id} ("
                  + (f"similarity {link.similarity:.3f}; " if link.similarity is not None else "")
                  + "`git neo review`)" for link in result.possible]
        lines += [f"evict {fid} (over the {new.scope.value} cap of {cap})" for fid in result.evicted]
    if len(results) == 1:
        message = messages[0]
    else:
        message = f"add {len(results)} facts in one batch"
        lines = messages + lines
    return Change(tuple(changed.values()), message[:120], tuple(lines))


def _apply_cap(facts: Mapping[str, Fact], index: FactIndex, changed: dict[str, Fact], new: Fact,
               cap: int | None, stamp: str) -> list[str]:
    """Evict the writer's lowest-scoring facts when its own valid facts of the scope pass *cap*.
    Facts in `cap.others()` (someone else's) are neither counted nor evicted: a teammate's fact
    is never retired by our write. Work: the scope's valid ids from the index, and the writer's
    own valid facts decoded to rank them, only when the scope is over the cap at all."""
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
    ids = valid_ids(index, scope)
    for fact in changed.values():
        if fact.is_valid and fact.scope is scope:
            ids.add(fact.id)
        else:
            ids.discard(fact.id)
    others = getattr(cap, "others", None)
    if others is not None:
        theirs = others()
        ids = {i for i in ids if i not in theirs}
    if len(ids) <= cap:
        return []
    valid = [changed[i] if i in changed else facts[i] for i in sorted(ids)]  # decodes our own only
    evicted = plan_evictions(valid, scope, cap, stamp, keep=(new.id,))
    changed.update((f.id, f) for f in evicted)
    return [f.id for f in evicted]


def valid_ids(index: FactIndex, scope: FactScope) -> set[str]:
    """Ids of the valid facts of *scope*, from the index's groups (no fact is decoded)."""
    ids: set[str] = set()
    for kind in FactKind:
        group = index.group(scope, kind)
        if group is not None:
            ids.update(group.members.keys())
    return ids


def plan_evictions(valid: Sequence[Fact], scope: FactScope, cap: int, stamp: str,
                   keep: Sequence[str] = ()) -> list[Fact]:
    """The facts to invalidate (as evolved copies saying why) so that *valid*, the valid facts of
    *scope*, fits its *cap*: the lowest `retention_score` first, never a protected fact
    (constraints, seed/community/synthesized tags) nor one whose id is in *keep*."""
    excess = len(valid) - cap
    if excess <= 0:
        return []
    evict_first = getattr(cap, "evict_first", None)   # a ScopeCap names them
    first = evict_first() if evict_first else frozenset()
    evictable = sorted((f for f in valid if not f.is_protected and f.id not in keep),
                       key=lambda f: (f.id not in first, retention_score(f), f.metadata.created_at, f.id))
    return [fact.evolve(is_valid=False, metadata={"invalidation": Invalidation(
        reason="evicted", at=stamp,
        detail=f"the {scope.value} scope was over its cap of {cap} valid facts; "
               f"this one scored lowest ({retention_score(fact):.3f})",
    )}) for fact in evictable[:excess]]
