"""Pull, merge and push with real git: convergence, audit trail, field merges, notes."""
from __future__ import annotations

import json

import pytest

from neo_git.errors import NeoError
from neo_git.sync import RemoteMoved, Syncer
from tests.helpers.git import commit_files, git
from tests.helpers.sync import REF, fact_ids, tree_of


def test_two_clones_converge_and_the_merge_commit_says_what_came_from_where(team):
    alice, bob = team.clone("alice"), team.clone("bob")
    a_fact = team.store("alice").add("alpha rule", "alice writes this", kind="decision")
    b_fact = team.store("bob").add("beta rule", "bob writes that", kind="decision")
    assert team.sync("alice").pushed == [REF]
    alice_tip = git(alice, "rev-parse", REF).strip()
    report = team.sync("bob")
    assert report.facts == "merged" and report.plan.added == [a_fact.id]
    assert team.sync("alice").facts == "fast-forward"
    assert tree_of(alice) == tree_of(bob)
    assert fact_ids(team.store("alice")) == fact_ids(team.store("bob")) == {a_fact.id, b_fact.id}
    message = git(bob, "log", "-1", "--format=%B", REF)
    assert message.startswith("merge origin/neo/facts into refs/neo/facts: 1 added")
    assert f"added from origin/neo/facts: {a_fact.id} alpha rule" in message
    assert git(bob, "log", "-1", "--format=%P", REF).split()[1] == alice_tip
    assert git(team.remote, "rev-parse", REF) == git(alice, "rev-parse", REF)
    # Tracking refs follow what was fetched and pushed.
    assert git(bob, "rev-parse", "refs/remotes/origin/neo/facts") == git(bob, "rev-parse", REF)


def test_the_same_fact_changed_on_both_sides_merges_field_by_field(team):
    team.clone("alice"), team.clone("bob")
    store = team.store("alice")
    fact = store.add("retry policy", "retry idempotent calls three times", kind="pattern", tags=["net"])
    team.sync("alice")
    team.sync("bob")

    def bump(who, successes, tag, confidence):
        def plan(facts):
            current = facts[fact.id]
            return _change(current.evolve(tags=current.tags + (tag,), metadata={
                "success_count": current.metadata.success_count + successes, "confidence": confidence}))
        team.store(who).transact("project", plan)

    bump("alice", 2, "alice-tag", 0.6)
    bump("bob", 3, "bob-tag", 0.45)
    team.sync("alice")
    team.sync("bob")
    team.sync("alice")
    merged = team.store("alice").get(fact.id)
    assert merged.metadata.success_count == 5               # 0 + 2 + 3, nobody's count twice
    assert merged.metadata.confidence == pytest.approx(0.55)
    assert set(merged.tags) == {"net", "alice-tag", "bob-tag"}
    assert team.store("bob").get(fact.id) == merged


def _change(*facts, **kw):
    from neo_git.store import Change

    return Change(facts=tuple(facts), message="edit", **kw)


def test_two_sides_superseding_one_fact_give_a_valid_acyclic_result(team):
    alice, bob = team.clone("alice"), team.clone("bob")
    old = team.store("alice").add("cache layer", "we cache in memcached", kind="decision")
    team.sync("alice")
    team.sync("bob")
    new_a = team.store("alice").add("cache layer a", "we cache in redis", kind="decision", supersedes=old.id)
    new_b = team.store("bob").add("cache layer b", "we cache nothing", kind="decision", supersedes=old.id)
    team.sync("alice"), team.sync("bob"), team.sync("alice")
    assert tree_of(alice) == tree_of(bob)
    facts = {f.id: f for f in team.store("alice").list(include_invalid=True)}
    retired = facts[old.id]
    assert not retired.is_valid and retired.superseded_by in (new_a.id, new_b.id)
    winner, loser = (new_a, new_b) if retired.superseded_by == new_a.id else (new_b, new_a)
    assert facts[winner.id].is_valid and facts[loser.id].is_valid
    assert facts[loser.id].needs_review and not facts[winner.id].needs_review
    assert "chain repaired" in git(bob, "log", "-3", "--format=%B", REF)


def test_pull_merges_without_pushing_and_push_refuses_when_the_remote_moved(team, cli):
    _alice, bob = team.clone("alice"), team.clone("bob")
    team.store("alice").add("alpha rule", "alice writes this")
    team.sync("alice")
    team.store("bob").add("beta rule", "bob writes that")
    with pytest.raises(RemoteMoved):
        Syncer(team.store("bob"), "origin").push()
    code, _, err = cli(bob, "push")
    assert code == 1
    assert "fatal: origin has facts or notes you do not have yet" in err
    assert "hint: run `git neo sync origin`" in err
    remote_before = git(team.remote, "rev-parse", REF)
    report = Syncer(team.store("bob"), "origin").pull()
    assert report.facts == "merged" and git(team.remote, "rev-parse", REF) == remote_before
    code, out, _ = cli(bob, "push", "--json")
    assert code == 0 and json.loads(out)["pushed"] == [REF]
    assert git(team.remote, "rev-parse", REF) == git(bob, "rev-parse", REF)


def test_outcome_notes_merge_as_a_sorted_union(team):
    alice, bob = team.clone("alice"), team.clone("bob")
    head = git(alice, "rev-parse", "HEAD").strip()
    git(alice, "notes", "--ref=neo", "add", "-m", '{"v":1,"id":"a","ts":1}', head)
    git(bob, "notes", "--ref=neo", "add", "-m", '{"v":1,"id":"b","ts":2}', head)
    team.store("alice").add("alpha rule", "alice writes this")
    assert team.sync("alice").pushed == [REF, "refs/notes/neo"]      # one atomic push
    assert team.sync("bob").notes == "merged"
    team.sync("alice")
    for clone in (alice, bob):
        assert git(clone, "notes", "--ref=neo", "show", head).splitlines() == [
            '{"v":1,"id":"a","ts":1}', '{"v":1,"id":"b","ts":2}']


def test_no_remote_or_an_unknown_one_is_a_clear_error(team, git_repo, cli):
    commit_files(git_repo, {"a.txt": "x"})
    code, _, err = cli(git_repo, "sync")
    assert code == 1 and "fatal: no remote to sync with" in err
    bob = team.clone("bob")
    with pytest.raises(NeoError, match="no remote named 'upstream'"):
        Syncer(team.store("bob"), "upstream")
    code, out, _ = cli(bob, "sync")
    assert code == 0 and "facts: none on the remote" in out   # nothing anywhere yet: fine
