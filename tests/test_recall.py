"""Recall: layers, constraint order and share, the token budget, ranking, access counts.

Ranking and packing do not depend on storage, so most tests use the in-memory store;
access counts (kept in `.git/neo/`) and the environment (branch, HEAD, health) need a
repository."""
from __future__ import annotations

import random

import pytest

from neo_git.facts import FactScope
from neo_git.store.base import Change
from tests.store_helpers import HTTP_NEW, HTTP_OLD, commit_messages, distinct_text, memory_store, open_store


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
        assert len(ctx.constraints) == 3 and len(ctx.valid_facts) == 10


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
    from tests.conftest import commit_files

    commit_files(repo_with_commit, {"pkg/__init__.py": "", "pkg/a.py": "from pkg import b\n",
                                    "pkg/b.py": "from pkg import a\n"}, "a cycle")
    store = open_store(repo_with_commit)
    store.add("Layering", "pkg.a may import pkg.b, never the reverse.", kind="architecture")
    assert store.recall("imports between a and b").environment["health"] is None  # not measured yet
    snapshot_commit(store.repo, "HEAD")
    health = store.recall("imports between a and b").environment["health"]
    assert health["cycles"] == 1 and health["modules_in_cycles"] == 2
    assert health["rev"] == str(store.repo.head.target)[:12]
