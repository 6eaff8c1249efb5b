"""A person's own facts from another of their clones (issue 36): signed with git's own signing,
they come back as theirs with no review step; unsigned (automatic signing turned off), they cannot
be told from a forger's, so they arrive as team knowledge under the person's address and a
constraint among them waits for acceptance. The default, git-neo's own key, is
`test_trust_own_key.py`."""
from __future__ import annotations

import json
import subprocess

import pytest

from tests.helpers.git import git


@pytest.fixture
def laptop(team):
    """alice's second clone (same address, another machine), writing unsigned commits unless a
    test configures git's signing."""
    path = team.root / "alice-laptop"
    git(team.root, "clone", "-q", str(team.remote), str(path))
    git(path, "config", "user.name", "Alice Example")
    git(path, "config", "user.email", "alice@example.com")
    git(path, "config", "neo.remote", "origin")
    git(path, "config", "neo.autoSign", "false")
    return path


def _store(path):
    from neo_git.store import FactStore

    return FactStore.open(path, embedder="hash")


def _sync(path):
    from neo_git.sync import Syncer

    return Syncer(_store(path), "origin").sync()


def _review_types(cli, clone) -> list[str]:
    return [i["type"] for i in json.loads(cli(clone, "review", "--json")[1])]


def test_own_signed_facts_from_another_clone_come_back_as_yours(team, laptop, cli, tmp_path):
    desk = team.clone("alice", trust_remote=False)
    key = tmp_path / "alice-key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", str(key)], check=True,
                   timeout=30)
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"alice@example.com {(tmp_path / 'alice-key.pub').read_text().strip()}\n", encoding="utf-8")
    for clone in (desk, laptop):
        git(clone, "config", "gpg.format", "ssh")
        git(clone, "config", "user.signingKey", str(key))
        git(clone, "config", "neo.signCommits", "true")
        git(clone, "config", "gpg.ssh.allowedSignersFile", str(allowed))
    rule = _store(laptop).add("No network in hooks", "hooks never touch the network", kind="constraint")
    _sync(laptop)
    _sync(desk)
    store = _store(desk)
    assert store.untrusted() == {}
    assert rule.id in {f.id for f in store.recall("network in hooks").constraints}
    assert "unverified_constraint" not in _review_types(cli, desk)


def test_own_unsigned_facts_from_another_clone_are_knowledge_and_a_constraint_waits(team, laptop, cli):
    desk = team.clone("alice", trust_remote=False)
    rule = _store(laptop).add("No network in hooks", "hooks never touch the network", kind="constraint")
    note = _store(laptop).add("Cache layer", "we use redis for caching", kind="decision")
    _sync(laptop)
    _sync(desk)
    store = _store(desk)
    assert store.untrusted() == {rule.id: "alice@example.com", note.id: "alice@example.com"}
    assert note.id in {f.id for f in store.recall("which cache layer do we use").valid_facts}
    assert rule.id not in {f.id for f in store.recall("network in hooks").constraints}
    assert "unverified_constraint" in _review_types(cli, desk)
