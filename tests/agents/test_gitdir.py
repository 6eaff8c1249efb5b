"""The hook process finds `.git/neo` from git's files: the same git dir and common dir git
itself names (`git rev-parse`), or "unsure" where the environment changes git's discovery."""
from __future__ import annotations

import os
from pathlib import Path

from neo_git.agents.gitdir import UNSURE, GitPlace, find_git_place
from tests.helpers.git import git


def git_says(cwd: Path) -> GitPlace:
    git_dir = git(cwd, "rev-parse", "--absolute-git-dir").strip()
    common = git(cwd, "rev-parse", "--git-common-dir").strip()
    common = common if os.path.isabs(common) else os.path.join(cwd, common)
    return GitPlace(os.path.realpath(git_dir), os.path.realpath(common))


def test_the_walk_agrees_with_git_in_every_kind_of_checkout(repo_with_commit, tmp_path, monkeypatch):
    monkeypatch.delenv("GIT_DIR", raising=False)
    sub = repo_with_commit / "src" / "deep"
    sub.mkdir(parents=True)
    linked = tmp_path / "linked"
    git(repo_with_commit, "worktree", "add", "-q", "-b", "side", str(linked))
    separate = tmp_path / "separate"
    git(tmp_path, "init", "-q", "--separate-git-dir", str(tmp_path / "elsewhere.git"), str(separate))
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    for where in (repo_with_commit, sub, linked, separate, bare):
        assert find_git_place(str(where)) == git_says(where), where
    assert find_git_place(str(linked)).neo_dir == os.path.join(os.path.realpath(repo_with_commit / ".git"), "neo")


def test_outside_a_repository_there_is_none_and_git_variables_make_it_unsure(tmp_path, monkeypatch):
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))   # as in git: stop above tmp_path
    assert find_git_place(str(plain)) == UNSURE                          # git's own rules: ask pygit2
    monkeypatch.delenv("GIT_CEILING_DIRECTORIES")
    if find_git_place(str(tmp_path)) is None:                            # (unless the test runs inside a repository)
        assert find_git_place(str(plain)) is None
    monkeypatch.setenv("GIT_DIR", str(plain))
    assert find_git_place(str(plain)) == UNSURE
