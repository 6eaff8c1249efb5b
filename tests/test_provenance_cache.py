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
    lambda d: d["facts"].append("0123456789abcdef"),                    # ids under no origin
    lambda d: d["origins"].__setitem__(0, ["evil@example.com"]),        # a pair without its commit
    lambda d: d.update(format=5),                                       # an older layout
    lambda d: d.update(facts={}),                                       # not a list
    lambda d: d["facts"].__setitem__(0, d["facts"][0] + "xyz"),         # not ids of 16 characters
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


def test_claims_read_per_commit_from_the_cache_equal_claims_fact_by_fact(two_authors, monkeypatch):
    """The cache hands origins over grouped by commit (`Origins`): the trust check then decides
    once per commit. Its claims are those of the fact-by-fact check over the same origins, an
    accepted claim included."""
    from neo_git.store import accepted, trust

    repo, mine, theirs = two_authors
    monkeypatch.setattr(accepted, "is_accepted", lambda decided, fact_id, commit: fact_id == theirs[0])
    monkeypatch.setattr(accepted, "decisions", lambda folder: {"any": "decision"})
    trusted = frozenset({"ada@example.com"})
    provenance._journal_path(_cache(repo)).unlink(missing_ok=True)
    _cache(repo).unlink(missing_ok=True)
    _origins(repo)                          # a walk, written whole
    cold = _origins(repo)                   # read back as the cache keeps it
    assert isinstance(cold, provenance.Origins)
    trust._CLAIMS.clear()
    grouped = trust.ref_claims(pygit2.Repository(str(repo)), repo / ".git", trusted)
    assert set(grouped) == set(theirs[1:]) and set(grouped.values()) == {"bob@example.com"}
    plain = dict(cold.items())
    monkeypatch.setattr(trust, "fact_origins", lambda *args: plain)
    trust._CLAIMS.clear()
    assert trust.ref_claims(pygit2.Repository(str(repo)), repo / ".git", trusted) == grouped


def test_a_journalled_tip_is_read_without_a_fact_by_fact_mapping(two_authors, monkeypatch):
    """After an add, the journal's line lays the new fact's origin over the cache: a cold reader
    gets the same origins as a walk, still grouped by commit (building 50,000 entries for one
    new fact cost a cold add ~0.4 s)."""
    repo, mine, theirs = two_authors
    provenance._journal_path(_cache(repo)).unlink(missing_ok=True)
    _cache(repo).unlink(missing_ok=True)
    _origins(repo)                                      # written whole
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "carol@example.com")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "carol@example.com")
    added = open_store(repo).add("carol's rule", "carol's body").id
    _origins(repo)                                      # the walk of one commit, journalled
    assert provenance._journal_path(_cache(repo)).exists()
    cold = _origins(repo)
    assert isinstance(cold, provenance.Origins) and cold[added][0] == "carol@example.com"
    _cache(repo).unlink()
    provenance._journal_path(_cache(repo)).unlink()
    assert dict(cold.items()) == dict(_origins(repo).items())   # a walk from scratch agrees


def test_the_changed_blobs_of_a_commit_are_those_of_gits_diff(two_authors):
    """The walk compares folders by tree id instead of asking libgit2 for a whole-tree diff: the
    same added and modified blobs, with the same blobs before."""
    repo_path, mine, theirs = two_authors
    store = open_store(repo_path)
    store.add("rule 0 replaced", "body of rule 0, now with more words", kind="decision", supersedes=mine[0])
    store.invalidate(mine[1], "no longer true")
    repo = pygit2.Repository(str(repo_path))
    checked = 0
    for commit in repo.walk(repo.references["refs/neo/facts"].target):
        for parent in commit.parents:
            ours = {(path, str(new), None if old is None else str(old))
                    for path, new, old in provenance._changed_blobs(repo, parent.tree, commit.tree)}
            theirs_ = {(d.new_file.path, str(d.new_file.id),
                        None if d.status == pygit2.enums.DeltaStatus.ADDED else str(d.old_file.id))
                       for d in commit.tree.diff_to_tree(parent.tree, swap=True).deltas
                       if d.status in (pygit2.enums.DeltaStatus.ADDED, pygit2.enums.DeltaStatus.MODIFIED)}
            assert ours == theirs_, commit.message
            checked += len(ours)
    assert checked >= 10
