"""A cached authors file whose tip is not a commit id is walked again, never trusted: the authors
come from the history, not from the file, and the file is written anew at the real tip."""
from __future__ import annotations

import json

from neo_git.store import provenance
from tests.helpers.git import git
from tests.helpers.store import populated_store


def test_a_cached_tip_that_is_not_a_commit_id_is_walked_again(repo_with_commit):
    backend = populated_store(repo_with_commit).project_store
    path = provenance._cache_path(backend.common_dir, "refs/neo/facts")
    truth = provenance.fact_origins(backend.repo, backend.common_dir)
    tip = git(repo_with_commit, "rev-parse", "refs/neo/facts").strip()
    data = json.loads(path.read_text())
    assert data["tip"] == tip and truth
    data["tip"] = "not-hex"
    data["origins"] = [["mallory@example.com", commit] for _, commit in data["origins"]]   # what trust would return
    path.write_text(json.dumps(data))
    provenance._MEMO.clear()
    assert provenance.fact_origins(backend.repo, backend.common_dir) == truth
    assert json.loads(path.read_text())["tip"] == tip
