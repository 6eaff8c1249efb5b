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

from typing import TYPE_CHECKING, Callable, Sequence

from neo_git.facts import Fact

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


class FactVectors:
    """Rows of fact vectors, filled from *fetch* (texts → (n, dim) float32) on first use."""

    def __init__(self, fetch: Callable[[Sequence[str]], "np.ndarray"]) -> None:
        self._fetch = fetch
        self._rows: dict[str, tuple[Fact, int]] = {}  # fact id -> (fact as last seen, row)
        self._buffer: "np.ndarray | None" = None
        self._used = 0

    def matrix(self, facts: Sequence[Fact]) -> "np.ndarray":
        """(len(facts), dim) float32, row i the vector of facts[i]'s text (a copy)."""
        if not facts:
            return self._fetch([])
        rows: list[int] = []
        missing: list[int] = []
        known = self._rows
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
        if missing:
            fetched = self._fetch([facts[i].text for i in missing])
            first = self._grow(fetched)
            for j, i in enumerate(missing):
                known[facts[i].id] = (facts[i], first + j)
                rows[i] = first + j
        return self._buffer[rows]

    def remember(self, fact: Fact, vector: "np.ndarray") -> None:
        """Record the vector of a fact just embedded (e.g. one being added)."""
        entry = self._rows.get(fact.id)
        if entry is None or entry[0].subject != fact.subject or entry[0].body != fact.body:
            self._rows[fact.id] = (fact, self._grow(vector.reshape(1, -1)))

    def _grow(self, vectors: "np.ndarray") -> int:
        """Append rows (amortised: the buffer doubles), return the first new row."""
        import numpy as np

        vectors = np.asarray(vectors, dtype=np.float32)
        needed = self._used + len(vectors)
        if self._buffer is None or needed > len(self._buffer):
            capacity = max(64, needed, 2 * (len(self._buffer) if self._buffer is not None else 0))
            grown = np.empty((capacity, vectors.shape[1]), dtype=np.float32)
            if self._buffer is not None:
                grown[:self._used] = self._buffer[:self._used]
            self._buffer = grown
        first = self._used
        self._buffer[first:needed] = vectors
        self._used = needed
        return first
