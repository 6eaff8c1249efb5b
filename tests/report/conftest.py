"""Fixtures of the report tests: the fully built repository (once per test that asks)."""
from __future__ import annotations

import pytest

from tests.helpers.report import Built, build


@pytest.fixture
def built(git_repo) -> Built:
    """A repository with history, cycles, facts, an outcome and turns (see repo_fixture)."""
    return build(git_repo)
