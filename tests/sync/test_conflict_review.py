"""Two clones superseded one fact differently (issue 17): the conflict is a review item, recall
marks both successors until a person keeps one, and `review keep ID` resolves it."""
from __future__ import annotations

import json

import pytest


@pytest.fixture
def conflict(team):
    alice, _bob = team.clone("alice"), team.clone("bob")
    old = team.store("alice").add("cache layer", "we cache in memcached", kind="decision")
    team.sync("alice")
    team.sync("bob")
    new_a = team.store("alice").add("cache layer", "we cache in redis", kind="decision", supersedes=old.id)
    new_b = team.store("bob").add("cache layer", "we cache nothing at all", kind="decision", supersedes=old.id)
    team.sync("alice"), team.sync("bob"), team.sync("alice")
    facts = {f.id: f for f in team.store("alice").list(include_invalid=True)}
    flagged = new_a if facts[new_a.id].needs_review else new_b
    other = new_b if flagged is new_a else new_a
    return alice, old, flagged, other


def test_a_conflict_is_listed_marked_in_recall_and_resolved_by_keep(team, conflict, cli):
    alice, old, flagged, other = conflict
    code, out, _ = cli(alice, "review", "--json")
    items = [i for i in json.loads(out) if i["type"] == "conflict"]
    assert [(i["id"], i["other"], i["predecessor"]) for i in items] == [(flagged.id, other.id, old.id)]
    assert items[0]["actions"] == ["keep"]
    code, out, _ = cli(alice, "review")
    assert "conflict:" in out and "nothing to review" not in out

    recalled = team.store("alice").recall("which cache layer do we use?")
    assert {f.id for f in recalled.valid_facts} == {flagged.id, other.id}
    assert recalled.conflicts == {flagged.id: other.id, other.id: flagged.id}
    code, out, _ = cli(alice, "recall", "which cache layer do we use?")
    assert out.count("[conflict") == 2

    # keep the one sync did not choose: the other is retired as superseded by it
    code, out, err = cli(alice, "review", "keep", other.id[:8])
    assert code == 0, err
    facts = {f.id: f for f in team.store("alice").list(include_invalid=True)}
    assert facts[other.id].is_valid and not facts[other.id].needs_review
    assert not facts[flagged.id].is_valid and facts[flagged.id].superseded_by == other.id
    assert facts[old.id].superseded_by == other.id
    assert team.store("alice").review() == [] and team.store("alice").recall("which cache layer?").conflicts == {}
    code, out, _ = cli(alice, "list")
    assert "[needs review]" not in out


def test_two_clones_accepting_different_candidates_of_one_question(team, cli):
    """Alice and Bob each answer the same review question with a different candidate. Both
    decisions hold after the sync (both older facts retired, each naming the successor), though
    the successor's one `supersedes` pointer names only one; restoring the other brings its link
    back to the successor, as any restore does, so nothing of the question is lost."""
    from tests.helpers.store import close_records

    team.clone("alice"), team.clone("bob")
    best, second, third, text = close_records(team.store("alice"))
    new = team.store("alice").add("Hermetic builds", text, kind="decision")
    team.sync("alice"), team.sync("bob")
    team.store("alice").resolve_review("accept", new.id, second.id)
    team.store("bob").resolve_review("accept", new.id, best.id)
    team.sync("alice"), team.sync("bob"), team.sync("alice")
    store = team.store("alice")
    facts = {f.id: f for f in store.list(include_invalid=True)}
    assert not facts[best.id].is_valid and not facts[second.id].is_valid
    assert facts[best.id].superseded_by == facts[second.id].superseded_by == new.id
    named = facts[new.id].supersedes
    other = second.id if named == best.id else best.id
    assert named in (best.id, second.id)
    store.restore(other)
    after = team.store("alice").get(new.id)
    assert team.store("alice").get(other).is_valid and after.supersedes == named   # the kept pointer stays
    assert other in {link.id for link in after.metadata.possibly_supersedes}
    from neo_git.store.review.possible import open_links

    asked = {item["candidate"] for item in team.store("alice").review()}
    assert asked == {link.id for link in open_links(after)} - {named}
