"""The embedding half of `FactStore`: its embedder, the vector cache of its NEO_HOME, the
relevance floor, and the vectors and cosines recall and the write policy ask for."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neo_git import identity
from neo_git.facts import Fact
from neo_git.store.vectors import FactVectors

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import pygit2

    from neo_git.embed import Embedder
    from neo_git.embed.cache import VectorCache


class StoreEmbedding:
    """Needs `repo`, `home` and the `_embedder`, `_embedder_arg`, `_vector_cache`,
    `_relevance_floor`, `_fact_vectors`, `_recall_rows` and `_streamed` attributes
    `FactStore._setup` sets."""

    repo: pygit2.Repository | None
    home: Path | None
    _embedder: Embedder | None
    _embedder_arg: str | Embedder | None
    _vector_cache: VectorCache | None
    _relevance_floor: float | None
    _relevance_floor_set: float | None
    _fact_vectors: FactVectors | None
    _recall_rows: tuple[Any, Any] | None
    _streamed: bool

    @property
    def embedder(self) -> Embedder:
        """The embedder in use (resolved on first use: numpy loads only when needed)."""
        if self._embedder is None:
            from neo_git.embed import get_embedder

            self._embedder = get_embedder(self._embedder_arg, repo=self.repo)
        return self._embedder

    @property
    def vector_cache(self) -> VectorCache | None:
        """The on-disk vector cache of this store's NEO_HOME (None for an in-memory store)."""
        if self._vector_cache is None and self.home is not None:
            from neo_git.embed.cache import VectorCache

            self._vector_cache = VectorCache(identity.vector_cache_dir(self.home))
        return self._vector_cache

    @property
    def relevance_floor(self) -> float:
        """The cosine from which a fact is relevant to a question: `git config neo.relevanceFloor`
        when set (a number in [-1, 1]; read on every call, so a long-lived server follows it),
        else the active embedder's calibrated floor. Recall, the agent hooks and `ask`'s effort
        gate all use this one value."""
        if self._relevance_floor is None:
            from neo_git.embed import relevance_floor

            self._relevance_floor = relevance_floor(self.embedder)
        if self.repo is not None:
            from neo_git.config import neo_config

            configured = neo_config("relevanceFloor", None, repo=self.repo, cast=float)
            if configured is not None and -1.0 <= configured <= 1.0:
                return configured
        return self._relevance_floor

    @property
    def relevance_override(self) -> float | None:
        """`git config neo.relevanceFloor` when set (a cosine in [-1, 1]; read on every call, so a
        long-lived server follows it), or what was assigned to this property (an in-memory store
        has no config): an absolute floor in place of recall's relevance decision
        (`neo_git.relevance`). None when neither: the decision holds."""
        if self._relevance_floor_set is not None:
            return self._relevance_floor_set
        if self.repo is None:
            return None
        from neo_git.config import neo_config

        configured = neo_config("relevanceFloor", None, repo=self.repo, cast=float)
        return configured if configured is not None and -1.0 <= configured <= 1.0 else None

    @relevance_override.setter
    def relevance_override(self, value: float | None) -> None:
        self._relevance_floor_set = None if value is None else float(value)

    @property
    def term_index(self):
        """The BM25 index of recall's facts (`store/term_index.py`): `.git/neo/terms.sqlite` in a
        repository, in memory otherwise."""
        if self._term_index is None:
            from neo_git.store.term_index import TermIndex

            self._term_index = TermIndex(self.paths.neo_dir / "terms.sqlite" if self.paths is not None else None)
        return self._term_index

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        cache = self.vector_cache
        if cache is None:  # in memory: FactVectors already keeps each fact's row for the process
            import numpy as np

            return np.asarray(self.embedder.embed(list(texts)), dtype=np.float32).reshape(len(texts), self.embedder.dim)
        return cache.vectors(self.embedder, texts)

    def _embed_one(self, text: str) -> np.ndarray:
        """One text's vector straight from the embedder, bypassing the vector cache.

        Used for a query (questions rarely repeat) and for a fact being added: a cache
        append costs a locked, fsynced write. A new fact's vector is kept in this process
        (FactVectors) and reaches the cache the first time any process looks it up there,
        batched with the others."""
        import numpy as np

        vector = np.asarray(self.embedder.embed([text]), dtype=np.float32)
        if vector.shape != (1, self.embedder.dim):
            raise ValueError(f"embedder {self.embedder.id} returned shape {vector.shape} for one text")
        return vector[0]

    def _vectors_of(self, facts: Sequence[Fact]) -> np.ndarray:
        """Vectors of *facts* (rows in order), each looked up in the cache once per process."""
        return self._vector_rows().matrix(facts)

    def _vector_rows(self) -> FactVectors:
        if self._fact_vectors is None:
            self._fact_vectors = FactVectors(self._vectors, self._key_vectors)
        return self._fact_vectors

    def _key_vectors(self, keys: Sequence[bytes], text_of, block: bool = False):
        """Vectors of texts given by their keys (`fact_table.text_key`; *text_of(i)* gives the i-th
        text, asked only for those to embed): with *block*, the cache's own block when it holds
        every text and each key's row in it (`VectorCache.vector_rows_by_keys`)."""
        cache = self.vector_cache
        if cache is None:
            vectors = self._vectors([text_of(i) for i in range(len(keys))])
            return (vectors, None) if block else vectors
        if block:
            return cache.vector_rows_by_keys(self.embedder, keys, text_of)
        return cache.vectors_by_keys(self.embedder, keys, text_of)

    def _table_cosines(self, table, query: np.ndarray, positions: np.ndarray | None = None):
        """(cosine of *query* with each fact of *table* at *positions* (None: every fact; NaN at
        the others, whose vectors are never read), their vectors for recall's family ordering).
        The first recall of a store reads the vector file once, keeping only the cosines (a cold
        `git neo recall` never holds every vector: 100 MB at 50,000 facts); later ones keep the
        rows in memory and multiply."""
        memo = self._recall_rows
        if memo is not None and memo[0] is table:
            view = memo[1]
        elif self.vector_cache is not None and not self._streamed:
            self._streamed = True
            from neo_git.store.table_vectors import streamed_cosines

            return streamed_cosines(self, table, query, positions)
        else:
            from neo_git.store.table_vectors import row_keys

            keys = row_keys(table)
            if positions is None:
                view = self._vector_rows().key_rows_view(keys, lambda i: table[i].text)
            else:
                picked = positions.tolist()
                view = self._vector_rows().key_rows_view([keys[i] for i in picked],
                                                          lambda j: table[picked[j]].text).spread(picked, len(keys))
            self._recall_rows = (table, view)
        return view @ query, view
