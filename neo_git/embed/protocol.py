"""The `Embedder` protocol (re-exported by `neo_git.embed`), apart from the package's registry so
the vector cache (`embed/cache.py`, which the package loads lazily) can name it."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors; `id` names the vector space (it keys the cache)."""

    id: str                     # stable and versioned: "hash-v1-512", "fastembed:<model>"
    dim: int
    supersede_threshold: float  # cosine above which a same-scope, same-kind fact is superseded

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dim), float32, rows L2-normalised (a zero row for empty text)."""
        ...
