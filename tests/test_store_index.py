"""The write policy's index (FactIndex) and the incremental reload of the project ref:
kept in step fact by fact, it must always equal an index built from scratch, and
every tie the policy breaks must be broken by fact id, not by storage order."""
from __future__ import annotations

import random

import pytest

from neo_git.facts import Fact, FactKind, FactScope, canonical_json
from neo_git.store.index import COMPACT_AFTER, FactIndex, IndexedFacts, PeerGroup
from neo_git.store.policy import plan_add
from neo_git.store.refstore import RefStore
from neo_git.store.supersession import Thresholds
from tests.helpers.store import HTTP_NEW, HTTP_OLD, distinct_text, open_store, plant_blob

TOPICS = ["http client timeout", "docker layer cache", "database migration order", "retry backoff policy",
          "logging format json", "auth token refresh"]
VARIANTS = ["use {0} everywhere", "we settled on {0} for now", "{0} must be configured centrally",
            "always check {0} first", "prefer {0} over ad hoc code", "{0} is set to 10", "{0} is set to 30"]


def topic_text(rng: random.Random) -> tuple[str, str]:
    """Texts that often paraphrase an earlier one (so supersession happens), sometimes repeat it."""
    topic = rng.choice(TOPICS)
    return topic, rng.choice(VARIANTS).format(topic)


def view_of(backend):
    """The mapping a transaction body sees, captured without writing anything."""
    seen = []
    backend.transact(lambda facts: seen.append(facts))
    return seen[0]


def assert_index_matches_rebuild(backend) -> None:
    """The backend's index (and its facts) equal what a from-scratch read gives."""
    facts = view_of(backend)
    assert facts.index.summary() == FactIndex.build(facts).summary()
    fresh = RefStore(backend.repo, backend.common_dir, backend.signature, ref=backend.ref)
    assert dict(facts) == fresh.load().facts
    assert backend.load().facts == fresh.load().facts
    assert list(backend.load().facts) == list(fresh.load().facts)  # readers keep the tree order


def make_fact(fact_id: str, subject: str, kind: str = "decision", **extra) -> Fact:
    return Fact.from_dict({"id": fact_id, "subject": subject, "body": "", "kind": kind, "scope": "project",
                           "metadata": {"confidence": 0.5}, **extra})


def test_index_stays_equal_to_a_rebuild_through_random_changes(repo_with_commit):
    store = open_store(repo_with_commit, project=12)
    other = open_store(repo_with_commit)  # a second writer with its own cache, as another process
    backend = store.project_store
    rng = random.Random(2024)
    outcomes = {"superseded": 0, "duplicate": 0, "flagged": 0, "evicted": 0}
    for step in range(140):
        valid = [f for f in store.list()]
        everything = store.list(include_invalid=True)
        roll = rng.random()
        if roll < 0.45 or not valid:
            result = store.add_detailed(*topic_text(rng), kind=rng.choice(["decision", "pattern"]),
                                        depends_on=[rng.choice(valid).id] if valid and rng.random() < 0.5 else ())
            outcomes["superseded"] += result.superseded is not None
            outcomes["duplicate"] += result.duplicate
            outcomes["flagged"] += bool(result.flagged)
            outcomes["evicted"] += bool(result.evicted)
        elif roll < 0.6:
            depended = [f for f in valid if any(f.id in g.depends_on for g in valid)]
            result = store.add_detailed(*distinct_text(rng), supersedes=rng.choice(depended or valid).id)
            outcomes["flagged"] += bool(result.flagged)
        elif roll < 0.7:
            store.invalidate(rng.choice(valid).id, "test")
        elif roll < 0.8 and len(valid) < len(everything):
            store.restore(rng.choice([f for f in everything if not f.is_valid]).id)
        elif roll < 0.95:
            other.add(*topic_text(rng))
        else:
            other.invalidate(rng.choice(valid).id)
        if step % 7 == 0 or step > 130:
            assert_index_matches_rebuild(backend)
    assert_index_matches_rebuild(backend)
    assert all(outcomes.values()), outcomes  # the sequence exercised every path


def test_index_updates_equal_a_rebuild_for_any_field_change():
    """Every field the index reads (validity, texts, kind, scope, depends_on), changed at random."""
    rng = random.Random(31)
    ids = [f"{i:016x}" for i in range(40)]
    facts: dict[str, Fact] = {}
    index = FactIndex()
    for step in range(3000):
        fact_id = rng.choice(ids)
        old = facts.get(fact_id)
        roll = rng.random()
        if old is None:
            new = make_fact(fact_id, rng.choice(["a", "b", "A  b"]), kind=rng.choice(["decision", "pattern"]))
        elif roll < 0.05:
            new = None
        elif roll < 0.35:
            new = old.evolve(is_valid=not old.is_valid)
        elif roll < 0.5:
            new = old.evolve(subject=rng.choice(["a", "b", "A  b", "c"]))
        elif roll < 0.6:
            new = old.evolve(kind=rng.choice([FactKind.DECISION, FactKind.PATTERN]))
        elif roll < 0.7:
            new = old.evolve(scope=rng.choice([FactScope.PROJECT, FactScope.SESSION]))
        elif roll < 0.9:
            new = old.evolve(depends_on=tuple(rng.sample(ids, rng.randint(0, 3))))
        else:
            new = old.evolve(needs_review=not old.needs_review)
        index.update(old, new)
        if new is None:
            del facts[fact_id]
        else:
            facts[fact_id] = new
        if step % 20 == 0 and facts:  # a duplicate check builds its group's text map, kept up to date from then on
            index.duplicate_of(rng.choice(list(facts.values())))
        if step % 50 == 0:
            assert index.summary() == FactIndex.build(facts).summary()
    assert index.summary() == FactIndex.build(facts).summary()


def test_adds_update_the_index_without_rebuilding_it(repo_with_commit, monkeypatch):
    store = open_store(repo_with_commit)
    rng = random.Random(5)
    for _ in range(5):
        store.add(*distinct_text(rng))
    builds = []
    real_build = FactIndex.build.__func__
    monkeypatch.setattr(FactIndex, "build", classmethod(lambda cls, facts: builds.append(1) or real_build(cls, facts)))
    monkeypatch.setattr(RefStore, "_merge", staticmethod(lambda subtrees: pytest.fail("full merge on an add")))
    for _ in range(10):
        store.add(*distinct_text(rng))
    store.add("HTTP client", HTTP_OLD, kind="decision")
    assert store.add_detailed("HTTP client", HTTP_NEW, kind="decision").superseded
    assert builds == []


def test_misplaced_and_broken_blobs_from_a_teammate_keep_the_index_exact(repo_with_commit):
    store = open_store(repo_with_commit)
    backend = store.project_store
    rng = random.Random(9)
    kept = [store.add(*distinct_text(rng)) for _ in range(6)]
    assert_index_matches_rebuild(backend)
    # The same id filed under another folder: skipped (a fact counts only at its own path),
    # so a hostile copy can never override the real one.
    twin = kept[0].evolve(subject="a teammate's rewrite of it", is_valid=False)
    plant_blob(repo_with_commit, f"facts/zz/{twin.id}.json", canonical_json(twin))
    plant_blob(repo_with_commit, f"facts/{kept[1].id[:2]}/ffffffffffffffff.json", b"{not json")
    assert view_of(backend)[kept[0].id].subject == kept[0].subject
    assert_index_matches_rebuild(backend)
    store.add(*distinct_text(rng))
    store.invalidate(kept[2].id)
    assert_index_matches_rebuild(backend)


def test_supersession_tie_goes_to_the_smallest_id_whatever_the_order():
    # each a new value of the others (a cosine alone retires nothing: store/evidence.py)
    a, b, c = make_fact("00000000000000aa", "cache ttl is 1 hour"), make_fact("00000000000000bb", "cache ttl is 2 hours"), \
        make_fact("00000000000000cc", "cache ttl is 3 hours")
    new = make_fact("00000000000000dd", "cache ttl is 4 hours")
    for order in ([a, b, c], [c, b, a], [b, c, a]):
        facts = {f.id: f for f in order}
        score = {a.id: 0.5, b.id: 0.9, c.id: 0.9}
        result, change = plan_add(facts, new, similarity=lambda group, score=score: [score[f.id] for f in group.rows],
                                  thresholds=Thresholds(0.8, 0.8, "test"))
        assert result.superseded.id == b.id
        assert result.superseded.metadata.invalidation.similarity == 0.9


def test_duplicate_and_flag_order_do_not_depend_on_storage_order():
    first, second = make_fact("1000000000000000", "Same  text"), make_fact("0fff000000000000", "same text")
    old = make_fact("2000000000000000", "old")
    deps = [make_fact(i, f"dep {i}", kind="pattern", depends_on=[old.id])
            for i in ("9000000000000000", "3000000000000000", "5000000000000000")]
    new = make_fact("4000000000000000", "SAME text")
    for order in ([first, second, old, *deps], [*reversed(deps), old, second, first]):
        facts = {f.id: f for f in order}
        result, change = plan_add(facts, new, similarity=lambda group: [0.0] * len(group.rows),
                                  thresholds=Thresholds(0.8, 0.8, "test"))
        assert result.duplicate and result.fact.id == second.id
        result, change = plan_add(facts, make_fact("4000000000000001", "new"), explicit=old.id,
                                  similarity=lambda group: [0.0] * len(group.rows),
                                  thresholds=Thresholds(0.8, 0.8, "test"))
        assert result.flagged == ("3000000000000000", "5000000000000000", "9000000000000000")
        assert [f.id for f in change.facts] == [old.id, *result.flagged, "4000000000000001"]


def test_nan_scores_never_supersede_and_dead_rows_are_ignored():
    a, b = make_fact("00000000000000aa", "cache ttl is 1 hour"), make_fact("00000000000000bb", "cache ttl is 2 hours")
    facts = {a.id: a, b.id: b}
    result, _ = plan_add(facts, make_fact("00000000000000cc", "cache ttl is 3 hours"), thresholds=Thresholds(0.5, 0.5, "test"),
                         similarity=lambda group: [float("nan"), 0.7])
    assert result.superseded.id == b.id
    index = FactIndex.build(facts)
    retired = b.evolve(is_valid=False)
    index.update(b, retired)  # b's row stays in its group, dead
    facts[b.id] = retired
    result, _ = plan_add(IndexedFacts(facts, index), make_fact("00000000000000cc", "cache ttl is 3 hours"),
                         thresholds=Thresholds(0.5, 0.5, "test"),
                         similarity=lambda group: [0.1, 0.99])
    assert result.superseded is None


def normalized(text: str) -> str:
    return " ".join(text.split()).casefold()


def test_policy_decisions_equal_a_full_scan_with_the_group_matrices(repo_with_commit):
    """Against the rule run as a scan (`supersession.decide` over every valid fact of the scope and
    kind, by id, its same-subject set found by comparing keys): the index and the group matrices
    change no decision."""
    import numpy as np

    from neo_git.store.supersession import decide

    store = open_store(repo_with_commit)
    embedder = store.embedder
    rng = random.Random(77)
    decisions = 0
    for _ in range(60):
        subject, body = topic_text(rng)
        probe = make_fact("0" * 16, subject, body=body)
        peers = sorted((f for f in store.list() if f.kind is probe.kind), key=lambda f: f.id)
        expected_dup = next((f.id for f in peers if normalized(f.subject) == normalized(subject)
                             and normalized(f.body) == normalized(body)), None)
        expected = None
        if peers and expected_dup is None:
            scores = np.asarray(embedder.embed([f.text for f in peers]), dtype=np.float32) \
                @ np.asarray(embedder.embed([probe.text]), dtype=np.float32)[0]
            bodies = lambda x, y: float(np.asarray(embedder.embed([x.body]), dtype=np.float32)[0]  # noqa: E731
                                        @ np.asarray(embedder.embed([y.body]), dtype=np.float32)[0])
            expected = decide(probe, peers, scores, Thresholds.of(embedder), body_similarity=bodies).target
        result = store.add_detailed(subject, body, kind="decision")
        if result.duplicate:
            assert result.fact.id == expected_dup
        else:
            assert expected_dup is None
            assert (result.superseded.id if result.superseded else None) == expected
            decisions += expected is not None
    assert decisions >= 5


def test_group_compaction_keeps_the_scores_of_live_rows(repo_with_commit):
    import numpy as np

    from neo_git.store.vectors import FactVectors

    embed = open_store(repo_with_commit).embedder.embed
    vectors = FactVectors(lambda texts: np.asarray(embed(list(texts)), dtype=np.float32).reshape(len(texts), -1))
    group = PeerGroup()
    rng = random.Random(1)
    facts = [make_fact(f"{i:016x}", " ".join(distinct_text(rng))) for i in range(3 * COMPACT_AFTER)]
    query = np.asarray(embed(["anything at all"]), dtype=np.float32)[0]
    epochs = set()
    for i, fact in enumerate(facts):
        group.join(fact)
        if i % 3:
            group.leave(facts[i - 1].id)
        scores = vectors.group_scores(group, query)
        live = {group.rows[row].id: scores[row] for row, alive in enumerate(group.alive) if alive}
        assert set(live) == set(group.members)
        epochs.add(group.epoch)
    assert len(epochs) > 1  # compaction happened and the matrix followed it
    direct = vectors.matrix(list(group.members.values())) @ query
    np.testing.assert_allclose([live[f] for f in group.members], direct, rtol=1e-6)


def test_transaction_bodies_get_a_read_only_view(repo_with_commit):
    store = open_store(repo_with_commit)
    store.add("something", scope="project")
    store.add("something", scope="global")
    for scope in (FactScope.PROJECT, FactScope.GLOBAL):
        def body(facts):
            with pytest.raises(TypeError):
                facts["x"] = next(iter(facts.values()))
            return None
        store.backends[scope].transact(body)
    assert len(store.list()) == 2
