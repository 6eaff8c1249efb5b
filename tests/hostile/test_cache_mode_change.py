"""A blob whose mode changes (same blob id) inside a folder the parse cache holds."""
from __future__ import annotations

import pygit2

from neo_git.store.refstore import RefStore
from tests.helpers.store import cold_facts, populated_store, ref_fact_ids


def _chmod(repo, path, mode):
    git_repo = pygit2.Repository(str(repo))
    ref = git_repo.references["refs/neo/facts"]
    tip = git_repo[ref.target]
    index = pygit2.Index()
    index.read_tree(tip.tree)
    entry = index[path]
    index.add(pygit2.IndexEntry(path, entry.id, mode))
    who = pygit2.Signature("Teammate", "mate@example.com")
    ref.set_target(git_repo.create_commit(None, who, who, "chmod", index.write_tree(git_repo), [tip.id]))


def _fresh(store):
    """What a reader without any cache sees."""
    import shutil
    backend = store.project_store
    shutil.rmtree(backend.common_dir / "neo" / "cache", ignore_errors=True)
    return RefStore(backend.repo, backend.common_dir, backend.signature).load()


def test_exec_bit_set_then_cleared(repo_with_commit):
    store = populated_store(repo_with_commit)
    cold_facts(store)                       # the cache is written
    fid = sorted(ref_fact_ids(repo_with_commit))[0]
    path = f"facts/{fid[:2]}/{fid}.json"
    _chmod(repo_with_commit, path, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE)
    backend = store.project_store
    cold = RefStore(backend.repo, backend.common_dir, backend.signature).load()
    fresh = _fresh(store)
    print("exec: cached-reader has fact:", fid in cold.facts, " fresh has fact:", fid in fresh.facts)
    print("fresh warnings:", [w for w in fresh.warnings if fid in w])
    print("cold warnings:", [w for w in cold.warnings if fid in w])
    # now back to 100644: the fresh (no-cache) reader sees it, the cache-holding one?
    _chmod(repo_with_commit, path, pygit2.GIT_FILEMODE_BLOB)
    cold2 = RefStore(backend.repo, backend.common_dir, backend.signature).load()
    cold3 = RefStore(backend.repo, backend.common_dir, backend.signature).load()
    print("back to 644: cached reader has fact:", fid in cold2.facts, fid in cold3.facts)
    print("cold2 warnings:", [w for w in cold2.warnings if fid in w])
    from neo_git.store.parse_cache import parse_cache_path
    from neo_git.store.parse_journal import untrusted_entries
    print("doctor:", untrusted_entries(parse_cache_path(backend.common_dir, "refs/neo/facts"), "refs/neo/facts"))
    fresh2 = _fresh(store)
    print("fresh has fact:", fid in fresh2.facts)
    assert cold.facts == fresh.facts
    assert cold2.facts == fresh2.facts
