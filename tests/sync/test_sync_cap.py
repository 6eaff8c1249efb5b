"""The cap bounds what each author keeps, not the team's memory (issue 35, deliverable 1).

Two real clones through a bare remote: at the cap, sync converges in at most two rounds,
writes no merge commit once nothing changed, and never drops, evicts or re-queues a fact the
other side holds as valid; a fresh clone of a store over the cap takes it whole."""
from __future__ import annotations

import hashlib

import pytest

from neo_git.facts import FactScope
from neo_git.store.base import SCOPE_CAPS
from neo_git.store.review import incoming
from tests.helpers.git import git
from tests.helpers.sync import REF, fact_ids, tree_of


def _fill(team, who: str, n: int, start: int = 0, kind: str = "pattern") -> list[str]:
    """*n* distinct facts written by *who* in one batch; their ids."""
    items = [{"subject": " ".join(_words(who, i, 3)), "body": " ".join(_words(who, i + 100_000, 6)), "kind": kind}
             for i in range(start, start + n)]
    return [f.id for f in team.store(who).add_many(items)]


def _words(who: str, i: int, n: int) -> list[str]:
    """*n* made-up words, different for every (who, i): no two facts look alike to the hash
    embedder, so nothing is superseded by similarity and only the cap retires facts."""
    digest = hashlib.sha256(f"{who} {i}".encode()).hexdigest()
    return ["".join("aeioukmnprst"[int(c, 16) % 12] for c in digest[k * 6:(k + 1) * 6]) for k in range(n)]


def _remote_commits(team) -> int:
    return int(git(team.remote, "rev-list", "--count", REF).strip())


def _merges(team) -> int:
    return int(git(team.remote, "rev-list", "--count", "--merges", REF).strip())


def _held(clone) -> list[dict]:
    return incoming.load(clone / ".git" / "neo")


@pytest.mark.parametrize("trusting", [False, True])
def test_two_clones_holding_a_full_scope_converge_in_two_rounds(team, trusting):
    alice = team.clone("alice", trust_remote=trusting)
    bob = team.clone("bob", trust_remote=trusting)
    cap = SCOPE_CAPS[FactScope.PROJECT]
    mine = {"alice": set(_fill(team, "alice", cap)), "bob": set(_fill(team, "bob", cap))}
    for _round in range(2):
        for who in ("alice", "bob"):
            team.sync(who)
    assert tree_of(alice) == tree_of(bob) == git(team.remote, "rev-parse", f"{REF}^{{tree}}").strip()
    commits = _remote_commits(team)
    for who in ("alice", "bob", "alice", "bob"):   # nothing changed: no merge commit, nothing pushed
        report = team.sync(who)
        assert report.facts == "up to date" and not report.pushed
    assert _remote_commits(team) == commits
    assert _merges(team) <= 1
    for who, clone in (("alice", alice), ("bob", bob)):
        store = team.store(who)
        valid = fact_ids(store, include_invalid=False)
        assert valid == mine["alice"] | mine["bob"], who   # nobody's facts dropped or evicted
        assert _held(clone) == [], who                      # nothing re-queued for review


def test_ordinary_use_at_the_cap_evicts_only_the_writers_own_facts(team, monkeypatch):
    monkeypatch.setitem(SCOPE_CAPS, FactScope.PROJECT, 12)
    alice = team.clone("alice", trust_remote=False)
    bob = team.clone("bob", trust_remote=False)
    own = {"alice": set(_fill(team, "alice", 12)), "bob": set(_fill(team, "bob", 12))}
    for who in ("alice", "bob", "alice"):
        team.sync(who)
    for n in range(4):   # rounds of 3 new facts a side, each add over the cap
        for who in ("alice", "bob"):
            own[who] |= set(_fill(team, who, 3, start=100 + 3 * n))
            team.sync(who)
        team.sync("alice")
        assert tree_of(alice) == tree_of(bob)
    for who, clone in (("alice", alice), ("bob", bob)):
        other = "bob" if who == "alice" else "alice"
        store = team.store(who)
        facts = {f.id: f for f in store.list(scope="project", include_invalid=True)}
        assert _held(clone) == [], who
        # Each author keeps the cap of their own; the other's facts were never evicted by us.
        assert sum(facts[i].is_valid for i in own[who]) == 12, who
        assert sum(facts[i].is_valid for i in own[other]) == 12, who
        evicted = {i for i, f in facts.items() if (f.metadata.invalidation or {}).get("reason") == "evicted"}
        assert evicted == (own["alice"] | own["bob"]) - {i for i, f in facts.items() if f.is_valid}
        assert len(evicted) == 2 * 12   # 12 a side: every add evicted one of its writer's own
    assert _merges(team) <= 8


def test_an_add_over_the_cap_never_evicts_a_teammates_fact(team, monkeypatch):
    monkeypatch.setitem(SCOPE_CAPS, FactScope.PROJECT, 5)
    team.clone("alice", trust_remote=True)
    team.clone("bob", trust_remote=True)
    theirs = set(_fill(team, "bob", 5))
    team.sync("bob")
    team.sync("alice")
    mine = _fill(team, "alice", 5)
    assert fact_ids(team.store("alice"), include_invalid=False) == theirs | set(mine)
    extra = team.store("alice").add_detailed("alice one more", "one more rule over the cap")
    assert len(extra.evicted) == 1 and extra.evicted[0] in mine
    store = team.store("alice")
    assert all(store.get(i).is_valid for i in theirs)


def test_a_fresh_clone_of_a_store_over_the_cap_takes_it_whole_and_drops_nothing(team, monkeypatch, cli):
    monkeypatch.setitem(SCOPE_CAPS, FactScope.PROJECT, 10)
    team.clone("alice", trust_remote=False)
    protected = set(_fill(team, "alice", 25, kind="constraint"))   # protected: never evicted
    team.sync("alice")
    remote_tip = git(team.remote, "rev-parse", REF).strip()
    bob = team.clone("bob", trust_remote=False)
    local = team.store("bob").add("bob's first note", "written before the first sync")
    code, out, err = cli(bob, "sync")
    assert code == 0, err
    store = team.store("bob")
    assert fact_ids(store, include_invalid=False) == protected | {local.id}
    # What bob pushed holds every fact alice holds, as she holds it.
    pushed = git(team.remote, "rev-parse", REF).strip()
    assert git(team.remote, "merge-base", "--is-ancestor", remote_tip, pushed, check=False) == ""
    assert {f.id for f in team.store("alice").list(scope="project")} <= fact_ids(store)
    team.sync("alice")
    assert fact_ids(team.store("alice"), include_invalid=False) == protected | {local.id}
    assert _held(team.root / "alice") == [] and _held(bob) == []
