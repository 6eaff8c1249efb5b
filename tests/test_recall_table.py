"""Recall over rows (`fact_table`): a cold store reads the parse cache's rows, decodes only the
facts it returns and streams cosines from the vector file; it must answer exactly as recall over
every fact in memory does, on stores holding everything recall treats apart: claims, open
proposals, conflicts, stale and path-scoped facts, retractions, retired facts, every scope."""
from __future__ import annotations

import random

import pytest

from neo_git.facts import Fact, FactKind, FactScope
from neo_git.store.base import Change
from tests.helpers.store import open_store, random_word

WORDS = """cache retry timeout client server queue worker deploy build image schema index migration
token session header payload parser router endpoint version release branch lock job logging""".split()
KINDS = ["pattern", "decision", "architecture", "failure", "constraint", "known_unknown", "review"]


def _text(rng: random.Random, low: int = 3, high: int = 9) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def _fact(store, rng: random.Random, **fields) -> Fact:
    """A project fact built by hand (so any field can be set), validated as any fact is."""
    data = {"id": f"{rng.getrandbits(64):016x}", "subject": _text(rng).capitalize(), "body": _text(rng, 4, 50),
            "kind": rng.choice(KINDS), "scope": "project", "org_id": store.org_id, "project_id": store.project_id}
    metadata = {"created_at": f"2025-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T10:00:00+00:00",
                "confidence": round(rng.uniform(0.2, 1.0), 2), "success_count": rng.choice([0, 0, 1, 3, 9]),
                "author": "Ada Tester <ada@example.com>"}
    metadata.update(fields.pop("metadata", {}))
    data.update(fields, metadata=metadata)
    return Fact.from_dict(data)


def _populate(repo, seed: int, monkeypatch) -> list[str]:
    """Fill the store; returns questions aimed at a conflict's side and an open proposal."""
    rng = random.Random(seed)
    store = open_store(repo)
    store.init()
    facts: list[Fact] = []
    for _ in range(rng.randint(60, 160)):
        extra = {}
        roll = rng.random()
        if roll < 0.08:
            extra["metadata"] = {"citations": [{"path": "src/app.py", "state": rng.choice(["gone", "changed", "verified"])}]}
        elif roll < 0.14:
            extra["metadata"] = {"paths": [rng.choice(["src/**", "docs/*.md"])]}
            extra["kind"] = rng.choice(["constraint", "pattern"])
        elif roll < 0.18:
            extra["metadata"] = {"proposal": "open", "provenance": "agent", "confidence": 1.0}
            extra["subject"], extra["body"] = f"{random_word(rng)} {random_word(rng)}", random_word(rng)
            extra["kind"] = "constraint"
        elif roll < 0.22:
            extra["subject"] = "[INVALIDATED - wrong data] " + _text(rng)
        elif roll < 0.26:
            extra["is_valid"] = False
        facts.append(_fact(store, rng, **extra))
    facts.append(_fact(store, rng, kind="constraint", subject=f"{random_word(rng)} {random_word(rng)}",
                       body=random_word(rng), metadata={"proposal": "open", "provenance": "agent", "confidence": 1.0}))
    # Supersession chains and one open conflict (two successors of one fact, one flagged).
    old, first, second = (_fact(store, rng, kind="decision", metadata={"confidence": 1.0},
                                subject=f"{random_word(rng)} {random_word(rng)}", body=random_word(rng))
                          for _ in range(3))
    old = old.evolve(is_valid=False, superseded_by=first.id)
    first = first.evolve(supersedes=old.id)
    second = second.evolve(supersedes=old.id, needs_review=True)
    chain = [_fact(store, rng, kind="pattern") for _ in range(3)]
    chain[0] = chain[0].evolve(is_valid=False, superseded_by=chain[1].id)
    chain[1] = chain[1].evolve(is_valid=False, supersedes=chain[0].id, superseded_by=chain[2].id)
    chain[2] = chain[2].evolve(supersedes=chain[1].id)
    depends = _fact(store, rng, depends_on=[facts[0].id, "0123456789abcdef"])
    facts += [old, first, second, *chain, depends]
    store.transact("project", lambda current: Change(tuple(facts), "test: a store with everything"))
    for scope in ("global", "org", "session"):
        for _ in range(rng.randint(2, 8)):
            store.add(_text(rng).capitalize(), _text(rng, 4, 20), kind=rng.choice(KINDS[:6]), scope=scope)
    # A teammate's facts: claims here until their author is trusted.
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "mallory@example.com")
    teammate = open_store(repo)
    teammate.caps[FactScope.PROJECT] = 10**6
    claims = [teammate.add(_text(rng).capitalize(), _text(rng, 4, 20), kind=rng.choice(["constraint", "pattern"]))
              for _ in range(6)]
    # and one in words of its own: the question aimed at it finds it first
    claims.append(teammate.add(f"{random_word(rng)} {random_word(rng)}", random_word(rng), kind="pattern"))
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "ada@example.com")
    proposal = next(f for f in facts if f.metadata.proposal)
    return [second.text, proposal.text, claims[-1].text]


def _in_memory(repo, query: str, k: int, max_tokens: int, file: str | None, access=None):
    """Recall over every fact decoded in memory and every vector held (the path a store took
    before the rows: `_load` and the whole matrix), as *access* (default: a fresh read of the
    access log) sees the access times; nothing counted, no counts laid over the facts."""
    from neo_git.embed import noise, related_threshold
    from neo_git.embed.rows import cosines
    from neo_git.fact_table import FactTable
    from neo_git.recall import assemble
    from neo_git.store.term_index import TermIndex, pool_words

    store = open_store(repo)
    facts = store._load()
    table = FactTable.of(facts)
    matrix = store._vectors_of(facts)
    access = access or store.access
    words = TermIndex(None)   # its own index, in memory: the same words as the store's on disk
    result = assemble(query, facts, cosines(matrix, store._embed_one(query)), k=k, max_tokens=max_tokens,
                      environment=store.environment(), last_accessed=access.last_accessed(),
                      untrusted=frozenset(store.untrusted()), vectors=matrix,
                      family_threshold=related_threshold(store.embedder), file=file,
                      floor=store.relevance_override, noise=noise(store.embedder),
                      lexical=lambda rows: pool_words(words, query, table, rows))
    return result, store.warnings


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_cold_recall_over_rows_equals_recall_over_every_fact(repo_with_commit, monkeypatch, seed):
    repo = repo_with_commit
    aimed = _populate(repo, seed, monkeypatch)
    open_store(repo).recall("warm the vector cache")
    rng = random.Random(100 + seed)
    warm = open_store(repo)
    warm.recall("first recall of the long-lived store: streamed")
    checked = set()
    for round_ in range(10):
        query = aimed[round_] if round_ < len(aimed) else _text(rng, 2, 6) + "?"
        k = rng.choice([1, 3, 5, 10]) if round_ >= len(aimed) else 10
        max_tokens = rng.choice([60, 400, 12000]) if round_ >= len(aimed) else 12000
        file = rng.choice([None, None, "src/app.py", "docs/readme.md"])
        expected, warnings = _in_memory(repo, query, k, max_tokens, file)
        cold = open_store(repo)
        got = cold.recall(query, k=k, max_tokens=max_tokens, file=file)
        assert got == expected.with_facts(cold.access.apply), (round_, query)  # counts with this request's
        assert cold.warnings == warnings
        assert cold._table().decoded < len(cold._table())   # the cold store decoded only some facts
        expected, _ = _in_memory(repo, query, k, max_tokens, file, access=warm.access)
        got = warm.recall(query, k=k, max_tokens=max_tokens, file=file)       # resident rows
        assert got == expected.with_facts(warm.access.apply), (round_, query)
        checked.update(layer for layer in ("constraints", "valid_facts", "invalidated", "known_unknowns",
                                           "untrusted", "stale", "conflicts", "successors", "proposals", "file_facts")
                       if getattr(got, layer))
    assert {"constraints", "valid_facts", "untrusted", "conflicts", "proposals", "successors", "file_facts"} <= checked


def test_rows_lay_out_recall_as_the_facts_do(repo_with_commit, monkeypatch):
    """The layout built from rows equals one built fact by fact with the rules recall states
    (evidence left out, standing constraints, unknowns, ranked weights, retractions, stale)."""
    import numpy as np

    from neo_git.citation_states import is_stale
    from neo_git.knowledge import is_evidence, is_open_proposal
    from neo_git.ranking import CLAIM_WEIGHT, SCOPE_WEIGHT, cached_bonus, is_retraction, stale_weight
    from neo_git.recall import _Layout
    from neo_git.scoring import statement_sized

    _populate(repo_with_commit, 7, monkeypatch)
    store = open_store(repo_with_commit)
    facts = store._load()
    untrusted = frozenset(store.untrusted())
    assert untrusted
    layout = _Layout(open_store(repo_with_commit)._table(), untrusted)
    constraints, ranked, unknowns, retired, scoped = [], [], [], [], []
    confidence, bonus, weight, retraction, stale, statement = [], [], [], [], [], []
    for i, fact in enumerate(facts):
        if not fact.is_valid:
            retired.append(i)
        elif is_evidence(fact):
            continue
        elif fact.kind is FactKind.CONSTRAINT and fact.id not in untrusted and not is_open_proposal(fact) \
                and not fact.metadata.paths:
            constraints.append(i)
        elif fact.kind is FactKind.KNOWN_UNKNOWN:
            unknowns.append(i)
        else:
            ranked.append(i)
            confidence.append(fact.metadata.confidence)
            bonus.append(1 + cached_bonus(fact.metadata.success_count))
            weight.append(SCOPE_WEIGHT[fact.scope] * (CLAIM_WEIGHT if fact.id in untrusted else 1.0) * stale_weight(fact))
            retraction.append(is_retraction(fact))
            stale.append(is_stale(fact))
            statement.append(statement_sized(fact.text))
            if fact.kind is FactKind.CONSTRAINT and fact.metadata.paths and fact.id not in untrusted \
                    and not is_open_proposal(fact):
                scoped.append(len(ranked) - 1)
    assert (layout.constraints, layout.ranked, layout.unknowns, layout.retired) == (constraints, ranked, unknowns, retired)
    assert layout.scoped_constraints == scoped and layout.retraction == retraction and layout.stale == stale
    assert layout.statement == statement and any(statement) and not all(statement)
    assert np.array_equal(layout.confidence, confidence) and np.array_equal(layout.bonus, bonus)
    assert np.array_equal(layout.weight, weight)
    assert [f.id for f in layout.pool] == [facts[i].id for i in ranked]
    assert any(retraction) and any(stale) and scoped and retired and constraints and unknowns


def test_a_cold_recall_of_a_fact_missing_from_the_vector_cache_embeds_only_it(repo_with_commit, monkeypatch):
    _populate(repo_with_commit, 4, monkeypatch)
    open_store(repo_with_commit).recall("warm the vector cache")
    added = open_store(repo_with_commit).add("Cache retry worker rule", "Retry the cache worker twice.")
    expected, _ = _in_memory(repo_with_commit, "cache retry worker", 5, 12000, None)
    cold = open_store(repo_with_commit)
    got = cold.recall("cache retry worker")
    assert got == expected.with_facts(cold.access.apply)
    assert added.id in [f.id for f in got.valid_facts]


def test_cosines_of_a_row_do_not_depend_on_the_other_rows():
    """What lets a streamed pass (blocks) and a resident matrix (one product) rank alike: on this
    machine's BLAS, each row's cosine is the same in any call shape."""
    import numpy as np

    from neo_git.embed.rows import cosines

    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((1031, 384)).astype(np.float32)
    query = rng.standard_normal(384).astype(np.float32)
    whole = cosines(matrix, query)
    for size in (1, 5, 63, 64, 65, 500):
        parts = np.concatenate([cosines(matrix[i:i + size], query) for i in range(0, len(matrix), size)])
        assert np.array_equal(parts, whole), size
    picked = rng.permutation(len(matrix))[:77]
    assert np.array_equal(cosines(matrix[picked], query), whole[picked])


def test_a_long_lived_store_keeps_its_claims_while_nothing_changed(repo_with_commit, monkeypatch):
    """Recall asks for the claims on every question: with no received-commits record they were
    recomputed over every fact each time (12 ms per recall at 50,000 facts)."""
    _populate(repo_with_commit, 8, monkeypatch)
    store = open_store(repo_with_commit)
    first = store.untrusted()
    assert first and store.untrusted() is first
