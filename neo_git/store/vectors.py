"""In-process vectors of facts, by fact id, so recall and the write policy do not
look thousands of texts up in the vector cache on every call.

The vector cache (`neo_git.embed.cache`) maps text → vector on disk; a lookup
hashes the text and copies its row. Every add compares the new fact with all
valid facts of its kind, and every recall scores all facts: through the cache
that is a sha256 and a dict lookup per fact per call. Here each fact's row is
fetched once per process and kept in a growing matrix; a fact whose text
changed (never, in practice: new text means a new fact) is fetched again.
"""
from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from neo_git.facts import Fact

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from neo_git.store.index import PeerGroup


class RowBuffer:
    """float32 rows in a buffer that doubles when full, so appending is amortised O(rows added)."""

    def __init__(self) -> None:
        self.buffer: np.ndarray | None = None
        self.used = 0

    @property
    def filled(self) -> np.ndarray:
        """The buffer, once something was appended."""
        assert self.buffer is not None
        return self.buffer

    def append(self, vectors: np.ndarray, adopt: bool = False) -> int:
        """Append rows; returns the index of the first one. With *adopt*, an empty buffer takes
        *vectors* itself (the caller hands it over and never writes to it again): no copy."""
        import numpy as np

        vectors = np.asarray(vectors, dtype=np.float32)
        # Rows must be unit-stride (BLAS reads them in place); the row pitch may be larger, as in
        # the vector cache's records, whose vectors sit between a key and a checksum.
        if adopt and self.buffer is None and vectors.ndim == 2 and vectors.strides[1] == vectors.itemsize:
            self.buffer, self.used = vectors, len(vectors)  # full: the next append grows it
            return 0
        needed = self.used + len(vectors)
        if self.buffer is None or needed > len(self.buffer):
            capacity = max(64, needed, 2 * (len(self.buffer) if self.buffer is not None else 0))
            grown = np.empty((capacity, vectors.shape[1]), dtype=np.float32)
            if self.buffer is not None:
                grown[:self.used] = self.buffer[:self.used]
            self.buffer = grown
        first = self.used
        self.buffer[first:needed] = vectors
        self.used = needed
        return first


class GroupVectors:
    """The vectors of a PeerGroup's rows, in row order, kept in step by appending.

    A group's rows only grow (dead rows stay, masked by the policy) until it is
    compacted, which bumps its epoch: then the matrix is rebuilt once."""

    def __init__(self) -> None:
        self._rows = RowBuffer()
        self._epoch = -1

    def matrix(self, group: PeerGroup, vectors: FactVectors) -> np.ndarray:
        """(len(group.rows), dim) float32, row i the vector of group.rows[i] (a view: do not keep)."""
        if group.epoch != self._epoch:
            self._rows, self._epoch = RowBuffer(), group.epoch
        have, need = self._rows.used, len(group.rows)
        if have < need:
            keys = getattr(group, "keys", None)  # a RowGroup: its rows' texts by key, decoded only to embed
            if keys is None:
                self._rows.append(vectors.matrix(group.rows[have:need]))
            else:  # a new array: adopted, not copied
                self._rows.append(vectors.matrix_by_keys(keys[have:need], lambda j: group.rows[have + j].text),
                                  adopt=True)
        return self._rows.filled[:need]


class FactVectors:
    """Rows of fact vectors, filled from *fetch* (texts → (n, dim) float32) on first use."""

    def __init__(self, fetch: Callable[[Sequence[str]], np.ndarray], fetch_keys: Callable | None = None) -> None:
        self._fetch = fetch
        # (keys, text_of, block=False) -> vectors; with block, (a block to adopt, each key's row
        # in it or None for in order)
        self._fetch_keys = fetch_keys
        self._by_key: dict[bytes, int] = {}   # text key -> row, for recall over tables
        self._rows: dict[str, tuple[Fact, int]] = {}  # fact id -> (fact as last seen, row)
        self._buffer = RowBuffer()
        self._groups: weakref.WeakKeyDictionary[PeerGroup, GroupVectors] = weakref.WeakKeyDictionary()

    def matrix(self, facts: Sequence[Fact]) -> np.ndarray:
        """(len(facts), dim) float32, row i the vector of facts[i]'s text. Read it, do not write
        to it: when every row was fetched just now it is a view of the row buffer (a cold
        recall at 5,000 facts then copies 10 MB twice less)."""
        if not facts:
            return self._fetch([])
        known = self._rows
        if known:
            rows, missing = self._known_rows(facts)
        else:  # the first call of a process (a cold recall): every row is fetched
            rows, missing = [-1] * len(facts), list(range(len(facts)))
        if missing:
            fetched = self._fetch([facts[i].text for i in missing])
            first = self._buffer.append(fetched, adopt=True)  # fetched is ours alone
            for j, i in enumerate(missing):
                known[facts[i].id] = (facts[i], first + j)
                rows[i] = first + j
            if len(missing) == len(facts):  # rows first..first+n-1: rows never move, so a view is stable
                return self._buffer.filled[first:first + len(facts)]
        return self._buffer.filled[rows]

    def matrix_by_keys(self, keys: Sequence[bytes], text_of: Callable[[int], str]) -> np.ndarray:
        """(len(keys), dim) float32, a new array the caller may keep: the vectors of texts given by
        their keys (*text_of(i)*: the i-th text, asked only for those to embed). Rows this object
        holds are copied; the others are fetched and not kept here (a write index's group keeps
        its own matrix: copying 12,500 rows into this buffer too cost 25 MB and a regrowth)."""
        import numpy as np

        if not len(keys):
            return self._fetch([])
        known = self._by_key
        rows = [known.get(key, -1) for key in keys]
        missing = [i for i, row in enumerate(rows) if row < 0]
        if not missing:
            return self._buffer.filled[rows]
        assert self._fetch_keys is not None
        fetched = self._fetch_keys([keys[i] for i in missing], lambda j: text_of(missing[j]))
        if len(missing) == len(keys):
            return fetched
        out = np.empty((len(keys), fetched.shape[1]), dtype=np.float32)
        held = [i for i, row in enumerate(rows) if row >= 0]
        out[held] = self._buffer.filled[[rows[i] for i in held]]
        out[missing] = fetched
        return out

    def key_rows_view(self, keys: Sequence[bytes], text_of: Callable[[int], str]) -> RowView:
        """The vectors of texts given by their keys (*text_of(i)*: the i-th text, asked only for
        those to embed) as a `RowView`: a table's vectors for recall, each fetched once per process
        (the first call adopts the vector cache's block as it is: its rows in file order, with the
        records' wider pitch)."""
        import numpy as np

        known = self._by_key
        assert self._fetch_keys is not None
        if not known:
            block, order = self._fetch_keys(keys, text_of, block=True)
            first = self._buffer.append(block, adopt=True)  # a shared block: adopted, never written
            rows = np.arange(first, first + len(keys)) if order is None else np.asarray(order) + first
            known.update(zip(keys, rows.tolist()))
            return RowView(self._buffer, rows)
        positions = [known.get(key, -1) for key in keys]
        missing = [i for i, row in enumerate(positions) if row < 0]
        if missing:
            fetched = self._fetch_keys([keys[i] for i in missing], lambda j: text_of(missing[j]))
            first = self._buffer.append(fetched)
            for j, i in enumerate(missing):
                known[keys[i]] = positions[i] = first + j
        return RowView(self._buffer, np.asarray(positions))

    def _known_rows(self, facts: Sequence[Fact]) -> tuple[list[int], list[int]]:
        """(row of each fact, -1 where unknown or its text changed; positions of those)."""
        known = self._rows
        rows: list[int] = []
        missing: list[int] = []
        for i, fact in enumerate(facts):
            entry = known.get(fact.id)
            if entry is not None and (entry[0] is fact or
                                      (entry[0].subject == fact.subject and entry[0].body == fact.body)):
                if entry[0] is not fact:
                    known[fact.id] = (fact, entry[1])
                rows.append(entry[1])
            else:
                rows.append(-1)
                missing.append(i)
        return rows, missing

    def group_scores(self, group: PeerGroup, query: np.ndarray) -> np.ndarray:
        """Cosines of *query* with every row of *group* (dead rows included; the policy masks them).

        The group's matrix is kept between calls (per group object, dropped with it), so
        an add costs one matrix-vector product over its kind, not a lookup per fact."""
        matrices = self._groups
        kept = matrices.get(group)
        if kept is None:
            kept = matrices[group] = GroupVectors()
        return kept.matrix(group, self) @ query

    def remember(self, fact: Fact, vector: np.ndarray) -> None:
        """Record the vector of a fact just embedded (e.g. one being added)."""
        entry = self._rows.get(fact.id)
        if entry is None or entry[0].subject != fact.subject or entry[0].body != fact.body:
            from neo_git.fact_table import text_key

            row = self._buffer.append(vector.reshape(1, -1))
            self._rows[fact.id] = (fact, row)
            self._by_key.setdefault(text_key(fact.text), row)


class RowView:
    """Some rows of a RowBuffer, in a given order, used as a matrix without copying them out:
    `view @ q` multiplies the buffer's rows (a few spare ones cost nothing) and picks; `view[i]`
    reads rows. What recall needs of its vector matrix."""

    __slots__ = ("_buffer", "rows")

    def __init__(self, buffer: RowBuffer, rows: np.ndarray) -> None:
        self._buffer = buffer
        self.rows = rows

    def __matmul__(self, vector: np.ndarray) -> np.ndarray:
        import numpy as np

        from neo_git.embed.rows import cosines  # each row's value independent of the others

        out = cosines(self._buffer.filled[:self._buffer.used], vector)[self.rows]
        if len(self.rows) and int(self.rows.min()) < 0:
            out[self.rows < 0] = np.nan   # positions not asked for (`spread`)
        return out

    def spread(self, positions: Sequence[int], length: int) -> RowView:
        """This view's rows placed at *positions* of a view of *length* rows; the others hold no
        vector (NaN in a product, never to be read)."""
        import numpy as np

        rows = np.full(length, -1, dtype=np.int64)
        rows[np.asarray(positions, dtype=np.int64)] = self.rows
        return RowView(self._buffer, rows)

    def __getitem__(self, index) -> np.ndarray:
        import numpy as np

        return self._buffer.filled[self.rows[np.asarray(index)]]

    def cosines_with(self, positions: Sequence[int], query: np.ndarray) -> np.ndarray:
        """The cosine of *query* with the rows at *positions* (float32), without copying them out."""
        import numpy as np

        return (self @ query)[np.asarray(positions, dtype=np.int64)]

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, dimension), as an ndarray's."""
        return (len(self.rows), self._buffer.filled.shape[1])

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        rows = self._buffer.filled[self.rows]
        return rows if dtype is None else rows.astype(dtype)

