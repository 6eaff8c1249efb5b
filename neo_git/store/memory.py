"""The in-memory twin of the scope backends (as dulwich's `MemoryRepo`/`DictRefsContainer`).

`MemoryBackend` keeps one scope's facts in a dict behind the same protocol as
`RefStore` and `FileStore` (`load`, `transact`), so the write policy, recall and
anything built on `FactStore.transact` run unchanged without a repository or a
file. `FactStore.in_memory()` builds a store of four of them.

It honours `Change.facts` and `Change.removed`; `Change.parents` name commits,
which a dict has none of, so they are ignored (as in the file scopes). Every
change that wrote something is kept in `log`, oldest first: the twin of the
ref's commit messages, for tests that check what a write said.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable

from neo_git.facts import Fact
from neo_git.store.base import Change, LoadedScope, Transaction
from neo_git.store.index import FactIndex, IndexedFacts


class MemoryBackend:
    """One scope's facts in this process; safe for threads, gone with the process."""

    def __init__(self, facts: Iterable[Fact] = (), description: str = "memory") -> None:
        self.description = description
        self._facts: dict[str, Fact] = {fact.id: fact for fact in facts}
        # Kept in step per change, as RefStore does, so the policy never rebuilds it per add.
        self._index = FactIndex.build(self._facts)
        self._lock = threading.RLock()
        self.log: list[Change] = []

    def load(self) -> LoadedScope:
        """The facts now held (a copy of the mapping; the Fact objects are shared, as in RefStore)."""
        with self._lock:
            return LoadedScope(dict(self._facts))

    def transact(self, body: Transaction) -> Change | None:
        """Run *body* on the current facts (read-only, with their index) and apply its change.

        Nothing changes when *body* raises. The lock makes concurrent transactions take
        turns, so a body never needs the ref store's retry."""
        with self._lock:
            change = body(IndexedFacts(self._facts, self._index))
            if change is None or not (change.facts or change.removed):
                return change
            for fact_id in change.removed:
                self._index.update(self._facts.pop(fact_id, None), None)
            for fact in change.facts:
                self._index.update(self._facts.get(fact.id), fact)
                self._facts[fact.id] = fact
            self.log.append(change)
            return change

    @property
    def messages(self) -> list[str]:
        """Each logged change's message and detail lines, as `git log --format=%B` shows a commit
        of the ref store, newest first."""
        return ["\n".join((change.message, *(("",) + change.details if change.details else ())))
                for change in reversed(self.log)]
