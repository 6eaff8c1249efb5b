"""Okapi BM25 over the pattern texts, with the hash embedder's tokenizer (split identifiers,
stem, drop stopwords), so "import cycles" meets "Import Cycle" and `circular_import`.

Scores are divided by the best score for the query, giving [0, 1] to blend with cosine.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

K1 = 1.2
B = 0.75


class BM25:
    """A tiny in-memory BM25 index over a fixed list of documents."""

    def __init__(self, documents: Sequence[str]) -> None:
        from neo_git.embed.hashing import tokens

        self._tokens = tokens
        self.counts = [Counter(tokens(doc)) for doc in documents]
        self.lengths = [sum(c.values()) for c in self.counts]
        self.average = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        frequency: Counter[str] = Counter()
        for counts in self.counts:
            frequency.update(counts.keys())
        n = len(self.counts)
        # The "+1" form of IDF stays positive for words in most documents.
        self.idf = {word: math.log(1 + (n - df + 0.5) / (df + 0.5)) for word, df in frequency.items()}

    def scores(self, query: str) -> list[float]:
        """Scores of every document for *query*, scaled so the best is 1.0 (all 0.0 when nothing matches)."""
        words = set(self._tokens(query)) & self.idf.keys()
        raw = []
        for counts, length in zip(self.counts, self.lengths):
            norm = K1 * (1 - B + B * length / (self.average or 1))
            raw.append(sum(self.idf[w] * counts[w] * (K1 + 1) / (counts[w] + norm) for w in words if w in counts))
        best = max(raw, default=0.0)
        return [r / best for r in raw] if best > 0 else [0.0] * len(raw)
