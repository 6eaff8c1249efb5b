"""Replay facts through git-neo's own write policy and recall ranking, in memory.

The decisions are those of `FactStore.add` / `add_many` / `invalidate`: the same
`policy.plan_add` / `plan_many` over the same `FactIndex`, the same embedder and
`Thresholds`, the same body guard, and recall's own `assemble` for ranking. Only the
storage is a dict instead of `refs/neo/facts` (a commit per write would make a sweep
over thousands of timelines take minutes without changing a single decision).
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def shared_eval(name: str) -> Path:
    """`shared/eval/<name>` in the nearest folder above the checkout that has one (a worktree
    sits deeper than the main checkout)."""
    for base in ROOT.parents:
        candidate = base / "shared" / "eval" / name
        if candidate.is_dir():
            return candidate
    return ROOT.parent / "shared" / "eval" / name

from neo_git.embed import family_threshold  # noqa: E402
from neo_git.fact_schema import Invalidation  # noqa: E402
from neo_git.facts import Fact, FactMetadata, new_fact_id  # noqa: E402
from neo_git.recall import assemble  # noqa: E402
from neo_git.store.index import FactIndex, IndexedFacts  # noqa: E402
from neo_git.store.policy import AddResult, PlanItem, plan_many  # noqa: E402
from neo_git.store.supersession import Thresholds  # noqa: E402


class VectorMemo:
    """Text → vector for one embedder, embedded once per run."""

    def __init__(self, embedder) -> None:
        self.embedder = embedder
        self.memo: dict[str, np.ndarray] = {}

    def prime(self, texts: Sequence[str]) -> None:
        """Embed every text not seen yet, in one call."""
        todo = list(dict.fromkeys(t for t in texts if t not in self.memo))
        if todo:
            for text, vector in zip(todo, np.asarray(self.embedder.embed(todo), dtype=np.float32)):
                self.memo[text] = vector

    def __call__(self, text: str) -> np.ndarray:
        if text not in self.memo:
            self.prime([text])
        return self.memo[text]


@dataclass
class MemoryReplay:
    """One fresh project-scope store, in memory."""

    vectors: VectorMemo
    thresholds: Thresholds
    kind: str = "decision"
    facts: dict[str, Fact] = field(default_factory=dict)
    index: FactIndex = field(default_factory=FactIndex)

    def _fact(self, subject: str, body: str, created_at: str | None, source_file: str | None = None) -> Fact:
        meta = FactMetadata(created_at=created_at, source_file=source_file) if created_at \
            else FactMetadata(source_file=source_file)
        return Fact.from_dict({"id": new_fact_id(), "subject": subject[:200] or "-", "body": body[:16384],
                               "kind": self.kind, "scope": "project", "metadata": meta.to_dict()})

    def _scores(self, group, fact: Fact) -> np.ndarray:
        matrix = np.stack([self.vectors(row.text) for row in group.rows])
        return matrix @ self.vectors(fact.text)

    def _body_similarity(self, a: Fact, b: Fact) -> float:
        return float(self.vectors(a.body) @ self.vectors(b.body))

    def add_many(self, items: Sequence[tuple]) -> list[AddResult]:
        """Add (subject, body, explicit target id or None, created_at[, source_file]) items as one batch."""
        if not items:
            return []
        plan = [PlanItem(self._fact(s, b, at, *rest), explicit) for s, b, explicit, at, *rest in items]
        self.vectors.prime([p.fact.text for p in plan] + [p.fact.body for p in plan])
        results, change = plan_many(IndexedFacts(self.facts, self.index), plan, similarity=self._scores,
                                    thresholds=self.thresholds, body_similarity=self._body_similarity)
        if change is not None:
            for fact in change.facts:
                self.index.update(self.facts.get(fact.id), fact)
                self.facts[fact.id] = fact
        return results

    def add(self, subject: str, body: str, explicit: str | None = None, created_at: str | None = None,
            source_file: str | None = None) -> AddResult:
        """Add one fact (what `FactStore.add_detailed` decides)."""
        return self.add_many([(subject, body, explicit, created_at, source_file)])[0]

    def invalidate(self, fact_id: str) -> None:
        """Retract a fact without a successor (`FactStore.invalidate`)."""
        old = self.facts[fact_id]
        if old.is_valid:
            new = old.evolve(is_valid=False, metadata={"invalidation": Invalidation(reason="invalidated")})
            self.index.update(old, new)
            self.facts[fact_id] = new

    def recall(self, query: str, k: int, floor: float | None = None) -> list[Fact]:
        """The ranked `valid_facts` of `FactStore.recall` (no constraints or unknowns here); *floor*:
        the relevance floor (`FactStore.recall` applies the embedder's; None ranks every fact)."""
        facts = list(self.facts.values())
        if not facts:
            return []
        self.vectors.prime([f.text for f in facts])
        matrix = np.stack([self.vectors(f.text) for f in facts])
        return assemble(query, facts, matrix @ self.vectors(query), k=k, max_tokens=10**9, vectors=matrix,
                        family_threshold=family_threshold(self.vectors.embedder), floor=floor).valid_facts
