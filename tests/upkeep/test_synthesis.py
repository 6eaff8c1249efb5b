"""Synthesis: near-identical REVIEW facts become one archetype, once."""
from __future__ import annotations

import pytest

from neo_git.upkeep import run_gc
from neo_git.upkeep.synthesis import clusters
from tests.helpers.git import git
from tests.helpers.store import REF, open_store
from tests.helpers.upkeep import NOW, make, put, state

SPELLINGS = (
    "Accepted: use a context manager to close the file in loader.py",
    "Accepted: use a context manager to close the file in loader.py (again)",
    "Accepted: used a context manager to close the file in loader.py",
    "Accepted: use a with-statement context manager to close the file in loader.py",
    "accepted: use a context manager to close files in loader.py",
)


def test_five_near_identical_reviews_become_one_archetype(store, repo_with_commit):
    base = make(store, "loader.py opens files", kind="pattern")
    other_base = make(store, "file handles leak", kind="failure")
    reviews = [make(store, text, kind="review", confidence=0.3 + 0.1 * i, success=i,
                    depends_on=((base.id,) if i % 2 else (other_base.id,)), tags=(f"t{i}",))
               for i, text in enumerate(SPELLINGS)]
    unrelated = make(store, "Modified: rename parse to parse_config in config.py", kind="review")
    put(store, base, other_base, *reviews, unrelated)

    report = run_gc(store, now=NOW)

    assert sorted(a.fact_id for a in report.actions) == sorted(r.id for r in reviews)
    archetype_id = report.actions[0].result_id
    archetype = state(store, archetype_id)
    assert archetype.is_valid and "synthesized" in archetype.tags
    assert archetype.metadata.success_count == 0 + 1 + 2 + 3 + 4
    assert archetype.metadata.confidence == pytest.approx(0.7)
    assert set(archetype.depends_on) == {base.id, other_base.id}
    assert {f"t{i}" for i in range(5)} <= set(archetype.tags)
    assert archetype.subject in SPELLINGS
    for review in reviews:
        old = state(store, review.id)
        assert not old.is_valid and old.superseded_by == archetype_id
        assert old.metadata.invalidation["reason"] == "synthesized"
        assert old.metadata.invalidation["similarity"] > 0.8
        assert "merged into archetype" in store.why(review.id)["explanation"]
    assert state(store, unrelated.id).is_valid
    assert git(repo_with_commit, "log", "-1", "--format=%s", REF).startswith(
        f"upkeep: synthesize 5 review facts into {archetype_id}")
    assert store.why(archetype_id)["synthesized_from"] == sorted(r.id for r in reviews)

    tip = git(repo_with_commit, "rev-parse", REF)
    again = run_gc(open_store(repo_with_commit), now=NOW)
    assert again.actions == [] and git(repo_with_commit, "rev-parse", REF) == tip


def test_archetypes_are_never_synthesized_again(store):
    first = [make(store, text, kind="review") for text in SPELLINGS[:3]]
    put(store, *first)
    archetype_id = run_gc(store, now=NOW).actions[0].result_id
    # two more spellings arrive: with the archetype they would make three, but it never joins
    put(store, *[make(store, text, kind="review") for text in SPELLINGS[3:]])
    assert run_gc(store, now=NOW).actions == []
    assert state(store, archetype_id).is_valid


def test_restored_members_are_not_synthesized_again(store):
    members = [make(store, text, kind="review") for text in SPELLINGS[:3]]
    put(store, *members)
    archetype_id = run_gc(store, now=NOW).actions[0].result_id
    for member in members:
        store.restore(member.id)
    assert run_gc(store, now=NOW).actions == []
    assert all(state(store, m.id).is_valid for m in members) and state(store, archetype_id).is_valid


def test_each_archetype_is_one_commit(store, repo_with_commit):
    put(store, *[make(store, text, kind="review") for text in SPELLINGS[:3]],
        *[make(store, f"Accepted: retry the upload with exponential backoff in sync{s}.py", kind="review")
          for s in ("", " again", " (2)")])
    report = run_gc(store, now=NOW)
    assert report.counts()["synthesize"] == 6 and report.commits == 2
    assert len({a.result_id for a in report.actions}) == 2


def test_clusters_need_every_pair_close():
    # 0~1, 1~2, 0~2 form a clique; 3 is close to 0 only
    near = [{1: 0.9, 2: 0.85, 3: 0.95}, {0: 0.9, 2: 0.9}, {0: 0.85, 1: 0.9}, {0: 0.95}]
    assert clusters(near, 3) == [[0, 1, 2]]
    assert clusters(near, 4) == []
