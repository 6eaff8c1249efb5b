"""A new clone gets every fact: full, partial (--filter=blob:none) and shallow clones; and
`--configure-fetch` makes a plain `git fetch` bring the facts and notes."""
from __future__ import annotations

import pytest

from tests.helpers.git import git
from tests.helpers.sync import REF, fact_ids, tree_of


@pytest.fixture
def seeded(team):
    """The remote holds three facts (one superseded) and a note, written by alice."""
    alice = team.clone("alice")
    store = team.store("alice")
    first = store.add("queue choice", "we use rabbitmq", kind="decision")
    store.add("queue choice v2", "we use kafka now", kind="decision", supersedes=first.id)
    store.add("style", "black, line length 100", kind="pattern")
    git(alice, "notes", "--ref=neo", "add", "-m", '{"v":1,"id":"n1","ts":1}', "HEAD")
    for i in range(3):  # some branch history, so --depth 1 really cuts something
        (alice / f"f{i}.txt").write_text(str(i), encoding="utf-8")
        git(alice, "add", ".")
        git(alice, "commit", "-q", "-m", f"c{i}")
    git(alice, "push", "-q", "origin", "main")
    team.sync("alice")
    git(team.remote, "config", "uploadpack.allowFilter", "true")
    return team, fact_ids(store)


@pytest.mark.parametrize("options", [(), ("--filter=blob:none",), ("--depth", "1")],
                         ids=["full", "partial", "shallow"])
def test_a_fresh_clone_gets_every_fact_and_note(seeded, options):
    team, expected = seeded
    bob = team.clone("bob", *options)
    if options and options[0] == "--depth":
        assert git(bob, "rev-parse", "--is-shallow-repository").strip() == "true"
    report = team.sync("bob")
    assert report.facts == "created" and report.notes == "fast-forward"
    assert fact_ids(team.store("bob")) == expected
    assert tree_of(bob) == tree_of(team.root / "alice")
    # ... and the clone keeps working both ways, through a real 3-way merge (in a shallow
    # clone the merge base comes from `git merge-base`).
    theirs = team.store("alice").add("alice rule", "written meanwhile", kind="pattern")
    team.sync("alice")
    mine = team.store("bob").add("bob rule", "written in a fresh clone", kind="pattern")
    assert team.sync("bob").facts == "merged"
    team.sync("alice")
    assert {mine.id, theirs.id} <= fact_ids(team.store("alice"))
    assert tree_of(bob) == tree_of(team.root / "alice")


def test_a_partial_clone_whose_plain_fetch_brought_commits_without_blobs(seeded, cli):
    team, expected = seeded
    bob = team.clone("bob", "--filter=blob:none")
    assert cli(bob, "sync", "--configure-fetch")[0] == 0
    git(bob, "fetch", "-q", "origin")                    # applies the clone's blob filter
    missing = git(bob, "rev-list", "--objects", "--missing=print", "refs/remotes/origin/neo/facts")
    assert "\n?" in "\n" + missing                        # the facts' blobs are not here yet
    assert team.sync("bob").facts == "created"
    assert fact_ids(team.store("bob")) == expected


def test_configure_fetch_lets_plain_git_fetch_bring_the_refs_without_touching_local_notes(seeded, cli):
    team, _ = seeded
    bob = team.clone("bob")
    git(bob, "config", "--add", "remote.origin.fetch", "refs/notes/neo:refs/notes/remotes/origin/neo")  # an old install's
    code, out, _ = cli(bob, "sync", "--configure-fetch")
    assert code == 0 and "added remote.origin.fetch +refs/neo/facts*:refs/remotes/origin/neo/facts*" in out
    specs = git(bob, "config", "--get-all", "remote.origin.fetch").splitlines()
    assert "+refs/notes/neo*:refs/notes/remotes/origin/neo*" in specs
    assert "refs/notes/neo:refs/notes/remotes/origin/neo" not in specs          # the old one was replaced
    assert not any(spec.endswith(":refs/notes/neo") or spec.endswith(":refs/neo/facts") for spec in specs)
    assert "already has" in cli(bob, "sync", "--configure-fetch")[1]       # idempotent
    git(bob, "fetch", "-q", "origin")
    assert git(bob, "rev-parse", "refs/remotes/origin/neo/facts") == git(team.remote, "rev-parse", REF)
    assert git(bob, "rev-parse", "refs/notes/remotes/origin/neo") == git(team.remote, "rev-parse", "refs/notes/neo")
    assert git(bob, "for-each-ref", REF, "refs/notes/neo") == ""            # local refs untouched
    assert cli(bob, "sync", "--configure-fetch", "--remove")[0] == 0
    assert git(bob, "config", "--get-all", "remote.origin.fetch").splitlines() == [
        "+refs/heads/*:refs/remotes/origin/*"]


def test_install_remote_adds_the_same_fetch_refspecs(seeded, cli):
    team, _ = seeded
    bob = team.clone("bob")
    code, out, _ = cli(bob, "install", "--remote", "origin")
    assert code == 0 and "added remote.origin.fetch +refs/notes/neo*:refs/notes/remotes/origin/neo*" in out
    git(bob, "fetch", "-q", "origin")
    assert git(bob, "rev-parse", "refs/remotes/origin/neo/facts") == git(team.remote, "rev-parse", REF)
    code, out, _ = cli(bob, "install", "--uninstall", "--remote", "origin")
    assert code == 0 and git(bob, "config", "--get-all", "remote.origin.fetch").splitlines() == [
        "+refs/heads/*:refs/remotes/origin/*"]
