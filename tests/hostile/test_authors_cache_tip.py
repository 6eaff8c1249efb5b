"""A cached authors file whose tip is not a commit id is walked again, never trusted."""
import json
from neo_git.store import provenance
from tests.test_parse_cache import _populated


def test_bad_tip(repo_with_commit):
    store = _populated(repo_with_commit)
    backend = store.project_store
    path = provenance._cache_path(backend.common_dir, "refs/neo/facts")
    provenance.fact_origins(backend.repo, backend.common_dir)
    data = json.loads(path.read_text())
    print(sorted(data))
    data["tip"] = "not-hex"
    path.write_text(json.dumps(data))
    provenance._MEMO.clear()
    provenance.fact_origins(backend.repo, backend.common_dir)
