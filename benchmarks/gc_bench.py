"""Upkeep speed: `run_gc` on a 5,000-fact project store.

    .venv/bin/python benchmarks/gc_bench.py [--facts N] [--repeat R]

Under a temporary folder (own HOME, NEO_HOME, git config; the hash embedder), a
store of N facts (default 5,000) is written in one bulk commit: 480 valid facts
(patterns, decisions, ~10% review facts of which 20 clusters of 3 near-identical
spellings, some stale), and the rest retired facts (superseded or evicted), half
of them retired more than 30 days ago. Timed, median of R fresh copies:

* first gc: prune, synthesize 20 archetypes, purge ~2,260 facts (several commits);
* second gc: nothing left to do (the steady-state daily cost);
* maybe_run_daily when not due (the cost every hook pays);
* baseline, same run: loading the store once in a fresh FactStore (`list(include_invalid)`).
"""
from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import isolated_home, machine_info, median, ms, ratio, table

WORDS = ("request response handler client server retry timeout backoff cache layer docker build image deploy "
         "release branch merge review test fixture mock database migration schema index query transaction lock "
         "queue worker job scheduler cron logging metrics tracing alert error exception config").split()


def _text(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) + str(rng.randrange(10_000)) for _ in range(n))


def build(repo: Path, count: int, now) -> None:
    """A repository whose project store holds *count* facts in one commit."""
    from neo_git.facts import Fact, FactKind, FactMetadata, FactScope, new_fact_id
    from neo_git.store import Change, FactStore
    from neo_git.upkeep.rules import stamp

    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "root"], check=True)
    store = FactStore.open(repo, embedder="hash")
    store.init()
    rng = random.Random(5)
    facts = []

    def fact(kind="pattern", subject=None, valid=True, age=1, retired_age=None, confidence=0.6, body=None):
        meta = {"created_at": stamp(now - timedelta(days=age)), "confidence": confidence}
        if not valid:
            meta["invalidation"] = {"reason": "evicted", "at": stamp(now - timedelta(days=retired_age)),
                                    "detail": "benchmark"}
        f = Fact(id=new_fact_id(), subject=subject or _text(rng, 4), body=body or _text(rng), kind=FactKind(kind),
                 scope=FactScope.PROJECT, project_id=store.project_id, is_valid=valid,
                 metadata=FactMetadata(**meta))
        facts.append(f)

    for _c in range(20):
        base, body = "Accepted: " + _text(rng, 8), _text(rng)
        for suffix in ("", " again", " (2)"):
            fact("review", subject=base + suffix, body=body)
    for _i in range(480 - 60):
        fact(rng.choice(["pattern", "decision", "failure", "review"]), age=rng.randrange(60),
             confidence=rng.choice([0.2, 0.5, 0.7]))
    for _i in range(count - len(facts)):
        retired = rng.randrange(60)
        fact(valid=False, age=retired + 5, retired_age=retired)
    store.transact("project", lambda _f: Change(facts=tuple(facts), message="bench: plant"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="neo-gc-bench-"))
    home = tmp / "home"
    isolated_home(home)
    from neo_git.store import FactStore
    from neo_git.upkeep import maybe_run_daily, run_gc
    from neo_git.upkeep.rules import utc_now

    now = utc_now()
    rows = {"load (baseline)": [], "first gc": [], "second gc": [], "maybe_run_daily, not due": []}
    counts = None
    try:
        for r in range(args.repeat):
            repo = tmp / f"repo{r}"
            build(repo, args.facts, now)
            started = time.perf_counter()
            FactStore.open(repo, embedder="hash").list(include_invalid=True)
            rows["load (baseline)"].append(time.perf_counter() - started)
            first = run_gc(FactStore.open(repo, embedder="hash"), now=now)
            counts = first.counts()
            rows["first gc"].append(first.seconds)
            second = run_gc(FactStore.open(repo, embedder="hash"), now=now)
            assert not second.actions, second.actions[:3]
            rows["second gc"].append(second.seconds)
            store = FactStore.open(repo, embedder="hash")
            started = time.perf_counter()
            assert maybe_run_daily(store, now=now) is None
            rows["maybe_run_daily, not due"].append(time.perf_counter() - started)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base = median(rows["load (baseline)"])
    print(machine_info())
    print(f"{args.facts:,} facts, median of {args.repeat} fresh stores; first gc did {counts}")
    print(table(["", "median", "vs load"], [[name, ms(median(v)), ratio(median(v), base)] for name, v in rows.items()]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
