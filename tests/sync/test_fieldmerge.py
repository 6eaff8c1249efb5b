"""The pure field merge: each documented rule, symmetry, and unknown keys."""
from __future__ import annotations

import random

from neo_git.fact_schema import Invalidation, PossibleLink
from neo_git.facts import Fact
from neo_git.sync.fieldmerge import MISSING, merge_fact, merge_fact_dicts

BASE = Fact.from_dict({
    "id": "a" * 16, "subject": "HTTP client", "body": "use httpx", "kind": "decision", "scope": "project",
    "tags": ["net", "http"], "depends_on": ["b" * 16],
    "metadata": {"created_at": "2026-01-01T00:00:00+00:00", "confidence": 0.5, "success_count": 2,
                 "access_count": 10, "author": "Ada <ada@example.com>"},
})


def edit(fact: Fact, **changes) -> Fact:
    return fact.evolve(**changes)


def both_ways(base, ours, theirs) -> Fact:
    one, other = merge_fact(base, ours, theirs), merge_fact(base, theirs, ours)
    assert one == other, "the merge must not depend on which side is ours"
    return one


def test_one_sided_change_is_taken_whole():
    ours = edit(BASE, body="use httpx with a 30 s timeout")
    assert both_ways(BASE, ours, BASE) == ours


def test_counters_add_both_increments_without_double_counting():
    ours = edit(BASE, metadata={"success_count": 5, "access_count": 11})     # +3, +1
    theirs = edit(BASE, metadata={"success_count": 3, "access_count": 14})   # +1, +4
    merged = both_ways(BASE, ours, theirs)
    assert (merged.metadata.success_count, merged.metadata.access_count) == (6, 15)


def test_counters_without_a_base_take_the_larger():
    ours, theirs = edit(BASE, metadata={"success_count": 5}), edit(BASE, metadata={"success_count": 7})
    assert both_ways(None, ours, theirs).metadata.success_count == 7


def test_confidence_applies_both_moves_and_stays_in_range():
    ours = edit(BASE, metadata={"confidence": 0.6})
    theirs = edit(BASE, metadata={"confidence": 0.45})
    assert both_ways(BASE, ours, theirs).metadata.confidence == 0.55
    high = both_ways(BASE, edit(BASE, metadata={"confidence": 0.9}), edit(BASE, metadata={"confidence": 0.95}))
    assert high.metadata.confidence == 1.0


def test_invalidation_wins_and_keeps_its_successor():
    superseded = edit(BASE, is_valid=False, superseded_by="c" * 16,
                      metadata={"invalidation": Invalidation(reason="superseded", at="2026-02-01T00:00:00+00:00",
                                                             by="c" * 16)})
    confident = edit(BASE, metadata={"confidence": 0.8})
    merged = both_ways(BASE, superseded, confident)
    assert not merged.is_valid and merged.superseded_by == "c" * 16
    assert merged.metadata.invalidation.reason == "superseded"
    assert merged.metadata.confidence == 0.8   # the other side's edit of another field survives


def test_two_successors_pick_the_earlier_supersession_either_way():
    def superseded_by(successor, at):
        return edit(BASE, is_valid=False, superseded_by=successor,
                    metadata={"invalidation": Invalidation(reason="superseded", at=at, by=successor)})
    early, late = superseded_by("f" * 16, "2026-02-01T00:00:00+00:00"), superseded_by("c" * 16, "2026-03-01T00:00:00+00:00")
    assert both_ways(BASE, early, late).superseded_by == "f" * 16
    retracted = edit(BASE, is_valid=False, metadata={"invalidation": Invalidation(reason="invalidated", at="2026-01-15")})
    assert both_ways(BASE, retracted, late).superseded_by == "c" * 16   # a supersession beats a retraction


def test_tags_and_dependencies_merge_as_sets_honouring_removals():
    ours = edit(BASE, tags=("net", "http", "seed"), depends_on=())          # + seed, - dependency
    theirs = edit(BASE, tags=("http", "client"))                             # - net, + client
    merged = both_ways(BASE, ours, theirs)
    assert merged.tags == ("http", "client", "seed")
    assert merged.depends_on == ()
    assert both_ways(None, ours, theirs).tags == ("client", "http", "net", "seed")   # no base: union


def test_needs_review_raised_on_either_side_stays():
    ours = edit(BASE, needs_review=True, metadata={"confidence": 0.7})
    theirs = edit(BASE, metadata={"confidence": 0.4})
    assert both_ways(BASE, ours, theirs).needs_review is True


def test_text_edited_on_both_sides_is_a_fixed_pick():
    ours, theirs = edit(BASE, body="use httpx, 30 s"), edit(BASE, body="use requests")
    assert both_ways(BASE, ours, theirs).body in {"use httpx, 30 s", "use requests"}


def test_created_at_earliest_last_accessed_latest():
    ours = edit(BASE, metadata={"created_at": "2025-12-01T00:00:00+00:00", "last_accessed": "2026-03-01T00:00:00+00:00"})
    theirs = edit(BASE, metadata={"created_at": "2025-11-01T00:00:00+00:00", "last_accessed": "2026-04-01T00:00:00+00:00"})
    merged = both_ways(None, ours, theirs)
    assert merged.metadata.created_at.startswith("2025-11") and merged.metadata.last_accessed.startswith("2026-04")


def test_too_many_tags_after_union_keeps_one_side_whole():
    ours = edit(BASE, tags=tuple(f"o{i}" for i in range(20)))
    theirs = edit(BASE, tags=tuple(f"t{i}" for i in range(20)))
    merged = both_ways(BASE, ours, theirs)
    assert merged in (ours, theirs)


def test_unknown_keys_merge_generically_and_symmetrically():
    """Fields other work adds to facts (e.g. possibly_supersedes, rejected pairs) merge by the
    default rule on the dict form: lists as sets, objects by key, scalars by a fixed order."""
    base = BASE.to_dict() | {"possibly_supersedes": ["1" * 16], "review": {"rejected": [], "by": None}, "score": 1}
    ours = base | {"possibly_supersedes": ["1" * 16, "2" * 16], "review": {"rejected": [["x", "y"]], "by": "ada"},
                   "score": 3}
    theirs = base | {"possibly_supersedes": [], "review": {"rejected": [["p", "q"]], "by": None}, "score": 2,
                     "new_key": "only theirs"}
    one, other = merge_fact_dicts(base, ours, theirs), merge_fact_dicts(base, theirs, ours)
    assert one == other
    assert one["possibly_supersedes"] == ["2" * 16]      # theirs dropped 1…, ours added 2…
    assert one["review"] == {"rejected": [["p", "q"], ["x", "y"]], "by": "ada"}
    assert one["score"] == 3 and one["new_key"] == "only theirs"
    assert merge_fact_dicts(MISSING, ours, theirs) == merge_fact_dicts(MISSING, theirs, ours)


def test_random_edits_always_merge_symmetrically():
    rng = random.Random(7)

    def mutate(fact: Fact) -> Fact:
        choice = rng.randrange(6)
        if choice == 0:
            return edit(fact, metadata={"confidence": round(rng.random(), 3)})
        if choice == 1:
            return edit(fact, metadata={"success_count": fact.metadata.success_count + rng.randrange(3)})
        if choice == 2:
            return edit(fact, tags=tuple(rng.sample(["a", "b", "c", "d", "net"], rng.randrange(4))))
        if choice == 3:
            return edit(fact, is_valid=False, superseded_by=rng.choice(["c" * 16, "d" * 16]))
        if choice == 4:
            return edit(fact, needs_review=not fact.needs_review)
        return edit(fact, body=rng.choice(["x", "y", "z"]))

    for _ in range(300):
        ours, theirs = BASE, BASE
        for _ in range(rng.randrange(1, 4)):
            ours, theirs = mutate(ours), mutate(theirs)
        merged = both_ways(BASE, ours, theirs)
        assert Fact.from_dict(merged.to_dict()) == merged


def test_a_forged_supersession_cycle_is_broken_at_its_smallest_id():
    from neo_git.sync.treemerge import MergePlan, repair_chains

    def retired(fact_id, successor):
        return Fact.from_dict({"id": fact_id, "subject": f"s{fact_id[0]}", "kind": "decision", "scope": "project",
                               "is_valid": False, "superseded_by": successor})
    a, b, c = "a" * 16, "b" * 16, "c" * 16
    plan = MergePlan(puts={c: retired(c, a)})
    assert repair_chains(plan, {a: retired(a, b), b: retired(b, c)}) == [a]
    assert plan.puts[a].is_valid and plan.puts[a].superseded_by is None and plan.puts[a].needs_review


def test_review_links_merge_with_rejections_honoured():
    """metadata.possibly_supersedes / distinct_from (memory-correctness work) merge by the
    generic list rule: a rejection on one side (link removed, id marked distinct) survives."""
    x, y = "1" * 16, "2" * 16
    base = edit(BASE, metadata={"possibly_supersedes": (PossibleLink(x, 0.8),)})
    rejected = edit(base, metadata={"possibly_supersedes": (), "distinct_from": (x,)})
    proposed = edit(base, metadata={"possibly_supersedes": (PossibleLink(x, 0.8), PossibleLink(y, 0.7)),
                                    "confidence": 0.6})
    merged = both_ways(base, rejected, proposed)
    assert [link.id for link in merged.metadata.possibly_supersedes] == [y]
    assert merged.metadata.distinct_from == (x,)
    assert merged.metadata.confidence == 0.6
