"""The simple upkeep steps, each a pure function over one scope's valid and retired facts:
stale pruning, demotion, the scope cap, and the purge of long-retired facts.
(Synthesis, which needs vectors, is in `synthesis.py`.)"""
from __future__ import annotations

from datetime import datetime
from typing import Mapping

from neo_git.facts import Fact, FactScope
from neo_git.store.policy import plan_evictions
from neo_git.upkeep.rules import (
    ALWAYS_RECALLED, DEMOTE_AFTER_ACCESSES, DEMOTE_FLOOR, DEMOTE_STEP, NOTHING, PURGE_AFTER, STALE_AFTER,
    STALE_CONFIDENCE, Action, StepPlan, age, change_for, retired_for, stamp,
)


def _in_scope(facts: Mapping[str, Fact], scope: FactScope) -> list[Fact]:
    """The facts of *scope* in id order (a plan never depends on storage order)."""
    return sorted((f for f in facts.values() if f.scope is scope), key=lambda f: f.id)


def plan_prune(facts: Mapping[str, Fact], scope: FactScope, now: datetime) -> StepPlan:
    """Invalidate unproven facts: no success, older than 14 days, confidence below 0.4.
    Constraints and seed/community/synthesized facts are never pruned."""
    actions, changed = [], []
    for fact in _in_scope(facts, scope):
        meta = fact.metadata
        if not fact.is_valid or fact.is_protected or meta.success_count > 0 or meta.confidence >= STALE_CONFIDENCE:
            continue
        old = age(fact, now)
        if old is None or old <= STALE_AFTER:
            continue
        why = (f"unproven after {old.days} days (no success, confidence {meta.confidence:.2f} < "
               f"{STALE_CONFIDENCE}; stale after {STALE_AFTER.days} days)")
        changed.append(fact.evolve(is_valid=False, metadata={"invalidation": {
            "reason": "pruned", "at": stamp(now), "detail": why}}))
        actions.append(Action("prune", scope.value, fact.id, fact.subject, why))
    if not actions:
        return NOTHING
    return StepPlan(actions, change_for("prune", scope.value, actions, tuple(changed)))


def plan_demotions(facts: Mapping[str, Fact], scope: FactScope, local_accesses: Mapping[str, int],
                   evidence_used: Mapping[str, int]) -> StepPlan:
    """Lower by 0.1 (floor 0.1) the confidence of facts retrieved 10 or more times since the
    evidence last used (`evidence_used`: fact id -> access count already acted on) that never
    helped (no success). Total accesses = the count stored with the fact + the local count."""
    actions, changed = [], []
    for fact in _in_scope(facts, scope):
        meta = fact.metadata
        if not fact.is_valid or fact.kind in ALWAYS_RECALLED or meta.success_count > 0:
            continue
        if meta.confidence <= DEMOTE_FLOOR:
            continue
        total = meta.access_count + local_accesses.get(fact.id, 0)
        fresh = total - evidence_used.get(fact.id, 0)
        if fresh < DEMOTE_AFTER_ACCESSES:
            continue
        confidence = round(max(DEMOTE_FLOOR, meta.confidence - DEMOTE_STEP), 4)
        why = (f"retrieved {fresh} times since it was last weighed ({total} in all) and never helped: "
               f"confidence {meta.confidence:.2f} -> {confidence:.2f}")
        changed.append(fact.evolve(metadata={"confidence": confidence}))
        actions.append(Action("demote", scope.value, fact.id, fact.subject, why, evidence=total))
    if not actions:
        return NOTHING
    return StepPlan(actions, change_for("demote", scope.value, actions, tuple(changed)))


def plan_cap(facts: Mapping[str, Fact], scope: FactScope, cap: int | None, now: datetime) -> StepPlan:
    """Evict the lowest-scoring unprotected facts of a scope over its cap (the write policy's
    own ranking, `store.policy.plan_evictions`); as for an add, only the local user's own facts
    count and are evicted when *cap* names others' (`store.base.ScopeCap.others`)."""
    if cap is None:
        return NOTHING
    others = cap.others() if getattr(cap, "others", None) is not None else ()
    valid = [f for f in _in_scope(facts, scope) if f.is_valid and f.id not in others]
    evicted = plan_evictions(valid, scope, cap, stamp(now))
    if not evicted:
        return NOTHING
    actions = [Action("evict", scope.value, f.id, f.subject, f.metadata.invalidation["detail"]) for f in evicted]
    return StepPlan(actions, change_for("evict", scope.value, actions, tuple(evicted)))


def plan_purge(facts: Mapping[str, Fact], scope: FactScope, now: datetime) -> StepPlan:
    """Remove from the tip superseded or invalid facts retired more than 30 days ago that no
    valid fact depends on (their history stays in the ref's log)."""
    members = _in_scope(facts, scope)
    needed = {dep for f in members if f.is_valid for dep in f.depends_on}
    actions = []
    for fact in members:
        if fact.is_valid or fact.id in needed:
            continue
        retired = retired_for(fact, now)
        if retired is None or retired <= PURGE_AFTER:
            continue
        reason = (fact.metadata.invalidation or {}).get("reason") or (
            "superseded" if fact.superseded_by else "invalidated")
        why = f"{reason} {retired.days} days ago and nothing valid depends on it"
        if fact.superseded_by:
            why += f" (superseded by {fact.superseded_by})"
        actions.append(Action("purge", scope.value, fact.id, fact.subject, why))
    if not actions:
        return NOTHING
    removed = tuple(a.fact_id for a in actions)
    return StepPlan(actions, change_for("purge", scope.value, actions, removed=removed))
