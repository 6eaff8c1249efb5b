"""Issue 37: a teammate's tree entry whose name is not UTF-8 never crashes `git neo sync`.
The remote is a real bare repository; the entry is pushed from a second clone with plumbing."""
from __future__ import annotations

import subprocess

import pytest

from tests.helpers.git import git
from tests.helpers.sync import REF, fact_ids, fact_json


def _mktree_bytes(repo, rows: list[tuple[bytes, bytes, str, bytes]]) -> str:
    """`git mktree` from raw (mode, type, oid, name) rows: a name need not be UTF-8."""
    text = b"".join(mode + b" " + kind + b" " + oid.encode() + b"\t" + name + b"\n"
                    for mode, kind, oid, name in rows)
    return subprocess.run(["git", "mktree"], cwd=repo, input=text, capture_output=True, check=True,
                          timeout=30).stdout.decode().strip()


def _blob(repo, data: bytes) -> str:
    return subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=data,
                          capture_output=True, check=True, timeout=30).stdout.decode().strip()


@pytest.mark.parametrize("where", ["root", "facts"])
def test_a_pushed_entry_whose_name_is_not_utf8_does_not_crash_sync(team, cli, where):
    alice = team.clone("alice")
    mine = team.store("alice").add("local rule", "mine", kind="decision")
    team.sync("alice")
    carol = team.clone("carol")
    git(carol, "fetch", "-q", "origin", f"+{REF}:{REF}")
    good = "abcdef0123456789"
    # Carol's tool writes one good fact and one entry named b"caf\xe9.json" (Latin-1, not UTF-8).
    tip_tree = git(carol, "rev-parse", f"{REF}^{{tree}}").strip()
    facts_tree = git(carol, "rev-parse", f"{REF}:facts").strip()
    facts_rows = [tuple(part.encode() if i < 2 else part for i, part in enumerate(
        line.split("\t")[0].split())) + (line.split("\t")[1].encode(),)
        for line in git(carol, "ls-tree", facts_tree).splitlines()]
    good_folder = _mktree_bytes(carol, [(b"100644", b"blob", _blob(carol, fact_json(good, "good one")),
                                         f"{good}.json".encode())])
    facts_rows.append((b"040000", b"tree", good_folder, good[:2].encode()))
    odd = (b"100644", b"blob", _blob(carol, fact_json("0123012301230123", "odd")), b"caf\xe9.json")
    if where == "facts":
        facts_rows.append(odd)
    new_facts = _mktree_bytes(carol, facts_rows)
    root_rows = [(b"040000", b"tree", new_facts, b"facts")]
    for line in git(carol, "ls-tree", tip_tree).splitlines():
        head, name = line.split("\t")
        mode, kind, oid = head.split()
        if name != "facts":
            root_rows.append((mode.encode(), kind.encode(), oid, name.encode()))
    if where == "root":
        root_rows.append(odd)
    tree = _mktree_bytes(carol, root_rows)
    commit = git(carol, "commit-tree", tree, "-p", git(carol, "rev-parse", REF).strip(), "-m", "odd name").strip()
    git(carol, "update-ref", REF, commit)
    git(carol, "push", "-q", "origin", REF)
    # Alice has something new of her own, so sync merges (and writes a merge message).
    team.store("alice").add("second local rule", "also mine", kind="decision")
    code, out, err = cli(alice, "sync")
    assert code == 0, err
    assert "caf\\xe9.json" in err          # named, escaped, in the warning
    assert fact_ids(team.store("alice")) >= {mine.id, good}
    code, out, err = cli(alice, "sync")    # and again: still no crash for anyone
    assert code == 0, err
