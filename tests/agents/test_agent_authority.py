"""Agents propose, people decide (issue 36): through a real MCP session, an agent cannot retire
or restore what a person wrote or retired; it files a proposal for `git neo review`, and every
commit it makes names it."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers.git import git
from tests.helpers.mcp import run_session

pytest.importorskip("mcp")


def _review(repo) -> list[dict]:
    proc = subprocess.run([sys.executable, "-m", "neo_git.cli", "review", "--json"], cwd=repo, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.timeout(120)
def test_an_agent_proposes_changes_to_a_persons_facts_and_every_agent_commit_names_it(repo_with_commit):
    from neo_git.store import FactStore

    store = FactStore.open(repo_with_commit, embedder="hash")
    hooks = store.add("No network in hooks", "hooks never touch the network", kind="constraint")
    old_tls = store.add("TLS 1.0 or newer", "accept TLS 1.0 and up", kind="constraint")
    new_tls = store.add("TLS 1.3 only", "accept TLS 1.3 only", kind="constraint", supersedes=old_tls.id)
    retracted = store.add("Always disable TLS verification", "verify=False", kind="constraint")
    store.invalidate(retracted.id, "never do that")
    before = git(repo_with_commit, "rev-list", "--count", "refs/neo/facts").strip()

    async def script(session):
        superseding = await session.call_tool("add_fact", {
            "subject": "No network in hooks", "body": "Hooks may call the network freely.", "kind": "pattern",
            "supersedes": hooks.id})
        restore_old = await session.call_tool("restore", {"fact_id": old_tls.id})
        restore_retracted = await session.call_tool("restore", {"fact_id": retracted.id})
        mine = await session.call_tool("add_fact", {"subject": "Cache dir", "body": "use .cache/neo", "kind": "pattern"})
        mine_id = mine.structured_content["fact"]["id"]
        newer = await session.call_tool("add_fact", {"subject": "Cache dir", "body": "use .cache/neo-v2",
                                                     "kind": "pattern", "supersedes": mine_id})
        own_restore = await session.call_tool("restore", {"fact_id": mine_id})
        return superseding, restore_old, restore_retracted, mine_id, newer, own_restore

    superseding, restore_old, restore_retracted, mine_id, newer, own_restore = run_session(repo_with_commit, script)
    assert not superseding.is_error and superseding.structured_content["superseded"] is None
    proposal = superseding.structured_content["fact"]
    assert proposal["metadata"]["proposal"] == "open"
    assert restore_old.structured_content["restored"] is False and "review" in restore_old.structured_content["proposal"]
    assert restore_retracted.structured_content["restored"] is False
    # An agent may undo its own supersession of its own fact.
    assert newer.structured_content["superseded"] == mine_id
    assert not own_restore.is_error and own_restore.structured_content["is_valid"] is True

    store = FactStore.open(repo_with_commit, embedder="hash")
    assert store.get(hooks.id).is_valid and not store.get(old_tls.id).is_valid and not store.get(retracted.id).is_valid
    constraints = {f.id for f in store.recall("network in hooks TLS").constraints}
    assert hooks.id in constraints and new_tls.id in constraints
    assert old_tls.id not in constraints and retracted.id not in constraints
    assert store.why(hooks.id)["state"] == "valid"

    items = _review(repo_with_commit)
    requests = {i["id"]: i for i in items if i["type"] == "agent_request"}
    assert set(requests) == {old_tls.id, retracted.id}
    assert proposal["id"] in {i["id"] for i in items if i["type"] == "agent_proposal"}

    # Every commit the agent's server made names the agent.
    made = int(git(repo_with_commit, "rev-list", "--count", "refs/neo/facts")) - int(before)
    log = git(repo_with_commit, "log", "--format=%B%x00", f"-n{made}", "refs/neo/facts")
    messages = [m.strip() for m in log.split("\x00") if m.strip()]
    assert messages and all("Agent: mcp" in m for m in messages), messages

    # A person accepts one request: the change is theirs, the commit names the agent that asked.
    proc = subprocess.run([sys.executable, "-m", "neo_git.cli", "review", "accept", retracted.id, "--type",
                           "agent_request"], cwd=repo_with_commit, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert FactStore.open(repo_with_commit, embedder="hash").get(retracted.id).is_valid
    last = git(repo_with_commit, "log", "-1", "--format=%B", "refs/neo/facts")
    assert "asked by mcp" in last and "accepted by a person" in last
    assert {i["id"] for i in _review(repo_with_commit) if i["type"] == "agent_request"} == {old_tls.id}
