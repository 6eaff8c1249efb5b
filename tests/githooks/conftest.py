"""Fixtures of the git-hook tests."""
from __future__ import annotations

import pytest

from neo_git.cli import main
from tests.helpers.outcomes import setup_repo


@pytest.fixture
def installed(repo_with_commit, monkeypatch):
    """A repository with src/db.py, one fact and the hooks installed, as the current directory;
    (repo, fact id)."""
    repo = repo_with_commit
    fact_id = setup_repo(repo)
    monkeypatch.chdir(repo)
    assert main(["install"]) == 0
    return repo, fact_id
