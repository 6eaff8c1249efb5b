"""Recall: layers, constraint order and share, the token budget, ranking, access counts.

Ranking and packing do not depend on storage, so most tests use the in-memory store;
access counts (kept in `.git/neo/`) and the environment (branch, HEAD, health) need a
repository."""
from __future__ import annotations

import random

import pytest

from neo_git.facts import FactScope
from neo_git.store.base import Change
from tests.helpers.store import HTTP_NEW, HTTP_OLD, commit_messages, distinct_text, memory_store, open_store


@pytest.fixture
def store():
    return memory_store()


def _returned(ctx):
    return [*ctx.constraints, *ctx.valid_facts, *ctx.invalidated, *ctx.known_unknowns]


def test_constraints_always_included_in_scope_order(store):
    session = store.add("No force push", "Never force-push to main.", kind="constraint", scope="session")
    project = store.add("Python floor", "Support Python 3.10 and newer.", kind="constraint", scope="project")
    org = store.add("Licences", "Only MIT/Apache dependencies.", kind="constraint", scope="org")
    glob = store.add("Secrets", "Never commit secrets or .env files.", kind="constraint", scope="global")
    store.add("Docker layer caching order", "Copy the lock file before the sources.")
    ctx = store.recall("how should I order the Dockerfile layers?", k=5)
    assert [f.id for f in ctx.constraints] == [glob.id, org.id, project.id, session.id]
    assert all(f.kind.value == "constraint" for f in ctx.constraints)
    assert not any(f.kind.value == "constraint" for f in ctx.valid_facts)


def test_constraints_use_at_most_two_thirds_of_the_budget(store):
    rng = random.Random(5)
    for _ in range(4):
        subject, _ = distinct_text(rng)
        store.add(subject, " ".join(distinct_text(rng)[1] for _ in range(30)), kind="constraint")  # ~400 tokens
    store.add("Docker layer caching order", "Copy the lock file before the sources.")
    ctx = store.recall("Docker layer order", max_tokens=1000)
    assert 0 < sum(f.tokens for f in ctx.constraints) <= 1000 * 2 / 3
    assert [f.subject for f in ctx.valid_facts] == ["Docker layer caching order"]


@pytest.mark.parametrize("max_tokens", [40, 120, 400, 12000])
def test_the_token_budget_is_respected(store, max_tokens):
    rng = random.Random(max_tokens)
    for kind in ("constraint", "pattern", "decision", "known_unknown", "architecture"):
        for _ in range(3):
            subject, body = distinct_text(rng)
            store.add(subject + " deploy", body + " deploy pipeline", kind=kind)
    store.add("HTTP client", HTTP_OLD, kind="decision")
    store.add("HTTP client", HTTP_NEW, kind="decision")
    ctx = store.recall("deploy pipeline HTTP client", k=10, max_tokens=max_tokens)
    total = sum(f.tokens for f in _returned(ctx))
    assert total <= max_tokens and ctx.tokens == total
    if max_tokens == 12000:
        # every ranked fact is returned, or held back because a returned one may replace it
        assert len(ctx.constraints) == 3 and len(ctx.valid_facts) + len(ctx.questioned) == 10


def test_ranking_prefers_higher_confidence_at_equal_similarity(store):
    low = store.add("Cache keys", "Cache keys include the schema version.", kind="pattern", confidence=0.4)
    high = store.add("Cache keys", "Cache keys include the schema version.", kind="decision", confidence=0.9)
    ctx = store.recall("cache keys schema version", k=2)
    assert [f.id for f in ctx.valid_facts] == [high.id, low.id]
    assert ctx.scores[high.id] > ctx.scores[low.id]


def test_ranking_prefers_proven_facts_at_equal_similarity(store):
    plain = store.add("Cache keys", "Cache keys include the schema version.", kind="decision")
    proven = store.add("Cache keys", "Cache keys include the schema version.", kind="architecture")
    store.project_store.transact(
        lambda facts: Change((facts[proven.id].evolve(metadata={"success_count": 4}),), "record successes"))
    ctx = store.recall("cache keys schema version", k=1)
    assert [f.id for f in ctx.valid_facts] == [proven.id]
    assert plain.id not in {f.id for f in _returned(ctx)}


def test_invalidated_layer_shows_the_superseded_predecessor(store):
    old = store.add("HTTP client", HTTP_OLD, kind="decision")
    new = store.add("HTTP client", HTTP_NEW, kind="decision")
    ctx = store.recall("which HTTP client and timeout for outbound calls?")
    assert [f.id for f in ctx.valid_facts] == [new.id]
    assert [f.id for f in ctx.invalidated] == [old.id]
    assert ctx.invalidated[0].superseded_by == new.id and ctx.invalidated[0].body == HTTP_OLD


def test_known_unknowns_have_their_own_layer(store):
    unknown = store.add("Webhook retries", "Unknown: does the payment provider retry failed webhooks?",
                        kind="known_unknown")
    store.add("Payments", "Payments go through Stripe checkout sessions.", kind="architecture")
    ctx = store.recall("do payment webhooks get retried?")
    assert [f.id for f in ctx.known_unknowns] == [unknown.id]
    assert unknown.id not in {f.id for f in ctx.valid_facts}
    assert ctx.to_dict()["known_unknowns"][0]["id"] == unknown.id


def test_access_count_rises_by_one_per_request_for_returned_facts_only(repo_with_commit):
    store = open_store(repo_with_commit)
    returned = store.add("Docker layer caching order", "Copy the lock file before the sources.")
    constraint = store.add("Secrets", "Never commit secrets.", kind="constraint")
    rng = random.Random(9)
    skipped = store.add(*distinct_text(rng))
    commits = commit_messages(repo_with_commit)
    for _ in range(2):
        ctx = store.recall("Docker layer caching", k=1)
        assert [f.id for f in ctx.valid_facts] == [returned.id]
    assert store.get(returned.id).metadata.access_count == 2
    assert store.get(constraint.id).metadata.access_count == 2
    assert store.get(skipped.id).metadata.access_count == 0
    fresh = open_store(repo_with_commit)  # persisted, seen by another process/store
    assert fresh.get(returned.id).metadata.access_count == 2
    assert fresh.get(returned.id).metadata.last_accessed is not None
    ctx = fresh.recall("Docker layer caching", k=1)
    assert ctx.valid_facts[0].metadata.access_count == 3  # the returned copy shows the new count
    assert commit_messages(repo_with_commit) == commits  # recall never writes the shared ref


def test_recall_environment_and_empty_store(git_repo):
    store = open_store(git_repo)
    ctx = store.recall("anything at all")
    assert _returned(ctx) == [] and ctx.tokens == 0
    assert ctx.environment["branch"] == "main" and ctx.environment["head"] is None
    assert set(ctx.to_dict()) >= {"constraints", "valid_facts", "invalidated", "known_unknowns", "environment"}


def test_k_limits_ranked_facts(store):
    rng = random.Random(2)
    for _ in range(6):
        subject, body = distinct_text(rng)
        store.add(subject, body + " logging")
    assert len(store.recall("logging", k=3).valid_facts) == 3
    assert store.recall("logging", k=0).valid_facts == []


def test_org_and_global_scopes_are_recalled(store):
    glob = store.add("Formatter", "ruff format with line length 100.", scope="global")
    org = store.add("Formatter config", "The shared ruff config lives in acme/ruff-config.", scope="org")
    ctx = store.recall("ruff formatter config", k=5)
    assert {f.id for f in ctx.valid_facts} == {glob.id, org.id}
    assert {f.scope for f in ctx.valid_facts} == {FactScope.GLOBAL, FactScope.ORG}


def test_environment_carries_head_health_once_measured_and_never_scans(repo_with_commit):
    from neo_git.health import snapshot_commit
    from tests.helpers.git import commit_files

    commit_files(repo_with_commit, {"pkg/__init__.py": "", "pkg/a.py": "from pkg import b\n",
                                    "pkg/b.py": "from pkg import a\n"}, "a cycle")
    store = open_store(repo_with_commit)
    store.add("Layering", "pkg.a may import pkg.b, never the reverse.", kind="architecture")
    assert store.recall("imports between a and b").environment["health"] is None  # not measured yet
    snapshot_commit(store.repo, "HEAD")
    health = store.recall("imports between a and b").environment["health"]
    assert health["cycles"] == 1 and health["modules_in_cycles"] == 2
    assert health["rev"] == str(store.repo.head.target)[:12]


def _put(store, subject, body, created_at):
    """Write a fact as an import or a teammate's sync would: no write policy, so nothing is superseded."""
    from neo_git.facts import Fact, new_fact_id

    fact = Fact.from_dict({"id": new_fact_id(), "subject": subject, "body": body, "kind": "decision",
                           "scope": "project", "metadata": {"created_at": created_at}})
    store.transact("project", lambda facts: Change(facts=(fact,), message=f"add {fact.id}"))
    return fact


def test_the_newer_of_two_related_facts_comes_first(store):
    """An update nobody marked as one (different subjects, both valid): the newer statement is the
    likelier current one, so it takes the place the older one earned on the question."""
    old = _put(store, "Purchase order 4521", "Purchase order 4521 approved for $50,000 by finance",
               "2026-01-01T09:00:00+00:00")
    new = _put(store, "PO 4521 status", "Purchase order 4521 cancelled: budget freeze", "2026-01-02T09:00:00+00:00")
    _put(store, "Office move", "The Leeds office moves to Park Row in March", "2026-01-03T09:00:00+00:00")
    ctx = store.recall("Is purchase order 4521 approved?", k=3)
    assert ctx.scores[old.id] > ctx.scores[new.id]          # the old one matches the words better…
    assert [f.id for f in ctx.valid_facts[:2]] == [new.id, old.id]   # …but the newer one answers first
    assert len(ctx.valid_facts) == 2                          # the unrelated one is below the relevance floor
    store.relevance_override = -1.0                           # (an in-memory store has no git config)
    ctx = store.recall("Is purchase order 4521 approved?", k=3)
    assert ctx.valid_facts[2].subject == "Office move"      # unrelated facts keep their own places


def test_a_newer_fact_only_loosely_on_the_question_does_not_jump_ahead():
    """Family members scoring under FAMILY_SHARE of the family's best keep their own order, unless
    they are related to the best member itself (the thread the question found)."""
    import numpy as np

    from neo_git.facts import Fact
    from neo_git.ranking import FAMILY_SHARE, newest_in_family

    def fact(n, day):
        return Fact.from_dict({"id": f"{n:016x}", "subject": f"s{n}", "body": "", "kind": "decision",
                               "scope": "project", "metadata": {"created_at": f"2026-01-0{day}T00:00:00+00:00"}})

    pool = [fact(1, 1), fact(2, 2), fact(3, 3)]   # 3 is the newest
    vectors = np.ones((3, 4), dtype=np.float32) / 2  # every pair related (cosine 1)
    best = 0.8
    close = [(0, best), (1, 0.5), (2, FAMILY_SHARE * best + 0.01)]
    assert [i for i, _ in newest_in_family(close, pool, vectors, 0.3, [False] * 3)] == [2, 1, 0]
    loose = [(0, best), (1, 0.5), (2, FAMILY_SHARE * best - 0.01)]
    assert [i for i, _ in newest_in_family(loose, pool, vectors, 0.3, [False] * 3)] == [2, 1, 0]  # thread of 0
    chain = np.array([[1, 0, 0, 0], [0.6, 0.8, 0, 0], [0, 1, 0, 0]], dtype=np.float32)  # 2 related to 1, not to 0
    assert [i for i, _ in newest_in_family(loose, pool, chain, 0.3, [False] * 3)] == [1, 0, 2]
    unrelated = np.eye(3, 4, dtype=np.float32)
    assert [i for i, _ in newest_in_family(close, pool, unrelated, 0.3, [False] * 3)] == [0, 1, 2]
    retraction = [False, False, True]              # a retraction is nobody's newer statement
    assert [i for i, _ in newest_in_family(close, pool, vectors, 0.3, retraction)] == [1, 0, 2]


def test_decision_records_written_months_apart_are_not_one_family():
    """Long records share a project's vocabulary, so their cosine says little about being the same
    matter: recall keeps the record the question is about first, not the newest record (a store
    of records written over months used to return its newest records whatever the question)."""

    from neo_git.embed.hashing import HashEmbedder
    from neo_git.facts import Fact
    from neo_git.recall import assemble

    project = ("The order service stores orders, customers and invoices in PostgreSQL behind the API "
               "gateway; every service of the platform deploys to the Kubernetes cluster through the "
               "release pipeline, logs to the central logging stack and reports metrics to Prometheus. ")
    older = project + "Decision: use Redis to cache the product catalogue for thirty seconds."
    newer = project + "Decision: retry failed payment webhooks three times with exponential backoff."

    def fact(n, day, text):
        subject, body = text.split(". Decision: ")
        return Fact.from_dict({"id": f"{n:016x}", "subject": "Decision: " + body[:60], "body": subject + ".",
                               "kind": "decision", "scope": "project",
                               "metadata": {"created_at": f"2025-0{day}-01T00:00:00+00:00"}})

    facts = [fact(1, 1, older), fact(2, 6, newer)]
    embedder = HashEmbedder()
    vectors = embedder.embed([f.text for f in facts])
    assert float(vectors[0] @ vectors[1]) >= embedder.possible_threshold   # related, by cosine
    query = "how long does the order service cache the product catalogue in Redis?"
    cosines = vectors @ embedder.embed([query])[0]
    assert cosines[0] > cosines[1]
    ctx = assemble(query, facts, cosines, k=2, vectors=vectors, family_threshold=embedder.possible_threshold)
    assert [f.id for f in ctx.valid_facts] == [facts[0].id, facts[1].id]
