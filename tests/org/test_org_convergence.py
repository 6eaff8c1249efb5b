"""Two NEO_HOMEs, two repositories of one org, one bare org remote: whatever order the writes
and syncs come in, both org memories end with the same tree and nothing written is lost."""
from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from neo_git.errors import NeoError
from tests.helpers.org import Org, org_ids, org_tree
from tests.helpers.store import assert_no_supersession_cycle, distinct_text, random_write

OPS = st.lists(st.tuples(st.sampled_from(["add", "supersede", "confidence", "sync"]),
                         st.sampled_from(["alice", "bob"]), st.integers(0, 10_000)), min_size=2, max_size=7)


# Each example builds a remote, two homes and two repositories (~1 s): no shrinking, no example
# database in the work tree; a failure prints its whole history.
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          phases=(Phase.explicit, Phase.generate), database=None)
@given(ops=OPS)
def test_random_interleavings_of_org_writes_and_syncs_converge(org, ops):
    with tempfile.TemporaryDirectory() as tmp:
        crew = Org(Path(tmp))
        crew.connect("alice", trust_remote=True), crew.connect("bob", trust_remote=True)
        ever: set[str] = set()
        for op, who, seed in ops:
            if op == "sync":
                crew.sync(who)
            elif (added := random_write(crew.store(who), op, seed, scope="org")) is not None:
                ever.add(added)
        for who in ("alice", "bob", "alice"):
            crew.sync(who)
        assert org_tree(crew.memory("alice")) == org_tree(crew.memory("bob")) == org_tree(crew.remote)
        facts = {f.id: f for f in crew.store("alice").list(scope="org", include_invalid=True)}
        assert ever <= set(facts)                      # every org fact ever written, valid or not
        assert org_ids(crew.store("bob")) == set(facts)
        assert_no_supersession_cycle(facts)


def test_two_machines_syncing_the_org_memory_at_the_same_time_converge(org):
    org.connect("alice", trust_remote=True), org.connect("bob", trust_remote=True)
    rng = random.Random(5)
    written = set()
    for who in ("alice", "bob"):
        store = org.store(who)
        for _ in range(4):
            written.add(store.add(*distinct_text(rng), kind="pattern", scope="org").id)
    procs = []
    for who in ("alice", "bob"):
        env = {**os.environ, "NEO_HOME": str(org.home(who)), "NEO_EMBEDDER": "hash"}
        procs.append(subprocess.Popen([sys.executable, "-m", "neo_git.cli", "org", "sync"], cwd=org.machine(who),
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      stdin=subprocess.DEVNULL, text=True))
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    for who in ("alice", "bob", "alice"):
        try:
            org.sync(who)
        except NeoError as exc:  # pragma: no cover - a message worth seeing if it ever happens
            raise AssertionError(exc.message) from None
    assert org_tree(org.memory("alice")) == org_tree(org.memory("bob")) == org_tree(org.remote)
    assert org_ids(org.store("alice")) == org_ids(org.store("bob")) == written
