"""gc while other processes write: the ref store's compare-and-swap retry re-plans the
step against the newer facts, so neither side loses anything."""
from __future__ import annotations

import multiprocessing
import random
import subprocess

from neo_git.facts import FactScope
from neo_git.upkeep import run_gc, runner as upkeep_runner
from tests.helpers.store import PYTHON, distinct_text, open_store, random_word
from tests.helpers.upkeep import NOW, days_ago, make, put

WRITERS = 2
PER_WRITER = 10
CLUSTERS = 12


def _writer(repo: str, seed: int, ready, start, results) -> None:
    from tests.helpers.store import open_store

    store = open_store(repo)
    store.list()  # warm: the race should be between writes, not imports
    store.embedder.embed(["warm up"])
    rng = random.Random(seed)
    texts = [distinct_text(rng) for _ in range(PER_WRITER)]
    ready.put(seed)
    start.wait(60)
    results.put([store.add(subject, body).id for subject, body in texts])


def _clusters(store, rng) -> list[list]:
    groups = []
    for _ in range(CLUSTERS):
        words = " ".join(random_word(rng) for _ in range(6))
        groups.append([make(store, f"Accepted: {words}{suffix}", kind="review")
                       for suffix in ("", " again", " (2)")])
    return groups


def test_gc_racing_writer_processes_loses_nothing(repo_with_commit):
    store = open_store(repo_with_commit)
    store.init()
    rng = random.Random(7)
    groups = _clusters(store, rng)
    stale = [make(store, f"stale {random_word(rng)}", confidence=0.2, created=days_ago(30)) for _ in range(10)]
    put(store, *[f for g in groups for f in g], *stale)

    ctx = multiprocessing.get_context("spawn")
    ready, start, results = ctx.Queue(), ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(repo_with_commit), 100 + i, ready, start, results))
             for i in range(WRITERS)]
    for proc in procs:
        proc.start()
    for _ in procs:
        ready.get(timeout=120)
    start.set()
    report = run_gc(store, now=NOW)
    written = [fid for _ in procs for fid in results.get(timeout=120)]
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0

    fresh = open_store(repo_with_commit)
    assert len(written) == WRITERS * PER_WRITER
    for fact_id in written:  # every writer's fact is there and valid
        assert fresh.get(fact_id).is_valid
    assert report.counts()["synthesize"] == 3 * CLUSTERS and report.counts()["prune"] == len(stale)
    for group in groups:  # every gc action is there too
        successors = {fresh.get(f.id).superseded_by for f in group}
        assert len(successors) == 1 and fresh.get(successors.pop()).is_valid
    assert not any(fresh.get(f.id).is_valid for f in stale)


def test_a_step_that_loses_the_race_is_planned_again(repo_with_commit, monkeypatch):
    store = open_store(repo_with_commit)
    store.init()
    stale = make(store, "stale guess", confidence=0.2, created=days_ago(30))
    put(store, stale)
    calls = []
    real_prune = upkeep_runner.plan_prune

    def racing_prune(facts, scope, now, last_access):
        calls.append(len(facts))
        if len(calls) == 1:  # another process writes between our read and our compare-and-swap
            subprocess.run([PYTHON, "-c", "from neo_git.cli import run; run()", "add", "written meanwhile",
                            "by another process"], cwd=repo_with_commit, check=True, timeout=60)
        return real_prune(facts, scope, now, last_access)

    monkeypatch.setattr(upkeep_runner, "plan_prune", racing_prune)
    run_gc(store, now=NOW, scopes=[FactScope.PROJECT])
    assert calls[0] < calls[1], "the prune step was not planned again against the newer facts"
    fresh = open_store(repo_with_commit)
    assert [f.subject for f in fresh.list(scope="project")] == ["written meanwhile"]
    assert fresh.why(stale.id)["state"] == "pruned"
