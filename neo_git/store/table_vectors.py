"""Vectors for recall over a `FactTable`: cosines streamed from the vector file on a store's
first recall, and the few vectors recall's family ordering reads afterwards.

A text missing from the vector cache (or whose record fails its check) is embedded now and
appended, as `VectorCache.vectors` does; its fact is decoded for that, and only it.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from neo_git.embed import Embedder
    from neo_git.embed.cache import VectorCache
    from neo_git.embed.stream import RecordReader
    from neo_git.fact_table import FactTable


class EmbeddingStore(Protocol):
    """What the streamed cosines read of a store: `FactStore` (its `StoreEmbedding` half,
    store/embedding.py, imports this module)."""

    @property
    def embedder(self) -> Embedder: ...

    @property
    def vector_cache(self) -> VectorCache | None: ...

    def _vectors(self, texts: Sequence[str]) -> np.ndarray: ...


KEEP_EMBEDDED = 4096   # vectors embedded during a first recall kept in memory, at most (~6 MB)


def row_keys(table: FactTable) -> list[bytes]:
    """The vector cache key of each fact of *table* (sha256 of its text), in order."""
    raw = table.rows["key"].tobytes()
    return [raw[i:i + 32] for i in range(0, len(raw), 32)]


class TableVectors:
    """The vectors of a table's facts, read only when asked (`vectors[positions]`): from the
    records the streamed pass found, from texts embedded during it, or else through the cache."""

    def __init__(self, table: FactTable, rows: np.ndarray, reader: RecordReader,
                 embedded: dict[int, np.ndarray], fallback: Callable[[Sequence[int]], np.ndarray]) -> None:
        self._table = table
        self._rows = rows
        self._reader = reader
        self._embedded = embedded
        self._fallback = fallback

    def __len__(self) -> int:
        return len(self._table)

    def __getitem__(self, positions) -> np.ndarray:
        import numpy as np

        positions = [int(i) for i in np.atleast_1d(np.asarray(positions))]
        out = np.empty((len(positions), self._reader.dim), dtype=np.float32)
        on_file = [j for j, i in enumerate(positions) if i not in self._embedded]
        for j, i in enumerate(positions):
            if i in self._embedded:
                out[j] = self._embedded[i]
        if on_file:
            wanted = [positions[j] for j in on_file]
            keys = self._table.rows["key"][wanted]
            read = self._reader.read(self._rows[wanted].tolist(), [bytes(k) for k in keys]) \
                if bool((self._rows[wanted] >= 0).all()) else None
            out[on_file] = read if read is not None else self._fallback(wanted)
        return out

    def cosines_with(self, positions: Sequence[int], query: np.ndarray) -> np.ndarray:
        """The cosine of *query* with the vector of each fact at *positions* (float32), computed
        while the records are read, a block at a time: never every vector in memory (100 MB at
        50,000 facts). Each value is the one a product over all of them gives (`embed.rows`)."""
        import numpy as np

        from neo_git.embed.rows import cosines
        from neo_git.embed.stream import stream_cosines

        at = np.asarray(positions, dtype=np.int64)
        keys = self._table.rows["key"][at]
        rows = self._rows[at]
        values = self._reader.cosines(rows, keys, query) if bool((rows >= 0).all()) else None
        if values is None:   # found on no record by the first pass (embedded since), or the file changed
            reader = self._reader
            values, _rows, _reader = stream_cosines(reader.path, reader.record, reader.dim, keys, query)
            lost = np.flatnonzero(np.isnan(values))
            if len(lost):   # not stored (a read-only cache, a busy lock): from memory, or embedded again
                values[lost] = cosines(self[at[lost]], query)
        return values


def streamed_cosines(store: EmbeddingStore, table: FactTable, query: np.ndarray,
                     positions: np.ndarray | None = None) -> tuple[np.ndarray, TableVectors]:
    """(the cosine of *query* with each fact of *table* at *positions* (None: every fact; NaN
    at the others), their vectors on demand), reading the vector file once without keeping it."""
    import numpy as np

    from neo_git.embed.batches import embed_in_batches
    from neo_git.embed.rows import cosines
    from neo_git.embed.stream import stream_cosines

    embedder, cache = store.embedder, store.vector_cache
    assert cache is not None   # called only for a store that has a vector cache (store/embedding.py)
    assert cache is not None   # a store with a vector cache streams; others multiply in memory
    path, record = cache.shelf_file(embedder)
    if positions is None:
        values, rows, reader = stream_cosines(path, record, embedder.dim, table.rows["key"], query)
        missing = np.flatnonzero(rows < 0).tolist()
    else:
        found, at, reader = stream_cosines(path, record, embedder.dim, table.rows["key"][positions], query)
        values = np.full(len(table), np.nan, dtype=np.float32)
        rows = np.full(len(table), -1, dtype=np.int64)
        values[positions], rows[positions] = found, at
        missing = positions[at < 0].tolist()
    embedded: dict[int, np.ndarray] = {}
    if missing:
        # Texts the cache lacks (all of them on a store's first recall): embedded batch by batch,
        # each decoded without being kept and stored as it is done; only the cosines stay, and
        # the vectors too when they are few (recall's family ordering may read some back; past
        # KEEP_EMBEDDED it reads them from the cache, where they now are).
        firsts: dict[bytes, int] = {}
        for i in missing:
            firsts.setdefault(bytes(table.rows["key"][i]), i)
        keys, first_at = list(firsts), list(firsts.values())
        cosine_of: dict[bytes, float] = {}
        keep = len(keys) <= KEEP_EMBEDDED
        vector_of: dict[bytes, np.ndarray] = {}

        def take(start: int, vectors: np.ndarray) -> None:
            chunk = keys[start:start + len(vectors)]
            cosine_of.update(zip(chunk, cosines(vectors, query).tolist()))
            if keep:
                vector_of.update(zip(chunk, vectors))

        embed_in_batches(cache, embedder, keys, lambda j: table.peek(first_at[j]).text, take)
        for i in missing:
            key = bytes(table.rows["key"][i])
            values[i] = cosine_of[key]
            if keep:
                embedded[i] = vector_of[key]

    def fallback(positions: Sequence[int]) -> np.ndarray:
        return store._vectors([table[i].text for i in positions])

    return values, TableVectors(table, rows, reader, embedded, fallback)
