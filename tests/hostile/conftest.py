"""A repository whose facts ref holds two good facts, entered from the work tree."""
from __future__ import annotations

import pytest

from tests.helpers.git import git


@pytest.fixture
def team_repo(repo_with_commit, monkeypatch):
    """(repo, [good fact ids]): the cwd is the repository; the facts were added through git-neo."""
    from neo_git.store import FactStore

    monkeypatch.chdir(repo_with_commit)
    store = FactStore.open(repo_with_commit, embedder="hash")
    store.init()
    first = store.add("HTTP client", "All outbound HTTP goes through httpx.", kind="decision")
    second = store.add("Database migrations", "Migrations run with alembic, never by hand.", kind="constraint")
    return repo_with_commit, [first.id, second.id]


@pytest.fixture
def good_blobs(team_repo):
    """The good facts' blobs as git stores them (to prove they never change)."""
    repo, ids = team_repo
    return {i: git(repo, "show", f"refs/neo/facts:facts/{i[:2]}/{i}.json") for i in ids}
