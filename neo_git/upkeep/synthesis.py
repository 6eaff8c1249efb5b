"""Synthesis: near-identical REVIEW facts become one archetype.

Outcome processing writes a REVIEW fact per observed outcome, so the same lesson
piles up in many spellings. Valid REVIEW facts whose pairwise cosine exceeds 0.80,
in clusters of three or more, are replaced by one archetype tagged `synthesized`:
it keeps the text of the most central member, the union of their links (depends_on)
and tags, the sum of their successes and the highest confidence, and supersedes
every member. Synthesized (and other protected) facts never enter a cluster, and
the archetype's id is derived from its members, so a cluster synthesized once is
never synthesized again, even after its members were restored. Claims (facts whose author
is not trusted) never enter a cluster: the archetype is this clone's commit, so it would
count as trusted and launder them.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from neo_git.fact_fields import MAX_TAGS
from neo_git.fact_schema import Invalidation
from neo_git.facts import Fact, FactKind, FactMetadata, FactScope
from neo_git.upkeep.rules import (
    NOTHING,
    SYNTHESIS_MIN_CLUSTER,
    SYNTHESIS_SIMILARITY,
    SYNTHESIZED_TAG,
    Action,
    StepPlan,
    change_for,
    short,
    stamp,
)

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

# Vectors of facts, one unit-length row per fact, in order.
VectorsOf = Callable[[Sequence[Fact]], "np.ndarray"]
_BLOCK = 1024  # rows per similarity block: 1024 x n floats at a time, never n x n


def archetype_id(member_ids: Sequence[str]) -> str:
    """The archetype's id, a function of its members: every clone derives the same one."""
    digest = hashlib.sha256(("synthesized\0" + ",".join(sorted(member_ids))).encode("ascii")).hexdigest()
    return digest[:16]


def neighbours(vectors: np.ndarray, threshold: float) -> list[dict[int, float]]:
    """For each row, {other row: cosine} of the rows whose cosine exceeds *threshold*."""
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1, norms)
    found: list[dict[int, float]] = []
    for start in range(0, len(unit), _BLOCK):
        block = unit[start:start + _BLOCK] @ unit.T
        for offset, row in enumerate(block):
            hits = np.flatnonzero(row > threshold)
            me = start + offset
            found.append({int(j): float(row[j]) for j in hits if j != me})
    return found


def clusters(near: list[dict[int, float]], min_size: int) -> list[list[int]]:
    """Greedy complete-linkage clusters: every pair inside is a neighbour. Rows are taken in
    order as seeds (the caller orders them oldest first); a seed's neighbours join when they
    neighbour every member already in, the best connected first (most neighbours among the
    seed's other neighbours, then most similar), so an outlier cannot block a tight group."""
    taken: set[int] = set()
    found = []
    for seed, links in enumerate(near):
        if seed in taken or len(links) + 1 < min_size:
            continue
        free = [j for j in links if j not in taken]
        around = set(free)
        cluster = [seed]
        for other in sorted(free, key=lambda j: (-len(around.intersection(near[j])), -links[j], j)):
            if all(other in near[member] for member in cluster[1:]):
                cluster.append(other)
        if len(cluster) >= min_size:
            taken.update(cluster)
            found.append(cluster)
    return found


class Cluster(NamedTuple):
    """A group to synthesize: member ids (oldest first), the most central one, and the
    lowest and highest pairwise similarity inside."""

    members: tuple[str, ...]
    centre: str
    lowest: float
    highest: float


def find_clusters(candidates: Sequence[Fact], vectors_of: VectorsOf, threshold: float,
                  min_size: int) -> list[Cluster]:
    """The clusters among *candidates* (ordered oldest first)."""
    near = neighbours(vectors_of(candidates), threshold)
    found = []
    for rows in clusters(near, min_size):
        pairs = [near[a][b] for a in rows for b in rows if a < b]
        centre = max(rows, key=lambda i: (sum(near[i].get(j, 0.0) for j in rows), -i))
        found.append(Cluster(tuple(candidates[i].id for i in rows), candidates[centre].id, min(pairs), max(pairs)))
    return found


def plan_synthesis(facts: Mapping[str, Fact], scope: FactScope, vectors_of: VectorsOf, now: datetime, *,
                   author: str = "git-neo upkeep", embedder_id: str | Callable[[], str] = "",
                   max_clusters: int | None = None, memo: dict | None = None,
                   threshold: float = SYNTHESIS_SIMILARITY, min_size: int = SYNTHESIS_MIN_CLUSTER,
                   exclude: frozenset[str] = frozenset()) -> StepPlan:
    """Replace each cluster of near-identical REVIEW facts by one archetype (at most
    *max_clusters* of them, the oldest first: the runner writes one commit per archetype).
    *memo* (a dict kept across the runner's rounds) keeps the clustering: taking out a
    synthesized cluster leaves the greedy clustering of the rest unchanged, so it is
    computed once per scope, not once per archetype. *exclude*: ids never taken (claims: the
    archetype is committed as the local user's, so it would count as trusted)."""
    candidates = sorted((f for f in facts.values() if f.scope is scope and f.is_valid
                         and f.kind is FactKind.REVIEW and not f.is_protected and f.id not in exclude),
                        key=lambda f: (f.metadata.created_at, f.id))
    if len(candidates) < min_size:
        return NOTHING
    found = None if memo is None else memo.get("clusters")
    if found is None:
        found = find_clusters(candidates, vectors_of, threshold, min_size)
    present = {f.id for f in candidates}
    found = [c for c in found if present.issuperset(c.members)]  # a member changed meanwhile: skip it
    if memo is not None:
        memo["clusters"] = found
    if not found:
        return NOTHING
    if callable(embedder_id):  # resolved only now: a scope without clusters never asks for it
        embedder_id = embedder_id()
    actions: list[Action] = []
    changed: list[Fact] = []
    written = 0
    for cluster in found:
        members = [facts[i] for i in cluster.members]
        new_id = archetype_id(cluster.members)
        if new_id in facts:  # synthesized before and its members restored by hand: leave them
            continue
        archetype = _archetype(new_id, members, facts[cluster.centre], now, author)
        detail = (f"one of {len(members)} near-identical review facts (pairwise similarity "
                  f"{cluster.lowest:.3f}-{cluster.highest:.3f} > {threshold:.2f}) merged into archetype {new_id}")
        for member in members:
            changed.append(member.evolve(is_valid=False, superseded_by=new_id, metadata={
                "invalidation": Invalidation.written(
                    reason="synthesized", rule="synthesized", at=stamp(now), by=new_id,
                    similarity=round(cluster.lowest, 4), threshold=threshold, embedder=embedder_id or None,
                    detail=detail)}))
            actions.append(Action("synthesize", scope.value, member.id, member.subject, detail, result_id=new_id,
                                  evidence=f"{len(members)} review facts, pairwise similarity "
                                           f"{cluster.lowest:.3f}-{cluster.highest:.3f} > {threshold:.2f}"))
        changed.append(archetype)
        written += 1
        if max_clusters is not None and written >= max_clusters:
            break
    if not actions:
        return NOTHING
    headline = ""
    if written == 1:
        headline = (f"upkeep: synthesize {len(actions)} review facts into {changed[-1].id}: "
                    f"{short(changed[-1].subject)}")
    return StepPlan(actions, change_for("synthesize", scope.value, actions, tuple(changed), headline=headline))


def _archetype(new_id: str, members: list[Fact], centre: Fact, now: datetime, author: str) -> Fact:
    """One fact that stands for *members*: the centre's text, everyone's links and successes."""
    member_ids = {m.id for m in members}
    depends = tuple(dict.fromkeys(d for m in members for d in m.depends_on if d not in member_ids))
    tags = list(dict.fromkeys(t for m in members for t in m.tags if t != SYNTHESIZED_TAG))
    tags = tags[:MAX_TAGS - 1] + [SYNTHESIZED_TAG]
    meta = FactMetadata(
        created_at=stamp(now), confidence=max(m.metadata.confidence for m in members),
        success_count=sum(m.metadata.success_count for m in members),
        access_count=sum(m.metadata.access_count for m in members),
        source_file=centre.metadata.source_file, source_prompt=centre.metadata.source_prompt,
        provenance="inferred", author=author)
    return Fact(id=new_id, subject=centre.subject, body=centre.body, kind=FactKind.REVIEW, scope=centre.scope,
                org_id=centre.org_id, project_id=centre.project_id, supersedes=centre.id,
                depends_on=depends, tags=tuple(tags), metadata=meta)
