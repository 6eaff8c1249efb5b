"""The write policy: supersession (similarity and explicit), duplicates, the review
cascade, why/restore/history, and scope caps with eviction.

The policy does not depend on where facts are kept, so these run on the in-memory
store (`memory_store`); the first test runs the same add on the ref store to show
the policy's result is what lands in git."""
from __future__ import annotations

import json
import random

import pytest

from neo_git.errors import NeoError
from tests.helpers.store import HTTP_NEW, HTTP_OLD, distinct_text, memory_store, open_store, show_blob


@pytest.fixture
def store():
    return memory_store()


def test_paraphrased_update_supersedes_with_pointers_both_ways(repo_with_commit):
    store = open_store(repo_with_commit)
    old = store.add("HTTP client", HTTP_OLD, kind="decision")
    result = store.add_detailed("HTTP client", HTTP_NEW, kind="decision")
    new = result.fact
    assert result.superseded is not None and result.superseded.id == old.id
    assert new.supersedes == old.id
    stored_old = store.get(old.id)
    assert stored_old.is_valid is False and stored_old.superseded_by == new.id
    assert stored_old.body == HTTP_OLD and stored_old.subject == "HTTP client"  # keeps its text
    assert stored_old.metadata.invalidation["reason"] == "superseded"
    assert [f.id for f in store.list()] == [new.id]
    on_ref = json.loads(show_blob(repo_with_commit, old.id))
    assert on_ref["is_valid"] is False and on_ref["superseded_by"] == new.id and on_ref["body"] == HTTP_OLD


def test_same_text_different_kind_never_supersedes(store):
    a = store.add("HTTP client", HTTP_OLD, kind="decision")
    b = store.add("HTTP client", HTTP_OLD, kind="pattern")
    c = store.add("HTTP client", HTTP_NEW, kind="constraint")
    assert b.supersedes is None and c.supersedes is None
    assert {f.id for f in store.list()} == {a.id, b.id, c.id}


def test_same_text_different_scope_never_supersedes(store):
    a = store.add("HTTP client", HTTP_OLD, kind="decision", scope="project")
    b = store.add("HTTP client", HTTP_OLD, kind="decision", scope="global")
    c = store.add("HTTP client", HTTP_NEW, kind="decision", scope="session")
    assert b.supersedes is None and c.supersedes is None
    assert all(f.is_valid for f in store.list(include_invalid=True))
    assert {f.id for f in store.list()} == {a.id, b.id, c.id}


@pytest.mark.parametrize("old_conf, new_conf, expected", [(0.98, 0.5, 1.0), (0.3, 0.5, 0.5), (0.7, 0.5, 0.75)])
def test_confidence_carries_over(store, old_conf, new_conf, expected):
    store.add("HTTP client", HTTP_OLD, kind="decision", confidence=old_conf)
    new = store.add("HTTP client", HTTP_NEW, kind="decision", confidence=new_conf)
    assert new.supersedes is not None
    assert new.metadata.confidence == pytest.approx(expected)
    assert store.get(new.id).metadata.confidence == pytest.approx(expected)


def test_cascade_flags_exactly_the_dependents(store):
    http = store.add("HTTP client", HTTP_OLD, kind="decision")
    retry = store.add("Retry policy", "Retries use tenacity around the httpx calls, three attempts.",
                      kind="pattern", depends_on=[http.id])
    logging = store.add("Logging", "structlog everywhere, JSON lines in production.", kind="pattern")
    other_dep = store.add("Log shipping", "Vector ships the JSON lines to Loki.", kind="architecture",
                          depends_on=[logging.id])
    result = store.add_detailed("HTTP client", HTTP_NEW, kind="decision")
    assert result.flagged == (retry.id,)
    assert store.get(retry.id).needs_review is True
    assert store.get(logging.id).needs_review is False
    assert store.get(other_dep.id).needs_review is False
    assert store.get(result.fact.id).needs_review is False
    assert f"It needs review: it depends on {http.id}" in store.why(retry.id)["explanation"]
    body = store.project_store.messages[0]
    assert body.startswith(f"supersede {http.id} by {result.fact.id}: HTTP client")
    assert f"flag {retry.id} for review (depends on {http.id})" in body


def test_explicit_supersedes(store):
    old = store.add("Queue", "Background jobs run on Celery with Redis.", kind="architecture")
    new = store.add("Workers", "Dramatiq processes every async task now.", kind="architecture",
                    supersedes=old.id[:6])
    assert new.supersedes == old.id
    info = store.why(old.id)
    assert info["state"] == "superseded" and info["superseded_by"] == new.id and info["explicit"] is True
    assert "explicitly" in info["explanation"]
    with pytest.raises(NeoError) as err:  # no longer valid: point at its successor
        store.add("Workers again", "Something else entirely.", kind="architecture", supersedes=old.id)
    assert new.id in err.value.hint


def test_explicit_supersedes_across_scopes_is_refused(store):
    global_fact = store.add("Queue", "Background jobs run on Celery with Redis.", scope="global")
    before = store.list(include_invalid=True)
    with pytest.raises(NeoError):
        store.add("Workers", "Dramatiq processes every async task now.", scope="project",
                  supersedes=global_fact.id)
    assert store.list(include_invalid=True) == before


def test_exact_duplicate_is_not_added_twice(store):
    first = store.add("HTTP client", HTTP_OLD, kind="decision")
    writes = len(store.project_store.log)
    result = store.add_detailed("  HTTP   client ", HTTP_OLD.upper(), kind="decision")
    assert result.duplicate is True and result.fact.id == first.id
    assert len(store.project_store.log) == writes  # nothing written
    assert [f.id for f in store.list(include_invalid=True)] == [first.id]


def test_why_reports_similarity_and_threshold(store):
    old = store.add("HTTP client", HTTP_OLD, kind="decision")
    new = store.add("Outbound calls", "We use httpx with a 10 s timeout for all outbound HTTP calls.",
                    kind="decision")
    info = store.why(old.id)
    threshold = store.embedder.supersede_threshold
    assert info["rule"] == "similarity" and "(rule 3)" in info["explanation"]
    assert info["state"] == "superseded" and info["superseded_by"] == new.id
    assert info["threshold"] == pytest.approx(threshold)
    assert threshold <= info["similarity"] <= 1.0
    assert f"{info['similarity']:.3f}" in info["explanation"] and f"{threshold:.3f}" in info["explanation"]
    assert store.why(new.id)["state"] == "valid" and store.why(new.id)["supersedes"] == old.id


def test_restore_brings_the_fact_back_and_undoes_the_pointers(store):
    old = store.add("HTTP client", HTTP_OLD, kind="decision")
    new = store.add("HTTP client", HTTP_NEW, kind="decision")
    restored = store.restore(old.id)
    assert restored.is_valid and restored.superseded_by is None and restored.metadata.invalidation is None
    assert store.get(new.id).supersedes is None
    assert {f.id for f in store.list()} == {old.id, new.id}
    assert store.project_store.messages[0] == f"restore {old.id}: HTTP client"
    with pytest.raises(NeoError):
        store.restore(old.id)  # already valid


def test_history_is_oldest_first(store):
    a = store.add("HTTP client", HTTP_OLD, kind="decision")
    b = store.add("HTTP client", HTTP_NEW, kind="decision")
    c = store.add("HTTP client", "All outbound HTTP goes through httpx, timeout 45 s, two retries.",
                  kind="decision")
    assert c.supersedes == b.id
    for probe in (a, b, c):
        assert [f.id for f in store.history(probe.id)] == [a.id, b.id, c.id]


def test_depends_on_unknown_fact_is_refused(store):
    with pytest.raises(NeoError):
        store.add("Retry policy", "tenacity, three attempts", depends_on=["0123456789abcdef"])
    assert store.list(include_invalid=True) == []


# --- caps ------------------------------------------------------------------------


def test_cap_evicts_the_lowest_scoring_unprotected_facts():
    store = memory_store(project=4)
    rng = random.Random(7)
    low = store.add(*distinct_text(rng), confidence=0.1)
    mid = store.add(*distinct_text(rng), confidence=0.6)
    constraint = store.add(*distinct_text(rng), kind="constraint", confidence=0.01)
    seeded = store.add(*distinct_text(rng), tags=["seed"], confidence=0.02)
    result = store.add_detailed(*distinct_text(rng), confidence=0.05)  # 5 valid > 4
    assert result.evicted == (low.id,)
    assert f"evict {low.id} (over the project cap of 4)" in store.project_store.messages[0]
    evicted = store.get(low.id)
    assert evicted.is_valid is False and evicted.metadata.invalidation["reason"] == "evicted"
    community = store.add(*distinct_text(rng), tags=["community"], confidence=0.0)
    synthesized = store.add(*distinct_text(rng), tags=["synthesized"], confidence=0.0)
    # Adding community evicts the 0.05 fact (lowest unprotected, not the new one); adding
    # synthesized then evicts mid, the only unprotected fact left. Protected ones all stay.
    assert {f.id for f in store.list()} == {constraint.id, seeded.id, community.id, synthesized.id}
    assert not store.get(result.fact.id).is_valid and not store.get(mid.id).is_valid
    assert all(f.metadata.invalidation["reason"] == "evicted"
               for f in store.list(include_invalid=True) if not f.is_valid)
    assert store.why(low.id)["state"] == "evicted"


def test_cap_prefers_keeping_proven_facts():
    store = memory_store(**{"global": 2})
    rng = random.Random(11)
    plain = store.add(*distinct_text(rng), scope="global", confidence=0.5)
    proven = store.add(*distinct_text(rng), scope="global", confidence=0.45)
    # give `proven` a success history directly through the backend
    from neo_git.facts import FactScope
    from neo_git.store.base import Change

    backend = store.backends[FactScope.GLOBAL]
    backend.transact(lambda facts: Change((facts[proven.id].evolve(metadata={"success_count": 3}),), "x"))
    store.add(*distinct_text(rng), scope="global")
    valid = {f.id for f in store.list(scope="global")}
    assert proven.id in valid and plain.id not in valid


def test_session_cap_is_fifty(store):
    rng = random.Random(3)
    first = store.add(*distinct_text(rng), scope="session", confidence=0.1)
    for _ in range(50):
        store.add(*distinct_text(rng), scope="session", confidence=0.5)
    assert len(store.list(scope="session")) == 50
    assert len(store.list(scope="session", include_invalid=True)) == 51
    assert store.get(first.id).metadata.invalidation["reason"] == "evicted"
