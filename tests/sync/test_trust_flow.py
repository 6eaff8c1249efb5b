"""Knowledge flows, authority does not (issue 36): a teammate's unsigned facts reach agents as
team knowledge with the author they claim; their constraint applies only once a person
accepts it (or trusts a verified signature), and a later unverified rewrite needs that again."""
from __future__ import annotations

import json

from neo_git.store import Change
from tests.helpers.git import git


def _session_start(store) -> str:
    from neo_git.agents.context import render, session_start_sections

    facts = store.list()
    claims = dict(store.untrusted())
    text, _ = render(session_start_sections(facts, untrusted=claims), 4000, untrusted=claims)
    return text


def test_a_teammates_facts_flow_as_knowledge_and_a_constraint_waits_for_acceptance(team, cli):
    ann = team.clone("alice", trust_remote=False)
    team.clone("bob", trust_remote=False)
    bob = team.store("bob")
    rule = bob.add("No network in hooks", "hooks never touch the network", kind="constraint")
    knowledge = bob.add("Cache layer", "we use redis for caching", kind="decision")
    team.sync("bob")
    team.sync("alice")
    store = team.store("alice")
    text = _session_start(store)
    constraints, _, key_facts = text.partition("Key project facts")
    assert "No network in hooks" not in constraints
    assert "Cache layer" in key_facts and "from bob@example.com (author unverified)" in key_facts

    items = [i for i in json.loads(cli(ann, "review", "--json")[1]) if i["type"] == "unverified_constraint"]
    assert [i["id"] for i in items] == [rule.id]
    assert "claimed by bob@example.com" in items[0]["why"]
    code, out, _ = cli(ann, "review", "accept", rule.id)
    assert code == 0 and "applies to your agents from now on" in out
    store = team.store("alice")
    assert rule.id not in store.untrusted() and knowledge.id in store.untrusted()
    assert rule.id in {f.id for f in store.recall("network in hooks").constraints}
    assert "No network in hooks" in _session_start(store).partition("Key project facts")[0]
    assert not [i for i in json.loads(cli(ann, "review", "--json")[1]) if i["type"] == "unverified_constraint"]

    # Bob rewrites it, unsigned: accepted, it is no longer his alone to change; the rewrite waits.
    bob = team.store("bob")
    bob.transact("project", lambda facts: Change(
        facts=(facts[rule.id].evolve(body="hooks may fetch anything"),), message="rewrite"))
    second = bob.add("Deploys on Fridays", "deploy any day", kind="constraint")
    team.sync("bob")
    report = team.sync("alice")
    assert [h["id"] for h in report.plan.held] == [rule.id]
    store = team.store("alice")
    assert store.get(rule.id).body == "hooks never touch the network"
    assert rule.id in {f.id for f in store.recall("network in hooks").constraints}

    # Rejecting keeps a constraint a claim and takes it off the list.
    assert cli(ann, "review", "reject", second.id, "--type", "unverified_constraint")[0] == 0
    assert second.id in team.store("alice").untrusted()
    assert not [i for i in json.loads(cli(ann, "review", "--json")[1]) if i["type"] == "unverified_constraint"]


def test_a_lost_acceptance_record_makes_the_constraint_a_claim_again(team, cli):
    ann = team.clone("alice", trust_remote=False)
    team.clone("bob", trust_remote=False)
    rule = team.store("bob").add("No network in hooks", "hooks never touch the network", kind="constraint")
    team.sync("bob")
    team.sync("alice")
    assert cli(ann, "review", "accept", rule.id)[0] == 0
    assert rule.id not in team.store("alice").untrusted()
    (ann / ".git" / "neo" / "trust" / "accepted.json").write_text("garbage", encoding="utf-8")
    assert rule.id in team.store("alice").untrusted()
    git(ann, "status")   # the clone is otherwise fine


def test_a_held_rewrite_does_not_make_your_own_fact_a_claim(team):
    alice = team.clone("alice", trust_remote=False)
    mine = team.store("alice").add("No network in hooks", "hooks never touch the network", kind="constraint")
    team.sync("alice")
    team.clone("bob", trust_remote=False)
    team.sync("bob")
    team.store("bob").transact("project", lambda facts: Change(
        facts=(facts[mine.id].evolve(body="hooks may fetch anything"),), message="rewrite"))
    team.sync("bob")
    report = team.sync("alice")
    assert [h["id"] for h in report.plan.held] == [mine.id]
    store = team.store("alice")
    assert store.get(mine.id).body == "hooks never touch the network"
    assert mine.id not in store.untrusted()          # before: the held rewrite's commit became its author
    assert mine.id in {f.id for f in store.recall("network in hooks").constraints}
    git(alice, "status")
