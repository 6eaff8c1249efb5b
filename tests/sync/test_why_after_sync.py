"""Issue 37: `why` on a successor a sync flagged (two clones superseded one fact differently)
names the competing successor and the way out, not "it depends on , which changed"."""
from __future__ import annotations


def test_why_names_the_competing_successor(team, cli):
    alice = team.clone("alice")
    team.clone("bob")
    old = team.store("alice").add("cache layer", "we cache in memcached", kind="decision")
    team.sync("alice")
    team.sync("bob")
    new_a = team.store("alice").add("cache layer", "we cache in redis", kind="decision", supersedes=old.id)
    new_b = team.store("bob").add("cache layer", "we cache nothing at all", kind="decision", supersedes=old.id)
    team.sync("alice"), team.sync("bob"), team.sync("alice")
    facts = {f.id: f for f in team.store("alice").list(include_invalid=True)}
    flagged, other = (new_a, new_b) if facts[new_a.id].needs_review else (new_b, new_a)
    code, out, err = cli(alice, "why", flagged.id)
    assert code == 0, err
    assert "depends on ," not in out and "depends on" not in out
    assert f"it and {other.id} both replaced {old.id}" in out
    assert f"git neo review keep {flagged.id[:8]}" in out
