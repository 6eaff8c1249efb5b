"""The fixture the upkeep tests share: an initialised store on the hash embedder."""
from __future__ import annotations

import pytest

from tests.helpers.store import open_store


@pytest.fixture
def store(repo_with_commit):
    """A FactStore with refs/neo/facts set up, in a repository with one commit."""
    store = open_store(repo_with_commit)
    store.init()
    return store
