"""The pre-commit hook's view through git's plumbing (health/plumbing.py) measures and judges
exactly what the pygit2 view does (`git neo health --staged --check`), and writes nothing."""
from __future__ import annotations

import os
import sqlite3

import pygit2
import pytest

from neo_git.githooks.guard import check_commit, check_staged
from neo_git.health.measure import snapshot_commit, staged_against_head
from neo_git.health.plumbing import Git, measure_staged, open_staged
from neo_git.identity import open_index
from tests.helpers.git import commit_files, git, stage_files as stage
from tests.helpers.health import MIXED, STEPS

BODY = "\n\ndef helper():\n    return 'a long enough body for git to see a rename'\n"
DEEP = ("def f(x):\n    if x:\n        for i in x:\n            while i:\n                if i:\n"
        "                    with x:\n                        return i\n")


def both_views(repo, monkeypatch):
    """((before, after) through plumbing, (before, after) through pygit2, the two guard results)."""
    monkeypatch.chdir(repo)
    with Git() as plumbing:
        staged = open_staged(plumbing)
        assert staged is not None
        through_plumbing = measure_staged(staged)[:2]
        fast = check_commit().result
    pygit2_repo = pygit2.Repository(str(repo))
    through_pygit2 = staged_against_head(pygit2_repo, open_index(pygit2_repo))
    return through_plumbing, through_pygit2, fast, check_staged(pygit2_repo)


def assert_same(repo, monkeypatch) -> None:
    (before, after), (old_before, old_after), fast, slow = both_views(repo, monkeypatch)
    assert before.to_dict() == old_before.to_dict() and before.graph == old_before.graph
    assert after.to_dict() == old_after.to_dict() and after.graph == old_after.graph
    assert fast.to_dict() == slow.to_dict()


def test_each_staged_change_measures_as_through_pygit2(git_repo, monkeypatch):
    """Python, Go, TypeScript, Rust and Java changes, a config file a resolver reads, an addition
    with a deletion, a file turning binary: staged, never committed before the comparison."""
    commit_files(git_repo, MIXED)
    for step in STEPS:
        stage(git_repo, step)
        assert_same(git_repo, monkeypatch)
        git(git_repo, "commit", "-qm", "step")


@pytest.mark.parametrize("stored", [True, False], ids=["head-stored", "head-derived"])
def test_renames_deletions_links_submodules_and_exclusions(git_repo, monkeypatch, stored):
    """Whether HEAD's state was stored or must be derived from an older one (the last commit
    was made without the worker), the verdict and both snapshots are pygit2's."""
    commit_files(git_repo, {"pkg/__init__.py": "", "pkg/a.py": "from pkg import b\n", "pkg/b.py": "X = 1\n" + BODY,
                            "big.py": "".join(f"def f{i}():\n    return {i}\n" for i in range(40)),
                            "gen/out.py": DEEP, "keep.py": "import pkg.a\n"})
    snapshot_commit(pygit2.Repository(str(git_repo)))                 # a stored state...
    commit_files(git_repo, {"later.py": "Y = 2\n"}, "later")           # ...that is not HEAD's
    if stored:
        snapshot_commit(pygit2.Repository(str(git_repo)))
    git(git_repo, "mv", "pkg/b.py", "pkg/c.py")                          # a rename (a module in a cycle)
    stage(git_repo, {"pkg/c.py": "from pkg import a\nX = 1\n" + BODY, "pkg/a.py": "from pkg import c\n",
                     "keep.py": None, "deep.py": DEEP,                   # a deletion; new nesting
                     ".gitattributes": "gen/** linguist-generated\n",
                     "more.py": "".join(f"def g{i}():\n    return {i}\n" for i in range(40))})
    os.symlink("deep.py", git_repo / "link.py")
    git(git_repo, "add", "link.py")
    sub = git(git_repo, "rev-parse", "HEAD").strip()
    git(git_repo, "update-index", "--add", "--cacheinfo", f"160000,{sub},vendor/sub")   # a submodule
    assert_same(git_repo, monkeypatch)
    (_, after), _, fast, _ = both_views(git_repo, monkeypatch)
    assert fast.renamed == {"pkg/b.py": "pkg/c.py"} and not fast.ok
    assert "link.py" not in after.file_metrics and after.skipped == {"submodule": 1, "symlink": 1}


def test_a_temporary_index_is_what_is_measured(repo_with_commit, monkeypatch):
    """`git commit -a` and `git commit <paths>` hand the hook a temporary index (GIT_INDEX_FILE)."""
    commit_files(repo_with_commit, {"a.py": "X = 1\n"})
    (repo_with_commit / "a.py").write_text(DEEP)
    other = repo_with_commit / ".git" / "other-index"
    monkeypatch.setenv("GIT_INDEX_FILE", str(other))
    git(repo_with_commit, "read-tree", "HEAD")
    git(repo_with_commit, "add", "a.py")
    monkeypatch.chdir(repo_with_commit)
    result = check_commit().result
    assert not result.ok and result.problems[0].startswith("a.py:6: nesting 5")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert check_commit().result.ok                                        # the real index holds no change


def test_the_hook_writes_nothing(repo_with_commit, monkeypatch):
    """No state, no per-file result, no tree object: the post-commit worker stores the commit's."""
    commit_files(repo_with_commit, {"a.py": "X = 1\n"})
    snapshot_commit(pygit2.Repository(str(repo_with_commit)))
    cache = repo_with_commit / ".git" / "neo" / "health.sqlite"

    def rows() -> tuple:
        with sqlite3.connect(cache) as conn:
            return tuple(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                         for table in ("file_results", "snapshot_states"))
    counted = rows()
    objects = git(repo_with_commit, "count-objects", "-v")
    stage(repo_with_commit, {"a.py": "import b\n", "b.py": "import a\n"})
    objects = git(repo_with_commit, "count-objects", "-v")
    monkeypatch.chdir(repo_with_commit)
    result = check_commit().result
    assert not result.ok and "new import cycle" in result.problems[0]
    assert rows() == counted and git(repo_with_commit, "count-objects", "-v") == objects


def test_where_the_view_does_not_apply_pygit2_answers(git_repo, monkeypatch):
    """No commit yet, or a conflicted index: open_staged declines and check_commit uses pygit2."""
    monkeypatch.chdir(git_repo)
    stage(git_repo, {"a.py": DEEP})
    with Git() as plumbing:
        assert open_staged(plumbing) is None
    assert not check_commit().result.ok
    git(git_repo, "commit", "-qm", "first", "--no-verify")
    git(git_repo, "checkout", "-q", "-b", "other")
    commit_files(git_repo, {"a.py": "X = 2\n"}, "other")
    git(git_repo, "checkout", "-q", "main")
    commit_files(git_repo, {"a.py": "X = 3\n"}, "main")
    git(git_repo, "merge", "-q", "other", check=False)
    with Git() as plumbing:
        assert open_staged(plumbing) is None
    assert check_commit().result.ok
