"""Property: whatever order facts arrive in (one by one or in batches, with or without explicit
pointers), no fact is retired unless one of the three rules fired, and `why` names which.

Runs the write policy itself (`plan_many`, the code behind `FactStore.add`/`add_many`) on an
in-memory mapping with the hash embedder, so hypothesis can try hundreds of orders quickly."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from neo_git.embed.hashing import HashEmbedder
from neo_git.facts import Fact
from neo_git.store.explain import explain
from neo_git.store.index import FactIndex, IndexedFacts
from neo_git.store.policy import PlanItem, plan_many
from neo_git.store.supersession import CALIBRATED_WORDS, Thresholds, _words, distinct_entities, subject_key

POOL = [
    ("HTTP client", "We use httpx with a 10 s timeout for all outbound calls."),
    ("http_client_v2", "All outbound HTTP goes through httpx, timeout 30 s."),
    ("Outbound calls", "We use httpx with a 10 s timeout for all outbound HTTP calls."),
    ("Deal 1 (closed)", "$500,000"),
    ("Deal 2 (in progress)", "$300,000"),
    ("Deal status", "Deal 1 (closed): $500,000"),
    ("Deal status", "Deal 2 (in progress): $300,000"),
    ("Meeting room", "The weekly sync is in room Aurora."),
    ("meeting room (updated)", "The weekly sync moved to room Borealis."),
    ("Cache layer", "Redis caches the session tokens for an hour."),
    ("Login sessions", "Sessions expire after one hour of inactivity."),
    ("Project budget", "$25,000"),
    ("project_budget_corrected", "$40,000"),
    ("Logging", "structlog everywhere, JSON lines in production."),
]
EMBEDDER = HashEmbedder()
THRESHOLDS = Thresholds.of(EMBEDDER)
RULE_NUMBER = {"explicit": "(rule 1)", "same_subject": "(rule 2)", "similarity": "(rule 3)"}


def _fact(i: int, n: int) -> Fact:
    subject, body = POOL[i]
    return Fact.from_dict({"id": f"{n:08x}{i:08x}", "subject": subject, "body": body, "kind": "decision",
                           "scope": "project", "metadata": {"created_at": f"2026-01-01T00:{n:02d}:00+00:00"}})


_VECTORS = {text: vector for text, vector in zip(
    [f"{s}\n{b}" for s, b in POOL] + [b for _, b in POOL],
    EMBEDDER.embed([f"{s}\n{b}" for s, b in POOL] + [b for _, b in POOL]))}


def _cos(a: Fact, b: Fact) -> float:
    return float(_VECTORS[a.text] @ _VECTORS[b.text])


arrivals = st.lists(st.tuples(st.integers(0, len(POOL) - 1), st.booleans(), st.integers(-3, 20)),
                    min_size=1, max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrivals)
def test_no_fact_is_retired_unless_a_rule_fired_and_why_names_it(steps):
    facts: dict[str, Fact] = {}
    index = FactIndex()
    explicit_for: dict[str, str] = {}   # new id -> the id it was told to supersede
    batch_of: dict[str, int] = {}
    batches: list[list[PlanItem]] = [[]]
    order = 0
    for pool_index, new_batch, pointer in steps:
        if new_batch and batches[-1]:
            batches.append([])
        fact = _fact(pool_index, order)
        order += 1
        earlier = [f for f in facts.values() if f.is_valid]
        explicit = None  # an explicit pointer at a valid fact written before this batch
        if 0 <= pointer < len(earlier):
            explicit = sorted(f.id for f in earlier)[pointer]
        batches[-1].append(PlanItem(fact, explicit))
        # flush batch by batch so explicit pointers only name facts already stored
        if new_batch or pool_index % 3 == 0:
            _apply(facts, index, batches[-1], explicit_for, batch_of, len(batches))
            batches.append([])
    if batches[-1]:
        _apply(facts, index, batches[-1], explicit_for, batch_of, len(batches))

    for old in facts.values():
        if old.is_valid:
            assert old.superseded_by is None
            continue
        detail = old.metadata.invalidation
        rule = detail.rule
        new = facts[old.superseded_by]
        assert new.supersedes == old.id
        if rule == "explicit":
            assert explicit_for.get(new.id) == old.id
        else:
            assert explicit_for.get(new.id) is None
            assert batch_of[new.id] != batch_of[old.id]            # never within a batch
            assert not distinct_entities(new, old)
            if rule == "same_subject":
                assert subject_key(new.subject) == subject_key(old.subject)
            else:
                assert rule == "similarity"
                assert _cos(new, old) >= THRESHOLDS.certain - 1e-6
                assert _words(new.text) <= CALIBRATED_WORDS and _words(old.text) <= CALIBRATED_WORDS
        info = explain(old, facts)
        assert info["rule"] == rule and RULE_NUMBER[rule] in info["explanation"]


def _apply(facts, index, items, explicit_for, batch_of, batch_number) -> None:
    if not items:
        return

    def scores(group, fact):
        return np.array([_cos(row, fact) for row in group.rows], dtype=np.float32)

    def bodies(a, b):
        return float(_VECTORS[a.body] @ _VECTORS[b.body])

    valid_ids = {f.id for f in facts.values() if f.is_valid}
    # explicit pointers on single adds only: in a batch, a sibling may already have retired the target
    cleaned = [item if len(items) == 1 and item.explicit in valid_ids else PlanItem(item.fact, None)
               for item in items]
    results, change = plan_many(IndexedFacts(facts, index), cleaned, similarity=scores, thresholds=THRESHOLDS,
                                body_similarity=bodies)
    for item, result in zip(cleaned, results):
        if not result.duplicate:
            batch_of[result.fact.id] = batch_number
            if item.explicit:
                explicit_for[result.fact.id] = item.explicit
    if change is not None:
        for fact in change.facts:
            index.update(facts.get(fact.id), fact)
            facts[fact.id] = fact
