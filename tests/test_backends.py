"""The scope backends keep one contract (`store.base.Backend`): the in-memory twin, the
facts file and the ref answer the same transactions with the same facts."""
from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from neo_git.errors import NeoError
from neo_git.facts import Fact, FactScope
from neo_git.store import Change, FactStore
from neo_git.store.filestore import FileStore
from neo_git.store.memory import MemoryBackend
from tests.helpers.git import git
from tests.helpers.store import distinct_text, memory_store, open_store, ref_fact_ids


def _facts(store, n: int, seed: int) -> list[Fact]:
    """*n* valid project facts with distinct texts (not written anywhere)."""
    rng = random.Random(seed)
    facts = []
    for i in range(n):
        subject, body = distinct_text(rng)
        facts.append(Fact.from_dict({"id": f"{seed:04x}{i:012x}", "subject": subject, "body": body,
                                     "kind": "pattern", "scope": "project", "project_id": store.project_id}))
    return facts


@pytest.fixture(params=["memory", "file", "ref"])
def backend(request, repo_with_commit, tmp_path):
    """(backend, a store whose project facts it can hold) for each kind of backend."""
    store = open_store(repo_with_commit)
    if request.param == "memory":
        return MemoryBackend(), store
    if request.param == "file":
        return FileStore(tmp_path / "facts.json"), store
    return store.project_store, store


def test_every_backend_puts_replaces_and_removes(backend):
    backend, store = backend
    a, b, c = _facts(store, 3, seed=1)
    assert backend.load().facts == {}
    assert backend.transact(lambda facts: None) is None
    backend.transact(lambda facts: Change((a, b, c), "add three"))
    assert set(backend.load().facts) == {a.id, b.id, c.id}
    changed = b.evolve(needs_review=True)
    backend.transact(lambda facts: Change((changed,), "flag b", removed=(a.id,)))
    loaded = backend.load().facts
    assert set(loaded) == {b.id, c.id} and loaded[b.id].needs_review is True
    assert loaded[c.id] == c


def test_a_failing_plan_changes_nothing_in_any_backend(backend):
    backend, store = backend
    (a,) = _facts(store, 1, seed=2)
    backend.transact(lambda facts: Change((a,), "add"))

    def plan(facts):
        assert a.id in facts and facts[a.id] == a
        raise NeoError("refused")

    with pytest.raises(NeoError):
        backend.transact(plan)
    assert backend.load().facts == {a.id: a}


def test_the_plan_sees_a_read_only_mapping(backend):
    backend, store = backend
    (a,) = _facts(store, 1, seed=3)
    backend.transact(lambda facts: Change((a,), "add"))

    def plan(facts):
        with pytest.raises(TypeError):
            facts[a.id] = None  # type: ignore[index]
        return None

    backend.transact(plan)


def test_memory_backend_ignores_parents_and_logs_what_it_wrote():
    backend = MemoryBackend()
    store = memory_store()
    (a,) = _facts(store, 1, seed=4)
    assert backend.transact(lambda facts: Change(parents=("0" * 40,))) is not None
    assert backend.log == [] and backend.load().facts == {}
    backend.transact(lambda facts: Change((a,), "add a", details=("one detail",)))
    assert backend.messages == ["add a\n\none detail"]


def test_in_memory_store_touches_no_disk_and_needs_no_repository(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # not a repository
    store = FactStore.in_memory(org_id="acme", project_id="ab" * 8)
    fact = store.add("HTTP client", "All outbound HTTP goes through httpx.", kind="decision")
    assert fact.org_id == "acme" and fact.project_id == "ab" * 8
    assert [f.id for f in store.recall("outbound http", k=1).valid_facts] == [fact.id]
    assert store.get(fact.id).metadata.access_count == 1
    assert list(tmp_path.iterdir()) == [] and not Path(os.environ["NEO_HOME"]).exists()
    with pytest.raises(NeoError):
        store.init()


def test_transact_is_the_same_on_memory_and_on_the_ref(repo_with_commit):
    """The public write path gives the same facts on both; the ref also keeps a merge parent."""
    on_ref, in_memory = open_store(repo_with_commit), memory_store()
    facts = _facts(on_ref, 2, seed=5)
    other = git(repo_with_commit, "rev-parse", "HEAD").strip()
    for store in (on_ref, in_memory):
        store.transact("project", lambda current: Change(tuple(facts), "two"))
        store.transact("project", lambda current: Change((), "merge", removed=(facts[0].id,), parents=(other,)))
        assert [f.id for f in store.list(scope="project")] == [facts[1].id]
        with pytest.raises(NeoError):  # parents are for the ref, and only there
            store.transact("global", lambda current: Change(parents=(other,)))
    assert ref_fact_ids(repo_with_commit) == {facts[1].id}
    parents = git(repo_with_commit, "log", "-1", "--format=%P", "refs/neo/facts").split()
    assert len(parents) == 2 and parents[1] == other
    assert in_memory.backends[FactScope.PROJECT].messages[0] == "merge"
