"""The parse cache (`.git/neo/cache/facts-*.bin`) gives a cold process exactly the facts a
full read of the ref gives, and a damaged cache is ignored, never trusted."""
from __future__ import annotations

import random

from neo_git.facts import Fact, fact_from_json
from neo_git.store.parse_cache import decode, encode, parse_cache_path
from neo_git.store.refstore import RefStore
from tests.conftest import git
from tests.store_helpers import distinct_text, open_store, ref_fact_ids, show_blob


def _populated(repo):
    store = open_store(repo)
    rng = random.Random(1)
    base = store.add("HTTP client", "We use httpx with a 10 s timeout.", kind="decision", tags=["seed"])
    store.add("Retry", "tenacity around httpx, three attempts.", depends_on=[base.id], source_file="a.py")
    store.add("HTTP client", "All outbound HTTP goes through httpx, timeout 30 s.", kind="decision")
    for _ in range(40):  # enough subtrees for the cache to be written
        store.add(*distinct_text(rng), confidence=rng.random())
    return store


def _cold_facts(store) -> dict[str, Fact]:
    backend = store.project_store
    return RefStore(backend.repo, backend.common_dir, backend.signature).load().facts


def test_a_cold_read_from_the_cache_equals_parsing_every_blob(repo_with_commit):
    store = _populated(repo_with_commit)
    path = parse_cache_path(store.paths.common_dir, "refs/neo/facts")
    assert path.exists()
    cold = _cold_facts(store)
    parsed = {i: fact_from_json(show_blob(repo_with_commit, i)) for i in ref_fact_ids(repo_with_commit)}
    assert cold == parsed
    for fact in cold.values():  # real objects: frozen, hashable, with working properties
        assert fact.metadata == parsed[fact.id].metadata and fact.tokens == parsed[fact.id].tokens
        assert hash(fact.depends_on) == hash(parsed[fact.id].depends_on)
    assert any(not f.is_valid and f.metadata.invalidation["reason"] == "superseded" for f in cold.values())


def test_a_damaged_cache_entry_is_ignored(repo_with_commit):
    store = _populated(repo_with_commit)
    path = parse_cache_path(store.paths.common_dir, "refs/neo/facts")
    seal, _, body = path.read_bytes().partition(b"\n")  # the first line seals the data below it
    data = decode(body)
    entries = next(iter(data["subtrees"].values()))[1]
    entries[0][2].pop("subject")        # a fact without a field
    entries[0][2]["surprise"] = "extra"
    path.write_bytes(seal + b"\n" + encode(data))
    cold = _cold_facts(store)
    assert cold == store.project_store.load().facts
    assert len(cold) == len(ref_fact_ids(repo_with_commit)) == len(git(
        repo_with_commit, "ls-tree", "-r", "--name-only", "refs/neo/facts").split()) - 1  # meta.json


def test_each_python_keeps_its_own_cache_and_the_json_of_earlier_versions_goes(repo_with_commit):
    """marshal's format may change between Python versions: a hook run by another Python (say,
    pre-commit's environment) must not rewrite, and so slow down, the cache of this one."""
    import sys

    store = open_store(repo_with_commit)
    path = parse_cache_path(store.paths.common_dir, "refs/neo/facts")
    assert sys.implementation.cache_tag in path.name
    legacy = path.with_name("facts-refs_neo_facts.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    legacy.write_text('{"format": "3:old"}')
    _populated(repo_with_commit)
    path.unlink()
    assert _cold_facts(store)  # a cold read of the whole ref writes the cache again
    assert path.exists() and not legacy.exists()
