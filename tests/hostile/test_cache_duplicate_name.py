"""A folder listing one name twice (a hand-made tree; git accepts it without fsck): every reader —
the process that cached the folder, the next cold reader from cache and journal, a reader with no
cache at all — sees one fact for the name, the same one."""
from __future__ import annotations

import json
import shutil

import pygit2

from neo_git.store.refstore import RefStore
from tests.helpers.store import cold_facts, populated_store, ref_fact_ids, show_blob


def _duplicate(repo, fact_id, new_blob_bytes):
    """Commit a tree whose folder lists `<fact_id>.json` twice: its blob, then *new_blob_bytes*."""
    g = pygit2.Repository(str(repo))
    ref = g.references["refs/neo/facts"]
    tip = g[ref.target]
    folder = tip.tree["facts"].id
    sub = g[g[folder][fact_id[:2]].id]
    new = g.create_blob(new_blob_bytes)
    body = b""
    for e in sub:
        body += b"100644 " + e.name.encode() + b"\0" + e.id.raw
        if e.name == f"{fact_id}.json":
            body += b"100644 " + e.name.encode() + b"\0" + new.raw   # the same name again, a new blob
    sub_id = g.odb.write(pygit2.enums.ObjectType.TREE, body)
    tb = g.TreeBuilder(g[folder])
    tb.insert(fact_id[:2], sub_id, pygit2.GIT_FILEMODE_TREE)
    top = g.TreeBuilder(tip.tree)
    top.insert("facts", tb.write(), pygit2.GIT_FILEMODE_TREE)
    who = pygit2.Signature("Teammate", "mate@example.com")
    ref.set_target(g.create_commit(None, who, who, "dup", top.write(), [tip.id]))


def _bodies(table, fact_id):
    return [table[i].body for i in range(len(table)) if table[i].id == fact_id]


def test_a_name_listed_twice_is_one_fact_and_every_reader_sees_the_same_one(repo_with_commit):
    store = populated_store(repo_with_commit)
    cold_facts(store)   # the folder is in the parse cache before the teammate's tree arrives
    count = len(ref_fact_ids(repo_with_commit))
    fact_id = sorted(ref_fact_ids(repo_with_commit))[0]
    changed = json.loads(show_blob(repo_with_commit, fact_id))
    changed["body"] = "NEW VERSION"
    _duplicate(repo_with_commit, fact_id, json.dumps(changed).encode())
    backend = store.project_store

    cold = RefStore(backend.repo, backend.common_dir, backend.signature)
    spliced = cold._subtrees_at(cold.tip())[fact_id[:2]]
    assert spliced.fact_ids().count(fact_id) == 1
    assert _bodies(cold.table()[0], fact_id) == ["NEW VERSION"]

    again = RefStore(backend.repo, backend.common_dir, backend.signature)   # from the cache and its journal
    assert _bodies(again.table()[0], fact_id) == ["NEW VERSION"]
    loaded = again.load().facts
    assert loaded[fact_id].body == "NEW VERSION" and len(loaded) == count

    shutil.rmtree(backend.common_dir / "neo" / "cache")
    fresh = RefStore(backend.repo, backend.common_dir, backend.signature)   # no cache: every blob parsed
    assert fresh._subtrees_at(fresh.tip())[fact_id[:2]].fact_ids().count(fact_id) == 1
    assert _bodies(fresh.table()[0], fact_id) == ["NEW VERSION"]
    assert fresh.load().facts == loaded
