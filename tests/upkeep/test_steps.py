"""Upkeep on a real store: the exact thresholds of pruning, demotion, caps and purge,
each action one commit saying why, and `why` explaining it afterwards."""
from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from neo_git.errors import FactNotFound
from neo_git.fact_schema import Citation
from neo_git.facts import FactScope
from neo_git.upkeep import maybe_run_daily, run_gc
from neo_git.upkeep.rules import stamp
from tests.helpers.git import git
from tests.helpers.store import REF, commit_messages, open_store, ref_fact_ids
from tests.helpers.upkeep import NOW, days_ago, make, put, state


def test_stale_pruning_thresholds(store, repo_with_commit):
    stale = make(store, "old unproven guess", confidence=0.3, created=days_ago(20))
    confident = make(store, "old but confident", confidence=0.5, created=days_ago(20))
    young = make(store, "young unproven guess", confidence=0.3, created=days_ago(5))
    proven = make(store, "old low but helped once", confidence=0.3, success=1, created=days_ago(20))
    at_edge = make(store, "exactly at the confidence line", confidence=0.4, created=days_ago(20))
    day_14 = make(store, "exactly fourteen days old", confidence=0.3, created=days_ago(14))
    constraint = make(store, "never push to main", kind="constraint", confidence=0.1, created=days_ago(90))
    put(store, stale, confident, young, proven, at_edge, day_14, constraint)

    report = run_gc(store, now=NOW)

    assert [a.fact_id for a in report.actions if a.step == "prune"] == [stale.id]
    assert not state(store, stale.id).is_valid
    for kept in (confident, young, proven, at_edge, day_14, constraint):
        assert state(store, kept.id).is_valid, kept.subject
    assert commit_messages(repo_with_commit)[0] == "upkeep: prune 1 fact (project scope)"
    body = git(repo_with_commit, "log", "-1", "--format=%b", REF)
    assert stale.id in body and "unproven after 20 days" in body
    why = store.why(stale.id)
    assert why["state"] == "pruned"
    assert "pruned by upkeep" in why["explanation"] and "confidence 0.30 < 0.4" in why["explanation"]


def _cite(fact, *citations):
    """*fact* citing code whose recorded states are *citations* ((path, state, since commit), ...)."""
    return fact.evolve(metadata={"citations": tuple(
        Citation(path, state, symbol="handler", since=since or None) for path, state, since in citations)})


GONE_IN = "a" * 40
GONE_LATER = "b" * 40


def test_retrievals_never_demote(store, repo_with_commit):
    """Issue 32: being looked up is not evidence against a fact, however often, in any clone."""
    looked_up = make(store, "retrieved a lot, never helped", confidence=0.5)
    rule = make(store, "a constraint is recalled on every question", kind="constraint", confidence=0.5)
    put(store, looked_up, rule)
    for _ in range(40):
        store.access.record([looked_up.id, rule.id])

    tip = git(repo_with_commit, "rev-parse", REF)
    for day in range(0, 60, 7):
        assert run_gc(open_store(repo_with_commit), now=NOW + timedelta(days=day)).actions == []
    assert git(repo_with_commit, "rev-parse", REF) == tip
    assert state(store, looked_up.id).metadata.confidence == 0.5
    assert state(store, rule.id).metadata.confidence == 0.5


def test_gone_code_demotes_once_per_loss_in_every_clone(store, repo_with_commit):
    gone = _cite(make(store, "the handler retries three times", confidence=0.5), ("a.py", "gone", GONE_IN))
    half = _cite(make(store, "one citation still holds", confidence=0.5),
                 ("a.py", "gone", GONE_IN), ("b.py", "verified", None))
    changed = _cite(make(store, "its code changed, still there", confidence=0.5), ("a.py", "changed", GONE_IN))
    seed = _cite(make(store, "a seed fact citing gone code", confidence=0.5, tags=("seed",)), ("a.py", "gone", GONE_IN))
    put(store, gone, half, changed, seed)

    first = run_gc(store, now=NOW)
    assert [(a.step, a.fact_id) for a in first.actions] == [("demote", gone.id)]
    assert first.actions[0].evidence == f"cited code gone: a.py:handler gone in {GONE_IN[:12]}"
    assert state(store, gone.id).metadata.confidence == pytest.approx(0.4)
    assert state(store, gone.id).metadata.citations[0].weighed == GONE_IN
    for kept in (half, changed, seed):
        assert state(store, kept.id).metadata.confidence == 0.5, kept.subject

    tip = git(repo_with_commit, "rev-parse", REF)
    assert run_gc(store, now=NOW).actions == []
    (store.paths.neo_dir / "upkeep.json").unlink()   # another clone: nothing local says it was weighed
    assert run_gc(open_store(repo_with_commit), now=NOW + timedelta(days=3)).actions == []
    assert git(repo_with_commit, "rev-parse", REF) == tip

    # The code came back and went again in a later commit: new evidence, weighed once more.
    again = state(store, gone.id).evolve(metadata={"citations": (
        replace(state(store, gone.id).metadata.citations[0], since=GONE_LATER),)})
    put(store, again)
    run_gc(store, now=NOW)
    assert state(store, gone.id).metadata.confidence == pytest.approx(0.3)
    why = store.why(gone.id)
    assert why["is_valid"] and len(why["upkeep"]) == 2 and "cited code gone" in why["explanation"]


def test_demotion_floor(store):
    low = _cite(make(store, "already almost worthless", confidence=0.15), ("a.py", "gone", GONE_IN))
    put(store, low)
    run_gc(store, now=NOW)
    assert state(store, low.id).metadata.confidence == pytest.approx(0.1)
    put(store, state(store, low.id).evolve(metadata={"citations": (
        Citation("a.py", "gone", symbol="handler", since=GONE_LATER),)}))
    assert run_gc(store, now=NOW).actions == []   # at the floor: nothing to lower
    assert state(store, low.id).metadata.confidence == pytest.approx(0.1)


def test_consulted_facts_are_never_pruned_or_evicted(store, repo_with_commit):
    """Issue 32: gc never prunes a fact people or agents consulted in the pruning window."""
    read_lately = make(store, "old low guess someone still reads", confidence=0.3, created=days_ago(34))
    read_long_ago = make(store, "old low guess last read a month ago", confidence=0.3, created=days_ago(60))
    read_long_ago = read_long_ago.evolve(metadata={"last_accessed": stamp(days_ago(30))})
    put(store, read_lately, read_long_ago)
    store.access.record([read_lately.id])   # now: within the window

    report = run_gc(store, now=NOW + timedelta(minutes=1))
    assert [(a.step, a.fact_id) for a in report.actions] == [("prune", read_long_ago.id)]
    assert "last consulted" in report.actions[0].evidence
    assert state(store, read_lately.id).is_valid
    # Fifteen days later, unread since: no longer consulted in the window.
    later = run_gc(store, now=NOW + timedelta(days=15))
    assert [(a.step, a.fact_id) for a in later.actions] == [("prune", read_lately.id)]

    store.caps[FactScope.PROJECT] = 2
    weak = [make(store, f"weak filler {i}", confidence=0.05) for i in range(3)]
    put(store, *weak)
    store.access.record([w.id for w in weak])
    strong = make(store, "strong but unread", confidence=0.9)
    put(store, strong)
    evicted = [a.fact_id for a in run_gc(store, now=NOW + timedelta(minutes=2)).actions if a.step == "evict"]
    assert evicted == [strong.id]   # the only one nobody read lately; the scope stays over its cap


def test_501st_project_fact_evicts_lowest_unprotected(store):
    protected = [make(store, f"protected {i}", confidence=0.0, tags=(tag,))
                 for i, tag in enumerate(("seed", "community", "synthesized"))]
    constraint = make(store, "a constraint nobody trusts", kind="constraint", confidence=0.0)
    weakest = make(store, "the weakest ordinary fact", confidence=0.05)
    others = [make(store, f"filler number {i}", f"body {i}", confidence=0.6) for i in range(495)]
    put(store, *protected, constraint, weakest, *others)
    assert len(store.list(scope="project")) == 500

    result = store.add_detailed("the five hundred and first fact", "brand new", confidence=0.7)
    assert result.evicted == (weakest.id,)
    assert store.why(weakest.id)["state"] == "evicted"
    for i in range(5):  # any number of adds: the protected ones stay
        store.add(f"later fact {i} zq{i}x", f"body {i} unrelated{i}", confidence=0.9)
    valid = {f.id for f in store.list(scope="project")}
    assert len(valid) == 500
    assert {f.id for f in protected} | {constraint.id} <= valid


def test_gc_enforces_caps_written_past_the_policy(store):
    """A sync merge or import can leave a scope over its cap; gc brings it back."""
    store.caps[FactScope.PROJECT] = 10
    facts = [make(store, f"fact {i}", confidence=0.1 * (i % 9) + 0.1) for i in range(14)]
    put(store, *facts)
    report = run_gc(store, now=NOW)
    evicted = [a.fact_id for a in report.actions if a.step == "evict"]
    assert len(evicted) == 4 and len(store.list(scope="project")) == 10
    lowest = sorted(facts, key=lambda f: (f.metadata.confidence, f.metadata.created_at, f.id))[:4]
    assert set(evicted) == {f.id for f in lowest}


def test_purge_removes_long_retired_facts_from_the_tip_only(store, repo_with_commit):
    old = store.add("HTTP client", "requests with a 10 s timeout")
    new = store.add("HTTP client", "httpx with a 30 s timeout", supersedes=old.id)
    needed = store.add("Logging format", "key=value pairs")
    store.invalidate(needed.id, "replaced by structured logs")
    dependent = make(store, "log parser assumes key=value", depends_on=(needed.id,))
    put(store, dependent)

    assert run_gc(store, now=NOW + timedelta(days=29)).actions == []
    report = run_gc(store, now=NOW + timedelta(days=31))
    assert [(a.step, a.fact_id) for a in report.actions] == [("purge", old.id)]
    ids = ref_fact_ids(repo_with_commit)
    assert old.id not in ids and needed.id in ids and new.id in ids
    # history keeps it
    assert old.id in git(repo_with_commit, "log", "--format=%b", REF)
    assert "requests" in git(repo_with_commit, "show", f"{REF}~1:facts/{old.id[:2]}/{old.id}.json")
    why = store.why(old.id[:8])
    assert why["state"] == "purged" and "superseded" in why["explanation"] and "git show" in why["explanation"]
    with pytest.raises(FactNotFound):
        store.why("abcdabcdabcdabcd")


def test_dry_run_writes_nothing_and_matches_the_real_run(store, repo_with_commit):
    put(store, make(store, "stale", confidence=0.2, created=days_ago(40)),
        *[make(store, f"near duplicate review {i}", "use a context manager to close the file in loader.py",
               kind="review") for i in range(3)])
    tip = git(repo_with_commit, "rev-parse", REF)
    dry = run_gc(store, now=NOW, dry_run=True)
    assert git(repo_with_commit, "rev-parse", REF) == tip
    assert not (store.paths.neo_dir / "upkeep.json").exists()
    real = run_gc(open_store(repo_with_commit), now=NOW)
    assert [(a.step, a.fact_id, a.why) for a in dry.actions] == [(a.step, a.fact_id, a.why) for a in real.actions]
    assert dry.counts()["prune"] == 1 and dry.counts()["synthesize"] == 3


def test_maybe_run_daily(store):
    put(store, make(store, "stale", confidence=0.2, created=days_ago(40)))
    first = maybe_run_daily(store, now=NOW)
    assert first is not None and first.counts()["prune"] == 1
    assert maybe_run_daily(store, now=NOW + timedelta(hours=23)) is None
    assert maybe_run_daily(store, now=NOW + timedelta(hours=25)) is not None
    git(store.paths.workdir, "config", "neo.autoGc", "false")
    assert maybe_run_daily(store, now=NOW + timedelta(days=5)) is None


def test_file_scopes_too(store):
    stale = make(store, "global stale guess", confidence=0.2, created=days_ago(30), scope="global")
    put(store, stale, scope="global")
    report = run_gc(store, now=NOW)
    assert [(a.scope, a.fact_id) for a in report.actions] == [("global", stale.id)]
    assert store.why(stale.id)["state"] == "pruned"


def test_daily_run_skips_while_another_gc_holds_the_lock(store):
    from neo_git.fileio import locked

    put(store, make(store, "stale", confidence=0.2, created=days_ago(40)))
    store.paths.neo_dir.mkdir(parents=True, exist_ok=True)
    with locked(store.paths.neo_dir / "upkeep.lock"):
        assert maybe_run_daily(store, now=NOW) is None
    assert maybe_run_daily(store, now=NOW).counts()["prune"] == 1


def test_corrupt_state_file_starts_afresh(store):
    stale = make(store, "stale", confidence=0.2, created=days_ago(40))
    put(store, stale)
    store.paths.neo_dir.mkdir(parents=True, exist_ok=True)
    (store.paths.neo_dir / "upkeep.json").write_bytes(b"\x00not json")
    report = maybe_run_daily(store, now=NOW)  # an unreadable record: a run is due, no crash
    assert report is not None and report.counts()["prune"] == 1
    assert maybe_run_daily(store, now=NOW + timedelta(hours=1)) is None
