"""Issue 32's upkeep reproductions, as a new user runs them: being looked up is never evidence
against a fact. Real `git neo` commands in a throwaway repository; the daily gc that outcome
processing triggers (`neo.autoGc`, `maybe_run_daily`) is run for each of the following days."""
from __future__ import annotations

import json
from datetime import timedelta

from neo_git.upkeep import maybe_run_daily
from neo_git.upkeep.rules import stamp, utc_now
from tests.helpers.store import open_store, run_cli

DECISION = ("Redirects are not followed by default",
            "Unlike requests, HTTPX does not follow redirects by default; pass follow_redirects=True.")
GUESS = ("Streaming read timeout", "Streaming downloads might use a read timeout of 30 seconds.")


def _recall(repo, question: str, times: int) -> None:
    for _ in range(times):
        out = run_cli(["recall", question], cwd=repo)
        assert out.returncode == 0, out.stderr


def test_imported_decision_recalled_22_times_keeps_its_confidence_and_is_never_pruned(repo_with_commit, tmp_path):
    repo = repo_with_commit
    assert run_cli(["init"], cwd=repo).returncode == 0
    created = stamp(utc_now() - timedelta(days=34))
    envelope = {"version": "2.0", "facts": [
        {"id": "d0c15105d0c15105", "subject": DECISION[0], "body": DECISION[1], "kind": "decision",
         "scope": "project", "metadata": {"created_at": created, "confidence": 0.5}},
        # A low-confidence guess, as old: pruned only once nobody has consulted it for 14 days.
        {"id": "6e556e556e556e55", "subject": GUESS[0], "body": GUESS[1], "kind": "decision",
         "scope": "project", "metadata": {"created_at": created, "confidence": 0.3}}]}
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(envelope))
    imported = run_cli(["import", str(path)], cwd=repo)
    assert imported.returncode == 0, imported.stderr

    _recall(repo, "Are redirects followed by default?", 22)
    _recall(repo, "What read timeout do streaming downloads use?", 3)
    store = open_store(repo)
    counts = store.access.counts()
    assert counts["d0c15105d0c15105"][0] >= 22 and counts["6e556e556e556e55"][0] >= 3

    dry = run_cli(["gc", "--dry-run", "--json"], cwd=repo)
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["actions"] == []

    start = utc_now()
    for day in range(1, 14):   # neo.autoGc: a run a day while the guess is still being read
        report = maybe_run_daily(open_store(repo), now=start + timedelta(days=day, minutes=1))
        assert report is not None and report.actions == [], [a.why for a in report.actions]
    store = open_store(repo)
    decision, guess = store.get("d0c15105d0c15105"), store.get("6e556e556e556e55")
    assert decision.is_valid and decision.metadata.confidence == 0.5
    assert guess.is_valid and guess.metadata.confidence == 0.3

    # Two weeks without anyone reading the guess: now it is stale, and the dry run says why.
    later = start + timedelta(days=15, minutes=1)
    report = maybe_run_daily(open_store(repo), now=later)
    assert [(a.step, a.fact_id) for a in report.actions] == [("prune", "6e556e556e556e55")]
    assert "confidence 0.30 < 0.4, no success, last consulted" in report.actions[0].evidence
    for day in range(16, 60):  # the decision, unread too, still keeps its confidence: nothing against it
        maybe_run_daily(open_store(repo), now=start + timedelta(days=day, minutes=1))
    decision = open_store(repo).get("d0c15105d0c15105")
    assert decision.is_valid and decision.metadata.confidence == 0.5


def test_fact_written_minutes_ago_is_not_demoted_after_12_lookups(repo_with_commit):
    repo = repo_with_commit
    assert run_cli(["init"], cwd=repo).returncode == 0
    added = run_cli(["add", "--kind", "decision", *DECISION, "--json"], cwd=repo)
    assert added.returncode == 0, added.stderr
    fact_id = json.loads(added.stdout)["id"]
    _recall(repo, "Are redirects followed by default?", 12)
    assert open_store(repo).access.counts()[fact_id][0] >= 12

    gc = run_cli(["gc", "--dry-run"], cwd=repo)
    assert gc.returncode == 0 and gc.stdout.decode().strip() == "gc: nothing to do", gc.stdout
    gc = run_cli(["gc"], cwd=repo)
    assert gc.returncode == 0 and gc.stdout.decode().strip() == "gc: nothing to do", gc.stdout
    fact = open_store(repo).get(fact_id)
    assert fact.is_valid and fact.metadata.confidence == 0.5


def test_facts_an_agent_is_given_count_as_consulted(repo_with_commit):
    """The agent hooks' session start and file context hand facts out without a recall: those
    are consulted too, so gc keeps them through the window."""
    from tests.helpers.agents import payload, run_hook
    from tests.helpers.upkeep import days_ago, make, put

    repo = repo_with_commit
    store = open_store(repo)
    store.init()
    scoped = make(store, "Migrations run in one transaction", "Each migration runs inside one transaction.",
                  confidence=0.3, created=days_ago(40)).evolve(metadata={"paths": ["migrations/**"]})
    put(store, scoped)
    _, out, _ = run_hook("pre-tool-use", "claude", payload("claude_pre_tool_use_edit", repo))
    assert scoped.id in out["hookSpecificOutput"]["additionalContext"]
    assert open_store(repo).access.counts()[scoped.id][0] == 1
    report = maybe_run_daily(open_store(repo), now=utc_now() + timedelta(days=13))
    assert report.actions == [] and open_store(repo).get(scoped.id).is_valid
