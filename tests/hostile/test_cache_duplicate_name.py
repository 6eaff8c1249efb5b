"""A folder listing one name twice (a hand-made tree; git accepts it without fsck)."""
from __future__ import annotations
import json
import shutil
import pygit2
from neo_git.store.refstore import RefStore
from tests.test_parse_cache import _populated, _cold_facts
from tests.store_helpers import ref_fact_ids, show_blob


def _dup(repo, fid, new_blob_bytes):
    g = pygit2.Repository(str(repo))
    ref = g.references["refs/neo/facts"]
    tip = g[ref.target]
    folder = tip.tree["facts"].id
    sub = g[g[folder][fid[:2]].id]
    new = g.create_blob(new_blob_bytes)
    body = b""
    for e in sub:
        body += b"100644 " + e.name.encode() + b"\0" + e.id.raw
        if e.name == f"{fid}.json":
            body += b"100644 " + e.name.encode() + b"\0" + new.raw   # the same name again, a new blob
    sub_id = g.odb.write(pygit2.enums.ObjectType.TREE, body)
    tb = g.TreeBuilder(g[folder]); tb.insert(fid[:2], sub_id, pygit2.GIT_FILEMODE_TREE)
    top = g.TreeBuilder(tip.tree); top.insert("facts", tb.write(), pygit2.GIT_FILEMODE_TREE)
    who = pygit2.Signature("Teammate", "mate@example.com")
    ref.set_target(g.create_commit(None, who, who, "dup", top.write(), [tip.id]))


def test_duplicate_name(repo_with_commit):
    store = _populated(repo_with_commit)
    _cold_facts(store)
    fid = sorted(ref_fact_ids(repo_with_commit))[0]
    d = json.loads(show_blob(repo_with_commit, fid)); d["body"] = "NEW VERSION"
    _dup(repo_with_commit, fid, json.dumps(d).encode())
    backend = store.project_store
    cold = RefStore(backend.repo, backend.common_dir, backend.signature)
    table = cold.table()[0]
    subs = cold._subtrees_at(cold.tip())
    print("spliced rows:", len(subs[fid[:2]]), subs[fid[:2]].fact_ids().count(fid))
    if table is not None:
        bodies = [table[i].body for i in range(len(table)) if table[i].id == fid]
        print("cold table bodies for fid:", bodies)
    again = RefStore(backend.repo, backend.common_dir, backend.signature)
    t3 = again.table()[0]
    print("next cold reader (cache+journal) bodies:", [t3[i].body for i in range(len(t3)) if t3[i].id == fid])
    print("load() body:", again.load().facts[fid].body)
    shutil.rmtree(backend.common_dir / "neo" / "cache")
    fresh = RefStore(backend.repo, backend.common_dir, backend.signature)
    fs = fresh._subtrees_at(fresh.tip())
    print("fresh rows:", len(fs[fid[:2]]), fs[fid[:2]].fact_ids().count(fid))
    t2 = fresh.table()[0]
    print("fresh table bodies:", [t2[i].body for i in range(len(t2)) if t2[i].id == fid])
