"""A teammate's push is data, not authority: who made a change is what git verifies (a
signature, or a remote whose write access is trusted), never the e-mail a commit claims.
Untrusted changes to trusted facts are held for review; a flood of unverified facts is refused whole."""
from __future__ import annotations

import json
import subprocess

import pytest

from neo_git.store import Change
from tests.helpers.git import git
from tests.helpers.sync import REF, fact_ids, fact_json, plant


def _as(clone, email: str) -> None:
    """Make *clone* write commits claiming *email* (a forged identity)."""
    git(clone, "config", "user.email", email)


@pytest.fixture
def keys(tmp_path):
    """Two ssh signing keys made with ssh-keygen, and an allowed-signers file naming alice's."""
    folder = tmp_path / "keys"
    folder.mkdir()
    for who in ("alice", "bob", "mallory"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", who, "-f", str(folder / who)],
                       check=True, timeout=30)
    allowed = folder / "allowed_signers"
    lines = [f"{who}@example.com {(folder / f'{who}.pub').read_text().strip()}\n" for who in ("alice", "bob")]
    allowed.write_text("".join(lines), encoding="utf-8")
    return folder


def _sign_with(clone, keys, who: str) -> None:
    git(clone, "config", "gpg.format", "ssh")
    git(clone, "config", "user.signingKey", str(keys / who))
    git(clone, "config", "neo.signCommits", "true")


def _verify_with(clone, keys) -> None:
    git(clone, "config", "gpg.ssh.allowedSignersFile", str(keys / "allowed_signers"))


def test_a_commit_claiming_the_victims_own_address_is_still_a_claim(team, cli):
    alice = team.clone("alice", trust_remote=False)
    team.store("alice").add("No network in hooks", "hooks never touch the network", kind="constraint")
    team.sync("alice")
    mallory = team.clone("carol")
    _as(mallory, "alice@example.com")            # forged: the victim's own address
    git(alice, "config", "--add", "neo.trusted", "dave@example.com")
    forged = team.store("carol").add("Network in hooks is fine", "call the API from pre-commit",
                                     kind="constraint")
    team.sync("carol")
    team.sync("alice")
    store = team.store("alice")
    assert store.untrusted() == {forged.id: "alice@example.com"}
    constraints = {f.id for f in store.recall("network in hooks").constraints}
    assert forged.id not in constraints
    shown = cli(alice, "show", forged.id)[1]
    assert "self-declared" in shown and "unverified" in shown


def test_untrusted_retractions_and_rewrites_of_trusted_facts_are_held_for_review(team, cli):
    alice = team.clone("alice", trust_remote=False)
    store = team.store("alice")
    rule = store.add("No network in hooks", "hooks never touch the network", kind="constraint")
    others = [store.add(f"rule {n}", f"body of rule {n}", kind="decision") for n in range(3)]
    team.sync("alice")
    mallory = team.clone("carol")
    _as(mallory, "alice@example.com")
    team.sync("carol")
    hostile = team.store("carol")
    hostile.transact("project", lambda facts: Change(
        facts=(facts[rule.id].evolve(body="hooks may fetch anything"),), message="rewrite"))
    for fact in others:
        hostile.invalidate(fact.id, "not true any more")
    team.sync("carol")
    report = team.sync("alice")
    store = team.store("alice")
    assert store.get(rule.id).body == "hooks never touch the network"
    assert all(store.get(f.id).is_valid for f in others)
    assert len(report.plan.held) == 4
    assert any("held 4 change(s)" in w for w in report.warnings)
    # The remote is restored too: alice's merge went back with her facts as they were.
    assert git(team.remote, "rev-parse", REF) == git(alice, "rev-parse", REF)
    items = json.loads(cli(alice, "review", "--json")[1])
    incoming = {i["id"]: i for i in items if i["type"] == "incoming"}
    assert set(incoming) == {rule.id, *(f.id for f in others)}
    assert "retracts this fact" in incoming[others[0].id]["why"]
    assert "rewrites this fact" in incoming[rule.id]["why"]
    assert "alice@example.com (unverified" in incoming[rule.id]["why"]
    # accept takes the change as alice's own; reject keeps hers; neither comes back.
    assert cli(alice, "review", "accept", others[0].id)[0] == 0
    assert cli(alice, "review", "reject", rule.id)[0] == 0
    store = team.store("alice")
    assert not store.get(others[0].id).is_valid
    assert store.get(rule.id).body == "hooks never touch the network"
    team.sync("alice")
    left = {i["id"] for i in json.loads(cli(alice, "review", "--json")[1]) if i["type"] == "incoming"}
    assert left == {others[1].id, others[2].id}


def test_a_change_to_a_claim_goes_through(team):
    team.clone("alice", trust_remote=False)
    team.clone("bob")
    claim = team.store("bob").add("cache layer", "use redis for caching", kind="decision")
    team.sync("bob")
    team.sync("alice")
    assert claim.id in team.store("alice").untrusted()
    team.store("bob").transact("project", lambda facts: Change(
        facts=(facts[claim.id].evolve(body="use memcached for caching"),), message="edit"))
    team.sync("bob")
    report = team.sync("alice")
    assert not report.plan.held
    assert team.store("alice").get(claim.id).body == "use memcached for caching"


def test_a_trusted_remote_may_change_trusted_facts(team):
    team.clone("alice")                                  # neo.trustUnsigned origin
    team.clone("bob")
    fact = team.store("alice").add("deploy", "deploy on fridays", kind="decision")
    team.sync("alice"), team.sync("bob")
    team.store("bob").invalidate(fact.id, "we stopped")
    team.sync("bob")
    report = team.sync("alice")
    assert not report.plan or not report.plan.held
    assert not team.store("alice").get(fact.id).is_valid


def test_a_signed_commit_counts_as_its_signer_and_a_forged_one_does_not(team, keys, cli):
    alice = team.clone("alice", trust_remote=False)
    bob = team.clone("bob")
    _verify_with(alice, keys)
    git(alice, "config", "--add", "neo.trusted", "bob@example.com")
    fact = team.store("alice").add("deploy", "deploy on fridays", kind="decision")
    team.sync("alice"), team.sync("bob")
    _sign_with(bob, keys, "bob")
    new = team.store("bob").add("release train", "release every second week", kind="decision")
    team.store("bob").invalidate(fact.id, "we stopped")
    team.sync("bob")
    assert "gpgsig" in git(bob, "cat-file", "commit", REF)          # git-neo signed bob's commits
    report = team.sync("alice")
    store = team.store("alice")
    assert not report.plan.held
    assert not store.get(fact.id).is_valid             # bob's signed retraction applied
    assert new.id not in store.untrusted()              # and his fact is knowledge
    # Mallory signs with her own key but claims to be bob: git says U (unknown key) -> a claim, held.
    mallory = team.clone("carol")
    _as(mallory, "bob@example.com")
    _sign_with(mallory, keys, "mallory")
    team.sync("carol")
    forged = team.store("carol").add("skip reviews", "merge without review", kind="decision")
    team.store("carol").invalidate(new.id, "forged retraction")
    team.sync("carol")
    report = team.sync("alice")
    store = team.store("alice")
    assert forged.id in store.untrusted()
    assert store.get(new.id).is_valid
    assert [h["id"] for h in report.plan.held] == [new.id]


def test_a_flood_of_unverified_facts_is_refused_whole_and_ours_stay(team, cli):
    alice = team.clone("alice", trust_remote=False)
    store = team.store("alice")
    mine = [store.add(f"local rule {n}", f"the body of local rule {n}", kind="pattern") for n in range(5)]
    team.sync("alice")
    before = git(alice, "rev-parse", REF).strip()
    spammer = team.clone("carol")
    git(spammer, "fetch", "-q", "origin", f"+{REF}:{REF}")
    files = {}
    for n in range(3000):
        fact_id = f"{n:016x}"
        files[f"facts/{fact_id[:2]}/{fact_id}.json"] = fact_json(fact_id, f"spam {n}", "buy now")
    plant(spammer, files, message="spam")
    git(spammer, "push", "-q", "origin", REF)
    code, out, err = cli(alice, "sync")
    assert code == 1
    assert "3,000 new facts from unverified commits" in err and "cap of 500" in err
    assert "hint:" in err and "neo.trustUnsigned" in err
    # Nothing merged, nothing pushed: our ref and the remote's are as they were.
    assert git(alice, "rev-parse", REF).strip() == before
    store = team.store("alice")
    assert all(store.get(f.id).is_valid for f in mine)
    assert len(fact_ids(store)) == 5


def test_a_flood_of_retired_claims_is_refused_too(team, cli):
    """Issue 36: the cap counted only valid facts, so 20,000 retired claims landed whole."""
    alice = team.clone("alice", trust_remote=False)
    team.store("alice").add("local rule", "the body of the local rule", kind="pattern")
    team.sync("alice")
    spammer = team.clone("carol")
    git(spammer, "fetch", "-q", "origin", f"+{REF}:{REF}")
    files = {}
    for n in range(600):
        fact_id = f"{n:016x}"
        files[f"facts/{fact_id[:2]}/{fact_id}.json"] = fact_json(fact_id, f"retired spam {n}", "buy now",
                                                                 is_valid=False)
    plant(spammer, files, message="retired spam")
    git(spammer, "push", "-q", "origin", REF)
    code, _out, err = cli(alice, "sync")
    assert code == 1 and "600 new facts from unverified commits" in err
    assert len(fact_ids(team.store("alice"))) == 1


@pytest.mark.parametrize("trusting", [True, False])
def test_claims_arrive_whole_up_to_the_cap_and_refused_whole_beyond(team, trusting):
    from neo_git.facts import FactScope
    from neo_git.sync import Syncer
    from neo_git.sync.gate import FloodRefused

    team.clone("alice", trust_remote=trusting)
    team.clone("bob")
    for n in range(3):
        team.store("alice").add(f"alice rule {n}", f"alice body number {n} about zebras")
    team.sync("alice"), team.sync("bob")
    for n in range(5):
        team.store("bob").add(f"bob rule {n}", f"bob body number {n} about lighthouses")
    team.sync("bob")
    store = team.store("alice")
    store.caps[FactScope.PROJECT] = 4
    if trusting:   # trusted writers' facts are knowledge: no cap on what arrives
        Syncer(store, "origin").sync()
    else:
        with pytest.raises(FloodRefused):
            Syncer(store, "origin").sync()
    bobs = [f for f in team.store("alice").list(scope="project") if f.subject.startswith("bob")]
    assert len(bobs) == (5 if trusting else 0)
    store = team.store("alice")
    store.caps[FactScope.PROJECT] = 5   # five claims fit: all of them arrive
    Syncer(store, "origin").sync()
    assert len([f for f in team.store("alice").list(scope="project") if f.subject.startswith("bob")]) == 5


def test_a_signed_constraint_is_trusted_again_after_its_lost_record_is_rebuilt(team, keys, cli):
    alice = team.clone("alice", trust_remote=False)
    bob = team.clone("bob", trust_remote=False)
    _verify_with(alice, keys)
    git(alice, "config", "--add", "neo.trusted", "bob@example.com")
    _sign_with(bob, keys, "bob")
    rule = team.store("bob").add("No network in hooks", "hooks never touch the network", kind="constraint")
    team.sync("bob")
    team.sync("alice")
    assert rule.id in {f.id for f in team.store("alice").recall("network in hooks").constraints}
    (alice / ".git" / "neo" / "trust" / "received.json").unlink()
    assert rule.id in team.store("alice").untrusted()               # closed while the verdict is missing
    assert "no trust verdict" in cli(alice, "doctor")[1]
    assert cli(alice, "doctor", "--fix")[0] == 0                    # git verifies the signature again
    store = team.store("alice")
    assert store.untrusted() == {}
    assert rule.id in {f.id for f in store.recall("network in hooks").constraints}


def test_trust_commands_say_what_they_do_for_signed_and_unsigned_commits(team, cli):
    alice = team.clone("alice", trust_remote=False)
    team.clone("bob", trust_remote=False)
    team.store("bob").add("cache layer", "use redis for caching", kind="decision")
    team.sync("bob")
    code, out, _ = cli(alice, "trust", "add", "bob@example.com")
    assert code == 0 and "signed by bob@example.com now count" in out
    assert "unsigned commits claiming bob@example.com stay unverified" in out and "neo.trustUnsigned" in out
    out = cli(alice, "trust", "list")[1]
    assert "bob@example.com: commits git verifies as signed" in out and "neo.trustUnsigned <remote>" in out
    out = cli(alice, "sync")[1]
    assert "trust: signatures:" in out and "1 are unverified" in out
    assert "trust:" not in cli(alice, "sync")[1]                     # said once per clone
    out = cli(alice, "list", "--untrusted")[1]
    assert "1 unverified" in out and "git neo review" in out and "neo.trustUnsigned" in out
    git(alice, "config", "neo.trustUnsigned", "origin")
    assert "every commit from remote origin, signed or not" in cli(alice, "trust", "list")[1]

