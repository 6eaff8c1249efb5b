"""The write index built from rows (`fact_table`), so the first add of a process does not
decode every stored fact.

An add asks four things of its scope (`store/index.py`): duplicates and same-subject facts
among the valid facts of its scope and kind, the cosine of its vector with theirs, the
dependents of a fact it supersedes, and the number of valid facts. From the rows: the valid
counts, the dependents (decoding only facts with `depends_on`), and per (scope, kind), built
when first asked, a `RowGroup` holding ids, vector keys and the hashes of the duplicate and
subject keys (`textkeys`). A hash only finds candidates: each is decoded and compared on its
text, so a collision never makes a duplicate or a same-subject fact.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from typing import Any, overload

from neo_git.fact_table import DEPENDS_ON, KIND_INDEX, SCOPE_INDEX, VALID, FactTable, hex_id
from neo_git.facts import SCOPE_ORDER, Fact, FactKind, FactScope
from neo_git.store.peer_group import COMPACT_AFTER, PeerGroup, text_key
from neo_git.textkeys import duplicate_hash, subject_hash, subject_key


def index_rows(table: FactTable) -> tuple[Counter[FactScope], list[Fact]]:
    """What a write index (`store/index.py`) takes from *table*'s rows: the valid facts per
    scope, and the valid facts that depend on others (in row order)."""
    import numpy as np

    rows = table.rows
    valid = (rows["flags"] & VALID) != 0
    scopes, counts = np.unique(rows["scope"][valid], return_counts=True)
    per_scope: Counter[FactScope] = Counter()
    for scope, count in zip(scopes.tolist(), counts.tolist()):
        per_scope[SCOPE_ORDER[scope]] += count
    dependent = [table[i] for i in np.flatnonzero(valid & ((rows["flags"] & DEPENDS_ON) != 0)).tolist()]
    return per_scope, dependent


def row_group(table: FactTable, scope: FactScope, kind: FactKind) -> RowGroup | None:
    """The valid facts of *scope* and *kind* in *table*, as a group (None if there are none)."""
    import numpy as np

    rows = table.rows
    wanted = ((rows["flags"] & VALID) != 0) & (rows["scope"] == SCOPE_INDEX[scope]) & (rows["kind"] == KIND_INDEX[kind])
    positions = np.flatnonzero(wanted)
    if not len(positions):
        return None
    picked = rows[positions]
    keys = picked["key"].tobytes()
    return RowGroup([hex_id(i) for i in picked["id"].tolist()], [keys[j:j + 32] for j in range(0, len(keys), 32)],
                    picked["duplicate"].tolist(), picked["subject"].tolist(), positions.tolist(), table)


class _Members(MutableMapping[str, Fact]):
    """member id -> Fact, decoded from the table when first read (set when a fact joins)."""

    def __init__(self, positions: dict[str, int], table: FactTable) -> None:
        self._positions = positions         # id -> table position, for members not read yet
        self._facts: dict[str, Fact] = {}
        self._table = table

    def __getitem__(self, fact_id: str) -> Fact:
        fact = self._facts.get(fact_id)
        if fact is None:
            fact = self._facts[fact_id] = self._table[self._positions[fact_id]]
        return fact

    def __setitem__(self, fact_id: str, fact: Fact) -> None:
        self._positions.pop(fact_id, None)
        self._facts[fact_id] = fact

    def __delitem__(self, fact_id: str) -> None:
        if fact_id in self._facts:
            del self._facts[fact_id]
            self._positions.pop(fact_id, None)
        else:
            del self._positions[fact_id]

    def __contains__(self, fact_id: object) -> bool:
        return fact_id in self._facts or fact_id in self._positions

    def __iter__(self) -> Iterator[str]:
        yield from self._facts
        yield from list(self._positions)

    def __len__(self) -> int:
        return len(self._facts) + len(self._positions)


class _Rows(Sequence[Fact]):
    """The fact on each row (as it joined), decoded when read."""

    def __init__(self, group: RowGroup) -> None:
        self._group = group

    def __len__(self) -> int:
        return len(self._group.ids)

    @overload
    def __getitem__(self, row: int) -> Fact: ...
    @overload
    def __getitem__(self, row: slice) -> list[Fact]: ...
    def __getitem__(self, row: int | slice) -> Fact | list[Fact]:
        if isinstance(row, slice):
            return [self[r] for r in range(*row.indices(len(self)))]
        group = self._group
        fact = group.joined.get(row)
        if fact is None:
            fact = group.joined[row] = group.members[group.ids[row]]
        return fact


class RowGroup(PeerGroup):
    """A PeerGroup built from rows: ids and vector keys per row, members decoded on demand, and
    the duplicate / subject key hashes of every member (confirmed on the text before use)."""

    __slots__ = ("ids", "keys", "joined", "_hash_of", "_by_duplicate", "_by_subject")

    def __init__(self, ids: list[str], keys: list[bytes], duplicates: list[int], subjects: list[int],
                 positions: list[int], table: FactTable) -> None:
        super().__init__()
        self.ids = ids
        self.keys = keys                      # the vector cache key of each row's text
        self.joined: dict[int, Fact] = {}     # row -> fact, once read or joined here
        self.rows = _Rows(self)               # type: ignore[assignment]
        self.alive = bytearray(b"\x01" * len(ids))
        self.row_of = {fact_id: row for row, fact_id in enumerate(ids)}
        self.members = _Members(dict(zip(ids, positions)), table)   # type: ignore[assignment]
        self._hash_of = {fact_id: (d, s) for fact_id, d, s in zip(ids, duplicates, subjects)}
        self._by_duplicate: dict[int, set[str]] = {}
        self._by_subject: dict[int, set[str]] = {}
        for fact_id, (d, s) in self._hash_of.items():
            self._by_duplicate.setdefault(d, set()).add(fact_id)
            self._by_subject.setdefault(s, set()).add(fact_id)

    def id_at(self, row: int) -> str:
        return self.ids[row]

    def join(self, fact: Fact) -> None:
        row = len(self.ids)
        self.ids.append(fact.id)
        self.keys.append(_vector_key(fact))
        self.joined[row] = fact
        self.row_of[fact.id] = row
        self.alive.append(1)
        self.members[fact.id] = fact
        hashes = self._hash_of[fact.id] = (duplicate_hash(fact.subject, fact.body), subject_hash(fact.subject))
        self._by_duplicate.setdefault(hashes[0], set()).add(fact.id)
        self._by_subject.setdefault(hashes[1], set()).add(fact.id)

    def leave(self, fact_id: str) -> None:
        self.alive[self.row_of.pop(fact_id)] = 0
        del self.members[fact_id]
        d, s = self._hash_of.pop(fact_id)
        for table, key in ((self._by_duplicate, d), (self._by_subject, s)):
            table[key].discard(fact_id)
            if not table[key]:
                del table[key]
        dead = len(self.ids) - len(self.members)
        if dead > COMPACT_AFTER and dead > len(self.members):
            self._compact()

    def _compact(self) -> None:
        old = list(self.row_of.items())
        joined = {new: self.joined[row] for new, (_, row) in enumerate(old) if row in self.joined}
        self.ids = [fact_id for fact_id, _ in old]
        self.keys = [self.keys[row] for _, row in old]
        self.joined = joined
        self.row_of = {fact_id: new for new, fact_id in enumerate(self.ids)}
        self.alive = bytearray(b"\x01" * len(self.ids))
        self.epoch += 1

    def duplicates(self, fact: Fact) -> set[str]:
        wanted = text_key(fact)
        return {i for i in self._by_duplicate.get(duplicate_hash(fact.subject, fact.body), ())
                if text_key(self.members[i]) == wanted}

    def same_subject(self, subject: str) -> set[str]:
        wanted = subject_key(subject)
        return {i for i in self._by_subject.get(subject_hash(subject), ())
                if subject_key(self.members[i].subject) == wanted}

    def texts(self) -> dict[tuple[str, str], set[str]]:
        """Member ids by text_key (decodes every member: for tests and summaries)."""
        out: dict[tuple[str, str], set[str]] = {}
        for fact_id in list(self.members):
            out.setdefault(text_key(self.members[fact_id]), set()).add(fact_id)
        return out

    def vectors_of(self, first: int, end: int, fetch: Callable[..., Any]) -> object:
        """The vectors of rows first..end-1, through *fetch(keys, text_of)*."""
        return fetch(self.keys[first:end], lambda j: self.rows[first + j].text)


def _vector_key(fact: Fact) -> bytes:
    from neo_git.fact_table import text_key as vector_key

    return vector_key(fact.text)
