"""Property (issue 17): for any sequence of adds, supersessions, retractions, restores and
outcomes, a fact that is invalid never gains confidence or successes.

Runs `FactStore`'s own add/invalidate/restore on the in-memory store (same policy and
transactions as the ref) and the outcome loop's own transaction plan (`project_plan`, what a
processed commit writes), so hypothesis can try many sequences quickly."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from neo_git.facts import FactScope
from neo_git.outcomes.confidence import Outcome, project_plan, review_fact
from neo_git.store import FactStore

TEXTS = [
    ("HTTP client", "We use httpx with a 10 s timeout."),
    ("HTTP client", "All outbound HTTP goes through httpx, timeout 30 s."),
    ("Retry policy", "Retry network calls three times with backoff."),
    ("Retry policy", "Retry network calls five times with jitter."),
    ("Cache layer", "Redis caches session tokens for an hour."),
    ("Logging", "structlog everywhere, JSON lines in production."),
]

steps = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, len(TEXTS) - 1), st.integers(-1, 8)),      # text, supersede target
    st.tuples(st.just("invalidate"), st.integers(0, 8), st.just(0)),
    st.tuples(st.just("restore"), st.integers(0, 8), st.just(0)),
    st.tuples(st.sampled_from(["accepted", "modified"]), st.integers(0, 255),            # facts relied on (bits)
              st.sampled_from([0, 1, 2])),                                                # health
), min_size=1, max_size=14)

HEALTH = {0: None, 1: "improvement", 2: "regression"}


def _state(store: FactStore) -> dict:
    return {f.id: f for f in store.list(scope="project", include_invalid=True)}


def _apply(store: FactStore, step, n: int) -> None:
    kind, a, b = step
    ids = sorted(_state(store))
    if kind == "add":
        subject, body = TEXTS[a]
        valid = [i for i in ids if _state(store)[i].is_valid]
        target = valid[b % len(valid)] if b >= 0 and valid else None
        store.add(subject, body, kind="decision", confidence=0.5, supersedes=target)
    elif kind in ("invalidate", "restore") and ids:
        fact = _state(store)[ids[a % len(ids)]]
        if kind == "invalidate" and fact.is_valid:
            store.invalidate(fact.id, "property test")
        elif kind == "restore" and not fact.is_valid:
            store.restore(fact.id)
    elif kind in ("accepted", "modified") and ids:
        relied = tuple(i for bit, i in enumerate(ids) if a >> bit & 1)
        outcome = Outcome(commit=f"{n:040x}", suggestion_id=f"{n:016x}", file="src/app.py", verdict=kind,
                          health=HEALTH[b], fact_ids=relied)

        def make_review(o, present):
            return review_fact(o, org_id="memory", project_id="0" * 16, author="t <t@example.com>",
                               project_fact_ids=present)

        plan, _ = project_plan([outcome], make_review, outcome.commit)
        store.transact(FactScope.PROJECT, plan)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_an_invalid_fact_never_gains_confidence_or_successes(sequence):
    store = FactStore.in_memory("hash")
    for n, step in enumerate(sequence):
        before = _state(store)
        _apply(store, step, n)
        after = _state(store)
        for fact_id, fact in after.items():
            old = before.get(fact_id)
            if old is None or fact.is_valid:
                continue   # new, or valid now (a restore may give back what a supersession carried)
            assert fact.metadata.confidence <= old.metadata.confidence, (step, fact_id)
            assert fact.metadata.success_count <= old.metadata.success_count, (step, fact_id)
