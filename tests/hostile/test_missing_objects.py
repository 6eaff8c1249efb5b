"""Case 3: objects the repository lacks are fetched where git can, else a clear fatal."""
from __future__ import annotations

from tests.helpers.git import git
from tests.helpers.plumbing import mktree, neo, push_tree


def _missing(repo, rev="refs/neo/facts"):
    return [line[1:] for line in git(repo, "rev-list", "--objects", "--missing=print", rev).splitlines()
            if line.startswith("?")]


def test_a_partial_clone_fetches_fact_blobs_on_demand(team_repo, tmp_path, capsys, monkeypatch):
    origin, ids = team_repo
    git(origin, "config", "uploadpack.allowFilter", "true")
    git(origin, "config", "uploadpack.allowAnySHA1InWant", "true")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{origin}", str(clone))
    git(clone, "fetch", "-q", "origin", "refs/neo/facts:refs/neo/facts")
    assert _missing(clone), "the filter left the fact blobs on the remote"
    monkeypatch.chdir(clone)
    result = neo(capsys, "list")
    assert result.code == 0, result.err
    assert all(fact_id in result.out for fact_id in ids)
    assert neo(capsys, "show", ids[0]).code == 0


def test_a_missing_tree_is_a_fatal_naming_it(team_repo, capsys):
    repo, _ = team_repo
    absent = "1234567890abcdef1234567890abcdef12345678"
    facts = mktree(repo, [("040000", "tree", absent, "ab")], missing_ok=True)
    meta = git(repo, "rev-parse", "refs/neo/facts:meta.json").strip()
    root = mktree(repo, [("040000", "tree", facts, "facts"), ("100644", "blob", meta, "meta.json")])
    push_tree(repo, root)
    for argv in (["list"], ["add", "Another fact", "body"], ["recall", "anything"]):
        result = neo(capsys, *argv)
        assert result.code == 1, (argv, result.err)
        assert absent in result.err and "fatal:" in result.err and "hint:" in result.err


def test_a_missing_blob_without_a_promisor_is_a_fatal_naming_it(team_repo, capsys):
    repo, _ = team_repo
    absent = "abcdefabcdefabcdefabcdefabcdefabcdefabcd"
    sub = mktree(repo, [("100644", "blob", absent, "ab00000000000000.json")], missing_ok=True)
    facts = git(repo, "rev-parse", "refs/neo/facts:facts").strip()
    listing = git(repo, "ls-tree", facts).splitlines()
    rows = [tuple(line.split(None, 3)[:3]) + (line.split("\t", 1)[1],) for line in listing]
    new_facts = mktree(repo, [r for r in rows if r[3] != "ab"] + [("040000", "tree", sub, "ab")])
    meta = git(repo, "rev-parse", "refs/neo/facts:meta.json").strip()
    push_tree(repo, mktree(repo, [("040000", "tree", new_facts, "facts"), ("100644", "blob", meta, "meta.json")]))
    result = neo(capsys, "list")
    assert result.code == 1, result.err
    assert absent in result.err and "facts/ab/ab00000000000000.json" in result.err and "hint:" in result.err
