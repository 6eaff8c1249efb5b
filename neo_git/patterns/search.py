"""Ranking patterns for a question: cosine under the active embedder, blended with BM25.

The pattern vectors go through the shared `VectorCache` (keyed by embedder id and
text hash), so a new process reads them from disk instead of re-embedding, and
the index built from them is kept in memory for the next query of a long-lived
process. Queries are embedded directly and never cached: every distinct question
would otherwise become a row in the cache.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neo_git.patterns.library import load_library
from neo_git.patterns.model import Pattern, PatternHit

if TYPE_CHECKING:  # pragma: no cover

    from neo_git.embed import Embedder

# Share of the lexical signal in the blended score. Chosen on the query set in
# benchmarks/construct_bench.py (see docs/design-notes.md for the figures).
LEXICAL_WEIGHT = 0.5
_INDEX_MEMO = 4  # indexes kept per process (one per embedder and library version)


def search_text(pattern: Pattern) -> str:
    """What is embedded for a pattern: its name as the first line, then tags, Intent and Forces."""
    tags = ", ".join(pattern.tags)
    return f"{pattern.name}\n{tags}\n{pattern.sections.get('Intent', '')}\n{pattern.sections.get('Forces', '')}"


def lexical_text(pattern: Pattern) -> str:
    """What BM25 indexes: the name and tags count three times, then Intent and Forces."""
    head = f"{pattern.name} {' '.join(pattern.tags)} "
    return head * 3 + f"{pattern.sections.get('Intent', '')} {pattern.sections.get('Forces', '')}"


class _Index:
    """Vectors and a BM25 index of one list of patterns under one embedder."""

    def __init__(self, embedder: Embedder, patterns: list[Pattern], texts: list[str]) -> None:
        from neo_git.embed.cache import VectorCache
        from neo_git.patterns.lexical import BM25

        self.patterns = patterns
        self.vectors = VectorCache().vectors(embedder, texts)
        self.bm25 = BM25([lexical_text(p) for p in patterns])


_INDEXES: dict[tuple[str, str], _Index] = {}


def _index(embedder: Embedder, patterns: list[Pattern]) -> _Index:
    texts = [search_text(p) for p in patterns]
    digest = hashlib.sha256("\0".join(p.id + "\0" + t for p, t in zip(patterns, texts)).encode()).hexdigest()
    key = (embedder.id, digest)
    index = _INDEXES.get(key)
    if index is None:
        if len(_INDEXES) >= _INDEX_MEMO:
            _INDEXES.clear()
        index = _INDEXES[key] = _Index(embedder, patterns, texts)
    return index


def rank(query: str, patterns: list[Pattern], embedder: Embedder, *,
         lexical_weight: float = LEXICAL_WEIGHT) -> list[PatternHit]:
    """Every pattern scored against *query*, best first (ties by id)."""
    import numpy as np

    if not patterns or not query.strip():
        return []
    index = _index(embedder, patterns)
    query_vector = np.asarray(embedder.embed([query]), dtype=np.float32)[0]
    cosine = index.vectors @ query_vector
    lexical = index.bm25.scores(query)
    hits = [PatternHit(pattern=p, semantic=float(c), lexical=float(lx),
                       score=(1 - lexical_weight) * float(c) + lexical_weight * float(lx))
            for p, c, lx in zip(patterns, cosine, lexical)]
    hits.sort(key=lambda h: (-h.score, h.pattern.id))
    return hits


def search_patterns(query: str, k: int = 3, *, workdir: Path | None = None, embedder: Any = None
                    ) -> list[PatternHit]:
    """The *k* patterns best matching *query*: shipped ones plus `<workdir>/.neo/construct/` (project wins).

    *embedder* is a name or an `Embedder`; None means the configured one ($NEO_EMBEDDER, else
    `neo.embedder` as git config reads it from the current directory, else auto) — a caller
    holding a store should pass the store's embedder so facts and patterns share one vector
    space. *workdir* None means the shipped library only. Files that fail validation are
    skipped (`load_library(workdir).problems` says why).
    """
    from neo_git.embed import get_embedder

    if k <= 0:
        return []
    patterns = list(load_library(workdir).patterns.values())
    if not patterns or not query.strip():
        return []
    return rank(query, patterns, get_embedder(embedder))[:k]
