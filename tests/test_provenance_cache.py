"""The authors cache (`.git/neo/cache/authors-*.json`): who gave each fact its text, kept per tip.
A cold process reads what a walk of the ref's history would find; a broken or edited cache
is walked again, never believed."""
from __future__ import annotations

import json

import pygit2
import pytest

from neo_git.store import provenance
from tests.store_helpers import open_store


@pytest.fixture
def two_authors(repo_with_commit, monkeypatch):
    store = open_store(repo_with_commit)
    mine = [store.add(f"rule {n}", f"body of rule {n}", kind="decision").id for n in range(5)]
    for name in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(name, "bob@example.com")
    theirs = [open_store(repo_with_commit).add(f"bob's rule {n}", f"bob's body {n}").id for n in range(3)]
    return repo_with_commit, mine, theirs


def _origins(repo_path):
    provenance._MEMO.clear()   # a cold process
    repo = pygit2.Repository(str(repo_path))
    return provenance.fact_origins(repo, repo_path / ".git")


def _cache(repo_path):
    return provenance._cache_path(repo_path / ".git", "refs/neo/facts")


def test_a_cold_read_of_the_cache_equals_walking_the_history(two_authors):
    repo, mine, theirs = two_authors
    walked = _origins(repo)
    data = json.loads(_cache(repo).read_text())
    assert data["format"] == provenance.CACHE_FORMAT and len(data["origins"]) <= len(walked)
    assert _origins(repo) == walked                       # now from the file
    assert {walked[i][0] for i in mine} != {"bob@example.com"} and {walked[i][0] for i in theirs} == {"bob@example.com"}
    assert len({walked[i][1] for i in theirs}) == 3       # each fact its own commit


@pytest.mark.parametrize("damage", [
    lambda d: d["facts"].update({k: 10**6 for k in d["facts"]}),        # an index past the list
    lambda d: d["origins"].__setitem__(0, ["evil@example.com"]),        # a pair without its commit
    lambda d: d.update(format=2),                                       # an older layout
    lambda d: d.update(facts=[]),                                       # not a mapping
])
def test_a_broken_cache_is_walked_again(two_authors, damage):
    repo, mine, theirs = two_authors
    walked = _origins(repo)
    data = json.loads(_cache(repo).read_text())
    damage(data)
    _cache(repo).write_text(json.dumps(data))
    assert _origins(repo) == walked
