"""The authors cache (`.git/neo/cache/authors-*.json`): who gave each fact its text, kept per tip.
A cold process reads what a walk of the ref's history would find; a broken or edited cache
is walked again, never believed."""
from __future__ import annotations

import json

import pygit2
import pytest

from neo_git.store import provenance
from tests.helpers.store import open_store


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


def _walk(repo_path):
    """The origins as a walk of the whole history finds them (no cache, no journal)."""
    provenance._MEMO.clear()
    for path in (_cache(repo_path), provenance._journal_path(_cache(repo_path))):
        path.unlink(missing_ok=True)
    return _origins(repo_path)


def test_a_new_tip_appends_to_the_journal_and_a_cold_read_replays_it(two_authors, tmp_path):
    """Issue 35: every add rewrote the origins of every fact (~0.3 s of JSON at 50,000)."""
    repo, _mine, _theirs = two_authors
    _origins(repo)
    base = _cache(repo).read_bytes()
    store = open_store(repo)
    added = [store.add(f"later rule {n}", f"later body {n}").id for n in range(3)]
    got = _origins(repo)                      # walks the new commits from the cached tip
    assert _cache(repo).read_bytes() == base  # the cache was not rewritten...
    journal = provenance._journal_path(_cache(repo))
    assert journal.read_bytes().count(b"\n") == 1 and all(i in got for i in added)   # ...one line recorded it
    assert _origins(repo) == got              # a cold read: the cache plus the journal
    twin = tmp_path / "twin"
    import shutil

    shutil.copytree(repo, twin, symlinks=True)
    assert _walk(twin) == got                 # what a walk of the history finds


def test_a_torn_journal_line_ends_the_replay_and_the_rest_is_walked(two_authors):
    repo, _mine, _theirs = two_authors
    _origins(repo)
    store = open_store(repo)
    store.add("later rule", "later body")
    _origins(repo)
    store.add("another rule", "another body")
    expected = _origins(repo)
    journal = provenance._journal_path(_cache(repo))
    lines = journal.read_bytes().splitlines()
    assert len(lines) == 2
    journal.write_bytes(lines[0] + b"\n" + lines[1][:40])    # the second line torn
    assert _origins(repo) == expected


def test_the_journal_is_folded_into_the_cache_once_it_grows(two_authors, monkeypatch):
    repo, _mine, _theirs = two_authors
    monkeypatch.setattr(provenance, "JOURNAL_MIN_BYTES", 0)
    _origins(repo)
    store = open_store(repo)
    journal = provenance._journal_path(_cache(repo))
    for n in range(6):
        store.add(f"rule number {n} again", f"text {n}")
        got = _origins(repo)
    assert not journal.exists() or journal.stat().st_size <= _cache(repo).stat().st_size
    assert _origins(repo) == got
