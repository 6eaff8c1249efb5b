"""Concurrent `git neo sync` from three clones against one remote, and random histories on
two clones synced in random order (hypothesis): everyone converges, nothing is lost."""
from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from tests.helpers.store import assert_no_supersession_cycle, distinct_text, random_write
from tests.helpers.sync import Team, fact_ids, tree_of


def test_three_clones_syncing_at_once_all_end_with_every_fact(team):
    clones = {who: team.clone(who) for who in ("alice", "bob", "carol")}
    written = set()
    rng = random.Random(3)
    for who in clones:
        store = team.store(who)
        for _ in range(3):
            written.add(store.add(*distinct_text(rng), kind="pattern").id)
    env = {**os.environ, "NEO_EMBEDDER": "hash"}
    procs = [subprocess.Popen([sys.executable, "-m", "neo_git.cli", "sync"], cwd=path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
             for path in clones.values()]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    for who in ("alice", "bob", "carol", "alice", "bob"):   # late pulls see the last pusher's merge
        team.sync(who)
    assert len({tree_of(path) for path in clones.values()}) == 1
    for who in clones:
        assert fact_ids(team.store(who)) == written


OPS = st.lists(st.tuples(st.sampled_from(["add", "supersede", "confidence", "restore", "sync"]),
                         st.sampled_from(["alice", "bob"]), st.integers(0, 10_000)), min_size=2, max_size=6)


# Each example builds a remote and two clones (~1 s): no shrinking (it replays dozens of
# examples) and no example database in the work tree; a failure prints its whole history.
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          phases=(Phase.explicit, Phase.generate), database=None)
@given(ops=OPS)
def test_random_histories_synced_in_any_order_converge(team, ops):
    with tempfile.TemporaryDirectory() as tmp:
        crew = Team(Path(tmp))
        crew.clone("alice"), crew.clone("bob")
        ever: set[str] = set()
        for op, who, seed in ops:
            _apply(crew, op, who, seed, ever)
        for who in ("alice", "bob", "alice"):
            crew.sync(who)
        assert tree_of(crew.root / "alice") == tree_of(crew.root / "bob")
        facts = {f.id: f for f in crew.store("alice").list(scope="project", include_invalid=True)}
        assert ever <= set(facts)                        # every fact ever added, valid or not
        assert fact_ids(crew.store("bob")) == set(facts)
        assert_no_supersession_cycle(facts)


def _apply(crew: Team, op: str, who: str, seed: int, ever: set[str]) -> None:
    if op == "sync":
        crew.sync(who)
    elif (added := random_write(crew.store(who), op, seed)) is not None:
        ever.add(added)
