"""Derived facts inherit the weakest trust of what they came from (issue 36): upkeep never
turns teammates' unverified claims into an archetype committed as the local user."""
from __future__ import annotations

from tests.helpers.upkeep import make, put

SPELLINGS = (
    "Accepted: use a context manager to close the file in loader.py",
    "Accepted: use a context manager to close the file in loader.py (again)",
    "Accepted: used a context manager to close the file in loader.py",
    "Accepted: use a with-statement context manager to close the file in loader.py",
)


def test_gc_never_synthesizes_claims_into_a_trusted_archetype(team, cli):
    alice = team.clone("alice", trust_remote=False)
    team.clone("bob", trust_remote=False)
    bob = team.store("bob")
    claims = [make(bob, text, kind="review") for text in SPELLINGS]
    put(bob, *claims)
    team.sync("bob")
    team.sync("alice")
    assert set(team.store("alice").untrusted()) == {c.id for c in claims}

    assert cli(alice, "gc")[0] == 0
    store = team.store("alice")
    assert all(store.get(c.id).is_valid for c in claims)            # before: retired into an archetype
    assert set(store.untrusted()) == {c.id for c in claims}
    assert not [f for f in store.list(scope="project") if "synthesized" in f.tags]

    # Her own near-identical reviews are synthesized as before.
    mine = [make(store, text.replace("loader.py", "saver.py"), kind="review") for text in SPELLINGS]
    put(store, *mine)
    assert cli(alice, "gc")[0] == 0
    store = team.store("alice")
    assert not any(store.get(f.id).is_valid for f in mine)
    assert all(store.get(c.id).is_valid for c in claims)
