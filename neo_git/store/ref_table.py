"""A fact ref's subtrees as one `FactTable`, and what `load` warns about, from the rows alone.

A cold recall asks `RefStore.table()` for every fact of the ref: the rows of each subtree (kept
by the parse cache) are stacked in tree order, and a fact is decoded from its subtree only when
recall reads it. The pointer check `load` runs over every fact (`ref_facts.pointer_problems`)
runs here over the rows and decodes only the facts whose pointers it must look at.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence

from neo_git.fact_table import DEPENDS_ON, SUPERSEDED_BY, SUPERSEDES, CandidateFacts, FactTable
from neo_git.store.ref_facts import LookupMapping, pointer_problems
from neo_git.store.subtree import Subtree


def subtrees_table(subtrees: Sequence[Subtree]) -> FactTable:
    """The facts of *subtrees*, in order, as a table that decodes each from its subtree."""
    import numpy as np

    from neo_git.fact_table import row_dtype

    subtrees = [sub for sub in subtrees if len(sub)]
    if not subtrees:
        return FactTable(np.zeros(0, dtype=row_dtype()), [])
    starts = np.cumsum([0] + [len(sub) for sub in subtrees[:-1]])

    def decode(i: int, keep: bool = True):
        part = int(np.searchsorted(starts, i, side="right")) - 1
        return subtrees[part].fact_at(i - int(starts[part]), keep)

    rows = np.frombuffer(b"".join(sub.row_bytes() for sub in subtrees), dtype=row_dtype())
    return FactTable(rows, None, decode)


def table_pointer_problems(table: FactTable, ref: str) -> list[str]:
    """`pointer_problems` of the facts in *table* (whose ids are unique: one ref), decoding only
    facts with a pointer to an id not in the table, or with `depends_on`."""
    import numpy as np

    if not len(table):
        return []
    rows = table.rows
    flags, ids = rows["flags"], np.sort(rows["id"])

    def missing(column: str, bit: int) -> np.ndarray:
        targets = rows[column]
        at = np.minimum(np.searchsorted(ids, targets), len(ids) - 1)
        return ((flags & bit) != 0) & (ids[at] != targets)

    suspects = missing("superseded_by", SUPERSEDED_BY) | missing("supersedes", SUPERSEDES) | ((flags & DEPENDS_ON) != 0)
    return pointer_problems(CandidateFacts(table, np.flatnonzero(suspects).tolist()), ref)


class SubtreeFacts(LookupMapping):
    """The facts of a ref's subtrees as {id: fact}, each decoded when looked up (a lazy subtree
    decodes only that fact); walking every value decodes them all (and keeps them decoded)."""

    def __init__(self, subtrees: dict[str, Subtree]) -> None:
        self._subtrees = subtrees
        self._length: int | None = None

    def get(self, fact_id, default=None):
        sub = self._subtrees.get(fact_id[:2]) if isinstance(fact_id, str) else None
        fact = sub.fact(fact_id) if sub is not None else None
        return default if fact is None else fact

    def __len__(self) -> int:
        if self._length is None:
            self._length = sum(len(sub) for sub in self._subtrees.values())
        return self._length

    def __iter__(self) -> Iterator[str]:
        for sub in self._subtrees.values():
            yield from sub.fact_ids()

    def values(self):
        return [fact for sub in self._subtrees.values() for fact in sub.facts.values()]

    def items(self):
        return [(fact.id, fact) for fact in self.values()]
