"""The facts at one commit of a ref, read blob by blob when asked for.

A sync that brings 40 facts into a ref of 50,000 looks at the 40 paths the tree diff
names: decoding every stored fact (or even the parse cache of them) to answer those
40 lookups cost ten times the fetch. `TreeFacts.get(id)` reads `facts/<id[:2]>/<id>.json`
at that commit and validates it exactly as the ref reader does (`fact_from_blob`: a fact
counts only at its own path and in the ref's scope), so it answers as the loaded
mapping would. Anything that walks every fact (iteration, `len`, `values`) loads them
all through the store first.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Literal, Protocol, cast

import pygit2

from neo_git.errors import InvalidFact
from neo_git.facts import Fact, FactScope
from neo_git.store.ref_facts import LookupMapping, fact_from_blob, fact_id_of


class RefReader(Protocol):
    """What `TreeFacts` reads through: `RefStore` (refstore.py, which imports this module)."""

    ref: str
    scope: FactScope

    def _object(self, oid: pygit2.Oid, where: str) -> pygit2.Object: ...

    def _commit(self, oid: pygit2.Oid) -> pygit2.Commit: ...

    def _load_at(self, tip: pygit2.Oid | None) -> dict[str, Fact]: ...


class TreeFacts(LookupMapping):
    """A read-only id -> Fact view of *store*'s ref at commit *tip* (None: no facts yet)."""

    def __init__(self, store: RefReader, tip: pygit2.Oid | None) -> None:
        self._store = store
        self._tip = tip
        self._facts_tree: pygit2.Tree | None | Literal[False] = False   # False: not looked up yet
        self._read: dict[str, Fact | None] = {}
        self._all: dict[str, Fact] | None = None

    def _tree(self) -> pygit2.Tree | None:
        if self._facts_tree is False:
            self._facts_tree = None
            if self._tip is not None:
                store = self._store
                root = cast(pygit2.Tree, store._object(store._commit(self._tip).tree_id, f"the tree of {store.ref}"))
                # A link or submodule named facts is nothing to read (a gitlink's object is not here).
                if "facts" in root and root["facts"].filemode == pygit2.enums.FileMode.TREE:
                    tree = store._object(root["facts"].id, f"{store.ref}:facts")
                    self._facts_tree = tree if isinstance(tree, pygit2.Tree) else None
        return self._facts_tree

    def _lookup(self, fact_id: str) -> Fact | None:
        if not isinstance(fact_id, str) or fact_id_of(fact_id[:2], f"{fact_id}.json") != fact_id:
            return None
        tree = self._tree()
        if tree is None or fact_id[:2] not in tree or tree[fact_id[:2]].filemode != pygit2.enums.FileMode.TREE:
            return None
        store = self._store
        folder = store._object(tree[fact_id[:2]].id, f"{store.ref}:facts/{fact_id[:2]}")
        if not isinstance(folder, pygit2.Tree) or f"{fact_id}.json" not in folder \
                or folder[f"{fact_id}.json"].filemode != pygit2.enums.FileMode.BLOB:
            return None   # a link or an executable is skipped, as the ref reader skips it
        path = f"facts/{fact_id[:2]}/{fact_id}.json"
        blob = store._object(folder[f"{fact_id}.json"].id, f"{store.ref}:{path}")
        if not isinstance(blob, pygit2.Blob):
            return None
        try:
            return fact_from_blob(blob.data, path, store.ref, store.scope)
        except InvalidFact:
            return None  # skipped, as the ref reader skips it

    def get(self, fact_id, default=None):
        """The fact with this id at the commit, or *default*."""
        if self._all is not None:
            return self._all.get(fact_id, default)
        if fact_id not in self._read:
            self._read[fact_id] = self._lookup(fact_id)
        fact = self._read[fact_id]
        return default if fact is None else fact

    def _everything(self) -> dict[str, Fact]:
        if self._all is None:
            self._all = self._store._load_at(self._tip) if self._tip is not None else {}
        return self._all

    def __iter__(self) -> Iterator[str]:
        return iter(self._everything())

    def __len__(self) -> int:
        return len(self._everything())

    def values(self):
        return self._everything().values()

    def items(self):
        return self._everything().items()

    def keys(self):
        return self._everything().keys()
