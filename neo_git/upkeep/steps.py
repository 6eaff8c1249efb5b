"""The simple upkeep steps, each a pure function over one scope's valid and retired facts:
stale pruning, demotion, the scope cap, and the purge of long-retired facts.
(Synthesis, which needs vectors, is in `synthesis.py`.)"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from types import MappingProxyType

from neo_git.citation_states import GONE
from neo_git.fact_schema import Invalidation
from neo_git.facts import Fact, FactScope
from neo_git.store.policy import plan_evictions
from neo_git.upkeep.rules import (
    DEMOTE_FLOOR,
    DEMOTE_STEP,
    NOTHING,
    PURGE_AFTER,
    STALE_AFTER,
    STALE_CONFIDENCE,
    Action,
    StepPlan,
    age,
    change_for,
    consulted_since,
    last_consulted,
    retired_for,
    stamp,
)


def _in_scope(facts: Mapping[str, Fact], scope: FactScope) -> list[Fact]:
    """The facts of *scope* in id order (a plan never depends on storage order)."""
    return sorted((f for f in facts.values() if f.scope is scope), key=lambda f: f.id)


def plan_prune(facts: Mapping[str, Fact], scope: FactScope, now: datetime,
               last_access: Mapping[str, str | None] = MappingProxyType({})) -> StepPlan:
    """Invalidate unproven facts: no success, older than 14 days, confidence below 0.4, and
    nobody consulted them in the last 14 days (*last_access*: this clone's access log, fact
    id -> last access; the time stored with the fact counts too). Being looked up is not
    evidence against a fact, and a fact someone still reads is not stale. Constraints and
    seed/community/synthesized facts are never pruned."""
    actions, changed = [], []
    for fact in _in_scope(facts, scope):
        meta = fact.metadata
        if not fact.is_valid or fact.is_protected or meta.success_count > 0 or meta.confidence >= STALE_CONFIDENCE:
            continue
        old = age(fact, now)
        if old is None or old <= STALE_AFTER or consulted_since(fact, last_access, now) is not None:
            continue
        last = last_consulted(fact, last_access)
        seen = f"last consulted {last.date().isoformat()}" if last else "never consulted"
        evidence = (f"confidence {meta.confidence:.2f} < {STALE_CONFIDENCE}, no success, {seen}, "
                    f"created {old.days} days ago")
        why = (f"unproven after {old.days} days (no success, confidence {meta.confidence:.2f} < "
               f"{STALE_CONFIDENCE}; stale after {STALE_AFTER.days} days; {seen})")
        changed.append(fact.evolve(is_valid=False, metadata={"invalidation": Invalidation(
            reason="pruned", at=stamp(now), detail=why)}))
        actions.append(Action("prune", scope.value, fact.id, fact.subject, why, evidence=evidence))
    if not actions:
        return NOTHING
    return StepPlan(actions, change_for("prune", scope.value, actions, tuple(changed)))


def plan_demotions(facts: Mapping[str, Fact], scope: FactScope) -> StepPlan:
    """Lower by 0.1 (floor 0.1) the confidence of facts whose cited code is all gone (every
    citation's file or symbol absent, as the commit worker or `git neo verify` recorded it):
    what they say is about code that no longer exists. Each loss counts once, in every clone:
    the gone citations are marked `weighed` with the commit that removed their code (`since`),
    and only a citation gone in a commit not yet weighed is new evidence. Retrievals never
    demote: being looked up says nothing against a fact. Protected facts are left to a person
    (the `stale` review item asks about every fact whose cited code changed or went)."""
    actions, changed = [], []
    for fact in _in_scope(facts, scope):
        meta = fact.metadata
        citations = meta.citations
        if not fact.is_valid or fact.is_protected or not citations or meta.confidence <= DEMOTE_FLOOR:
            continue
        if not all(c.state == GONE and c.since for c in citations):
            continue
        fresh = [c for c in citations if c.weighed != c.since]
        if not fresh:
            continue
        weighed = tuple(replace(c, weighed=c.since) for c in citations)
        confidence = round(max(DEMOTE_FLOOR, meta.confidence - DEMOTE_STEP), 4)
        gone = ", ".join(f"{c.label} gone in {(c.since or '')[:12]}" for c in fresh[:3])
        more = f" and {len(fresh) - 3} more" if len(fresh) > 3 else ""
        evidence = f"cited code gone: {gone}{more}"
        why = f"{evidence}: confidence {meta.confidence:.2f} -> {confidence:.2f}"
        changed.append(fact.evolve(metadata={"confidence": confidence, "citations": weighed}))
        actions.append(Action("demote", scope.value, fact.id, fact.subject, why, evidence=evidence))
    if not actions:
        return NOTHING
    return StepPlan(actions, change_for("demote", scope.value, actions, tuple(changed)))


def plan_cap(facts: Mapping[str, Fact], scope: FactScope, cap: int | None, now: datetime,
             last_access: Mapping[str, str | None] = MappingProxyType({})) -> StepPlan:
    """Evict the lowest-scoring unprotected facts of a scope over its cap (the write policy's
    own ranking, `store.policy.plan_evictions`), never one consulted in the last 14 days (the
    scope then stays over its cap until those facts go unread); as for an add, only the local
    user's own facts count and are evicted when *cap* names others' (`store.base.ScopeCap.others`)."""
    if cap is None:
        return NOTHING
    others_of = getattr(cap, "others", None)   # a ScopeCap names them
    others = others_of() if others_of is not None else ()
    valid = [f for f in _in_scope(facts, scope) if f.is_valid and f.id not in others]
    consulted = [f.id for f in valid if consulted_since(f, last_access, now) is not None]
    evicted = plan_evictions(valid, scope, cap, stamp(now), keep=consulted)
    if not evicted:
        return NOTHING
    actions = []
    for fact in evicted:
        last = last_consulted(fact, last_access)
        seen = f"last consulted {last.date().isoformat()}" if last else "never consulted"
        detail = fact.metadata.invalidation.detail if fact.metadata.invalidation is not None else None
        actions.append(Action("evict", scope.value, fact.id, fact.subject, detail or "",
                              evidence=f"{scope.value} scope over its cap of {cap}, lowest retention score, {seen}"))
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
        invalidation = fact.metadata.invalidation
        reason = (invalidation.reason if invalidation is not None else None) or (
            "superseded" if fact.superseded_by else "invalidated")
        why = f"{reason} {retired.days} days ago and nothing valid depends on it"
        if fact.superseded_by:
            why += f" (superseded by {fact.superseded_by})"
        actions.append(Action("purge", scope.value, fact.id, fact.subject, why,
                              evidence=f"{reason} {retired.days} days ago, no valid dependant"))
    if not actions:
        return NOTHING
    removed = tuple(a.fact_id for a in actions)
    return StepPlan(actions, change_for("purge", scope.value, actions, removed=removed))
