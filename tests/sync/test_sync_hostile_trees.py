"""Only fact blobs cross a sync: junk at the root, links, executables and submodules where a fact
or a folder belongs are dropped with a warning naming the commit, never taken, never a crash.
The hostile remote is a bare repository built in the test with git plumbing."""
from __future__ import annotations

import json

from tests.helpers.git import git
from tests.helpers.plumbing import hash_object, mktree
from tests.helpers.sync import REF, fact_ids, fact_json

GOOD = "abcdef0123456789"
LINKED = "1234567890abcdef"
EXEC = "fedcba9876543210"
MINE = "5a5a5a5a5a5a5a5a"   # a folder of its own: none of the above, nor the submodule's 99


def _tree(repo, rows_by_folder: dict) -> str:
    """A tree from {name: (mode, content)} where content is bytes (a blob), a dict (a folder)
    or a 40-hex id (a gitlink's commit)."""
    rows = []
    for name, (mode, content) in rows_by_folder.items():
        if isinstance(content, dict):
            rows.append((mode, "tree", _tree(repo, content), name))
        elif mode == "160000":
            rows.append((mode, "commit", content, name))
        else:
            rows.append((mode, "blob", hash_object(repo, content), name))
    return mktree(repo, rows, missing_ok=True)


def _push_hostile(team, folders: dict, message: str = "hostile tree") -> str:
    """A teammate's facts commit whose tree is *folders*, on top of the remote's tip."""
    work = team.clone("carol")
    git(work, "fetch", "-q", "origin", f"+{REF}:{REF}")
    tree = _tree(work, folders)
    parent = git(work, "rev-parse", REF).strip()
    commit = git(work, "commit-tree", tree, "-p", parent, "-m", message).strip()
    git(work, "update-ref", REF, commit)
    git(work, "push", "-q", "origin", REF)
    return commit


def _meta() -> bytes:
    return (json.dumps({"schema_version": 1, "project_id": None}, indent=2) + "\n").encode()


def test_junk_links_executables_and_gitlinks_are_dropped_with_the_commit_named(team, cli, monkeypatch):
    import neo_git.store.writing as writing

    alice = team.clone("alice")
    # A random id could share a folder with the planted ones (the submodule's, say): pinned.
    monkeypatch.setattr(writing, "new_fact_id", lambda: MINE)
    mine = team.store("alice").add("local rule", "mine", kind="decision")
    assert mine.id == MINE
    team.sync("alice")
    own = git(alice, "ls-tree", "-r", REF).splitlines()
    folders = {"meta.json": ("100644", _meta()),
               "junk.bin": ("100644", b"\0" * (1 << 20)),
               "run.sh": ("100755", b"#!/bin/sh\nrm -rf /\n"),
               "facts": ("040000", {
                   mine.id[:2]: ("040000", {f"{mine.id}.json": ("100644", json.dumps(
                       team.store("alice").get(mine.id).to_dict(), sort_keys=True, indent=2).encode() + b"\n")}),
                   GOOD[:2]: ("040000", {f"{GOOD}.json": ("100644", fact_json(GOOD, "good one"))}),
                   LINKED[:2]: ("040000", {f"{LINKED}.json": ("120000", b"../../meta.json")}),
                   EXEC[:2]: ("040000", {f"{EXEC}.json": ("100755", fact_json(EXEC, "executable"))}),
                   "99": ("160000", "0" * 39 + "1"),
               })}
    commit = _push_hostile(team, folders)
    code, out, err = cli(alice, "sync")
    assert code == 0, err
    ids = fact_ids(team.store("alice"))
    assert ids == {mine.id, GOOD}
    paths = [line.split("\t", 1)[1] for line in git(alice, "ls-tree", "-r", REF).splitlines()]
    assert "junk.bin" not in paths and "run.sh" not in paths
    assert all(p == "meta.json" or p.startswith("facts/") for p in paths)
    modes = {line.split()[0] for line in git(alice, "ls-tree", "-r", REF).splitlines()}
    assert modes == {"100644"}
    for name in ("junk.bin", "run.sh", f"facts/{LINKED[:2]}/{LINKED}.json", f"facts/{EXEC[:2]}/{EXEC}.json",
                 "facts/99"):
        assert name in err and commit[:7] in err, (name, err)
    assert "symbolic link" in err and "executable" in err and "submodule" in err
    assert len(own) >= 2


def test_a_gitlink_named_facts_is_skipped_not_a_crash(team, cli):
    alice = team.clone("alice")
    team.store("alice").add("local rule", "mine", kind="decision")
    team.sync("alice")
    before = fact_ids(team.store("alice"))
    _push_hostile(team, {"meta.json": ("100644", _meta()), "facts": ("160000", "0" * 39 + "2")})
    code, _out, err = cli(alice, "sync")
    assert code == 0, err
    assert "facts" in err and "submodule" in err
    assert fact_ids(team.store("alice")) == before


def test_a_tree_where_meta_json_belongs_is_dropped(team, cli):
    alice = team.clone("alice")
    team.store("alice").add("local rule", "mine", kind="decision")
    team.sync("alice")
    _push_hostile(team, {"meta.json": ("040000", {"x": ("100644", b"x")}),
                         "facts": ("040000", {GOOD[:2]: ("040000", {f"{GOOD}.json": ("100644", fact_json(GOOD, "g"))})})})
    code, _out, err = cli(alice, "sync")
    assert code == 0, err
    assert "meta.json" in err
    assert git(alice, "cat-file", "-t", f"{REF}:meta.json").strip() == "blob"
    assert GOOD in fact_ids(team.store("alice"))


def test_install_remote_lets_plain_fetch_survive_a_force_pushed_notes_ref(team, cli):
    alice, bob = team.clone("alice"), team.clone("bob")
    assert cli(alice, "install", "--remote", "origin")[0] == 0
    git(bob, "notes", "--ref=neo", "add", "-m", '{"v":1,"id":"a","ts":1}', "HEAD")
    git(bob, "push", "-q", "origin", "refs/notes/neo")
    git(alice, "fetch", "-q", "origin")
    # Bob rewrites the notes history and force-pushes it.
    git(bob, "update-ref", "-d", "refs/notes/neo")
    git(bob, "notes", "--ref=neo", "add", "-m", '{"v":1,"id":"b","ts":2}', "HEAD")
    git(bob, "push", "-q", "--force", "origin", "refs/notes/neo")
    proc_out = git(alice, "fetch", "origin", check=False)
    assert proc_out is not None
    assert git(alice, "rev-parse", "refs/notes/remotes/origin/neo") == git(bob, "rev-parse", "refs/notes/neo")
    # Local notes were never the fetch's to touch.
    assert git(alice, "rev-parse", "--verify", "-q", "refs/notes/neo", check=False).strip() == ""
