"""What the write policy looks up on every add, kept per fact instead of per scan.

An add asks: is there a valid fact of the same scope and kind saying exactly
this (duplicate)? which valid facts of that scope and kind might it supersede?
which valid facts depend on the one it supersedes? how many valid facts does
the scope hold (cap)? Scanning every stored fact for each question made an add
cost O(stored facts). `FactIndex` answers them from maps updated one fact at a
time (`update(old, new)`), so a backend that re-reads only what changed
(RefStore) keeps the index current in O(changed facts).

Supersession candidates live in a `PeerGroup` per (scope, kind): an append-only
list of rows, one per fact that joined the group, with an alive flag. Row
numbers never move (until the group is compacted, which bumps its `epoch`), so
a vector matrix kept in step with the rows (`vectors.GroupVectors`) only ever
appends.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping

from neo_git.facts import Fact, FactKind, FactScope
from neo_git.store.peer_group import COMPACT_AFTER, PeerGroup, text_key  # noqa: F401 - re-exported


class FactIndex:
    """Lookups over one backend's facts for the write policy; see the module docstring."""

    def __init__(self) -> None:
        self.groups: dict[tuple[FactScope, FactKind], PeerGroup] = {}
        self._dependents: dict[str, set[str]] = {}      # fact id -> ids of valid facts depending on it
        self._valid: Counter[FactScope] = Counter()
        # Built from a FactTable (`from_table`): a group is built from its rows when first asked
        # for, as the table was; updates since then reach it because every update asks first.
        self._table = None
        self._asked: set[tuple[FactScope, FactKind]] = set()

    @classmethod
    def build(cls, facts: Mapping[str, Fact]) -> FactIndex:
        """An index of *facts* from scratch (O(len(facts)))."""
        index = cls()
        for fact in facts.values():
            index.update(None, fact)
        return index

    @classmethod
    def from_table(cls, table) -> FactIndex:
        """An index of the facts of a `FactTable` whose groups are built on demand from its rows
        (`row_index.RowGroup`): the first add of a process at 50,000 stored facts builds the one
        group it needs, and decodes only the facts it compares text with."""
        from neo_git.store.row_index import index_rows

        index = cls()
        index._table = table
        per_scope, dependent = index_rows(table)
        index._valid.update(per_scope)
        for fact in dependent:
            index._link_dependencies(fact)
        return index

    # --- maintenance ---------------------------------------------------------------

    def update(self, old: Fact | None, new: Fact | None) -> None:
        """Record that a stored fact went from *old* to *new* (None: absent before / after)."""
        old = old if old is not None and old.is_valid else None
        new = new if new is not None and new.is_valid else None
        if old is None and new is None:
            return
        for fact in (old, new):  # a group still to be built from the table is built as it was
            if fact is not None:
                self.group(fact.scope, fact.kind)
        if old is not None and new is not None and old.scope is new.scope and old.kind is new.kind \
                and old.subject == new.subject and old.body == new.body:
            # Same group, same text (e.g. only flagged for review): the row and its vector stay.
            self.groups[(new.scope, new.kind)].members[new.id] = new
            if old.depends_on != new.depends_on:
                self._unlink_dependencies(old)
                self._link_dependencies(new)
            return
        if old is not None:
            self._remove(old)
        if new is not None:
            self._add(new)

    def _add(self, fact: Fact) -> None:
        self._link_dependencies(fact)
        self._valid[fact.scope] += 1
        group = self.groups.get((fact.scope, fact.kind))
        if group is None:
            group = self.groups[(fact.scope, fact.kind)] = PeerGroup()
        group.join(fact)

    def _remove(self, fact: Fact) -> None:
        self._unlink_dependencies(fact)
        self._valid[fact.scope] -= 1
        self.groups[(fact.scope, fact.kind)].leave(fact.id)

    def _link_dependencies(self, fact: Fact) -> None:
        for dep in fact.depends_on:
            self._dependents.setdefault(dep, set()).add(fact.id)

    def _unlink_dependencies(self, fact: Fact) -> None:
        for dep in fact.depends_on:
            ids = self._dependents.get(dep)
            if ids is not None:
                ids.discard(fact.id)
                if not ids:
                    del self._dependents[dep]

    # --- queries -------------------------------------------------------------------

    def duplicate_of(self, fact: Fact) -> str | None:
        """Id of a valid fact that says exactly what *fact* says; the smallest id if several do."""
        group = self.group(fact.scope, fact.kind)
        ids = group.duplicates(fact) if group is not None else None
        return min(ids) if ids else None

    def group(self, scope: FactScope, kind: FactKind) -> PeerGroup | None:
        """The valid facts of this scope and kind (None if there never were any)."""
        key = (scope, kind)
        group = self.groups.get(key)
        if group is None and self._table is not None and key not in self._asked:
            from neo_git.store.row_index import row_group

            self._asked.add(key)
            group = row_group(self._table, scope, kind)
            if group is not None:
                self.groups[key] = group
        return group

    def dependents(self, fact_id: str) -> list[str]:
        """Ids of the valid facts that depend on *fact_id*, sorted."""
        return sorted(self._dependents.get(fact_id, ()))

    def valid_count(self, scope: FactScope) -> int:
        """How many valid facts of *scope* are stored."""
        return self._valid[scope]

    def summary(self) -> dict:
        """Everything the index answers, as plain data: equal for equal fact sets,
        however the index got there (incrementally or from scratch). For tests."""
        if self._table is not None:
            for scope in FactScope:
                for kind in FactKind:
                    self.group(scope, kind)
        return {
            "groups": {key: sorted((fid, fact.text) for fid, fact in group.members.items())
                       for key, group in self.groups.items() if group.members},
            "group_rows": {key: sorted((group.rows[row].id, group.rows[row].text)
                                       for row, alive in enumerate(group.alive) if alive)
                           for key, group in self.groups.items() if group.members},
            "duplicates": {(key, text): sorted(ids) for key, group in self.groups.items()
                           for text, ids in group.texts().items()},
            "dependents": {key: sorted(ids) for key, ids in self._dependents.items()},
            "valid": {scope: n for scope, n in self._valid.items() if n},
        }


class IndexedFacts(Mapping[str, Fact]):
    """A read-only view of a backend's facts (id -> Fact) that carries their FactIndex.

    Transaction bodies get this instead of a copy of the dict: copying 50,000
    entries per add cost more than the add itself."""

    __slots__ = ("_facts", "_index")

    def __init__(self, facts: Mapping[str, Fact], index: FactIndex | Callable[[], FactIndex]) -> None:
        self._facts = facts
        self._index = index

    @property
    def index(self) -> FactIndex:
        """The FactIndex, built on first use (given as a builder: a transaction that never asks,
        such as the commit worker's citation states, does not pay ~20 ms at 5,000 facts for it)."""
        if not isinstance(self._index, FactIndex):
            self._index = self._index()
        return self._index

    def __getitem__(self, fact_id: str) -> Fact:
        return self._facts[fact_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._facts)

    def __len__(self) -> int:
        return len(self._facts)

    def __contains__(self, fact_id: object) -> bool:
        return fact_id in self._facts

    # dict's own views and get: read-only, and far faster than Mapping's generic ones
    def get(self, fact_id, default=None):
        return self._facts.get(fact_id, default)

    def keys(self):
        return self._facts.keys()

    def values(self):
        return self._facts.values()

    def items(self):
        return self._facts.items()
