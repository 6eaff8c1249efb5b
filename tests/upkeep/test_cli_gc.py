"""`git neo gc` from the command line: dry run, JSON, and what each action says."""
from __future__ import annotations

import json

from tests.helpers.git import git
from tests.helpers.store import REF, open_store, run_cli
from tests.helpers.upkeep import days_ago, make, put


def test_gc_dry_run_then_real(repo_with_commit):
    store = open_store(repo_with_commit)
    store.init()
    stale = make(store, "an old unproven guess", confidence=0.2, created=days_ago(40))
    put(store, stale)
    tip = git(repo_with_commit, "rev-parse", REF)

    dry = run_cli(["gc", "--dry-run", "--json"], cwd=repo_with_commit)
    assert dry.returncode == 0, dry.stderr
    data = json.loads(dry.stdout)
    assert data["dry_run"] and data["counts"]["prune"] == 1 and data["commits"] == 1
    assert data["actions"][0]["fact_id"] == stale.id and "unproven after 40 days" in data["actions"][0]["why"]
    assert git(repo_with_commit, "rev-parse", REF) == tip

    text = run_cli(["gc"], cwd=repo_with_commit)
    assert text.returncode == 0, text.stderr
    out = text.stdout.decode()
    assert f"pruned       {stale.id}" in out and "why: unproven after 40 days" in out
    assert "1 pruned" in out and "in 1 commit" in out
    assert git(repo_with_commit, "rev-parse", REF) != tip
    again = run_cli(["gc"], cwd=repo_with_commit)
    assert again.stdout.decode().strip() == "gc: nothing to do"
    why = run_cli(["why", stale.id], cwd=repo_with_commit)
    assert b"pruned by upkeep" in why.stdout


def test_help_lists_gc_and_ingest(repo_with_commit):
    out = run_cli(["-h"], cwd=repo_with_commit)
    assert b"gc" in out.stdout and b"ingest" in out.stdout
