"""A small team for sync tests: one bare remote, clones with their own identities."""
from __future__ import annotations

from pathlib import Path

from tests.helpers.git import git

REF = "refs/neo/facts"
PEOPLE = {"alice": "Alice Example <alice@example.com>", "bob": "Bob Example <bob@example.com>",
          "carol": "Carol Example <carol@example.com>"}


class Team:
    """A bare remote with one commit on main, and clones made on demand."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.remote = root / "remote.git"
        git(root, "init", "-q", "--bare", "-b", "main", str(self.remote))
        seed = root / "seed"
        git(root, "init", "-q", "-b", "main", str(seed))
        (seed / "README.md").write_text("hello\n", encoding="utf-8")
        git(seed, "add", "README.md")
        git(seed, "commit", "-q", "-m", "initial")
        git(seed, "push", "-q", str(self.remote), "main")

    def clone(self, who: str, *options: str, trust_remote: bool = True, auto_sign: bool = False) -> Path:
        """A clone of the remote (extra `git clone` options allowed) owned by *who*. The team
        trusts its remote's write access (`neo.trustUnsigned origin`) unless *trust_remote* is
        False: the merge tests are about merging, the trust tests say otherwise. Its commits are
        unsigned (`neo.autoSign false`) unless *auto_sign*: everyone here shares the test's one
        NEO_HOME, hence one signing key (`test_trust_own_key.py` gives each person their own)."""
        path = self.root / who
        source = f"file://{self.remote}" if options else str(self.remote)
        git(self.root, "clone", "-q", *options, source, str(path))
        name, _, email = PEOPLE[who].partition(" <")
        git(path, "config", "user.name", name)
        git(path, "config", "user.email", email.rstrip(">"))
        git(path, "config", "neo.remote", "origin")   # the team chose origin for its facts (sharing is opt-in)
        if trust_remote:
            git(path, "config", "neo.trustUnsigned", "origin")
        if not auto_sign:
            git(path, "config", "neo.autoSign", "false")
        return path

    def store(self, who: str):
        """A FactStore on *who*'s clone (hash embedder: deterministic and offline)."""
        from neo_git.store import FactStore

        return FactStore.open(self.root / who, embedder="hash")

    def sync(self, who: str, remote: str = "origin"):
        """`git neo sync` in-process for *who*; returns the report."""
        from neo_git.sync import Syncer

        return Syncer(self.store(who), remote).sync()


def tree_of(path: Path) -> str:
    """The tree id of refs/neo/facts in a clone ("" while it has none)."""
    return git(path, "rev-parse", "--verify", "--quiet", f"{REF}^{{tree}}", check=False).strip()


def fact_ids(store, include_invalid: bool = True) -> set[str]:
    """Ids of the project facts."""
    return {f.id for f in store.list(scope="project", include_invalid=include_invalid)}


def plant(clone: Path, files: dict[str, bytes], message: str = "plant") -> str:
    """Commit raw *files* (path -> bytes) on top of the clone's refs/neo/facts with plumbing,
    as a careless or hostile teammate's tool might; returns the commit id."""
    import pygit2

    repo = pygit2.Repository(str(clone))
    tip = repo.references[REF].target
    index = pygit2.Index()
    index.read_tree(repo[tip].tree)
    for path, data in files.items():
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
    tree = index.write_tree(repo)
    sig = repo.default_signature
    commit = repo.create_commit(REF, sig, sig, message, tree, [tip])
    return str(commit)


def fact_json(fact_id: str, subject: str, body: str = "", **extra) -> bytes:
    """A stored fact's bytes, as Fact.to_dict would write them (plus *extra* keys)."""
    import json

    data = {"id": fact_id, "subject": subject, "body": body, "kind": "pattern", "scope": "project",
            "metadata": {"created_at": "2026-01-01T00:00:00+00:00"}, **extra}
    return (json.dumps(data, sort_keys=True, indent=2) + "\n").encode("utf-8")
